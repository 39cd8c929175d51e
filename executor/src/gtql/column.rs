//! GTQL expressions evaluated a column at a time: one call computes an expression for every
//! node of a set (the nodes of a chunk, the children of candidates, the candidates whose
//! subtrees just ended), reading each scope's values through an index into the window's rows.
//!
//! Gives exactly what `expr::ev` gives node by node (the property tests compare the pass, which
//! uses this, with the naive evaluator, which uses `ev`): a missing value (no parent, no previous
//! child, `min` of no children) makes a comparison false and `not` of it true.

use cqldb_planner::gtql::{GExpr, GOp, Scope};

/// Values of an expression over a set of nodes; `valid` is `None` when every value is present.
#[derive(Clone, Debug, Default)]
pub(super) struct Col {
    pub v: Vec<i64>,
    pub valid: Option<Vec<bool>>,
}

impl Col {
    /// Whether the value at `i` is present and non-zero.
    #[inline]
    pub fn truth(&self, i: usize) -> bool {
        (self.v[i] != 0) & self.valid.as_ref().is_none_or(|m| m[i])
    }

    /// Appends `truth(i)` for every value.
    pub fn truths_into(&self, out: &mut Vec<bool>) {
        match &self.valid {
            None => out.extend(self.v.iter().map(|&x| x != 0)),
            Some(m) => out.extend(self.v.iter().zip(m).map(|(&x, &ok)| ok & (x != 0))),
        }
    }

    /// Whether the value at `i` is present.
    #[inline]
    pub fn present(&self, i: usize) -> bool {
        self.valid.as_ref().is_none_or(|m| m[i])
    }
}

/// Where a scope's values come from, for each node of the set.
#[derive(Clone, Copy)]
pub(super) enum Rows<'a> {
    /// The chunk's nodes, in order (read straight from the chunk's columns).
    Chunk,
    /// One window row per node; the window's sentinel row stands for "no such node".
    Gather(&'a [u32]),
    /// The scope is not available to this part.
    Missing,
}

/// A set of nodes to evaluate expressions over.
pub(super) struct Domain<'a> {
    /// Number of nodes in the set.
    pub len: usize,
    /// The chunk's attribute columns (empty where not read) and its first node id.
    pub chunk: &'a [&'a [i64]],
    pub first_id: i64,
    /// The window's columns (attributes, then `node_id`), each ending with the sentinel row,
    /// for the attributes some query reads through another node; the others are empty.
    pub cols: &'a [Vec<i64>],
    /// The sentinel row's index.
    pub sentinel: u32,
    /// The window's parent of each row (the sentinel's is the sentinel), to reach ancestors.
    pub up: &'a [u32],
    pub bare: Rows<'a>,
    pub child: Rows<'a>,
    pub prev: Rows<'a>,
    pub parent: Rows<'a>,
    /// Values of the part's aggregates, by slot.
    pub aggs: &'a [Col],
}

impl<'a> Domain<'a> {
    /// `len` nodes of a table `cols` (sentinel row `sentinel`, parents `up`), with every scope
    /// missing: callers fill in the ones their part allows.
    pub fn new(len: usize, cols: &'a [Vec<i64>], sentinel: u32, up: &'a [u32]) -> Self {
        Self {
            len,
            chunk: &[],
            first_id: 0,
            cols,
            sentinel,
            up,
            bare: Rows::Missing,
            child: Rows::Missing,
            prev: Rows::Missing,
            parent: Rows::Missing,
            aggs: &[],
        }
    }
}

