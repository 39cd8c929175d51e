//! How a compiled echo body (`pairs.rs`) runs over a game: its tests split by the positions
//! they read, so that each is evaluated as rarely as it can be.
//!
//! - tests of the source alone run once per source (none true: no target is tried);
//! - tests of the target alone run once per game, at every position (a column of answers);
//! - a top-level `ancestor(s t)` limits the targets to the source's subtree;
//! - a test of both in one of two split forms reads a per-game column for its target side and
//!   a per-source value for its source side: `#(S & T) op k` (as `#(s:_ & [Aa]) == 0`: no
//!   new piece) and `S op T` (as `sidetomove == s:sidetomove`), so the pair costs a few
//!   instructions;
//! - the rest runs per pair, compiled.
//!
//! The tests are pure, so their order does not change the answer: the split forms run first.

use std::sync::Arc;

use super::pairs::{Operand, Pair, Set, Test, Uses, Value, compare, compile};
use crate::ast::{CmpOp, Node};
use crate::eval::game::Game;

/// A test of the pair read through a column.
#[derive(Debug)]
enum Split {
    /// `#(S & T) op k`: the source's set, the column of the target's set.
    MaskCount {
        source: Set,
        column: usize,
        op: CmpOp,
        k: i64,
    },
    /// `a op b`, one side of the source, the other (a column) of the target.
    Sides {
        source: Operand,
        column: usize,
        op: CmpOp,
        source_left: bool,
    },
}

/// A compiled echo body, split.
#[derive(Debug)]
pub struct PairPlan {
    source_tests: Vec<Test>,
    target_tests: Vec<Test>,
    /// The target-side operands of the split tests, evaluated at every position of a game.
    columns: Vec<Operand>,
    split: Vec<Split>,
    pair_tests: Vec<Test>,
    descendants_only: bool,
}

/// What a plan computes once per game.
pub struct GameColumns {
    /// Whether the target tests hold at each position.
    target_ok: Vec<bool>,
    /// `values[c][t]`: column `c` at position `t`.
    values: Vec<Vec<Option<Value>>>,
}

impl PairPlan {
    /// The plan of `body` for an echo binding `source` and `target`; `None` when the body is
    /// not a pure pair test (it is interpreted).
    pub fn new(body: &Node, source: usize, target: usize) -> Option<PairPlan> {
        let mut plan = PairPlan {
            source_tests: Vec::new(),
            target_tests: Vec::new(),
            columns: Vec::new(),
            split: Vec::new(),
            pair_tests: Vec::new(),
            descendants_only: false,
        };
        for test in compile(body, source, target)? {
            match test.uses() {
                Uses::Neither | Uses::Source => plan.source_tests.push(test),
                Uses::Target => plan.target_tests.push(test),
                Uses::Both => plan.add_pair_test(test),
            }
        }
        Some(plan)
    }

    fn add_pair_test(&mut self, test: Test) {
        if let Test::Ancestor(super::pairs::At::Source, super::pairs::At::Target) = test {
            self.descendants_only = true;
        }
        let Test::Compare(first, rest) = &test else {
            self.pair_tests.push(test);
            return;
        };
        let [(op, second)] = rest.as_slice() else {
            self.pair_tests.push(test);
            return;
        };
        // `x != y` also holds where a side has no value: the split forms below compare two
        // values, so a `!=` stays a whole test of the pair.
        if *op == CmpOp::Ne {
            self.pair_tests.push(test);
            return;
        }
        // `#(S & T) op k`, the factors either way round.
        if let (Operand::Num(super::pairs::Num::Count(Set::Inter(x, y))), Operand::Num(k)) =
            (first, second)
            && let super::pairs::Num::Literal(k) = k
        {
            let sides = match (x.uses(), y.uses()) {
                (Uses::Source, Uses::Target) => Some((x, y)),
                (Uses::Target, Uses::Source) => Some((y, x)),
                _ => None,
            };
            if let Some((s, t)) = sides {
                let column = self.column(Operand::Set((**t).clone()));
                self.split.push(Split::MaskCount {
                    source: (**s).clone(),
                    column,
                    op: *op,
                    k: *k,
                });
                return;
            }
        }
        let sides = match (first.uses(), second.uses()) {
            (Uses::Source, Uses::Target) => Some((first, second, true)),
            (Uses::Target, Uses::Source) => Some((second, first, false)),
            _ => None,
        };
        match sides {
            Some((s, t, source_left)) => {
                let column = self.column(t.clone());
                self.split.push(Split::Sides {
                    source: s.clone(),
                    column,
                    op: *op,
                    source_left,
                });
            }
            None => self.pair_tests.push(test),
        }
    }

    fn column(&mut self, o: Operand) -> usize {
        self.columns.push(o);
        self.columns.len() - 1
    }

    /// The plan's columns over `g`.
    pub fn columns(&self, g: &Game) -> GameColumns {
        let n = g.len() as u32;
        let at = |t: u32| Pair { g, s: t, t };
        GameColumns {
            target_ok: (0..n)
                .map(|t| self.target_tests.iter().all(|x| at(t).test(x)))
                .collect(),
            values: self
                .columns
                .iter()
                .map(|c| (0..n).map(|t| at(t).operand(c)).collect())
                .collect(),
        }
    }

    /// The targets matching for `source`, in id order; `visible` says which positions the
    /// query visits. Stops after the first when `first_only`.
    pub fn targets(
        &self,
        g: &Game,
        columns: &GameColumns,
        source: u32,
        visible: impl Fn(u32) -> bool,
        first_only: bool,
    ) -> Vec<u32> {
        let at_source = Pair {
            g,
            s: source,
            t: source,
        };
        if !self.source_tests.iter().all(|x| at_source.test(x)) {
            return Vec::new();
        }
        // The source side of each split test; a missing value fails the test at every target.
        let mut sides = Vec::with_capacity(self.split.len());
        for s in &self.split {
            let v = match s {
                Split::MaskCount { source, .. } => at_source.set(source).map(Value::Set),
                Split::Sides { source, .. } => at_source.operand(source),
            };
            let Some(v) = v else {
                return Vec::new();
            };
            sides.push(v);
        }
        let range = if self.descendants_only {
            source + 1..g.subtree_end(source)
        } else {
            0..g.len() as u32
        };
        let mut hits = Vec::new();
        for t in range {
            let i = t as usize;
            if !columns.target_ok[i] || !visible(t) {
                continue;
            }
            let split_ok = self.split.iter().zip(&sides).all(|(s, side)| match s {
                Split::MaskCount { column, op, k, .. } => {
                    match (side, columns.values[*column][i]) {
                        (Value::Set(a), Some(Value::Set(b))) => compare(
                            *op,
                            Value::Num(i64::from((a & b).count_ones())),
                            Value::Num(*k),
                        ),
                        _ => false,
                    }
                }
                Split::Sides {
                    column,
                    op,
                    source_left,
                    ..
                } => match columns.values[*column][i] {
                    Some(v) if *source_left => compare(*op, *side, v),
                    Some(v) => compare(*op, v, *side),
                    None => false,
                },
            });
            if !split_ok {
                continue;
            }
            let pair = Pair { g, s: source, t };
            if self.pair_tests.iter().all(|x| pair.test(x)) {
                hits.push(t);
                if first_only {
                    break;
                }
            }
        }
        hits
    }
}

/// A plan shared by the games of a run, with the columns of the game being evaluated.
pub struct Cached {
    pub plan: Option<Arc<PairPlan>>,
    /// The columns and the game they belong to (the engine's count of games started).
    pub columns: Option<(u64, Arc<GameColumns>)>,
}
