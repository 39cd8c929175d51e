//! The reference evaluator: every aggregate recounted for every node from scratch.

use cqldb_planner::gtql::{Agg, AggDef, GtqlQuery};

use super::expr::{ev, truth};
use super::{Answer, Hit};

/// The same answers computed the slow, obvious way on a tree held in memory (levels and
/// attribute rows in pre-order, and the nodes' ids, or none for pre-order numbers): every
/// aggregate of every node recounted from scratch.
pub fn naive_answers(
    queries: &[GtqlQuery],
    levels: &[u32],
    rows: &[Vec<i64>],
    ids: &[i64],
) -> Vec<Answer> {
    let id = |i: usize| ids.get(i).copied().unwrap_or(i as i64);
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
            v.push(id(i));
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
                        Some(p) => ev(e, p, item, prev.as_deref(), &[], &[], &[]),
                        None => ev(e, item, &[], None, &[], &[], &[]),
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
                            .is_none_or(|e| truth(ev(e, &vals[i], &[], None, &[], &[], &[])))
                    })
                    .count() as u64;
                return ans;
            }
            for i in 0..n {
                // The ancestors' values, nearest first.
                let mut par: Vec<&[i64]> = Vec::new();
                let mut up = parent[i];
                while let Some(a) = up {
                    par.push(&vals[a]);
                    up = parent[a];
                }
                let par = par.as_slice();
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
                    .is_none_or(|e| truth(ev(e, &vals[i], &[], None, par, &cvals, &[])))
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
                    .is_none_or(|e| truth(ev(e, &vals[i], &[], None, par, &[], &svals)))
                {
                    continue;
                }
                if let Some(e) = &q.sibling {
                    // The other children of the node's parent (a root has none).
                    let siblings: Vec<usize> = parent[i].map_or_else(Vec::new, |p| {
                        children(p).into_iter().filter(|&s| s != i).collect()
                    });
                    let items: Vec<(Vec<i64>, Option<Vec<i64>>)> =
                        siblings.iter().map(|&s| (vals[s].clone(), None)).collect();
                    let bvals: Vec<Option<i64>> = q
                        .sibling_aggs
                        .iter()
                        .map(|a| agg(a, items.clone(), Some(&vals[i])))
                        .collect();
                    if !truth(ev(e, &vals[i], &[], None, par, &bvals, &[])) {
                        continue;
                    }
                }
                ans.count += 1;
                ans.hits.push(Hit {
                    node_id: id(i) as u64,
                    path: Vec::new(),
                    values: rows[i].clone(),
                });
            }
            // As the pass lists them: by node id.
            ans.hits.sort_by_key(|h| h.node_id);
            ans
        })
        .collect()
}
