//! Unpacked bitmaps kept for the next query, within a byte budget shared by the process.
//!
//! Why: a packed bitmap ([`crate::bitmap_pack`]) costs an unpacking on each read, and a
//! process that answers many queries (a benchmark, the SQL session, a server) reads the same
//! few bitmaps again and again. One cache for every open segment, so that the memory it takes
//! does not grow with the number of segments: [`DEFAULT_BUDGET`], or `CQLDB_BITMAP_CACHE_MB`
//! mebibytes from the environment (0 turns it off). A bitmap is kept from its second reading
//! (a one-off command keeps nothing), and the least recently read leave first. Small bitmaps
//! are not kept: unpacking them costs less than keeping them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use rustc_hash::FxHashMap;

/// The cache's size when the environment does not set one: the three piece bitmaps of
/// `Kg1 kg8 Rf1` over 10 M games unpack to more than 64 MiB, and least-recently-used keeps
/// nothing of a working set larger than itself (that query's in-process p50 was 61.5 ms at
/// 64 MiB). A command keeps nothing in it (see [`admit`]).
pub const DEFAULT_BUDGET: usize = 256 << 20;

/// Unpacked bitmaps smaller than this are not kept.
const SMALLEST_KEPT: usize = 2048;

/// A bitmap of one open segment: the segment's [`segment_uid`] and the bitmap's place in its
/// directory.
pub type CacheKey = (u64, u32);

/// A number that names an open segment for the life of the process (two opens of one file get
/// two: a replaced file never answers for its successor).
pub fn segment_uid() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

struct Entry {
    bytes: Arc<Vec<u8>>,
    last_read: u64,
}

/// Bitmaps remembered as offered once (see [`admit`]).
const SEEN_LIMIT: usize = 1 << 20;

#[derive(Default)]
struct Inner {
    entries: FxHashMap<CacheKey, Entry>,
    seen: rustc_hash::FxHashSet<CacheKey>,
    held: usize,
    clock: u64,
}

struct Cache {
    budget: usize,
    inner: Mutex<Inner>,
}

static CACHE: LazyLock<Cache> = LazyLock::new(|| Cache {
    budget: budget_from_env("CQLDB_BITMAP_CACHE_MB", DEFAULT_BUDGET),
    inner: Mutex::new(Inner::default()),
});

/// A cache's byte budget: `var`'s mebibytes from the environment (0 turns the cache off), else
/// `default` (also for a value that is not a number).
pub(crate) fn budget_from_env(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(default, |mb| mb.saturating_mul(1 << 20))
}

/// The unpacked bytes under `key`, if the cache holds them.
pub fn lookup(key: CacheKey) -> Option<Arc<Vec<u8>>> {
    CACHE.lookup(key)
}

/// Whether the unpacked bytes of `key` are to be kept ([`keep`]): from the second time a
/// bitmap is asked about, so a one-off query (a command) keeps nothing and its memory is only
/// what it reads, while a process that asks again keeps them.
pub fn admit(key: CacheKey) -> bool {
    CACHE.budget > 0 && CACHE.seen_before(key)
}

/// Keeps the unpacked bytes of `key` (if they fit the budget).
pub fn keep(key: CacheKey, bytes: Vec<u8>) {
    keep_shared(key, &Arc::new(bytes));
}

/// [`keep`] of bytes the caller goes on reading.
pub fn keep_shared(key: CacheKey, bytes: &Arc<Vec<u8>>) {
    let cache = &*CACHE;
    if bytes.len() >= SMALLEST_KEPT && bytes.len() <= cache.budget / 4 {
        cache.keep(key, bytes);
    }
}

impl Cache {
    fn lookup(&self, key: CacheKey) -> Option<Arc<Vec<u8>>> {
        let mut inner = self.inner.lock().ok()?;
        inner.clock += 1;
        let now = inner.clock;
        let e = inner.entries.get_mut(&key)?;
        e.last_read = now;
        Some(e.bytes.clone())
    }

    /// Whether `key` was offered before (and notes that it has been now).
    fn seen_before(&self, key: CacheKey) -> bool {
        let Ok(mut inner) = self.inner.lock() else {
            return false;
        };
        // Forgotten all at once past a bound: a few bytes a bitmap ever read.
        if inner.seen.len() >= SEEN_LIMIT {
            inner.seen.clear();
        }
        !inner.seen.insert(key)
    }

    fn keep(&self, key: CacheKey, bytes: &Arc<Vec<u8>>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.clock += 1;
        let entry = Entry {
            bytes: bytes.clone(),
            last_read: inner.clock,
        };
        if let Some(old) = inner.entries.insert(key, entry) {
            inner.held -= old.bytes.len();
        }
        inner.held += bytes.len();
        if inner.held > self.budget {
            // Down to three quarters at once: the sort is paid once per many insertions.
            let mut by_age: Vec<(u64, CacheKey)> = inner
                .entries
                .iter()
                .map(|(k, e)| (e.last_read, *k))
                .collect();
            by_age.sort_unstable();
            for (_, k) in by_age {
                if inner.held <= self.budget / 4 * 3 {
                    break;
                }
                if let Some(e) = inner.entries.remove(&k) {
                    inner.held -= e.bytes.len();
                }
            }
        }
    }
}

/// Bytes the cache holds now.
#[cfg(test)]
fn held_bytes() -> usize {
    CACHE.inner.lock().map_or(0, |i| i.held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_from_the_second_asking_within_its_budget_and_forgets_the_oldest() {
        let uid = segment_uid();
        let big = CACHE.budget / 8;
        assert!(!admit((uid, 0)));
        assert!(lookup((uid, 0)).is_none());
        for i in 0..40u32 {
            let _ = admit((uid, i));
            assert!(admit((uid, i)));
            keep((uid, i), vec![i as u8; big]);
            assert_eq!(lookup((uid, i)).map(|b| b.len()), Some(big));
            assert!(held_bytes() <= CACHE.budget);
        }
        // The newest is still there, the first long gone.
        assert!(lookup((uid, 39)).is_some());
        assert!(lookup((uid, 0)).is_none());
    }
}
