//! GTQL: the single-pass evaluator against the naive one on random trees and queries, and
//! hand-drawn trees with hand-computed answers for every scope rule.

use cqldb_executor::gtql::{Answer, ParallelPass, Pass, naive_answers};
use cqldb_planner::gtql::{GtqlNames, GtqlQuery, parse_gtql};
use cqldb_storage::gtl::Chunk;
use proptest::prelude::*;

fn names() -> GtqlNames {
    GtqlNames {
        attrs: vec!["a".into(), "b".into(), "c".into()],
        consts: vec![("Red".into(), 1), ("Blue".into(), 2)],
        ..Default::default()
    }
}

/// Columns a pass sees: `a`, `b`, `c`, then `last_move`'s codes (`node_id` is one past).
const COLS: usize = 4;

thread_local! {
    /// The ids the trees of the current test carry (empty: pre-order numbers).
    static IDS: std::cell::RefCell<Vec<i64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Gives the trees of this thread's next checks ids: post-order record numbers from 1, as a
/// GT-log file has them, or none.
fn use_ids(levels: &[u32], on: bool) -> Vec<i64> {
    let ids = if on {
        post_order_ids(levels)
    } else {
        Vec::new()
    };
    IDS.with(|i| *i.borrow_mut() = ids.clone());
    ids
}

/// 1-based post-order numbers of a pre-order tree (a node is numbered when its subtree ends).
fn post_order_ids(levels: &[u32]) -> Vec<i64> {
    let mut ids = vec![0; levels.len()];
    let mut open: Vec<usize> = Vec::new();
    let mut next = 0;
    for (i, &l) in levels.iter().enumerate() {
        while open.last().is_some_and(|&o| levels[o] >= l) {
            next += 1;
            ids[open.pop().unwrap_or_default()] = next;
        }
        open.push(i);
    }
    while let Some(o) = open.pop() {
        next += 1;
        ids[o] = next;
    }
    ids
}

/// Nodes `first..end` of a tree as a chunk.
fn chunk_of(levels: &[u32], rows: &[Vec<i64>], first: usize, end: usize) -> Chunk {
    Chunk {
        first_id: first as u64,
        levels: levels[first..end].to_vec(),
        moves: Vec::new(),
        cols: (0..COLS)
            .map(|k| rows[first..end].iter().map(|r| r[k]).collect())
            .collect(),
        ids: IDS.with(|i| {
            i.borrow()
                .get(first..end)
                .map(<[i64]>::to_vec)
                .unwrap_or_default()
        }),
    }
}

/// The naive answers, with this thread's ids.
fn naive(queries: &[GtqlQuery], levels: &[u32], rows: &[Vec<i64>]) -> Vec<Answer> {
    IDS.with(|i| naive_answers(queries, levels, rows, &i.borrow()))
}

/// Runs the single pass, feeding the tree in chunks of `chunk` nodes.
fn pass(queries: &[GtqlQuery], levels: &[u32], rows: &[Vec<i64>], chunk: usize) -> Vec<Answer> {
    pass_limited(queries, levels, rows, chunk, usize::MAX)
}

/// As [`pass`], keeping at most `limit` hits (0: counting only, which takes other paths).
fn pass_limited(
    queries: &[GtqlQuery],
    levels: &[u32],
    rows: &[Vec<i64>],
    chunk: usize,
    limit: usize,
) -> Vec<Answer> {
    let mut p = Pass::new(queries.to_vec(), COLS, false, limit);
    let mut first = 0;
    while first < levels.len() {
        let end = (first + chunk).min(levels.len());
        p.feed(&chunk_of(levels, rows, first, end));
        first = end;
    }
    p.finish()
}

fn tree_strategy() -> impl Strategy<Value = (Vec<u32>, Vec<Vec<i64>>)> {
    (1usize..60).prop_flat_map(|n| {
        (
            prop::collection::vec(0u32..4, n),
            prop::collection::vec(prop::collection::vec(-3i64..4, COLS), n),
        )
            .prop_map(|(steps, rows)| {
                // Turn random steps into a valid pre-order level sequence.
                let mut levels = vec![0u32];
                for s in steps.iter().skip(1) {
                    let prev = *levels.last().unwrap_or(&0);
                    let l = match s {
                        0 => prev + 1,
                        1 => prev.max(1),
                        _ => 1 + (prev.saturating_sub(*s)),
                    };
                    levels.push(l.min(prev + 1).max(1));
                }
                (levels, rows)
            })
    })
}

/// Any levels at all (gaps, several roots): a tree is still defined, by a stack of open nodes
/// popped as levels come back up, and the pass must agree with the naive evaluator on it.
fn any_levels_strategy() -> impl Strategy<Value = (Vec<u32>, Vec<Vec<i64>>)> {
    (1usize..40).prop_flat_map(|n| {
        (
            prop::collection::vec(0u32..6, n),
            prop::collection::vec(prop::collection::vec(-3i64..4, COLS), n),
        )
    })
}

const CONDS: &[&str] = &[
    "a = 1",
    "b > 0",
    "c & 1",
    "not a = 0",
    "[^]a = a",
    "a >= b and c < 2",
    "a = Red or b = Blue",
    "node_id > 3",
    "not [^]a = 1",
    "[^]b & 1",
    "[^2]a = a or [^3]c > 0",
    "not [^2]b < 1",
    "last_move = 2",
    "[^]last_move != last_move and node_id >= 2",
];
const CHILD: &[&str] = &[
    "count([]a = a) >= 1",
    "count([]b > [<]b) > 0",
    "count(*) >= 2",
    "count(*) >= 3",
    "count([]a = a) >= 2",
    "sum([]c) > 1",
    "min([]a) < 0",
    "max([]b) = 3",
    "avg([]a) >= 1",
    "count(not []c & 2) = 1",
    "count(*) >= 1 and [^]a = a",
    "count([]a = 1) > 0 or [^2]b = 1",
    "not min([]b) > 0",
    "max([]a & 1) = 1 or avg([]b) < [^]c",
    "count([]a = [<]a) = 0 and node_id < 40",
    "count([]last_move > last_move) >= 1",
    "max([]node_id) > node_id",
];
const SUB: &[&str] = &[
    "count(*) > 3",
    "count(a = Red) >= 2",
    "sum(b) < 0",
    "avg(c) > 0",
    "count(*) = 0",
    "count(*) > 1",
    "sum(b) > 0 and count(*) < 6",
    "count(c & 1) > 1 or avg(a) < 0",
    "count(*) > 1 and a = 1",
    "avg(b) = 0 or [^]c = 1",
    "count(*) >= 1 and [^2]a = Red",
    "not sum(c & 2) < 2",
];

const SIBLING: &[&str] = &[
    "count(*) >= 1",
    "count([]a = a) = 0",
    "max([]b) < b",
    "count([]node_id < node_id and []b >= b) = 0",
    "min([]c) > 0 or [^]a = Red",
    "sum([]b) > 1 and avg([]c) <= 1",
    "count(*) = 0",
    "[^2]b = 1 or count([]a & 1) > 1",
    "max([]a) = 1 and min([]a) = 1",
    "min([]b) = b or avg([]b) >= 0",
    "max([]c & 2) = 2 or not min([]b) < 0",
];

fn query_strategy() -> impl Strategy<Value = String> {
    (
        prop::option::of(0..CONDS.len()),
        prop::option::of(0..CHILD.len()),
        prop::option::of(0..SUB.len()),
        prop::option::of(0..SIBLING.len()),
    )
        .prop_map(|(n, c, s, b)| {
            let mut parts = Vec::new();
            if let Some(n) = n {
                parts.push(format!("node: {}", CONDS[n]));
            }
            if let Some(c) = c {
                parts.push(format!("child: {}", CHILD[c]));
            }
            if let Some(s) = s {
                parts.push(format!("subtree: {}", SUB[s]));
            }
            if let Some(b) = b {
                parts.push(format!("sibling: {}", SIBLING[b]));
            }
            parts.join("; ")
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn single_pass_equals_naive((levels, rows) in tree_strategy(), texts in prop::collection::vec(query_strategy(), 1..6), chunk in 1usize..20, with_ids in any::<bool>()) {
        use_ids(&levels, with_ids);
        let queries: Vec<GtqlQuery> = texts.iter().map(|t| parse_gtql(t, &names()).expect(t)).collect();
        let fast = pass(&queries, &levels, &rows, chunk);
        let slow = naive(&queries, &levels, &rows);
        for (i, (f, s)) in fast.iter().zip(&slow).enumerate() {
            prop_assert_eq!(f, s, "query {}: {}", i, &texts[i]);
        }
        // With a limit, the first hits in pre-order (not the first decided).
        let first = pass_limited(&queries, &levels, &rows, chunk, 3);
        for (i, (f, s)) in first.iter().zip(&slow).enumerate() {
            prop_assert_eq!(f.count, s.count, "limited query {}: {}", i, &texts[i]);
            prop_assert_eq!(&f.hits[..], &s.hits[..s.hits.len().min(3)], "limited query {}: {}", i, &texts[i]);
        }
        let counted = pass_limited(&queries, &levels, &rows, chunk, 0);
        for (i, (f, s)) in counted.iter().zip(&slow).enumerate() {
            prop_assert_eq!(f.count, s.count, "counting query {}: {}", i, &texts[i]);
        }
    }
}

/// [`pass_limited`] on `threads` worker threads.
fn parallel_pass(
    queries: &[GtqlQuery],
    levels: &[u32],
    rows: &[Vec<i64>],
    chunk: usize,
    limit: usize,
    threads: usize,
) -> Vec<Answer> {
    let mut p = ParallelPass::new(queries.to_vec(), COLS, false, limit, threads);
    let mut first = 0;
    while first < levels.len() {
        let end = (first + chunk).min(levels.len());
        // Refill what `feed` hands back, as a reader does (its old contents must not leak).
        let mut c = p.feed(chunk_of(levels, rows, first, end));
        c.levels.clear();
        first = end;
    }
    p.finish()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Queries spread over worker threads (sharing groups kept together, answers put back in
    /// the queries' order) answer as one pass does.
    #[test]
    fn parallel_pass_equals_single_pass((levels, rows) in tree_strategy(), texts in prop::collection::vec(query_strategy(), 1..8), chunk in 1usize..20, threads in 1usize..5, limit in prop_oneof![Just(0usize), Just(3), Just(usize::MAX)], with_ids in any::<bool>()) {
        use_ids(&levels, with_ids);
        let queries: Vec<GtqlQuery> = texts.iter().map(|t| parse_gtql(t, &names()).expect(t)).collect();
        let one = pass_limited(&queries, &levels, &rows, chunk, limit);
        let spread = parallel_pass(&queries, &levels, &rows, chunk, limit, threads);
        prop_assert_eq!(one, spread);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn single_pass_equals_naive_on_any_levels((levels, rows) in any_levels_strategy(), texts in prop::collection::vec(query_strategy(), 1..4), chunk in 1usize..12) {
        use_ids(&levels, false);
        let queries: Vec<GtqlQuery> = texts.iter().map(|t| parse_gtql(t, &names()).expect(t)).collect();
        let fast = pass(&queries, &levels, &rows, chunk);
        let slow = naive(&queries, &levels, &rows);
        for (i, (f, s)) in fast.iter().zip(&slow).enumerate() {
            prop_assert_eq!(f, s, "query {}: {}", i, &texts[i]);
        }
    }
}

/// The paper's kind of tree: root R with children X (Red, value 5), Y (Blue, -1); X has
/// children X1 (Red, 2) and X2 (Red, -4); X2 has child X21 (Blue, 0).
fn hand_tree() -> (Vec<u32>, Vec<Vec<i64>>) {
    // attributes: a = colour, b = value, c = unused
    let levels = vec![0, 1, 2, 2, 3, 1];
    // (the fourth column is `last_move`'s code)
    let rows = vec![
        vec![2, 0, 0, 0],   // 0 R
        vec![1, 5, 0, 1],   // 1 X
        vec![1, 2, 0, 11],  // 2 X1
        vec![1, -4, 0, 12], // 3 X2
        vec![2, 0, 0, 21],  // 4 X21
        vec![2, -1, 0, 2],  // 5 Y
    ];
    (levels, rows)
}

fn ids(q: &str) -> Vec<u64> {
    let (levels, rows) = hand_tree();
    use_ids(&levels, false);
    let query = parse_gtql(q, &names()).expect(q);
    let a = &pass(std::slice::from_ref(&query), &levels, &rows, 2)[0];
    assert_eq!(a, &naive(&[query], &levels, &rows)[0], "{q}");
    a.hits.iter().map(|h| h.node_id).collect()
}

#[test]
fn scope_rules_by_hand() {
    // Subtree: proper descendants only; a leaf has count(*) = 0.
    assert_eq!(ids("subtree: count(*) = 0"), vec![2, 4, 5]);
    assert_eq!(ids("subtree: count(*) = 5"), vec![0]);
    // Inside a subtree count a bare attribute is the descendant's: Red descendants.
    assert_eq!(ids("subtree: count(a = Red) >= 2"), vec![0, 1]);
    // Outside the count it is the node's own.
    assert_eq!(ids("subtree: a = Red and count(*) > 0"), vec![1, 3]);
    // Child: bare = the node's value, [] = the child's: children of the same colour.
    assert_eq!(ids("child: count([]a = a) >= 1"), vec![0, 1]);
    assert_eq!(ids("child: count([]a = a) = 0"), vec![2, 3, 4, 5]);
    // [<]: the previous child; the first child has none, so comparisons with it are false.
    assert_eq!(ids("child: count([]b < [<]b) >= 1"), vec![0, 1]);
    assert_eq!(ids("child: count([]b >= [<]b) >= 1"), Vec::<u64>::new());
    // Node part and [^] (beyond the paper): nodes whose parent has the same colour.
    assert_eq!(ids("node: [^]a = a"), vec![2, 3, 5]);
    // [^k]: the k-th ancestor; a node without one compares false.
    assert_eq!(ids("node: [^2]a = Blue"), vec![2, 3]);
    assert_eq!(ids("node: [^3]a = Blue"), vec![4]);
    assert_eq!(ids("node: not [^2]a = Blue"), vec![0, 1, 4, 5]);
    // Aggregates beyond the paper.
    assert_eq!(ids("child: sum([]b) = 4"), vec![0]);
    assert_eq!(ids("child: max([]b) = 2"), vec![1]);
    assert_eq!(ids("subtree: sum(b) = -2"), vec![1]);
    // Sibling parts (beyond the paper): over the other children of the node's parent; `[]` is
    // the sibling, a bare attribute the node. X1 and X2 are siblings, X and Y; R has none.
    assert_eq!(ids("sibling: count(*) = 0"), vec![0, 4]);
    assert_eq!(ids("sibling: count([]a = a) >= 1"), vec![2, 3]);
    assert_eq!(ids("sibling: max([]b) < b"), vec![1, 2]);
    assert_eq!(
        ids("node: a = Red; sibling: count([]a = Blue) = 1"),
        vec![1]
    );
}

#[test]
fn last_move_and_ids_by_hand() {
    assert_eq!(ids("node: last_move = 12"), vec![3]);
    assert_eq!(ids("node: last_move > 10 and last_move < 20"), vec![2, 3]);
    assert_eq!(ids("child: count([]last_move = 21) = 1"), vec![3]);
    // With a log's ids (post-order: X1 1, X21 2, X2 3, X 4, Y 5, R 6), answers carry them,
    // listed by id, and `node_id` compares them.
    let (levels, rows) = hand_tree();
    assert_eq!(use_ids(&levels, true), vec![6, 4, 1, 3, 2, 5]);
    let run = |q: &str| -> Vec<u64> {
        let query = parse_gtql(q, &names()).expect(q);
        let a = &pass(std::slice::from_ref(&query), &levels, &rows, 2)[0];
        assert_eq!(a, &naive(&[query], &levels, &rows)[0], "{q}");
        a.hits.iter().map(|h| h.node_id).collect()
    };
    assert_eq!(run("subtree: count(*) = 0"), vec![1, 2, 5]);
    assert_eq!(run("node: node_id >= 5"), vec![5, 6]);
    assert_eq!(run("node: [^]node_id = 4"), vec![1, 3]);
    assert_eq!(run("sibling: count([]node_id < node_id) = 1"), vec![3, 5]);
    use_ids(&levels, false);
}

#[test]
fn standalone_count_counts_the_whole_tree() {
    let (levels, rows) = hand_tree();
    let q = parse_gtql("node: count(a = Red)", &names()).unwrap();
    assert_eq!(
        pass(std::slice::from_ref(&q), &levels, &rows, 4)[0].count,
        3
    );
    let q = parse_gtql("node: count(*)", &names()).unwrap();
    assert_eq!(pass(&[q], &levels, &rows, 4)[0].count, 6);
}

#[test]
fn paths_of_hits_span_chunks() {
    let (levels, rows) = hand_tree();
    let moves: Vec<String> = ["", "x", "x1", "x2", "x21", "y"].map(String::from).to_vec();
    let q = parse_gtql("subtree: count(*) <= 1", &names()).unwrap();
    let mut p = Pass::new(vec![q], COLS, true, 10);
    for first in [0, 2, 4] {
        p.feed(&Chunk {
            first_id: first as u64,
            levels: levels[first..first + 2].to_vec(),
            moves: moves[first..first + 2].to_vec(),
            cols: (0..COLS)
                .map(|k| rows[first..first + 2].iter().map(|r| r[k]).collect())
                .collect(),
            ids: Vec::new(),
        });
    }
    let a = &p.finish()[0];
    let paths: Vec<(u64, Vec<String>)> =
        a.hits.iter().map(|h| (h.node_id, h.path.clone())).collect();
    let path = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        paths,
        vec![
            (2, path(&["x", "x1"])),
            (3, path(&["x", "x2"])),
            (4, path(&["x", "x2", "x21"])),
            (5, path(&["y"])),
        ]
    );
    assert_eq!(a.hits[2].values, vec![2, 0, 0, 21]);
}
