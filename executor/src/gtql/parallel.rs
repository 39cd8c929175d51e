//! Many queries over one tree on several cores, still in one pass over the tree.
//!
//! The calling thread reads (decodes) each chunk once and hands the same chunk to every
//! worker; each worker runs a [`Pass`] over its share of the queries. Queries that would share
//! a state stay together (see [`Pass::groups`]), and the groups are dealt out by a rough
//! estimate of their cost. Each worker builds its own slice windows, a small price (a few
//! percent of a query) for workers that never wait on each other. Chunks in flight are
//! bounded, so memory still does not grow with the tree.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use cqldb_planner::gtql::GtqlQuery;
use cqldb_storage::gtl::Chunk;

use super::{Answer, Pass};

/// Chunks queued per worker.
const QUEUED: usize = 2;

/// A rough relative cost of evaluating `q` in a pass: one per part and aggregate, a sibling
/// part (pairwise work per family) counting as several.
fn cost(q: &GtqlQuery) -> usize {
    let parts = [&q.node, &q.child, &q.subtree]
        .iter()
        .filter(|p| p.is_some())
        .count();
    let sibling = if q.sibling.is_some() { 8 } else { 0 };
    1 + parts + q.child_aggs.len() + q.subtree_aggs.len() + sibling
}

/// A [`Pass`] spread over worker threads: fed chunks in order like a pass, answering the same.
///
/// ```
/// use cqldb_executor::gtql::ParallelPass;
/// use cqldb_planner::gtql::{GtqlNames, parse_gtql};
/// use cqldb_storage::gtl::Chunk;
/// let names = GtqlNames { attrs: vec!["v".into()], ..Default::default() };
/// let q = parse_gtql("node: v > 1; subtree: count(*) >= 1", &names).unwrap();
/// let mut pass = ParallelPass::new(vec![q.clone(), q], names.columns(), false, 10, 2);
/// let cols = vec![vec![2, 3, 0], vec![]];
/// pass.feed(Chunk { first_id: 0, levels: vec![0, 1, 2], moves: vec![], cols, ids: vec![] });
/// let answers = pass.finish();
/// assert_eq!((answers[0].count, answers[1].count), (2, 2));
/// ```
pub struct ParallelPass {
    senders: Vec<SyncSender<Arc<Chunk>>>,
    workers: Vec<JoinHandle<Vec<Answer>>>,
    /// Per worker, the indices of its queries.
    shares: Vec<Vec<usize>>,
    queries: usize,
    /// Chunks the workers may still hold; the oldest is reused once they all let go of it.
    sent: VecDeque<Arc<Chunk>>,
}

impl ParallelPass {
    /// Starts up to `threads` workers (at least one) for `queries`, with [`Pass::new`]'s other
    /// arguments.
    pub fn new(
        queries: Vec<GtqlQuery>,
        attrs: usize,
        moves: bool,
        limit: usize,
        threads: usize,
    ) -> Self {
        let groups = Pass::groups(&queries, attrs, limit);
        let workers = threads.clamp(1, groups.len().max(1));
        // Largest groups first, each to the least loaded worker.
        let mut by_cost: Vec<(usize, Vec<usize>)> = groups
            .into_iter()
            .map(|g| (g.iter().map(|&i| cost(&queries[i])).sum(), g))
            .collect();
        by_cost.sort_by_key(|g| std::cmp::Reverse(g.0));
        let mut loads: Vec<(usize, Vec<usize>)> = vec![(0, Vec::new()); workers];
        for (c, g) in by_cost {
            if let Some(least) = loads.iter_mut().min_by_key(|s| s.0) {
                least.0 += c;
                least.1.extend(g);
            }
        }
        let shares: Vec<Vec<usize>> = loads.into_iter().map(|(_, share)| share).collect();
        let mut senders = Vec::new();
        let mut handles = Vec::new();
        for share in &shares {
            let (tx, rx) = sync_channel::<Arc<Chunk>>(QUEUED);
            let qs: Vec<GtqlQuery> = share.iter().map(|&i| queries[i].clone()).collect();
            handles.push(std::thread::spawn(move || {
                let mut pass = Pass::new(qs, attrs, moves, limit);
                for chunk in rx {
                    pass.feed(&chunk);
                }
                pass.finish()
            }));
            senders.push(tx);
        }
        Self {
            senders,
            workers: handles,
            shares,
            queries: queries.len(),
            sent: VecDeque::new(),
        }
    }

    /// Feeds the next chunk (in order), and returns a chunk to fill next: one the workers are
    /// done with, still holding its old contents, or a new one.
    pub fn feed(&mut self, chunk: Chunk) -> Chunk {
        let chunk = Arc::new(chunk);
        // A worker that stopped has panicked; `finish` says so.
        for tx in &self.senders {
            let _ = tx.send(chunk.clone());
        }
        self.sent.push_back(chunk);
        match self.sent.front() {
            Some(c) if Arc::strong_count(c) == 1 => self
                .sent
                .pop_front()
                .and_then(|c| Arc::try_unwrap(c).ok())
                .unwrap_or_default(),
            _ => Chunk::default(),
        }
    }

    /// Waits for the workers and returns one answer per query, in the queries' order.
    pub fn finish(mut self) -> Vec<Answer> {
        self.senders.clear();
        let mut answers: Vec<Option<Answer>> = vec![None; self.queries];
        for (share, worker) in self.shares.iter().zip(self.workers.drain(..)) {
            let got = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (&i, a) in share.iter().zip(got) {
                answers[i] = Some(a);
            }
        }
        answers.into_iter().map(Option::unwrap_or_default).collect()
    }
}
