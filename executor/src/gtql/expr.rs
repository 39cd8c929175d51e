//! Evaluating GTQL expressions node by node, with the scopes a part allows (the reference
//! evaluator's way; the pass evaluates a column at a time, see `column.rs`).

use cqldb_planner::gtql::{GExpr, GOp, Scope};

pub(super) fn truth(v: Option<i64>) -> bool {
    v.is_some_and(|v| v != 0)
}

/// Evaluates an expression. `bare` = the node's values (inside a subtree aggregate: the
/// descendant's), `child` = `[]`, `prev` = `[<]`, `ancestors` = `[^]`, `[^2]`, ... (nearest
/// first); `child_aggs`/`sub_aggs` = aggregate values. A missing value (no previous child, no
/// such ancestor) makes a comparison false.
pub(super) fn ev(
    e: &GExpr,
    bare: &[i64],
    child: &[i64],
    prev: Option<&[i64]>,
    ancestors: &[&[i64]],
    child_aggs: &[Option<i64>],
    sub_aggs: &[Option<i64>],
) -> Option<i64> {
    let r = |x: &GExpr| ev(x, bare, child, prev, ancestors, child_aggs, sub_aggs);
    match e {
        GExpr::Num(n) => Some(*n),
        GExpr::Attr(scope, a) => match scope {
            Scope::Bare => bare.get(*a).copied(),
            Scope::Child => child.get(*a).copied(),
            Scope::Prev => prev.and_then(|p| p.get(*a).copied()),
            Scope::Ancestor(k) => ancestors
                .get((*k as usize).wrapping_sub(1))
                .and_then(|p| p.get(*a).copied()),
        },
        GExpr::Agg(k) => {
            // Child-part aggregates come in `child_aggs`, subtree ones in `sub_aggs`; exactly
            // one of the two is given when a part is decided.
            if !child_aggs.is_empty() {
                child_aggs.get(*k).copied().flatten()
            } else {
                sub_aggs.get(*k).copied().flatten()
            }
        }
        GExpr::Not(a) => Some(i64::from(!truth(r(a)))),
        GExpr::Bin(op, a, b) => match op {
            GOp::And => Some(i64::from(truth(r(a)) && truth(r(b)))),
            GOp::Or => Some(i64::from(truth(r(a)) || truth(r(b)))),
            GOp::BitAnd => Some(r(a)? & r(b)?),
            _ => {
                let (Some(x), Some(y)) = (r(a), r(b)) else {
                    return Some(0);
                };
                Some(i64::from(compare(*op, x, y)))
            }
        },
    }
}

/// `x OP y` for a relational operator (`!=` for any other).
#[inline]
pub(super) fn compare(op: GOp, x: i64, y: i64) -> bool {
    match op {
        GOp::Lt => x < y,
        GOp::Gt => x > y,
        GOp::Le => x <= y,
        GOp::Ge => x >= y,
        GOp::Eq => x == y,
        _ => x != y,
    }
}
