//! `cqldb export`: every SQL table as Parquet files, one per table and segment (see
//! `cqldb_sql::export`), with a progress bar over the positions written.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use cqldb_sql::export::{ExportOptions, export};
use cqldb_storage::Database;
use indicatif::{ProgressBar, ProgressStyle};

pub fn run(db: &Path, dir: &Path, opts: &ExportOptions, quiet: bool) -> Result<ExitCode> {
    let database = Arc::new(Database::open(db)?);
    let total: u64 = database.segments().map(|(e, _)| e.positions).sum();
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} positions ({per_sec}, ETA {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    };
    let start = Instant::now();
    let report = export(&database, db, dir, opts, &|positions| bar.inc(positions));
    bar.finish_and_clear();
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            errln!("export failed: {e:#}");
            return Ok(ExitCode::from(1));
        }
    };
    let secs = start.elapsed().as_secs_f64();
    outln!(
        "exported {} segment{} to {} ({} already there{})",
        report.segments_written,
        if report.segments_written == 1 {
            ""
        } else {
            "s"
        },
        dir.display(),
        report.segments_kept,
        if report.files_removed > 0 {
            format!(", {} stale files removed", report.files_removed)
        } else {
            String::new()
        }
    );
    for (table, rows) in &report.rows {
        outln!("  {table:<10} {rows:>12} rows");
    }
    outln!(
        "{} positions, {:.1} MB, {:.2} s, {:.2} M positions/s",
        report.positions,
        report.bytes as f64 / 1e6,
        secs,
        report.positions as f64 / secs.max(1e-9) / 1e6
    );
    Ok(ExitCode::SUCCESS)
}
