//! The Parquet export read back by DataFusion's own Parquet scan equals the live tables, after
//! a first export and after an append (which writes only the new segment); folders that are
//! not an export of this database are refused.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cqldb_indexer::{IngestOptions, Input, Progress, ingest};
use cqldb_sql::export::{ExportOptions, export, exported_columns};
use cqldb_sql::tables::Table;
use cqldb_sql::{SqlOptions, SqlSession};
use cqldb_storage::{Database, DbWriter, WriterOptions};

mod common;
use common::rows;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/conformance/cql/corpus")
        .join(name)
}

/// Appends `pgn` to the database at `dir` (one commit, so one more segment).
fn append(dir: &Path, pgn: &Path) -> Arc<Database> {
    let mut writer = DbWriter::open(dir, WriterOptions::default()).expect("writer");
    let report = ingest(
        &[Input::Path(pgn.to_owned())],
        &mut writer,
        IngestOptions::default(),
        &Progress::default(),
    )
    .expect("ingest");
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    writer.commit().expect("commit");
    Arc::new(Database::open(dir).expect("open"))
}

/// Compares every exported column of every table, row for row.
fn same_tables(live: &SqlSession, exported: &SqlSession) -> usize {
    let mut total = 0;
    for t in Table::ALL {
        let names: Vec<&str> = exported_columns(t, false)
            .into_iter()
            .map(|i| t.columns()[i].0)
            .collect();
        let sql = format!("SELECT {} FROM {}", names.join(", "), t.name());
        let a = rows(live, &sql);
        let b = rows(exported, &sql);
        assert_eq!(a.len(), b.len(), "{}: row counts", t.name());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "{}: first differing row", t.name());
        }
        total += a.len();
    }
    total
}

fn session(db: &Arc<Database>) -> SqlSession {
    SqlSession::with_options(
        db.clone(),
        SqlOptions {
            pushdown: true,
            threads: 2,
            ..Default::default()
        },
    )
    .expect("session")
}

#[test]
fn export_round_trips_and_appends_only_new_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let db_dir = tmp.path().join("db");
    let out = tmp.path().join("export");
    let db = append(&db_dir, &corpus("games.pgn"));
    let opts = ExportOptions::default();

    let first = export(&db, &db_dir, &out, &opts, &|_| {}).expect("export");
    assert_eq!((first.segments_written, first.segments_kept), (1, 0));
    let n = same_tables(&session(&db), &SqlSession::over_parquet(&out, 2).unwrap());
    assert!(n > 1000, "only {n} rows compared");
    assert_eq!(
        first.rows["positions"] as usize,
        rows(&session(&db), "SELECT count(*) FROM positions")[0]
            .parse::<usize>()
            .unwrap()
    );

    // An append adds a segment; the second export writes it alone.
    let db = append(&db_dir, &corpus("studies.pgn"));
    let stamp = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let old_file = out.join("games").join(cqldb_sql::export::file_name(
        db.segments().next().unwrap().0.id,
    ));
    let before = stamp(&old_file);
    let second = export(&db, &db_dir, &out, &opts, &|_| {}).expect("second export");
    assert_eq!((second.segments_written, second.segments_kept), (1, 1));
    assert_eq!(
        stamp(&old_file),
        before,
        "a kept segment's file was rewritten"
    );
    same_tables(&session(&db), &SqlSession::over_parquet(&out, 2).unwrap());

    // Nothing to do the third time.
    let third = export(&db, &db_dir, &out, &opts, &|_| {}).expect("third export");
    assert_eq!((third.segments_written, third.segments_kept), (0, 2));
}

#[test]
fn export_refuses_folders_it_does_not_own() {
    let tmp = tempfile::tempdir().unwrap();
    let db_dir = tmp.path().join("db");
    let db = append(&db_dir, &corpus("games.pgn"));
    let opts = ExportOptions::default();

    // A folder with someone's files in it.
    let busy = tmp.path().join("busy");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), "mine").unwrap();
    let e = export(&db, &db_dir, &busy, &opts, &|_| {}).unwrap_err();
    assert!(format!("{e:#}").contains("not empty"), "{e:#}");
    assert_eq!(
        std::fs::read_to_string(busy.join("notes.txt")).unwrap(),
        "mine"
    );

    // Inside the database.
    let e = export(&db, &db_dir, &db_dir.join("x"), &opts, &|_| {}).unwrap_err();
    assert!(format!("{e:#}").contains("inside the database"), "{e:#}");

    // An export of another database.
    let out = tmp.path().join("export");
    export(&db, &db_dir, &out, &opts, &|_| {}).expect("export");
    let other_dir = tmp.path().join("other");
    let other = append(&other_dir, &corpus("studies.pgn"));
    let e = export(&other, &other_dir, &out, &opts, &|_| {}).unwrap_err();
    assert!(format!("{e:#}").contains("holds an export of"), "{e:#}");
}
