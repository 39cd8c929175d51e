//! GTQL evaluation: many queries answered in one depth-first pass over a tree that streams in
//! pre-order chunks, with memory proportional to depth × queries.
//!
//! Each node is looked at once. Its node expressions are evaluated on the spot; when they hold,
//! a frame for it stays on the stack until its subtree is complete, collecting its child
//! aggregates from each child as the child appears. Subtree aggregates use running totals over
//! the whole pass: a node's subtree is a contiguous run of the pre-order, so its aggregate is the
//! total when the run ends minus the total when it began.
//!
//! [`naive_answers`] recomputes every aggregate for every node from scratch; the property tests
//! compare the two.
//!
//! Files: this one holds the pass; `expr.rs` evaluates expressions (per node and a column at a
//! time), `program.rs` compiles the ones evaluated per node; `naive.rs` is the reference
//! evaluator.

mod expr;
mod naive;
mod program;

pub use naive::naive_answers;

use cqldb_planner::gtql::{Agg, AggDef, GExpr, GOp, GtqlQuery, Scope};
use cqldb_storage::gtl::Chunk;

use expr::{agg_input, compare, ev_col, truth};
use program::{Inputs, Program};

/// One answer node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Pre-order number (root = 0).
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

#[derive(Clone, Copy, Default)]
struct Acc {
    count: i64,
    sum: i64,
    min: Option<i64>,
    max: Option<i64>,
}

impl Acc {
    fn add(&mut self, v: i64, counted: bool) {
        if counted {
            self.count += 1;
        }
        self.sum = self.sum.wrapping_add(v);
        self.min = Some(self.min.map_or(v, |m| m.min(v)));
        self.max = Some(self.max.map_or(v, |m| m.max(v)));
    }
    /// `add` without min/max (subtree totals never need them).
    #[inline]
    fn add_sum(&mut self, v: i64, counted: bool) {
        self.count += i64::from(counted);
        self.sum = self.sum.wrapping_add(v);
    }

    fn value(&self, agg: Agg, items: i64) -> Option<i64> {
        match agg {
            Agg::Count => Some(self.count),
            Agg::Sum => Some(self.sum),
            Agg::Min => self.min,
            Agg::Max => self.max,
            Agg::Avg => (items > 0).then(|| self.sum / items),
        }
    }
}

/// An open candidate: a node whose node part held, waiting for its subtree to end.
#[derive(Default)]
struct Frame {
    id: u64,
    level: u32,
    vals: Vec<i64>,
    path: Vec<String>,
    child: Vec<Acc>,
    children: i64,
    entry: Vec<Acc>,
    entry_nodes: i64,
    prev_child: Vec<i64>,
    has_prev: bool,
}

/// A query's expressions compiled for per-node evaluation.
struct Programs {
    node: Option<Program>,
    child: Option<Program>,
    subtree: Option<Program>,
    child_aggs: Vec<Option<Program>>,
    standalone: Option<Program>,
}

impl Programs {
    fn of(q: &GtqlQuery) -> Self {
        let p = |e: &Option<GExpr>| e.as_ref().map(Program::new);
        Self {
            node: p(&q.node),
            child: p(&q.child),
            subtree: p(&q.subtree),
            child_aggs: q.child_aggs.iter().map(|a| p(&a.arg)).collect(),
            standalone: q.standalone.as_ref().and_then(|a| p(&a.arg)),
        }
    }
}

/// A child aggregate's input from one child (see `expr::agg_input`), with the compiled argument.
fn child_input(
    a: &AggDef,
    prog: Option<&Program>,
    bare: &[i64],
    child: &[i64],
    prev: Option<&[i64]>,
) -> Option<(i64, bool)> {
    match prog {
        None => Some((1, true)),
        Some(prog) => {
            let v = prog.eval(Inputs {
                child,
                prev,
                ..Inputs::bare(bare)
            });
            match a.agg {
                Agg::Count => Some((0, truth(v))),
                _ => v.map(|v| (v, true)),
            }
        }
    }
}

