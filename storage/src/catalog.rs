//! The catalog: which segments make up the database, in redb.
//!
//! Why redb and not sled (which the design first named): sled's last release dates from 2021 and
//! its tracker has open reports of corruption after a killed process, while the catalog is the one
//! place whose atomicity the whole index relies on. redb is maintained, pure Rust, and commits a
//! write transaction atomically and durably (copy-on-write B-trees, checksummed commit slots), so
//! "the new segments exist" becomes true in one step or not at all.

use std::path::{Path, PathBuf};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};

use crate::error::{Result, StorageError};
use crate::guard;
use crate::manifest::{MANIFEST_FILE, Manifest};
use crate::schema::{SCHEMA_VERSION, readable_schema};
pub use crate::segment_entry::{FileChecks, SegmentEntry};

const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const SEGMENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("segments");
/// The input files indexed, by content fingerprint ([`crate::SourceRecord`]): how an append
/// of a file already in the database is noticed. A catalog without the table (older, or
/// rebuilt by `repair`) simply has none.
const SOURCES: TableDefinition<&str, &str> = TableDefinition::new("sources");

/// File name of the catalog inside a database directory.
pub const CATALOG_FILE: &str = "catalog.redb";

fn catalog_err(path: &Path) -> impl Fn(redb::Error) -> StorageError + '_ {
    move |e| match e {
        redb::Error::DatabaseAlreadyOpen => StorageError::Locked(path.to_owned()),
        other => StorageError::Catalog(format!("{}: {other}", path.display())),
    }
}

fn read_version(path: &Path, txn: &redb::ReadTransaction) -> Result<u64> {
    let err = catalog_err(path);
    let meta = txn.open_table(META).map_err(|e| err(e.into()))?;
    Ok(meta
        .get("schema_version")
        .map_err(|e| err(e.into()))?
        .map(|v| v.value())
        .unwrap_or(0))
}

fn read_all(path: &Path, txn: &redb::ReadTransaction) -> Result<(u64, Vec<SegmentEntry>)> {
    let err = catalog_err(path);
    let meta = txn.open_table(META).map_err(|e| err(e.into()))?;
    let version = read_version(path, txn)?;
    if !readable_schema(version) {
        return Err(StorageError::SchemaMismatch {
            path: path.to_owned(),
            found: version,
            expected: SCHEMA_VERSION,
        });
    }
    let next = meta
        .get("next_segment")
        .map_err(|e| err(e.into()))?
        .map(|v| v.value())
        .unwrap_or(1);
    let segs = txn.open_table(SEGMENTS).map_err(|e| err(e.into()))?;
    let mut out = Vec::new();
    for row in segs.iter().map_err(|e| err(e.into()))? {
        let (_, v) = row.map_err(|e| err(e.into()))?;
        out.push(
            SegmentEntry::decode(v.value())
                .ok_or_else(|| StorageError::corrupt(path, "bad segment entry"))?,
        );
    }
    Ok((next, out))
}

/// Reads the committed segment list of the database in `dir`: from its manifest, which takes
/// no lock (see `manifest.rs`); from `catalog.redb` in a database that has none, or whose
/// manifest is damaged (the redb catalog holds the same list).
pub fn read_catalog(dir: &Path) -> Result<Vec<SegmentEntry>> {
    let from_redb = || read_redb_entries(dir).map(|(_, entries)| entries);
    let m = match Manifest::read(dir) {
        Ok(Some(m)) => m,
        Ok(None) => return from_redb(),
        // The manifest's own error says more than the fallback's.
        Err(damaged) => return from_redb().map_err(|_| damaged),
    };
    if !readable_schema(m.schema_version) {
        return Err(StorageError::SchemaMismatch {
            path: dir.join(MANIFEST_FILE),
            found: m.schema_version,
            expected: SCHEMA_VERSION,
        });
    }
    Ok(m.segments)
}

/// The error for a directory without either catalog copy: a database that lost its catalog
/// when it still holds segment files, else no database at all.
pub fn missing_catalog(dir: &Path) -> StorageError {
    if crate::journal::segment_files(dir)
        .iter()
        .any(|(_, part, _)| *part == crate::segment_entry::SegmentPart::File)
        && crate::journal::Leftover::read(dir)
            .ok()
            .flatten()
            .is_none_or(|l| l.committed)
    {
        StorageError::LostCatalog(dir.to_owned())
    } else {
        StorageError::NotADatabase(dir.to_owned())
    }
}

