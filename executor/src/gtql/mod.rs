//! GTQL evaluation: many queries answered in one pass over a tree that streams in pre-order
//! chunks, with memory proportional to depth × queries.
//!
//! The pass works a slice of a chunk at a time, and within a slice a column at a time. For
//! each slice it first works out, once for all queries, the slice's [`window`]: the open nodes
//! carried in from earlier slices, each node's parent and previous sibling, and which nodes'
//! subtrees are still open afterwards. Then, per query and per part, one column operation
//! covers every node concerned:
//!
//! - the node part, for every node of the slice: which nodes are candidates;
//! - child aggregates, for every child of a candidate: its value, added into its parent's row;
//! - subtree aggregates, for every node: its value, added up the tree from the last node to the
//!   first, so that each row holds the total over its descendants so far;
//! - the child and subtree parts, for the candidates whose subtrees ended in the slice.
//!
//! Queries with the same node part and aggregates share one state and differ only in their
//! final comparisons (`QueryState::share`).
//!
//! State between slices is only what the open nodes carry (their values, candidate flags and
//! partial aggregates). [`naive_answers`] recomputes every aggregate for every node from
//! scratch; the property tests compare the two.
//!
//! Files: this one holds the pass; [`run`] the entry points that answer a batch over a tree
//! file or a database; [`source`] reads `.gtl` trees for it and [`games`] indexed
//! game trees (both with `last_move` as a column of codes); `window.rs` the tree around a slice; `query.rs` one query's
//! share of it; `aggregate.rs` child and subtree aggregates; `column.rs` evaluates expressions a
//! column at a time; `first_hits.rs` keeps the first answers; `parallel.rs` spreads a batch of
//! queries over cores (one decoding, one pass per worker); `expr.rs` evaluates node by node
//! for `naive.rs`, the reference.

mod aggregate;
mod column;
mod expr;
mod first_hits;
pub mod games;
mod naive;
mod parallel;
mod query;
pub mod run;
mod sibling;
pub mod source;
mod view;
mod window;

pub use games::{Feed, feed_games, feed_games_measured, game_names};
pub use naive::naive_answers;
pub use parallel::ParallelPass;
pub use run::{GtqlOptions, GtqlOutcome, answer_games, answer_tree, plan_games};
pub use source::{GtlSource, tree_names};

use cqldb_planner::gtql::{Agg, GExpr, GtqlQuery, Scope};
use cqldb_storage::gtl::Chunk;

use aggregate::subtree_totals;
use query::QueryState;
use view::View;
use window::Window;

/// One answer node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The node's id: the one its log gave it where the tree has ids (a `.gtf` record number),
    /// else its pre-order number (root = 0).
    pub node_id: u64,
    /// Moves from the root (empty unless moves were read).
    pub path: Vec<String>,
    /// Values of the attributes read by the pass (schema order; unread ones are 0).
    pub values: Vec<i64>,
}

/// The answer of one query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// Number of matching nodes (or the stand-alone count).
    pub count: u64,
    /// The first matching nodes, up to the pass's limit, in pre-order.
    pub hits: Vec<Hit>,
}

/// Nodes evaluated together: a few columns of them fit in the core's cache.
const SLICE: usize = 4096;

/// A single-pass evaluator of several queries over a tree fed in pre-order chunks.
pub struct Pass {
    states: Vec<QueryState>,
    /// Per query: its state, and 0 for the state's own query or k for its k-th extra one.
    slots: Vec<(usize, usize)>,
    attrs: usize,
    moves: bool,
    window: Window,
    /// Window columns (attributes, then `node_id`).
    cols: Vec<Vec<i64>>,
    /// Which attribute columns the chunks bring.
    present: Vec<bool>,
    /// Which columns have window columns (see [`Pass::gathered`]).
    gathered: Vec<bool>,
    /// The open rows' levels, values (attributes, then `node_id`) and moves.
    carry_levels: Vec<u32>,
    /// Per window row, its descendants so far, when some query counts them.
    counts_descendants: bool,
    descendants: Vec<i64>,
    carry_descendants: Vec<i64>,
    carry_cols: Vec<Vec<i64>>,
    carry_moves: Vec<String>,
    next_id: u64,
    /// Chunks waiting until there are as many nodes as open ones to carry (see `feed`).
    pending: Chunk,
}

/// Appends `from`'s nodes to `to` (columns a chunk did not read stay empty).
fn append_chunk(to: &mut Chunk, from: &Chunk) {
    if to.levels.is_empty() {
        to.first_id = from.first_id;
    }
    to.levels.extend_from_slice(&from.levels);
    to.moves.extend_from_slice(&from.moves);
    to.ids.extend_from_slice(&from.ids);
    if to.cols.len() < from.cols.len() {
        to.cols.resize_with(from.cols.len(), Vec::new);
    }
    for (t, f) in to.cols.iter_mut().zip(&from.cols) {
        t.extend_from_slice(f);
    }
}

