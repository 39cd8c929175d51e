//! Memory maps that survive their file shrinking under them.
//!
//! Segments, tag indexes and `.gtf` logs are read through memory maps. When another program
//! truncates a mapped file, touching a page past the new end raises SIGBUS, which kills the
//! process (exit 135) wherever it happens: no length check made before the access can prevent
//! it, as the file can shrink right after the check. So every map of this crate is registered
//! here, and a SIGBUS handler turns the fault into an error:
//!
//! - the handler (SA_SIGINFO, `BUS_ADRERR`: an access to a page the file no longer backs) maps
//!   a zero page over the faulting page, marks the registered map that holds the address as
//!   shrunk, counts the fault, and returns, so the access reads zeros instead of killing the
//!   process;
//! - readers then check: a segment checks its map's mark after each block it decodes, and a
//!   query checks [`faults`] before it answers ([`shrunk_since`]), so zeros read from a shrunk
//!   file become an error naming the file, never an answer. Zeros read as lengths and offsets
//!   of 0, so nothing they lead to reads out of bounds; a library that panics on them is caught
//!   and the same check names the file.
//!
//! A fault at an address no map here registered (a map of another library whose file shrank)
//! is also zero-filled and counted; the error then names what the query was reading. Any other
//! SIGBUS keeps its default action. `mmap` is a plain system call on Linux and is what such
//! handlers use; it is made only with fixed arguments.
//!
//! Why zero pages rather than reading into buffers: queries read bitmaps and columns in place,
//! and copying them cost more than the answers they give (BENCHMARKS.md).

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};

use memmap2::Mmap;

use crate::error::StorageError;

const SLOTS: usize = 4096;
const FREE: u8 = 0;
const FILLING: u8 = 1;
const READY: u8 = 2;

/// A registered map's address range, readable by the signal handler without locks.
struct Slot {
    state: AtomicU8,
    start: AtomicUsize,
    end: AtomicUsize,
    shrunk: AtomicBool,
}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        state: AtomicU8::new(FREE),
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        shrunk: AtomicBool::new(false),
    }
}; SLOTS];

/// The file of each slot (read and written outside the handler only).
static PATHS: Mutex<Vec<Option<PathBuf>>> = Mutex::new(Vec::new());

static FAULTS: AtomicU64 = AtomicU64::new(0);

/// How many faults on shrunk files the process has seen.
pub fn faults() -> u64 {
    FAULTS.load(Ordering::Acquire)
}

