//! Random tag queries (token soup over the query grammar, and random text) never panic or
//! overflow the stack: each is answered or rejected with an error.

use cqldb_storage::tags::{TagReader, TagWriter};
use proptest::prelude::*;
use roaring::RoaringBitmap;

const VOCAB: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "\"",
    ":",
    "*",
    "+",
    "-",
    "AND",
    "OR",
    "NOT",
    "TO",
    "^2",
    "~",
    "white",
    "black:",
    "event:",
    "tags.Opening:",
    "result:1-0",
    "elo:",
    "year:",
    "eco:",
    "B20",
    "1990",
    "carlsen",
    "Kasparov",
    "é",
    " ",
    "\\",
    "/",
    "<",
    ">",
    "=",
];

fn reader(dir: &std::path::Path) -> TagReader {
    let mut w = TagWriter::create(dir).unwrap();
    for g in 0..20u32 {
        let tags = vec![
            ("White".to_string(), format!("Carlsen {g}")),
            ("Black".to_string(), "Kasparov, Garry".to_string()),
            ("Event".to_string(), format!("Open {}", g % 3)),
            ("Opening".to_string(), "Sicilian".to_string()),
        ];
        w.add(g, &tags).unwrap();
    }
    w.finish().unwrap();
    TagReader::open(dir).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]
    #[test]
    fn random_tag_queries_are_answered_or_rejected(
        words in prop::collection::vec(0..VOCAB.len(), 0..30),
        raw in ".{0,40}",
        use_raw in any::<bool>(),
    ) {
        thread_local! {
            static DIR: tempfile::TempDir = tempfile::tempdir().unwrap();
            static READER: TagReader = DIR.with(|d| reader(&d.path().join("tags")));
        }
        let query = if use_raw {
            raw
        } else {
            words.iter().map(|&i| VOCAB[i]).collect::<Vec<_>>().join(" ")
        };
        let mut all = RoaringBitmap::new();
        all.insert_range(0..20);
        let games_of = |_v: u32| Ok(all.clone());
        READER.with(|r| {
            let _ = r.search(&query, &games_of, &all, &|_| None);
        });
    }
}
