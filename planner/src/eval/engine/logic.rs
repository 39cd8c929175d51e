//! Logic: compound filters `{...}`, `and`, `or`, `not`, `if ... then ... else`, and `P : F`
//! (a filter evaluated at another position).

use crate::ast::*;
use crate::eval::context::{Cx, matches};
use crate::eval::value::Value;

use super::Engine;

impl Engine {
    pub(super) fn compound(&mut self, items: &[Node], cx: &mut Cx) -> Option<Value> {
        let mut last = Value::Matched;
        for (i, it) in items.iter().enumerate() {
            let v = self.eval(it, cx);
            if !matches(&v) {
                // A compound whose last filter is a set stands for the empty set where that
                // set is empty (CQL): `#{Q} == 0` holds without a queen, `{Ra3} == Ra3`
                // always. As a filter it still does not match.
                if i + 1 == items.len() && matches!(v, Some(Value::Set(_))) {
                    return v;
                }
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

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, matching};

    /// A compound ending in a set is that set, the empty set included; as a filter an empty
    /// one does not match.
    #[test]
    fn a_compound_ending_in_an_empty_set_is_the_empty_set() {
        let all: Vec<u32> = (0..=8).collect();
        assert_eq!(matching("#{Ra3} == 0", SCHOLAR), all);
        assert_eq!(matching("{Ra3} == Ra3", SCHOLAR), all);
        assert_eq!(matching("{Ra3}", SCHOLAR), Vec::<u32>::new());
        assert_eq!(matching("not {Ra3}", SCHOLAR), all);
        // The queen leaves d1 with 2. Qh5.
        assert_eq!(matching("#{Qd1} == 1", SCHOLAR), vec![0, 1, 2]);
        assert_eq!(
            matching("(Qh5 | {Qd1}) == Q", SCHOLAR),
            (0..=6).chain([8]).collect::<Vec<u32>>()
        );
    }
}
