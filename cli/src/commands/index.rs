//! `cqldb index`: build or append, with a progress bar.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use cqldb_indexer::{IngestOptions, IngestReport, Input, Progress, ingest};
use cqldb_storage::{DbWriter, WriterOptions};
use indicatif::{ProgressBar, ProgressStyle};

/// Indexes `inputs` into `db`; the summary goes to stderr.
pub fn run(
    inputs: &[String],
    db: &Path,
    threads: Option<usize>,
    segment_positions: u64,
    quiet: bool,
) -> Result<ExitCode> {
    let inputs: Vec<Input> = inputs.iter().map(|s| Input::parse(s)).collect();
    for i in &inputs {
        if let Input::Path(p) = i
            && !p.exists()
        {
            anyhow::bail!("{}: no such file", p.display());
        }
    }
    let mut options = IngestOptions::default();
    if let Some(t) = threads {
        options.threads = t.max(1);
    }
    let (report, elapsed) = index_inputs(&inputs, db, options, segment_positions, quiet)?;
    eprintln!(
        "indexed {} games, {} positions in {:.2}s ({:.0} games/s); {} games with problems{}",
        report.games,
        report.positions,
        elapsed.as_secs_f64(),
        report.games as f64 / elapsed.as_secs_f64().max(1e-9),
        report.games_with_issues,
        if report.games_with_issues > 0 {
            " (see `cqldb errors`)"
        } else {
            ""
        }
    );
    for f in &report.failures {
        eprintln!(
            "cqldb: {}: read failed part-way: {} (games before it were kept)",
            f.input, f.message
        );
    }
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The shared body of `index`, `demo` and `bench ingest`: ingest and commit, optionally with a bar.
pub fn index_inputs(
    inputs: &[Input],
    db: &Path,
    options: IngestOptions,
    segment_positions: u64,
    quiet: bool,
) -> Result<(IngestReport, Duration)> {
    let start = Instant::now();
    let mut writer = DbWriter::open(
        db,
        WriterOptions {
            segment_positions,
            ..WriterOptions::default()
        },
    )?;
    let progress = Progress::default();
    let total: Option<u64> = inputs.iter().map(Input::size).sum();
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let bar = match total {
            Some(t) => ProgressBar::new(t),
            None => ProgressBar::new_spinner(),
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, ETA {eta}) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    let report = std::thread::scope(|scope| {
        let ticker = scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let games = progress.games.load(Ordering::Relaxed);
                let secs = start.elapsed().as_secs_f64().max(1e-9);
                bar.set_position(progress.bytes.load(Ordering::Relaxed));
                bar.set_message(format!(
                    "{games} games, {:.0} games/s, {} with problems",
                    games as f64 / secs,
                    progress.games_with_issues.load(Ordering::Relaxed)
                ));
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let r = ingest(inputs, &mut writer, options, &progress);
        done.store(true, Ordering::Relaxed);
        let _ = ticker.join();
        r
    })?;
    bar.set_message("committing");
    writer.commit()?;
    bar.finish_and_clear();
    Ok((report, start.elapsed()))
}
