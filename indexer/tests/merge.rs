//! Merging segments, differentially: a merged segment must hold exactly what one append of the
//! same games writes (every bitmap, game, text, note, problem and tag answer), partial merges
//! must keep every answer, and a reader opened before a merge must go on reading the old
//! segments until it closes.

use std::path::{Path, PathBuf};

mod common;

use common::shared;
use cqldb_indexer::merge::{MergePolicy, merge};
use cqldb_indexer::{Input, Progress};
use cqldb_storage::{Database, DbWriter, WriterOptions};

/// Real games with variations, comments, NAGs, odd tags and games with problems.
fn inputs() -> Vec<Input> {
    let mut files = vec![
        shared("data/variations/pychess_world_matches.pgn"),
        shared("data/variations/pgn4people-poc_demo_pgn_1.pgn"),
    ];
    let mut studies: Vec<PathBuf> =
        std::fs::read_dir(shared("data/variations/pychess_lichess_studies"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
    studies.sort();
    files.extend(studies.into_iter().take(4));
    let mut edge: Vec<PathBuf> = std::fs::read_dir(shared("data/edge/pgn-extract-tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pgn"))
        .collect();
    edge.sort();
    files.extend(edge);
    files.into_iter().map(Input::Path).collect()
}

fn build(dir: &Path, segment_positions: u64) {
    common::build(dir, segment_positions, &inputs());
}

fn everything() -> MergePolicy {
    MergePolicy {
        max_positions: u64::MAX,
        ..MergePolicy::everything()
    }
}

const TAG_QUERIES: [&str; 5] = [
    "white:kasparov",
    "karpov",
    "tags.Result:\"1-0\"",
    "event:study",
    "tags.ECO:B20 OR white:carlsen",
];

/// Every game's stored parts and every database-wide answer the two must share.
fn assert_same_games(a: &Database, b: &Database) {
    assert_eq!(a.game_count(), b.game_count());
    let (sa, sb) = (a.stats().unwrap(), b.stats().unwrap());
    assert_eq!(
        (sa.games, sa.positions, sa.variations, sa.issues),
        (sb.games, sb.positions, sb.variations, sb.issues)
    );
    for g in 1..=a.game_count() {
        let (ia, ib) = (a.game_info(g).unwrap(), b.game_info(g).unwrap());
        assert_eq!(
            (
                ia.file,
                ia.line,
                ia.byte_offset,
                ia.positions,
                ia.meta,
                ia.issues,
                ia.detached_variations
            ),
            (
                ib.file,
                ib.line,
                ib.byte_offset,
                ib.positions,
                ib.meta,
                ib.issues,
                ib.detached_variations
            ),
            "game {g}"
        );
        assert_eq!(a.game_text(g).unwrap(), b.game_text(g).unwrap(), "game {g}");
        let (pa, pb) = (a.game_positions(g).unwrap(), b.game_positions(g).unwrap());
        assert_eq!(pa.positions, pb.positions, "game {g}");
        assert_eq!(pa.comments, pb.comments, "game {g}");
        assert_eq!(pa.nags, pb.nags, "game {g}");
    }
    let issues = |d: &Database| -> Vec<String> {
        d.issues()
            .unwrap()
            .into_iter()
            .map(|(g, f, i)| format!("{g} {f} {}:{} {} {}", i.line, i.column, i.kind, i.message))
            .collect()
    };
    assert_eq!(issues(a), issues(b));
    assert!(!issues(a).is_empty(), "the inputs have games with problems");
    for q in TAG_QUERIES {
        assert_eq!(a.search_tags(q).unwrap(), b.search_tags(q).unwrap(), "{q}");
    }
}

/// The stored bytes of every bitmap (and board index part) of a one-segment database.
fn all_bitmaps(db: &Database) -> Vec<(cqldb_storage::BitmapKey, Vec<u8>)> {
    let (_, seg) = db.segments().next().unwrap();
    seg.bitmap_keys()
        .unwrap()
        .into_iter()
        .map(|(k, _)| (k, seg.bitmap_blob(k).unwrap().unwrap().to_vec()))
        .collect()
}

#[test]
fn a_merged_segment_holds_what_one_append_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let (many, one) = (tmp.path().join("many"), tmp.path().join("one"));
    build(&many, 5_000);
    build(&one, u64::MAX);
    let before = Database::open(&many).unwrap().stats().unwrap().segments;
    assert!(before > 10, "{before} segments");
    let report = merge(&many, everything(), 2, &Progress::default()).unwrap();
    assert_eq!(
        (report.segments_before, report.segments_after),
        (before as usize, 1)
    );
    let (a, b) = (
        Database::open(&many).unwrap(),
        Database::open(&one).unwrap(),
    );
    assert_eq!(b.stats().unwrap().segments, 1);
    assert_same_games(&a, &b);
    let (ka, kb) = (all_bitmaps(&a), all_bitmaps(&b));
    assert_eq!(ka.len(), kb.len());
    for ((k1, v1), (k2, v2)) in ka.iter().zip(&kb) {
        assert_eq!(k1, k2);
        assert!(v1 == v2, "bitmap {k1:?} differs");
    }
    // Nothing of the replaced segments is left (no reader held them).
    let left: Vec<String> = std::fs::read_dir(&many)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("seg-"))
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn partial_merges_keep_every_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    build(&a, 3_000);
    build(&b, 3_000);
    let policy = MergePolicy {
        factor: 3,
        floor_positions: 3_000,
        max_positions: 40_000,
        greedy: false,
    };
    let report = merge(&b, policy, 1, &Progress::default()).unwrap();
    assert!(report.merges >= 3, "{report:?}");
    assert!(report.segments_after < report.segments_before);
    let (da, db) = (Database::open(&a).unwrap(), Database::open(&b).unwrap());
    assert_same_games(&da, &db);
    for (_, s) in db.segments() {
        assert!(s.positions() <= 40_000);
    }
    // Counts of every kind of bitmap agree, summed over segments.
    let (_, first) = da.segments().next().unwrap();
    for (key, _) in first.bitmap_keys().unwrap() {
        // Tag values are numbered per segment, a board gets a bitmap where it repeats often
        // in its segment (else the board index answers), and the board index is no bitmap.
        if matches!(
            key,
            cqldb_storage::BitmapKey::TagValue(_)
                | cqldb_storage::BitmapKey::Board(_)
                | cqldb_storage::BitmapKey::BoardIndex(_)
        ) {
            continue;
        }
        assert_eq!(
            da.bitmap_count(key).unwrap(),
            db.bitmap_count(key).unwrap(),
            "{key:?}"
        );
    }
    // Merging again finds nothing to do.
    assert_eq!(
        merge(&b, policy, 1, &Progress::default()).unwrap().merges,
        0
    );
}

