//! A segment's parts, each checked against its own checksum on first use.
//!
//! Opening a segment used to check every game column against one checksum: about 60 bytes a
//! game read (and kept in memory, as mapped pages) before a query touched anything, so a count
//! answered from one bitmap cost memory in proportion to the whole database. A segment now
//! ends with a small table of per-part checksums, after its archive: the head (what every
//! reader needs: names, counts, the tables of blocks, text chunks and bitmaps) is checked at
//! open, and each group of game columns when first read. A file without the table (written
//! before it) is checked whole at open, as before.
//!
//! Table layout (little-endian), the payload's last [`TABLE_LEN`] bytes: one CRC per [`Part`]
//! in order, the number of detached variations (what `info` would otherwise read a whole
//! column for), the archive's length, a CRC-32 of those bytes, and the magic `CQLPART1`.

use std::sync::atomic::Ordering;

use super::{ArchivedSegmentData, Segment, SegmentData};
use crate::digest::{Digest, LeColumn, Native};
use crate::error::Result;

const MAGIC: &[u8; 8] = b"CQLPART1";

/// The parts checked on their own.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Names, counts, the blocks', text chunks' and bitmaps' tables, problems (at open).
    Head,
    /// Each game's first position (every index scan).
    Starts,
    /// Each game's position block.
    Blocks,
    /// Each game's text chunk, offset and length.
    Text,
    /// Source, line, offset, result, year, ECO, Elos, problems, detached variations.
    Attributes,
}

const PARTS: [Part; 5] = [
    Part::Head,
    Part::Starts,
    Part::Blocks,
    Part::Text,
    Part::Attributes,
];

/// Bytes of the table.
pub const TABLE_LEN: usize = PARTS.len() * 4 + 8 + 8 + 4 + 8;

/// What a segment's table records.
#[derive(Copy, Clone, Debug)]
pub struct Table {
    /// One checksum per part.
    pub crcs: [u32; PARTS.len()],
    /// Variations kept in the text but not in the tree, over all games.
    pub detached: u64,
    /// Bytes of the archive before the table.
    pub archive_len: usize,
}

impl Part {
    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Feeds one part of a segment to a digest, for the writer's data and the reader's archive
/// alike (`$d` is either).
macro_rules! digest_part {
    ($d:expr, $part:expr) => {{
        let d = $d;
        let g = &d.games;
        let mut h = Digest::new();
        match $part {
            Part::Head => {
                h.value(d.files.len() as u64);
                for f in d.files.iter() {
                    h.column(f.as_bytes());
                }
                for n in [
                    g.pos_start.len(),
                    g.block.len(),
                    g.text_chunk.len(),
                    g.text_offset.len(),
                    g.text_len.len(),
                    g.file.len(),
                    g.line.len(),
                    g.byte_offset.len(),
                    g.result.len(),
                    g.year.len(),
                    g.eco.len(),
                    g.white_elo.len(),
                    g.black_elo.len(),
                    g.issues.len(),
                    g.detached_variations.len(),
                ] {
                    h.value(n as u64);
                }
                // The number of positions: read at open, without the whole column.
                h.value(g.pos_start.last().map_or(0, |p| Native::native(*p)));
                digest_tables!(h, d);
            }
            Part::Starts => h.column(&g.pos_start.le_bytes()),
            Part::Blocks => h.column(&g.block.le_bytes()),
            Part::Text => {
                h.column(&g.text_chunk.le_bytes());
                h.column(&g.text_offset.le_bytes());
                h.column(&g.text_len.le_bytes());
            }
            Part::Attributes => {
                h.column(&g.file.le_bytes());
                h.column(&g.line.le_bytes());
                h.column(&g.byte_offset.le_bytes());
                h.column(&g.result);
                h.column(&g.year.le_bytes());
                h.column(&g.eco.le_bytes());
                h.column(&g.white_elo.le_bytes());
                h.column(&g.black_elo.le_bytes());
                h.column(&g.issues.le_bytes());
                h.column(&g.detached_variations.le_bytes());
            }
        }
        h.finish()
    }};
}

/// The table the writer appends after the archive of `data` (`archive_len` bytes).
pub fn table(data: &SegmentData, archive_len: u64) -> [u8; TABLE_LEN] {
    let mut out = [0u8; TABLE_LEN];
    for (i, part) in PARTS.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&digest_part!(data, *part).to_le_bytes());
    }
    let at = PARTS.len() * 4;
    let detached: u64 = data
        .games
        .detached_variations
        .iter()
        .map(|&v| u64::from(v))
        .sum();
    out[at..at + 8].copy_from_slice(&detached.to_le_bytes());
    out[at + 8..at + 16].copy_from_slice(&archive_len.to_le_bytes());
    let crc = crc32fast::hash(&out[..at + 16]);
    out[at + 16..at + 20].copy_from_slice(&crc.to_le_bytes());
    out[at + 20..].copy_from_slice(MAGIC);
    out
}

/// The table at the end of a payload; `None` for a payload without a (sound) one.
pub fn read_table(payload: &[u8]) -> Option<Table> {
    let start = payload.len().checked_sub(TABLE_LEN)?;
    let t = &payload[start..];
    if &t[TABLE_LEN - 8..] != MAGIC {
        return None;
    }
    let at = PARTS.len() * 4;
    let u64_at =
        |i: usize| -> Option<u64> { Some(u64::from_le_bytes(t[i..i + 8].try_into().ok()?)) };
    let crc = u32::from_le_bytes(t[at + 16..at + 20].try_into().ok()?);
    if crc32fast::hash(&t[..at + 16]) != crc || u64_at(at + 8)? != start as u64 {
        return None;
    }
    let mut crcs = [0u32; PARTS.len()];
    for (i, c) in crcs.iter_mut().enumerate() {
        *c = u32::from_le_bytes(t[i * 4..i * 4 + 4].try_into().ok()?);
    }
    Some(Table {
        crcs,
        detached: u64_at(at)?,
        archive_len: start,
    })
}

/// Whether the archive's part matches its recorded checksum.
pub fn part_matches(d: &ArchivedSegmentData, part: Part, crcs: &[u32; PARTS.len()]) -> bool {
    digest_part!(d, part) == crcs[part as usize]
}

/// Every part's bit: what a segment without a table has checked at open.
pub const ALL: u8 = (1 << PARTS.len()) - 1;

impl Segment {
    /// Checks `parts` (each once per opened segment): their checksums, then what their values
    /// must satisfy for reads to index safely and mean what they say.
    pub(super) fn parts(&self, parts: &[Part]) -> Result<()> {
        for &part in parts {
            if self.checked_parts.load(Ordering::Acquire) & part.bit() != 0 {
                continue;
            }
            // Blocks are checked against the games' first positions.
            if part == Part::Blocks {
                self.parts(&[Part::Starts])?;
            }
            let d = self.data();
            let Some(table) = &self.table else {
                return Err(self.corrupt("part checksums missing"));
            };
            if !part_matches(d, part, &table.crcs) {
                return Err(self.corrupt(&format!("checksum mismatch (segment {part:?})")));
            }
            super::check_part(d, part).map_err(|e| self.corrupt(&e))?;
            self.checked_parts.fetch_or(part.bit(), Ordering::AcqRel);
        }
        Ok(())
    }
}
