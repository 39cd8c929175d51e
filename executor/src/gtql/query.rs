//! One query's share of a pass: its candidates, aggregates and decisions, chunk by chunk.

use cqldb_planner::gtql::{Agg, GExpr, GtqlQuery, Scope};

use super::aggregate::{ChildAcc, SubAcc, subtree_totals};
use super::column::{Col, Domain, Rows, eval};
use super::first_hits::FirstHits;
use super::sibling::Siblings;
use super::view::View;

/// What a query needs from the pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `node: count(...)`: a number.
    Standalone,
    /// Only a node part: decided at the node.
    NodeOnly,
    /// Child or subtree parts: decided when the candidate's subtree ends.
    Tree,
}

/// Per-query state of a pass.
pub(super) struct QueryState {
    query: GtqlQuery,
    kind: Kind,
    pub count: u64,
    pub hits: FirstHits,
    /// Per window row: a candidate (its node part holds).
    cand: Vec<bool>,
    carry_cand: Vec<bool>,
    child: Vec<ChildAcc>,
    sub: Vec<SubAcc>,
    /// The sibling part, if any.
    sib: Option<Siblings>,
    /// Other queries with the same node part and aggregates (see [`QueryState::share`]).
    pub extra: Vec<Final>,
}

/// A query answered from another's candidates and aggregates: only its child and subtree
/// parts are its own.
pub(super) struct Final {
    child: Option<GExpr>,
    subtree: Option<GExpr>,
    pub count: u64,
    pub hits: FirstHits,
}

impl QueryState {
    /// The state of `query` over nodes with `attrs` attributes, keeping its first `limit` hits.
    pub fn new(query: GtqlQuery, attrs: usize, limit: usize) -> Self {
        let kind = if query.standalone.is_some() {
            Kind::Standalone
        } else if query.child.is_none() && query.subtree.is_none() && query.sibling.is_none() {
            Kind::NodeOnly
        } else {
            Kind::Tree
        };
        let child = query.child_aggs.iter().map(ChildAcc::new).collect();
        let sub = query
            .subtree_aggs
            .iter()
            .map(|def| SubAcc {
                def: def.clone(),
                total: Vec::new(),
                carry: Vec::new(),
            })
            .collect();
        let sib = query
            .sibling
            .clone()
            .map(|e| Siblings::new(e, query.sibling_aggs.clone(), attrs));
        Self {
            sib,
            extra: Vec::new(),
            query,
            kind,
            count: 0,
            hits: FirstHits::new(limit),
            cand: Vec::new(),
            carry_cand: Vec::new(),
            child,
            sub,
        }
    }

    /// Takes `q` on as an extra query when it has this query's node part and aggregates and
    /// both are decided when a candidate's subtree ends (no sibling part): the candidates and
    /// aggregates are then worked out once for both (`false`: `q` needs a state of its own).
    pub fn share(&mut self, q: &GtqlQuery, limit: usize) -> bool {
        let q_kind = q.standalone.is_none() && (q.child.is_some() || q.subtree.is_some());
        let same = self.kind == Kind::Tree
            && self.sib.is_none()
            && q_kind
            && q.sibling.is_none()
            && q.node == self.query.node
            && q.child_aggs == self.query.child_aggs
            && q.subtree_aggs == self.query.subtree_aggs;
        if same {
            self.extra.push(Final {
                child: q.child.clone(),
                subtree: q.subtree.clone(),
                count: 0,
                hits: FirstHits::new(limit),
            });
        }
        same
    }

