//! Files written for the user (query output, imported trees, exports): never over one of the
//! run's inputs, never inside a database, and never seen half-written.
//!
//! A careless `-o` is the commonest way to lose data with a command-line tool: `-o in.pgn` with
//! `-i in.pgn` truncates the input before a single game is read, and `-o DB/seg-000001.cqs`
//! empties a segment. [`refuse_unsafe_target`] compares the target with every input by device
//! and inode (so `./in.pgn`, hard links and symlinks are caught, not only equal names) and
//! refuses any target inside a database directory, before anything is opened for writing.
//!
//! [`AtomicFile`] then writes to a temporary file beside the target and renames it over the
//! target only when [`AtomicFile::commit`] is reached: an error, a full disk, SIGINT, SIGTERM
//! or SIGHUP leave the previous file untouched and no partial file. A signal cannot run the
//! destructors, so the temporary names live in a fixed table that the signal handler (which
//! may only make async-signal-safe calls) unlinks before the process dies of the signal.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use crate::catalog::{CATALOG_FILE, LOCK_FILE};
use crate::error::{Result, StorageError};
use crate::manifest::MANIFEST_FILE;

/// Why a target was refused (a usage error: the command line asked for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

/// What a run reads, for [`refuse_unsafe_target`].
#[derive(Debug, Clone, Copy)]
pub enum ReadSource<'a> {
    /// A file (followed through symlinks).
    Path(&'a Path),
    /// Standard input (a redirected file is compared like any input).
    Stdin,
    /// A database directory (any target inside it is refused anyway).
    Database(&'a Path),
}

/// Refuses `target` when writing it would destroy something the run reads or a database: the
/// same file as an input (device and inode), or a path inside a database directory. `-` (the
/// standard output) is never refused.
pub fn refuse_unsafe_target(
    target: &Path,
    inputs: &[ReadSource<'_>],
) -> std::result::Result<(), Refusal> {
    if target.as_os_str() == "-" {
        return Ok(());
    }
    if let Ok(meta) = std::fs::metadata(target) {
        for input in inputs {
            let same = match input {
                ReadSource::Path(p) => std::fs::metadata(p).is_ok_and(|m| same_file(&m, &meta)),
                ReadSource::Stdin => stdin_identity().is_some_and(|id| id == identity(&meta)),
                ReadSource::Database(_) => false,
            };
            if same {
                let what = match input {
                    ReadSource::Path(p) => format!("the input {}", p.display()),
                    ReadSource::Stdin | ReadSource::Database(_) => "the standard input".into(),
                };
                return Err(Refusal(format!(
                    "refusing to write {}: it is the same file as {what} (writing it would destroy the input); choose another output file",
                    target.display()
                )));
            }
        }
    }
    if let Some(db) = enclosing_database(target) {
        return Err(Refusal(format!(
            "refusing to write {}: it is inside the database directory {} (writing there would damage the database); choose a file outside it",
            target.display(),
            db.display()
        )));
    }
    Ok(())
}

fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    identity(a) == identity(b)
}

/// Device and inode of the standard input when it is a regular file (`< in.pgn`).
fn stdin_identity() -> Option<(u64, u64)> {
    // SAFETY: fstat on descriptor 0 writes only into the zeroed struct it is given.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::fstat(0, &mut st) };
    (r == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFREG).then_some((st.st_dev, st.st_ino))
}

/// The database directory `target` would be written into, if any: the directory that will
/// hold it (symlinks resolved) or one of its ancestors holds a catalog, a writer lock or a
/// segment file (a database whose catalog was lost is still a database).
pub fn enclosing_database(target: &Path) -> Option<PathBuf> {
    let resolved = resolve_target(target);
    let parent = resolved.parent()?;
    // The directory that would hold the file, and the one above it (a segment's tag index
    // directory is inside its database), are listed; higher ones are asked for markers only.
    parent
        .ancestors()
        .enumerate()
        .find(|(level, d)| is_database_dir(d, *level < 2))
        .map(|(_, d)| d.to_owned())
}

/// Whether `dir` is (or looks like) a database directory. The names of a database's own files
/// are enough for an ancestor; the directory that would hold the file is listed too, for a
/// database that lost its catalog files.
pub fn is_database_dir(dir: &Path, list_segments: bool) -> bool {
    let marker = [
        CATALOG_FILE,
        MANIFEST_FILE,
        LOCK_FILE,
        crate::journal::JOURNAL_FILE,
    ]
    .iter()
    .any(|f| dir.join(f).exists());
    marker || (list_segments && !crate::journal::segment_files(dir).is_empty())
}

/// The path a write of `target` really changes: a symlink's target (written through, as a
/// plain `>` would), with the directory made absolute.
fn resolve_target(target: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(target) {
        return p;
    }
    let name = target.file_name().map(ToOwned::to_owned);
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    match (std::fs::canonicalize(&parent), name) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => target.to_owned(),
    }
}

