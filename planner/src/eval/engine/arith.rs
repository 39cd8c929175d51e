//! Comparison and arithmetic: comparison chains (`Q == q == 1`), `+ - * / %` on numbers,
//! `&` and `|` on square sets, `~`, `#`, `in`, `abs`, `sqrt`, `max`/`min`.

use crate::ast::*;
use crate::eval::context::Cx;
use crate::eval::value::Value;

use super::Engine;

impl Engine {
    pub(super) fn compare_chain(
        &mut self,
        first: &Node,
        rest: &[(CmpOp, Node)],
        cx: &mut Cx,
    ) -> Option<Value> {
        // The common `A op B` needs no list: a full scan runs this at every position.
        if let [(op, rhs)] = rest {
            // `Q == 1`, the material test, compares a count with a literal: no values built.
            if let (Expr::Pieces(d), Expr::Number(k)) = (&first.expr, &rhs.expr) {
                let s = Self::designated(d, cx);
                let holds = op.holds(i64::from(s.count_ones()).cmp(k));
                return holds.then_some(Value::Matched);
            }
            // CQL defines `x != y` as `not x == y`: it also matches where a side has no
            // value (`5 != parent:#A` at the first position).
            if *op == CmpOp::Ne {
                let equal = self
                    .eval(first, cx)
                    .and_then(|a| {
                        let b = self.eval(rhs, cx)?;
                        self.compare(CmpOp::Eq, &a, &b, cx)
                    })
                    .unwrap_or(false);
                return (!equal).then_some(Value::Matched);
            }
            let a = self.eval(first, cx)?;
            let b = self.eval(rhs, cx)?;
            return self.compare(*op, &a, &b, cx)?.then_some(Value::Matched);
        }
        let mut values = Vec::with_capacity(rest.len() + 1);
        values.push(self.eval(first, cx)?);
        for (_, rhs) in rest {
            values.push(self.eval(rhs, cx)?);
        }
        // In a chain with a number (`Q == q == 1`) every set stands for its size.
        if values.len() > 2 && values.iter().any(|v| matches!(v, Value::Num(_))) {
            for v in &mut values {
                if let Some(s) = self.as_set(v, cx) {
                    *v = Value::Num(i64::from(s.count_ones()));
                }
            }
        }
        for (i, (op, _)) in rest.iter().enumerate() {
            if !self.compare(*op, &values[i], &values[i + 1], cx)? {
                return None;
            }
        }
        Some(Value::Matched)
    }

    pub(super) fn arithmetic(
        &mut self,
        op: &BinOp,
        a: &Node,
        b: &Node,
        cx: &mut Cx,
    ) -> Option<Value> {
        let va = self.eval(a, cx)?;
        let vb = self.eval(b, cx)?;
        self.binary(*op, va, vb, cx)
    }

    pub(super) fn neg(&mut self, a: &Node, cx: &mut Cx) -> Option<Value> {
        match self.eval(a, cx)? {
            Value::Num(v) => Some(Value::Num(-v)),
            _ => None,
        }
    }

    pub(super) fn complement(&mut self, a: &Node, cx: &mut Cx) -> Option<Value> {
        let s = self.set_of(a, cx)?;
        Some(Value::Set(!s))
    }

    pub(super) fn count(&mut self, a: &Node, cx: &mut Cx) -> Option<Value> {
        // `#D` of a dictionary: its number of entries (CQL).
        if let Expr::Var(slot) = a.expr
            && matches!(self.query.vars.get(slot), Some((_, VarKind::Dictionary)))
        {
            return Some(Value::Num(self.dicts[slot].len() as i64));
        }
        match self.eval(a, cx)? {
            Value::Str(s) => Some(Value::Num(s.chars().count() as i64)),
            v => Some(Value::Num(self.as_set(&v, cx)?.count_ones() as i64)),
        }
    }

    pub(super) fn within(&mut self, a: &Node, b: &Node, cx: &mut Cx) -> Option<Value> {
        let va = self.eval(a, cx)?;
        let vb = self.eval(b, cx)?;
        match (&va, &vb) {
            (Value::Str(x), Value::Str(y)) => y.contains(x.as_str()).then_some(Value::Matched),
            _ => {
                let (x, y) = (self.as_set(&va, cx)?, self.as_set(&vb, cx)?);
                (x & !y == 0).then_some(Value::Matched)
            }
        }
    }

    pub(super) fn abs(&mut self, a: &Node, cx: &mut Cx) -> Option<Value> {
        match self.eval(a, cx)? {
            Value::Num(v) => Some(Value::Num(v.abs())),
            _ => None,
        }
    }

    pub(super) fn sqrt(&mut self, a: &Node, cx: &mut Cx) -> Option<Value> {
        match self.eval(a, cx)? {
            Value::Num(v) if v >= 0 => Some(Value::Num((v as f64).sqrt() as i64)),
            _ => None,
        }
    }

    pub(super) fn min_max(&mut self, max: &bool, args: &[Node], cx: &mut Cx) -> Option<Value> {
        // It matches when at least one argument does (CQL): the others are left out.
        let mut best: Option<i64> = None;
        for a in args {
            let v = match self.eval(a, cx) {
                Some(Value::Num(v)) => v,
                Some(other) => match self.as_set(&other, cx) {
                    Some(s) => i64::from(s.count_ones()),
                    None => continue,
                },
                None => continue,
            };
            best = Some(match best {
                None => v,
                Some(b) if *max => b.max(v),
                Some(b) => b.min(v),
            });
        }
        best.map(Value::Num)
    }

