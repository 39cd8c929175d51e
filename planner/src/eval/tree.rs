//! `find`: the first position (or the number of positions) after, or before, the current one
//! where a filter matches.

use crate::ast::Expr;

use crate::eval::context::{Cx, matches};
use crate::eval::engine::Engine;
use crate::eval::value::Value;

impl Engine {
    pub(crate) fn eval_tree(&mut self, e: &Expr, cx: &mut Cx) -> Option<Value> {
        let g = cx.game;
        match e {
            Expr::Find(f) => {
                let saved = cx.cur;
                let mut found = None;
                let mut count = 0i64;
                let mut visit = |e: &mut Self, cx: &mut Cx, id: u32| -> bool {
                    cx.cur = id;
                    let mark = cx.comments.len();
                    let v = e.eval(&f.body, cx);
                    if f.quiet {
                        cx.comments.truncate(mark);
                    }
                    if matches(&v) {
                        count += 1;
                        if found.is_none() {
                            found = Some(id);
                        }
                        return f.count.is_none();
                    }
                    false
                };
                if f.backward {
                    let mut id = Some(saved);
                    while let Some(p) = id {
                        if visit(self, cx, p) {
                            break;
                        }
                        id = g.parent(p);
                    }
                } else {
                    for id in saved..g.subtree_end(saved) {
                        if g.visible(id) && visit(self, cx, id) {
                            break;
                        }
                    }
                }
                cx.cur = saved;
                match f.count {
                    Some((lo, hi)) => (count >= lo && count <= hi).then_some(Value::Num(count)),
                    None => found.map(Value::Pos),
                }
            }
            _ => None,
        }
    }
}
