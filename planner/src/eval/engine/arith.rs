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
        let mut best: Option<i64> = None;
        for a in args {
            let v = match self.eval(a, cx)? {
                Value::Num(v) => v,
                other => self.as_set(&other, cx)?.count_ones() as i64,
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