    pub fn feed(&mut self, v: &View) {
        match self.kind {
            Kind::Standalone => {
                let n = v.w.n;
                self.count += match self.query.standalone.as_ref().and_then(|a| a.arg.as_ref()) {
                    None => n as u64,
                    Some(e) => {
                        let col = eval(e, &v.nodes());
                        (0..n).filter(|&i| col.truth(i)).count() as u64
                    }
                };
            }
            Kind::NodeOnly => {
                let c = v.w.carried;
                let col = self.query.node.as_ref().map(|e| eval(e, &v.nodes()));
                let n = v.w.n;
                self.count += match &col {
                    None => n,
                    Some(col) => (0..n).map(|j| usize::from(col.truth(j))).sum(),
                } as u64;
                // Hits come in pre-order here: stop at the first one not wanted.
                for j in 0..n {
                    let row = (c + j) as u32;
                    if !self.hits.wants(v.id(row)) {
                        break;
                    }
                    if col.as_ref().is_none_or(|col| col.truth(j)) {
                        self.hits.push(v.hit(row));
                    }
                }
            }
            Kind::Tree => self.feed_tree(v),
        }
    }

    fn feed_tree(&mut self, v: &View) {
        let w = v.w;
        let (c, n) = (w.carried, w.n);
        // Candidates.
        self.cand.clear();
        self.cand.extend_from_slice(&self.carry_cand);
        match &self.query.node {
            None => self.cand.resize(c + n, true),
            Some(e) => eval(e, &v.nodes()).truths_into(&mut self.cand),
        }
        self.cand.push(false);
        if let Some(sib) = &mut self.sib {
            sib.record(v);
        }
        let all = self.query.node.is_none();
        // Few candidates: work from a list of them rather than over every node.
        let count = self.cand.iter().map(|&x| usize::from(x)).sum::<usize>();
        let sparse = !all && count * 8 < n + c;
        let listed: Vec<u32> = if sparse {
            select(c + n, |r| self.cand[r])
        } else {
            Vec::new()
        };

        // Child aggregates: each child of a candidate adds into its parent's row.
        if !self.child.is_empty() {
            // The children of candidates (all nodes when every node is one).
            let par = &w.parent[c..c + n];
            let mut rows = match all {
                true => Vec::new(),
                false => select(n, |j| self.cand[par[j] as usize]),
            };
            let (mut parents, mut prevs) = (Vec::new(), Vec::new());
            let d = if all {
                // Every node's parent is a candidate (roots add into the sentinel row).
                let parents = Rows::Gather(&w.parent[c..c + n]);
                let prev = Rows::Gather(&w.prev);
                v.domain(n, parents, Rows::Chunk, prev, Rows::Missing, &[])
            } else {
                parents.extend(rows.iter().map(|&j| par[j as usize]));
                prevs.extend(rows.iter().map(|&j| w.prev[j as usize]));
                for j in &mut rows {
                    *j += c as u32;
                }
                let (bare, prev) = (Rows::Gather(&parents), Rows::Gather(&prevs));
                v.domain(
                    rows.len(),
                    bare,
                    Rows::Gather(&rows),
                    prev,
                    Rows::Missing,
                    &[],
                )
            };
            let parent_of = |i: usize| match all {
                true => w.parent[c + i] as usize,
                false => parents[i] as usize,
            };
            for acc in &mut self.child {
                let start = acc.start();
                acc.value.clear();
                acc.value.extend_from_slice(&acc.carry_value);
                acc.value.resize(c + n + 1, start);
                acc.items.clear();
                acc.items.extend_from_slice(&acc.carry_items);
                acc.items.resize(c + n + 1, 0);
                let col = acc.def.arg.as_ref().map(|e| eval(e, &d));
                acc.add_all(d.len, parent_of, col.as_ref());
            }
        }

        // Subtree aggregates, needed only while some candidate is open (non-candidates'
        // totals are never read).
        for acc in &mut self.sub {
            let Some(e) = &acc.def.arg else {
                continue;
            };
            if count == 0 {
                acc.total.clear();
                acc.total.resize(c + n + 1, 0);
                continue;
            }
            let mut col = eval(e, &v.nodes());
            if acc.def.agg == Agg::Count {
                for x in &mut col.v {
                    *x = i64::from(*x != 0);
                }
            }
            // Subtree arguments read only the descendant's own values, which are always
            // present.
            subtree_totals(w, Some(&col.v), &acc.carry, &mut acc.total);
        }

        // Decisions: candidates whose subtrees ended in this chunk.
        let rows: Vec<u32> = if sparse {
            listed
                .iter()
                .copied()
                .filter(|&r| !w.is_open[r as usize])
                .collect()
        } else {
            select(c + n, |r| self.cand[r] & !w.is_open[r])
        };
        if !rows.is_empty() {
            self.decide(v, rows);
        }
        if let Some(sib) = &mut self.sib {
            sib.close(v);
            let (count, hits) = sib.decide();
            self.count += count;
            for h in hits {
                if self.hits.wants(h.node_id) {
                    self.hits.push(h);
                }
            }
        }

        // What the open rows carry to the next chunk.
        let open = &w.open;
        self.carry_cand.clear();
        self.carry_cand
            .extend(open.iter().map(|&r| self.cand[r as usize]));
        for acc in &mut self.child {
            acc.carry_value.clear();
            acc.carry_value
                .extend(open.iter().map(|&r| acc.value[r as usize]));
            acc.carry_items.clear();
            acc.carry_items
                .extend(open.iter().map(|&r| acc.items[r as usize]));
        }
        for acc in &mut self.sub {
            if acc.def.arg.is_some() {
                acc.carry.clear();
                acc.carry
                    .extend(open.iter().map(|&r| acc.total[r as usize]));
            }
        }
    }

