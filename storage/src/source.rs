//! The input files a database was built from, by content fingerprint: how `index` notices a
//! file it has already read (indexing it again would store its games twice).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// One input file read whole into the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRecord {
    /// [`fingerprint`] of the file's bytes.
    pub fingerprint: String,
    /// The name it was indexed under.
    pub name: String,
    /// Global number of its first game.
    pub first_game: u64,
    /// Games it gave.
    pub games: u64,
}

impl SourceRecord {
    /// The catalog's value: name, first game and games, tab-separated (the name last but for
    /// the numbers, which are read from the right, so a tab in a name does no harm).
    pub(crate) fn encode(&self) -> String {
        format!("{}\t{}\t{}", self.name, self.first_game, self.games)
    }

    pub(crate) fn decode(fingerprint: &str, value: &str) -> Option<Self> {
        let mut parts = value.rsplitn(3, '\t');
        let games = parts.next()?.parse().ok()?;
        let first_game = parts.next()?.parse().ok()?;
        let name = parts.next()?.to_owned();
        Some(Self {
            fingerprint: fingerprint.to_owned(),
            name,
            first_game,
            games,
        })
    }
}

/// Bytes read at each end of a file for its fingerprint.
const SAMPLE: u64 = 1 << 20;

/// A file's fingerprint: its size and CRC-32s of its first and last mebibyte. Reading two
/// mebibytes, not the whole file, keeps it instant on a multi-gigabyte PGN; two different
/// PGN files of one size whose both ends agree byte for byte are not a case worth a full read.
///
/// Only a regular file has one: a FIFO or a device is never opened here (its one reader is
/// the ingest, and a stream has no contents to compare before it is read).
pub fn fingerprint(path: &Path) -> std::io::Result<String> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "not a regular file",
        ));
    }
    let mut f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    let mut crc = |from: u64, len: u64| -> std::io::Result<u32> {
        f.seek(SeekFrom::Start(from))?;
        let mut buf = Vec::with_capacity(len as usize);
        (&mut f).take(len).read_to_end(&mut buf)?;
        Ok(crc32fast::hash(&buf))
    };
    let head = crc(0, SAMPLE.min(size))?;
    let tail = crc(size.saturating_sub(SAMPLE), SAMPLE.min(size))?;
    Ok(format!("{size:x}-{head:08x}-{tail:08x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_fingerprints_tell_files_apart() {
        let r = SourceRecord {
            fingerprint: "1-2-3".into(),
            name: "a\tb.pgn".into(),
            first_game: 5,
            games: 7,
        };
        assert_eq!(SourceRecord::decode("1-2-3", &r.encode()), Some(r));
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::write(&a, "1. e4 *").unwrap();
        std::fs::write(&b, "1. e4 *").unwrap();
        std::fs::write(&c, "1. d4 *").unwrap();
        assert_eq!(fingerprint(&a).unwrap(), fingerprint(&b).unwrap());
        assert_ne!(fingerprint(&a).unwrap(), fingerprint(&c).unwrap());
    }
}
