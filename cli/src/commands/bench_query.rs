//! `cqldb bench query`: a fixed set of CQL queries over a database, each planned (index scans,
//! then the residual on candidate games) and as a full scan in the same process, with the
//! matches, the candidate games, in-process latency percentiles over a warm, open database,
//! the end-to-end time of the `cqldb` command, and the ratio to the full scan.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use cqldb::cql::{CqlRun, Source, run as run_query};
use cqldb_storage::Database;

/// The benchmark's queries: (what it exercises, CQL body). The first ones the index answers
/// or narrows; the last two it cannot help.
pub const QUERIES: [(&str, &str); 30] = [
    ("flag: mate", "mate"),
    ("flag: stalemate", "stalemate"),
    ("flag: check (broad)", "check"),
    (
        "material: rook ending",
        "R == 1 r == 1 B == 0 b == 0 N == 0 n == 0 Q == 0 q == 0",
    ),
    ("material: few pieces", "[Aa] <= 5"),
    ("piece on square", "Qd4"),
    ("pieces on squares", "Kg1 kg8 Rf1"),
    ("tag: player white", "player white \"Capablanca\""),
    ("tag: event", "event \"Olympiad\""),
    ("result and flag", "result 0-1 mate"),
    ("ratings", "elo white >= 2700 elo black >= 2700"),
    ("year and flag", "year < 1900 mate"),
    ("flipcolor", "flipcolor { Pa-h7 check }"),
    ("tag and flag", "mate player \"Carlsen\""),
    ("pieces and geometry", "mate Qh7 flipcolor { B attacks k }"),
    ("game range", "cql(gamenumber 100 110) check"),
    ("move: promotion", "move promote N"),
    (
        "fen",
        "fen \"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R\"",
    ),
    // A placement met once (game 5,000 of the three large files, move 26): no segment keeps a
    // bitmap of its own for it.
    (
        "fen: middlegame",
        "fen \"r7/p2k1ppp/4p3/2p5/R7/1P4P1/P3PP1P/6K1\"",
    ),
    // The negation of a broad flag: the complement of its bitmap within the main line.
    ("negation: not check", "not check"),
    ("no index: attack", "K attacks q"),
    // White ahead by more than a rook in piece values: a sum over the board, which no
    // bitmap holds.
    ("no index: power", "power A >= power a + 6"),
    // The game-tree filters: what must hold at some position of a path or a find prunes games.
    ("path: check, mate", "path -- check -- mate"),
    ("line: 6 checks in a row", "line --> check{6,}"),
    ("find: mate ahead", "initial find mate Q == 0"),
    (
        "echo: same board twice",
        "mate echo (s t) { s < t  s & t == . }",
    ),
    ("sort: by ply", "mate sort \"Ply\" ply"),
    // A transform nest against its untransformed query (the nest is 4 × 8 × 64 images).
    ("untransformed", "Kg1 Rf1 Pg2 kg8"),
    (
        "nested transforms",
        "rotate90 flipcolor shift { Kg1 Rf1 Pg2 kg8 }",
    ),
    ("no index: attack chain", "Q -> p -> k"),
];

/// Answers larger than this are not written in the benchmark.
const MAX_WRITTEN: usize = 5_000;

/// Answers up to this size are also written by the command ("cli out"): the size the
/// end-to-end target is set for.
const MAX_WRITTEN_BY_CLI: usize = 2_000;

fn run_for(body: &str, source: Source, full_scan: bool, output: Option<PathBuf>) -> CqlRun {
    let query = if body.starts_with("cql(") {
        body.to_owned()
    } else {
        format!("cql()\n{body}")
    };
    CqlRun {
        query_name: "bench".into(),
        output,
        full_scan,
        ..CqlRun::new(query, source)
    }
}

