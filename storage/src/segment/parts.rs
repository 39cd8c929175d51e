//! A segment's parts, each checked against its own checksum on first use.
//!
//! Opening a segment used to check every game column against one checksum: about 60 bytes a
//! game read (and kept in memory, as mapped pages) before a query touched anything, so a count
//! answered from one bitmap cost memory in proportion to the whole database. A segment now
//! ends with a small table of per-part checksums, after its archive: the head (names, counts,
//! problems) is checked at open, and each group of game columns when first read. A file without the table (written before it) is checked whole at open, as before.
//!
//! The bitmap directory (each bitmap's key, length and checksum: some 20 bytes a bitmap, tens
//! of thousands of bitmaps a segment) is checked in chunks of [`KEY_CHUNK`] entries, each when
//! a lookup first lands in it, the keys apart from the lengths and checksums ([`Half`]); the text chunks' table with the first text read, the block
//! table with the first block. A table of the first version ([`MAGIC_V1`]) keeps all three in
//! the head, checked at open.
//!
//! Table layout (little-endian), the payload's last bytes: one CRC per [`Part`] in order, the
//! number of detached variations (what `info` would otherwise read a whole column for), the
//! segment's [`SegmentLayout`] (20 numbers), the length and CRC of the text dictionary (stored
//! between the archive and the table; length 0 without one), two CRCs per directory chunk (its
//! keys, its lengths and checksums) and the number of chunks, the archive's length, a CRC-32
//! of those bytes, and the magic `CQLPART2`. Version 1: five part CRCs (no text or block
//! table), no chunks. Any change to this layout takes a new magic (a reader must tell every
//! version it meets from damage).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use super::layout::{self, SegmentLayout};
use super::view::{ArchivedSegmentView, BlobLen};
use super::{Segment, SegmentData};
use crate::digest::{Digest, LeColumn, Native};
use crate::error::Result;

const MAGIC_V1: &[u8; 8] = b"CQLPART1";
const MAGIC_V2: &[u8; 8] = b"CQLPART2";

/// Bitmap directory entries checked together.
pub const KEY_CHUNK: usize = 512;

/// The parts checked on their own.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Names, counts, problems (at open).
    Head,
    /// Each game's first position (every index scan).
    Starts,
    /// Each game's position block.
    Blocks,
    /// Each game's text chunk, offset and length.
    Text,
    /// Source, line, offset, result, year, ECO, Elos, problems, detached variations.
    Attributes,
    /// The text chunks' lengths and checksums (in the head in a version-1 table).
    TextTable,
    /// The position blocks' entries and checksums (in the head in a version-1 table).
    BlockTable,
}

const PARTS: [Part; 7] = [
    Part::Head,
    Part::Starts,
    Part::Blocks,
    Part::Text,
    Part::Attributes,
    Part::TextTable,
    Part::BlockTable,
];

/// Parts of a version-1 table (no text table of its own).
const PARTS_V1: usize = 5;

/// Where the bitmap directory and the text table are checked.
#[derive(Clone, Debug)]
pub enum Directory {
    /// With the head, at open (a version-1 table).
    InHead,
    /// The text table as its own part; the bitmap directory by chunks, a CRC for each half.
    Chunked(Vec<[u32; 2]>),
}

/// What a segment's table records.
#[derive(Clone, Debug)]
pub struct Table {
    /// One checksum per part (a version-1 table has none for the text table).
    pub crcs: [u32; PARTS.len()],
    /// Variations kept in the text but not in the tree, over all games.
    pub detached: u64,
    /// Bytes of the archive before the table.
    pub archive_len: usize,
    /// How the directory is checked.
    pub directory: Directory,
    /// What the segment's bytes are spent on (version 2).
    pub layout: Option<SegmentLayout>,
    /// Where its text dictionary is in the payload, and its CRC (version 2, if it has one).
    pub dictionary: Option<(std::ops::Range<usize>, u32)>,
}

