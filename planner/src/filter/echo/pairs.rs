//! A fast path for `echo`: a body that only tests the pair of positions — square sets of
//! either position and their positional intersection `s & t`, `~`, `&`, `|`, counts, `+`/`-`,
//! comparisons, `sidetomove`, `wtm`/`btm`, `mainline`, `variation`, `ancestor(s t)`, `not`,
//! `and`, `or` — is compiled once into a program over the two positions' bitboards.
//!
//! Why: an echo visits every pair of positions of a game, and the interpreter costs about half
//! a microsecond per pair on such bodies (values built, variables bound, `s & t` square by
//! square). The CQL 3 `:relation` lists are written as such echoes, and on a long game they
//! must cost little more than a query evaluated once per position.
//!
//! This file is the compiled form (sets, numbers, tests over the pair, [`compile`]) and its
//! evaluation at one pair ([`Pair`]); `pair_plan.rs` splits the tests by the positions they
//! read. Evaluation means exactly what the interpreter computes, including where a value is
//! missing (`s:X` with `X` empty at `s` does not match, and then neither does a count of it).
//! A body with anything else (variables other than the echo's two, notes, moves, legal-move
//! filters) is not compiled and is interpreted.

use crate::ast::{BinOp, CmpOp, Expr, Node, PieceSet};
use crate::eval::board;
use crate::eval::game::Game;

/// Which of the pair a part of the body is evaluated at.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum At {
    Source,
    Target,
}

#[derive(Clone, Debug)]
pub(super) enum Set {
    Designated(At, PieceSet),
    /// The squares with the same contents in both positions.
    Same(At, At),
    Inter(Box<Set>, Box<Set>),
    Union(Box<Set>, Box<Set>),
    Complement(Box<Set>),
    /// `x:S`: missing where `S` is empty.
    NonEmpty(Box<Set>),
}

#[derive(Clone, Debug)]
pub(super) enum Num {
    Literal(i64),
    Count(Set),
    SideToMove(At),
    Add(Box<Num>, Box<Num>),
    Sub(Box<Num>, Box<Num>),
    Neg(Box<Num>),
}

#[derive(Clone, Debug)]
pub(super) enum Operand {
    Set(Set),
    Num(Num),
}

#[derive(Clone, Debug)]
pub(super) enum Test {
    True,
    /// A set matches when it is present and not empty.
    NonEmpty(Set),
    /// A number matches when it is present.
    Present(Num),
    /// `ancestor(x y)`: x a strict ancestor of y.
    Ancestor(At, At),
    Mainline(At),
    Variation(At),
    ToMove(At, bool),
    Compare(Operand, Vec<(CmpOp, Operand)>),
    Not(Box<Test>),
    And(Box<Test>, Box<Test>),
    Or(Box<Test>, Box<Test>),
    All(Vec<Test>),
}

/// The conjuncts of `body` for an echo binding `source` and `target`, or `None` when some
/// part of it is not a pure pair test (or the body's value would be a number).
pub(super) fn compile(body: &Node, source: usize, target: usize) -> Option<Vec<Test>> {
    if source == target {
        return None;
    }
    let c = Compiler { source, target };
    let items: Vec<&Node> = match &body.expr {
        Expr::Compound(items) => items.iter().collect(),
        _ => vec![body],
    };
    // A number last would make the echo's value a number: left to the interpreter.
    if let Some(last) = items.last()
        && let Part::Num(_) = c.part(last, At::Target)?
    {
        return None;
    }
    items.into_iter().map(|i| c.test(i, At::Target)).collect()
}

/// Which positions a part reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Uses {
    Neither,
    Source,
    Target,
    Both,
}

impl Uses {
    fn of(at: At) -> Uses {
        match at {
            At::Source => Uses::Source,
            At::Target => Uses::Target,
        }
    }

    fn and(self, other: Uses) -> Uses {
        match (self, other) {
            (Uses::Neither, x) | (x, Uses::Neither) => x,
            (x, y) if x == y => x,
            _ => Uses::Both,
        }
    }
}

