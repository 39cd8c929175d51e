//! Unpacked bitmaps kept for the next query, within a byte budget shared by the process.
//!
//! Why: a packed bitmap ([`crate::bitmap_pack`]) costs an unpacking on each read, and a
//! process that answers many queries (a benchmark, the SQL session, a server) reads the same
//! few bitmaps again and again. One cache for every open segment, so that the memory it takes
//! does not grow with the number of segments: [`DEFAULT_BUDGET`], or `CQLDB_BITMAP_CACHE_MB`
//! mebibytes from the environment (0 turns it off). A bitmap is kept from its second reading,
//! if room can be made for it (a one-off command keeps nothing). Small bitmaps are not kept:
//! unpacking them costs less than keeping them.
//!
//! What leaves for a newcomer: only bitmaps not read since the newcomer was last asked about,
//! least recently read first. Plain least-recently-used keeps nothing of a working set larger
//! than the budget: an exact `fen` over 10 M games reads some thirty large piece bitmaps in
//! each of 144 segments, and each repetition unpacked every one of them whole to keep it, only
//! to drop it before its next use (2.5 s in process, against 0.86 s with no cache at all). Under
//! this rule the bitmaps kept are those still in use, the others are read in part each time as
//! by a one-off command, and a workload that moves on frees the room its bitmaps took.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use rustc_hash::FxHashMap;

/// The cache's size when the environment does not set one: the three piece bitmaps of
/// `Kg1 kg8 Rf1` over 10 M games unpack to more than 64 MiB, and what does not fit is read in
/// part each time (that query's in-process p50 was 61.5 ms at 64 MiB, 34–44 ms at 256). A
/// command keeps nothing in it (see [`admit`]).
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

/// Bitmaps remembered as asked about (see [`admit`]): past this many, all are forgotten at
/// once, which costs each of them one more asking. The memory is a few tens of bytes each,
/// outside the budget.
const SEEN_LIMIT: usize = 1 << 20;

/// What the cache remembers of a bitmap asked about.
#[derive(Clone, Copy)]
struct Seen {
    /// The tick it was last asked about.
    asked: u64,
    /// Its unpacked size, once known to be too large to keep: a size hint can fall short.
    refused: usize,
}

#[derive(Default)]
struct Inner {
    entries: FxHashMap<CacheKey, Entry>,
    /// The entries by their last reading, oldest first (each reading has its own tick).
    by_age: BTreeMap<u64, CacheKey>,
    seen: FxHashMap<CacheKey, Seen>,
    held: usize,
    clock: u64,
}

impl Inner {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Whether `need` more bytes fit `budget` once the entries not read since tick `since`
    /// are dropped (none is dropped here).
    fn room(&self, need: usize, since: u64, budget: usize) -> bool {
        let mut held = self.held;
        for (&read, key) in &self.by_age {
            if held.saturating_add(need) <= budget || read >= since {
                break;
            }
            held -= self.entries.get(key).map_or(0, |e| e.bytes.len());
        }
        held.saturating_add(need) <= budget
    }

    /// Drops entries not read since tick `since`, oldest first, until `need` more bytes fit
    /// `budget`; false if they cannot.
    fn make_room(&mut self, need: usize, since: u64, budget: usize) -> bool {
        if !self.room(need, since, budget) {
            return false;
        }
        while self.held.saturating_add(need) > budget {
            let Some((_, key)) = self.by_age.pop_first() else {
                break;
            };
            if let Some(e) = self.entries.remove(&key) {
                self.held -= e.bytes.len();
            }
        }
        true
    }
}

struct Cache {
    budget: usize,
    inner: Mutex<Inner>,
}

static CACHE: LazyLock<Cache> =
    LazyLock::new(|| Cache::new(budget_from_env("CQLDB_BITMAP_CACHE_MB", DEFAULT_BUDGET)));

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

/// Whether the unpacked bytes of `key`, about `bytes_hint` of them, are to be kept ([`keep`]):
/// from the second time a bitmap is asked about, so a one-off query (a command) keeps nothing
/// and its memory is only what it reads, while a process that asks again keeps them, if there
/// is room for them (see the module's rule). `Some` carries what [`keep`] needs.
pub fn admit(key: CacheKey, bytes_hint: usize) -> Option<Admitted> {
    CACHE.admit(key, bytes_hint)
}