/// Times `f` until `budget` is spent (at least 3 and at most `max` runs); sorted times in ms
/// and the last run's outcome.
pub(super) fn timed<T: Default>(
    max: usize,
    budget: Duration,
    mut f: impl FnMut() -> Result<T>,
) -> Result<(Vec<f64>, T)> {
    let start = Instant::now();
    let mut times = Vec::new();
    let mut last = T::default();
    while times.len() < 3 || (times.len() < max && start.elapsed() < budget) {
        let t = Instant::now();
        last = f()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok((times, last))
}

pub(super) fn pct(times: &[f64], p: f64) -> f64 {
    times[((times.len() - 1) as f64 * p).round() as usize]
}

/// The queries one benchmark run times: the fixed set (or those of it whose name contains a
/// text), or queries given on the command line.
pub struct QuerySet(Vec<(String, String)>);

impl QuerySet {
    /// `given` when there are any (named by their text), otherwise the fixed set filtered by
    /// `only`.
    pub fn new(given: Vec<String>, only: Option<String>) -> Self {
        let keep = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
        if given.is_empty() {
            return Self(
                QUERIES
                    .iter()
                    .filter(|(name, _)| keep(name))
                    .map(|&(name, body)| (name.to_owned(), body.to_owned()))
                    .collect(),
            );
        }
        Self(
            given
                .into_iter()
                .map(|body| (body.split_whitespace().collect::<Vec<_>>().join(" "), body))
                .filter(|(name, _)| keep(name))
                .collect(),
        )
    }
}

/// Runs the benchmark over each database (without `full_scan`, no query's full scan is run).
pub fn run(
    dbs: Vec<PathBuf>,
    runs: usize,
    queries: &QuerySet,
    full_scan: bool,
) -> Result<ExitCode> {
    let exe = std::env::current_exe()?;
    for dir in dbs {
        let opened = Instant::now();
        let db = Arc::new(Database::open(&dir)?);
        let open_ms = opened.elapsed().as_secs_f64() * 1e3;
        outln!(
            "cqldb bench query: {} ({} games, {} positions; opened in {open_ms:.0} ms)",
            dir.display(),
            db.game_count(),
            db.segments().map(|(e, _)| e.positions).sum::<u64>()
        );
        outln!(
            "{:<24} {:>8} {:>9} | {:>8} {:>8} {:>8} | {:>9} {:>8} | {:>9} {:>9} {:>7} | {:>9}",
            "query",
            "matches",
            "cand.",
            "p50 ms",
            "p99 ms",
            "out ms",
            "full ms",
            "ratio",
            "cli ms",
            "cli out",
            "plan",
            "scanned"
        );
        for (name, body) in &queries.0 {
            let (name, body) = (name.as_str(), body.as_str());
            let source = || Source::Open(db.clone());
            let (planned, s) = timed(runs, Duration::from_secs(3), || {
                run_query(&run_for(body, source(), false, None))
            })?;
            let p50 = pct(&planned, 0.5);
            let plan = s.plan.clone();
            let candidates = match plan.as_ref().and_then(|p| p.candidates.as_ref()) {
                Some(_) => s.stats.scans.first().map_or(0, |t| t.games),
                None => db.game_count(),
            };
            let kind = match &plan {
                Some(p) if p.residual == cqldb_planner::plan::Residual::None => "index",
                Some(p) if p.candidates.is_some() => "pruned",
                _ => "full",
            };
            // Writing the matching games (PGN to a discarded file), for answers of a size one
            // reads (larger ones measure the PGN writer, not the plan).
            let sink =
                std::env::temp_dir().join(format!("cqldb-bench-query-{}.pgn", std::process::id()));
            let out = if s.matched.len() <= MAX_WRITTEN {
                let (out, written) = timed(runs.min(5), Duration::from_secs(2), || {
                    run_query(&run_for(body, source(), false, Some(sink.clone())))
                })?;
                let _ = std::fs::remove_file(&sink);
                if written.matched != s.matched {
                    anyhow::bail!("{name}: writing the games found other games");
                }
                format!("{:.1}", pct(&out, 0.5))
            } else {
                "-".to_owned()
            };
            let (full_ms, ratio) = if full_scan {
                let (full, f) = timed(1, Duration::ZERO, || {
                    run_query(&run_for(body, source(), true, None))
                })?;
                if f.matched != s.matched {
                    anyhow::bail!("{name}: planned and full-scan answers differ");
                }
                let full = pct(&full, 0.5);
                (
                    format!("{full:.0}"),
                    format!("{:.1}x", full / p50.max(1e-6)),
                )
            } else {
                ("-".to_owned(), "-".to_owned())
            };
            let cli = cli_ms(&exe, body, &dir, None)?;
            // The command writing the games, for answers of a size one reads.
            let cli_out = if s.matched.len() <= MAX_WRITTEN_BY_CLI {
                let ms = cli_ms(&exe, body, &dir, Some(&sink))?;
                let _ = std::fs::remove_file(&sink);
                format!("{ms:.0}")
            } else {
                "-".to_owned()
            };
            outln!(
                "{:<24} {:>8} {:>9} | {:>8.1} {:>8.1} {:>8} | {:>9} {:>8} | {:>9.0} {:>9} {:>7} | {:>9}",
                name,
                s.matched.len(),
                candidates,
                p50,
                pct(&planned, 0.99),
                out,
                full_ms,
                ratio,
                cli,
                cli_out,
                kind,
                s.positions
            );
        }
        // While the database is still open: its mapped pages count as resident.
        if let Some((anon, file)) = super::peak_rss::rss_split_mib() {
            outln!(
                "resident now: {anon:.0} MiB anonymous (heap, stacks), {file:.0} MiB of mapped files (database pages the kernel can drop)"
            );
        }
    }
    if let Some(rss) = super::peak_rss::peak_rss_mib() {
        outln!("peak RSS: {rss:.0} MiB");
    }
    Ok(ExitCode::SUCCESS)
}

/// Median wall time of `cqldb cql -cql BODY --db DIR` (three runs), counting only or (with
/// `output`) writing the matching games there.
fn cli_ms(exe: &Path, body: &str, db: &Path, output: Option<&Path>) -> Result<f64> {
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let mut cmd = std::process::Command::new(exe);
        if let Some(header_end) = body.strip_prefix("cql(").and_then(|b| b.find(')')) {
            let file = std::env::temp_dir().join(format!("cqldb-bench-{}.cql", std::process::id()));
            std::fs::write(&file, body)?;
            let _ = header_end;
            cmd.arg("cql").arg(&file);
        } else {
            cmd.args(["cql", "-cql", body]);
        }
        cmd.arg("--db").arg(db);
        match output {
            Some(o) => cmd.arg("-o").arg(o),
            None => cmd.arg("--count"),
        };
        let out = cmd.output()?;
        if !out.status.success() {
            anyhow::bail!("cqldb cql {body}: {}", String::from_utf8_lossy(&out.stderr));
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[1])
}
