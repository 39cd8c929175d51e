//! `cqldb bench ...`: throughput measurements with a baseline run in the same process.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::Subcommand;
use cqldb_indexer::{IngestOptions, Input};
use cqldb_storage::Database;

/// What to benchmark.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Index PGN files and compare with a bare pgn-reader + shakmaty replay of the same input.
    Ingest {
        /// Inputs (default: every file in ../shared/data/large).
        inputs: Vec<PathBuf>,
        /// Parser threads for cqldb (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Keep the database here instead of a temporary directory.
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// Decode every position block of a database and count mates, against the mate bitmap.
    Scan {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
    },
}

/// Runs a benchmark.
pub fn run(cmd: BenchCommand) -> Result<ExitCode> {
    match cmd {
        BenchCommand::Ingest {
            inputs,
            threads,
            db,
        } => ingest(inputs, threads, db),
        BenchCommand::Scan { db } => scan(&db),
    }
}

/// Full decode of the position columns (one thread) versus the same count from a bitmap.
fn scan(db: &std::path::Path) -> Result<ExitCode> {
    use cqldb_storage::{BitmapKey, PositionFlags};
    let database = Database::open(db)?;
    let start = Instant::now();
    let (mut positions, mut mates) = (0u64, 0u64);
    for (_, seg) in database.segments() {
        for b in 0..seg.block_count() {
            let block = seg.block(b)?;
            positions += block.positions.len() as u64;
            mates += block
                .positions
                .iter()
                .filter(|p| p.flags.contains(PositionFlags::MATE))
                .count() as u64;
        }
    }
    let scan_secs = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let from_bitmap = database.bitmap_count(BitmapKey::flag(PositionFlags::MATE))?;
    let bitmap_secs = start.elapsed().as_secs_f64();
    println!("cqldb bench scan: {positions} positions");
    println!(
        "full decode (1 thread): {mates} mates in {scan_secs:.2}s = {:.1} M positions/s",
        positions as f64 / scan_secs / 1e6
    );
    println!(
        "mate bitmap:            {from_bitmap} mates in {:.2} ms ({:.0}x faster)",
        bitmap_secs * 1e3,
        scan_secs / bitmap_secs.max(1e-9)
    );
    if from_bitmap != mates {
        anyhow::bail!("bitmap and scan disagree: {from_bitmap} vs {mates}");
    }
    Ok(ExitCode::SUCCESS)
}

fn default_inputs() -> Result<Vec<PathBuf>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/large");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| anyhow::anyhow!("{}: {e} (pass input files explicitly)", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

struct Counting<R>(R, u64);

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        self.1 += n as u64;
        Ok(n)
    }
}

fn ingest(inputs: Vec<PathBuf>, threads: Option<usize>, db: Option<PathBuf>) -> Result<ExitCode> {
    let inputs = if inputs.is_empty() {
        default_inputs()?
    } else {
        inputs
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "cqldb bench ingest: {} input file(s), {cores} core(s)",
        inputs.len()
    );

    // Baseline: decompress + pgn-reader + shakmaty replay, one thread.
    let start = Instant::now();
    let mut base = cqldb_bench_data::baseline::ReplayStats::default();
    let mut raw_bytes = 0u64;
    for p in &inputs {
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut reader = Counting(Input::Path(p.clone()).open(counter)?, 0);
        let s = cqldb_bench_data::baseline::replay(&mut reader)?;
        raw_bytes += reader.1;
        base.games += s.games;
        base.positions += s.positions;
        base.bad_moves += s.bad_moves;
    }
    let base_secs = start.elapsed().as_secs_f64();

    // cqldb: split + parse + tree + columns + bitmaps + tag index + commit.
    let tmp;
    let db_dir = match db {
        Some(d) => d,
        None => {
            tmp = std::env::temp_dir().join(format!("cqldb-bench-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&tmp);
            tmp.clone()
        }
    };
    let mut options = IngestOptions::default();
    if let Some(t) = threads {
        options.threads = t.max(1);
    }
    let ins: Vec<Input> = inputs.iter().cloned().map(Input::Path).collect();
    let (report, elapsed) = super::index::index_inputs(
        &ins,
        &db_dir,
        options,
        cqldb_storage::WriterOptions::default().segment_positions,
        true,
    )?;
    let secs = elapsed.as_secs_f64();
    let stats = Database::open(&db_dir)?.stats()?;
    let mb = raw_bytes as f64 / 1e6;

    println!(
        "{:<28} {:>10} {:>13} {:>11} {:>11} {:>8}",
        "run", "games", "positions", "games/s", "pos/s", "MB/s"
    );
    let row = |name: &str, games: u64, positions: u64, s: f64| {
        println!(
            "{name:<28} {games:>10} {positions:>13} {:>11.0} {:>11.0} {:>8.1}",
            games as f64 / s,
            positions as f64 / s,
            mb / s
        );
    };
    row(
        "baseline replay (1 thread)",
        base.games,
        base.positions,
        base_secs,
    );
    row(
        &format!("cqldb index ({} threads)", options.threads),
        report.games,
        report.positions,
        secs,
    );
    println!(
        "ratio (input MB/s, cqldb / baseline): {:.2}   [target >= 0.50]",
        base_secs / secs
    );
    println!(
        "on disk: {} bytes, {:.2} bytes/position   [target <= 24]",
        stats.bytes,
        stats.bytes as f64 / stats.positions.max(1) as f64
    );
    if let Some(rss) = peak_rss_mib() {
        println!("peak RSS: {rss:.0} MiB   [target < 1024]");
    }
    println!(
        "games with problems: {} (baseline bad moves: {})",
        report.games_with_issues, base.bad_moves
    );
    if db_dir.starts_with(std::env::temp_dir()) {
        let _ = std::fs::remove_dir_all(&db_dir);
    }
    Ok(ExitCode::SUCCESS)
}