impl Set {
    pub(super) fn uses(&self) -> Uses {
        match self {
            Set::Designated(at, _) => Uses::of(*at),
            Set::Same(a, b) => Uses::of(*a).and(Uses::of(*b)),
            Set::Inter(a, b) | Set::Union(a, b) => a.uses().and(b.uses()),
            Set::Complement(a) | Set::NonEmpty(a) => a.uses(),
        }
    }
}

impl Num {
    fn uses(&self) -> Uses {
        match self {
            Num::Literal(_) => Uses::Neither,
            Num::Count(s) => s.uses(),
            Num::SideToMove(at) => Uses::of(*at),
            Num::Add(a, b) | Num::Sub(a, b) => a.uses().and(b.uses()),
            Num::Neg(a) => a.uses(),
        }
    }
}

impl Operand {
    pub(super) fn uses(&self) -> Uses {
        match self {
            Operand::Set(s) => s.uses(),
            Operand::Num(v) => v.uses(),
        }
    }
}

impl Test {
    pub(super) fn uses(&self) -> Uses {
        match self {
            Test::True => Uses::Neither,
            Test::NonEmpty(s) => s.uses(),
            Test::Present(v) => v.uses(),
            Test::Ancestor(a, b) => Uses::of(*a).and(Uses::of(*b)),
            Test::Mainline(at) | Test::Variation(at) | Test::ToMove(at, _) => Uses::of(*at),
            Test::Compare(first, rest) => {
                rest.iter().fold(first.uses(), |u, (_, o)| u.and(o.uses()))
            }
            Test::Not(a) => a.uses(),
            Test::And(a, b) | Test::Or(a, b) => a.uses().and(b.uses()),
            Test::All(items) => items.iter().fold(Uses::Neither, |u, t| u.and(t.uses())),
        }
    }
}

/// What a node compiles to.
enum Part {
    Set(Set),
    Num(Num),
    Test(Test),
}

struct Compiler {
    source: usize,
    target: usize,
}

impl Compiler {
    fn at(&self, n: &Node) -> Option<At> {
        match n.expr {
            Expr::Var(slot) if slot == self.source => Some(At::Source),
            Expr::Var(slot) if slot == self.target => Some(At::Target),
            _ => None,
        }
    }

