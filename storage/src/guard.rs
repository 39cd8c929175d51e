//! Turning a library's panic on damaged input into an error naming the file.
//!
//! redb and tantivy check much of what they read, but not all: a flipped byte in a B-tree page or
//! an FST can make them panic. Every call into them on data read from disk goes through
//! [`catch`], so a damaged file is a clear error, never a crash. While such a call runs,
//! [`guarded`] is true, so that a program's panic hook can stay quiet about a panic that will be
//! reported as an error.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use crate::error::{Result, StorageError};

thread_local! {
    static GUARDED: Cell<u32> = const { Cell::new(0) };
}

/// Whether the current thread is inside [`catch`].
pub fn guarded() -> bool {
    GUARDED.with(|g| g.get() > 0)
}

/// Runs `f`, which reads `path`; a panic inside it becomes a "damaged" error naming the file.
pub fn catch<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    GUARDED.with(|g| g.set(g.get() + 1));
    let out = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get().saturating_sub(1)));
    out.unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no detail".into());
        Err(StorageError::corrupt(
            path,
            format!("damaged: the library reading it failed ({why})"),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_naming_the_file() {
        let r: Result<()> = catch(Path::new("x/catalog.redb"), || panic!("unreachable code"));
        let msg = r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("catalog.redb") && msg.contains("damaged"),
            "{msg}"
        );
        assert!(!guarded());
        assert_eq!(catch(Path::new("x"), || Ok(3)).ok(), Some(3));
    }
}
