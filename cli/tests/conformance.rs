//! The CQL 6.2 conformance suite (../shared/conformance/cql): every MANIFEST row is run on the
//! corpus PGN and on an index built from it; the matched game numbers and their order must equal
//! the reference's. Prints a pass table by area (also written to `cql-conformance.md` in the
//! target directory's `tmp/`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cqldb_executor::Game;
use cqldb_executor::source::{db_games, pgn_games};
use cqldb_indexer::Input;
use cqldb_storage::Database;

/// Areas the CQL part 1 issue requires to pass completely, both ways.
const REQUIRED: [&str; 19] = [
    "find",
    "output",
    "path",
    "themes",
    "transforms",
    "attacks",
    "geometry",
    "legal",
    "logic",
    "moves",
    "numeric",
    "pieces",
    "pin",
    "setops",
    "status",
    "tags",
    "tree",
    "varheader",
    "vars",
];

/// Required rows that still differ, each with the reason. The test fails if one of them starts
/// passing (so the list only shrinks) or if any other required row fails. Empty: every required
/// row passes.
const KNOWN: [(&str, &str); 0] = [];

fn suite() -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../shared/conformance/cql")
}

struct Row {
    id: String,
    area: String,
    query: String,
    corpus: String,
    expected: Vec<u64>,
    golden: String,
    exit: i32,
    note: String,
}

fn manifest() -> Vec<Row> {
    let text = std::fs::read_to_string(suite().join("MANIFEST.tsv")).expect("MANIFEST.tsv");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            if c.len() < 9 {
                return None;
            }
            Some(Row {
                id: c[0].to_owned(),
                area: c[1].to_owned(),
                query: c[2].to_owned(),
                corpus: c[3].to_owned(),
                expected: c[6]
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .filter_map(|s| s.parse().ok())
                    .collect(),
                golden: c[7].to_owned(),
                exit: c[8].parse().unwrap_or(1),
                note: c.get(14).map_or_else(String::new, |s| (*s).to_owned()),
            })
        })
        .collect()
}

/// Games of a corpus file, read from PGN and from an index, with and without variations.
struct Corpus {
    pgn: [Vec<Game>; 2],
    db: [Vec<Game>; 2],
}

fn load(corpus: &str, tmp: &Path) -> Corpus {
    let path = suite().join(corpus);
    let db_dir = tmp.join(corpus.replace('/', "_"));
    let status = Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(["index", "--quiet", "--db"])
        .arg(&db_dir)
        .arg(&path)
        .status()
        .expect("run cqldb index");
    assert!(status.success(), "indexing {corpus}");
    let db = Database::open(&db_dir).expect("open db");
    let read = |variations: bool| {
        let mut from_pgn = Vec::new();
        pgn_games(&Input::parse(&path.to_string_lossy()), variations, |g| {
            from_pgn.push(g);
            Ok(())
        })
        .expect("read pgn");
        let mut from_db = Vec::new();
        db_games(&db, variations, true, |g| {
            from_db.push(g);
            Ok(())
        })
        .expect("read db");
        (from_pgn, from_db)
    };
    let (p0, d0) = read(false);
    let (p1, d1) = read(true);
    Corpus {
        pgn: [p0, p1],
        db: [d0, d1],
    }
}

fn run(
    query: &cqldb_planner::Query,
    games: &[Game],
    pgn: Option<&mut Vec<u8>>,
) -> cqldb::cql::CqlSummary {
    let out: Option<Box<dyn std::io::Write + '_>> =
        pgn.map(|b| Box::new(b) as Box<dyn std::io::Write>);
    cqldb::cql::run_games(query, games, out).expect("evaluation")
}

/// The reference's stdout without its progress dots and blank lines.
fn message_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.trim_start_matches('.').to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

fn golden_bytes(path: &Path) -> Option<Vec<u8>> {
    let data = std::fs::read(path).ok()?;
    if path.extension().is_some_and(|e| e == "zst") {
        zstd::stream::decode_all(data.as_slice()).ok()
    } else {
        Some(data)
    }
}