/// Evaluates `e` for every node of `d`.
pub(super) fn eval(e: &GExpr, d: &Domain) -> Col {
    match e {
        GExpr::Num(v) => Col {
            v: vec![*v; d.len],
            valid: None,
        },
        GExpr::Attr(Scope::Ancestor(k), a) if *k > 1 => match d.parent {
            Rows::Gather(parents) => attr(d, Rows::Gather(&ancestors(d, parents, *k)), *a),
            _ => attr(d, Rows::Missing, *a),
        },
        GExpr::Attr(scope, a) => attr(d, rows(d, *scope), *a),
        GExpr::Agg(k) => d.aggs.get(*k).cloned().unwrap_or_else(|| Col {
            v: vec![0; d.len],
            valid: Some(vec![false; d.len]),
        }),
        GExpr::Not(a) => {
            let x = eval(a, d);
            let v = (0..d.len).map(|i| i64::from(!x.truth(i))).collect();
            Col { v, valid: None }
        }
        GExpr::Bin(op, a, b) => {
            if let (GExpr::Num(c), false) = (&**b, matches!(op, GOp::And | GOp::Or)) {
                // An attribute of the chunk's nodes against a constant (the commonest test):
                // straight from the chunk's column.
                if let Some(col) = plain_slice(a, d) {
                    return chunk_with_constant(*op, col, *c);
                }
                let mut x = eval(a, d);
                with_constant(*op, &mut x, *c);
                return x;
            }
            // Two attributes of the chunk's nodes: straight from the chunk's columns.
            if !matches!(op, GOp::And | GOp::Or)
                && let (Some(xs), Some(ys)) = (plain_slice(a, d), plain_slice(b, d))
            {
                let mut x = Col {
                    v: xs.to_vec(),
                    valid: None,
                };
                binary_values(*op, &mut x.v, ys);
                return x;
            }
            let mut x = eval(a, d);
            let y = eval(b, d);
            binary(*op, &mut x, &y);
            x
        }
    }
}

/// The values of `e` without computing or copying anything, when they are all present and
/// already stored: an attribute read straight from the chunk, or an aggregate.
fn plain_slice<'a>(e: &GExpr, d: &Domain<'a>) -> Option<&'a [i64]> {
    match e {
        GExpr::Attr(scope, k) if matches!(rows(d, *scope), Rows::Chunk) => {
            d.chunk.get(*k).copied().filter(|c| c.len() == d.len)
        }
        GExpr::Agg(k) => d
            .aggs
            .get(*k)
            .filter(|a| a.valid.is_none() && a.v.len() == d.len)
            .map(|a| a.v.as_slice()),
        _ => None,
    }
}

/// `x = x OP y` for a relational operator or `&`, on values all present.
fn binary_values(op: GOp, x: &mut [i64], y: &[i64]) {
    macro_rules! zip {
        ($f:expr) => {
            for (l, &r) in x.iter_mut().zip(y) {
                *l = $f(*l, r);
            }
        };
    }
    match op {
        GOp::BitAnd => zip!(|l: i64, r: i64| l & r),
        GOp::Lt => zip!(|l: i64, r: i64| i64::from(l < r)),
        GOp::Gt => zip!(|l: i64, r: i64| i64::from(l > r)),
        GOp::Le => zip!(|l: i64, r: i64| i64::from(l <= r)),
        GOp::Ge => zip!(|l: i64, r: i64| i64::from(l >= r)),
        GOp::Eq => zip!(|l: i64, r: i64| i64::from(l == r)),
        GOp::Ne => zip!(|l: i64, r: i64| i64::from(l != r)),
        GOp::And => zip!(|l: i64, r: i64| i64::from((l != 0) & (r != 0))),
        GOp::Or => zip!(|l: i64, r: i64| i64::from((l != 0) | (r != 0))),
    }
}

fn rows<'a>(d: &Domain<'a>, scope: Scope) -> Rows<'a> {
    match scope {
        Scope::Bare => d.bare,
        Scope::Child => d.child,
        Scope::Prev => d.prev,
        Scope::Ancestor(_) => d.parent,
    }
}