    /// Decides the candidates at `rows`, whose subtrees ended in this chunk, for this query
    /// and the extra ones.
    fn decide(&mut self, v: &View, rows: Vec<u32>) {
        let kept = match self.extra.is_empty() {
            true => self.filter(v, rows),
            false => self.filter_shared(v, rows),
        };
        // With a sibling part, the node waits for its parent's subtree to end.
        if let Some(sib) = &mut self.sib {
            for &r in &kept {
                let hit = self.hits.wants(v.id(r)).then(|| v.hit(r));
                sib.mark(v, r, hit);
            }
            return;
        }
        count_hits(v, &kept, &mut self.count, &mut self.hits);
    }

    /// The candidates at `rows` that pass this query's child part, then its subtree part
    /// (aggregates are read only for the candidates still in).
    fn filter(&self, v: &View, mut rows: Vec<u32>) -> Vec<u32> {
        if let Some(e) = &self.query.child {
            let aggs: Vec<Col> = self.child.iter().map(|a| a.values(&rows)).collect();
            let par = parents_if(v, &rows, reads_parent(e));
            let keep = eval(e, &candidates(v, &rows, &par, &aggs));
            retain(&mut rows, &keep);
        }
        if let Some(e) = &self.query.subtree {
            let aggs = self.subtree_values(v, &rows);
            let par = parents_if(v, &rows, reads_parent(e));
            let keep = eval(e, &candidates(v, &rows, &par, &aggs));
            retain(&mut rows, &keep);
        }
        rows
    }

    /// [`Self::filter`] for this query and the extra ones, the aggregates read once for all;
    /// the extra queries' answers are counted here, this query's returned.
    fn filter_shared(&mut self, v: &View, rows: Vec<u32>) -> Vec<u32> {
        let finals = std::iter::once((&self.query.child, &self.query.subtree))
            .chain(self.extra.iter().map(|f| (&f.child, &f.subtree)));
        let (mut any_child, mut any_sub, mut any_parent) = (false, false, false);
        for (child, sub) in finals {
            any_child |= child.is_some();
            any_sub |= sub.is_some();
            any_parent |= [child, sub].into_iter().flatten().any(reads_parent);
        }
        let child_vals: Vec<Col> = match any_child {
            true => self.child.iter().map(|a| a.values(&rows)).collect(),
            false => Vec::new(),
        };
        let sub_vals = match any_sub {
            true => self.subtree_values(v, &rows),
            false => Vec::new(),
        };
        let parents = parents_if(v, &rows, any_parent);
        let on_child = candidates(v, &rows, &parents, &child_vals);
        let on_sub = candidates(v, &rows, &parents, &sub_vals);
        let passing = |child: &Option<GExpr>, sub: &Option<GExpr>| -> Vec<u32> {
            let mut kept = rows.clone();
            for (e, d) in [(child, &on_child), (sub, &on_sub)] {
                if let Some(e) = e {
                    let keep = eval(e, d);
                    retain_where(&mut kept, &rows, &keep);
                }
            }
            kept
        };
        let kept = passing(&self.query.child, &self.query.subtree);
        let extra: Vec<Vec<u32>> = self
            .extra
            .iter()
            .map(|f| passing(&f.child, &f.subtree))
            .collect();
        for (f, kept) in self.extra.iter_mut().zip(extra) {
            count_hits(v, &kept, &mut f.count, &mut f.hits);
        }
        kept
    }

