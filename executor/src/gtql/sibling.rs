//! Sibling parts (beyond the paper), decided once a node's siblings are all known: when its
//! parent's subtree ends.
//!
//! Every node is recorded under its parent with its values; a candidate that passes its own
//! parts is marked, with its hit if it may be listed. When the parent's subtree ends, each
//! marked child is paired with every other child, the sibling aggregates are evaluated over all
//! pairs of the slice a column at a time, then the sibling part over the marked children.
//! Memory is the children of the open nodes: depth × branching records, not the tree's size.
//! Time per parent is its marked children × its children.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use cqldb_planner::gtql::{Agg, AggDef, GExpr, Scope};

use super::Hit;
use super::aggregate::ChildAcc;
use super::column::{Col, Domain, Rows, eval};
use super::view::View;

/// Hashes node ids (sequential integers) with one multiplication: the default hasher was a
/// tenth of a sibling query's time.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
}

/// The children recorded under one parent.
#[derive(Default)]
struct Family {
    ids: Vec<u64>,
    /// Marked: a candidate that passed its own parts.
    marked: Vec<bool>,
    /// Per child, the values of the attributes the part reads (`Siblings::read`).
    vals: Vec<i64>,
    hits: Vec<Option<Hit>>,
    /// The values of the parent and its ancestors, nearest first (filled when it closes).
    chain: Vec<i64>,
}

/// One query's sibling part and the families it waits on.
pub(super) struct Siblings {
    part: GExpr,
    aggs: Vec<AggDef>,
    /// The attributes the part and its aggregates read (the attribute count = `node_id`),
    /// whose values each record keeps.
    read: Vec<usize>,
    /// Attributes, then `node_id`: the columns of the decision table.
    columns: usize,
    /// How many of the parent's ancestors the part reads (1 for `[^]`, k for `[^k]`).
    reach: u32,
    /// By the parent's node id.
    open: HashMap<u64, Family, BuildHasherDefault<IdHasher>>,
    /// Emptied families, reused.
    spare: Vec<Family>,
    /// Per window row: whether it has a family (so leaves skip the lookup when they close).
    parents: Vec<bool>,
    /// Families whose parents closed in this slice, and the one-member families of roots.
    done: Vec<Family>,
}

impl Siblings {
    /// The sibling part `part` with its aggregates, over nodes with `attrs` attributes.
    pub fn new(part: GExpr, aggs: Vec<AggDef>, attrs: usize) -> Self {
        Self {
            reach: reach(&part),
            read: read_attrs(&part, &aggs, attrs),
            columns: attrs + 1,
            part,
            aggs,
            open: HashMap::default(),
            spare: Vec::new(),
            parents: Vec::new(),
            done: Vec::new(),
        }
    }

    /// Records the slice's nodes under their parents (roots have no siblings).
    pub fn record(&mut self, v: &View) {
        let (c, sentinel) = (v.w.carried, v.w.sentinel());
        // Carried rows may have families from earlier slices.
        self.parents.clear();
        self.parents.resize(c + v.w.n + 1, false);
        self.parents[..c].fill(true);
        for j in 0..v.w.n {
            let row = (c + j) as u32;
            let p = v.w.parent[c + j];
            if p == sentinel {
                continue;
            }
            self.parents[p as usize] = true;
            let spare = &mut self.spare;
            let f = self
                .open
                .entry(v.id(p))
                .or_insert_with(|| spare.pop().unwrap_or_default());
            f.ids.push(v.id(row));
            f.marked.push(false);
            f.vals.extend(values(v, &self.read, row));
            f.hits.push(None);
        }
    }

    /// Marks the node at `row`, which passed its own parts (`hit`: its listing, if wanted).
    pub fn mark(&mut self, v: &View, row: u32, hit: Option<Hit>) {
        let p = v.w.parent[row as usize];
        let id = v.id(row);
        if p == v.w.sentinel() {
            // A root: no siblings, decided on its own.
            let vals = values(v, &self.read, row).collect();
            self.done.push(Family {
                ids: vec![id],
                marked: vec![true],
                vals,
                hits: vec![hit],
                chain: Vec::new(),
            });
            return;
        }
        if let Some(f) = self.open.get_mut(&v.id(p))
            && let Ok(i) = f.ids.binary_search(&id)
        {
            f.marked[i] = true;
            f.hits[i] = hit;
        }
    }

    /// Collects the families whose parents' subtrees ended in this slice.
    pub fn close(&mut self, v: &View) {
        let w = v.w;
        let sentinel = w.sentinel();
        for r in 0..(w.carried + w.n) as u32 {
            if w.is_open[r as usize] || !self.parents[r as usize] {
                continue;
            }
            let Some(mut f) = self.open.remove(&v.id(r)) else {
                continue;
            };
            if !f.marked.contains(&true) {
                self.recycle(f);
                continue;
            }
            let mut at = r;
            for _ in 0..self.reach {
                if at == sentinel {
                    break;
                }
                f.chain.extend(values(v, &self.read, at));
                at = w.parent[at as usize];
            }
            self.done.push(f);
        }
    }

