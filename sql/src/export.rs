//! Exporting a database as Parquet: every table as `DIR/<table>/seg-<id>.parquet`, one file
//! per table and segment, the partitioned layout DuckDB, Polars, Spark and DataFusion read as
//! one table per folder.
//!
//! Why per segment: a segment never changes once committed, so a second export after an
//! append writes only the new segments' files (a manifest, `DIR/cqldb-export.json`, records
//! which segments the folder holds), and files of segments no longer in the database are
//! removed. Each file is written under a temporary name and renamed when complete, and the
//! manifest last: an interrupted export leaves the previous export readable.
//!
//! Memory stays bounded: a segment is decoded a chunk of games at a time, each chunk's rows go
//! to the five writers, and a writer holds at most one row group.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, bail};
use cqldb_storage::output_file::AtomicFile;
use cqldb_storage::{Database, Pages, SegmentEntry};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;

use crate::decode::{Chunks, GameSet, Reading};
use crate::selection::Selection;
use crate::tables::Table;

/// The manifest's file name inside an export folder.
pub const MANIFEST: &str = "cqldb-export.json";

/// Rows per Parquet row group: large enough for scans to skip by statistics, small enough that
/// a writer's buffer stays a few tens of MB.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// What to export.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Include `positions.fen` (a text per position: it triples the export's size and time,
    /// and the bitboards, `wtm` and `zobrist` hold the board).
    pub with_fen: bool,
    /// Rewrite every segment's files, not only the new ones.
    pub rewrite: bool,
}

/// What an export did.
#[derive(Clone, Debug, Default)]
pub struct ExportReport {
    /// Segments whose files were written.
    pub segments_written: usize,
    /// Segments already exported and kept.
    pub segments_kept: usize,
    /// Files of segments no longer in the database, removed.
    pub files_removed: usize,
    /// Rows written per table.
    pub rows: BTreeMap<&'static str, u64>,
    /// Positions of the written segments.
    pub positions: u64,
    /// Bytes of the written files.
    pub bytes: u64,
}

/// One segment of the database as the manifest records it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Exported {
    id: u64,
    first_game: u64,
    games: u64,
    positions: u64,
    with_fen: bool,
}

/// The file of `table` for segment `id`.
pub fn file_name(id: u64) -> String {
    format!("seg-{id:06}.parquet")
}

/// The columns an export writes of `table`.
pub fn exported_columns(table: Table, with_fen: bool) -> Vec<usize> {
    table
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, (name, _))| with_fen || !(table == Table::Positions && *name == "fen"))
        .map(|(i, _)| i)
        .collect()
}

/// Exports `db` (read from `db_dir`) into `dir`; `progress` gets the positions of each
/// segment written, as it completes.
pub fn export(
    db: &Arc<Database>,
    db_dir: &Path,
    dir: &Path,
    opts: &ExportOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ExportReport> {
    let identity = std::fs::canonicalize(db_dir)
        .with_context(|| format!("cannot read {}", db_dir.display()))?;
    let previous = prepare_dir(dir, &identity)?;
    let segments: Vec<(SegmentEntry, Exported)> = db
        .segments()
        .map(|(e, _)| {
            let x = Exported {
                id: e.id,
                first_game: e.first_game,
                games: e.games,
                positions: e.positions,
                with_fen: opts.with_fen,
            };
            (*e, x)
        })
        .collect();
    let todo: Vec<&(SegmentEntry, Exported)> = segments
        .iter()
        .filter(|(_, x)| opts.rewrite || !previous.contains(x) || !files_present(dir, x.id))
        .collect();
    for t in Table::ALL {
        std::fs::create_dir_all(dir.join(t.name()))
            .with_context(|| format!("cannot create {}", dir.join(t.name()).display()))?;
    }
    let rows: Vec<AtomicU64> = Table::ALL.iter().map(|_| AtomicU64::new(0)).collect();
    let bytes = AtomicU64::new(0);
    todo.par_iter().try_for_each(|(entry, x)| {
        let written = export_segment(db, entry, dir, opts.with_fen)?;
        for (i, n) in written.rows.iter().enumerate() {
            rows[i].fetch_add(*n, Ordering::Relaxed);
        }
        bytes.fetch_add(written.bytes, Ordering::Relaxed);
        progress(x.positions);
        Ok::<_, anyhow::Error>(())
    })?;
    let keep: std::collections::HashSet<u64> = segments.iter().map(|(_, x)| x.id).collect();
    let files_removed = remove_stale(dir, &keep)?;
    write_manifest(dir, &identity, segments.iter().map(|(_, x)| x))?;
    Ok(ExportReport {
        segments_written: todo.len(),
        segments_kept: segments.len() - todo.len(),
        files_removed,
        rows: Table::ALL
            .iter()
            .zip(&rows)
            .map(|(t, n)| (t.name(), n.load(Ordering::Relaxed)))
            .collect(),
        positions: todo.iter().map(|(_, x)| x.positions).sum(),
        bytes: bytes.load(Ordering::Relaxed),
    })
}

/// Checks that `dir` is new, empty or an export of the same database, and returns what its
/// manifest says was exported.
fn prepare_dir(dir: &Path, identity: &Path) -> Result<Vec<Exported>> {
    if let Some(db) = cqldb_storage::output_file::enclosing_database(dir) {
        bail!(
            "{} is inside the database {}: export elsewhere",
            dir.display(),
            db.display()
        );
    }
    if cqldb_storage::output_file::is_database_dir(dir, true) {
        bail!("{} is a database: export elsewhere", dir.display());
    }
    if !dir.exists() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        return Ok(Vec::new());
    }
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let manifest = dir.join(MANIFEST);
    if !manifest.exists() {
        let mut entries =
            std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        if entries.next().is_some() {
            bail!(
                "{} is not empty and holds no cqldb export ({MANIFEST}): choose a new or empty \
                 directory",
                dir.display()
            );
        }
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    let (db, segments) =
        parse_manifest(&text).with_context(|| format!("{} is damaged", manifest.display()))?;
    if db != identity {
        bail!(
            "{} holds an export of {}, not of {}: choose another directory",
            dir.display(),
            db.display(),
            identity.display()
        );
    }
    Ok(segments)
}

fn files_present(dir: &Path, id: u64) -> bool {
    Table::ALL
        .iter()
        .all(|t| dir.join(t.name()).join(file_name(id)).is_file())
}

/// What one segment's export wrote.
struct SegmentWritten {
    rows: Vec<u64>,
    bytes: u64,
}

fn export_segment(
    db: &Arc<Database>,
    entry: &SegmentEntry,
    dir: &Path,
    with_fen: bool,
) -> Result<SegmentWritten> {
    let mut writers = Vec::new();
    for t in Table::ALL {
        let columns = exported_columns(t, with_fen);
        let schema: SchemaRef = Arc::new(t.schema().project(&columns)?);
        let path = dir.join(t.name()).join(file_name(entry.id));
        let file = AtomicFile::create(&path)?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(properties()))?;
        writers.push((t, columns, schema, writer, path));
    }
    let set = GameSet::Range(entry.first_game, entry.first_game + entry.games);
    // An export reads each segment once, whoever asks for it: its pages are released after.
    let mut chunks = Chunks::new(db.clone(), set, Reading::PositionsAndText, Pages::Release);
    let mut rows = vec![0u64; writers.len()];
    while let Some(games) = chunks.next_chunk() {
        let games = games?;
        for (i, (t, columns, schema, writer, _)) in writers.iter_mut().enumerate() {
            let arrays = t.arrays(&games, &Selection::Every, columns)?;
            let batch = RecordBatch::try_new(schema.clone(), arrays)?;
            rows[i] += batch.num_rows() as u64;
            writer.write(&batch)?;
        }
    }
    let mut bytes = 0;
    for (_, _, _, writer, path) in writers {
        let file = writer.into_inner()?;
        file.commit()?;
        bytes += std::fs::metadata(&path).map_or(0, |m| m.len());
    }
    Ok(SegmentWritten { rows, bytes })
}

