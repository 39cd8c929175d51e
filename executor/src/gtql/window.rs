//! The tree around one chunk, worked out once for all queries of a pass.
//!
//! A chunk's nodes need nodes of earlier chunks: their parents, their previous siblings and the
//! candidates whose subtrees they belong to. All of those are still open (their subtrees have
//! not ended) when the chunk starts, so they are exactly the stack of open nodes, at most the
//! tree's depth. The window numbers those carried rows first, then the chunk's nodes, then one
//! sentinel row standing for "no such node", and gives each row its parent and each chunk node
//! its previous sibling as row numbers. Every query's columns then use the same numbering.

/// The rows of one chunk's window (see the module doc).
#[derive(Default)]
pub(super) struct Window {
    /// Rows carried in from earlier chunks (the open nodes, root first).
    pub carried: usize,
    /// Nodes of the chunk.
    pub n: usize,
    /// Per row (carried, chunk, then the sentinel): its parent's row, or the sentinel.
    pub parent: Vec<u32>,
    /// Per chunk node: the row of the sibling just before it, or the sentinel.
    pub prev: Vec<u32>,
    /// Rows still open after the chunk, root first; every other row's subtree has ended.
    pub open: Vec<u32>,
    /// Per row: whether it is still open after the chunk.
    pub is_open: Vec<bool>,
    /// Levels of the open rows.
    open_levels: Vec<u32>,
    /// Per row, its last child so far (while building).
    last_child: Vec<u32>,
}

impl Window {
    /// The sentinel row.
    #[inline]
    pub fn sentinel(&self) -> u32 {
        (self.carried + self.n) as u32
    }

    /// Works out the window of a chunk with node `levels`, after the open nodes whose levels
    /// are `carried` (root first). With `end`, the tree ends after the chunk, so every
    /// subtree still open ends too.
    pub fn build(&mut self, carried: &[u32], levels: &[u32], end: bool) {
        let (c, n) = (carried.len(), levels.len());
        let sentinel = (c + n) as u32;
        self.carried = c;
        self.n = n;
        self.parent.clear();
        self.parent.resize(c + n + 1, sentinel);
        self.prev.clear();
        self.prev.resize(n, sentinel);
        // The open nodes form one chain from the root: each is the parent of the next.
        for k in 1..c {
            self.parent[k] = (k - 1) as u32;
        }
        if well_formed(carried, levels) {
            self.chain(levels);
        } else {
            self.stack(carried, levels);
        }
        if end {
            self.open.clear();
            self.open_levels.clear();
        }
        self.is_open.clear();
        self.is_open.resize(c + n + 1, false);
        for &r in &self.open {
            self.is_open[r as usize] = true;
        }
    }

    /// Parents, siblings and open rows for any levels: a stack of open nodes, popped as
    /// subtrees end.
    fn stack(&mut self, carried: &[u32], levels: &[u32]) {
        let (c, sentinel) = (self.carried, self.sentinel());
        self.open.clear();
        self.open.extend(0..c as u32);
        self.open_levels.clear();
        self.open_levels.extend_from_slice(carried);
        for (j, &level) in levels.iter().enumerate() {
            // Leaving the subtrees this node is not in; the last one left, if any, is its
            // previous sibling (its parent is this node's parent).
            let mut last = sentinel;
            while self.open_levels.last().is_some_and(|&l| l >= level) {
                self.open_levels.pop();
                last = self.open.pop().unwrap_or(sentinel);
            }
            self.prev[j] = last;
            self.parent[c + j] = self.open.last().copied().unwrap_or(sentinel);
            self.open.push((c + j) as u32);
            self.open_levels.push(level);
        }
    }

