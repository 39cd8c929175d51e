//! `cqldb demo`: index the bundled sample, print `info`, then the main job on it — a CQL query,
//! an SQL aggregate, a `cql()` join and an EXPLAIN, each with its answer and time — and the
//! commands to try next.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use cqldb_executor::query::{CqlRun, Source};
use cqldb_indexer::{IngestOptions, Input};
use cqldb_sql::{SqlFormat, SqlSession};
use cqldb_storage::Database;

/// Builds a fresh demo database at `db` from the sample compiled into the binary.
pub fn run(db: &Path) -> Result<ExitCode> {
    if db.exists() {
        if !db.join(cqldb_storage::catalog::CATALOG_FILE).exists() {
            anyhow::bail!(
                "{} exists and is not a cqldb database; not touching it",
                db.display()
            );
        }
        std::fs::remove_dir_all(db)?;
    }
    let inputs: Vec<Input> = cqldb_bench_data::sample::SAMPLE
        .iter()
        .map(|(name, data)| Input::Static {
            name: format!("sample/{name}"),
            data,
        })
        .collect();
    let (report, elapsed) = super::index::index_inputs(
        &inputs,
        db,
        IngestOptions::default(),
        cqldb_storage::WriterOptions::default().segment_positions,
        true,
    )?;
    outln!(
        "indexed the bundled sample ({} games) into {} in {:.2}s\n",
        report.games,
        db.display(),
        elapsed.as_secs_f64()
    );
    let database = Arc::new(Database::open(db)?);
    out!("{}", super::info::render(&database)?);
    main_job(&database)?;
    outln!(
        "\nnext:\n  cqldb cql --db {0} -cql 'cql(variations) flipcolor {{ Ka1 mate }}'\n  \
         cqldb explain --db {0} -cql 'mate'\n  \
         cqldb sql --db {0} \"SELECT eco, count(*) FROM games GROUP BY 1 ORDER BY 2 DESC\" --format csv\n  \
         cqldb shell --db {0}\n  \
         cqldb show --db {0} 40    cqldb errors --db {0}",
        db.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The statements the demo runs on its database, each printed with its answer and time.
fn main_job(db: &Arc<Database>) -> Result<()> {
    let cql = "cql(variations) mate";
    outln!("\n== CQL: {cql}");
    let t = Instant::now();
    let mut run = CqlRun::new(cql, Source::Open(db.clone()));
    run.variations = true;
    let summary = cqldb_executor::query::run(&run)?;
    let shown: Vec<String> = summary
        .matched
        .iter()
        .take(12)
        .map(|n| n.to_string())
        .collect();
    outln!(
        "{} games have a mate, main line or variation: {}{} ({:.1} ms)",
        summary.matched.len(),
        shown.join(" "),
        if summary.matched.len() > shown.len() {
            " …"
        } else {
            ""
        },
        t.elapsed().as_secs_f64() * 1e3
    );
    let session = SqlSession::open(db.clone())?;
    for (title, sql) in [
        (
            "SQL aggregate",
            "SELECT result, count(*) AS games, round(avg(plies), 1) AS avg_plies \
             FROM games GROUP BY result ORDER BY games DESC",
        ),
        (
            "cql() joined with games",
            "SELECT g.event, count(DISTINCT m.game) AS games_with_mate \
             FROM cql('mate') m JOIN games g USING (game) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5",
        ),
        (
            "EXPLAIN: the filter goes to the index",
            "EXPLAIN SELECT count(*) FROM positions WHERE mate AND ply > 40",
        ),
    ] {
        outln!("\n== {title}: {sql}");
        let t = Instant::now();
        let answer = session.query(sql)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let mut buf = Vec::new();
        cqldb_sql::write(&mut buf, &answer, SqlFormat::Table)?;
        out!("{}", String::from_utf8_lossy(&buf));
        outln!("({ms:.1} ms)");
    }
    Ok(())
}
