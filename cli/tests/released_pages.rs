//! A run over a database opened for it alone drops each segment's mapped pages once it is done
//! with the segment (`Pages::Release`); a database kept open for many queries keeps
//! them. Both must give the same games, output and positions: checked here over many small
//! segments of real games, for every path a run can take (counted from the index, the
//! residual in parallel units, every game, a query with state run in order, positions listed
//! from the index), for a tag search made once (`cqldb tags`) and for a GTQL pass over the
//! games (`cqldb gtql --db`).

use std::path::Path;
use std::sync::Arc;

use cqldb::cql::{CqlRun, KeptPositions, Source, run};
use cqldb_executor::execute::{ExecOptions, Opened, execute_with};
use cqldb_executor::query::{MatchFormat, plan};
use cqldb_executor::sink::Sink;
use cqldb_storage::{Database, Pages};

mod common;
use common::{ok, s};

/// Games, output bytes and matched positions of one run.
fn outcome(query: &str, source: Source, out: &Path, positions: KeptPositions) -> String {
    let r = CqlRun {
        output: (positions == KeptPositions::None).then(|| out.to_owned()),
        variations: true,
        positions,
        ..CqlRun::new(format!("cql() {query}"), source)
    };
    let summary = run(&r).unwrap_or_else(|e| panic!("{query}: {e:#}"));
    let written = r.output.as_ref().map(std::fs::read).transpose().unwrap();
    format!(
        "games {:?}\npositions {:?}\noutput {:?}",
        summary.matched.into_vec(),
        summary.positions_matched,
        written.map(|w| String::from_utf8_lossy(&w).into_owned())
    )
}

/// A query for each path a run can take, with the positions it keeps.
const PATHS: [(&str, KeptPositions); 8] = [
    // Counted from the index.
    ("mate", KeptPositions::None),
    ("Ka1 or Kh8", KeptPositions::None),
    // Comments to write: the residual over the index's candidates.
    ("check Qh5 comment(\"here\")", KeptPositions::None),
    // Index scans, then the residual in parallel units; then every game (too broad for
    // the index).
    ("mate flipcolor { B attacks k }", KeptPositions::None),
    ("check flipcolor { B attacks k }", KeptPositions::None),
    // State carried from game to game: games evaluated in order.
    (
        "check persistent Seen += 1 Seen % 3 == 0",
        KeptPositions::None,
    ),
    // Positions listed from the index, with and without plies decoded.
    ("check", KeptPositions::WithPlies),
    ("btm Qd1", KeptPositions::Ids),
];

/// A database of real games in small segments, so that a run goes through many, and the
/// directory that holds it (removed when dropped).
struct SmallSegments {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    db: Arc<Database>,
}

fn small_segments() -> SmallSegments {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let pgn = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/variations");
    let files = ["pychess_world_matches.pgn", "pychess_dortmund.pgn"].map(|f| pgn.join(f));
    ok(&[
        "index",
        "--quiet",
        "--segment-positions",
        "5000",
        "--no-merge",
        "--db",
        s(&dir),
        s(&files[0]),
        s(&files[1]),
    ]);
    let db = Arc::new(Database::open(&dir).unwrap());
    SmallSegments { _tmp: tmp, dir, db }
}

#[test]
fn released_and_kept_pages_give_the_same_answers() {
    let SmallSegments {
        _tmp,
        dir,
        db: kept,
    } = small_segments();
    assert!(kept.segments().count() > 3, "several segments");
    let out = _tmp.path().join("out.pgn");
    for (query, positions) in PATHS {
        let released = outcome(query, Source::Db(dir.clone()), &out, positions);
        let held = outcome(query, Source::Open(kept.clone()), &out, positions);
        assert!(
            released == held,
            "{query}: released pages answered\n{released}\nkept ones\n{held}"
        );
        assert!(!released.contains("games []"), "{query} matched nothing");
    }
}

