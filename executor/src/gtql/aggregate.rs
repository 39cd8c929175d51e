//! Aggregates over a window's rows: child aggregates collected from each child, subtree
//! aggregates summed up the tree; both carry the open rows' partial values to the next chunk.

use cqldb_planner::gtql::{Agg, AggDef};

use super::column::Col;
use super::window::Window;

/// A child aggregate's partial values over the window's rows (a row collects from its
/// children), and the open rows' values carried to the next chunk.
pub(super) struct ChildAcc {
    pub def: AggDef,
    /// Count, sum, min or max so far (sum for `avg`).
    pub value: Vec<i64>,
    /// Children with a value (for `min`, `max`, `avg`).
    pub items: Vec<i64>,
    pub carry_value: Vec<i64>,
    pub carry_items: Vec<i64>,
}

impl ChildAcc {
    /// An empty accumulator of `def`.
    pub fn new(def: &AggDef) -> Self {
        Self {
            def: def.clone(),
            value: Vec::new(),
            items: Vec::new(),
            carry_value: Vec::new(),
            carry_items: Vec::new(),
        }
    }

    pub fn start(&self) -> i64 {
        match self.def.agg {
            Agg::Min => i64::MAX,
            Agg::Max => i64::MIN,
            _ => 0,
        }
    }

    /// Adds each child `i` of a set (value column `col`, `None` for `count(*)`) to the row
    /// `parent(i)`.
    pub fn add_all(&mut self, len: usize, parent: impl Fn(usize) -> usize, col: Option<&Col>) {
        let (value, items) = (&mut self.value, &mut self.items);
        let Some(col) = col else {
            for i in 0..len {
                value[parent(i)] += 1;
            }
            return;
        };
        if self.def.agg == Agg::Count {
            for i in 0..len {
                value[parent(i)] += i64::from(col.truth(i));
            }
            return;
        }
        let fold: fn(i64, i64) -> i64 = match self.def.agg {
            Agg::Min => i64::min,
            Agg::Max => i64::max,
            _ => i64::wrapping_add,
        };
        for i in 0..len {
            if col.present(i) {
                let p = parent(i);
                value[p] = fold(value[p], col.v[i]);
                items[p] += 1;
            }
        }
    }

    /// The aggregate's value at each of `rows`.
    pub fn values(&self, rows: &[u32]) -> Col {
        let v: Vec<i64> = rows.iter().map(|&r| self.value[r as usize]).collect();
        match self.def.agg {
            Agg::Count | Agg::Sum => Col { v, valid: None },
            Agg::Min | Agg::Max => Col {
                v,
                valid: Some(rows.iter().map(|&r| self.items[r as usize] > 0).collect()),
            },
            Agg::Avg => {
                let items: Vec<i64> = rows.iter().map(|&r| self.items[r as usize]).collect();
                Col {
                    v: v.iter()
                        .zip(&items)
                        .map(|(s, &k)| if k > 0 { s / k } else { 0 })
                        .collect(),
                    valid: Some(items.iter().map(|&k| k > 0).collect()),
                }
            }
        }
    }
}

/// A subtree aggregate's totals over the window's rows (each row's descendants so far), and the
/// open rows' totals carried to the next chunk.
pub(super) struct SubAcc {
    pub def: AggDef,
    pub total: Vec<i64>,
    pub carry: Vec<i64>,
}

/// Per window row, the sum of `x` over its descendants so far: the chunk's nodes add into
/// their parents from the last to the first, so that each subtree's total has reached its root
/// before the root adds into its own parent; then what the carried rows received goes up their
/// chain, and what they had before is added. `x` is 1 per node when `None`.
pub(super) fn subtree_totals(w: &Window, x: Option<&[i64]>, carry: &[i64], total: &mut Vec<i64>) {
    let c = w.carried;
    total.clear();
    total.resize(c + w.n + 1, 0);
    for j in (0..w.n).rev() {
        let p = w.parent[c + j] as usize;
        let own = x.map_or(1, |x| x[j]);
        total[p] = total[p].wrapping_add(total[c + j].wrapping_add(own));
    }
    for k in (1..c).rev() {
        total[k - 1] = total[k - 1].wrapping_add(total[k]);
    }
    for (t, &before) in total.iter_mut().zip(carry) {
        *t = t.wrapping_add(before);
    }
}
