//! Where a segment's tag index lives: a directory read without writing or locking, its
//! digest (what the catalog records), and its files' permissions.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use tantivy::directory::OwnedBytes;
use tantivy::directory::error::OpenReadError;

use crate::error::{Result, StorageError};

/// The content files of a tag index directory, read into memory once.
///
/// Why read and not map: what the digest is taken over is then exactly what tantivy searches
/// (a file replaced between the check and the search cannot go unseen), nothing can shrink
/// under a search, and no mapping has to be undone. A query over many segments opens each
/// one's index and drops it when that segment's scan ends; unmapping its twenty files there
/// sent an interrupt to the other core's threads of the process per file (TLB shootdowns),
/// and at 10 M games (144 segments) that was most of a tag count's 0.26 s as a command.
#[derive(Debug)]
pub(super) struct DirFiles {
    /// Content files (see [`is_content`]) by name, in name order (the digest's order).
    files: BTreeMap<String, OwnedBytes>,
}

impl DirFiles {
    /// Reads every content file of `dir`.
    pub(super) fn read(dir: &Path) -> Result<Self> {
        let mut files = BTreeMap::new();
        for e in std::fs::read_dir(dir).map_err(StorageError::io(dir))? {
            let e = e.map_err(StorageError::io(dir))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_content(&name) {
                continue;
            }
            let path = dir.join(&name);
            let bytes = std::fs::read(&path).map_err(StorageError::io(&path))?;
            files.insert(name, OwnedBytes::new(bytes));
        }
        Ok(Self { files })
    }

    /// The digest the catalog records: every content file's name and bytes, in name order.
    pub(super) fn digest(&self) -> u32 {
        let mut d = crate::digest::Digest::new();
        for (name, bytes) in &self.files {
            d.column(name.as_bytes());
            d.column(bytes.as_slice());
        }
        d.finish()
    }

    /// The bytes of file `name`, if the directory has it.
    pub(super) fn get(&self, name: &str) -> Option<&OwnedBytes> {
        self.files.get(name)
    }

    /// Bytes held.
    pub(super) fn len(&self) -> usize {
        self.files.values().map(|b| b.len()).sum()
    }
}

/// A directory that reads and never writes or locks, over the files read by [`DirFiles`]: a
/// segment's tag index is immutable once the catalog names it, so the locks tantivy takes to
/// read an index that may change are not needed (and could not be taken without write
/// permission).
#[derive(Clone, Debug)]
pub(super) struct ReadOnlyDir(pub(super) Arc<DirFiles>);

impl ReadOnlyDir {
    fn file(&self, path: &Path) -> std::result::Result<&OwnedBytes, OpenReadError> {
        self.0
            .get(&path.to_string_lossy())
            .ok_or_else(|| OpenReadError::FileDoesNotExist(path.to_owned()))
    }
}

impl tantivy::Directory for ReadOnlyDir {
    fn get_file_handle(
        &self,
        path: &Path,
    ) -> std::result::Result<Arc<dyn tantivy::directory::FileHandle>, OpenReadError> {
        Ok(Arc::new(self.file(path)?.clone()))
    }

    fn delete(
        &self,
        path: &Path,
    ) -> std::result::Result<(), tantivy::directory::error::DeleteError> {
        Err(tantivy::directory::error::DeleteError::IoError {
            io_error: std::sync::Arc::new(read_only()),
            filepath: path.to_owned(),
        })
    }

    fn exists(&self, path: &Path) -> std::result::Result<bool, OpenReadError> {
        Ok(self.0.get(&path.to_string_lossy()).is_some())
    }

    fn open_write(
        &self,
        path: &Path,
    ) -> std::result::Result<tantivy::directory::WritePtr, tantivy::directory::error::OpenWriteError>
    {
        Err(tantivy::directory::error::OpenWriteError::IoError {
            io_error: std::sync::Arc::new(read_only()),
            filepath: path.to_owned(),
        })
    }

    fn atomic_read(&self, path: &Path) -> std::result::Result<Vec<u8>, OpenReadError> {
        Ok(self.file(path)?.as_slice().to_vec())
    }

    fn atomic_write(&self, _path: &Path, _data: &[u8]) -> std::io::Result<()> {
        Err(read_only())
    }

    fn sync_directory(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn acquire_lock(
        &self,
        _lock: &tantivy::directory::Lock,
    ) -> std::result::Result<tantivy::directory::DirectoryLock, tantivy::directory::error::LockError>
    {
        Ok(tantivy::directory::DirectoryLock::from(Box::new(())))
    }

    fn watch(
        &self,
        _callback: tantivy::directory::WatchCallback,
    ) -> tantivy::Result<tantivy::directory::WatchHandle> {
        Ok(tantivy::directory::WatchHandle::empty())
    }
}

fn read_only() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        "a committed tag index is read-only",
    )
}

/// Whether a file of a tag index directory is part of its content (tantivy's lock files are
/// not).
fn is_content(name: &str) -> bool {
    !name.ends_with(".lock")
}

/// A digest of a tag index directory: every content file's name and bytes, in name order. The
/// catalog keeps it, and a reader checks it before trusting the index (a flipped byte in a
/// tantivy file gave wrong answers, or a panic, before).
pub fn dir_digest(dir: &Path) -> Result<u32> {
    Ok(DirFiles::read(dir)?.digest())
}

/// Gives every file of a tag index directory the permissions of `like` (a file of the same
/// database created with the process's umask).
pub fn match_permissions(dir: &Path, like: &Path) -> Result<()> {
    let perms = std::fs::metadata(like)
        .map_err(StorageError::io(like))?
        .permissions();
    for e in std::fs::read_dir(dir).map_err(StorageError::io(dir))? {
        let e = e.map_err(StorageError::io(dir))?;
        let path = e.path();
        if path.is_file() {
            std::fs::set_permissions(&path, perms.clone()).map_err(StorageError::io(&path))?;
        }
    }
    Ok(())
}
