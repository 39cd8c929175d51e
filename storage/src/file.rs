//! The checksummed file container every segment is written in.
//!
//! Layout: a 64-byte header (magic, format version, payload length, CRC-32 of the payload, and
//! an optional identity: `REG1`, 24 bytes the file's owner gives it, their CRC-32), then
//! the payload, which starts 64-byte aligned so an rkyv archive can be read in place from the
//! memory map. A file is written under a fresh name and synced before anything refers to it; until
//! its header is written it fails the checks below, so a half-written file is never taken as valid.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use crate::mapped::Map;

use crate::error::{Result, StorageError};

const HEADER_LEN: usize = 64;
const FORMAT_VERSION: u32 = 1;
/// Where the identity record sits in the header: a tag, 24 bytes, their CRC-32. It is not part
/// of the payload's checksum, so a file written before identities existed can be stamped in
/// place without changing what a catalog recorded of it.
const IDENTITY_AT: usize = 24;
const IDENTITY_TAG: &[u8; 4] = b"REG1";
/// Bytes of an identity.
pub const IDENTITY_LEN: usize = 24;

fn identity_record(identity: &[u8; IDENTITY_LEN]) -> [u8; 32] {
    let mut r = [0u8; 32];
    r[..4].copy_from_slice(IDENTITY_TAG);
    r[4..28].copy_from_slice(identity);
    let crc = crc32fast::hash(&r[..28]);
    r[28..].copy_from_slice(&crc.to_le_bytes());
    r
}

/// Writes `identity` into the header of the existing container file `path` (a file written
/// before identities existed). Only those 32 header bytes change; a reader that has the file
/// mapped reads the header once, at open, before this could matter.
pub fn stamp_identity(path: &Path, identity: &[u8; IDENTITY_LEN]) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(StorageError::io(path))?;
    f.write_all_at(&identity_record(identity), IDENTITY_AT as u64)
        .and_then(|()| f.sync_all())
        .map_err(StorageError::io(path))
}

/// A writer that checksums and counts what goes through it (the payload of a container file).
pub struct ChecksumWriter {
    inner: std::io::BufWriter<File>,
    hasher: crc32fast::Hasher,
    len: u64,
    /// The first write error, kept here because a serialiser may pass on only that it failed
    /// ("no space left on device" must reach the user as such).
    failure: std::rc::Rc<std::cell::RefCell<Option<std::io::Error>>>,
}

impl ChecksumWriter {
    /// Bytes written through it so far.
    pub fn written(&self) -> u64 {
        self.len
    }

    fn note<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r
            && let Ok(mut f) = self.failure.try_borrow_mut()
            && f.is_none()
        {
            *f = Some(std::io::Error::new(e.kind(), e.to_string()));
        }
        r
    }
}

impl Write for ChecksumWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        let n = self.note(r)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

/// Writes a new container file at `path` (which must not exist) with the given 8-byte magic. The
/// payload is streamed by `fill` (no copy of it in memory); the header is written last, once
/// length and checksum are known, then the file is synced. Returns the payload's checksum. On
/// failure the partial file is removed.
pub fn write_file_streaming(
    path: &Path,
    magic: &[u8; 8],
    identity: Option<&[u8; IDENTITY_LEN]>,
    fill: impl FnOnce(ChecksumWriter) -> std::result::Result<ChecksumWriter, String>,
) -> Result<u32> {
    // Created here, so that a failure removes only a file this call made.
    let f = File::create_new(path).map_err(StorageError::io(path))?;
    let out = write_into(f, path, magic, identity, fill);
    if out.is_err() {
        let _ = std::fs::remove_file(path);
    }
    out
}