#[test]
fn a_reader_opened_before_a_merge_reads_on_and_the_old_files_go_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, copy) = (tmp.path().join("db"), tmp.path().join("copy"));
    build(&dir, 5_000);
    build(&copy, 5_000);
    let old = Database::open(&dir).unwrap();
    let reference = Database::open(&copy).unwrap();
    let files_before = std::fs::read_dir(&dir).unwrap().count();
    merge(&dir, everything(), 2, &Progress::default()).unwrap();
    // The old reader's segments are all still there; its tag indexes open now, after the
    // merge committed.
    assert_same_games(&old, &reference);
    let new = Database::open(&dir).unwrap();
    assert_eq!(new.stats().unwrap().segments, 1);
    assert_same_games(&new, &reference);
    assert!(std::fs::read_dir(&dir).unwrap().count() > files_before);
    drop(old);
    drop(new);
    // The next writer removes them.
    drop(DbWriter::open(&dir, WriterOptions::default()).unwrap());
    let segs = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("seg-")
        })
        .count();
    assert_eq!(segs, 2);
    assert!(!dir.join(cqldb_storage::retire::RETIRED_FILE).exists());
    assert_same_games(&Database::open(&dir).unwrap(), &reference);
}

#[test]
fn segments_that_are_not_adjacent_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    build(&dir, 20_000);
    let mut ids: Vec<(u64, u64)> = Database::open(&dir)
        .unwrap()
        .segments()
        .map(|(e, _)| (e.first_game, e.id))
        .collect();
    ids.sort();
    assert!(ids.len() >= 3);
    let gap = [ids[0].1, ids[2].1];
    let err = cqldb_indexer::merge::merge_segments(&dir, &gap, 1, &Progress::default())
        .expect_err("refused");
    assert!(err.to_string().contains("adjacent"), "{err}");
    let reversed = [ids[1].1, ids[0].1];
    assert!(
        cqldb_indexer::merge::merge_segments(&dir, &reversed, 1, &Progress::default()).is_err()
    );
    assert_eq!(
        Database::open(&dir).unwrap().stats().unwrap().segments as usize,
        ids.len()
    );
}
