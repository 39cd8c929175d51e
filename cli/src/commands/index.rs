//! `cqldb index`: build or append, with a progress bar.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use cqldb_indexer::{IngestOptions, IngestReport, Input, Progress, ingest};
use cqldb_storage::{DbWriter, WriterOptions};
use indicatif::{ProgressBar, ProgressStyle};

/// How `cqldb index` runs.
pub struct Settings {
    /// Cores the build runs on, and as many parser threads: the reader and the writer share
    /// them (default: all cores).
    pub threads: Option<usize>,
    /// Positions per segment.
    pub segment_positions: u64,
    /// No progress bar.
    pub quiet: bool,
    /// Leave out files the database already holds.
    pub skip_duplicates: bool,
    /// Merge segments after the append as the policy says.
    pub merge: bool,
}

/// Indexes `inputs` into `db`; the summary goes to stderr.
pub fn run(inputs: &[String], db: &Path, settings: Settings) -> Result<ExitCode> {
    let Settings {
        threads,
        segment_positions,
        quiet,
        skip_duplicates,
        merge,
    } = settings;
    let inputs = expand_inputs(inputs)?;
    if db.exists() && !db.is_dir() {
        anyhow::bail!(
            "{}: exists and is not a database directory (give a new or existing database directory)",
            db.display()
        );
    }
    let mut options = IngestOptions::default();
    if let Some(t) = threads {
        options.threads = t.max(1);
    }
    let (report, elapsed) = index_inputs_checked(
        &inputs,
        db,
        options,
        segment_positions,
        quiet,
        skip_duplicates,
    )?;
    let secs = elapsed.as_secs_f64();
    let speed = super::rate(report.games, secs, "games");
    let speed = speed
        .strip_prefix(", ")
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    errln!(
        "indexed {}, {} in {:.2}s{speed}; {} with problems{}",
        super::count_of(report.games, "game"),
        super::count_of(report.positions, "position"),
        secs,
        super::count_of(report.games_with_issues, "game"),
        if report.games_with_issues > 0 {
            " (see `cqldb errors`)"
        } else {
            ""
        }
    );
    if merge && report.games > 0 {
        // After an append, only segments smaller than a full one merge (the tails of small
        // appends): a large import is not written twice; `cqldb optimize` merges further.
        let default = cqldb_indexer::merge::MergePolicy::default();
        let policy = cqldb_indexer::merge::MergePolicy {
            max_positions: default.max_positions.min(segment_positions),
            ..default
        };
        let start = Instant::now();
        let merged = super::optimize::merge_with_bar(db, policy, threads, quiet)?;
        if merged.merges > 0 {
            errln!(
                "merged segments: {}; {} segments now, in {:.2}s",
                super::optimize::said(&merged),
                merged.segments_after,
                start.elapsed().as_secs_f64()
            );
        }
    }
    let kept = if report.games == 0 {
        "nothing was indexed"
    } else {
        "games before it were kept"
    };
    for f in &report.failures {
        errln!(
            "cqldb: {}: read failed part-way: {} ({kept})",
            f.input,
            f.message
        );
    }
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The inputs named on the command line, each checked before anything is written (so a
/// mistyped or unreadable name leaves no empty database behind): `-` is stdin, a directory
/// stands for the PGN files under it (`*.pgn`, compressed or not, in name order).
fn expand_inputs(names: &[String]) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    for name in names {
        let input = Input::parse(name);
        let Input::Path(p) = &input else {
            out.push(input);
            continue;
        };
        if p.is_dir() {
            let files = pgn_files_under(p)?;
            if files.is_empty() {
                anyhow::bail!(
                    "{}: a directory without PGN files (*.pgn, *.pgn.zst, ...)",
                    p.display()
                );
            }
            out.extend(files.into_iter().map(Input::Path));
            continue;
        }
        // A regular file is opened once here to find a missing permission before anything is
        // written; a FIFO or a device is not (its one reader is the ingest: a FIFO opened and
        // closed here would end its writer's stream, and the second open would wait forever).
        match std::fs::metadata(p) {
            Ok(m) if m.is_file() => {
                if let Err(e) = std::fs::File::open(p) {
                    anyhow::bail!("{}: {e}", p.display());
                }
            }
            Ok(_) => {}
            Err(e) => anyhow::bail!("{}: {e}", p.display()),
        }
        out.push(input);
    }
    Ok(out)
}

/// The PGN files under `dir`, recursively, in path order (walked with an explicit stack).
fn pgn_files_under(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))?;
        for e in entries {
            let path = e
                .map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))?
                .path();
            if path.is_dir() {
                todo.push(path);
            } else if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().contains(".pgn"))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The shared body of `demo` and `bench ingest`: ingest and commit, optionally with a bar.