fn write_into(
    mut f: File,
    path: &Path,
    magic: &[u8; 8],
    identity: Option<&[u8; IDENTITY_LEN]>,
    fill: impl FnOnce(ChecksumWriter) -> std::result::Result<ChecksumWriter, String>,
) -> Result<u32> {
    use std::io::{Seek, SeekFrom};
    f.write_all(&[0u8; HEADER_LEN])
        .map_err(StorageError::io(path))?;
    let failure = std::rc::Rc::default();
    let w = ChecksumWriter {
        inner: std::io::BufWriter::with_capacity(1 << 20, f),
        hasher: crc32fast::Hasher::new(),
        len: 0,
        failure: std::rc::Rc::clone(&failure),
    };
    let w = fill(w).map_err(|e| match failure.take() {
        Some(error) => StorageError::Io {
            path: path.to_owned(),
            error,
        },
        None => StorageError::Write {
            path: path.to_owned(),
            reason: e,
        },
    })?;
    let crc = w.hasher.finalize();
    let mut f = w
        .inner
        .into_inner()
        .map_err(|e| StorageError::io(path)(e.into_error()))?;
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(magic);
    header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[12..20].copy_from_slice(&w.len.to_le_bytes());
    header[20..24].copy_from_slice(&crc.to_le_bytes());
    if let Some(id) = identity {
        header[IDENTITY_AT..IDENTITY_AT + 32].copy_from_slice(&identity_record(id));
    }
    f.seek(SeekFrom::Start(0)).map_err(StorageError::io(path))?;
    f.write_all(&header).map_err(StorageError::io(path))?;
    f.sync_all().map_err(StorageError::io(path))?;
    crate::mapped::release_written(&f);
    Ok(crc)
}

/// A verified, memory-mapped container file.
pub struct MappedFile {
    map: Map,
}

impl MappedFile {
    /// Maps `path` and checks magic, version and length, and with `verify` the checksum of the
    /// whole payload (a reader that checks what it reads part by part skips that pass).
    pub fn open(path: &Path, magic: &[u8; 8], verify: bool) -> Result<Self> {
        let f = File::open(path).map_err(StorageError::io(path))?;
        // Segment files are immutable once written (new data always goes to new files); one
        // that shrinks under the map is caught (`mapped.rs`).
        let map = Map::open(&f, path).map_err(StorageError::io(path))?;
        if map.len() < HEADER_LEN {
            return Err(StorageError::corrupt(path, "file shorter than its header"));
        }
        if &map[..8] != magic {
            return Err(StorageError::corrupt(path, "wrong magic bytes"));
        }
        let version = u32::from_le_bytes([map[8], map[9], map[10], map[11]]);
        if version != FORMAT_VERSION {
            return Err(StorageError::corrupt(
                path,
                format!("container version {version}, expected {FORMAT_VERSION}"),
            ));
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&map[12..20]);
        let len = u64::from_le_bytes(len);
        if len != (map.len() - HEADER_LEN) as u64 {
            return Err(StorageError::corrupt(
                path,
                format!(
                    "payload is {} bytes, header says {len} (truncated file?)",
                    map.len() - HEADER_LEN
                ),
            ));
        }
        let file = Self { map };
        if verify {
            file.verify(path)?;
        }
        Ok(file)
    }

    /// Checks the whole payload against the header's checksum.
    pub fn verify(&self, path: &Path) -> Result<()> {
        if crc32fast::hash(&self.map[HEADER_LEN..]) != self.recorded_crc() {
            return Err(StorageError::corrupt(path, "checksum mismatch"));
        }
        Ok(())
    }

    /// The payload checksum the header records (what a catalog keeps to know the file is the
    /// one it named).
    pub fn recorded_crc(&self) -> u32 {
        let map = &self.map;
        u32::from_le_bytes([map[20], map[21], map[22], map[23]])
    }

    /// The identity its header holds, if one was written (and is intact).
    pub fn identity(&self) -> Option<[u8; IDENTITY_LEN]> {
        let r = self.map.get(IDENTITY_AT..IDENTITY_AT + 32)?;
        if &r[..4] != IDENTITY_TAG || crc32fast::hash(&r[..28]).to_le_bytes() != r[28..32] {
            return None;
        }
        r[4..28].try_into().ok()
    }

    /// Asks for `bytes`, a part of the file about to be read whole, to be read ahead.
    pub fn will_need(&self, bytes: &[u8]) {
        self.map.will_need(bytes);
    }

    /// Asks for `bytes`, a part of a run of parts read in order, to be read ahead, with the
    /// parts after it (see [`crate::mapped::Map::will_need_in_order`]).
    pub fn will_need_in_order(&self, bytes: &[u8], ahead: &mut crate::mapped::Ahead) {
        self.map.will_need_in_order(bytes, ahead);
    }

    /// Unmaps the file's pages from the process (see [`crate::mapped::Map::release`]).
    pub fn release(&self) {
        self.map.release();
    }

    /// Whether the file shrank under its map (see `mapped.rs`): what was read from it since
    /// may be zeros.
    pub fn shrunk(&self) -> bool {
        self.map.shrunk()
    }

    /// The verified payload.
    pub fn payload(&self) -> &[u8] {
        &self.map[HEADER_LEN..]
    }
}