    fn part(&self, n: &Node, cur: At) -> Option<Part> {
        Some(match &n.expr {
            Expr::Pieces(d) => Part::Set(Set::Designated(cur, *d)),
            Expr::Number(v) => Part::Num(Num::Literal(*v)),
            Expr::SideToMove => Part::Num(Num::SideToMove(cur)),
            Expr::Binary(BinOp::Inter, a, b) if self.at(a).is_some() || self.at(b).is_some() => {
                Part::Set(Set::Same(self.at(a)?, self.at(b)?))
            }
            Expr::Binary(op @ (BinOp::Inter | BinOp::Union), a, b) => {
                let (x, y) = (self.set(a, cur)?, self.set(b, cur)?);
                Part::Set(if *op == BinOp::Inter {
                    Set::Inter(Box::new(x), Box::new(y))
                } else {
                    Set::Union(Box::new(x), Box::new(y))
                })
            }
            Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let (x, y) = (self.num(a, cur)?, self.num(b, cur)?);
                Part::Num(if *op == BinOp::Add {
                    Num::Add(Box::new(x), Box::new(y))
                } else {
                    Num::Sub(Box::new(x), Box::new(y))
                })
            }
            Expr::Neg(a) => Part::Num(Num::Neg(Box::new(self.num(a, cur)?))),
            Expr::Complement(a) => Part::Set(Set::Complement(Box::new(self.set(a, cur)?))),
            Expr::Count(a) => Part::Num(Num::Count(self.set(a, cur)?)),
            Expr::Colon(p, f) => {
                let at = self.at(p)?;
                match self.part(f, at)? {
                    Part::Set(s) => Part::Set(Set::NonEmpty(Box::new(s))),
                    other => other,
                }
            }
            Expr::True => Part::Test(Test::True),
            Expr::Mainline => Part::Test(Test::Mainline(cur)),
            Expr::Variation => Part::Test(Test::Variation(cur)),
            Expr::ToMove(white) => Part::Test(Test::ToMove(cur, *white)),
            Expr::Ancestor(a, b) => Part::Test(Test::Ancestor(self.at(a)?, self.at(b)?)),
            Expr::Descendant(a, b) => Part::Test(Test::Ancestor(self.at(b)?, self.at(a)?)),
            Expr::Not(a) => Part::Test(Test::Not(Box::new(self.test(a, cur)?))),
            Expr::And(a, b) => Part::Test(Test::And(
                Box::new(self.test(a, cur)?),
                Box::new(self.test(b, cur)?),
            )),
            Expr::Or(a, b) => Part::Test(Test::Or(
                Box::new(self.test(a, cur)?),
                Box::new(self.test(b, cur)?),
            )),
            Expr::Compound(items) if !items.is_empty() => {
                // Its value is its last item's: only a test may end a compiled compound, so
                // the compound is a test too.
                let last = items.last()?;
                if !matches!(self.part(last, cur)?, Part::Test(_)) {
                    return None;
                }
                Part::Test(Test::All(
                    items
                        .iter()
                        .map(|i| self.test(i, cur))
                        .collect::<Option<_>>()?,
                ))
            }
            Expr::Compare(first, rest) => {
                let first = self.operand(first, cur)?;
                let rest = rest
                    .iter()
                    .map(|(op, n)| Some((*op, self.operand(n, cur)?)))
                    .collect::<Option<Vec<_>>>()?;
                Part::Test(Test::Compare(first, rest))
            }
            _ => return None,
        })
    }

    fn set(&self, n: &Node, cur: At) -> Option<Set> {
        match self.part(n, cur)? {
            Part::Set(s) => Some(s),
            _ => None,
        }
    }

    fn num(&self, n: &Node, cur: At) -> Option<Num> {
        match self.part(n, cur)? {
            Part::Num(v) => Some(v),
            _ => None,
        }
    }

    fn operand(&self, n: &Node, cur: At) -> Option<Operand> {
        match self.part(n, cur)? {
            Part::Set(s) => Some(Operand::Set(s)),
            Part::Num(v) => Some(Operand::Num(v)),
            Part::Test(_) => None,
        }
    }

    fn test(&self, n: &Node, cur: At) -> Option<Test> {
        Some(match self.part(n, cur)? {
            Part::Set(s) => Test::NonEmpty(s),
            Part::Num(v) => Test::Present(v),
            Part::Test(t) => t,
        })
    }
}

/// A value of an operand.
#[derive(Copy, Clone, Debug)]
pub(super) enum Value {
    Set(u64),
    Num(i64),
}

/// A pair being tested.
pub(super) struct Pair<'g> {
    pub g: &'g Game,
    pub s: u32,
    pub t: u32,
}