pub fn index_inputs(
    inputs: &[Input],
    db: &Path,
    options: IngestOptions,
    segment_positions: u64,
    quiet: bool,
) -> Result<(IngestReport, Duration)> {
    index_inputs_checked(inputs, db, options, segment_positions, quiet, false)
}

/// Files among `inputs` the database (or an earlier input of this run) already holds, each
/// said on the standard error; with `skip`, left out of `inputs`.
fn duplicates(writer: &DbWriter, inputs: &mut Vec<Input>, skip: bool) -> Result<()> {
    let mut known = writer.sources()?;
    let mut kept = Vec::with_capacity(inputs.len());
    for input in inputs.drain(..) {
        let Input::Path(p) = &input else {
            kept.push(input);
            continue;
        };
        let Ok(fingerprint) = cqldb_storage::fingerprint(p) else {
            kept.push(input);
            continue;
        };
        let Some(before) = known.iter().find(|r| r.fingerprint == fingerprint) else {
            known.push(cqldb_storage::SourceRecord {
                fingerprint,
                name: input.name(),
                first_game: 0,
                games: 0,
            });
            kept.push(input);
            continue;
        };
        let was = if before.games > 0 {
            format!(
                "games {}-{}, from {}",
                before.first_game,
                before.first_game + before.games - 1,
                before.name
            )
        } else {
            format!("as {}", before.name)
        };
        if skip {
            errln!(
                "cqldb: {}: the same file is already in this database ({was}); skipped (--allow-duplicates stores its games again)",
                input.name()
            );
        } else {
            errln!(
                "cqldb: warning: {}: the same file is already in this database ({was}); its games are stored again (--allow-duplicates)",
                input.name()
            );
            kept.push(input);
        }
    }
    *inputs = kept;
    Ok(())
}

fn index_inputs_checked(
    inputs: &[Input],
    db: &Path,
    options: IngestOptions,
    segment_positions: u64,
    quiet: bool,
    skip_duplicates: bool,
) -> Result<(IngestReport, Duration)> {
    let start = Instant::now();
    let mut writer = DbWriter::open(
        db,
        WriterOptions {
            segment_positions,
            ..WriterOptions::default()
        },
    )?;
    let mut inputs = inputs.to_vec();
    duplicates(&writer, &mut inputs, skip_duplicates)?;
    let inputs = &inputs[..];
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
    if let Some(f) = report.failures.iter().find(|f| f.damaged_compression) {
        bar.finish_and_clear();
        // Dropping the writer removes what it wrote: the database stays as it was.
        drop(writer);
        anyhow::bail!(
            "{}: {}; nothing was committed (games decompressed before the damage was found may hold it: gzip checks its data only at the end); repair or leave out the file and index again",
            f.input,
            f.message
        );
    }
    if report.games == 0 && !report.failures.is_empty() {
        // Nothing readable: no database is made (or changed); the failures say why.
        bar.finish_and_clear();
        drop(writer);
        return Ok((report, start.elapsed()));
    }
    bar.set_message("committing");
    writer.commit()?;
    bar.finish_and_clear();
    Ok((report, start.elapsed()))
}
