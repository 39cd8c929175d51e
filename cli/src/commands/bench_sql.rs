//! `cqldb bench sql`: SQL statements over a database with filter pushdown and without it, in
//! the same process (the database open and warm): rows, latency percentiles, the ratio, and
//! the peak RSS of the run.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use super::bench_query::{pct, timed};

use anyhow::Result;
use cqldb_sql::{SqlOptions, SqlSession};
use cqldb_storage::Database;

/// The fixed set: pushed flags and game attributes, a join with `cql()`, aggregates that read
/// every game, a projection of a dear column.
const STATEMENTS: [(&str, &str); 8] = [
    ("mates", "SELECT count(*) FROM positions WHERE mate"),
    (
        "stalemates with ply",
        "SELECT game, ply FROM positions WHERE stalemate AND ply < 60",
    ),
    (
        "white wins by year",
        "SELECT year, count(*) FROM games WHERE result = '1-0' AND year >= 1990 GROUP BY 1 ORDER BY 1",
    ),
    (
        "rated games",
        "SELECT count(*) FROM games WHERE white_elo >= 2600 AND black_elo >= 2600",
    ),
    (
        "cql() join",
        "SELECT g.result, count(*) FROM cql('mate') m JOIN games g USING (game) GROUP BY 1 ORDER BY 1",
    ),
    (
        "results (every game)",
        "SELECT result, count(*) FROM games GROUP BY 1 ORDER BY 1",
    ),
    (
        "mate FENs",
        "SELECT fen FROM positions WHERE mate AND game <= 20000",
    ),
    (
        "first moves",
        "SELECT san, count(*) FROM moves WHERE game <= 20000 AND position = 1 GROUP BY 1 ORDER BY 2 DESC LIMIT 5",
    ),
];

pub fn run(db: &Path, runs: usize) -> Result<ExitCode> {
    let database = Arc::new(Database::open(db)?);
    let games: u64 = database.segments().map(|(e, _)| e.games).sum();
    let opts = |pushdown| SqlOptions {
        pushdown,
        ..SqlOptions::default()
    };
    let pushed = SqlSession::with_options(database.clone(), opts(true))?;
    let plain = SqlSession::with_options(database, opts(false))?;
    outln!(
        "{} ({games} games), up to {runs} runs per statement",
        db.display()
    );
    outln!(
        "| statement | rows | pushed p50 | p90 | no pushdown p50 | ratio |\n|---|---:|---:|---:|---:|---:|"
    );
    for (name, sql) in STATEMENTS {
        let (with, rows) = timed(runs, Duration::from_secs(3), || {
            Ok(pushed.query(sql)?.rows())
        })?;
        let (without, rows_plain) =
            timed(3, Duration::from_secs(1), || Ok(plain.query(sql)?.rows()))?;
        if rows != rows_plain {
            anyhow::bail!("{name}: {rows} rows with pushdown, {rows_plain} without");
        }
        let (p50, p90, base) = (pct(&with, 0.5), pct(&with, 0.9), pct(&without, 0.5));
        outln!(
            "| {name}: `{sql}` | {rows} | {p50:.1} ms | {p90:.1} ms | {base:.1} ms | {:.0}× |",
            base / p50.max(1e-3)
        );
    }
    if let Some(rss) = super::peak_rss::peak_rss_mib() {
        outln!("peak RSS {rss:.0} MiB");
    }
    Ok(ExitCode::SUCCESS)
}