impl Pass {
    /// A pass over a tree whose nodes have `attrs` attribute columns (see
    /// [`cqldb_planner::gtql::GtqlNames::columns`]: the tree's attributes, then `last_move`'s
    /// codes); `moves` keeps the paths of answers; at most `limit` hits are kept per query
    /// (all are counted).
    pub fn new(queries: Vec<GtqlQuery>, attrs: usize, moves: bool, limit: usize) -> Self {
        Self {
            gathered: Self::gathered(&queries, attrs),
            counts_descendants: queries.iter().any(|q| {
                q.subtree_aggs
                    .iter()
                    .any(|a| a.arg.is_none() || a.agg == Agg::Avg)
            }),
            descendants: Vec::new(),
            carry_descendants: Vec::new(),
            slots: Vec::new(),
            states: Vec::new(),
            attrs,
            moves,
            window: Window::default(),
            cols: vec![Vec::new(); attrs + 1],
            present: vec![false; attrs],
            carry_levels: Vec::new(),
            carry_cols: vec![Vec::new(); attrs + 1],
            carry_moves: Vec::new(),
            next_id: 0,
            pending: Chunk::default(),
        }
        .with_queries(queries, limit)
    }

    /// Adds the queries, each to the state of an earlier one when it can share it (see
    /// `QueryState::share`).
    fn with_queries(mut self, queries: Vec<GtqlQuery>, limit: usize) -> Self {
        for q in queries {
            let shared = self
                .states
                .iter_mut()
                .enumerate()
                .find_map(|(i, st)| st.share(&q, limit).then_some((i, st.extra.len())));
            match shared {
                Some(slot) => self.slots.push(slot),
                None => {
                    self.slots.push((self.states.len(), 0));
                    self.states.push(QueryState::new(q, self.attrs, limit));
                }
            }
        }
        self
    }

    /// The queries (indices into `queries`) grouped as one pass would group them into shared
    /// states: queries in different groups can run in different passes at no extra cost.
    pub fn groups(queries: &[GtqlQuery], attrs: usize, limit: usize) -> Vec<Vec<usize>> {
        let pass = Pass::new(queries.to_vec(), attrs, false, limit);
        let mut groups = vec![Vec::new(); pass.states.len()];
        for (i, &(state, _)) in pass.slots.iter().enumerate() {
            groups[state].push(i);
        }
        groups
    }

    /// Which of the first `attrs` columns the queries read (pass one more than the attribute
    /// columns to learn whether they read `node_id`).
    pub fn wanted(queries: &[GtqlQuery], attrs: usize) -> Vec<bool> {
        let mut want = vec![false; attrs];
        let mut mark = |e: &GExpr| {
            e.for_each_attr(&mut |_, a| {
                if let Some(w) = want.get_mut(a) {
                    *w = true;
                }
            })
        };
        for q in queries {
            for e in [&q.node, &q.child, &q.subtree, &q.sibling]
                .into_iter()
                .flatten()
            {
                mark(e);
            }
            for a in q
                .child_aggs
                .iter()
                .chain(&q.subtree_aggs)
                .chain(&q.sibling_aggs)
                .chain(&q.standalone)
            {
                if let Some(e) = &a.arg {
                    mark(e);
                }
            }
        }
        want
    }

    /// Feeds the next chunk (chunks must come in order): `attrs` columns (empty where not
    /// read), and the nodes' ids if the tree has them.
    ///
    /// Every step carries the open nodes (as many as the tree is deep) into its window, so
    /// steps are made at least that long: a chunk shorter than the depth waits in `pending`
    /// for the next ones, and a step costs no more than the nodes it evaluates, keeping the
    /// pass linear in the tree's size (a line of a million plies took 30 times as long as
    /// one of 125,000 with fixed steps).
    pub fn feed(&mut self, chunk: &Chunk) {
        if chunk.levels.is_empty() {
            return;
        }
        if self.pending.levels.is_empty() && chunk.levels.len() >= self.carry_levels.len() {
            return self.feed_now(chunk);
        }
        append_chunk(&mut self.pending, chunk);
        if self.pending.levels.len() >= self.carry_levels.len() {
            self.feed_pending();
        }
    }

    fn feed_pending(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        self.feed_now(&pending);
        pending.levels.clear();
        pending.moves.clear();
        pending.ids.clear();
        pending.cols.iter_mut().for_each(Vec::clear);
        self.pending = pending;
    }

    fn feed_now(&mut self, chunk: &Chunk) {
        for (p, c) in self.present.iter_mut().zip(&chunk.cols) {
            *p |= !c.is_empty();
        }
        // A slice at a time, so that a query's columns stay in cache from one operation to
        // the next; no shorter than the carried open nodes (see `feed`).
        let n = chunk.levels.len();
        let mut cols: Vec<&[i64]> = Vec::with_capacity(chunk.cols.len());
        let mut start = 0;
        while start < n {
            let end = (start + SLICE.max(self.carry_levels.len())).min(n);
            cols.clear();
            cols.extend(
                chunk
                    .cols
                    .iter()
                    .map(|c| c.get(start..end).unwrap_or_default()),
            );
            // The ids, where the tree has them, are the column one past the attributes.
            if let Some(ids) = chunk.ids.get(start..end) {
                cols.resize(self.attrs, &[]);
                cols.push(ids);
            }
            let moves = chunk.moves.get(start..end).unwrap_or_default();
            self.step(&chunk.levels[start..end], &cols, moves, false);
            start = end;
        }
    }

