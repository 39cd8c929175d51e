//! Token soup and random text never panic the GTQL parser or overflow its stack, and long or
//! deep queries are answered in time linear in their length or rejected.

use std::time::{Duration, Instant};

use cqldb_planner::gtql::{GtqlNames, parse_gtql};
use proptest::prelude::*;

const VOCAB: &[&str] = &[
    "node:",
    "child:",
    "subtree:",
    ";",
    "(",
    ")",
    "[",
    "]",
    "[]",
    "[<]",
    "[^]",
    "[^3]",
    "count",
    "(*)",
    "and",
    "or",
    "not",
    "=",
    "<>",
    "<",
    "<=",
    ">",
    ">=",
    "&",
    "a",
    "b",
    "Red",
    "0",
    "-1",
    "99999999999999999999",
    "min",
    "max",
    "sum",
    "avg",
    ",",
    "*",
    "last_move",
    "\"e4\"",
];

fn names() -> GtqlNames {
    GtqlNames {
        attrs: vec!["a".into(), "b".into()],
        consts: vec![("Red".into(), 1)],
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]
    #[test]
    fn token_soup_never_panics(words in prop::collection::vec(0..VOCAB.len(), 0..40)) {
        let q = words.iter().map(|&i| VOCAB[i]).collect::<Vec<_>>().join(" ");
        let _ = parse_gtql(&q, &names());
    }

    #[test]
    fn random_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse_gtql(&s, &names());
    }
}

#[test]
fn deep_and_long_queries_end_quickly() {
    let n = names();
    let cases = [
        format!("node: {}a = 1{}", "(".repeat(10_000), ")".repeat(10_000)),
        format!("node: {}a = 1", "not ".repeat(5_000)),
        format!("node: {}", vec!["a = 1"; 20_000].join(" or ")),
        format!("node: {}", vec!["a = 1"; 20_000].join(" and ")),
    ];
    for q in &cases {
        let t = Instant::now();
        let _ = parse_gtql(q, &n);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
}
