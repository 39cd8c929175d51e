//! The slice of a forest being fed to the queries ([`View`]): the window's rows, the chunk's
//! columns and the carried rows, as every query part reads them.

use super::Hit;
use super::column::{Col, Domain, Rows};
use super::window::Window;

/// The slice being fed, as the queries see it.
pub(super) struct View<'a> {
    pub w: &'a Window,
    /// The chunk's attribute columns (empty where not read).
    pub chunk: &'a [&'a [i64]],
    /// The window's columns (attributes, then `node_id`) for the attributes read through other
    /// nodes (see `Pass::gathered`), each ending with the sentinel row; the others are empty.
    pub cols: &'a [Vec<i64>],
    /// The carried rows' values (attributes, then `node_id`).
    pub carry_cols: &'a [Vec<i64>],
    /// Per window row, its descendants so far (empty when no query counts them).
    pub descendants: &'a [i64],
    pub first_id: u64,
    pub attrs: usize,
    /// Moves of the carried rows, then of the chunk's nodes.
    pub carry_moves: &'a [String],
    pub moves: &'a [String],
    pub keep_paths: bool,
}

impl View<'_> {
    /// A set of nodes with the given scopes.
    pub(super) fn domain<'b>(
        &'b self,
        len: usize,
        bare: Rows<'b>,
        child: Rows<'b>,
        prev: Rows<'b>,
        parent: Rows<'b>,
        aggs: &'b [Col],
    ) -> Domain<'b> {
        Domain {
            chunk: self.chunk,
            first_id: self.first_id as i64,
            bare,
            child,
            prev,
            parent,
            aggs,
            ..Domain::new(len, self.cols, self.w.sentinel(), &self.w.parent)
        }
    }

    /// The chunk's nodes, with their parents.
    pub(super) fn nodes(&self) -> Domain<'_> {
        let (c, n) = (self.w.carried, self.w.n);
        let parents = Rows::Gather(&self.w.parent[c..c + n]);
        self.domain(n, Rows::Chunk, Rows::Missing, Rows::Missing, parents, &[])
    }

    /// Attribute `k` (`attrs` = `node_id`) of window row `r` (0 where not read).
    pub fn value(&self, k: usize, r: usize) -> i64 {
        match r.checked_sub(self.w.carried) {
            None => self.carry_cols[k].get(r).copied().unwrap_or(0),
            Some(j) => match self.chunk.get(k) {
                Some(c) => c.get(j).copied().unwrap_or(0),
                // A tree without ids: `node_id` is the pre-order number.
                None if k == self.attrs => (self.first_id + j as u64) as i64,
                None => 0,
            },
        }
    }

    /// The node id of window row `row`.
    pub fn id(&self, row: u32) -> u64 {
        self.value(self.attrs, row as usize) as u64
    }

    pub(super) fn hit(&self, row: u32) -> Hit {
        let r = row as usize;
        let values = (0..self.attrs).map(|k| self.value(k, r)).collect();
        let mut path = Vec::new();
        if self.keep_paths {
            // The moves of the row and its ancestors, but the root, which has none.
            let sentinel = self.w.sentinel();
            let mut at = row;
            while self.w.parent[at as usize] != sentinel {
                let a = at as usize;
                let mv = match a.checked_sub(self.w.carried) {
                    None => self.carry_moves.get(a),
                    Some(j) => self.moves.get(j),
                };
                path.push(mv.cloned().unwrap_or_default());
                at = self.w.parent[a];
            }
            path.reverse();
        }
        Hit {
            node_id: self.id(row),
            path,
            values,
        }
    }
}
