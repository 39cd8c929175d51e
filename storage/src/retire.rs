//! Segments a merge replaced: kept on disk while a reader may still use them, removed after.
//!
//! A merge commits one new segment in place of several adjacent ones. A reader that opened the
//! database before that commit has the old segments mapped and opens their tag indexes on
//! first use, so their files cannot go at once. Every reader holds a shared lock on
//! [`READERS_LOCK`] for as long as its [`crate::Database`] is open (taken before it reads the
//! manifest); a writer removes replaced files only while it holds that lock exclusively, i.e.
//! when no reader that could have seen them is left. Otherwise their ids wait in
//! [`RETIRED_FILE`] for the next writer (an append, a merge, `cqldb optimize`).
//!
//! The list is written, synced, before the catalog transaction that replaces the segments, so
//! a writer killed at any point leaves nothing unaccounted; and a listed id is only ever
//! removed when the committed catalog does not name it (a merge that never committed leaves
//! its old segments listed but committed: they stay).

use std::io::Write;
use std::path::Path;

use crate::error::{Result, StorageError};
use crate::segment_entry::SegmentEntry;

/// The lock every reader holds shared while a database is open.
pub const READERS_LOCK: &str = "readers.lock";

/// Ids of replaced segments whose files are still on disk, one per line.
pub const RETIRED_FILE: &str = "segments.retired";

/// A reader's shared hold on [`READERS_LOCK`] (released when dropped). A database on a
/// read-only medium whose lock file was never made has no writer that could remove anything,
/// so a reader goes on without one.
pub struct ReaderHold {
    _file: Option<std::fs::File>,
}

impl ReaderHold {
    /// Takes the shared lock of `dir`, waiting while a writer removes replaced files (a
    /// moment).
    pub fn take(dir: &Path) -> Result<Self> {
        let path = dir.join(READERS_LOCK);
        // Writers make the file (a reader writes nothing); a database written before it
        // existed gets it from its next writer, which then removes nothing in its own run.
        let Ok(file) = std::fs::OpenOptions::new().read(true).open(&path) else {
            return Ok(Self { _file: None });
        };
        file.lock_shared().map_err(StorageError::io(&path))?;
        Ok(Self { _file: Some(file) })
    }
}

/// The ids [`RETIRED_FILE`] lists.
pub fn listed(dir: &Path) -> Result<Vec<u64>> {
    let path = dir.join(RETIRED_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StorageError::io(&path)(e)),
    };
    // A line cut by a crash is left out: its write was not synced, so the catalog
    // transaction it preceded never ran.
    Ok(text
        .split_inclusive('\n')
        .filter_map(|l| l.strip_suffix('\n')?.trim().parse().ok())
        .collect())
}

/// Adds `ids` to the list, durably.
pub fn record(dir: &Path, ids: &[u64]) -> Result<()> {
    let path = dir.join(RETIRED_FILE);
    let mut text = String::new();
    for id in ids {
        text.push_str(&format!("{id}\n"));
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_data()
        })
        .map_err(StorageError::io(&path))
}

/// Makes [`READERS_LOCK`] (a writer's first step); returns whether it was there already
/// (else readers opened before it hold nothing, and this writer must remove nothing).
pub fn make_lock(dir: &Path) -> Result<bool> {
    let existed = dir.join(READERS_LOCK).exists();
    lock_file(dir)?;
    Ok(existed)
}

/// [`READERS_LOCK`], opened for a writer (made if missing).
fn lock_file(dir: &Path) -> Result<std::fs::File> {
    let path = dir.join(READERS_LOCK);
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(StorageError::io(&path))
}

/// Removes the files of the listed segments that `committed` does not name, if no reader
/// holds the database open (and `may_remove`: see [`make_lock`]); rewrites the list with what
/// is left. The caller holds the writer lock. Returns how many segments' files were removed.
pub fn sweep(dir: &Path, committed: &[SegmentEntry], may_remove: bool) -> Result<usize> {
    let ids = listed(dir)?;
    if ids.is_empty() {
        return Ok(0);
    }
    // Committed ids leave the list: a merge that never committed retired nothing.
    let gone: Vec<u64> = ids
        .into_iter()
        .filter(|&id| !committed.iter().any(|e| e.id == id))
        .collect();
    if !may_remove {
        rewrite(dir, &gone)?;
        return Ok(0);
    }
    let lock = lock_file(dir)?;
    let mut removed = 0;
    let mut waiting = Vec::new();
    match lock.try_lock() {
        Ok(()) => {
            for id in gone {
                match crate::journal::remove_segment_files(dir, id) {
                    Ok(()) => removed += 1,
                    Err(_) => waiting.push(id),
                }
            }
        }
        // A reader has the database open: it may use them.
        Err(std::fs::TryLockError::WouldBlock) => waiting = gone,
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(StorageError::io(dir.join(READERS_LOCK))(e));
        }
    }
    drop(lock);
    rewrite(dir, &waiting)?;
    Ok(removed)
}

/// Replaces the list with `ids` (removes it when empty).
fn rewrite(dir: &Path, ids: &[u64]) -> Result<()> {
    let path = dir.join(RETIRED_FILE);
    if ids.is_empty() {
        return match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io(&path)(e)),
        };
    }
    let tmp = dir.join(format!("{RETIRED_FILE}.tmp"));
    let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
    std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(StorageError::io(&path))
}
