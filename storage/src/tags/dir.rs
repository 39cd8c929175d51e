//! Where a segment's tag index lives: a directory read without writing or locking, its
//! digest (what the catalog records), and its files' permissions.

use std::path::Path;

use crate::error::{Result, StorageError};

/// A directory that reads and never writes or locks: a segment's tag index is immutable once
/// the catalog names it, so the locks tantivy takes to read an index that may change are not
/// needed (and could not be taken without write permission).
/// Files are mapped through [`crate::mapped::Map`], so one that shrinks under a search is an
/// error, not a SIGBUS.
#[derive(Clone, Debug)]
pub(super) struct ReadOnlyDir(
    pub(super) tantivy::directory::MmapDirectory,
    pub(super) std::path::PathBuf,
);

impl tantivy::Directory for ReadOnlyDir {
    fn get_file_handle(
        &self,
        path: &Path,
    ) -> std::result::Result<
        std::sync::Arc<dyn tantivy::directory::FileHandle>,
        tantivy::directory::error::OpenReadError,
    > {
        let full = self.1.join(path);
        let err = |e: std::io::Error| {
            tantivy::directory::error::OpenReadError::wrap_io_error(e, path.to_owned())
        };
        let file = std::fs::File::open(&full).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                tantivy::directory::error::OpenReadError::FileDoesNotExist(path.to_owned())
            } else {
                err(e)
            }
        })?;
        if file.metadata().map_err(err)?.len() == 0 {
            return Ok(std::sync::Arc::new(tantivy::directory::OwnedBytes::empty()));
        }
        let map = crate::mapped::Map::open(&file, &full).map_err(err)?;
        Ok(std::sync::Arc::new(tantivy::directory::OwnedBytes::new(
            map,
        )))
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

    fn exists(
        &self,
        path: &Path,
    ) -> std::result::Result<bool, tantivy::directory::error::OpenReadError> {
        self.0.exists(path)
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

    fn atomic_read(
        &self,
        path: &Path,
    ) -> std::result::Result<Vec<u8>, tantivy::directory::error::OpenReadError> {
        self.0.atomic_read(path)
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
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).map_err(StorageError::io(dir))? {
        let e = e.map_err(StorageError::io(dir))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if is_content(&name) {
            names.push(name);
        }
    }
    names.sort();
    let mut d = crate::digest::Digest::new();
    for name in names {
        let path = dir.join(&name);
        let file = std::fs::File::open(&path).map_err(StorageError::io(&path))?;
        d.column(name.as_bytes());
        // Mapped, not read: a query checks every segment's index, and buffers read into cost
        // more in fresh zeroed pages than the checksum itself. An empty file cannot be mapped.
        if file.metadata().map_err(StorageError::io(&path))?.len() == 0 {
            d.column(&[]);
            continue;
        }
        // The index files are written once and never modified in place (`repair` builds a new
        // directory and renames it over the old); one that shrinks is reported.
        let map = crate::mapped::Map::open(&file, &path).map_err(StorageError::io(&path))?;
        d.column(&map);
        if map.shrunk() {
            return Err(StorageError::corrupt(
                &path,
                "the file shrank while it was being read (truncated by another program?)",
            ));
        }
    }
    Ok(d.finish())
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