/// A file written under a temporary name beside its target and renamed over it when complete.
/// Dropped without [`AtomicFile::commit`], it removes the temporary file.
pub struct AtomicFile {
    target: PathBuf,
    tmp: PathBuf,
    file: Option<BufWriter<File>>,
    slot: Option<usize>,
    /// Set once the rename put the file in place (until then, dropping removes it).
    renamed: bool,
}

impl AtomicFile {
    /// Starts writing `target` (through a symlink to the file it names). Nothing at `target`
    /// changes until [`AtomicFile::commit`].
    pub fn create(target: &Path) -> Result<Self> {
        let real = resolve_target(target);
        let dir = match real.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        if real.is_dir() {
            return Err(StorageError::Write {
                path: target.to_owned(),
                reason: "is a directory".into(),
            });
        }
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = real
            .file_name()
            .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
        let tmp = dir.join(format!(
            ".{name}.{}-{}.cqldb-tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        interrupts::install();
        let slot = interrupts::register(&tmp);
        let file = match faults::point().and_then(|()| File::create_new(&tmp)) {
            Ok(f) => f,
            Err(e) => {
                if let Some(s) = slot {
                    interrupts::unregister(s);
                }
                return Err(StorageError::Io {
                    path: target.to_owned(),
                    error: e,
                });
            }
        };
        Ok(Self {
            target: real,
            tmp,
            file: Some(BufWriter::with_capacity(1 << 16, file)),
            slot,
            renamed: false,
        })
    }

    /// The file this becomes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes, syncs and renames the file into place (keeping the permissions of a file it
    /// replaces).
    pub fn commit(mut self) -> Result<()> {
        let io = |e: std::io::Error| StorageError::Io {
            path: self.target.clone(),
            error: e,
        };
        let Some(w) = self.file.as_mut() else {
            return Err(io(std::io::Error::other("already committed")));
        };
        faults::point().and_then(|()| w.flush()).map_err(io)?;
        let f = w.get_ref();
        if let Ok(old) = std::fs::metadata(&self.target) {
            faults::point()
                .and_then(|()| f.set_permissions(old.permissions()))
                .map_err(io)?;
        }
        faults::point().and_then(|()| f.sync_all()).map_err(io)?;
        self.file = None;
        faults::point()
            .and_then(|()| std::fs::rename(&self.tmp, &self.target))
            .map_err(io)?;
        self.renamed = true;
        if let Some(dir) = self.target.parent() {
            // The rename made durable; a directory that cannot be synced (some file systems)
            // does not undo it.
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        if let Some(s) = self.slot.take() {
            interrupts::unregister(s);
        }
        Ok(())
    }

    /// Flushes and syncs what was written so far (a long write spreads its syncs).
    pub fn sync_data(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush().and_then(|()| f.get_ref().sync_data()),
            None => Ok(()),
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        faults::point()?;
        match self.file.as_mut() {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.file = None;
        if !self.renamed {
            let _ = std::fs::remove_file(&self.tmp);
        }
        if let Some(s) = self.slot.take() {
            interrupts::unregister(s);
        }
    }
}

/// Fault injection for the tests: every step that can fail (creating, each write, the flush,
/// the permissions, the sync, the rename) is a point, and a test makes the n-th point of its
/// thread fail. Outside tests a point never fails.
mod faults {
    #[cfg(test)]
    thread_local! {
        static PLAN: std::cell::Cell<(usize, Option<usize>)> = const { std::cell::Cell::new((0, None)) };
    }

    /// Fails the `n`-th point from now on this thread (`None`: none), and resets the count.
    #[cfg(test)]
    pub(super) fn fail_at(n: Option<usize>) {
        PLAN.with(|p| p.set((0, n)));
    }

    /// Points passed since [`fail_at`].
    #[cfg(test)]
    pub(super) fn passed() -> usize {
        PLAN.with(|p| p.get().0)
    }

    pub(super) fn point() -> std::io::Result<()> {
        #[cfg(test)]
        {
            let (k, n) = PLAN.with(std::cell::Cell::get);
            PLAN.with(|p| p.set((k + 1, n)));
            if n == Some(k) {
                return Err(std::io::Error::other("injected fault"));
            }
        }
        Ok(())
    }
}

/// The temporary files an interrupting signal must remove, and the handler that does.
mod interrupts {
    use super::*;
    use std::cell::UnsafeCell;
    use std::os::unix::ffi::OsStrExt;

    const SLOTS: usize = 32;
    const PATH_MAX: usize = 4096;
    const FREE: u8 = 0;
    const FILLING: u8 = 1;
    const READY: u8 = 2;

    /// A temporary file's name, NUL-terminated, in memory the handler can read without
    /// allocating or locking.
    struct Slot {
        state: AtomicU8,
        path: UnsafeCell<[u8; PATH_MAX]>,
    }

    // SAFETY: `path` is written only by the thread that moved `state` from FREE to FILLING,
    // and read (by the handler) only in state READY.
    unsafe impl Sync for Slot {}

    static TABLE: [Slot; SLOTS] = [const {
        Slot {
            state: AtomicU8::new(FREE),
            path: UnsafeCell::new([0; PATH_MAX]),
        }
    }; SLOTS];

    /// Remembers `tmp` for the handler; `None` when the table is full or the name too long
    /// (the file is then still removed by its destructor, only not on a signal).
    pub(super) fn register(tmp: &Path) -> Option<usize> {
        let bytes = tmp.as_os_str().as_bytes();
        if bytes.len() >= PATH_MAX || bytes.contains(&0) {
            return None;
        }
        for (i, slot) in TABLE.iter().enumerate() {
            if slot
                .state
                .compare_exchange(FREE, FILLING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                // SAFETY: this thread owns the slot (state FILLING).
                let buf = unsafe { &mut *slot.path.get() };
                buf[..bytes.len()].copy_from_slice(bytes);
                buf[bytes.len()] = 0;
                slot.state.store(READY, Ordering::Release);
                return Some(i);
            }
        }
        None
    }

    pub(super) fn unregister(i: usize) {
        if let Some(slot) = TABLE.get(i) {
            slot.state.store(FREE, Ordering::Release);
        }
    }

    extern "C" fn on_signal(sig: libc::c_int) {
        for slot in &TABLE {
            if slot.state.load(Ordering::Acquire) == READY {
                // SAFETY: unlink is async-signal-safe; the name is NUL-terminated.
                unsafe { libc::unlink(slot.path.get().cast::<libc::c_char>()) };
            }
        }
        // SAFETY: signal and raise are async-signal-safe; the process then dies of `sig`, as
        // it would have without this handler.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    /// Installs the handler for SIGINT, SIGTERM and SIGHUP once (a signal the process was
    /// told to ignore, as under `nohup`, stays ignored).
    pub(super) fn install() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                // SAFETY: sigaction with a zeroed struct, then a handler that only makes
                // async-signal-safe calls.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                        || old.sa_sigaction == libc::SIG_IGN
                    {
                        continue;
                    }
                    let mut act: libc::sigaction = std::mem::zeroed();
                    act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    libc::sigemptyset(&mut act.sa_mask);
                    libc::sigaction(sig, &act, std::ptr::null_mut());
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_that_is_an_input_is_refused_under_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.pgn");
        std::fs::write(&input, "1. e4 *\n").unwrap();
        let link = dir.path().join("link.pgn");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let hard = dir.path().join("hard.pgn");
        std::fs::hard_link(&input, &hard).unwrap();
        let dotted = dir.path().join(".").join("in.pgn");
        for target in [&input, &link, &hard, &dotted] {
            let r = refuse_unsafe_target(target, &[ReadSource::Path(&input)]);
            assert!(r.is_err(), "{} was not refused", target.display());
        }
        let other = dir.path().join("out.pgn");
        assert!(refuse_unsafe_target(&other, &[ReadSource::Path(&input)]).is_ok());
        assert_eq!(std::fs::read(&input).unwrap(), b"1. e4 *\n");
    }

    #[test]
    fn a_target_inside_a_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        std::fs::create_dir_all(db.join("seg-000001.tags")).unwrap();
        std::fs::write(db.join("seg-000001.cqs"), b"x").unwrap();
        for t in ["seg-000001.cqs", "new.pgn", "seg-000001.tags/meta.json"] {
            assert!(
                refuse_unsafe_target(&db.join(t), &[]).is_err(),
                "{t} was not refused"
            );
        }
        assert!(refuse_unsafe_target(&dir.path().join("out.pgn"), &[]).is_ok());
    }

    #[test]
    fn an_unfinished_file_leaves_the_old_one_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.pgn");
        std::fs::write(&target, "old").unwrap();
        {
            let mut f = AtomicFile::create(&target).unwrap();
            f.write_all(b"new, but never finished").unwrap();
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// Every step of writing an output fails in turn: each time the previous file is intact,
    /// no temporary file is left, and the error names the target.
    #[test]
    fn a_failure_at_any_step_leaves_the_old_file_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.pgn");
        std::fs::write(&target, "old").unwrap();
        let write = || -> Result<()> {
            let mut f = AtomicFile::create(&target)?;
            for _ in 0..5 {
                f.write_all(&[b'x'; 40_000])
                    .map_err(StorageError::io(&target))?;
            }
            f.commit()
        };
        faults::fail_at(None);
        write().unwrap();
        let points = faults::passed();
        assert!(points >= 8, "{points} points");
        for n in 0..points {
            std::fs::write(&target, "old").unwrap();
            faults::fail_at(Some(n));
            let e = write().expect_err("the injected fault surfaces");
            assert!(e.to_string().contains("out.pgn"), "{e}");
            assert_eq!(std::fs::read(&target).unwrap(), b"old", "point {n}");
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                1,
                "point {n}"
            );
        }
        faults::fail_at(None);
    }

    #[test]
    fn writing_through_a_symlink_replaces_the_file_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.pgn");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.pgn");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut f = AtomicFile::create(&link).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
    }
}
