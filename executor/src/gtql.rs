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

use cqldb_planner::gtql::{Agg, AggDef, GExpr, GOp, GtqlQuery, Scope};
use cqldb_storage::gtl::Chunk;

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

struct Frame {
    id: u64,
    level: u32,
    vals: Vec<i64>,
    mv: String,
    /// Per query: does the node part hold (so this node is a candidate)?
    cand: Vec<bool>,
    /// Per query, per child aggregate.
    child: Vec<Vec<Acc>>,
    /// Per query: children seen (for avg).
    children: Vec<i64>,
    /// Per query, per subtree aggregate: running totals when the node was entered.
    entry: Vec<Vec<Acc>>,
    entry_nodes: i64,
    prev_child: Option<Vec<i64>>,
}

/// A single-pass evaluator of several queries.
pub struct Pass {
    queries: Vec<GtqlQuery>,
    attrs: usize,
    moves: bool,
    limit: usize,
    stack: Vec<Frame>,
    totals: Vec<Vec<Acc>>,
    nodes: i64,
    standalone: Vec<i64>,
    answers: Vec<Answer>,
    next_id: u64,
}

impl Pass {
    /// A pass over a tree whose nodes have `attrs` attributes; `moves` keeps the paths of
    /// answers; at most `limit` hits are kept per query (all are counted).
    pub fn new(queries: Vec<GtqlQuery>, attrs: usize, moves: bool, limit: usize) -> Self {
        let n = queries.len();
        let totals = queries
            .iter()
            .map(|q| vec![Acc::default(); q.subtree_aggs.len()])
            .collect();
        Self {
            queries,
            attrs,
            moves,
            limit,
            stack: Vec::new(),
            totals,
            nodes: 0,
            standalone: vec![0; n],
            answers: vec![Answer::default(); n],
            next_id: 0,
        }
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
        let mut vals = vec![0i64; self.attrs + 1];
        for i in 0..chunk.levels.len() {
            for (k, col) in chunk.cols.iter().enumerate() {
                if let Some(v) = col.get(i) {
                    vals[k] = *v;
                }
            }
            vals[self.attrs] = self.next_id as i64;
            let mv = if self.moves {
                chunk.moves.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            };
            self.node(chunk.levels[i], &vals, mv);
        }
    }

    fn node(&mut self, level: u32, vals: &[i64], mv: String) {
        while self.stack.last().is_some_and(|f| f.level >= level) {
            self.close();
        }
        let id = self.next_id;
        self.next_id += 1;
        self.nodes += 1;
        let nq = self.queries.len();
        let mut cand = vec![false; nq];
        for (q, query) in self.queries.iter().enumerate() {
            if let Some(a) = &query.standalone {
                if a.arg
                    .as_ref()
                    .is_none_or(|e| truth(ev(e, vals, &[], None, None, &[], &[])))
                {
                    self.standalone[q] += 1;
                }
                continue;
            }
            let parent = self.stack.last().map(|f| f.vals.as_slice());
            cand[q] = query
                .node
                .as_ref()
                .is_none_or(|e| truth(ev(e, vals, &[], None, parent, &[], &[])));
            // This node as a child of its parent.
            if let Some(p) = self.stack.last_mut() {
                if p.cand[q] {
                    p.children[q] += 1;
                    for (k, a) in query.child_aggs.iter().enumerate() {
                        let prev = p.prev_child.as_deref();
                        if let Some((v, counted)) = agg_input(a, &p.vals, vals, prev) {
                            p.child[q][k].add(v, counted);
                        }
                    }
                }
            }
            for (k, a) in query.subtree_aggs.iter().enumerate() {
                if let Some((v, counted)) = agg_input(a, vals, &[], None) {
                    self.totals[q][k].add(v, counted);
                }
            }
        }
        if let Some(p) = self.stack.last_mut() {
            if self.queries.iter().any(|q| !q.child_aggs.is_empty()) {
                p.prev_child = Some(vals.to_vec());
            }
        }
        let frame = Frame {
            id,
            level,
            vals: vals.to_vec(),
            mv,
            child: self
                .queries
                .iter()
                .map(|q| vec![Acc::default(); q.child_aggs.len()])
                .collect(),
            children: vec![0; nq],
            entry: self.totals.clone(),
            entry_nodes: self.nodes,
            cand,
            prev_child: None,
        };
        self.stack.push(frame);
    }