/// Per-query state of a pass.
struct QueryState {
    progs: Programs,
    query: GtqlQuery,
    /// Frames stay in place; the open stack and the free list hold indexes into it.
    frames: Vec<Frame>,
    open: Vec<u32>,
    free: Vec<u32>,
    totals: Vec<Acc>,
    standalone: i64,
    answer: Answer,
    /// Whether a candidate's own values are read after it is opened (by the child or subtree
    /// part outside aggregates, by child aggregates, or to list it).
    needs_vals: bool,
    /// Per subtree aggregate, per node of the current chunk: its argument's value, computed
    /// column-wise (empty for `count(*)`).
    sub_pre: Vec<Vec<i64>>,
    /// The paper's `subtree: count(*) OP c` with no child part: decided from the subtree size
    /// alone (operator, constant, whether the count is on the left).
    size_only: Option<(GOp, i64, bool)>,
    /// The paper's `child: count(*) OP c` with no subtree part: decided from the number of
    /// children alone.
    children_only: Option<(GOp, i64, bool)>,
    /// For counting-only passes of such queries: open candidates as (level, entry count or
    /// children so far).
    light: Vec<(u32, i64)>,
    /// A query decided by subtree aggregates alone (no child part, a subtree part that reads no
    /// attribute): a counting pass keeps its candidates as flat records of (level, entry node
    /// count, then count and sum at entry per aggregate) instead of frames.
    agg_light: bool,
    agg_stack: Vec<i64>,
}

impl QueryState {
    /// The fast test of a size-only or children-only query, and whether it counts children.
    fn light_test(&self) -> Option<((GOp, i64, bool), bool)> {
        self.size_only
            .map(|t| (t, false))
            .or(self.children_only.map(|t| (t, true)))
    }

    /// Decides the aggregate-only candidates at `level` or deeper (see `agg_light`), `nodes`
    /// being the count of nodes so far.
    fn close_agg_light(&mut self, level: u32, nodes: i64) {
        let aggs = &self.query.subtree_aggs;
        let stride = 2 + 2 * aggs.len();
        let Some(test) = &self.progs.subtree else {
            return;
        };
        while self.agg_stack.len() >= stride {
            let base = self.agg_stack.len() - stride;
            let entry = &self.agg_stack[base..];
            if entry[0] < i64::from(level) {
                break;
            }
            let descendants = nodes - entry[1];
            let mut sub = [None; 8];
            for (j, a) in aggs.iter().enumerate() {
                let (then_count, then_sum) = (entry[2 + 2 * j], entry[3 + 2 * j]);
                sub[j] = subtree_value(a, self.totals[j], then_count, then_sum, descendants);
            }
            let inputs = Inputs {
                sub_aggs: &sub[..aggs.len()],
                ..Inputs::bare(&[])
            };
            if test.holds(inputs) {
                self.answer.count += 1;
            }
            self.agg_stack.truncate(base);
        }
    }

    /// Decides the light candidates at `level` or deeper, `nodes` being the count of nodes
    /// whose subtrees they could contain.
    fn close_light(&mut self, level: u32, nodes: i64) {
        let Some((test, kids)) = self.light_test() else {
            return;
        };
        while let Some(&(l, v)) = self.light.last() {
            if l < level {
                break;
            }
            self.light.pop();
            let d = if kids { v } else { nodes - v };
            self.answer.count += u64::from(size_holds(test, d));
        }
    }
}

/// Whether a node part holds at node `index` of the chunk (precomputed column, else per node).
fn node_holds(
    pre: &[i64],
    index: usize,
    node: Option<&Program>,
    row: &[i64],
    parent: Option<&[i64]>,
) -> bool {
    match pre.get(index) {
        Some(&v) => v != 0,
        None => node.is_none_or(|p| {
            p.holds(Inputs {
                parent,
                ..Inputs::bare(row)
            })
        }),
    }
}

/// A single-pass evaluator of several queries. Per node the work is a few expression
/// evaluations per query; frames are recycled, so nothing is allocated once the pass is warm.
pub struct Pass {
    states: Vec<QueryState>,
    attrs: usize,
    moves: bool,
    limit: usize,
    /// Levels and values of the current node's ancestors (for `[^]`) and their moves.
    levels: Vec<u32>,
    vals: Vec<i64>,
    path: Vec<String>,
    nodes: i64,
    next_id: u64,
    row: Vec<i64>,
    /// Some query reads `[^]` (so ancestors' values are kept).
    need_parent: bool,
    /// Per query, per node of the current chunk: the node part's value, computed column-wise
    /// (empty when the part reads `[^]` and is evaluated per node).
    pre: Vec<Vec<i64>>,
}