    /// The same for a well-formed tree (see [`well_formed`]), without a data-dependent loop
    /// per node: the open nodes are then one per level, `chain[0..=level]`, so a node at level
    /// `l` has parent `chain[l - 1]` and follows its sibling `chain[l]` if the node before it
    /// was at level `l` or deeper.
    fn chain(&mut self, levels: &[u32]) {
        let (c, sentinel) = (self.carried, self.sentinel());
        // The chain starts as the carried rows (at levels 0..c) and never gets longer than
        // the number of rows.
        let chain = &mut self.open;
        chain.clear();
        chain.extend(0..c as u32);
        chain.resize(c + levels.len() + 1, sentinel);
        // Per row, its last child so far: a carried row is its parent's (the roots' parent
        // being the sentinel). Reading the previous sibling from here rather than from
        // `chain[l]`, just overwritten for a sibling, made the loop five times faster.
        let last = &mut self.last_child;
        last.clear();
        last.resize(c + levels.len() + 1, sentinel);
        for k in 0..c {
            let p = if k == 0 { sentinel } else { (k - 1) as u32 };
            last[p as usize] = k as u32;
        }
        let parent = &mut self.parent[c..];
        let prev = &mut self.prev[..];
        // One past the previous node's level: the chain's length.
        let mut top = c;
        for (j, (&level, (pa, pr))) in levels
            .iter()
            .zip(parent.iter_mut().zip(prev.iter_mut()))
            .enumerate()
        {
            let l = level as usize;
            let p = if l > 0 { chain[l - 1] } else { sentinel };
            *pa = p;
            *pr = last[p as usize];
            last[p as usize] = (c + j) as u32;
            chain[l] = (c + j) as u32;
            top = l + 1;
        }
        chain.truncate(top);
        self.open_levels.clear();
        self.open_levels.extend(0..top as u32);
    }

    /// Levels of the rows still open after the chunk, root first.
    pub fn open_levels(&self) -> &[u32] {
        &self.open_levels
    }
}

/// Whether the open nodes and the chunk's levels form a well-formed tree: the open nodes at
/// levels 0, 1, 2, ... and each node at most one level below the one before it (what `.gtl`
/// files and game trees always are).
fn well_formed(carried: &[u32], levels: &[u32]) -> bool {
    let chain = carried.iter().enumerate().all(|(k, &l)| l as usize == k);
    // The node before the chunk's first is the deepest open one (none: the tree starts).
    let start = match levels.first() {
        None => true,
        Some(&l) => l as usize <= carried.len(),
    };
    chain
        && start
        && levels
            .windows(2)
            .fold(true, |ok, w| ok & (w[1] <= w[0].saturating_add(1)))
}

#[cfg(test)]
mod tests {
    use super::Window;
    use proptest::prelude::*;

    #[test]
    fn parents_siblings_and_open_rows_across_two_chunks() {
        // 0 R; 1 X (R); 2 X1 (X); 3 X2 (X); 4 X21 (X2); 5 Y (R)
        let mut w = Window::default();
        w.build(&[], &[0, 1, 2], false);
        assert_eq!(w.parent, vec![3, 0, 1, 3]);
        assert_eq!(w.prev, vec![3, 3, 3]);
        assert_eq!(w.open, vec![0, 1, 2]);
        let carried = w.open_levels().to_vec();
        // Second chunk: rows 0..3 are R, X, X1; then X2 (3), X21 (4), Y (5); sentinel 6.
        w.build(&carried, &[2, 3, 1], false);
        assert_eq!(w.parent, vec![6, 0, 1, 1, 3, 0, 6]);
        // X2's previous sibling is X1; Y's is X.
        assert_eq!(w.prev, vec![2, 6, 1]);
        assert_eq!(w.open, vec![0, 5]);
        assert_eq!(
            w.is_open,
            vec![true, false, false, false, false, true, false]
        );
        w.build(&[0, 1], &[], true);
        assert!(w.open.is_empty() && w.is_open.iter().all(|&o| !o));
    }

    proptest! {
        /// The chain construction agrees with the stack on well-formed trees, chunk by chunk.
        #[test]
        fn chain_equals_stack(steps in prop::collection::vec(0u32..5, 1..200), cut in 1usize..40) {
            let mut levels = vec![0u32];
            for s in &steps {
                let p = *levels.last().unwrap_or(&0);
                levels.push(if *s == 0 { p + 1 } else { p.saturating_sub(*s - 1) });
            }
            let (mut carried, mut fast, mut slow) = (Vec::new(), Window::default(), Window::default());
            for chunk in levels.chunks(cut) {
                prop_assert!(super::well_formed(&carried, chunk));
                for w in [&mut fast, &mut slow] {
                    let c = carried.len();
                    w.carried = c;
                    w.n = chunk.len();
                    w.parent = vec![w.sentinel(); c + chunk.len() + 1];
                    for k in 1..c {
                        w.parent[k] = (k - 1) as u32;
                    }
                    w.prev = vec![w.sentinel(); chunk.len()];
                }
                fast.chain(chunk);
                slow.stack(&carried, chunk);
                prop_assert_eq!(&fast.parent, &slow.parent);
                prop_assert_eq!(&fast.prev, &slow.prev);
                prop_assert_eq!(&fast.open, &slow.open);
                prop_assert_eq!(fast.open_levels(), slow.open_levels());
                carried = fast.open_levels().to_vec();
            }
        }
    }
}