    /// Decides the marked children of the collected families: `(count, hits)` of those whose
    /// sibling part holds.
    pub fn decide(&mut self) -> (u64, Vec<Hit>) {
        if self.done.is_empty() {
            return (0, Vec::new());
        }
        let width = self.read.len().max(1);
        // One table for all families: each family's children, then its parent's chain; a
        // column per attribute read (the others stay empty).
        let (mut table, mut up) = (vec![Vec::new(); self.columns], Vec::new());
        // The children's rows, each family's range of them, and per marked child its family
        // and its index among the children.
        let (mut kids, mut families) = (Vec::new(), Vec::new());
        let (mut cands, mut cand_kid, mut cand_family) = (vec![], vec![], vec![]);
        for f in &self.done {
            let first = up.len() as u32;
            let n = f.ids.len() as u32;
            let chain = (f.chain.len() / width) as u32;
            if self.read.is_empty() {
                // Nothing read: rows without values (reading gives 0).
            } else {
                for (k, &a) in self.read.iter().enumerate() {
                    let col = &mut table[a];
                    col.extend(f.vals.iter().skip(k).step_by(width));
                    col.extend(f.chain.iter().skip(k).step_by(width));
                }
            }
            // Children point at the first chain row, each chain row at the next; the last
            // points past the table (patched to the sentinel below).
            let top = first + n;
            up.extend((0..n).map(|_| if chain > 0 { top } else { u32::MAX }));
            up.extend((1..=chain).map(|i| if i < chain { top + i } else { u32::MAX }));
            let start = kids.len() as u32;
            for (i, &marked) in f.marked.iter().enumerate() {
                if marked {
                    cands.push(first + i as u32);
                    cand_kid.push(start + i as u32);
                    cand_family.push(families.len() as u32);
                }
            }
            kids.extend(first..top);
            families.push(start..start + n);
        }
        let sentinel = up.len() as u32;
        for u in &mut up {
            if *u == u32::MAX {
                *u = sentinel;
            }
        }
        up.push(sentinel);
        for &a in &self.read {
            table[a].push(0);
        }
        let t = Table {
            cols: &table,
            up: &up,
            sentinel,
        };
        let values: Vec<Col> = self
            .aggs
            .iter()
            .map(|def| match &def.arg {
                // Not reading the node itself: each sibling's value once, the family's total
                // less the node's own.
                Some(e) if !e.reads(|s| s == Scope::Bare) => {
                    let all = t.domain(
                        kids.len(),
                        Rows::Missing,
                        Rows::Gather(&kids),
                        Rows::Missing,
                        &[],
                    );
                    let col = eval(e, &all);
                    excluding_own(def, &col, &families, &cand_kid, &cand_family)
                }
                None => Col {
                    v: cand_family
                        .iter()
                        .map(|&f| families[f as usize].len() as i64 - 1)
                        .collect(),
                    valid: None,
                },
                // Reading it: every (node, sibling) pair.
                Some(e) => {
                    let (mut bare, mut child, mut owner) = (vec![], vec![], vec![]);
                    for (me, (&c, &f)) in cands.iter().zip(&cand_family).enumerate() {
                        for s in families[f as usize].clone() {
                            let s = kids[s as usize];
                            if s != c {
                                bare.push(c);
                                child.push(s);
                                owner.push(me);
                            }
                        }
                    }
                    let pairs = t.domain(
                        bare.len(),
                        Rows::Gather(&bare),
                        Rows::Gather(&child),
                        Rows::Missing,
                        &[],
                    );
                    let mut acc = ChildAcc::new(def);
                    acc.value.resize(cands.len() + 1, acc.start());
                    acc.items.resize(cands.len() + 1, 0);
                    let col = eval(e, &pairs);
                    acc.add_all(pairs.len, |i| owner[i], Some(&col));
                    let all: Vec<u32> = (0..cands.len() as u32).collect();
                    acc.values(&all)
                }
            })
            .collect();
        let parents: Vec<u32> = cands.iter().map(|&r| up[r as usize]).collect();
        let d = t.domain(
            cands.len(),
            Rows::Gather(&cands),
            Rows::Missing,
            Rows::Gather(&parents),
            &values,
        );
        let keep = eval(&self.part, &d);
        let (mut count, mut hits) = (0, Vec::new());
        let mut i = 0;
        let mut done = std::mem::take(&mut self.done);
        for mut f in done.drain(..) {
            for (&marked, hit) in f.marked.iter().zip(&mut f.hits) {
                if !marked {
                    continue;
                }
                if keep.truth(i) {
                    count += 1;
                    hits.extend(hit.take());
                }
                i += 1;
            }
            self.recycle(f);
        }
        self.done = done;
        (count, hits)
    }

