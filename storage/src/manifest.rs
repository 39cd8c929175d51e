//! The manifest: the committed segment list as one small file readers take without any lock.
//!
//! redb locks its file while it is open, so a reader opening `catalog.redb` while the writer
//! reads or commits (or a writer while readers do) failed with "in use". The writer therefore
//! publishes every committed state a second time, as `catalog.manifest`, written to a temporary
//! file, synced, and renamed over the old one: a reader sees the previous state or the new one,
//! whole, and never waits. redb stays the writer's source of truth; the writer publishes its state
//! again when it opens, so a manifest that lags a commit (a writer killed between the two steps)
//! is brought up to date, and a lagging manifest is still a committed state.
//!
//! Layout (little-endian): magic `CQLDBMF1`, schema version, next segment id, entry count, the
//! entries ([`SegmentEntry::encode`]), then a CRC-32 of everything before it.

use std::io::Write;
use std::path::Path;

use crate::error::{Result, StorageError};
use crate::segment_entry::SegmentEntry;

/// File name of the manifest inside a database directory.
pub const MANIFEST_FILE: &str = "catalog.manifest";

const MAGIC: &[u8; 8] = b"CQLDBMF1";
const HEADER: usize = 8 + 3 * 8;

/// A committed state as the manifest holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The schema version of the database.
    pub schema_version: u64,
    /// The next free segment id.
    pub next_segment: u64,
    /// The committed segments.
    pub segments: Vec<SegmentEntry>,
}

impl Manifest {
    /// The bytes of the file.
    pub fn encode(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(HEADER + self.segments.len() * SegmentEntry::ENCODED_LEN + 4);
        out.extend_from_slice(MAGIC);
        for v in [
            self.schema_version,
            self.next_segment,
            self.segments.len() as u64,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for s in &self.segments {
            out.extend_from_slice(&s.encode());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses the bytes of `path`; anything but a whole, checksummed manifest is an error.
    pub fn decode(path: &Path, b: &[u8]) -> Result<Self> {
        let bad = |why: &str| StorageError::corrupt(path, why.to_string());
        let (body, crc) = b
            .split_last_chunk::<4>()
            .ok_or_else(|| bad("shorter than its header"))?;
        if crc32fast::hash(body) != u32::from_le_bytes(*crc) {
            return Err(bad("checksum mismatch"));
        }
        if body.len() < HEADER || &body[..8] != MAGIC {
            return Err(bad("not a cqldb manifest"));
        }
        let num = |i: usize| {
            let mut v = [0u8; 8];
            v.copy_from_slice(&body[8 + i * 8..16 + i * 8]);
            u64::from_le_bytes(v)
        };
        let count = num(2);
        let entries = &body[HEADER..];
        if Some(entries.len() as u64) != count.checked_mul(SegmentEntry::ENCODED_LEN as u64) {
            return Err(bad("entry count and length disagree"));
        }
        let segments = entries
            .chunks_exact(SegmentEntry::ENCODED_LEN)
            .map(|e| SegmentEntry::decode(e).ok_or_else(|| bad("bad entry")))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            schema_version: num(0),
            next_segment: num(1),
            segments,
        })
    }

    /// Reads the manifest of the database in `dir`; `None` when there is none (a database
    /// written before manifests existed).
    pub fn read(dir: &Path) -> Result<Option<Self>> {
        let path = dir.join(MANIFEST_FILE);
        match std::fs::read(&path) {
            Ok(b) => Self::decode(&path, &b).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StorageError::io(&path)(e)),
        }
    }

    /// Publishes this state in `dir`: a temporary file, synced, renamed over the manifest, and
    /// the directory synced.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(MANIFEST_FILE);
        let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(&self.encode())?;
            f.sync_all()
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(StorageError::io(&tmp)(e));
        }
        std::fs::rename(&tmp, &path).map_err(StorageError::io(&path))?;
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(StorageError::io(dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment_entry::FileChecks;

    fn sample() -> Manifest {
        Manifest {
            schema_version: 3,
            next_segment: 4,
            segments: (1..4)
                .map(|id| SegmentEntry {
                    id,
                    first_game: id * 10,
                    games: 10,
                    checks: (id != 2).then_some(FileChecks {
                        segment: id as u32 * 7,
                        tags: u32::MAX,
                    }),
                    ..SegmentEntry::default()
                })
                .collect(),
        }
    }

    #[test]
    fn round_trips() {
        let m = sample();
        assert_eq!(Manifest::decode(Path::new("m"), &m.encode()).ok(), Some(m));
    }

    #[test]
    fn every_flipped_byte_and_every_truncation_is_an_error() {
        let bytes = sample().encode();
        for i in 0..bytes.len() {
            for bit in [0x01u8, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= bit;
                assert!(Manifest::decode(Path::new("m"), &b).is_err(), "flip at {i}");
            }
            assert!(
                Manifest::decode(Path::new("m"), &bytes[..i]).is_err(),
                "cut at {i}"
            );
        }
    }
}