/// An error naming the shrunk files when faults happened since `before` (a [`faults`]
/// reading), else `None`. `reading` names what was being read, for a fault in a map another
/// library made.
pub fn shrunk_since(before: u64, reading: &Path) -> Option<StorageError> {
    if faults() == before {
        return None;
    }
    let named: Vec<String> = PATHS
        .lock()
        .map(|paths| {
            TABLE
                .iter()
                .zip(paths.iter())
                .filter(|(slot, _)| slot.shrunk.load(Ordering::Acquire))
                .filter_map(|(_, p)| p.as_ref().map(|p| p.display().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let path = match named.first() {
        Some(p) => PathBuf::from(p),
        None => reading.to_owned(),
    };
    Some(StorageError::corrupt(
        path,
        "the file shrank while it was being read (truncated by another program?); no answer was given from it",
    ))
}

/// A read-only memory map of a whole file, registered with the SIGBUS handler.
pub struct Map {
    map: Mmap,
    slot: Option<usize>,
}

impl Map {
    /// Maps `file` (whose name is `path`, for errors). A file of zero bytes cannot be mapped:
    /// the caller handles that case.
    pub fn open(file: &std::fs::File, path: &Path) -> std::io::Result<Self> {
        install();
        // SAFETY: the files mapped here are written once and never modified in place; one that
        // shrinks under the map is caught by the handler above and reported.
        let map = unsafe { Mmap::map(file) }?;
        // Queries read a few scattered parts of each segment (a header, a directory chunk, a
        // bitmap): read-around would fault in, and map, far more than they touch. Bulk reads
        // ask for their range ahead ([`Map::will_need`]).
        let _ = map.advise(memmap2::Advice::Random);
        let slot = register(map.as_ptr() as usize, map.len(), path);
        Ok(Self { map, slot })
    }

    /// Asks the kernel to read `bytes` (a part of this map about to be read whole, such as a
    /// position block) ahead, in one request rather than page by page.
    pub fn will_need(&self, bytes: &[u8]) {
        let Some(offset) = self.offset_of(bytes) else {
            return;
        };
        let page = page_size();
        // Advice needs a page-aligned start. A part within one page is read by its one fault:
        // the advice would only add a system call.
        let aligned = offset - offset % page;
        if bytes.len() + (offset - aligned) <= page {
            return;
        }
        let _ = self.map.advise_range(
            memmap2::Advice::WillNeed,
            aligned,
            bytes.len() + (offset - aligned),
        );
    }

    /// As [`Map::will_need`] for a part of a run of parts read in order (a whole segment's
    /// position blocks, for a merge or a full scan): with the map advised random, each small
    /// part would be its own read from disk, so a window of [`AHEAD`] bytes from it is asked
    /// for at once, and again when the reads pass its end.
    pub fn will_need_in_order(&self, bytes: &[u8], ahead: &mut Ahead) {
        let Some(offset) = self.offset_of(bytes) else {
            return;
        };
        let end = offset + bytes.len();
        if end <= ahead.until {
            return;
        }
        let until = end.max(offset.saturating_add(AHEAD)).min(self.map.len());
        self.will_need(&self.map[offset..until]);
        ahead.until = until;
    }

    /// Where `bytes`, a non-empty part of this map, starts in it (`None` for anything else).
    fn offset_of(&self, bytes: &[u8]) -> Option<usize> {
        let offset = (bytes.as_ptr() as usize).checked_sub(self.map.as_ptr() as usize)?;
        (!bytes.is_empty() && offset.checked_add(bytes.len())? <= self.map.len()).then_some(offset)
    }

    /// Unmaps this map's pages from the process; the kernel keeps them in its page cache, and
    /// a later read faults them back in from there. Every page a read touches stays mapped,
    /// and with its neighbours (the kernel maps cached pages around a fault), so a run over
    /// many segments otherwise ends holding a share of each: a `fen` count over the 144
    /// segments of 10 M games peaked at 325 MiB, nearly all of it such pages (BENCHMARKS.md).
    pub fn release(&self) {
        // SAFETY: the map is shared and read-only, so dropping its pages loses nothing: the
        // file's bytes read back the same (DONTNEED discards private changes, and there are
        // none). Slices into the map stay valid: the mapping itself is kept.
        let _ = unsafe {
            self.map
                .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
        };
    }

    /// Whether a page of this map was found missing (its file shrank).
    pub fn shrunk(&self) -> bool {
        self.slot
            .and_then(|s| TABLE.get(s))
            .is_some_and(|s| s.shrunk.load(Ordering::Acquire))
    }
}

/// The system's page size (read once).
fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(page)
            .ok()
            .filter(|&p| p > 0)
            .unwrap_or(4096)
    })
}

/// Bytes read ahead at once through parts read in order.
pub const AHEAD: usize = 4 << 20;

/// How far reading ahead through one run of parts has been asked for (see
/// [`Map::will_need_in_order`]).
#[derive(Debug, Default)]
pub struct Ahead {
    until: usize,
}

/// Drops a just-written, synced file's pages from the page cache. Written pages sit in the
/// cache in large blocks, and a reader that maps the file then maps a whole block for each
/// small part it touches: a count over many segments held hundreds of megabytes of them.
/// Read back on demand, the pages come in as small as readers ask for them.
pub fn release_written(file: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: advice on an open descriptor; no memory is passed.
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

impl Deref for Map {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map
    }
}

// SAFETY: the bytes live in the mapping, which does not move when the `Map` value moves.
unsafe impl stable_deref_trait::StableDeref for Map {}

impl Drop for Map {
    fn drop(&mut self) {
        if let Some(s) = self.slot.take()
            && let Some(slot) = TABLE.get(s)
        {
            slot.state.store(FREE, Ordering::Release);
            if let Ok(mut paths) = PATHS.lock()
                && let Some(p) = paths.get_mut(s)
            {
                *p = None;
            }
        }
    }
}

fn register(start: usize, len: usize, path: &Path) -> Option<usize> {
    for (i, slot) in TABLE.iter().enumerate() {
        if slot
            .state
            .compare_exchange(FREE, FILLING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            slot.start.store(start, Ordering::Relaxed);
            slot.end.store(start + len, Ordering::Relaxed);
            slot.shrunk.store(false, Ordering::Relaxed);
            if let Ok(mut paths) = PATHS.lock() {
                if paths.len() <= i {
                    paths.resize(i + 1, None);
                }
                paths[i] = Some(path.to_owned());
            }
            slot.state.store(READY, Ordering::Release);
            return Some(i);
        }
    }
    // More maps than slots: this one is still caught by the handler (as an unregistered
    // map), only its error cannot name it.
    None
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    if code != libc::BUS_ADRERR {
        // Not a page past a file's end (a hardware error, an alignment fault): the default
        // action, once this handler returns and the access faults again.
        // SAFETY: signal is async-signal-safe.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
        return;
    }
    for slot in &TABLE {
        if slot.state.load(Ordering::Acquire) == READY
            && (slot.start.load(Ordering::Relaxed)..slot.end.load(Ordering::Relaxed))
                .contains(&addr)
        {
            slot.shrunk.store(true, Ordering::Release);
        }
    }
    // SAFETY: sysconf and mmap are plain system calls; the new page replaces one page of a
    // mapping that faulted, read-only and filled with zeros.
    let ok = unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE).max(4096) as usize;
        let at = addr & !(page - 1);
        libc::mmap(
            at as *mut libc::c_void,
            page,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        ) != libc::MAP_FAILED
    };
    if ok {
        FAULTS.fetch_add(1, Ordering::AcqRel);
    } else {
        // SAFETY: as above.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
}