    /// Keeps an emptied family for reuse.
    fn recycle(&mut self, mut f: Family) {
        f.ids.clear();
        f.marked.clear();
        f.vals.clear();
        f.hits.clear();
        f.chain.clear();
        self.spare.push(f);
    }
}

/// The families' table: their values by column, each row's parent, the sentinel row.
struct Table<'a> {
    cols: &'a [Vec<i64>],
    up: &'a [u32],
    sentinel: u32,
}

impl<'a> Table<'a> {
    /// A set of `len` table rows with the given scopes.
    fn domain(
        &self,
        len: usize,
        bare: Rows<'a>,
        child: Rows<'a>,
        parent: Rows<'a>,
        aggs: &'a [Col],
    ) -> Domain<'a> {
        Domain {
            bare,
            child,
            parent,
            aggs,
            ..Domain::new(len, self.cols, self.sentinel, self.up)
        }
    }
}

/// The values of attributes `read` (the attribute count = `node_id`) at window row `row`.
fn values<'a>(v: &'a View, read: &'a [usize], row: u32) -> impl Iterator<Item = i64> + 'a {
    read.iter().map(move |&k| v.value(k, row as usize))
}

/// The attributes `part` and `aggs` read, in any scope (`attrs` stands for `node_id`).
fn read_attrs(part: &GExpr, aggs: &[AggDef], attrs: usize) -> Vec<usize> {
    let mut out = vec![false; attrs + 1];
    for e in std::iter::once(part).chain(aggs.iter().filter_map(|a| a.arg.as_ref())) {
        e.for_each_attr(&mut |_, a| {
            if let Some(x) = out.get_mut(a) {
                *x = true;
            }
        });
    }
    (0..=attrs).filter(|&a| out[a]).collect()
}

/// The furthest ancestor `e` reads: 1 for `[^]`, k for `[^k]`, 0 for none.
fn reach(e: &GExpr) -> u32 {
    let mut k = 0;
    e.for_each_attr(&mut |s, _| {
        if let Scope::Ancestor(j) = s {
            k = k.max(j);
        }
    });
    k
}

/// An aggregate over each candidate's siblings from its family's values `col` (one per child,
/// families' ranges in `families`): the family's total less the candidate's own value. For
/// `min` and `max` that needs the best value, how often it occurs, and the second best.
fn excluding_own(
    def: &AggDef,
    col: &Col,
    families: &[std::ops::Range<u32>],
    cand_kid: &[u32],
    cand_family: &[u32],
) -> Col {
    #[derive(Clone, Copy)]
    struct Total {
        count: i64,
        sum: i64,
        items: i64,
        best: i64,
        times: i64,
        second: Option<i64>,
    }
    let better = |x: i64, y: i64| match def.agg {
        Agg::Min => x < y,
        _ => x > y,
    };
    let totals: Vec<Total> = families
        .iter()
        .map(|r| {
            let mut t = Total {
                count: 0,
                sum: 0,
                items: 0,
                best: 0,
                times: 0,
                second: None,
            };
            for k in r.clone() {
                let k = k as usize;
                t.count += i64::from(col.truth(k));
                if !col.present(k) {
                    continue;
                }
                let x = col.v[k];
                t.sum = t.sum.wrapping_add(x);
                t.items += 1;
                if t.items == 1 || better(x, t.best) {
                    if t.items > 1 {
                        t.second = Some(t.best);
                    }
                    t.best = x;
                    t.times = 1;
                } else if x == t.best {
                    t.times += 1;
                } else if t.second.is_none_or(|s| better(x, s)) {
                    t.second = Some(x);
                }
            }
            t
        })
        .collect();
    let mut out = Col {
        v: Vec::with_capacity(cand_kid.len()),
        valid: Some(Vec::with_capacity(cand_kid.len())),
    };
    for (&k, &f) in cand_kid.iter().zip(cand_family) {
        let (t, k) = (totals[f as usize], k as usize);
        let present = col.present(k);
        let own = if present { col.v[k] } else { 0 };
        let items = t.items - i64::from(present);
        let value = match def.agg {
            Agg::Count => Some(t.count - i64::from(col.truth(k))),
            Agg::Sum => Some(t.sum.wrapping_sub(own)),
            Agg::Avg => (items > 0).then(|| t.sum.wrapping_sub(own) / items),
            Agg::Min | Agg::Max => match items {
                0 => None,
                _ if present && own == t.best && t.times == 1 => t.second,
                _ => Some(t.best),
            },
        };
        out.v.push(value.unwrap_or(0));
        if let Some(m) = &mut out.valid {
            m.push(value.is_some());
        }
    }
    out
}