#[test]
fn conformance_suite() {
    let rows = manifest();
    assert!(rows.len() >= 700, "manifest has {} rows", rows.len());
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut corpora: BTreeMap<String, Corpus> = BTreeMap::new();
    // area -> (rows, pass pgn, pass index, pgn identical)
    let mut table: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut failures = Vec::new();
    for row in &rows {
        let qtext = std::fs::read_to_string(suite().join(&row.query)).expect("query file");
        let parsed = cqldb_planner::parse(&qtext);
        let entry = table.entry(row.area.clone()).or_default();
        if row.area == "errors" {
            entry[0] += 1;
            if parsed.is_err() {
                entry[1] += 1;
                entry[2] += 1;
                entry[3] += 1;
            } else {
                failures.push(format!("{}: error query accepted", row.id));
            }
            continue;
        }
        if row.exit != 0 {
            // The reference crashed here (null move + [x]); we only must not.
            continue;
        }
        entry[0] += 1;
        let q = match parsed {
            Ok(q) => q,
            Err(e) => {
                if REQUIRED.contains(&row.area.as_str()) {
                    failures.push(format!("{}: parse error: {}", row.id, e.message));
                }
                continue;
            }
        };
        let corpus = corpora
            .entry(row.corpus.clone())
            .or_insert_with(|| load(&row.corpus, tmp.path()));
        let v = usize::from(q.header.variations);
        let mut pgn = Vec::new();
        let summary = run(&q, &corpus.pgn[v], Some(&mut pgn));
        let from_pgn = summary.matched.into_vec();
        let from_db = run(&q, &corpus.db[v], None).matched.into_vec();
        if let Some(path) = row.note.strip_prefix("stdout=") {
            let golden = std::fs::read_to_string(suite().join(path)).unwrap_or_default();
            if message_lines(&golden) != summary.messages {
                failures.push(format!("{}: message() output differs from {path}", row.id));
            }
        }
        let ok_pgn = from_pgn == row.expected;
        let ok_db = from_db == row.expected;
        entry[1] += usize::from(ok_pgn);
        entry[2] += usize::from(ok_db);
        if golden_bytes(&suite().join(&row.golden)).is_some_and(|g| g == pgn) {
            entry[3] += 1;
        } else if let Some(dir) = std::env::var_os("CQLDB_CONFORMANCE_DUMP") {
            // For looking at output differences: our PGN next to the golden's name.
            let name = row.golden.trim_end_matches(".zst").replace('/', "_");
            let _ = std::fs::write(Path::new(&dir).join(name), &pgn);
        }
        if !(ok_pgn && ok_db) && std::env::var_os("CQLDB_CONFORMANCE_ALL").is_some() {
            println!(
                "differs: {} ({}) expected {} got {}",
                row.id,
                row.query,
                row.expected.len(),
                from_pgn.len()
            );
        }
        let known = KNOWN.iter().any(|(id, _)| *id == row.id);
        if REQUIRED.contains(&row.area.as_str()) && known && ok_pgn && ok_db {
            failures.push(format!("{}: passes now; remove it from KNOWN", row.id));
        }
        if REQUIRED.contains(&row.area.as_str()) && !known && !(ok_pgn && ok_db) {
            let diff = |got: &[u64]| {
                let extra: Vec<_> = got
                    .iter()
                    .filter(|g| !row.expected.contains(g))
                    .take(5)
                    .collect();
                let missing: Vec<_> = row
                    .expected
                    .iter()
                    .filter(|g| !got.contains(g))
                    .take(5)
                    .collect();
                format!("{} got, extra {extra:?}, missing {missing:?}", got.len())
            };
            failures.push(format!(
                "{} ({}): expected {}; pgn: {}; index: {}",
                row.id,
                row.query,
                row.expected.len(),
                diff(&from_pgn),
                diff(&from_db)
            ));
        }
    }
    let mut report = String::from(
        "| area | rows | pass (PGN) | pass (index) | output PGN byte-identical |\n|---|---:|---:|---:|---:|\n",
    );
    let mut total = [0usize; 4];
    for (area, t) in &table {
        let req = if REQUIRED.contains(&area.as_str()) || area == "errors" {
            " (required)"
        } else {
            ""
        };
        report.push_str(&format!(
            "| {area}{req} | {} | {} | {} | {} |\n",
            t[0], t[1], t[2], t[3]
        ));
        for i in 0..4 {
            total[i] += t[i];
        }
    }
    report.push_str(&format!(
        "| **total** | {} | {} | {} | {} |\n",
        total[0], total[1], total[2], total[3]
    ));
    println!("{report}");
    // In the build's own folder for tests, wherever CARGO_TARGET_DIR puts it.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cql-conformance.md");
    let _ = std::fs::write(target, &report);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