    /// The subtree aggregates' values at `rows`.
    fn subtree_values(&self, v: &View, rows: &[u32]) -> Vec<Col> {
        // (Counted only when some aggregate reads them.)
        let descendants: Vec<i64> = rows
            .iter()
            .map(|&r| v.descendants.get(r as usize).copied().unwrap_or(0))
            .collect();
        self.sub
            .iter()
            .map(|acc| {
                if acc.def.arg.is_none() {
                    return Col {
                        v: descendants.clone(),
                        valid: None,
                    };
                }
                let sums = rows.iter().map(|&r| acc.total[r as usize]);
                match acc.def.agg {
                    Agg::Avg => {
                        let v = sums
                            .zip(&descendants)
                            .map(|(s, &k)| if k > 0 { s / k } else { 0 })
                            .collect();
                        let valid = Some(descendants.iter().map(|&k| k > 0).collect());
                        Col { v, valid }
                    }
                    _ => Col {
                        v: sums.collect(),
                        valid: None,
                    },
                }
            })
            .collect()
    }
}

/// The parents of `rows`, only when a part reads `[^]` (`wanted`); empty otherwise.
fn parents_if(v: &View, rows: &[u32], wanted: bool) -> Vec<u32> {
    match wanted {
        true => rows.iter().map(|&r| v.w.parent[r as usize]).collect(),
        false => Vec::new(),
    }
}

/// Counts the answers `rows` and keeps the first ones.
fn count_hits(v: &View, rows: &[u32], count: &mut u64, hits: &mut FirstHits) {
    *count += rows.len() as u64;
    for &r in rows {
        if hits.wants(v.id(r)) {
            hits.push(v.hit(r));
        }
    }
}

/// Keeps the entries of `rows` where `keep` holds.
fn retain(rows: &mut Vec<u32>, keep: &Col) {
    let mut k = 0;
    for i in 0..rows.len() {
        rows[k] = rows[i];
        k += usize::from(keep.truth(i));
    }
    rows.truncate(k);
}

/// Keeps the entries of `kept` (a subsequence of `all`) whose place in `all` holds in `keep`.
fn retain_where(kept: &mut Vec<u32>, all: &[u32], keep: &Col) {
    let mut i = 0;
    kept.retain(|&r| {
        // Both are in the same order: advance to `r` in `all`.
        while all[i] != r {
            i += 1;
        }
        keep.truth(i)
    });
}

/// The candidates at `rows` (parents at `parents`) as a set to decide a part over.
fn candidates<'a>(
    v: &'a View<'a>,
    rows: &'a [u32],
    parents: &'a [u32],
    aggs: &'a [Col],
) -> Domain<'a> {
    let parent = match parents.len() == rows.len() {
        true => Rows::Gather(parents),
        false => Rows::Missing,
    };
    let bare = Rows::Gather(rows);
    v.domain(rows.len(), bare, Rows::Missing, Rows::Missing, parent, aggs)
}

/// The numbers `0..len` for which `pred` holds, without a branch per number.
fn select(len: usize, pred: impl Fn(usize) -> bool) -> Vec<u32> {
    let mut out = vec![0u32; len + 1];
    let mut k = 0;
    for r in 0..len {
        out[k] = r as u32;
        k += usize::from(pred(r));
    }
    out.truncate(k);
    out
}

/// Whether `e` reads `[^]` or `[^k]` (outside aggregates, where they cannot appear).
fn reads_parent(e: &GExpr) -> bool {
    e.reads(|s| matches!(s, Scope::Ancestor(_)))
}
