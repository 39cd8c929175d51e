//! The writer's journal: which files an append created, so that clean-up removes those and
//! nothing else.
//!
//! An append that stops before its commit leaves segment files nobody names. The first
//! writers removed every `seg-*` name the catalog did not list, which also removed what a user
//! kept there (`seg-000001.cqs.bak`, the `.damaged` copies `repair` keeps) and, pointed at a
//! folder that was not a database, files that only looked like segments. Now a writer records
//! each segment id in `writer.journal` (synced) before it creates the segment's files, and
//! clean-up removes only the journal's files that the catalog does not name. Once the
//! catalog names them, the journal is marked committed and removed.
//!
//! Layout: one line per created segment id (`create 12`), and a last line `committed` once
//! the append's segments are published.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Result, StorageError};
use crate::segment_entry::SegmentEntry;
use crate::segment_entry::SegmentPart;

/// File name of the journal inside a database directory.
pub const JOURNAL_FILE: &str = "writer.journal";

/// What a journal left on disk says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Leftover {
    /// Segment ids the writer created.
    pub created: Vec<u64>,
    /// Whether it reached its commit (then its segments are the catalog's, not leftovers).
    pub committed: bool,
}

impl Leftover {
    /// The journal of `dir`, if a writer left one.
    pub fn read(dir: &Path) -> Result<Option<Self>> {
        let path = dir.join(JOURNAL_FILE);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StorageError::io(&path)(e)),
        };
        let mut out = Self::default();
        // A line cut by a crash (no newline) is ignored: its id's files were not created yet,
        // as the record is synced before they are.
        for line in text.split_inclusive(|&b| b == b'\n') {
            let Some(line) = line.strip_suffix(b"\n") else {
                break;
            };
            match line {
                b"committed" => out.committed = true,
                _ => match std::str::from_utf8(line)
                    .ok()
                    .and_then(|l| l.strip_prefix("create "))
                    .and_then(|n| n.parse().ok())
                {
                    Some(id) => out.created.push(id),
                    None => {
                        return Err(StorageError::corrupt(
                            &path,
                            format!("unreadable line {:?}", String::from_utf8_lossy(line)),
                        ));
                    }
                },
            }
        }
        Ok(Some(out))
    }

    /// Removes the files of the created segments that `committed` does not name, then the
    /// journal. Returns how many segments were removed.
    pub fn clean(&self, dir: &Path, committed: &[SegmentEntry]) -> Result<usize> {
        let mut removed = 0;
        if !self.committed {
            for &id in &self.created {
                if committed.iter().any(|e| e.id == id) {
                    continue;
                }
                remove_segment_files(dir, id)?;
                removed += 1;
            }
        }
        let path = dir.join(JOURNAL_FILE);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StorageError::io(&path)(e)),
        }
        Ok(removed)
    }
}

/// Removes segment `id`'s file and tag index (whichever exist).
pub(crate) fn remove_segment_files(dir: &Path, id: u64) -> Result<()> {
    let file = dir.join(SegmentEntry::segment_file(id));
    match std::fs::remove_file(&file) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(StorageError::io(&file)(e)),
    }
    let tags = dir.join(SegmentEntry::tags_dir(id));
    match std::fs::remove_dir_all(&tags) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(&tags)(e)),
    }
}

/// The journal of a running append.
pub struct Journal {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl Journal {
    /// A journal for `dir`, created on the first record.
    pub fn new(dir: &Path) -> Self {
        Self {
            path: dir.join(JOURNAL_FILE),
            file: None,
        }
    }

    fn append(&mut self, line: &str) -> Result<()> {
        if self.file.is_none() {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(StorageError::io(&self.path))?;
            self.file = Some(f);
        }
        let Some(f) = self.file.as_mut() else {
            unreachable!("opened above")
        };
        f.write_all(line.as_bytes())
            .and_then(|()| f.write_all(b"\n"))
            .and_then(|()| f.sync_data())
            .map_err(StorageError::io(&self.path))
    }

    /// Records that segment `id`'s files are about to be created (durably, before they are).
    pub fn record(&mut self, id: u64) -> Result<()> {
        self.append(&format!("create {id}"))
    }

    /// Marks the recorded segments committed and removes the journal.
    pub fn finish(mut self) -> Result<()> {
        if self.file.is_some() {
            self.append("committed")?;
        }
        self.file = None;
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io(&self.path)(e)),
        }
    }

    /// Removes the journal after the writer removed its own files (an append that failed).
    pub fn discard(mut self) {
        self.file = None;
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The segment files and tag indexes in `dir`: (id, which part, name).
pub fn segment_files(dir: &Path) -> Vec<(u64, SegmentPart, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let (id, part) = SegmentEntry::id_of(&name)?;
            Some((id, part, name))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_up_removes_only_what_the_journal_created_and_the_catalog_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for id in [1, 2, 3] {
            std::fs::write(d.join(SegmentEntry::segment_file(id)), b"x").unwrap();
            std::fs::create_dir(d.join(SegmentEntry::tags_dir(id))).unwrap();
        }
        std::fs::write(d.join("seg-000001.cqs.bak"), b"mine").unwrap();
        let mut j = Journal::new(d);
        j.record(2).unwrap();
        j.record(3).unwrap();
        drop(j);
        let left = Leftover::read(d).unwrap().unwrap();
        assert_eq!(left.created, vec![2, 3]);
        assert!(!left.committed);
        let committed = [SegmentEntry {
            id: 2,
            ..SegmentEntry::default()
        }];
        assert_eq!(left.clean(d, &committed).unwrap(), 1);
        let names: Vec<_> = segment_files(d).into_iter().map(|(_, _, n)| n).collect();
        assert_eq!(
            names,
            [
                "seg-000001.cqs",
                "seg-000001.tags",
                "seg-000002.cqs",
                "seg-000002.tags"
            ]
        );
        assert!(d.join("seg-000001.cqs.bak").exists());
        assert!(Leftover::read(d).unwrap().is_none());
    }

    #[test]
    fn a_committed_journal_removes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(SegmentEntry::segment_file(4)), b"x").unwrap();
        let mut j = Journal::new(d);
        j.record(4).unwrap();
        j.append("committed").unwrap();
        drop(j);
        let left = Leftover::read(d).unwrap().unwrap();
        assert!(left.committed);
        assert_eq!(left.clean(d, &[]).unwrap(), 0);
        assert!(d.join(SegmentEntry::segment_file(4)).exists());
    }
}