impl Pass {
    /// A pass over a tree whose nodes have `attrs` attributes; `moves` keeps the paths of
    /// answers; at most `limit` hits are kept per query (all are counted).
    pub fn new(queries: Vec<GtqlQuery>, attrs: usize, moves: bool, limit: usize) -> Self {
        let states = queries
            .into_iter()
            .map(|q| QueryState {
                progs: Programs::of(&q),
                totals: vec![Acc::default(); q.subtree_aggs.len()],
                frames: Vec::new(),
                open: Vec::new(),
                free: Vec::new(),
                standalone: 0,
                answer: Answer::default(),
                needs_vals: limit > 0
                    || q.child.as_ref().is_some_and(uses_attrs)
                    || q.subtree.as_ref().is_some_and(uses_attrs)
                    || q.child_aggs
                        .iter()
                        .any(|a| a.arg.as_ref().is_some_and(uses_attrs)),
                sub_pre: vec![Vec::new(); q.subtree_aggs.len()],
                size_only: size_only(&q),
                children_only: children_only(&q),
                light: Vec::new(),
                agg_light: agg_light(&q),
                agg_stack: Vec::new(),
                query: q,
            })
            .collect();
        Self {
            states,
            attrs,
            moves,
            limit,
            levels: Vec::new(),
            vals: Vec::new(),
            path: Vec::new(),
            nodes: 0,
            next_id: 0,
            row: vec![0; attrs + 1],
            need_parent: false,
            pre: Vec::new(),
        }
        .with_parent_flag()
    }

    fn with_parent_flag(mut self) -> Self {
        self.need_parent = self
            .states
            .iter()
            .any(|st| st.query.node.as_ref().is_some_and(reads_parent));
        self.pre = vec![Vec::new(); self.states.len()];
        self
    }

    /// Which attribute columns the queries read (plus `node_id`, always available).
    pub fn wanted(queries: &[GtqlQuery], attrs: usize) -> Vec<bool> {
        let mut want = vec![false; attrs];
        fn mark(e: &GExpr, want: &mut [bool]) {
            match e {
                GExpr::Attr(_, a) => {
                    if let Some(w) = want.get_mut(*a) {
                        *w = true;
                    }
                }
                GExpr::Bin(_, a, b) => {
                    mark(a, want);
                    mark(b, want);
                }
                GExpr::Not(a) => mark(a, want),
                _ => {}
            }
        }
        for q in queries {
            for e in [&q.node, &q.child, &q.subtree].into_iter().flatten() {
                mark(e, &mut want);
            }
            for a in q
                .child_aggs
                .iter()
                .chain(&q.subtree_aggs)
                .chain(&q.standalone)
            {
                if let Some(e) = &a.arg {
                    mark(e, &mut want);
                }
            }
        }
        want
    }