/// The `k`-th ancestors of the nodes whose parents are `parents`: the `k - 1`-th ancestors of
/// the parents, read from one sweep over the window ([`kth_ancestors`]), so the cost does not
/// grow with `k` (walking up `k - 1` times per node cost nodes × `k` on a deep tree).
fn ancestors(d: &Domain, parents: &[u32], k: u32) -> Vec<u32> {
    if let Some(anc) = kth_ancestors(d.up, d.sentinel, k - 1) {
        return parents
            .iter()
            .map(|&p| anc.get(p as usize).copied().unwrap_or(d.sentinel))
            .collect();
    }
    // Rows not in pre-order: walk up, stopping once every node has run out of ancestors.
    let mut rows = parents.to_vec();
    for _ in 1..k {
        if rows.iter().all(|&r| r == d.sentinel) {
            break;
        }
        for r in &mut rows {
            *r = d.up[*r as usize];
        }
    }
    rows
}

/// Every row's `j`-th ancestor (0: the row itself; the sentinel when there is none) in rows
/// numbered in pre-order, each row's parent `up[row]` before it: one sweep keeping the path
/// from the root, O(rows) whatever `j`. `None` when the rows are not in that order.
fn kth_ancestors(up: &[u32], sentinel: u32, j: u32) -> Option<Vec<u32>> {
    let mut depth = vec![0usize; up.len()];
    let mut anc = vec![sentinel; up.len()];
    let mut path: Vec<u32> = Vec::new();
    for (r, &p) in up.iter().enumerate() {
        if r as u32 == sentinel {
            continue;
        }
        let level = if p == sentinel {
            0
        } else if (p as usize) < r {
            depth[p as usize] + 1
        } else {
            return None;
        };
        depth[r] = level;
        path.truncate(level);
        if path.len() != level || (level > 0 && path[level - 1] != p) {
            return None;
        }
        path.push(r as u32);
        if let Some(a) = level.checked_sub(j as usize) {
            anc[r] = path[a];
        }
    }
    Some(anc)
}

/// The values of attribute `a` at `rows`.
fn attr(d: &Domain, rows: Rows, a: usize) -> Col {
    match rows {
        Rows::Missing => Col {
            v: vec![0; d.len],
            valid: Some(vec![false; d.len]),
        },
        Rows::Chunk => Col {
            v: match d.chunk.get(a) {
                Some(c) if c.len() == d.len => c.to_vec(),
                // `node_id`, one past the attributes.
                None if a == d.chunk.len() => (d.first_id..d.first_id + d.len as i64).collect(),
                _ => vec![0; d.len],
            },
            valid: None,
        },
        Rows::Gather(ix) => {
            let col = d.cols.get(a).map_or(&[][..], Vec::as_slice);
            let mut missing = false;
            let v = if col.is_empty() {
                missing = ix.contains(&d.sentinel);
                vec![0; d.len]
            } else {
                ix.iter()
                    .map(|&i| {
                        missing |= i == d.sentinel;
                        col[i as usize]
                    })
                    .collect()
            };
            let valid = missing.then(|| ix.iter().map(|&i| i != d.sentinel).collect());
            Col { v, valid }
        }
    }
}

/// `col OP c` for a column of present values.
fn chunk_with_constant(op: GOp, col: &[i64], c: i64) -> Col {
    macro_rules! map {
        ($f:expr) => {
            col.iter().map(|&x| i64::from($f(x, c))).collect()
        };
    }
    let v = match op {
        GOp::BitAnd => col.iter().map(|&x| x & c).collect(),
        GOp::Lt => map!(|x, c| x < c),
        GOp::Gt => map!(|x, c| x > c),
        GOp::Le => map!(|x, c| x <= c),
        GOp::Ge => map!(|x, c| x >= c),
        GOp::Eq => map!(|x, c| x == c),
        // And/Or never come here (see `eval`).
        GOp::Ne | GOp::And | GOp::Or => map!(|x, c| x != c),
    };
    Col { v, valid: None }
}