/// A bitmap admitted to the cache: when it was last asked about before.
#[derive(Clone, Copy, Debug)]
pub struct Admitted {
    since: u64,
}

/// Keeps the unpacked bytes of `key`, if the bitmaps not read since it was admitted free the
/// room for them (else its size is remembered, so that it is not admitted again to no end).
pub fn keep(key: CacheKey, bytes: Vec<u8>, admitted: Admitted) {
    keep_shared(key, &Arc::new(bytes), admitted);
}

/// [`keep`] of bytes the caller goes on reading.
pub fn keep_shared(key: CacheKey, bytes: &Arc<Vec<u8>>, admitted: Admitted) {
    CACHE.keep(key, bytes, admitted);
}

impl Cache {
    fn new(budget: usize) -> Self {
        Self {
            budget,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn admit(&self, key: CacheKey, bytes_hint: usize) -> Option<Admitted> {
        if self.budget == 0 {
            return None;
        }
        let mut inner = self.inner.lock().ok()?;
        if inner.seen.len() >= SEEN_LIMIT && !inner.seen.contains_key(&key) {
            inner.seen = FxHashMap::default();
        }
        let asked = inner.tick();
        let before = inner.seen.get(&key).copied();
        let refused = before.map_or(0, |b| b.refused);
        inner.seen.insert(key, Seen { asked, refused });
        let before = before?;
        let need = bytes_hint.max(before.refused);
        // Unpacked whole only to be kept: not for a size `keep` turns away.
        (self.keepable(need) && inner.room(need, before.asked, self.budget)).then_some(Admitted {
            since: before.asked,
        })
    }

    /// Whether bitmaps of `bytes` unpacked are kept at all.
    fn keepable(&self, bytes: usize) -> bool {
        bytes >= SMALLEST_KEPT && bytes <= self.budget / 4
    }

    fn lookup(&self, key: CacheKey) -> Option<Arc<Vec<u8>>> {
        let mut inner = self.inner.lock().ok()?;
        let now = inner.tick();
        let e = inner.entries.get_mut(&key)?;
        let before = std::mem::replace(&mut e.last_read, now);
        let bytes = e.bytes.clone();
        inner.by_age.remove(&before);
        inner.by_age.insert(now, key);
        Some(bytes)
    }

    fn keep(&self, key: CacheKey, bytes: &Arc<Vec<u8>>, admitted: Admitted) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        // Another reader unpacked and kept it meanwhile.
        if inner.entries.contains_key(&key) {
            return;
        }
        // Other readers may have filled the room since the admission, or the hint fell short.
        if !self.keepable(bytes.len()) || !inner.make_room(bytes.len(), admitted.since, self.budget)
        {
            if let Some(s) = inner.seen.get_mut(&key) {
                s.refused = bytes.len();
            }
            return;
        }
        let now = inner.tick();
        inner.entries.insert(
            key,
            Entry {
                bytes: bytes.clone(),
                last_read: now,
            },
        );
        inner.by_age.insert(now, key);
        inner.held += bytes.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: usize = 1 << 16;

    /// The bytes held, checked against the entries and their order.
    fn held(c: &Cache) -> usize {
        let i = c.inner.lock().expect("not poisoned");
        let sum: usize = i.entries.values().map(|e| e.bytes.len()).sum();
        assert_eq!(i.held, sum);
        assert_eq!(i.by_age.len(), i.entries.len());
        assert!(
            i.entries
                .iter()
                .all(|(k, e)| i.by_age.get(&e.last_read) == Some(k))
        );
        i.held
    }

    /// `key` asked about (kept if admitted); whether it was found kept.
    fn read(c: &Cache, key: CacheKey, size: usize) -> bool {
        if c.lookup(key).is_some() {
            return true;
        }
        if let Some(a) = c.admit(key, size) {
            c.keep(key, &Arc::new(vec![0; size]), a);
        }
        false
    }

    #[test]
    fn admits_from_the_second_asking_within_its_budget_and_forgets_what_is_not_read() {
        let c = Cache::new(BUDGET);
        let big = BUDGET / 8;
        assert!(c.lookup((0, 0)).is_none());
        for i in 0..40u32 {
            assert!(
                c.admit((0, i), big).is_none(),
                "the first asking keeps nothing"
            );
            let a = c
                .admit((0, i), big)
                .expect("asked again, the others not read since");
            c.keep((0, i), &Arc::new(vec![i as u8; big]), a);
            assert_eq!(c.lookup((0, i)).map(|b| b.len()), Some(big));
            assert!(held(&c) <= BUDGET);
        }
        // The newest is still there, the first long gone.
        assert!(c.lookup((0, 39)).is_some());
        assert!(c.lookup((0, 0)).is_none());
    }

    /// A working set larger than the budget, read round and round: what is kept stays kept
    /// (each round finds it), and the rest is not admitted to be unpacked in vain.
    #[test]
    fn a_working_set_larger_than_the_budget_does_not_churn() {
        let c = Cache::new(BUDGET);
        let big = BUDGET / 8;
        let mut kept_before: Option<Vec<u32>> = None;
        for round in 0..5 {
            let (mut kept, mut admitted) = (Vec::new(), 0);
            for i in 0..24u32 {
                if c.lookup((0, i)).is_some() {
                    kept.push(i);
                } else if let Some(a) = c.admit((0, i), big) {
                    admitted += 1;
                    c.keep((0, i), &Arc::new(vec![0; big]), a);
                }
                assert!(held(&c) <= BUDGET);
            }
            if round >= 2 {
                assert_eq!(kept.len(), 8, "the budget's worth found each round");
                assert_eq!(admitted, 0, "nothing unpacked to be dropped");
            }
            if round >= 3 {
                assert_eq!(kept_before.as_ref(), Some(&kept), "the same ones");
            }
            kept_before = Some(kept);
        }
    }

    /// A workload that moves on: the bitmaps it no longer reads make room for the new ones.
    #[test]
    fn a_new_working_set_replaces_one_no_longer_read() {
        let c = Cache::new(BUDGET);
        let big = BUDGET / 8;
        for set in [0u64, 1] {
            for _round in 0..3 {
                for i in 0..8u32 {
                    if c.lookup((set, i)).is_none()
                        && let Some(a) = c.admit((set, i), big)
                    {
                        c.keep((set, i), &Arc::new(vec![0; big]), a);
                    }
                }
            }
            assert!(
                (0..8).all(|i| c.lookup((set, i)).is_some()),
                "set {set} kept"
            );
        }
    }

    /// A full cache with some entries still read and some not: a newcomer takes the room of
    /// those not read since it was first asked about, and the others stay.
    #[test]
    fn unread_entries_leave_first_and_read_ones_stay() {
        let c = Cache::new(BUDGET);
        let big = BUDGET / 8;
        for _ in 0..2 {
            (0..8).for_each(|i| _ = read(&c, (0, i), big));
        }
        assert!((0..8).all(|i| c.lookup((0, i)).is_some()));
        (0..4).for_each(|i| _ = read(&c, (1, i), big));
        (0..4).for_each(|i| assert!(read(&c, (0, i), big)));
        (0..4).for_each(|i| _ = read(&c, (1, i), big));
        assert!(
            (0..4).all(|i| c.lookup((0, i)).is_some()),
            "still read: kept"
        );
        assert!(
            (4..8).all(|i| c.lookup((0, i)).is_none()),
            "not read since: gone"
        );
        assert!(
            (0..4).all(|i| c.lookup((1, i)).is_some()),
            "the newcomers kept"
        );
        assert_eq!(held(&c), BUDGET);
    }

    /// A bitmap whose size hint fell short of a size too large to keep is unpacked once for
    /// nothing, not on every reading; one asked about a third time after the room was taken
    /// is not kept over entries in use.
    #[test]
    fn a_refusal_is_remembered() {
        let c = Cache::new(BUDGET);
        assert!(c.admit((0, 0), 4096).is_none());
        let a = c.admit((0, 0), 4096).expect("a small hint is admitted");
        c.keep((0, 0), &Arc::new(vec![0; BUDGET / 2]), a);
        assert!(c.lookup((0, 0)).is_none());
        assert!(
            c.admit((0, 0), 4096).is_none(),
            "its real size is remembered"
        );
        assert!(c.admit((0, 1), BUDGET).is_none());
        assert!(
            c.admit((0, 1), BUDGET).is_none(),
            "larger than a quarter of the budget"
        );
        assert_eq!(held(&c), 0);
    }
}
