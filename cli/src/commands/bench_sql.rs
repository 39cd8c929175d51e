//! `cqldb bench sql`: SQL statements over a database in one process (the database open and
//! warm) with filter pushdown and without it, as a command, and — given `--parquet DIR`, an
//! export of the same database — through DataFusion's own Parquet scan with no index: rows,
//! rows scanned, latency percentiles, the ratios, and the peak RSS of the run.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use super::bench_query::{pct, timed};

use anyhow::{Context, Result};
use cqldb_sql::{SqlOptions, SqlSession};
use cqldb_storage::Database;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Position};

/// One benchmarked statement.
struct Statement {
    name: &'static str,
    sql: String,
    /// It reads only plain columns (no `cql()`, no chess function, no `fen`), so it also runs
    /// over a Parquet export.
    plain: bool,
}

/// The fixed set: the documented examples (aggregates over every game, an opening tree, a
/// material pattern per year, `cql()` joins) and statements whose filters are pushed.
fn statements() -> Vec<Statement> {
    let mut after = Chess::default();
    for m in ["e4", "c5"] {
        if let Ok(mv) = m
            .parse::<shakmaty::san::San>()
            .map_err(|_| ())
            .and_then(|s| s.to_move(&after).map_err(|_| ()))
        {
            after.play_unchecked(mv);
        }
    }
    let sicilian = after.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0;
    let s = |name, sql: &str, plain| Statement {
        name,
        sql: sql.to_owned(),
        plain,
    };
    vec![
        s("mates", "SELECT count(*) FROM positions WHERE mate", true),
        s(
            "stalemates with ply",
            "SELECT game, ply FROM positions WHERE stalemate AND ply < 60",
            true,
        ),
        s(
            "white wins by year",
            "SELECT year, count(*) FROM games WHERE result = '1-0' AND year >= 1990 GROUP BY 1 ORDER BY 1",
            true,
        ),
        s(
            "rated games",
            "SELECT count(*) FROM games WHERE white_elo >= 2600 AND black_elo >= 2600",
            true,
        ),
        s(
            "a player's games",
            "SELECT result, count(*) FROM games WHERE white LIKE '%Carlsen%' GROUP BY 1",
            true,
        ),
        s(
            "rook endings",
            "SELECT count(DISTINCT game) FROM positions WHERE material = 'KRPkr'",
            true,
        ),
        s(
            "results per decade",
            "SELECT result, (year / 10) * 10 AS decade, count(*) FROM games GROUP BY 1, 2 ORDER BY 1, 2",
            true,
        ),
        s(
            "top ECO per decade",
            "SELECT decade, eco, n FROM (SELECT (year / 10) * 10 AS decade, eco, count(*) AS n, \
             row_number() OVER (PARTITION BY (year / 10) * 10 ORDER BY count(*) DESC, eco) AS rk \
             FROM games WHERE eco IS NOT NULL AND year IS NOT NULL GROUP BY 1, 2) WHERE rk <= 3 \
             ORDER BY decade, n DESC",
            true,
        ),
        s(
            "most wins with black",
            "SELECT black, count(*) FROM games WHERE result = '0-1' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
            true,
        ),
        s(
            "length by result",
            "SELECT result, avg(plies) FROM games GROUP BY 1 ORDER BY 1",
            true,
        ),
        s(
            "longest games",
            "SELECT game, plies FROM games ORDER BY plies DESC, game LIMIT 5",
            true,
        ),
        s(
            "opening tree after 1.e4 c5",
            &format!(
                "SELECT m.san, count(DISTINCT m.game) AS games, avg(CASE g.result WHEN '1-0' THEN 1.0 \
                 WHEN '0-1' THEN 0.0 WHEN '1/2-1/2' THEN 0.5 END) AS score \
                 FROM positions p JOIN moves m ON m.game = p.game AND m.parent = p.position \
                 JOIN games g ON g.game = m.game \
                 WHERE p.mainline AND p.zobrist = {sicilian} GROUP BY 1 ORDER BY 2 DESC LIMIT 10"
            ),
            true,
        ),
        s(
            "cql() join: opening tree after 1.e4 c5",
            "SELECT m.san, count(DISTINCT m.game) AS games, avg(CASE g.result WHEN '1-0' THEN 1.0 \
             WHEN '0-1' THEN 0.0 WHEN '1/2-1/2' THEN 0.5 END) AS score \
             FROM cql('mainline fen \"rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\"') c \
             JOIN moves m ON m.game = c.game AND m.parent = c.position \
             JOIN games g ON g.game = m.game GROUP BY 1 ORDER BY 2 DESC LIMIT 10",
            false,
        ),
        s(
            "two bishops v two knights per year",
            "SELECT g.year, count(*) FROM positions p JOIN games g USING (game) \
             WHERE strpos(p.material, 'BB') > 0 AND strpos(p.material, 'N') = 0 \
             AND strpos(p.material, 'nn') > 0 AND strpos(p.material, 'b') = 0 GROUP BY 1 ORDER BY 1",
            true,
        ),
        s(
            "cql() join: mates per player",
            "SELECT CASE WHEN p.wtm THEN g.black ELSE g.white END, count(*) FROM cql('mate') m \
             JOIN positions p USING (game, position) JOIN games g USING (game) \
             GROUP BY 1 ORDER BY 2 DESC LIMIT 10",
            false,
        ),
        s(
            "cql() join: underpromotions by year",
            "SELECT g.year, count(*) FROM cql('move previous promote [RBN]') c \
             JOIN games g USING (game) GROUP BY 1 ORDER BY 1",
            false,
        ),
        s(
            "mate FENs",
            "SELECT fen FROM positions WHERE mate AND game <= 20000",
            false,
        ),
    ]
}

