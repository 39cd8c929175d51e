//! `cqldb sql` and `cqldb shell` as a user runs them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

fn cqldb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(args)
        .output()
        .expect("run cqldb")
}

fn database(dir: &Path) -> String {
    let db = dir.join("db");
    let pgn = shared().join("conformance/cql/corpus/games.pgn");
    let out = cqldb(&[
        "index",
        "--quiet",
        "--db",
        db.to_str().unwrap(),
        pgn.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    db.to_str().unwrap().to_owned()
}

#[test]
fn formats_errors_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let db = database(tmp.path());
    let csv = cqldb(&[
        "sql",
        "SELECT count(*) AS n FROM games",
        "--db",
        &db,
        "--format",
        "csv",
    ]);
    assert!(csv.status.success(), "{csv:?}");
    let text = String::from_utf8(csv.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("n"));
    let n: u64 = lines.next().unwrap().parse().unwrap();
    assert!(n > 100, "{text}");

    // RFC 4180: a field with a comma or a quote is quoted, quotes doubled.
    let quoted = cqldb(&[
        "sql",
        "SELECT 'a,b' AS x, 'say \"hi\"' AS y",
        "--db",
        &db,
        "--format",
        "csv",
    ]);
    assert_eq!(
        String::from_utf8(quoted.stdout).unwrap(),
        "x,y\n\"a,b\",\"say \"\"hi\"\"\"\n"
    );

    let json = cqldb(&[
        "sql",
        "SELECT game, result FROM games WHERE game <= 2 ORDER BY game",
        "--db",
        &db,
        "--format",
        "json",
    ]);
    let text = String::from_utf8(json.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.starts_with("{\"game\":1"), "{text}");

    let table = cqldb(&["sql", "SELECT game FROM games WHERE game = 1", "--db", &db]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("| game |") && text.contains("1 row"),
        "{text}"
    );

    let bad = cqldb(&["sql", "SELECT nope FROM games", "--db", &db]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("nope"));

    let parquet_to_terminal = cqldb(&["sql", "SELECT 1", "--db", &db, "--format", "parquet"]);
    assert_eq!(parquet_to_terminal.status.code(), Some(2));
    let file = tmp.path().join("mates.parquet");
    let written = cqldb(&[
        "sql",
        "SELECT game, ply, fen FROM positions WHERE mate",
        "--db",
        &db,
        "--format",
        "parquet",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(written.status.success(), "{written:?}");
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));

    // Never into the database.
    let inside = cqldb(&["sql", "SELECT 1", "--db", &db, "-o", &format!("{db}/x.csv")]);
    assert_eq!(inside.status.code(), Some(2), "{inside:?}");
}

#[test]
fn explain_shows_what_was_pushed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = database(tmp.path());
    let out = cqldb(&[
        "sql",
        "EXPLAIN SELECT count(*) FROM positions WHERE mate AND ply > 20",
        "--db",
        &db,
        "--format",
        "csv",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("CqldbScan: table=positions"), "{text}");
    assert!(text.contains("cql=`mate ply > 20`"), "{text}");
}

#[test]
fn the_shell_reads_statements_from_a_pipe() {
    let tmp = tempfile::tempdir().unwrap();
    let db = database(tmp.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(["shell", "--db", &db])
        .env("HOME", tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b".format csv\nSELECT count(*) AS n\n  FROM games\n  WHERE game <= 3;\n.quit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "n\n3\n");
}

#[test]
fn help_lists_the_tables_and_functions() {
    let out = cqldb(&["sql", "--help"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "games:",
        "tags:",
        "positions:",
        "moves:",
        "comments:",
        "in_check",
        "cql('QUERY')",
        "on_square(bitboard",
    ] {
        assert!(text.contains(want), "{want} missing from:\n{text}");
    }
}
