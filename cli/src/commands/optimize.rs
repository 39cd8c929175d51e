//! `cqldb optimize`, and the merging `cqldb index` does after an append: adjacent segments
//! written again as one (see `cqldb_indexer::merge`), with a progress bar.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use cqldb_indexer::Progress;
use cqldb_indexer::merge::{MergePolicy, MergeReport, merge, planned};
use indicatif::{ProgressBar, ProgressStyle};

/// Merges the segments of `db` as far as the size cap allows; the summary goes to stderr.
pub fn run(
    db: &Path,
    threads: Option<usize>,
    max_positions: Option<u64>,
    quiet: bool,
) -> Result<ExitCode> {
    if !db.is_dir() {
        anyhow::bail!("{}: no such database directory", db.display());
    }
    let mut policy = MergePolicy::everything();
    if let Some(m) = max_positions {
        policy.max_positions = m;
    }
    let start = Instant::now();
    let report = merge_with_bar(db, policy, threads, quiet)?;
    errln!(
        "{}; {} segments now (from {}) in {:.2}s",
        said(&report),
        report.segments_after,
        report.segments_before,
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// What merging did, as a sentence.
pub fn said(report: &MergeReport) -> String {
    if report.merges == 0 {
        return "nothing to merge".into();
    }
    format!(
        "{} written again in {}",
        super::count_of(report.games, "game"),
        super::count_of(report.merges as u64, "merge")
    )
}

/// Runs the merges `policy` asks for in `db`, with a bar over the games they write (none
/// when `quiet`, or when there is nothing to merge).
pub fn merge_with_bar(
    db: &Path,
    policy: MergePolicy,
    threads: Option<usize>,
    quiet: bool,
) -> Result<MergeReport> {
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let (merges, games) = planned(db, policy)?;
    if merges == 0 && !policy.greedy {
        let n = cqldb_storage::catalog::read_catalog(db)?.len();
        return Ok(MergeReport {
            segments_before: n,
            segments_after: n,
            ..MergeReport::default()
        });
    }
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(games);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} games merged ({per_sec}, ETA {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    };
    let progress = Progress::default();
    let done = std::sync::atomic::AtomicBool::new(false);
    let report = std::thread::scope(|scope| {
        let ticker = scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                bar.set_position(progress.games.load(Ordering::Relaxed));
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let r = merge(db, policy, threads, &progress);
        done.store(true, Ordering::Relaxed);
        let _ = ticker.join();
        r
    });
    bar.finish_and_clear();
    Ok(report?)
}