impl Pair<'_> {
    fn id(&self, at: At) -> u32 {
        match at {
            At::Source => self.s,
            At::Target => self.t,
        }
    }

    fn rec(&self, at: At) -> &cqldb_storage::PositionRecord {
        &self.g.positions[self.id(at) as usize]
    }

    pub(super) fn set(&self, s: &Set) -> Option<u64> {
        Some(match s {
            Set::Designated(at, d) => board::designate(self.rec(*at), d),
            Set::Same(a, b) => {
                let (x, y) = (&self.rec(*a).board.0, &self.rec(*b).board.0);
                let differ = x.iter().zip(y).fold(0u64, |acc, (p, q)| acc | (p ^ q));
                !differ
            }
            Set::Inter(a, b) => self.set(a)? & self.set(b)?,
            Set::Union(a, b) => self.set(a)? | self.set(b)?,
            Set::Complement(a) => !self.set(a)?,
            Set::NonEmpty(a) => Some(self.set(a)?).filter(|&x| x != 0)?,
        })
    }

    fn num(&self, v: &Num) -> Option<i64> {
        Some(match v {
            Num::Literal(v) => *v,
            Num::Count(s) => i64::from(self.set(s)?.count_ones()),
            Num::SideToMove(at) => {
                if self.rec(*at).turn() == shakmaty::Color::White {
                    1
                } else {
                    -1
                }
            }
            Num::Add(a, b) => self.num(a)?.checked_add(self.num(b)?)?,
            Num::Sub(a, b) => self.num(a)?.checked_sub(self.num(b)?)?,
            Num::Neg(a) => self.num(a)?.checked_neg()?,
        })
    }

    pub(super) fn operand(&self, o: &Operand) -> Option<Value> {
        Some(match o {
            Operand::Set(s) => Value::Set(self.set(s)?),
            Operand::Num(v) => Value::Num(self.num(v)?),
        })
    }

    pub(super) fn test(&self, t: &Test) -> bool {
        match t {
            Test::True => true,
            Test::NonEmpty(s) => self.set(s).is_some_and(|x| x != 0),
            Test::Present(v) => self.num(v).is_some(),
            Test::Ancestor(a, b) => {
                let (x, y) = (self.id(*a), self.id(*b));
                x != y && self.g.is_ancestor_or_self(x, y)
            }
            Test::Mainline(at) => self.rec(*at).depth == 0,
            Test::Variation(at) => self.rec(*at).depth > 0,
            Test::ToMove(at, white) => (self.rec(*at).turn() == shakmaty::Color::White) == *white,
            Test::Compare(first, rest) => self.compare(first, rest).unwrap_or(false),
            Test::Not(a) => !self.test(a),
            Test::And(a, b) => self.test(a) && self.test(b),
            Test::Or(a, b) => self.test(a) || self.test(b),
            Test::All(items) => items.iter().all(|i| self.test(i)),
        }
    }

    /// The interpreter's comparison chain: with one operator, a set against a number stands
    /// for its size and two sets compare as sets for `==`/`!=`, by size otherwise; in a longer
    /// chain holding a number, every set stands for its size.
    fn compare(&self, first: &Operand, rest: &[(CmpOp, Operand)]) -> Option<bool> {
        if let [(op, second)] = rest {
            // `x != y` is `not x == y`, true where a side has no value (as the interpreter).
            if *op == CmpOp::Ne {
                return Some(match (self.operand(first), self.operand(second)) {
                    (Some(a), Some(b)) => !compare(CmpOp::Eq, a, b),
                    _ => true,
                });
            }
            return Some(compare(*op, self.operand(first)?, self.operand(second)?));
        }
        let mut values = Vec::with_capacity(rest.len() + 1);
        values.push(self.operand(first)?);
        for (_, o) in rest {
            values.push(self.operand(o)?);
        }
        if values.len() > 2 && values.iter().any(|v| matches!(v, Value::Num(_))) {
            for v in &mut values {
                if let Value::Set(s) = *v {
                    *v = Value::Num(i64::from(s.count_ones()));
                }
            }
        }
        for (i, (op, _)) in rest.iter().enumerate() {
            if !compare(*op, values[i], values[i + 1]) {
                return Some(false);
            }
        }
        Some(true)
    }
}

pub(super) fn compare(op: CmpOp, a: Value, b: Value) -> bool {
    let size = |s: u64| i64::from(s.count_ones());
    let ord = match (a, b) {
        (Value::Num(x), Value::Num(y)) => x.cmp(&y),
        (Value::Num(x), Value::Set(y)) => x.cmp(&size(y)),
        (Value::Set(x), Value::Num(y)) => size(x).cmp(&y),
        (Value::Set(x), Value::Set(y)) => match op {
            CmpOp::Eq => return x == y,
            CmpOp::Ne => return x != y,
            _ => size(x).cmp(&size(y)),
        },
    };
    op.holds(ord)
}
