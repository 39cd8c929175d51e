//! Game text compressed with a dictionary trained on the input (see
//! `storage/src/text_dictionary.rs`): every game reads back byte for byte, before and after a
//! merge, and a damaged dictionary is an error naming the file, never other text.

use std::path::{Path, PathBuf};

mod common;

use cqldb_indexer::merge::{MergePolicy, merge};
use cqldb_indexer::{Input, Progress};
use cqldb_storage::{Database, Segment};

fn input() -> PathBuf {
    common::shared("data/variations/pychess_world_matches.pgn")
}

fn build(dir: &Path, segment_positions: u64) {
    common::build(dir, segment_positions, &[Input::Path(input())]);
}

/// Every game's stored text against the input's bytes at its offset.
fn texts_match_input(db: &Path) -> Result<usize, String> {
    let original = std::fs::read(input()).unwrap();
    let db = Database::open(db).map_err(|e| e.to_string())?;
    let games = db.game_count();
    for g in 1..=games {
        let text = db.game_text(g).map_err(|e| e.to_string())?;
        let info = db.game_info(g).map_err(|e| e.to_string())?;
        let at = info.byte_offset as usize;
        assert_eq!(
            original.get(at..at + text.len()),
            Some(text.as_slice()),
            "game {g} differs from the input"
        );
    }
    Ok(games as usize)
}

#[test]
fn text_with_a_dictionary_reads_back_exactly_before_and_after_a_merge() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    build(&db, 20_000);
    let database = Database::open(&db).unwrap();
    let segments = database.segments().count();
    assert!(segments > 2, "{segments} segments");
    for (_, seg) in database.segments() {
        assert!(
            seg.text_dictionary().unwrap().is_some(),
            "a segment without the dictionary"
        );
    }
    drop(database);
    let games = texts_match_input(&db).unwrap();
    assert!(games > 100);
    merge(&db, MergePolicy::everything(), 1, &Progress::default()).unwrap();
    let database = Database::open(&db).unwrap();
    assert_eq!(database.segments().count(), 1);
    drop(database);
    assert_eq!(texts_match_input(&db).unwrap(), games);
}

#[test]
fn a_damaged_dictionary_is_an_error_not_other_text() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    build(&db, u64::MAX);
    let file = db.join("seg-000001.cqs");
    let seg = Segment::open(&file).unwrap();
    let dict = seg.text_dictionary().unwrap().unwrap().bytes().to_vec();
    drop(seg);
    let original = std::fs::read(&file).unwrap();
    let at = original
        .windows(dict.len())
        .position(|w| w == dict.as_slice())
        .expect("the dictionary is in the file");
    let (mut errors, mut tried) = (0, 0);
    for offset in (0..dict.len()).step_by(dict.len() / 40) {
        let mut bytes = original.clone();
        bytes[at + offset] ^= 0x24;
        std::fs::write(&file, &bytes).unwrap();
        tried += 1;
        match texts_match_input(&db) {
            Ok(_) => panic!("a byte of the dictionary changed and nothing noticed"),
            Err(e) => {
                assert!(e.contains("seg-000001.cqs") && e.contains("corrupt"), "{e}");
                errors += 1;
            }
        }
    }
    std::fs::write(&file, &original).unwrap();
    assert_eq!(errors, tried);
    texts_match_input(&db).unwrap();
}
