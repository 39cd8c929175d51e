//! Evaluating GTQL expressions: per node (with the scopes a part allows) and, for parts that
//! read only the node itself, a whole chunk column at a time.

use cqldb_planner::gtql::{Agg, AggDef, GExpr, GOp, Scope};

/// Evaluates an expression of bare attributes for every node of a chunk (`None` if it reads
/// anything else). Same results as [`ev`] on each node, without the per-node tree walk.
pub(super) fn ev_col(
    e: &GExpr,
    cols: &[Vec<i64>],
    first_id: i64,
    n: usize,
    attrs: usize,
) -> Option<Vec<i64>> {
    Some(match e {
        GExpr::Num(v) => vec![*v; n],
        GExpr::Attr(Scope::Bare, a) if *a == attrs => (first_id..first_id + n as i64).collect(),
        GExpr::Attr(Scope::Bare, a) => {
            let c = cols.get(*a)?;
            if c.len() != n {
                return None;
            }
            c.clone()
        }
        GExpr::Not(a) => {
            let mut v = ev_col(a, cols, first_id, n, attrs)?;
            for x in &mut v {
                *x = i64::from(*x == 0);
            }
            v
        }
        GExpr::Bin(op, a, b) => {
            let mut x = ev_col(a, cols, first_id, n, attrs)?;
            let y = ev_col(b, cols, first_id, n, attrs)?;
            macro_rules! zip {
                ($f:expr) => {
                    for (l, r) in x.iter_mut().zip(&y) {
                        *l = $f(*l, *r);
                    }
                };
            }
            match op {
                GOp::BitAnd => zip!(|l: i64, r: i64| l & r),
                GOp::And => zip!(|l: i64, r: i64| i64::from(l != 0 && r != 0)),
                GOp::Or => zip!(|l: i64, r: i64| i64::from(l != 0 || r != 0)),
                GOp::Lt => zip!(|l: i64, r: i64| i64::from(l < r)),
                GOp::Gt => zip!(|l: i64, r: i64| i64::from(l > r)),
                GOp::Le => zip!(|l: i64, r: i64| i64::from(l <= r)),
                GOp::Ge => zip!(|l: i64, r: i64| i64::from(l >= r)),
                GOp::Eq => zip!(|l: i64, r: i64| i64::from(l == r)),
                GOp::Ne => zip!(|l: i64, r: i64| i64::from(l != r)),
            }
            x
        }
        _ => return None,
    })
}

/// The value an aggregate adds for one item and whether the item counts (for `count(expr)`:
/// whether expr holds; the summed value is the expression's value for the others).
pub(super) fn agg_input(
    a: &AggDef,
    bare: &[i64],
    child: &[i64],
    prev: Option<&[i64]>,
) -> Option<(i64, bool)> {
    match &a.arg {
        None => Some((1, true)),
        Some(e) => {
            let v = ev(e, bare, child, prev, None, &[], &[]);
            match a.agg {
                Agg::Count => Some((0, truth(v))),
                _ => v.map(|v| (v, true)),
            }
        }
    }
}

pub(super) fn truth(v: Option<i64>) -> bool {
    v.is_some_and(|v| v != 0)
}

/// Evaluates an expression. `bare` = the node's values (inside a subtree aggregate: the
/// descendant's), `child` = `[]`, `prev` = `[<]`, `parent` = `[^]`; `child_aggs`/`sub_aggs` =
/// aggregate values. A missing value (no previous child, no parent) makes a comparison false.
pub(super) fn ev(
    e: &GExpr,
    bare: &[i64],
    child: &[i64],
    prev: Option<&[i64]>,
    parent: Option<&[i64]>,
    child_aggs: &[Option<i64>],
    sub_aggs: &[Option<i64>],
) -> Option<i64> {
    let r = |x: &GExpr| ev(x, bare, child, prev, parent, child_aggs, sub_aggs);
    match e {
        GExpr::Num(n) => Some(*n),
        GExpr::Attr(scope, a) => match scope {
            Scope::Bare => bare.get(*a).copied(),
            Scope::Child => child.get(*a).copied(),
            Scope::Prev => prev.and_then(|p| p.get(*a).copied()),
            Scope::Parent => parent.and_then(|p| p.get(*a).copied()),
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
