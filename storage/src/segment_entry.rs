//! One committed segment as the catalog and its manifest record it ([`SegmentEntry`]).

/// What the catalog knows about one committed segment.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentEntry {
    /// Segment id (names its files).
    pub id: u64,
    /// Global number of its first game (games are numbered from 1).
    pub first_game: u64,
    /// Global index of its first position.
    pub first_position: u64,
    /// Games.
    pub games: u64,
    /// Positions.
    pub positions: u64,
    /// Secondary moves.
    pub variations: u64,
    /// Recorded problems.
    pub issues: u64,
    /// Bytes on disk (segment file plus tag index).
    pub bytes: u64,
    /// Checksums of the segment's files (absent in entries written before they were kept).
    pub checks: Option<FileChecks>,
}

/// What ties a catalog entry to its files: a file copied over another segment's name, or a tag
/// index changed on disk, no longer matches.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FileChecks {
    /// The segment file's whole-payload checksum (as its header records it).
    pub segment: u32,
    /// The digest of the tag index directory's files ([`crate::tags::dir_digest`]).
    pub tags: u32,
}

impl SegmentEntry {
    /// Bytes of an encoded entry (64 in entries written before file checks were kept).
    pub const ENCODED_LEN: usize = 80;

    /// The entry as little-endian numbers.
    pub fn encode(&self) -> [u8; Self::ENCODED_LEN] {
        let mut out = [0u8; Self::ENCODED_LEN];
        let (seg, tags) = match self.checks {
            Some(c) => (u64::from(c.segment) | 1 << 32, u64::from(c.tags)),
            None => (0, 0),
        };
        let vals = [
            self.id,
            self.first_game,
            self.first_position,
            self.games,
            self.positions,
            self.variations,
            self.issues,
            self.bytes,
            seg,
            tags,
        ];
        for (i, v) in vals.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// The entry [`SegmentEntry::encode`] wrote (or an older, shorter one).
    pub fn decode(b: &[u8]) -> Option<Self> {
        let v = |i: usize| -> Option<u64> {
            Some(u64::from_le_bytes(
                b.get(i * 8..i * 8 + 8)?.try_into().ok()?,
            ))
        };
        Some(Self {
            id: v(0)?,
            first_game: v(1)?,
            first_position: v(2)?,
            games: v(3)?,
            positions: v(4)?,
            variations: v(5)?,
            issues: v(6)?,
            bytes: v(7)?,
            checks: match (v(8), v(9)) {
                (Some(seg), Some(tags)) if seg >> 32 == 1 => Some(FileChecks {
                    segment: seg as u32,
                    tags: tags as u32,
                }),
                _ => None,
            },
        })
    }

    /// File name of the segment.
    pub fn segment_file(id: u64) -> String {
        format!("seg-{id:06}.cqs")
    }

    /// Directory name of the segment's tag index.
    pub fn tags_dir(id: u64) -> String {
        format!("seg-{id:06}.tags")
    }

    /// The segment id a segment file or tag index name stands for (`seg-000012.cqs`,
    /// `seg-000012.tags`), or `None` for any other name.
    pub fn id_of(name: &str) -> Option<(u64, SegmentPart)> {
        let rest = name.strip_prefix("seg-")?;
        let (digits, part) = if let Some(d) = rest.strip_suffix(".cqs") {
            (d, SegmentPart::File)
        } else {
            (rest.strip_suffix(".tags")?, SegmentPart::Tags)
        };
        if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some((digits.parse().ok()?, part))
    }

    /// What the segment's own file records of its place in the database.
    pub fn registration(&self) -> Registration {
        Registration {
            id: self.id,
            first_game: self.first_game,
            first_position: self.first_position,
        }
    }
}

/// The two things a segment id names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SegmentPart {
    /// `seg-NNNNNN.cqs`
    File,
    /// `seg-NNNNNN.tags`
    Tags,
}

/// A segment's place in its database, written into the segment file's header so that a
/// catalog lost whole can be rebuilt from the segments themselves (everything else an entry
/// holds is read from the file).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    /// Segment id.
    pub id: u64,
    /// Global number of its first game.
    pub first_game: u64,
    /// Global index of its first position.
    pub first_position: u64,
}

impl Registration {
    /// As the container header's identity bytes.
    pub fn to_bytes(self) -> [u8; crate::file::IDENTITY_LEN] {
        let mut b = [0u8; crate::file::IDENTITY_LEN];
        for (i, v) in [self.id, self.first_game, self.first_position]
            .iter()
            .enumerate()
        {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// From the container header's identity bytes.
    pub fn from_bytes(b: &[u8; crate::file::IDENTITY_LEN]) -> Self {
        let v = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[i * 8..i * 8 + 8]);
            u64::from_le_bytes(x)
        };
        Self {
            id: v(0),
            first_game: v(1),
            first_position: v(2),
        }
    }
}
