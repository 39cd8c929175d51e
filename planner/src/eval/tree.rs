//! Game-tree filters: initial, terminal, mainline, ply, depth, positionid, position, parent,
//! child, ancestor, descendant, distance, lca, find, movenumber.

use crate::ast::Expr;

use crate::eval::context::{Cx, matches};
use crate::eval::engine::Engine;
use crate::eval::value::Value;

impl Engine {
    pub(crate) fn eval_tree(&mut self, e: &Expr, cx: &mut Cx) -> Option<Value> {
        let g = cx.game;
        match e {
            Expr::CurrentPosition => Some(Value::Pos(cx.cur)),
            Expr::Position(n) => {
                let Value::Num(id) = self.eval(n, cx)? else {
                    return None;
                };
                let id = u32::try_from(id).ok()?;
                g.visible(id).then_some(Value::Pos(id))
            }
            Expr::Parent => g.parent(cx.cur).map(Value::Pos),
            Expr::Child(i) => {
                let i = match i {
                    None => 0,
                    Some(n) => match self.eval(n, cx)? {
                        Value::Num(v) => usize::try_from(v).ok()?,
                        _ => return None,
                    },
                };
                g.children(cx.cur).get(i).copied().map(Value::Pos)
            }
            Expr::Ancestor(a, b) | Expr::Descendant(b, a) => {
                let (x, y) = (self.pos_of(a, cx)?, self.pos_of(b, cx)?);
                (x != y && g.is_ancestor_or_self(x, y)).then_some(Value::Matched)
            }
            Expr::Distance(a, b) => {
                let (x, y) = (self.pos_of(a, cx)?, self.pos_of(b, cx)?);
                let l = g.lca(x, y);
                let ply = |p: u32| i64::from(g.positions[p as usize].ply);
                Some(Value::Num(ply(x) + ply(y) - 2 * ply(l)))
            }
            Expr::Lca(a, b) => {
                let (x, y) = (self.pos_of(a, cx)?, self.pos_of(b, cx)?);
                Some(Value::Pos(g.lca(x, y)))
            }
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

    fn pos_of(&mut self, n: &crate::ast::Node, cx: &mut Cx) -> Option<u32> {
        match self.eval(n, cx)? {
            Value::Pos(p) => Some(p),
            _ => None,
        }
    }
}