pub fn run(db: &Path, runs: usize, parquet: Option<&PathBuf>) -> Result<ExitCode> {
    let database = Arc::new(Database::open(db)?);
    let games: u64 = database.segments().map(|(e, _)| e.games).sum();
    let opts = |pushdown| SqlOptions {
        pushdown,
        ..SqlOptions::default()
    };
    let pushed = SqlSession::with_options(database.clone(), opts(true))?;
    let plain = SqlSession::with_options(database, opts(false))?;
    let export = match parquet {
        Some(dir) => Some(SqlSession::over_parquet(
            dir,
            SqlOptions::default().threads,
        )?),
        None => None,
    };
    outln!(
        "{} ({games} games), up to {runs} runs per statement{}",
        db.display(),
        parquet.map_or(String::new(), |p| format!(
            ", Parquet export {}",
            p.display()
        ))
    );
    outln!(
        "| statement | rows | scanned | scanned without pushdown | p50 | p90 | as a command p50 | \
         no pushdown p50 | ratio | Parquet p50 | ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for st in statements() {
        let (name, sql) = (st.name, st.sql.as_str());
        let before = pushed.rows_scanned();
        let (with, rows) = timed(runs, Duration::from_secs(3), || {
            Ok(pushed.query(sql)?.rows())
        })?;
        let scanned = (pushed.rows_scanned() - before) / with.len() as u64;
        let before = plain.rows_scanned();
        let (without, rows_plain) =
            timed(3, Duration::from_secs(1), || Ok(plain.query(sql)?.rows()))?;
        let scanned_plain = (plain.rows_scanned() - before) / without.len() as u64;
        if rows != rows_plain {
            anyhow::bail!("{name}: {rows} rows with pushdown, {rows_plain} without");
        }
        let command = command_p50(db, sql)?;
        let parquet_p50 = match (&export, st.plain) {
            (Some(x), true) => {
                let (times, rows_parquet) =
                    timed(3, Duration::from_secs(1), || Ok(x.query(sql)?.rows()))?;
                if rows_parquet != rows {
                    anyhow::bail!("{name}: {rows} rows, {rows_parquet} over the Parquet export");
                }
                Some(pct(&times, 0.5))
            }
            _ => None,
        };
        let (p50, p90, base) = (pct(&with, 0.5), pct(&with, 0.9), pct(&without, 0.5));
        let (parquet_cell, parquet_ratio) = match parquet_p50 {
            Some(p) => (format!("{p:.1} ms"), format!("{:.1}×", p / p50.max(1e-3))),
            None => ("–".into(), "–".into()),
        };
        outln!(
            "| {name}: `{sql}` | {rows} | {scanned} | {scanned_plain} | {p50:.1} ms | {p90:.1} ms | \
             {command:.0} ms | {base:.1} ms | {:.1}× | {parquet_cell} | {parquet_ratio} |",
            base / p50.max(1e-3)
        );
    }
    if let Some(rss) = super::peak_rss::peak_rss_mib() {
        outln!("peak RSS {rss:.0} MiB");
    }
    Ok(ExitCode::SUCCESS)
}

/// The statement's median time as a command (`cqldb sql ... --format csv`, output discarded):
/// what a script pays per call, opening the database included.
fn command_p50(db: &Path, sql: &str) -> Result<f64> {
    let exe = std::env::current_exe().context("finding the cqldb binary")?;
    let (times, ()) = timed(3, Duration::from_secs(2), || {
        let status = Command::new(&exe)
            .args(["sql", sql, "--format", "csv", "--db"])
            .arg(db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        anyhow::ensure!(status.success(), "cqldb sql failed: {status}");
        Ok(())
    })?;
    Ok(pct(&times, 0.5))
}
