//! The first hits of a query in pre-order, kept while candidates are decided out of order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Hit;

/// A hit ordered by node id, for the heap of the first hits.
struct ById(Hit);

impl PartialEq for ById {
    fn eq(&self, other: &Self) -> bool {
        self.0.node_id == other.0.node_id
    }
}
impl Eq for ById {}
impl PartialOrd for ById {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ById {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.node_id.cmp(&other.0.node_id)
    }
}

/// The hits with the smallest node ids so far. Candidates are decided when their subtrees end,
/// ancestors after descendants, so the first hits in pre-order are not the first decided.
pub(super) struct FirstHits {
    limit: usize,
    heap: BinaryHeap<ById>,
}

impl FirstHits {
    /// Keeps at most `limit` hits.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            heap: BinaryHeap::new(),
        }
    }

    /// The hits kept, by node id.
    pub fn into_sorted(self) -> Vec<Hit> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|h| h.0)
            .collect()
    }

    /// Whether a hit with this id would be kept.
    pub fn wants(&self, id: u64) -> bool {
        self.heap.len() < self.limit || self.heap.peek().is_some_and(|h| id < h.0.node_id)
    }

    pub fn push(&mut self, hit: Hit) {
        self.heap.push(ById(hit));
        if self.heap.len() > self.limit {
            self.heap.pop();
        }
    }
}
