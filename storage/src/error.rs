//! The one error type of the storage crate.

use std::path::PathBuf;

/// Everything that can go wrong while reading or writing a database.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// An operating-system level failure, with the file it concerned.
    /// (The reason is part of the message, not a separate cause, so that a report of the
    /// whole chain does not say it twice.)
    #[error("{path}: {error}")]
    Io {
        /// The file or directory that failed.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// A file failed its checksum, magic or structure check.
    #[error("{path}: corrupt file: {reason}")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What check failed.
        reason: String,
    },
    /// A file could not be written (a failure that is not the operating system's).
    #[error("{path}: writing failed: {reason}")]
    Write {
        /// The file being written.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// The database directory does not exist or holds no catalog.
    #[error("{0}: not a cqldb database (no catalog.redb); build one with `cqldb index`")]
    NotADatabase(PathBuf),
    /// A directory that holds segment files but neither catalog copy: a damaged database.
    #[error(
        "{0}: holds segment files but no catalog (catalog.redb and catalog.manifest are missing): a damaged database, not an empty one; `cqldb repair --db {0}` rebuilds the catalog from the segments"
    )]
    LostCatalog(PathBuf),
    /// An operation refused because it would write where it must not (a usage error).
    #[error("{path}: {reason}")]
    Refused {
        /// The directory or file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The catalog was written by a newer or older, incompatible schema.
    #[error(
        "{path}: schema version {found}, this build reads version {expected}; index the games again into a new database"
    )]
    SchemaMismatch {
        /// The catalog file.
        path: PathBuf,
        /// The version found on disk.
        found: u64,
        /// The version this build writes and reads.
        expected: u64,
    },
    /// Another process holds the database open for writing.
    #[error("{0}: the database is in use by another cqldb process")]
    Locked(PathBuf),
    /// A failure inside the redb catalog.
    #[error("catalog: {0}")]
    Catalog(String),
    /// A failure inside the tantivy tag index.
    #[error("tag index: {0}")]
    Tags(#[from] tantivy::TantivyError),
    /// A malformed search-tree log (line and reason).
    #[error("search-tree log: {0}")]
    Format(String),
    /// A tag search that cannot be run (bad syntax, unknown field, phrase on a field without
    /// positions).
    #[error("tag query: {0}")]
    TagQuery(String),
    /// A game or position number outside the database.
    #[error("{what} {number} does not exist (the database holds {available})")]
    NotFound {
        /// "game" or "position".
        what: &'static str,
        /// The number asked for.
        number: u64,
        /// How many there are.
        available: u64,
    },
}

impl StorageError {
    /// Wraps an I/O error with the path it concerned (for `map_err`).
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> StorageError {
        let path = path.into();
        move |error| StorageError::Io { path, error }
    }

    pub(crate) fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> StorageError {
        StorageError::Corrupt {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// Result alias for the storage crate.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;
