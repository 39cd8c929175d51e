//! A damaged segment file gives the right answer or a clear error naming the file — never a
//! panic, never a wrong answer. Segments are checked part by part as they are read (see
//! `storage/src/digest.rs`), so a byte flipped anywhere must be caught by whatever reads it.

use std::path::Path;

use cqldb::cql::{CqlRun, Source, run};
use cqldb_storage::Database;

mod common;
use common::{ok, s};

/// What a run answers: the matched games and written output, or the error's text.
fn answer(db: &Path, query: &str, out: &Path) -> Result<(Vec<u64>, Vec<u8>), String> {
    let r = CqlRun {
        output: Some(out.to_owned()),
        ..CqlRun::new(query, Source::Db(db.to_owned()))
    };
    let _ = std::fs::remove_file(out);
    match run(&r) {
        Ok(summary) => Ok((
            summary.matched.into_vec(),
            std::fs::read(out).unwrap_or_default(),
        )),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// A database in `dir` of the games in `text`.
fn indexed(dir: &Path, text: &str) -> std::path::PathBuf {
    let pgn = dir.join("games.pgn");
    std::fs::write(&pgn, text).unwrap();
    let db = dir.join("db");
    ok(&["index", s(&pgn), "--db", s(&db), "-q"]);
    db
}

#[test]
fn byte_flips_anywhere_in_a_segment_are_caught_or_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!(
            "[Event \"e{i}\"]\n[White \"W{i}\"]\n[Black \"B{i}\"]\n[Result \"1-0\"]\n\n\
             1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# {{mate {i}}} 1-0\n\n"
        ));
        text.push_str("[Event \"x\"]\n\n1. d4 d5 2. c4 (2. Nf3 Nf6) dxc4 3. e4 *\n\n");
    }
    let db = indexed(dir.path(), &text);
    let out = dir.path().join("out.pgn");
    // Queries that read bitmaps, blocks and text: an exact count, a residual, tags, output.
    let queries = [
        "cql() mate",
        "cql() check",
        "cql(variations) Nf6 player white \"W1\"",
        "cql() Qf7 event \"e3\"",
    ];
    let expected: Vec<_> = queries
        .iter()
        .map(|q| answer(&db, q, &out).expect("the undamaged database answers"))
        .collect();
    let seg = db.join("seg-000001.cqs");
    let original = std::fs::read(&seg).unwrap();
    let n = original.len();
    let mut tried = 0;
    let mut caught = 0;
    // Every byte of the header, then offsets spread over the payload.
    let offsets = (0..64).chain((64..n).step_by((n / 400).max(1)));
    for at in offsets {
        let mut bytes = original.clone();
        bytes[at] ^= 0x5a;
        std::fs::write(&seg, &bytes).unwrap();
        tried += 1;
        for (q, want) in queries.iter().zip(&expected) {
            match answer(&db, q, &out) {
                Ok(got) => assert_eq!(&got, want, "flip at {at}: {q} answered differently"),
                Err(e) => {
                    assert!(
                        e.contains("seg-000001.cqs") && e.contains("corrupt"),
                        "flip at {at}: {q}: unclear error: {e}"
                    );
                    caught += 1;
                }
            }
        }
    }
    std::fs::write(&seg, &original).unwrap();
    eprintln!(
        "{tried} offsets flipped, {} runs, {caught} errors",
        tried * queries.len()
    );
    assert!(Database::open(&db).is_ok());
    assert!(tried > 300, "{tried} offsets tried");
    assert!(caught > 0, "no flip was caught");
}

/// A tag search that reads the games' attributes (`year:`, `elo:`) checks them when it first
/// needs them: a damaged byte there is an error naming the file, never games silently left
/// out; a search that does not read them answers as before.
#[test]
fn tag_searches_over_a_damaged_segment_are_right_or_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..60 {
        text.push_str(&format!(
            "[Event \"e{}\"]\n[Date \"{}.01.01\"]\n[White \"W{i}\"]\n[Black \"B{i}\"]\n\
             [WhiteElo \"{}\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n",
            i % 7,
            1980 + i % 40,
            2300 + 10 * i
        ));
    }
    let db = indexed(dir.path(), &text);
    let queries = [
        "white:w1",
        "year:[1995 TO 2005]",
        "elo:[2600 TO *] AND event:e3",
        "result:1-0 AND NOT year:1990",
    ];
    let search = |q: &str| -> Result<Vec<u64>, String> {
        Database::open(&db)
            .and_then(|d| d.search_tags(q))
            .map_err(|e| e.to_string())
    };
    let expected: Vec<_> = queries
        .iter()
        .map(|q| search(q).expect("the undamaged database answers"))
        .collect();
    assert!(expected.iter().all(|g| !g.is_empty()), "{expected:?}");
    let seg = db.join("seg-000001.cqs");
    let original = std::fs::read(&seg).unwrap();
    let n = original.len();
    let mut caught = 0;
    for at in (64..n).step_by((n / 600).max(1)) {
        let mut bytes = original.clone();
        bytes[at] ^= 0x5a;
        std::fs::write(&seg, &bytes).unwrap();
        for (q, want) in queries.iter().zip(&expected) {
            match search(q) {
                Ok(got) => assert_eq!(&got, want, "flip at {at}: {q} answered differently"),
                Err(e) => {
                    assert!(e.contains("seg-000001.cqs"), "flip at {at}: {q}: {e}");
                    caught += 1;
                }
            }
        }
    }
    std::fs::write(&seg, &original).unwrap();
    assert!(caught > 0, "no flip was caught");
}