impl Part {
    pub(super) fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// The lengths of the game columns of `$g` (the writer's or the reader's), the starts first
/// (one more than the games), in the order the head's digest takes them.
macro_rules! game_column_lens {
    ($g:expr) => {{
        let g = $g;
        [
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
        ]
    }};
}

/// Feeds one part of a segment to a digest, for the writer's data and the reader's archive
/// alike (`$d` is either); `$in_head` for a version-1 head, which holds the directory.
macro_rules! digest_part {
    ($d:expr, $part:expr, $in_head:expr) => {{
        let d = $d;
        let g = &d.games;
        let mut h = Digest::new();
        match $part {
            Part::Head => {
                h.value(d.files.len() as u64);
                for f in d.files.iter() {
                    h.column(f.as_bytes());
                }
                for n in game_column_lens!(g) {
                    h.value(n as u64);
                }
                // The number of positions: read at open, without the whole column.
                h.value(g.pos_start.last().map_or(0, |p| Native::native(*p)));
                if $in_head {
                    digest_tables!(h, d);
                } else {
                    digest_head_tables!(h, d);
                }
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
            Part::TextTable => {
                for c in d.text_chunks.iter() {
                    h.value(BlobLen::blob_len(c));
                }
                h.column(&d.text_crcs.le_bytes());
            }
            Part::BlockTable => {
                for b in d.blocks.iter() {
                    for v in [b.first_position, b.positions, b.first_game, b.raw_len] {
                        h.value(Native::native(v));
                    }
                    h.value(BlobLen::blob_len(&b.data));
                }
                h.column(&d.block_crcs.le_bytes());
            }
        }
        h.finish()
    }};
}

/// The head's share of the tables in a version-2 table: the block, text and bitmap tables by
/// their sizes alone.
macro_rules! digest_head_tables {
    ($h:expr, $d:expr) => {{
        let h = &mut $h;
        let d = $d;
        for n in [
            d.blocks.len(),
            d.block_crcs.len(),
            d.text_chunks.len(),
            d.text_crcs.len(),
            d.bitmap_keys.len(),
            d.bitmap_blobs.len(),
            d.bitmap_crcs.len(),
        ] {
            h.value(n as u64);
        }
        digest_issues!(h, d);
        h.value(Native::native(d.variations));
    }};
}

/// The two halves of a directory chunk, checked apart: listing the keys of a kind (every
/// material signature of a segment, for a material test) needs the keys alone, reading a bitmap
/// its length and checksum too.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Half {
    /// The keys.
    Keys,
    /// Each bitmap's length and checksum.
    Entries,
}

/// Feeds one half of the directory entries `$r` to a digest.
macro_rules! digest_key_chunk {
    ($d:expr, $r:expr, $half:expr) => {{
        let d = $d;
        let r: Range<usize> = $r;
        let mut h = Digest::new();
        match $half {
            Half::Keys => h.column(&d.bitmap_keys[r].le_bytes()),
            Half::Entries => {
                for b in d.bitmap_blobs[r.clone()].iter() {
                    h.value(BlobLen::blob_len(b));
                }
                h.column(&d.bitmap_crcs[r].le_bytes());
            }
        }
        h.finish()
    }};
}

/// The directory entries of chunk `c` out of `n` entries.
fn chunk_range(c: usize, n: usize) -> Range<usize> {
    c * KEY_CHUNK..((c + 1) * KEY_CHUNK).min(n)
}

/// The table the writer appends after the archive of `data` (`archive_len` bytes).
pub fn table(data: &SegmentData, archive_len: u64, dictionary: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in PARTS {
        out.extend_from_slice(&digest_part!(data, part, false).to_le_bytes());
    }
    let detached: u64 = data
        .games
        .detached_variations
        .iter()
        .map(|&v| u64::from(v))
        .sum();
    out.extend_from_slice(&detached.to_le_bytes());
    out.extend_from_slice(&SegmentLayout::of_data(data).encode());
    out.extend_from_slice(&(dictionary.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(dictionary).to_le_bytes());
    let n = data.bitmap_keys.len();
    let chunks = n.div_ceil(KEY_CHUNK);
    for c in 0..chunks {
        for half in [Half::Keys, Half::Entries] {
            out.extend_from_slice(&digest_key_chunk!(data, chunk_range(c, n), half).to_le_bytes());
        }
    }
    out.extend_from_slice(&(chunks as u32).to_le_bytes());
    out.extend_from_slice(&archive_len.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(MAGIC_V2);
    out
}

/// The table at the end of a payload; `None` for a payload without a (sound) one.
pub fn read_table(payload: &[u8]) -> Option<Table> {
    let le32 = |b: &[u8], i: usize| -> Option<u32> {
        Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?))
    };
    let le64 = |b: &[u8], i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
    };
    let end = payload.len();
    let magic = payload.get(end.checked_sub(8)?..)?;
    let (parts, chunks) = if magic == MAGIC_V2 {
        (PARTS.len(), le32(payload, end.checked_sub(24)?)? as usize)
    } else if magic == MAGIC_V1 {
        (PARTS_V1, 0)
    } else {
        return None;
    };
    // Parts, detached, [layout, dictionary length and CRC, chunks, their number,] archive
    // length, CRC, magic.
    let v2_bytes = if magic == MAGIC_V2 {
        layout::ENCODED_VALUES * 8 + 12 + chunks * 8 + 4
    } else {
        0
    };
    let len = parts * 4 + 8 + v2_bytes + 8 + 4 + 8;
    let start = end.checked_sub(len)?;
    let t = &payload[start..];
    let crc_at = len - 12;
    if crc32fast::hash(&t[..crc_at]) != le32(t, crc_at)? {
        return None;
    }
    let at = parts * 4;
    let dict_at = at + 8 + layout::ENCODED_VALUES * 8;
    // The dictionary lies between the archive and the table.
    let dict_len = if magic == MAGIC_V2 {
        usize::try_from(le64(t, dict_at)?).ok()?
    } else {
        0
    };
    let archive_len = start.checked_sub(dict_len)?;
    if le64(t, crc_at - 8)? != archive_len as u64 {
        return None;
    }
    let mut crcs = [0u32; PARTS.len()];
    for (i, c) in crcs.iter_mut().enumerate().take(parts) {
        *c = le32(t, i * 4)?;
    }
    let (directory, layout) = if magic == MAGIC_V2 {
        let chunks_at = dict_at + 12;
        (
            Directory::Chunked(
                (0..chunks)
                    .map(|c| Some([le32(t, chunks_at + c * 8)?, le32(t, chunks_at + c * 8 + 4)?]))
                    .collect::<Option<_>>()?,
            ),
            Some(SegmentLayout::decode(t.get(at + 8..dict_at)?, end as u64)?),
        )
    } else {
        (Directory::InHead, None)
    };
    let dictionary = if dict_len > 0 {
        Some((archive_len..start, le32(t, dict_at + 8)?))
    } else {
        None
    };
    Some(Table {
        crcs,
        detached: le64(t, at)?,
        archive_len,
        directory,
        layout,
        dictionary,
    })
}