/// Installs the SIGBUS handler once.
fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sigaction with a zeroed struct and a handler that makes only the calls
        // described in the module doc.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_sigbus
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as usize;
            act.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(libc::SIGBUS, &act, std::ptr::null_mut());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_truncated_under_its_map_reads_zeros_and_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 16]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let map = Map::open(&file, &path).unwrap();
        let before = faults();
        assert_eq!(map[40_000], 7);
        assert!(shrunk_since(before, &path).is_none());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        assert_eq!(map[40_000], 0, "a page past the new end reads as zeros");
        assert!(map.shrunk());
        let e = shrunk_since(before, Path::new("x")).unwrap().to_string();
        assert!(
            e.contains("shrank") && e.contains(&path.display().to_string()),
            "{e}"
        );
    }

    /// The resident bytes of the mapping that starts at `start`, from the kernel's per-mapping
    /// table (other threads' memory does not count).
    #[cfg(target_os = "linux")]
    fn resident_kib(start: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let head = format!("{start:x}-");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
        assert!(lines.next().is_some(), "mapping {head} not listed");
        lines
            .find_map(|l| l.strip_prefix("Rss:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn released_pages_leave_the_process_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let map = Map::open(&file, &path).unwrap();
        let start = map.as_ptr() as usize;
        let sum = |m: &Map| m.iter().map(|&b| u64::from(b)).sum::<u64>();
        let want: u64 = bytes.iter().map(|&b| u64::from(b)).sum();
        assert_eq!(sum(&map), want);
        assert!(resident_kib(start) >= 4 << 10, "every page was read");
        map.release();
        assert_eq!(
            resident_kib(start),
            0,
            "released pages are no longer mapped"
        );
        assert_eq!(sum(&map), want, "and read back the same");
        assert!(!map.shrunk());
    }
}