    pub(super) fn binary(&mut self, op: BinOp, a: Value, b: Value, cx: &Cx) -> Option<Value> {
        match op {
            BinOp::Inter if let (Value::Pos(x), Value::Pos(y)) = (&a, &b) => {
                // The squares where the two positions hold the same piece, or both nothing.
                let (px, py) = (
                    &cx.game.positions[*x as usize],
                    &cx.game.positions[*y as usize],
                );
                // A square differs where some colour or role bitboard differs.
                let differ = (px.board.0.iter())
                    .zip(&py.board.0)
                    .fold(0u64, |acc, (a, b)| acc | (a ^ b));
                Some(Value::Set(!differ))
            }
            BinOp::Inter | BinOp::Union => {
                let (x, y) = (self.as_set(&a, cx)?, self.as_set(&b, cx)?);
                Some(Value::Set(if op == BinOp::Inter { x & y } else { x | y }))
            }
            _ => match (a, b) {
                (Value::Str(x), Value::Str(y)) if op == BinOp::Add => Some(Value::Str(x + &y)),
                (Value::Num(x), Value::Num(y)) => Some(Value::Num(match op {
                    BinOp::Add => x.checked_add(y)?,
                    BinOp::Sub => x.checked_sub(y)?,
                    BinOp::Mul => x.checked_mul(y)?,
                    BinOp::Div => x.checked_div(y)?,
                    BinOp::Mod => x.checked_rem(y)?,
                    _ => return None,
                })),
                _ => None,
            },
        }
    }

    pub(super) fn compare(&self, op: CmpOp, a: &Value, b: &Value, cx: &Cx) -> Option<bool> {
        use std::cmp::Ordering;
        let ord: Ordering = match (a, b) {
            (Value::Num(x), Value::Num(y)) => x.cmp(y),
            (Value::Str(x), Value::Str(y)) => x.cmp(y),
            (Value::Pos(x), Value::Pos(y)) => x.cmp(y),
            (Value::Num(x), other) => x.cmp(&(self.as_set(other, cx)?.count_ones() as i64)),
            (other, Value::Num(y)) => (self.as_set(other, cx)?.count_ones() as i64).cmp(y),
            (x, y) => {
                let (x, y) = (self.as_set(x, cx)?, self.as_set(y, cx)?);
                return match op {
                    CmpOp::Eq => Some(x == y),
                    CmpOp::Ne => Some(x != y),
                    _ => Some(op.holds(x.count_ones().cmp(&y.count_ones()))),
                };
            }
        };
        Some(op.holds(ord))
    }
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, bounds, matching};
    use crate::plan::bounds::Bounds;

    /// `x != y` is `not x == y`: it matches where a side has no value, as CQL defines it.
    #[test]
    fn not_equal_is_not_equal_to() {
        let all: Vec<u32> = (0..=8).collect();
        // The first position has no parent.
        assert_eq!(matching("5 != parent:#A", SCHOLAR), all);
        assert_eq!(
            matching("5 != parent:#A", SCHOLAR),
            matching("not (5 == parent:#A)", SCHOLAR)
        );
        // White never loses a piece: only the first position, without a parent.
        assert_eq!(matching("16 != parent:#A", SCHOLAR), vec![0]);
        // No White tag: `player white` has no value.
        assert_eq!(matching("\"a\" != player white", SCHOLAR), all);
        let dated = "[Date \"1851.06.21\"]\n\n1. e4 *\n";
        assert_eq!(matching("year != 1851", dated), Vec::<u32>::new());
        assert_eq!(matching("year != 1900", dated), vec![0, 1]);
        assert_eq!(matching("year != 1900", "1. e4 *\n"), vec![0, 1]);
        // The index rule agrees: the negation of `==`, so games without a year are in it.
        assert_eq!(
            bounds("year != 1900"),
            Bounds::negate(bounds("year == 1900"))
        );
        assert_eq!(bounds("ply != 3"), Bounds::negate(bounds("ply == 3")));
        // Sets: `!=` between two sets that both have values.
        assert_eq!(matching("Q != Qd1", SCHOLAR), vec![3, 4, 5, 6, 7, 8]);
    }

    /// `#` counts a set up to `|`, `&` and attack arrows (CQL's precedence table puts them
    /// above it), and leaves arithmetic outside.
    #[test]
    fn count_takes_set_operators_not_arithmetic() {
        // At the start the king on e1 attacks the pawns on d2, e2 and f2.
        assert_eq!(matching("initial #P attackedby K == 3", SCHOLAR), vec![0]);
        assert_eq!(matching("initial #P & d-f2 == 3", SCHOLAR), vec![0]);
        assert_eq!(matching("initial #Q | R == 3", SCHOLAR), vec![0]);
        assert_eq!(matching("initial #A - #a == 0", SCHOLAR), vec![0]);
        assert_eq!(matching("initial #P * 2 == 16", SCHOLAR), vec![0]);
    }

    /// `#D` of a dictionary counts its entries.
    #[test]
    fn count_of_a_dictionary_is_its_entries() {
        assert_eq!(
            matching(
                "dictionary D initial #D == 0 D[\"pin\"] = \"knight\" #D == 1",
                SCHOLAR
            ),
            vec![0]
        );
    }

    /// `max` and `min` match when at least one argument does, over the ones that do.
    #[test]
    fn max_and_min_leave_out_arguments_without_a_value() {
        assert_eq!(matching("initial max(1 parent:ply) == 1", SCHOLAR), vec![0]);
        assert_eq!(matching("initial min(5 parent:ply) == 5", SCHOLAR), vec![0]);
        assert_eq!(matching("max(parent:ply 0) == ply - 1", SCHOLAR).len(), 8);
        assert_eq!(
            matching("initial max(parent:ply child(5):ply)", SCHOLAR),
            Vec::<u32>::new()
        );
    }
}