/// How long a reader of a database without a manifest waits for a writer's brief hold on the
/// redb file (a writer opens it only to read its state and to commit).
const REDB_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads the next segment id and the segment list from `catalog.redb` (shared lock, released
/// at once).
pub fn read_redb_entries(dir: &Path) -> Result<(u64, Vec<SegmentEntry>)> {
    let path = dir.join(CATALOG_FILE);
    if !path.exists() {
        return Err(missing_catalog(dir));
    }
    let start = std::time::Instant::now();
    loop {
        match guard::catch(&path, || read_redb_once(&path)) {
            Err(StorageError::Locked(_)) if start.elapsed() < REDB_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

fn read_redb_once(path: &Path) -> Result<(u64, Vec<SegmentEntry>)> {
    let err = catalog_err(path);
    match redb::ReadOnlyDatabase::open(path) {
        Ok(db) => {
            let txn = db.begin_read().map_err(|e| err(e.into()))?;
            read_all(path, &txn)
        }
        Err(redb::DatabaseError::RepairAborted) => {
            // A writer was killed inside its commit: recovery needs a writable open. redb
            // recovers the last durable commit; the interrupted one either landed whole or not.
            let db = redb::Database::open(path).map_err(|e| err(e.into()))?;
            let txn = db.begin_read().map_err(|e| err(e.into()))?;
            read_all(path, &txn)
        }
        Err(e) => Err(err(e.into())),
    }
}

/// Takes the writer lock of `dir` (held while the file stays open).
fn take_lock(dir: &Path) -> Result<std::fs::File> {
    let lock_path = dir.join(LOCK_FILE);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(StorageError::io(&lock_path))?;
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(std::fs::TryLockError::WouldBlock) => Err(StorageError::Locked(dir.to_owned())),
        Err(std::fs::TryLockError::Error(e)) => Err(StorageError::Io {
            path: lock_path,
            error: e,
        }),
    }
}

/// Whether a redb catalog naming `named` lacks a segment the manifest `m` names (its entry may
/// differ, as an entry is updated in redb before the manifest is republished).
pub(crate) fn lacks_segments(named: &[SegmentEntry], m: &Manifest) -> bool {
    m.segments.iter().any(|s| !names(named, s.id))
}

/// Whether redb (naming `named`) lacks the manifest's segments because a merge committed in
/// redb and stopped before publishing: every segment it lacks is listed as retired, and every
/// one it has beyond the manifest was created by the writer the journal says never finished.
fn interrupted_merge(dir: &Path, named: &[SegmentEntry], m: &Manifest) -> Result<bool> {
    let retired = crate::retire::listed(dir)?;
    let Some(left) = crate::journal::Leftover::read(dir)?.filter(|l| !l.committed) else {
        return Ok(false);
    };
    let lacked_retired = m
        .segments
        .iter()
        .filter(|s| !names(named, s.id))
        .all(|s| retired.contains(&s.id));
    let extra_created = named
        .iter()
        .filter(|n| !names(&m.segments, n.id))
        .all(|n| left.created.contains(&n.id));
    Ok(lacked_retired && extra_created)
}

/// Whether `entries` has the segment `id`.
fn names(entries: &[SegmentEntry], id: u64) -> bool {
    entries.iter().any(|e| e.id == id)
}

/// Writes a new `catalog.redb` holding `m`'s state: built under a temporary name and renamed
/// over the damaged one (kept as `catalog.redb.damaged`), so no moment lacks a catalog.
fn rebuild_redb(dir: &Path, m: &Manifest) -> Result<()> {
    let path = dir.join(CATALOG_FILE);
    let tmp = dir.join(format!("{CATALOG_FILE}.rebuild"));
    let _ = std::fs::remove_file(&tmp);
    let err = catalog_err(&tmp);
    {
        let db = redb::Database::create(&tmp).map_err(|e| err(e.into()))?;
        let txn = db.begin_write().map_err(|e| err(e.into()))?;
        {
            let mut meta = txn.open_table(META).map_err(|e| err(e.into()))?;
            meta.insert("schema_version", m.schema_version)
                .map_err(|e| err(e.into()))?;
            meta.insert("next_segment", m.next_segment)
                .map_err(|e| err(e.into()))?;
            let mut segs = txn.open_table(SEGMENTS).map_err(|e| err(e.into()))?;
            for s in &m.segments {
                segs.insert(s.id, s.encode().as_slice())
                    .map_err(|e| err(e.into()))?;
            }
        }
        txn.commit().map_err(|e| err(e.into()))?;
    }
    // Kept for inspection, under a name of its own (an earlier one is not overwritten).
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let damaged = dir.join(format!("{CATALOG_FILE}.damaged-{stamp}"));
    let _ = std::fs::rename(&path, &damaged);
    std::fs::rename(&tmp, &path).map_err(StorageError::io(&path))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(StorageError::io(dir))
}

/// File whose exclusive lock marks the one writer of a database.
pub const LOCK_FILE: &str = "writer.lock";

/// The catalog of a database opened for appending.
///
/// The writer holds an exclusive lock on [`LOCK_FILE`] for its whole life, but opens the redb file
/// only for the moments it reads or commits, so a writer killed while it builds segments (the
/// long part) leaves the catalog closed and readable as it was.
pub struct CatalogWriter {
    path: PathBuf,
    dir: PathBuf,
    _lock: std::fs::File,
    /// Whether the catalog exists on disk. A new database gets its catalog with its first
    /// commit, so a first build that is stopped leaves no database that reads as empty.
    created: std::sync::atomic::AtomicBool,
}

impl CatalogWriter {
    /// Takes the writer lock of `dir` and opens its catalog; a `catalog.redb` that cannot be
    /// read is first rebuilt from the manifest (when that is intact), the damaged file kept
    /// beside it. Returns whether it was rebuilt.
    pub fn open_repairing(dir: &Path) -> Result<(Self, bool)> {
        let manifest = Manifest::read(dir);
        let path = dir.join(CATALOG_FILE);
        if !path.exists() && !matches!(manifest, Ok(Some(_))) {
            return Err(missing_catalog(dir));
        }
        let lock = take_lock(dir)?;
        let mut rebuilt = false;
        let redb = guard::catch(&path, || read_redb_once(&path));
        if let Ok(Some(m)) = &manifest {
            let lost = match &redb {
                Ok((_, named)) => lacks_segments(named, m),
                Err(StorageError::Locked(p)) => return Err(StorageError::Locked(p.clone())),
                Err(_) => true,
            };
            if lost {
                rebuild_redb(dir, m)?;
                rebuilt = true;
            }
        }
        Ok((Self::with_lock(dir, lock)?, rebuilt))
    }

    /// Takes the writer lock of `dir` and opens, or creates, its catalog.
    pub fn open_or_create(dir: &Path) -> Result<Self> {
        Self::with_lock(dir, take_lock(dir)?)
    }

    fn with_lock(dir: &Path, lock: std::fs::File) -> Result<Self> {
        let path = dir.join(CATALOG_FILE);
        let exists = path.exists() || dir.join(MANIFEST_FILE).exists();
        let this = Self {
            path,
            dir: dir.to_owned(),
            _lock: lock,
            created: std::sync::atomic::AtomicBool::new(exists),
        };
        if !exists {
            return Ok(this);
        }
        this.check_against_manifest()?;
        guard::catch(&this.path, || this.initialise())?;
        crate::migrate::to_current(&this)?;
        this.publish()?;
        Ok(this)
    }

    /// Whether the catalog exists on disk (a new database's is made at its first commit).
    pub fn exists(&self) -> bool {
        self.created.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The directory of the database.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The schema version `catalog.redb` records.
    pub fn schema_version(&self) -> Result<u64> {
        guard::catch(&self.path, || {
            let db = self.open()?;
            let err = catalog_err(&self.path);
            let txn = db.begin_read().map_err(|e| err(e.into()))?;
            read_version(&self.path, &txn)
        })
    }

    /// Records `version` as the database's schema version (after a migration).
    pub fn set_schema_version(&self, version: u64) -> Result<()> {
        guard::catch(&self.path, || {
            let db = self.open()?;
            let err = catalog_err(&self.path);
            let txn = db.begin_write().map_err(|e| err(e.into()))?;
            {
                let mut meta = txn.open_table(META).map_err(|e| err(e.into()))?;
                meta.insert("schema_version", version)
                    .map_err(|e| err(e.into()))?;
            }
            txn.commit().map_err(|e| err(e.into()))
        })
    }

    /// A writer must not start from a `catalog.redb` that lost segments the manifest names
    /// (missing, emptied or replaced): it would publish the loss and remove their files. A
    /// missing or empty one is rebuilt from the manifest; any other loss is an error for
    /// `cqldb repair`. Segments redb names beyond the manifest's belong to an append that
    /// never published them (killed between the two writes): readers never saw them, so they
    /// are not committed, and are taken out (their files go with the other leftovers).
    fn check_against_manifest(&self) -> Result<()> {
        let Ok(Some(m)) = Manifest::read(&self.dir) else {
            return Ok(());
        };
        let empty = std::fs::metadata(&self.path).map_or(true, |md| md.len() == 0);
        if empty {
            if m.segments.is_empty() {
                return Ok(());
            }
            return rebuild_redb(&self.dir, &m);
        }
        let named = match guard::catch(&self.path, || read_redb_once(&self.path)) {
            Ok((_, entries)) => entries,
            Err(StorageError::Locked(p)) => return Err(StorageError::Locked(p)),
            Err(e) => {
                return Err(StorageError::Catalog(format!(
                    "{e}; the database is intact in {MANIFEST_FILE}: run `cqldb repair` before appending"
                )));
            }
        };
        if lacks_segments(&named, &m) && interrupted_merge(&self.dir, &named, &m)? {
            // A merge committed in redb and was killed before it published: not committed.
            // redb goes back to the manifest's segments (its sources stay); the merged
            // segment's files are the journal's leftovers.
            return guard::catch(&self.path, || self.restore_segments(&named, &m.segments));
        }
        if lacks_segments(&named, &m) {
            return Err(StorageError::Catalog(format!(
                "{} names fewer segments than {MANIFEST_FILE} (replaced or rolled back); run `cqldb repair` before appending",
                self.path.display()
            )));
        }
        let unpublished: Vec<u64> = named
            .iter()
            .filter(|n| !names(&m.segments, n.id))
            .map(|n| n.id)
            .collect();
        // The files an unpublished append recorded go with its segments.
        let games_end = m
            .segments
            .iter()
            .map(|s| s.first_game + s.games)
            .max()
            .unwrap_or(1);
        let stale: Vec<crate::SourceRecord> = self
            .sources()?
            .into_iter()
            .filter(|r| r.first_game >= games_end)
            .collect();
        if !unpublished.is_empty() || !stale.is_empty() {
            self.roll_back(&unpublished, &stale)?;
        }
        Ok(())
    }

    /// Puts redb's segments back to the published manifest's (a merge whose publication
    /// failed).
    pub fn restore_published(&self) -> Result<()> {
        let Some(m) = Manifest::read(&self.dir)? else {
            return Ok(());
        };
        let (_, named) = self.state()?;
        guard::catch(&self.path, || self.restore_segments(&named, &m.segments))
    }

    /// Makes redb's segment table hold exactly `segments` (it holds `named` now).
    fn restore_segments(&self, named: &[SegmentEntry], segments: &[SegmentEntry]) -> Result<()> {
        let db = self.open()?;
        let err = catalog_err(&self.path);
        let txn = db.begin_write().map_err(|e| err(e.into()))?;
        {
            let mut segs = txn.open_table(SEGMENTS).map_err(|e| err(e.into()))?;
            for n in named.iter().filter(|n| !names(segments, n.id)) {
                segs.remove(n.id).map_err(|e| err(e.into()))?;
            }
            for s in segments {
                segs.insert(s.id, s.encode().as_slice())
                    .map_err(|e| err(e.into()))?;
            }
        }
        txn.commit().map_err(|e| err(e.into()))
    }

    /// Makes sure no id below `next` is given out again (ids of files seen on disk).
    pub fn reserve_ids(&self, next: u64) -> Result<()> {
        guard::catch(&self.path, || {
            let db = self.open()?;
            let err = catalog_err(&self.path);
            let txn = db.begin_write().map_err(|e| err(e.into()))?;
            {
                let mut meta = txn.open_table(META).map_err(|e| err(e.into()))?;
                let cur = meta
                    .get("next_segment")
                    .map_err(|e| err(e.into()))?
                    .map(|v| v.value())
                    .unwrap_or(1);
                meta.insert("next_segment", next.max(cur))
                    .map_err(|e| err(e.into()))?;
            }
            txn.commit().map_err(|e| err(e.into()))
        })
    }

    /// Takes segments out of `catalog.redb` (an append whose publication did not happen). The
    /// segment counter stays, so their ids are never given again.
    pub fn roll_back(&self, ids: &[u64], sources: &[crate::SourceRecord]) -> Result<()> {
        if !self.exists() {
            return Ok(());
        }
        guard::catch(&self.path, || {
            let db = self.open()?;
            let err = catalog_err(&self.path);
            let txn = db.begin_write().map_err(|e| err(e.into()))?;
            {
                let mut segs = txn.open_table(SEGMENTS).map_err(|e| err(e.into()))?;
                for &id in ids {
                    segs.remove(id).map_err(|e| err(e.into()))?;
                }
                let mut table = txn.open_table(SOURCES).map_err(|e| err(e.into()))?;
                for r in sources {
                    table
                        .remove(r.fingerprint.as_str())
                        .map_err(|e| err(e.into()))?;
                }
            }
            txn.commit().map_err(|e| err(e.into()))
        })
    }

    /// Whether the manifest on disk names every segment of `ids` (`None` if it cannot be read).
    pub fn published(&self, ids: &[u64]) -> Option<bool> {
        let m = Manifest::read(&self.dir).ok()??;
        Some(ids.iter().all(|&id| names(&m.segments, id)))
    }

    /// Creates the tables of a new catalog.
    fn initialise(&self) -> Result<()> {
        let db = self.open()?;
        // Initialised means the tables exist, not merely the file: a process killed right after
        // creating the file must not leave a catalog that can never be opened.
        let initialised = db
            .begin_read()
            .ok()
            .and_then(|txn| txn.open_table(META).ok()?.get("schema_version").ok()?)
            .is_some();
        if !initialised {
            let err = catalog_err(&self.path);
            let txn = db.begin_write().map_err(|e| err(e.into()))?;
            {
                let mut meta = txn.open_table(META).map_err(|e| err(e.into()))?;
                meta.insert("schema_version", SCHEMA_VERSION)
                    .map_err(|e| err(e.into()))?;
                meta.insert("next_segment", 1).map_err(|e| err(e.into()))?;
                txn.open_table(SEGMENTS).map_err(|e| err(e.into()))?;
            }
            txn.commit().map_err(|e| err(e.into()))?;
        }
        Ok(())
    }

    /// Writes the committed state to the manifest readers take (unless it already holds it).
    pub fn publish(&self) -> Result<()> {
        if !self.exists() {
            return Ok(());
        }
        let (next_segment, segments) = self.state()?;
        let m = Manifest {
            schema_version: self.schema_version()?,
            next_segment,
            segments,
        };
        if Manifest::read(&self.dir).ok().flatten().as_ref() != Some(&m) {
            m.write(&self.dir)?;
        }
        Ok(())
    }

    /// Opens (or creates) `catalog.redb`, waiting a moment for a process that holds it briefly
    /// (`cqldb check`, or a reader of a database without a manifest).
    fn open(&self) -> Result<redb::Database> {
        let start = std::time::Instant::now();
        loop {
            match redb::Database::create(&self.path) {
                Ok(db) => return Ok(db),
                Err(redb::DatabaseError::DatabaseAlreadyOpen) if start.elapsed() < REDB_WAIT => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(catalog_err(&self.path)(e.into())),
            }
        }
    }

    /// The next free segment id and the committed segments.
    pub fn state(&self) -> Result<(u64, Vec<SegmentEntry>)> {
        if !self.exists() {
            return Ok((1, Vec::new()));
        }
        guard::catch(&self.path, || {
            let db = self.open()?;
            let err = catalog_err(&self.path);
            let txn = db.begin_read().map_err(|e| err(e.into()))?;
            read_all(&self.path, &txn)
        })
    }

    /// Adds segments to `catalog.redb` in one atomic, durable transaction. They are committed
    /// when [`CatalogWriter::publish`] then writes them to the manifest readers read: the
    /// manifest's rename is the commit point (a writer finding segments in redb but not in the
    /// manifest takes them out).
    pub fn commit(&self, added: &[SegmentEntry], sources: &[crate::SourceRecord]) -> Result<()> {
        self.commit_replacing(added, &[], sources)
    }

    /// As [`CatalogWriter::commit`], taking the segments `removed` out in the same
    /// transaction (a merge: `added` holds their games).
    pub fn commit_replacing(
        &self,
        added: &[SegmentEntry],
        removed: &[u64],
        sources: &[crate::SourceRecord],
    ) -> Result<()> {
        if !self.exists() {
            guard::catch(&self.path, || self.initialise())?;
            self.created
                .store(true, std::sync::atomic::Ordering::Release);
        }
        guard::catch(&self.path, || self.commit_redb(added, removed, sources))
    }

    /// The input files recorded so far.
    pub fn sources(&self) -> Result<Vec<crate::SourceRecord>> {
        if !self.exists() {
            return Ok(Vec::new());
        }
        guard::catch(&self.path, || {
            let db = self.open()?;
            let err = catalog_err(&self.path);
            let txn = db.begin_read().map_err(|e| err(e.into()))?;
            let table = match txn.open_table(SOURCES) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(err(e.into())),
            };
            let mut out = Vec::new();
            for row in table.iter().map_err(|e| err(e.into()))? {
                let (k, v) = row.map_err(|e| err(e.into()))?;
                if let Some(r) = crate::SourceRecord::decode(k.value(), v.value()) {
                    out.push(r);
                }
            }
            Ok(out)
        })
    }

    fn commit_redb(
        &self,
        added: &[SegmentEntry],
        removed: &[u64],
        sources: &[crate::SourceRecord],
    ) -> Result<()> {
        let db = self.open()?;
        let err = catalog_err(&self.path);
        let txn = db.begin_write().map_err(|e| err(e.into()))?;
        {
            let mut segs = txn.open_table(SEGMENTS).map_err(|e| err(e.into()))?;
            for &id in removed {
                segs.remove(id).map_err(|e| err(e.into()))?;
            }
            for s in added {
                segs.insert(s.id, s.encode().as_slice())
                    .map_err(|e| err(e.into()))?;
            }
            let mut meta = txn.open_table(META).map_err(|e| err(e.into()))?;
            let next = added.iter().map(|s| s.id + 1).max().unwrap_or(0);
            let cur = meta
                .get("next_segment")
                .map_err(|e| err(e.into()))?
                .map(|v| v.value())
                .unwrap_or(1);
            meta.insert("next_segment", next.max(cur))
                .map_err(|e| err(e.into()))?;
            let mut table = txn.open_table(SOURCES).map_err(|e| err(e.into()))?;
            for r in sources {
                table
                    .insert(r.fingerprint.as_str(), r.encode().as_str())
                    .map_err(|e| err(e.into()))?;
            }
        }
        txn.commit().map_err(|e| err(e.into()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Segments in redb but not in the manifest were never committed: the next writer takes
    /// them out and never gives their ids again; readers never saw them.
    #[test]
    fn an_unpublished_append_is_taken_out_by_the_next_writer() {
        let dir = tempfile::tempdir().unwrap();
        let first = SegmentEntry {
            id: 1,
            games: 1,
            positions: 1,
            ..SegmentEntry::default()
        };
        let w = CatalogWriter::open_or_create(dir.path()).unwrap();
        w.commit(&[first], &[]).unwrap();
        w.publish().unwrap();
        // Killed between the redb transaction and the manifest's rename.
        w.commit(&[SegmentEntry { id: 2, ..first }], &[]).unwrap();
        drop(w);
        assert_eq!(read_catalog(dir.path()).unwrap(), vec![first]);
        let w = CatalogWriter::open_or_create(dir.path()).unwrap();
        let (next, segments) = w.state().unwrap();
        assert_eq!(segments, vec![first]);
        assert_eq!(next, 3, "ids are never given again");
        assert_eq!(read_catalog(dir.path()).unwrap(), vec![first]);
    }
}
