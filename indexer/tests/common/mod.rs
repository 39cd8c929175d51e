//! Helpers shared by the indexer's test files: the shared data beside the repository and a
//! database built from it.

use std::path::{Path, PathBuf};

use cqldb_indexer::{IngestOptions, Input, Progress, ingest};
use cqldb_storage::{DbWriter, WriterOptions};

/// A path under ../shared.
pub fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .join(rel)
}

/// Indexes `inputs` into a new database at `dir`, segments cut at `segment_positions`.
pub fn build(dir: &Path, segment_positions: u64, inputs: &[Input]) {
    let mut w = DbWriter::open(
        dir,
        WriterOptions {
            segment_positions,
            ..WriterOptions::default()
        },
    )
    .unwrap();
    ingest(
        inputs,
        &mut w,
        IngestOptions::default(),
        &Progress::default(),
    )
    .unwrap();
    w.commit().unwrap();
}
