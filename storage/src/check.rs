//! `cqldb check`: every file of a database read whole and compared with what was committed.
//!
//! Queries check what they read as they read it; this reads everything, so damage is found
//! before a query needs the damaged part, and says for each file whether it is intact.

use std::path::{Path, PathBuf};

use crate::catalog::{CATALOG_FILE, SegmentEntry, read_redb_entries};
use crate::error::StorageError;
use crate::manifest::{MANIFEST_FILE, Manifest};
use crate::segment::Segment;
use crate::tags::TagReader;

/// What was found of one file (or directory) of the database.
#[derive(Debug)]
pub struct Finding {
    /// The file.
    pub path: PathBuf,
    /// `None` when intact, else what is wrong.
    pub damage: Option<String>,
    /// What it is (for the report).
    pub what: &'static str,
    /// Whether `cqldb repair` can rebuild it from the rest.
    pub repairable: bool,
}

/// Checks every file of the database in `dir`.
pub fn check(dir: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest = Manifest::read(dir);
    let redb_path = dir.join(CATALOG_FILE);
    let redb = read_redb_entries(dir);
    let finding = |path: PathBuf, what, damage: Option<String>, repairable| Finding {
        path,
        damage,
        what,
        repairable,
    };
    let m_ok = matches!(&manifest, Ok(Some(_)));
    let r_ok = redb.is_ok();
    out.push(finding(
        manifest_path,
        "catalog manifest",
        match &manifest {
            Ok(Some(_)) => None,
            Ok(None) => Some("missing (written by the next append or `cqldb repair`)".into()),
            Err(e) => Some(e.to_string()),
        },
        r_ok,
    ));
    out.push(finding(
        redb_path,
        "catalog",
        redb.as_ref().err().map(ToString::to_string),
        m_ok,
    ));
    let entries: Vec<SegmentEntry> = match (&manifest, &redb) {
        (Ok(Some(m)), Ok((_, r))) => {
            if &m.segments != r {
                out.push(if crate::catalog::lacks_segments(r, m) {
                    finding(
                        dir.join(MANIFEST_FILE),
                        "catalog manifest",
                        Some("names segments catalog.redb lacks (replaced or rolled back; `cqldb repair` rebuilds catalog.redb from the manifest)".into()),
                        true,
                    )
                } else {
                    // Not damage: a writer died between its redb transaction and the
                    // manifest's rename (the commit point).
                    finding(
                        dir.join(MANIFEST_FILE),
                        "catalog manifest; catalog.redb also names segments of an append that stopped before committing them (readers never saw them): the next append or `cqldb repair` takes them out",
                        None,
                        true,
                    )
                });
            }
            r.clone()
        }
        (Ok(Some(m)), Err(_)) => m.segments.clone(),
        (_, Ok((_, r))) => r.clone(),
        _ => return out,
    };
    for e in &entries {
        let path = dir.join(SegmentEntry::segment_file(e.id));
        let damage = check_segment(&path, e).err().map(|err| err.to_string());
        out.push(finding(path, "segment", damage, false));
        let tags = dir.join(SegmentEntry::tags_dir(e.id));
        let damage = check_tags(&tags, e).err().map(|err| err.to_string());
        out.push(finding(tags, "tag index", damage, true));
    }
    out
}

fn check_segment(path: &Path, e: &SegmentEntry) -> Result<(), StorageError> {
    let seg = Segment::open(path)?;
    seg.verify()?;
    if let Some(c) = e.checks
        && c.segment != seg.recorded_crc()
    {
        return Err(StorageError::corrupt(
            path,
            "not the segment file the catalog committed (replaced or copied over)",
        ));
    }
    if u64::from(seg.games()) != e.games {
        return Err(StorageError::corrupt(
            path,
            "game count differs from the catalog's",
        ));
    }
    Ok(())
}

fn check_tags(dir: &Path, e: &SegmentEntry) -> Result<(), StorageError> {
    match e.checks {
        Some(c) => TagReader::open_checked(dir, c.tags),
        None => TagReader::open(dir),
    }
    .map(|_| ())
}