/// `x = x OP c` in place.
fn with_constant(op: GOp, x: &mut Col, c: i64) {
    macro_rules! cmp {
        ($f:expr) => {{
            match &x.valid {
                None => {
                    for l in &mut x.v {
                        *l = i64::from($f(*l, c));
                    }
                }
                Some(m) => {
                    for (l, &ok) in x.v.iter_mut().zip(m) {
                        *l = i64::from(ok && $f(*l, c));
                    }
                }
            }
            x.valid = None;
        }};
    }
    match op {
        GOp::BitAnd => {
            for l in &mut x.v {
                *l &= c;
            }
        }
        GOp::Lt => cmp!(|l: i64, r: i64| l < r),
        GOp::Gt => cmp!(|l: i64, r: i64| l > r),
        GOp::Le => cmp!(|l: i64, r: i64| l <= r),
        GOp::Ge => cmp!(|l: i64, r: i64| l >= r),
        GOp::Eq => cmp!(|l: i64, r: i64| l == r),
        GOp::Ne => cmp!(|l: i64, r: i64| l != r),
        GOp::And | GOp::Or => {
            let y = Col {
                v: vec![c; x.v.len()],
                valid: None,
            };
            binary(op, x, &y);
        }
    }
}

/// `x = x OP y` in place.
fn binary(op: GOp, x: &mut Col, y: &Col) {
    if x.valid.is_none() && y.valid.is_none() {
        binary_values(op, &mut x.v, &y.v);
        return;
    }
    match op {
        GOp::And | GOp::Or => {
            let and = op == GOp::And;
            for i in 0..x.v.len() {
                let (l, r) = (x.truth(i), y.truth(i));
                x.v[i] = i64::from(if and { l & r } else { l | r });
            }
            x.valid = None;
        }
        GOp::BitAnd => {
            for (l, r) in x.v.iter_mut().zip(&y.v) {
                *l &= *r;
            }
            x.valid = both_valid(x.valid.take(), &y.valid);
        }
        _ => {
            // Missing values compare false: compare, then clear where either is missing.
            binary_values(op, &mut x.v, &y.v);
            for m in [&x.valid, &y.valid].into_iter().flatten() {
                for (l, &ok) in x.v.iter_mut().zip(m) {
                    *l &= i64::from(ok);
                }
            }
            x.valid = None;
        }
    }
}

fn both_valid(a: Option<Vec<bool>>, b: &Option<Vec<bool>>) -> Option<Vec<bool>> {
    match (a, b) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b.clone()),
        (Some(mut a), Some(b)) => {
            for (l, r) in a.iter_mut().zip(b) {
                *l &= *r;
            }
            Some(a)
        }
    }
}

#[cfg(test)]
mod kth_tests {
    use super::kth_ancestors;
    use proptest::prelude::*;

    proptest! {
        /// The sweep agrees with walking up `j` times, on random pre-order forests.
        #[test]
        fn sweep_equals_walking_up(levels in proptest::collection::vec(0u32..6, 1..80), j in 0u32..8) {
            // A forest from levels: each node's parent is the last node one level up.
            let n = levels.len();
            let sentinel = n as u32;
            let mut up = vec![sentinel; n + 1];
            let mut last_at: Vec<u32> = Vec::new();
            for (r, &l) in levels.iter().enumerate() {
                let l = (l as usize).min(last_at.len());
                last_at.truncate(l);
                up[r] = if l == 0 { sentinel } else { last_at[l - 1] };
                last_at.push(r as u32);
            }
            let fast = kth_ancestors(&up, sentinel, j);
            prop_assert!(fast.is_some());
            let fast = fast.unwrap_or_default();
            for (r, &got) in fast.iter().take(n).enumerate() {
                let mut a = r as u32;
                for _ in 0..j {
                    if a != sentinel {
                        a = up[a as usize];
                    }
                }
                prop_assert_eq!(got, a, "row {}", r);
            }
        }
    }
}