    /// Ends the pass and returns one answer per query (hits sorted by node id).
    pub fn finish(mut self) -> Vec<Answer> {
        if !self.pending.levels.is_empty() {
            self.feed_pending();
        }
        self.step(&[], &[], &[], true);
        // Per state: its own answer, then its extra queries'.
        let mut answers: Vec<Vec<Option<Answer>>> = self
            .states
            .into_iter()
            .map(|st| {
                let own = Answer {
                    count: st.count,
                    hits: st.hits.into_sorted(),
                };
                let extra = st.extra.into_iter().map(|f| Answer {
                    count: f.count,
                    hits: f.hits.into_sorted(),
                });
                std::iter::once(own).chain(extra).map(Some).collect()
            })
            .collect();
        self.slots
            .iter()
            .map(|&(s, k)| answers[s][k].take().unwrap_or_default())
            .collect()
    }

    fn step(&mut self, levels: &[u32], cols: &[&[i64]], moves: &[String], end: bool) {
        let n = levels.len();
        self.window.build(&self.carry_levels, levels, end);
        let mut chunk: Vec<&[i64]> = (0..self.attrs)
            .map(|k| match cols.get(k) {
                Some(c) if self.present[k] && c.len() == n => *c,
                _ => &[],
            })
            .collect();
        // `node_id` from the tree's own ids; without them it is counted (see `View::value`).
        if let Some(ids) = cols.get(self.attrs).filter(|c| c.len() == n && n > 0) {
            chunk.push(ids);
        }
        // Window columns for the attributes read through other nodes.
        for k in 0..=self.attrs {
            let col = &mut self.cols[k];
            col.clear();
            if !self.gathered[k] {
                continue;
            }
            col.extend_from_slice(&self.carry_cols[k]);
            match chunk.get(k) {
                Some(c) if c.len() == n => col.extend_from_slice(c),
                None => col.extend(self.next_id as i64..(self.next_id + n as u64) as i64),
                Some(_) => col.resize(col.len() + n, 0),
            }
            col.push(0);
        }
        if self.counts_descendants {
            let (w, carry) = (&self.window, &self.carry_descendants);
            subtree_totals(w, None, carry, &mut self.descendants);
        }
        let view = View {
            w: &self.window,
            descendants: &self.descendants,
            chunk: &chunk,
            cols: &self.cols,
            carry_cols: &self.carry_cols,
            first_id: self.next_id,
            attrs: self.attrs,
            carry_moves: &self.carry_moves,
            moves,
            keep_paths: self.moves,
        };
        for st in &mut self.states {
            st.feed(&view);
        }
        // What the open rows carry to the next chunk.
        let w = &self.window;
        let carried: Vec<Vec<i64>> = (0..=self.attrs)
            .map(|k| {
                if k < self.attrs && !self.present[k] {
                    return Vec::new();
                }
                w.open.iter().map(|&r| view.value(k, r as usize)).collect()
            })
            .collect();
        if self.moves {
            let c = w.carried;
            let carried: Vec<String> = w
                .open
                .iter()
                .map(|&r| {
                    let r = r as usize;
                    match r.checked_sub(c) {
                        None => self.carry_moves.get(r).cloned(),
                        Some(j) => moves.get(j).cloned(),
                    }
                    .unwrap_or_default()
                })
                .collect();
            self.carry_moves = carried;
        }
        self.carry_cols = carried;
        if self.counts_descendants {
            self.carry_descendants.clear();
            let d = &self.descendants;
            self.carry_descendants
                .extend(w.open.iter().map(|&r| d[r as usize]));
        }
        self.carry_levels.clear();
        self.carry_levels.extend_from_slice(w.open_levels());
        self.next_id += n as u64;
    }

    /// Per attribute (then `node_id`): whether some query reads it through another node than
    /// the chunk's own (a parent, a child, a candidate being decided), so that the pass keeps
    /// a window column of it. Node parts and aggregate arguments over the descendants read the
    /// chunk's columns directly.
    fn gathered(queries: &[GtqlQuery], attrs: usize) -> Vec<bool> {
        fn mark(e: &GExpr, bare_too: bool, out: &mut [bool]) {
            e.for_each_attr(&mut |scope, a| {
                if (bare_too || scope != Scope::Bare)
                    && let Some(x) = out.get_mut(a)
                {
                    *x = true;
                }
            });
        }
        let mut out = vec![false; attrs + 1];
        for q in queries {
            let exprs = [(&q.node, false), (&q.child, true), (&q.subtree, true)];
            for (e, bare_too) in exprs {
                if let Some(e) = e {
                    mark(e, bare_too, &mut out);
                }
            }
            for a in &q.child_aggs {
                if let Some(e) = &a.arg {
                    mark(e, true, &mut out);
                }
            }
            for a in q.subtree_aggs.iter().chain(&q.standalone) {
                if let Some(e) = &a.arg {
                    mark(e, false, &mut out);
                }
            }
        }
        out
    }
}