/// Whether the archive's part matches its recorded checksum.
pub fn part_matches(d: &ArchivedSegmentView, part: Part, table: &Table) -> bool {
    let in_head = matches!(table.directory, Directory::InHead);
    digest_part!(d, part, in_head) == table.crcs[part as usize]
}

/// Every part's bit: what a segment without a table, or with the directory in its head, has
/// checked at open (with the head, for the latter; the game columns are checked on use).
pub const ALL: u8 = (1 << PARTS.len()) - 1;

/// The bits of the parts checked at open for a file with `table`.
pub fn checked_at_open(table: Option<&Table>) -> u8 {
    match table.map(|t| &t.directory) {
        None => ALL,
        Some(Directory::InHead) => {
            Part::Head.bit() | Part::TextTable.bit() | Part::BlockTable.bit()
        }
        Some(Directory::Chunked(_)) => Part::Head.bit(),
    }
}

/// One bit per directory chunk and half, set once checked; all set when the head covered them.
pub fn directory_bits(table: Option<&Table>, keys: usize) -> [Box<[AtomicU64]>; 2] {
    [half_bits(table, keys), half_bits(table, keys)]
}

fn half_bits(table: Option<&Table>, keys: usize) -> Box<[AtomicU64]> {
    let chunks = keys.div_ceil(KEY_CHUNK);
    let all = !matches!(table.map(|t| &t.directory), Some(Directory::Chunked(_)));
    (0..chunks.div_ceil(64))
        .map(|w| {
            let bits = (chunks - w * 64).min(64);
            let full = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            AtomicU64::new(if all { full } else { 0 })
        })
        .collect()
}

/// Whether a version-2 table has one checksum per directory chunk of `keys` entries.
pub fn chunks_match(table: &Table, keys: usize) -> bool {
    match &table.directory {
        Directory::InHead => true,
        Directory::Chunked(c) => c.len() == keys.div_ceil(KEY_CHUNK),
    }
}

