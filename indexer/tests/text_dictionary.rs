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

/// The segment files of a build, by name.
fn segment_files(db: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cqs"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Parsers read the games that come before the dictionary is decided into trees while it is
/// trained, and encode them once it is: the segments must be the same bytes whatever the
/// number of parsers (which changes which batches wait, and for how long), for an input whose
/// dictionary is decided part-way (more than a training's worth of text) and one decided at
/// its end.
#[test]
fn the_build_does_not_depend_on_how_many_parsers_waited_for_the_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.pgn");
    let mut text = Vec::new();
    for part in [
        "data/variations/pychess_world_matches.pgn",
        "data/variations/pychess_dortmund.pgn",
        "data/variations/pgn-extract_eco.pgn",
    ] {
        text.extend(std::fs::read(common::shared(part)).unwrap());
        text.extend_from_slice(b"\n\n");
    }
    assert!(text.len() > cqldb_storage::text_dictionary::TRAIN_BYTES);
    std::fs::write(&long, &text).unwrap();
    for inputs in [vec![Input::Path(long.clone())], vec![Input::Path(input())]] {
        let mut builds = Vec::new();
        for threads in [1, 3] {
            let db = dir.path().join(format!("db{threads}"));
            let _ = std::fs::remove_dir_all(&db);
            let mut w = cqldb_storage::DbWriter::open(
                &db,
                cqldb_storage::WriterOptions {
                    segment_positions: 20_000,
                    ..cqldb_storage::WriterOptions::default()
                },
            )
            .unwrap();
            let options = cqldb_indexer::IngestOptions {
                threads,
                ..cqldb_indexer::IngestOptions::default()
            };
            cqldb_indexer::ingest(&inputs, &mut w, options, &Progress::default()).unwrap();
            w.commit().unwrap();
            let database = Database::open(&db).unwrap();
            for (_, seg) in database.segments() {
                assert!(
                    seg.text_dictionary().unwrap().is_some(),
                    "a segment without the dictionary"
                );
            }
            // Every game once, as the splitter reads them.
            let Input::Path(source) = &inputs[0] else {
                unreachable!("inputs here are paths")
            };
            let mut splitter =
                cqldb_indexer::split::Splitter::new(std::fs::File::open(source).unwrap());
            let mut games = 0u64;
            while splitter.next_game().unwrap().is_some() {
                games += 1;
            }
            assert_eq!(database.game_count(), games, "{threads} parser(s)");
            builds.push(segment_files(&db));
        }
        assert!(builds[0].len() > 2, "{} segments", builds[0].len());
        assert!(
            builds[0] == builds[1],
            "one parser and three wrote different segments"
        );
    }
}