/// Resident kibibytes of every mapping of a segment file (`.cqs`), by file name, from the
/// kernel's per-mapping table.
#[cfg(target_os = "linux")]
fn resident_segments(dir: &Path) -> Vec<(String, u64)> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let dir = dir.to_str().unwrap();
    let mut out = Vec::new();
    let mut lines = smaps.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .split_whitespace()
            .nth(5)
            .filter(|p| p.starts_with(dir) && p.ends_with(".cqs"))
        else {
            continue;
        };
        let rss = lines
            .find_map(|l| l.strip_prefix("Rss:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        out.push((name.to_owned(), rss));
    }
    out
}

/// Resident kibibytes of all the segment files' mappings together.
#[cfg(target_os = "linux")]
fn held(dir: &Path) -> u64 {
    resident_segments(dir).iter().map(|r| r.1).sum()
}

/// Every path of a run leaves no segment page mapped when it releases them, and leaves some
/// when it does not (so the measure sees them).
#[cfg(target_os = "linux")]
#[test]
fn a_run_that_releases_pages_leaves_none_mapped() {
    let SmallSegments { _tmp, dir, db } = small_segments();
    for (query, positions) in PATHS {
        for pages in [Pages::Keep, Pages::Release] {
            let r = CqlRun {
                variations: true,
                positions,
                ..CqlRun::new(format!("cql() {query}"), Source::Open(db.clone()))
            };
            let p = plan(&r).unwrap();
            let output = if positions == KeptPositions::None {
                MatchFormat::Pgn.output()
            } else {
                Arc::new(cqldb_executor::match_output::MatchedPositions)
            };
            let sink = Sink::new(&p.query, None, output).unwrap();
            let opts = ExecOptions {
                pages,
                ..ExecOptions::default()
            };
            execute_with(p, &Opened::Db(&db), sink, opts).unwrap();
            let resident = resident_segments(&dir);
            assert!(resident.len() > 3, "{query}: segments mapped: {resident:?}");
            let held: u64 = resident.iter().map(|r| r.1).sum();
            if pages == Pages::Release {
                assert_eq!(held, 0, "{query}: pages left mapped: {resident:?}");
            } else {
                assert!(held > 0, "{query}: nothing was mapped");
            }
        }
    }
}

/// A tag search made once (`cqldb tags`) leaves no segment page mapped, and finds what the
/// search of a process that keeps them finds.
#[cfg(target_os = "linux")]
#[test]
fn a_tag_search_made_once_leaves_no_page_mapped() {
    let SmallSegments { _tmp, dir, db } = small_segments();
    // The second reads the games' attributes from the segments.
    for q in ["white:a*", "year:[1900 TO 2100] AND black:k*"] {
        let kept = db.search_tags(q).unwrap();
        assert!(!kept.is_empty(), "{q} found nothing");
        assert!(held(&dir) > 0, "{q}: nothing was mapped");
        assert_eq!(db.search_tags_once(q).unwrap(), kept, "{q}");
        let resident = resident_segments(&dir);
        let held: u64 = resident.iter().map(|r| r.1).sum();
        assert_eq!(held, 0, "{q}: pages left mapped: {resident:?}");
    }
}

