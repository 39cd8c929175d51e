//! `cqldb demo`: index the bundled sample and print `info`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_indexer::{IngestOptions, Input};
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
    out!("{}", super::info::render(&Database::open(db)?)?);
    outln!(
        "\ntry: cqldb positions --db {0} 1 | head    cqldb show --db {0} 40    cqldb errors --db {0}",
        db.display()
    );
    Ok(ExitCode::SUCCESS)
}