impl Segment {
    /// Checks `parts` (each once per opened segment): their checksums, then what their values
    /// must satisfy for reads to index safely and mean what they say.
    pub(super) fn parts(&self, parts: &[Part]) -> Result<()> {
        for &part in parts {
            if self.checked_parts.load(Ordering::Acquire) & part.bit() != 0 {
                continue;
            }
            // Blocks are checked against the games' first positions and the block table.
            if part == Part::Blocks {
                self.parts(&[Part::Starts, Part::BlockTable])?;
            }
            let d = self.data();
            let Some(table) = &self.table else {
                return Err(self.corrupt("part checksums missing"));
            };
            if !part_matches(d, part, table) {
                return Err(self.corrupt(&format!("checksum mismatch (segment {part:?})")));
            }
            check_part(d, part).map_err(|e| self.corrupt(&e))?;
            self.checked_parts.fetch_or(part.bit(), Ordering::AcqRel);
        }
        Ok(())
    }

    /// Checks one half of the directory chunks holding entries `entries` (each chunk once per
    /// opened segment).
    pub(super) fn directory(&self, entries: Range<usize>, half: Half) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let d = self.data();
        let n = d.bitmap_keys.len();
        let first = entries.start / KEY_CHUNK;
        let last = (entries.end.min(n).max(1) - 1) / KEY_CHUNK;
        for c in first..=last {
            let bits = &self.verified_directory[half as usize];
            let (word, bit) = (&bits[c / 64], 1u64 << (c % 64));
            if word.load(Ordering::Acquire) & bit != 0 {
                continue;
            }
            let recorded = match self.table.as_ref().map(|t| &t.directory) {
                Some(Directory::Chunked(crcs)) => crcs.get(c).map(|pair| pair[half as usize]),
                _ => None,
            };
            if recorded != Some(digest_key_chunk!(d, chunk_range(c, n), half)) {
                return Err(self.corrupt("checksum mismatch (bitmap directory)"));
            }
            word.fetch_or(bit, Ordering::AcqRel);
        }
        Ok(())
    }
}

/// Cross-checks what the archive's structure cannot: column lengths and indexes between columns,
/// so that later reads can index without panicking even on a file a buggy writer produced.
pub(super) fn check_consistency(d: &ArchivedSegmentView) -> std::result::Result<(), String> {
    check_lengths(d)?;
    [Part::Starts, Part::Blocks, Part::Text]
        .into_iter()
        .try_for_each(|p| check_part(d, p))
}

/// The lengths of the columns and tables against each other (read from their headers only).
pub(super) fn check_lengths(d: &ArchivedSegmentView) -> std::result::Result<(), String> {
    let g = &d.games;
    let n = g.result.len();
    let [starts, rest @ ..] = game_column_lens!(g);
    if rest.iter().any(|&l| l != n) || starts != n + 1 {
        return Err("game columns of different lengths".into());
    }
    if d.bitmap_keys.len() != d.bitmap_blobs.len() {
        return Err("bitmap keys and blobs differ in number".into());
    }
    if d.block_crcs.len() != d.blocks.len()
        || d.text_crcs.len() != d.text_chunks.len()
        || d.bitmap_crcs.len() != d.bitmap_blobs.len()
    {
        return Err("checksums and parts differ in number".into());
    }
    Ok(())
}

/// What one part's values must satisfy (lengths are checked at open): game ranges in order,
/// games inside their blocks, text chunks that exist.
pub(super) fn check_part(d: &ArchivedSegmentView, part: Part) -> std::result::Result<(), String> {
    let g = &d.games;
    match part {
        Part::Head | Part::Attributes | Part::TextTable | Part::BlockTable => Ok(()),
        Part::Starts => {
            if g.pos_start
                .windows(2)
                .any(|w| w[0].to_native() > w[1].to_native())
            {
                return Err("game position ranges out of order".into());
            }
            Ok(())
        }
        Part::Blocks => {
            for i in 0..g.result.len() {
                let block = d
                    .blocks
                    .get(g.block[i].to_native() as usize)
                    .ok_or("game points at a missing block")?;
                let first = block.first_position.to_native();
                let end = first.saturating_add(block.positions.to_native());
                if g.pos_start[i].to_native() < first || g.pos_start[i + 1].to_native() > end {
                    return Err("game positions outside their block".into());
                }
            }
            Ok(())
        }
        Part::Text => {
            if g.text_chunk
                .iter()
                .any(|c| c.to_native() as usize >= d.text_chunks.len())
            {
                return Err("game points at a missing text chunk".into());
            }
            Ok(())
        }
    }
}