    /// Feeds the next chunk (chunks must come in order).
    pub fn feed(&mut self, chunk: &Chunk) {
        // Node parts that do not read the parent are evaluated a column at a time.
        let n = chunk.levels.len();
        let mut pre = std::mem::take(&mut self.pre);
        for (st, col) in self.states.iter_mut().zip(pre.iter_mut()) {
            col.clear();
            if let Some(e) = &st.query.node
                && let Some(v) = ev_col(e, &chunk.cols, self.next_id as i64, n, self.attrs)
            {
                *col = v;
            }
            // Subtree aggregate arguments read only the node itself: a column at a time too.
            for (k, a) in st.query.subtree_aggs.iter().enumerate() {
                st.sub_pre[k].clear();
                if let Some(e) = &a.arg
                    && let Some(v) = ev_col(e, &chunk.cols, self.next_id as i64, n, self.attrs)
                {
                    st.sub_pre[k] = v;
                }
            }
        }
        self.pre = pre;
        let mut row = std::mem::take(&mut self.row);
        let read: Vec<(usize, &Vec<i64>)> = chunk
            .cols
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_empty())
            .collect();
        for i in 0..chunk.levels.len() {
            for &(k, col) in &read {
                row[k] = col[i];
            }
            row[self.attrs] = self.next_id as i64;
            let mv = if self.moves {
                chunk.moves.get(i).map_or("", String::as_str)
            } else {
                ""
            };
            self.node(chunk.levels[i], &row, mv, i);
        }
        self.row = row;
    }

    fn node(&mut self, level: u32, row: &[i64], mv: &str, index: usize) {
        let width = self.attrs + 1;
        let keep = self.need_parent || self.moves;
        // Leave the subtrees this node is not in.
        while keep && self.levels.last().is_some_and(|&l| l >= level) {
            self.levels.pop();
            self.vals.truncate(self.levels.len() * width);
            if self.moves {
                self.path.pop();
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        self.nodes += 1;
        let parent = (!self.levels.is_empty()).then(|| &self.vals[self.vals.len() - width..]);
        let (limit, moves, nodes) = (self.limit, self.moves, self.nodes);
        for (st, pre) in self.states.iter_mut().zip(&self.pre) {
            // Counting a size-only or children-only query needs no frames: a stack of
            // (level, entry count or children so far) suffices.
            if let (Some((_, kids)), 0) = (st.light_test(), limit) {
                st.close_light(level, nodes - 1);
                if kids
                    && let Some(top) = st.light.last_mut()
                    && top.0 + 1 == level
                {
                    top.1 += 1;
                }
                if node_holds(pre, index, st.progs.node.as_ref(), row, parent) {
                    st.light.push((level, if kids { 0 } else { nodes }));
                }
                continue;
            }
            if st.agg_light && limit == 0 {
                st.close_agg_light(level, nodes - 1);
                for (k, a) in st.query.subtree_aggs.iter().enumerate() {
                    let input = match (st.sub_pre[k].get(index), &a.arg) {
                        (Some(&v), Some(_)) => Some(match a.agg {
                            Agg::Count => (0, v != 0),
                            _ => (v, true),
                        }),
                        _ => agg_input(a, row, &[], None),
                    };
                    if let Some((v, counted)) = input {
                        st.totals[k].add_sum(v, counted);
                    }
                }
                if node_holds(pre, index, st.progs.node.as_ref(), row, parent) {
                    st.agg_stack.push(i64::from(level));
                    st.agg_stack.push(nodes);
                    for t in &st.totals {
                        st.agg_stack.push(t.count);
                        st.agg_stack.push(t.sum);
                    }
                }
                continue;
            }
            while let Some(&top) = st.open.last() {
                if st.frames[top as usize].level < level {
                    break;
                }
                st.open.pop();
                close(st, top as usize, nodes - 1, limit);
                st.free.push(top);
            }
            let q = &st.query;
            if q.standalone.is_some() {
                if st
                    .progs
                    .standalone
                    .as_ref()
                    .is_none_or(|p| p.holds(Inputs::bare(row)))
                {
                    st.standalone += 1;
                }
                continue;
            }
            // This node as a child of its parent, if the parent is an open candidate.
            if let Some(&top) = st.open.last()
                && let p = &mut st.frames[top as usize]
                && p.level + 1 == level
            {
                p.children += 1;
                for (k, a) in q.child_aggs.iter().enumerate() {
                    let prev = p.has_prev.then_some(p.prev_child.as_slice());
                    let prog = st.progs.child_aggs[k].as_ref();
                    if let Some((v, counted)) = child_input(a, prog, &p.vals, row, prev) {
                        p.child[k].add(v, counted);
                    }
                }
                if !q.child_aggs.is_empty() {
                    p.prev_child.clear();
                    p.prev_child.extend_from_slice(row);
                    p.has_prev = true;
                }
            }
            for (k, a) in q.subtree_aggs.iter().enumerate() {
                let input = match (st.sub_pre[k].get(index), &a.arg) {
                    (Some(&v), Some(_)) => Some(match a.agg {
                        Agg::Count => (0, v != 0),
                        _ => (v, true),
                    }),
                    _ => agg_input(a, row, &[], None),
                };
                if let Some((v, counted)) = input {
                    st.totals[k].add_sum(v, counted);
                }
            }
            let cand = node_holds(pre, index, st.progs.node.as_ref(), row, parent);
            if cand && q.child.is_none() && q.subtree.is_none() {
                // Nothing to wait for: the node part alone decides.
                st.answer.count += 1;
                if st.answer.hits.len() < limit {
                    let mut path = Vec::new();
                    if moves {
                        path.extend(self.path.iter().skip(1).cloned());
                        if !self.levels.is_empty() {
                            path.push(mv.to_owned());
                        }
                    }
                    st.answer.hits.push(Hit {
                        node_id: id,
                        path,
                        values: row[..row.len() - 1].to_vec(),
                    });
                }
            } else if cand {
                let slot = match st.free.pop() {
                    Some(i) => i as usize,
                    None => {
                        st.frames.push(Frame::default());
                        st.frames.len() - 1
                    }
                };
                let f = &mut st.frames[slot];
                f.id = id;
                f.level = level;
                // Values only when something reads them later (otherwise left as they were).
                if st.needs_vals {
                    f.vals.clear();
                    f.vals.extend_from_slice(row);
                }
                if !q.child_aggs.is_empty() {
                    f.child.clear();
                    f.child.resize(q.child_aggs.len(), Acc::default());
                }
                f.children = 0;
                if st.size_only.is_none() {
                    f.entry.clear();
                    f.entry.extend_from_slice(&st.totals);
                }
                f.entry_nodes = nodes;
                f.has_prev = false;
                f.path.clear();
                if moves {
                    f.path.extend(self.path.iter().skip(1).cloned());
                    if !self.levels.is_empty() {
                        f.path.push(mv.to_owned());
                    }
                }
                st.open.push(slot as u32);
            }
        }
        if keep {
            self.levels.push(level);
            self.vals.extend_from_slice(row);
            if self.moves {
                self.path.push(mv.to_owned());
            }
        }
    }

    /// Ends the pass and returns one answer per query (hits sorted by node id).
    pub fn finish(self) -> Vec<Answer> {
        let nodes = self.nodes;
        let limit = self.limit;
        self.states
            .into_iter()
            .map(|mut st| {
                while let Some(top) = st.open.pop() {
                    close(&mut st, top as usize, nodes, limit);
                }
                st.close_light(0, nodes);
                st.close_agg_light(0, nodes);
                if st.query.standalone.is_some() {
                    st.answer.count = st.standalone as u64;
                }
                st.answer.hits.sort_by_key(|h| h.node_id);
                st.answer
            })
            .collect()
    }
}

/// Decides a candidate whose subtree ended after `nodes` nodes in all.
fn close(st: &mut QueryState, slot: usize, nodes: i64, limit: usize) {
    let q = &st.query;
    let f = &st.frames[slot];
    let descendants = nodes - f.entry_nodes;
    let holds = if let Some(size) = st.size_only {
        size_holds(size, descendants)
    } else {
        let child_value = |k: usize| {
            let a = &q.child_aggs[k];
            f.child[k].value(a.agg, f.child[k].count_items(a, f.children))
        };
        let sub_value = |k: usize| {
            let then = f.entry[k];
            subtree_value(
                &q.subtree_aggs[k],
                st.totals[k],
                then.count,
                then.sum,
                descendants,
            )
        };
        with_values(q.child_aggs.len(), child_value, |vals| {
            let x = Inputs {
                child_aggs: vals,
                ..Inputs::bare(&f.vals)
            };
            st.progs.child.as_ref().is_none_or(|p| p.holds(x))
        }) && with_values(q.subtree_aggs.len(), sub_value, |vals| {
            let x = Inputs {
                sub_aggs: vals,
                ..Inputs::bare(&f.vals)
            };
            st.progs.subtree.as_ref().is_none_or(|p| p.holds(x))
        })
    };
    if !holds {
        return;
    }
    st.answer.count += 1;
    if st.answer.hits.len() < limit {
        let attrs = f.vals.len().saturating_sub(1);
        st.answer.hits.push(Hit {
            node_id: f.id,
            path: f.path.clone(),
            values: f.vals[..attrs].to_vec(),
        });
    }
}

/// A subtree aggregate from the running totals at the subtree's end (`now`) and at its entry
/// (`then_count`, `then_sum`), over `descendants` nodes.
fn subtree_value(
    a: &AggDef,
    now: Acc,
    then_count: i64,
    then_sum: i64,
    descendants: i64,
) -> Option<i64> {
    let count = if a.arg.is_none() {
        descendants
    } else {
        now.count - then_count
    };
    let acc = Acc {
        count,
        sum: now.sum.wrapping_sub(then_sum),
        min: None,
        max: None,
    };
    acc.value(a.agg, count)
}

/// Hands `then` the values `value(0..n)`, kept on the stack when there are at most eight.
fn with_values<R>(
    n: usize,
    value: impl Fn(usize) -> Option<i64>,
    then: impl FnOnce(&[Option<i64>]) -> R,
) -> R {
    if n <= 8 {
        let mut buf = [None; 8];
        for (k, v) in buf.iter_mut().take(n).enumerate() {
            *v = value(k);
        }
        then(&buf[..n])
    } else {
        let vals: Vec<Option<i64>> = (0..n).map(value).collect();
        then(&vals)
    }
}

impl Acc {
    /// The number of items an average divides by.
    fn count_items(&self, a: &AggDef, children: i64) -> i64 {
        if a.arg.is_none() {
            children
        } else {
            self.count
        }
    }
}

/// Whether `count(*) OP c` (or `c OP count(*)`) holds for a subtree of `d` proper descendants.
#[inline]
fn size_holds((op, c, left): (GOp, i64, bool), d: i64) -> bool {
    let (x, y) = if left { (d, c) } else { (c, d) };
    compare(op, x, y)
}

/// `Some` for a query decided by its number of children alone: no subtree part and a child
/// part `count(*) OP c` or `c OP count(*)`.
fn children_only(q: &GtqlQuery) -> Option<(GOp, i64, bool)> {
    if q.subtree.is_some() || q.child_aggs.len() != 1 || q.child_aggs[0].arg.is_some() {
        return None;
    }
    if q.child_aggs[0].agg != Agg::Count {
        return None;
    }
    agg_vs_constant(q.child.as_ref()?)
}

fn agg_vs_constant(e: &GExpr) -> Option<(GOp, i64, bool)> {
    let GExpr::Bin(op, a, b) = e else {
        return None;
    };
    if matches!(op, GOp::And | GOp::Or | GOp::BitAnd) {
        return None;
    }
    match (&**a, &**b) {
        (GExpr::Agg(0), GExpr::Num(c)) => Some((*op, *c, true)),
        (GExpr::Num(c), GExpr::Agg(0)) => Some((*op, *c, false)),
        _ => None,
    }
}

/// `Some` for a query decided by its subtree size alone: no child part and a subtree part
/// `count(*) OP c` or `c OP count(*)`.
/// Whether a counting pass may decide `q` on the aggregate-only stack (see `agg_light`).
fn agg_light(q: &GtqlQuery) -> bool {
    q.child.is_none()
        && q.child_aggs.is_empty()
        && q.standalone.is_none()
        && size_only(q).is_none()
        && q.subtree_aggs.len() <= 8
        && q.subtree.as_ref().is_some_and(|e| !uses_attrs(e))
}

fn size_only(q: &GtqlQuery) -> Option<(GOp, i64, bool)> {
    if q.child.is_some() || q.subtree_aggs.len() != 1 || q.subtree_aggs[0].arg.is_some() {
        return None;
    }
    if q.subtree_aggs[0].agg != Agg::Count {
        return None;
    }
    agg_vs_constant(q.subtree.as_ref()?)
}

/// Whether an expression reads any attribute (outside aggregates, aggregates being values).
fn uses_attrs(e: &GExpr) -> bool {
    match e {
        GExpr::Attr(..) => true,
        GExpr::Bin(_, a, b) => uses_attrs(a) || uses_attrs(b),
        GExpr::Not(a) => uses_attrs(a),
        _ => false,
    }
}

fn reads_parent(e: &GExpr) -> bool {
    match e {
        GExpr::Attr(s, _) => *s == Scope::Parent,
        GExpr::Bin(_, a, b) => reads_parent(a) || reads_parent(b),
        GExpr::Not(a) => reads_parent(a),
        _ => false,
    }
}