    fn close(&mut self) {
        let Some(f) = self.stack.pop() else { return };
        for (q, query) in self.queries.iter().enumerate() {
            if !f.cand[q] || query.standalone.is_some() {
                continue;
            }
            let child_vals: Vec<Option<i64>> = query
                .child_aggs
                .iter()
                .enumerate()
                .map(|(k, a)| {
                    f.child[q][k].value(a.agg, f.child[q][k].count_items(a, f.children[q]))
                })
                .collect();
            let ok_child = query
                .child
                .as_ref()
                .is_none_or(|e| truth(ev(e, &f.vals, &[], None, None, &child_vals, &[])));
            if !ok_child {
                continue;
            }
            let descendants = self.nodes - f.entry_nodes;
            let sub_vals: Vec<Option<i64>> = query
                .subtree_aggs
                .iter()
                .enumerate()
                .map(|(k, a)| {
                    let now = self.totals[q][k];
                    let then = f.entry[q][k];
                    let acc = Acc {
                        count: now.count - then.count,
                        sum: now.sum.wrapping_sub(then.sum),
                        min: None,
                        max: None,
                    };
                    let items = if a.arg.is_none() {
                        descendants
                    } else {
                        acc.count
                    };
                    let acc = if a.arg.is_none() {
                        Acc {
                            count: descendants,
                            ..acc
                        }
                    } else {
                        acc
                    };
                    acc.value(a.agg, items)
                })
                .collect();
            let ok_sub = query
                .subtree
                .as_ref()
                .is_none_or(|e| truth(ev(e, &f.vals, &[], None, None, &[], &sub_vals)));
            if ok_sub {
                let ans = &mut self.answers[q];
                ans.count += 1;
                if ans.hits.len() < self.limit {
                    let mut path: Vec<String> = Vec::new();
                    if self.moves {
                        path = self.stack.iter().skip(1).map(|a| a.mv.clone()).collect();
                        if !self.stack.is_empty() {
                            path.push(f.mv.clone());
                        }
                    }
                    ans.hits.push(Hit {
                        node_id: f.id,
                        path,
                        values: f.vals[..self.attrs].to_vec(),
                    });
                }
            }
        }
    }

    /// Ends the pass and returns one answer per query (hits sorted by node id).
    pub fn finish(mut self) -> Vec<Answer> {
        while !self.stack.is_empty() {
            self.close();
        }
        for (q, query) in self.queries.iter().enumerate() {
            if query.standalone.is_some() {
                self.answers[q].count = self.standalone[q] as u64;
            }
            self.answers[q].hits.sort_by_key(|h| h.node_id);
        }
        self.answers
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

/// The value an aggregate adds for one item and whether the item counts (for `count(expr)`:
/// whether expr holds; the summed value is the expression's value for the others).
fn agg_input(a: &AggDef, bare: &[i64], child: &[i64], prev: Option<&[i64]>) -> Option<(i64, bool)> {
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

fn truth(v: Option<i64>) -> bool {
    v.is_some_and(|v| v != 0)
}

/// Evaluates an expression. `bare` = the node's values (inside a subtree aggregate: the
/// descendant's), `child` = `[]`, `prev` = `[<]`, `parent` = `[^]`; `child_aggs`/`sub_aggs` =
/// aggregate values. A missing value (no previous child, no parent) makes a comparison false.
fn ev(
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
                Some(i64::from(match op {
                    GOp::Lt => x < y,
                    GOp::Gt => x > y,
                    GOp::Le => x <= y,
                    GOp::Ge => x >= y,
                    GOp::Eq => x == y,
                    _ => x != y,
                }))
            }
        },
    }
}