/// A GTQL pass over a database's games that releases pages (`cqldb gtql --db`) leaves none
/// mapped and answers as one that keeps them, with and without index scans and listings.
#[cfg(target_os = "linux")]
#[test]
fn a_gtql_pass_that_releases_pages_leaves_none_mapped() {
    use cqldb_executor::gtql::{GtqlOptions, answer_games, game_names, plan_games};
    let SmallSegments { _tmp, dir, db } = small_segments();
    let names = game_names();
    for text in [
        "node: check = 1",
        "node: ply > 20 and check",
        "subtree: count(*) > 40",
    ] {
        let query = cqldb_planner::gtql::parse_gtql(text, &names).unwrap();
        let queries = [query];
        for full_scan in [false, true] {
            let scan = plan_games(&queries, full_scan);
            let answer = |pages| {
                let opts = GtqlOptions {
                    limit: 5,
                    threads: 2,
                    pages,
                };
                let out = answer_games(&db, &queries, scan.as_ref(), opts, None).unwrap();
                (out.answers, out.nodes, held(&dir))
            };
            let (kept, kept_nodes, held) = answer(Pages::Keep);
            assert!(held > 0, "{text}: nothing was mapped");
            let (released, nodes, held) = answer(Pages::Release);
            assert_eq!(released, kept, "{text}");
            assert_eq!(nodes, kept_nodes, "{text}");
            assert_eq!(held, 0, "{text}: pages left mapped");
            assert!(kept[0].count > 0, "{text} found nothing");
        }
    }
}

/// An SQL statement run in a session that releases pages (`cqldb sql`) leaves no segment page
/// mapped and answers as a session that keeps them, over each way a scan reads: pushed
/// filters run as CQL, games decoded a chunk at a time (positions, text only), the games'
/// columns from the index, `cql()` and a join it narrows; and an export leaves none either.
#[cfg(target_os = "linux")]
#[test]
fn an_sql_statement_that_releases_pages_leaves_none_mapped() {
    use cqldb_sql::{SqlFormat, SqlOptions, SqlSession};
    let SmallSegments { _tmp, dir, db } = small_segments();
    let session = |pages| {
        let opts = SqlOptions {
            threads: 2,
            pages,
            ..SqlOptions::default()
        };
        SqlSession::with_options(db.clone(), opts).unwrap()
    };
    let (released, kept) = (session(Pages::Release), session(Pages::Keep));
    let csv = |s: &SqlSession, statement: &str| {
        let answer = s
            .query(statement)
            .unwrap_or_else(|e| panic!("{statement}: {e:#}"));
        let mut out = Vec::new();
        cqldb_sql::write(&mut out, &answer, SqlFormat::Csv).unwrap();
        String::from_utf8(out).unwrap()
    };
    for statement in [
        "SELECT count(*), sum(ply) FROM positions WHERE ply > 30 AND in_check",
        // Nothing decoded: the rows are the pushed query's matches.
        "SELECT count(*), sum(position) FROM positions WHERE mate",
        "SELECT count(*), sum(game) FROM games WHERE year > 1900 AND result = '1-0'",
        "SELECT count(*), sum(ply), sum(depth), max(material) FROM positions WHERE game % 3 = 0",
        "SELECT count(*), min(white), max(event) FROM games",
        "SELECT result, count(*), sum(plies) FROM games GROUP BY 1 ORDER BY 1",
        "SELECT count(*), sum(ply) FROM cql('check')",
        "SELECT g.white, count(*) FROM cql('mate') m JOIN games g USING (game) GROUP BY 1 ORDER BY 2 DESC, 1",
        "SELECT count(*), min(san) FROM moves WHERE game % 5 = 1",
        "SELECT count(*) FROM comments",
    ] {
        let answer = csv(&released, statement);
        let resident = resident_segments(&dir);
        let left: u64 = resident.iter().map(|r| r.1).sum();
        assert_eq!(left, 0, "{statement}: pages left mapped: {resident:?}");
        assert_eq!(answer, csv(&kept, statement), "{statement}");
        assert!(held(&dir) > 0, "{statement}: nothing was mapped");
        assert!(answer.lines().count() > 1, "{statement}: no row");
        db.segments()
            .for_each(|(_, seg)| seg.done_reading(Pages::Release));
    }
    let out = _tmp.path().join("export");
    let opts = cqldb_sql::export::ExportOptions::default();
    cqldb_sql::export::export(&db, &dir, &out, &opts, &|_| {}).unwrap();
    assert_eq!(held(&dir), 0, "the export left pages mapped");
}
