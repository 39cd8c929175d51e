//! The open tag indexes of a database's segments, kept within a byte budget.
//!
//! Why: an open tag index holds its files (read at open) and the word lists it has read, and a
//! database of many segments would otherwise keep one per segment for as long as it is open (a
//! server, the SQL session, a benchmark). A reader is kept from its segment's second asking, so a
//! one-off command keeps none and each reader closes when its segment's scan ends; the least
//! recently used leave first once the kept readers hold more than the budget:
//! [`DEFAULT_BUDGET`], or `CQLDB_TAG_CACHE_MB` mebibytes from the environment (0 keeps none).

use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::Result;
use crate::tags::TagReader;

/// The budget when the environment sets none: the tag indexes of the 144 segments of 10 M
/// games fit (166 MB of files and 72 MiB besides; indexes written with field norms, 226 MB of
/// files, mostly do).
pub const DEFAULT_BUDGET: usize = 256 << 20;

/// Open tag readers by segment (its place in the database), within a byte budget.
pub struct TagReaderCache {
    budget: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    kept: FxHashMap<usize, Kept>,
    /// Segments asked about once (a reader is kept from the second time).
    seen: FxHashSet<usize>,
    clock: u64,
}

struct Kept {
    reader: Arc<TagReader>,
    last_used: u64,
}

impl TagReaderCache {
    /// A cache within `budget` bytes.
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// A cache within the budget the environment sets (see the module's doc).
    pub fn from_env() -> Self {
        Self::new(crate::bitmap_cache::budget_from_env(
            "CQLDB_TAG_CACHE_MB",
            DEFAULT_BUDGET,
        ))
    }

    /// Segment `segment`'s reader: the kept one, or one `open` makes (kept if the segment was
    /// asked about before and it fits).
    pub fn get_or_open(
        &self,
        segment: usize,
        open: impl FnOnce() -> Result<TagReader>,
    ) -> Result<Arc<TagReader>> {
        let admit = match self.inner.lock() {
            Ok(mut inner) => {
                inner.clock += 1;
                let now = inner.clock;
                if let Some(k) = inner.kept.get_mut(&segment) {
                    k.last_used = now;
                    return Ok(k.reader.clone());
                }
                self.budget > 0 && !inner.seen.insert(segment)
            }
            Err(_) => false,
        };
        // Opened outside the lock: opening reads files, and other segments' scans go on.
        let reader = Arc::new(open()?);
        if admit {
            self.keep(segment, &reader);
        }
        Ok(reader)
    }

    fn keep(&self, segment: usize, reader: &Arc<TagReader>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.clock += 1;
        let last_used = inner.clock;
        inner.kept.entry(segment).or_insert_with(|| Kept {
            reader: reader.clone(),
            last_used,
        });
        // Weighed now, not when kept: a reader's word lists are read by later searches.
        let mut held: usize = inner.kept.values().map(|k| k.reader.held_bytes()).sum();
        if held <= self.budget {
            return;
        }
        let mut by_age: Vec<(u64, usize)> =
            inner.kept.iter().map(|(&s, k)| (k.last_used, s)).collect();
        by_age.sort_unstable();
        for (_, s) in by_age {
            if held <= self.budget {
                break;
            }
            if let Some(k) = inner.kept.remove(&s) {
                held -= k.reader.held_bytes();
            }
        }
    }

    /// How many readers are kept.
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.kept.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::TagWriter;

    /// A tag index of a few games in `tmp`, and its directory.
    fn index(tmp: &tempfile::TempDir) -> std::path::PathBuf {
        let dir = tmp.path().join("tags");
        let mut w = TagWriter::create(&dir).unwrap();
        for g in 0..4u32 {
            let tags = vec![("White".to_owned(), format!("Player {g}"))];
            w.add(g, &tags).unwrap();
        }
        w.finish().unwrap();
        dir
    }

    /// Opens the index in `dir`, counting the calls in `opened`.
    fn opener<'a>(
        dir: &'a std::path::Path,
        opened: &'a std::cell::Cell<u32>,
    ) -> impl FnOnce() -> Result<TagReader> + 'a {
        move || {
            opened.set(opened.get() + 1);
            TagReader::open(dir)
        }
    }

    #[test]
    fn a_reader_is_kept_from_the_second_asking_and_the_oldest_leaves_first() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = index(&tmp);
        let opened = std::cell::Cell::new(0);
        // Room for two readers and a half.
        let cache = TagReaderCache::new(OPEN_BYTES * 5 / 2);
        for segment in [0, 0, 0] {
            cache.get_or_open(segment, opener(&dir, &opened)).unwrap();
        }
        // Opened for the first two askings, found kept by the third.
        assert_eq!((opened.get(), cache.kept()), (2, 1));
        for segment in [1, 1, 2, 2] {
            cache.get_or_open(segment, opener(&dir, &opened)).unwrap();
        }
        assert_eq!(opened.get(), 6);
        assert_eq!(cache.kept(), 2, "the budget holds two readers");
        let inner = cache.inner.lock().unwrap();
        assert!(!inner.kept.contains_key(&0), "the least recently used left");
    }

    #[test]
    fn a_zero_budget_keeps_nothing_and_errors_are_not_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = index(&tmp);
        let cache = TagReaderCache::new(0);
        for _ in 0..3 {
            cache.get_or_open(0, || TagReader::open(&dir)).unwrap();
        }
        assert_eq!(cache.kept(), 0);
        let cache = TagReaderCache::new(DEFAULT_BUDGET);
        let missing = tmp.path().join("missing");
        for _ in 0..2 {
            assert!(cache.get_or_open(1, || TagReader::open(&missing)).is_err());
        }
        assert_eq!(cache.kept(), 0);
    }

    const OPEN_BYTES: usize = crate::tags::OPEN_READER_BYTES;
}
