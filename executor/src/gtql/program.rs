//! GTQL expressions compiled once into a flat postfix program, so that deciding a candidate or
//! adding a child to an aggregate does not walk an expression tree per node.
//!
//! [`Program::eval`] gives exactly what `expr::ev` gives (the property tests run both paths: the
//! pass uses programs, the naive evaluator the tree).

use cqldb_planner::gtql::{GExpr, GOp, Scope};

use super::expr::{compare, ev, truth};

#[derive(Clone, Copy, Debug)]
enum Op {
    Num(i64),
    Attr(Scope, usize),
    Agg(usize),
    Not,
    And,
    Or,
    BitAnd,
    Cmp(GOp),
}

/// Values an expression can read (the scopes its part allows; the others are empty/`None`).
#[derive(Clone, Copy)]
pub(super) struct Inputs<'a> {
    pub bare: &'a [i64],
    pub child: &'a [i64],
    pub prev: Option<&'a [i64]>,
    pub parent: Option<&'a [i64]>,
    pub child_aggs: &'a [Option<i64>],
    pub sub_aggs: &'a [Option<i64>],
}

impl<'a> Inputs<'a> {
    /// Only the node's own values.
    pub fn bare(bare: &'a [i64]) -> Self {
        Self {
            bare,
            child: &[],
            prev: None,
            parent: None,
            child_aggs: &[],
            sub_aggs: &[],
        }
    }
}

/// Deepest operand stack kept on the machine stack; deeper expressions use the tree walk. Small,
/// because the stack is set up on every evaluation.
const MAX_STACK: usize = 8;

/// A compiled expression.
#[derive(Clone, Debug)]
pub(super) struct Program {
    ops: Vec<Op>,
    /// Set when the expression is too deep for the fixed stack: evaluated as a tree.
    tree: Option<GExpr>,
}

impl Program {
    /// Compiles `e`.
    pub fn new(e: &GExpr) -> Self {
        let mut ops = Vec::new();
        compile(e, &mut ops);
        let mut depth = 0usize;
        let mut max = 0usize;
        for op in &ops {
            match op {
                Op::Num(_) | Op::Attr(..) | Op::Agg(_) => depth += 1,
                Op::Not => {}
                _ => depth -= 1,
            }
            max = max.max(depth);
        }
        let tree = (max > MAX_STACK).then(|| e.clone());
        Self { ops, tree }
    }

    /// The expression's value (`None` where an operand is missing, as in `ev`).
    #[inline]
    pub fn eval(&self, x: Inputs<'_>) -> Option<i64> {
        if let Some(e) = &self.tree {
            return ev(
                e,
                x.bare,
                x.child,
                x.prev,
                x.parent,
                x.child_aggs,
                x.sub_aggs,
            );
        }
        // Values and a bit per slot saying the value exists (`None` otherwise).
        let mut vals = [0i64; MAX_STACK];
        let mut some = 0u8;
        let mut sp = 0usize;
        let get =
            |vals: &[i64; MAX_STACK], some: u8, i: usize| (some >> i & 1 == 1).then_some(vals[i]);
        let put = |vals: &mut [i64; MAX_STACK], some: &mut u8, i: usize, v: Option<i64>| {
            vals[i] = v.unwrap_or(0);
            *some = (*some & !(1 << i)) | (u8::from(v.is_some()) << i);
        };
        for op in &self.ops {
            match *op {
                Op::Num(n) => {
                    put(&mut vals, &mut some, sp, Some(n));
                    sp += 1;
                }
                Op::Attr(scope, a) => {
                    let v = match scope {
                        Scope::Bare => x.bare.get(a).copied(),
                        Scope::Child => x.child.get(a).copied(),
                        Scope::Prev => x.prev.and_then(|p| p.get(a).copied()),
                        Scope::Parent => x.parent.and_then(|p| p.get(a).copied()),
                    };
                    put(&mut vals, &mut some, sp, v);
                    sp += 1;
                }
                Op::Agg(k) => {
                    let v = if !x.child_aggs.is_empty() {
                        x.child_aggs.get(k).copied().flatten()
                    } else {
                        x.sub_aggs.get(k).copied().flatten()
                    };
                    put(&mut vals, &mut some, sp, v);
                    sp += 1;
                }
                Op::Not => {
                    let v = Some(i64::from(!truth(get(&vals, some, sp - 1))));
                    put(&mut vals, &mut some, sp - 1, v);
                }
                Op::And | Op::Or | Op::BitAnd | Op::Cmp(_) => {
                    sp -= 1;
                    let (a, b) = (get(&vals, some, sp - 1), get(&vals, some, sp));
                    let v = match *op {
                        Op::And => Some(i64::from(truth(a) && truth(b))),
                        Op::Or => Some(i64::from(truth(a) || truth(b))),
                        Op::BitAnd => a.zip(b).map(|(a, b)| a & b),
                        Op::Cmp(c) => {
                            Some(a.zip(b).map_or(0, |(x, y)| i64::from(compare(c, x, y))))
                        }
                        _ => None,
                    };
                    put(&mut vals, &mut some, sp - 1, v);
                }
            }
        }
        if sp == 1 { get(&vals, some, 0) } else { None }
    }

    /// Whether the expression holds.
    #[inline]
    pub fn holds(&self, x: Inputs<'_>) -> bool {
        truth(self.eval(x))
    }
}

fn compile(e: &GExpr, ops: &mut Vec<Op>) {
    match e {
        GExpr::Num(n) => ops.push(Op::Num(*n)),
        GExpr::Attr(scope, a) => ops.push(Op::Attr(*scope, *a)),
        GExpr::Agg(k) => ops.push(Op::Agg(*k)),
        GExpr::Not(a) => {
            compile(a, ops);
            ops.push(Op::Not);
        }
        GExpr::Bin(op, a, b) => {
            compile(a, ops);
            compile(b, ops);
            ops.push(match op {
                GOp::And => Op::And,
                GOp::Or => Op::Or,
                GOp::BitAnd => Op::BitAnd,
                other => Op::Cmp(*other),
            });
        }
    }
}