/// The same answers computed the slow, obvious way on a tree held in memory (levels and
/// attribute rows in pre-order): every aggregate of every node recounted from scratch.
pub fn naive_answers(queries: &[GtqlQuery], levels: &[u32], rows: &[Vec<i64>]) -> Vec<Answer> {
    let n = levels.len();
    let mut parent = vec![None; n];
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..n {
        while stack.last().is_some_and(|&s| levels[s] >= levels[i]) {
            stack.pop();
        }
        parent[i] = stack.last().copied();
        stack.push(i);
    }
    let vals: Vec<Vec<i64>> = (0..n)
        .map(|i| {
            let mut v = rows[i].clone();
            v.push(i as i64);
            v
        })
        .collect();
    let parent_ref = &parent;
    let children =
        |i: usize| -> Vec<usize> { (0..n).filter(|&c| parent_ref[c] == Some(i)).collect() };
    let descendants = |i: usize| {
        let mut end = i + 1;
        while end < n && levels[end] > levels[i] {
            end += 1;
        }
        i + 1..end
    };
    let agg =
        |a: &AggDef, items: Vec<(Vec<i64>, Option<Vec<i64>>)>, bare_parent: Option<&[i64]>| {
            let mut count = 0i64;
            let mut values = Vec::new();
            for (item, prev) in &items {
                let v = match &a.arg {
                    None => Some(1),
                    Some(e) => match bare_parent {
                        Some(p) => ev(e, p, item, prev.as_deref(), None, &[], &[]),
                        None => ev(e, item, &[], None, None, &[], &[]),
                    },
                };
                match a.agg {
                    Agg::Count => count += i64::from(a.arg.is_none() || truth(v)),
                    _ => {
                        if let Some(v) = v {
                            values.push(v);
                        }
                    }
                }
            }
            match a.agg {
                Agg::Count => Some(count),
                Agg::Sum => Some(values.iter().fold(0i64, |s, v| s.wrapping_add(*v))),
                Agg::Min => values.iter().copied().min(),
                Agg::Max => values.iter().copied().max(),
                Agg::Avg => {
                    let k = if a.arg.is_none() {
                        items.len() as i64
                    } else {
                        values.len() as i64
                    };
                    (k > 0).then(|| values.iter().fold(0i64, |s, v| s.wrapping_add(*v)) / k)
                }
            }
        };
    queries
        .iter()
        .map(|q| {
            let mut ans = Answer::default();
            if let Some(a) = &q.standalone {
                ans.count = (0..n)
                    .filter(|&i| {
                        a.arg
                            .as_ref()
                            .is_none_or(|e| truth(ev(e, &vals[i], &[], None, None, &[], &[])))
                    })
                    .count() as u64;
                return ans;
            }
            for i in 0..n {
                let par = parent[i].map(|p| vals[p].as_slice());
                if !q
                    .node
                    .as_ref()
                    .is_none_or(|e| truth(ev(e, &vals[i], &[], None, par, &[], &[])))
                {
                    continue;
                }
                let kids: Vec<usize> = children(i);
                let items: Vec<(Vec<i64>, Option<Vec<i64>>)> = kids
                    .iter()
                    .enumerate()
                    .map(|(j, &c)| {
                        (
                            vals[c].clone(),
                            j.checked_sub(1).map(|p| vals[kids[p]].clone()),
                        )
                    })
                    .collect();
                let cvals: Vec<Option<i64>> = q
                    .child_aggs
                    .iter()
                    .map(|a| agg(a, items.clone(), Some(&vals[i])))
                    .collect();
                if !q
                    .child
                    .as_ref()
                    .is_none_or(|e| truth(ev(e, &vals[i], &[], None, None, &cvals, &[])))
                {
                    continue;
                }
                let sub: Vec<(Vec<i64>, Option<Vec<i64>>)> =
                    descendants(i).map(|d| (vals[d].clone(), None)).collect();
                let svals: Vec<Option<i64>> = q
                    .subtree_aggs
                    .iter()
                    .map(|a| agg(a, sub.clone(), None))
                    .collect();
                if !q
                    .subtree
                    .as_ref()
                    .is_none_or(|e| truth(ev(e, &vals[i], &[], None, None, &[], &svals)))
                {
                    continue;
                }
                ans.count += 1;
                ans.hits.push(Hit {
                    node_id: i as u64,
                    path: Vec::new(),
                    values: rows[i].clone(),
                });
            }
            ans
        })
        .collect()
}