/// zstd, row groups of [`ROW_GROUP_ROWS`]. (Dictionaries stay on for every column: switched
/// off for the hashes, bitboards and ids, the export was no faster and a fifth larger.)
fn properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build()
}

/// Removes `seg-*.parquet` files of segments not in `keep` (merged or gone), and temporary
/// files an interrupted export left; returns how many files were removed.
fn remove_stale(dir: &Path, keep: &std::collections::HashSet<u64>) -> Result<usize> {
    let mut removed = 0;
    for t in Table::ALL {
        let folder = dir.join(t.name());
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let stale = match segment_id(&name) {
                Some(id) => !keep.contains(&id),
                None => name.starts_with(".seg-") && name.ends_with(".cqldb-tmp"),
            };
            if stale {
                let p: PathBuf = e.path();
                std::fs::remove_file(&p)
                    .with_context(|| format!("cannot remove {}", p.display()))?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// The segment id of an export file's name.
fn segment_id(name: &str) -> Option<u64> {
    name.strip_prefix("seg-")?
        .strip_suffix(".parquet")?
        .parse()
        .ok()
}

fn write_manifest<'a>(
    dir: &Path,
    identity: &Path,
    segments: impl Iterator<Item = &'a Exported>,
) -> Result<()> {
    let segments: Vec<serde_json::Value> = segments
        .map(|x| {
            serde_json::json!({
                "id": x.id,
                "first_game": x.first_game,
                "games": x.games,
                "positions": x.positions,
                "with_fen": x.with_fen,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "format": "cqldb parquet export 1",
        "database": identity.to_string_lossy(),
        "layout": "<table>/seg-<segment id>.parquet",
        "segments": segments,
    });
    let mut f = AtomicFile::create(&dir.join(MANIFEST))?;
    use std::io::Write;
    f.write_all(serde_json::to_string_pretty(&doc)?.as_bytes())?;
    f.write_all(b"\n")?;
    f.commit()?;
    Ok(())
}

fn parse_manifest(text: &str) -> Result<(PathBuf, Vec<Exported>)> {
    let doc: serde_json::Value = serde_json::from_str(text)?;
    let db = doc["database"]
        .as_str()
        .context("no \"database\" field")?
        .into();
    let mut out = Vec::new();
    for s in doc["segments"].as_array().context("no \"segments\" list")? {
        let n = |k: &str| {
            s[k].as_u64()
                .with_context(|| format!("a segment without {k}"))
        };
        out.push(Exported {
            id: n("id")?,
            first_game: n("first_game")?,
            games: n("games")?,
            positions: n("positions")?,
            with_fen: s["with_fen"].as_bool().unwrap_or(false),
        });
    }
    Ok((db, out))
}
