//! Logic: compound filters `{...}`, `and`, `or`, `not`, `if ... then ... else`, and `P : F`
//! (a filter evaluated at another position).

use crate::ast::*;
use crate::eval::context::{Cx, matches};
use crate::eval::value::Value;

use super::Engine;

impl Engine {
    pub(super) fn compound(&mut self, items: &[Node], cx: &mut Cx) -> Option<Value> {
        let mut last = Value::Matched;
        for it in items {
            let v = self.eval(it, cx);
            if !matches(&v) {
                return None;
            }
            last = v?;
        }
        Some(last)
    }

    pub(super) fn and(&mut self, a: &Node, b: &Node, cx: &mut Cx) -> Option<Value> {
        let va = self.eval(a, cx);
        if !matches(&va) {
            return None;
        }
        let vb = self.eval(b, cx);
        matches(&vb).then_some(Value::Matched)
    }

    pub(super) fn or(&mut self, a: &Node, b: &Node, cx: &mut Cx) -> Option<Value> {
        let va = self.eval(a, cx);
        if matches(&va) {
            return Some(Value::Matched);
        }
        let vb = self.eval(b, cx);
        matches(&vb).then_some(Value::Matched)
    }

    pub(super) fn not(&mut self, a: &Node, cx: &mut Cx) -> Option<Value> {
        let mark = cx.comments.len();
        let v = self.eval(a, cx);
        cx.comments.truncate(mark);
        (!matches(&v)).then_some(Value::Matched)
    }

    pub(super) fn if_then_else(
        &mut self,
        c: &Node,
        t: &Node,
        e: &Option<Box<Node>>,
        cx: &mut Cx,
    ) -> Option<Value> {
        let mark = cx.comments.len();
        let vc = self.eval(c, cx);
        if matches(&vc) {
            self.eval(t, cx)
        } else {
            cx.comments.truncate(mark);
            match e {
                Some(e) => self.eval(e, cx),
                None => Some(Value::Matched),
            }
        }
    }

    pub(super) fn at_position(&mut self, p: &Node, f: &Node, cx: &mut Cx) -> Option<Value> {
        let Value::Pos(target) = self.eval(p, cx)? else {
            return None;
        };
        let saved = cx.cur;
        cx.cur = target;
        let v = self.eval(f, cx);
        cx.cur = saved;
        v.filter(|v| matches(&Some(v.clone())))
    }
}
