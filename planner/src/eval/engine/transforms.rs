//! Transforms at run time: `flipcolor` (and the transforms made of it) evaluate their body
//! under each colour state they reach, with the swap in the evaluation context.

use crate::ast::*;
use crate::eval::context::{Cx, matches};
use crate::eval::value::Value;

use super::Engine;

impl Engine {
    pub(super) fn transform(
        &mut self,
        kind: &TransformKind,
        body: &Node,
        cx: &mut Cx,
    ) -> Option<Value> {
        // Transforms directly inside one another (or inside a compound of one filter)
        // reach each colour state at most once: `flipcolor { flipcolor X }` evaluates
        // X twice, not four times.
        let mut states = vec![cx.flip];
        let mut inner: &Node = body;
        let mut kinds = vec![*kind];
        loop {
            match &inner.expr {
                Expr::Transform(k, b) => {
                    kinds.push(*k);
                    inner = b;
                }
                Expr::Compound(items) if items.len() == 1 => inner = &items[0],
                _ => break,
            }
        }
        for k in kinds {
            let mut next = Vec::with_capacity(2);
            for &s in &states {
                for &swap in k.copies() {
                    if !next.contains(&(s != swap)) {
                        next.push(s != swap);
                    }
                }
            }
            states = next;
        }
        let saved = cx.flip;
        for flip in states {
            cx.flip = flip;
            let v = self.eval(inner, cx);
            if matches(&v) {
                cx.flip = saved;
                return v;
            }
        }
        cx.flip = saved;
        None
    }
}
