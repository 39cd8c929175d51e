//! Segments: the immutable unit of the index (one file, rkyv-archived, read in place).
//!
//! A segment holds a run of consecutive games: per-game columns (uncompressed, read zero-copy),
//! position blocks (see `columns.rs`), the original game text in zstd chunks, the bitmap indexes
//! and the ingest errors. [`SegmentBuilder`] writes one (`builder.rs`); [`Segment`] reads it,
//! its bitmaps in `bitmaps.rs`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicU64};

use rkyv::{Archive, Deserialize, Serialize};

use crate::columns::{DecodedBlock, decode_block_opts, decompress_frame_into};
use crate::digest::{Digest, LeColumn, Native, blob_crc};
use crate::error::{Result, StorageError};
use crate::file::MappedFile;
use crate::mapped::Ahead;
use crate::schema::{CommentRef, GameMeta, GameResult, NagRef, PositionRecord};
use crate::text_dictionary::TextDictionary;

mod bitmaps;

const MAGIC: &[u8; 8] = b"CQLDBSEG";

/// A problem found while reading one game, as stored.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct IssueRecord {
    /// Segment-local game number.
    pub game: u32,
    /// 1-based line in the source file.
    pub line: u32,
    /// 1-based column (in bytes).
    pub column: u32,
    /// Short machine-readable kind, e.g. `illegal-move`.
    pub kind: String,
    /// Human-readable explanation.
    pub message: String,
}

/// One game handed to a [`SegmentBuilder`].
#[derive(Clone, Debug, Default)]
pub struct NewGame {
    /// Index of the source file in the builder's file list.
    pub file: u32,
    /// 1-based line of the game's first byte in its file.
    pub line: u32,
    /// Byte offset of the game's first byte in the (decompressed) file.
    pub byte_offset: u64,
    /// The game text exactly as read.
    pub text: Vec<u8>,
    /// Tag pairs in input order (names and values decoded to UTF-8).
    pub tags: Vec<(String, String)>,
    /// Result, year, ECO, Elos.
    pub meta: Option<GameMeta>,
    /// The game tree in position-id order.
    pub positions: Vec<PositionRecord>,
    /// Comments (positions are game-local ids).
    pub comments: Vec<CommentRef>,
    /// NAGs (positions are game-local ids).
    pub nags: Vec<NagRef>,
    /// Problems found; the legal part of the game is still stored.
    pub issues: Vec<IssueRecord>,
    /// Variations that are not part of the tree (kept in the text only).
    pub detached_variations: u32,
}

#[derive(Archive, Serialize, Deserialize, Default)]
struct GameColumns {
    /// Segment-local id of each game's root; one extra entry closes the last game.
    pos_start: Vec<u32>,
    block: Vec<u32>,
    text_chunk: Vec<u32>,
    text_offset: Vec<u32>,
    text_len: Vec<u32>,
    file: Vec<u32>,
    line: Vec<u32>,
    byte_offset: Vec<u64>,
    result: Vec<u8>,
    year: Vec<u16>,
    eco: Vec<u16>,
    white_elo: Vec<u16>,
    black_elo: Vec<u16>,
    issues: Vec<u32>,
    detached_variations: Vec<u32>,
}

#[derive(Archive, Serialize, Deserialize)]
struct BlockEntry {
    first_position: u32,
    positions: u32,
    first_game: u32,
    raw_len: u32,
    data: Vec<u8>,
}

#[derive(Archive, Serialize, Deserialize)]
struct SegmentData {
    files: Vec<String>,
    games: GameColumns,
    blocks: Vec<BlockEntry>,
    text_chunks: Vec<Vec<u8>>,
    bitmap_keys: Vec<u64>,
    bitmap_blobs: Vec<Vec<u8>>,
    issues: Vec<IssueRecord>,
    variations: u64,
    /// CRC-32 of each position block's data, text chunk and bitmap blob (checked when read).
    block_crcs: Vec<u32>,
    text_crcs: Vec<u32>,
    bitmap_crcs: Vec<u32>,
    /// CRC-32 of everything else (checked at open, see `digest.rs`).
    meta_crc: u32,
}

/// Feeds a segment's problems to digest `$h` (`$d` the writer's data or the reader's view).
macro_rules! digest_issues {
    ($h:expr, $d:expr) => {{
        $h.value($d.issues.len() as u64);
        for is in $d.issues.iter() {
            for v in [is.game, is.line, is.column] {
                $h.value(Native::native(v));
            }
            $h.column(is.kind.as_bytes());
            $h.column(is.message.as_bytes());
        }
    }};
}

/// Feeds the tables of blocks, text chunks and bitmaps, the problems, the variation count and
/// the blobs' checksums to digest `$h`: the part of a segment's tables both digests share (the
/// whole-table one below and the head's in `parts.rs`), in one order.
macro_rules! digest_tables {
    ($h:expr, $d:expr) => {{
        let h = &mut $h;
        let d = $d;
        h.value(d.blocks.len() as u64);
        for b in d.blocks.iter() {
            for v in [b.first_position, b.positions, b.first_game, b.raw_len] {
                h.value(Native::native(v));
            }
            h.value($crate::segment::BlobLen::blob_len(&b.data));
        }
        h.value(d.text_chunks.len() as u64);
        for c in d.text_chunks.iter() {
            h.value($crate::segment::BlobLen::blob_len(c));
        }
        h.column(&d.bitmap_keys.le_bytes());
        h.value(d.bitmap_blobs.len() as u64);
        for b in d.bitmap_blobs.iter() {
            h.value($crate::segment::BlobLen::blob_len(b));
        }
        digest_issues!(h, d);
        h.value(Native::native(d.variations));
        h.column(&d.block_crcs.le_bytes());
        h.column(&d.text_crcs.le_bytes());
        h.column(&d.bitmap_crcs.le_bytes());
    }};
}

/// Feeds a segment's non-blob parts to a digest, in one order for the writer's data and the
/// reader's archive (`$d` is either).
macro_rules! digest_meta {
    ($d:expr) => {{
        let d = $d;
        let mut h = Digest::new();
        h.value(d.files.len() as u64);
        for f in d.files.iter() {
            h.column(f.as_bytes());
        }
        let g = &d.games;
        h.column(&g.pos_start.le_bytes());
        h.column(&g.block.le_bytes());
        h.column(&g.text_chunk.le_bytes());
        h.column(&g.text_offset.le_bytes());
        h.column(&g.text_len.le_bytes());
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
        digest_tables!(h, d);
        h.finish()
    }};
}

mod builder;
mod layout;
mod parts;
mod view;
mod visit;
pub use bitmaps::Signatures;
pub use builder::{SegmentBuilder, Written};
pub use layout::SegmentLayout;
use parts::Part;
use view::ArchivedSegmentView;
pub(crate) use view::BlobLen;

/// Totals of a segment.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentStats {
    /// Games.
    pub games: u64,
    /// Positions.
    pub positions: u64,
    /// Variations: moves that are not the primary move (positions with child index > 0).
    pub variations: u64,
    /// Recorded problems.
    pub issues: u64,
    /// Variations kept in the text but not in the tree.
    pub detached_variations: u64,
    /// The file's whole-payload checksum.
    pub file_crc: u32,
}

/// A read-only, verified segment.
pub struct Segment {
    path: PathBuf,
    file: MappedFile,
    /// Bytes of the rkyv archive at the start of the payload (the rest is the parts' table).
    archive_len: usize,
    /// The parts' checksums and the file's summary (`None` in a file written before them:
    /// checked whole at open).
    table: Option<parts::Table>,
    /// One bit per [`Part`] checked so far (see `parts.rs`).
    checked_parts: AtomicU8,
    /// One bit per bitmap: set once its bytes matched their checksum. A committed segment is
    /// never written again, so a bitmap checked once stays checked, and a process that answers
    /// many queries (a benchmark, a server) stops paying the checksum for the bitmaps it reads
    /// again and again.
    verified_bitmaps: Box<[AtomicU64]>,
    /// Names this open segment in the cache of unpacked bitmaps (see `bitmap_cache.rs`).
    uid: u64,
    /// One bit per chunk of the bitmap directory checked so far (see `parts.rs`).
    verified_directory: [Box<[AtomicU64]>; 2],
    /// Its text dictionary, read and checked on first use (see [`Segment::text_dictionary`]).
    dictionary: std::sync::OnceLock<TextDictionary>,
}

/// One game as [`Segment::for_each_game`] hands it over.
pub struct GameRows<'a> {
    /// Its positions (game-local ids), the reader's to keep.
    pub positions: Vec<PositionRecord>,
    /// Its comments; positions are block-local (subtract `first`).
    pub comments: &'a [CommentRef],
    /// Its NAGs; positions are block-local (subtract `first`).
    pub nags: &'a [NagRef],
    /// Block-local id of its root.
    pub first: u32,
    /// Its result (from the Result tag, else the termination marker).
    pub result: GameResult,
    /// Its text (empty unless asked for).
    pub text: &'a [u8],
}

/// A game's source file (an index into [`Segment::source_files`]), line and number of
/// recorded problems.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GameSource {
    pub file: u32,
    pub line: u32,
    pub issues: u32,
}

/// The location and provenance of one game inside a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameInfo {
    /// Segment-local game number.
    pub local: u32,
    /// Source file name.
    pub file: String,
    /// 1-based line of the game's first byte.
    pub line: u32,
    /// Byte offset in the decompressed source.
    pub byte_offset: u64,
    /// Number of positions in its tree.
    pub positions: u32,
    /// Result and other indexed attributes.
    pub meta: GameMeta,
    /// Number of recorded problems.
    pub issues: u32,
    /// Variations kept in the text but not in the tree.
    pub detached_variations: u32,
}

/// What a reader does with a segment's mapped pages once it is done with the segment
/// ([`Segment::done_reading`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Pages {
    /// Keep them mapped: a process that answers many queries (a benchmark, a server, a shell)
    /// reads them again, and dropping them would only make it fault them in again.
    #[default]
    Keep,
    /// Unmap them from the process (they stay in the kernel's page cache): a run that reads
    /// the database once (one command), so that its peak does not grow with the number of
    /// segments it reads.
    Release,
}

impl Segment {
    /// The reader is done with this segment for now: with [`Pages::Release`], the pages read so
    /// far are unmapped from the process. What the segment remembers (checked parts, the
    /// bitmap cache) is kept; later reads work as before, at the cost of faulting their pages
    /// in again.
    pub fn done_reading(&self, pages: Pages) {
        match pages {
            Pages::Keep => {}
            Pages::Release => self.file.release(),
        }
    }

    /// Opens and verifies a segment file (checksum and archive structure).
    pub fn open(path: &Path) -> Result<Self> {
        // The header checksum covers every byte and is left to a full check; blobs are checked
        // when read and the rest here (see `digest.rs`).
        let file = MappedFile::open(path, MAGIC, false)?;
        let payload = file.payload();
        let table = parts::read_table(payload);
        let archive_len = table.as_ref().map_or(payload.len(), |t| t.archive_len);
        // The number of bitmaps, once the tables are known to be sound: the head alone when
        // the file has part checksums (the game columns are checked when first read).
        let checked = || -> std::result::Result<usize, String> {
            let archive = payload
                .get(..archive_len)
                .ok_or_else(|| "bad archive structure".to_owned())?;
            let data = rkyv::access::<ArchivedSegmentView, rkyv::rancor::Error>(archive)
                .map_err(|_| "bad archive structure".to_owned())?;
            match &table {
                Some(t) => {
                    if !parts::part_matches(data, Part::Head, t) {
                        return Err("checksum mismatch (segment tables)".into());
                    }
                    parts::check_lengths(data)?;
                    if !parts::chunks_match(t, data.bitmap_keys.len()) {
                        return Err("bitmap directory checksums missing".into());
                    }
                }
                None => {
                    if digest_meta!(data) != data.meta_crc.to_native() {
                        return Err("checksum mismatch (segment tables)".into());
                    }
                    parts::check_consistency(data)?;
                }
            }
            Ok(data.bitmap_blobs.len())
        };
        let bitmaps = match checked() {
            Ok(n) => n,
            Err(what) => {
                // Damage found: the whole file's checksum says more precisely what happened.
                file.verify(path)?;
                return Err(StorageError::corrupt(path, what));
            }
        };
        let verified_bitmaps = (0..bitmaps.div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        let checked_parts = parts::checked_at_open(table.as_ref());
        let verified_directory = parts::directory_bits(table.as_ref(), bitmaps);
        Ok(Self {
            path: path.to_owned(),
            file,
            archive_len,
            table,
            checked_parts: AtomicU8::new(checked_parts),
            verified_bitmaps,
            uid: crate::bitmap_cache::segment_uid(),
            verified_directory,
            dictionary: std::sync::OnceLock::new(),
        })
    }

    /// The whole-file checksum its header records (a catalog keeps it to tell its file from
    /// another segment's copied over it).
    pub fn recorded_crc(&self) -> u32 {
        self.file.recorded_crc()
    }

    /// Its place in the database as its header records it (`None` in a file written before
    /// schema 4 that no writer has stamped yet).
    pub fn registration(&self) -> Option<crate::segment_entry::Registration> {
        self.file
            .identity()
            .map(|b| crate::segment_entry::Registration::from_bytes(&b))
    }

    fn data(&self) -> &ArchivedSegmentView {
        // SAFETY: the payload was validated by `rkyv::access` in `open`, and the mapping is
        // immutable for the life of `self`.
        unsafe { rkyv::access_unchecked::<ArchivedSegmentView>(self.archive()) }
    }

    /// The archive's bytes (what blob headers point into).
    fn archive(&self) -> &[u8] {
        // SAFETY: `open` checked that the payload holds `archive_len` bytes.
        unsafe { self.file.payload().get_unchecked(..self.archive_len) }
    }

    /// The bytes a text chunk's or bitmap's header points at (not yet checked against the
    /// blob's checksum).
    fn blob(&self, header: &view::BlobHeader, what: &str) -> Result<&[u8]> {
        view::blob_at(self.archive(), header)
            .ok_or_else(|| self.corrupt(&format!("{what} outside the file")))
    }

    fn corrupt(&self, what: &str) -> StorageError {
        if self.file.shrunk() {
            // What failed was read from pages the file no longer has (`mapped.rs`).
            return StorageError::corrupt(
                &self.path,
                "the file shrank while it was being read (truncated by another program?)",
            );
        }
        StorageError::corrupt(&self.path, what)
    }

    /// An error if the file shrank under its map: what was read since may be zeros.
    pub fn intact(&self) -> Result<()> {
        if self.file.shrunk() {
            return Err(self.corrupt("shrank"));
        }
        Ok(())
    }

    /// Number of games.
    pub fn games(&self) -> u32 {
        self.data().games.result.len() as u32
    }

    /// Number of positions.
    pub fn positions(&self) -> u64 {
        self.data()
            .games
            .pos_start
            .last()
            .map_or(0, |p| u64::from(p.to_native()))
    }

    /// Totals.
    pub fn stats(&self) -> Result<SegmentStats> {
        let d = self.data();
        let detached = match &self.table {
            Some(t) => t.detached,
            None => d
                .games
                .detached_variations
                .iter()
                .map(|v| u64::from(v.to_native()))
                .sum(),
        };
        Ok(SegmentStats {
            games: u64::from(self.games()),
            positions: self.positions(),
            variations: d.variations.to_native(),
            issues: d.issues.len() as u64,
            detached_variations: detached,
            file_crc: self.recorded_crc(),
        })
    }

    /// Provenance and attributes of a game.
    pub fn game_info(&self, local: u32) -> Result<GameInfo> {
        self.parts(&[Part::Starts, Part::Attributes])?;
        let g = &self.data().games;
        let i = local as usize;
        if i >= g.result.len() {
            return Err(self.corrupt("game number out of range"));
        }
        let file = g.file[i].to_native() as usize;
        Ok(GameInfo {
            local,
            file: self
                .data()
                .files
                .get(file)
                .map_or_else(|| "?".to_owned(), |f| f.as_str().to_owned()),
            line: g.line[i].to_native(),
            byte_offset: g.byte_offset[i].to_native(),
            positions: g.pos_start[i + 1].to_native() - g.pos_start[i].to_native(),
            meta: GameMeta {
                result: GameResult::from_u8(g.result[i]),
                year: g.year[i].to_native(),
                eco: g.eco[i].to_native(),
                white_elo: g.white_elo[i].to_native(),
                black_elo: g.black_elo[i].to_native(),
            },
            issues: g.issues[i].to_native(),
            detached_variations: g.detached_variations[i].to_native(),
        })
    }

    /// Where a game was read from and how many problems it had, without allocating (for
    /// readers of every game, such as SQL's `games` table): the file is an index into
    /// [`Segment::source_files`].
    pub fn game_source(&self, local: u32) -> Result<Option<GameSource>> {
        self.parts(&[Part::Attributes])?;
        let g = &self.data().games;
        let i = local as usize;
        Ok((|| {
            Some(GameSource {
                file: g.file.get(i)?.to_native(),
                line: g.line.get(i)?.to_native(),
                issues: g.issues.get(i)?.to_native(),
            })
        })())
    }

    /// The names of the files the segment's games were read from, as [`GameSource::file`]
    /// indexes them.
    pub fn source_files(&self) -> Vec<&str> {
        self.data().files.iter().map(|f| f.as_str()).collect()
    }

    /// Checks the games' attribute columns now (once per open segment), so that a reader of
    /// every game's attributes through an infallible callback (SQL columns) meets
    /// any damage here, as an error, rather than as a missing value.
    pub fn check_attributes(&self) -> Result<()> {
        self.parts(&[Part::Attributes])
    }

    /// A game's indexed attributes (result, year, ECO, Elos).
    pub fn game_meta(&self, local: u32) -> Result<Option<GameMeta>> {
        self.parts(&[Part::Attributes])?;
        let g = &self.data().games;
        let i = local as usize;
        Ok((|| {
            Some(GameMeta {
                result: GameResult::from_u8(*g.result.get(i)?),
                year: g.year.get(i)?.to_native(),
                eco: g.eco.get(i)?.to_native(),
                white_elo: g.white_elo.get(i)?.to_native(),
                black_elo: g.black_elo.get(i)?.to_native(),
            })
        })())
    }

    /// The original text of a game, byte for byte.
    pub fn game_text(&self, local: u32) -> Result<Vec<u8>> {
        self.parts(&[Part::Text])?;
        let g = &self.data().games;
        let i = local as usize;
        let chunk = g
            .text_chunk
            .get(i)
            .ok_or_else(|| self.corrupt("no such game"))?;
        let raw = self.text_chunk(chunk.to_native())?;
        let start = g.text_offset[i].to_native() as usize;
        let end = start + g.text_len[i].to_native() as usize;
        raw.get(start..end)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| self.corrupt("game text out of chunk bounds"))
    }

    /// Segment-local id of each game's first position, and one past the last game's: game `i`
    /// has positions `starts[i]..starts[i + 1]`. Every index scan needs it: on a little-endian
    /// machine it is the file's column itself, with no copy (copying it out of the file, into
    /// fresh pages, was a few percent of a query's time).
    pub fn game_starts(&self) -> Result<std::borrow::Cow<'_, [u32]>> {
        self.parts(&[Part::Starts])?;
        let column = self.data().games.pos_start.as_slice();
        #[cfg(target_endian = "little")]
        {
            // SAFETY: `u32_le` is `repr(C, align(4))` around a `u32` kept little-endian, which
            // on a little-endian machine is the native representation: same size, alignment and
            // value; the slice borrows the mapping, which lives as long as `self`.
            let native =
                unsafe { std::slice::from_raw_parts(column.as_ptr().cast::<u32>(), column.len()) };
            Ok(std::borrow::Cow::Borrowed(native))
        }
        #[cfg(not(target_endian = "little"))]
        Ok(std::borrow::Cow::Owned(
            column.iter().map(|x| x.to_native()).collect(),
        ))
    }

    /// Number of position blocks.
    pub fn block_count(&self) -> usize {
        self.data().blocks.len()
    }

    /// Segment-local id of the first position and first game of a block.
    pub fn block_start(&self, block: usize) -> Result<(u32, u32)> {
        self.parts(&[Part::BlockTable])?;
        let b = self
            .data()
            .blocks
            .get(block)
            .ok_or_else(|| self.corrupt("block index out of range"))?;
        Ok((b.first_position.to_native(), b.first_game.to_native()))
    }

    /// Decodes one block.
    pub fn block(&self, block: usize) -> Result<DecodedBlock> {
        self.block_opts(block, true)
    }

    /// Decodes one block, with or without the Zobrist and material columns.
    pub fn block_opts(&self, block: usize, hashes: bool) -> Result<DecodedBlock> {
        let b = self.block_entry(block, None)?;
        let decoded = decode_block_opts(b.data, b.raw_len as usize, hashes)
            .ok_or_else(|| self.corrupt("undecodable position block"))?;
        if decoded.positions.len() != b.positions as usize {
            return Err(self.corrupt("position block has the wrong length"));
        }
        Ok(decoded)
    }

    /// The positions, comments and NAGs of one game (positions are game-local ids).
    pub fn game_positions(&self, local: u32) -> Result<DecodedBlock> {
        self.parts(&[Part::Blocks])?;
        let g = &self.data().games;
        let i = local as usize;
        let block = g.block.get(i).ok_or_else(|| self.corrupt("no such game"))?;
        let mut decoded = self.block(block.to_native() as usize)?;
        let (first, _) = self.block_start(block.to_native() as usize)?;
        let start = (g.pos_start[i].to_native() - first) as usize;
        let end = (g.pos_start[i + 1].to_native() - first) as usize;
        if end > decoded.positions.len() || start > end {
            return Err(self.corrupt("game outside its block"));
        }
        let in_game = |p: u32| (start as u32..end as u32).contains(&p);
        decoded.comments.retain(|c| in_game(c.position));
        decoded.nags.retain(|n| in_game(n.position));
        for c in &mut decoded.comments {
            c.position -= start as u32;
        }
        for n in &mut decoded.nags {
            n.position -= start as u32;
        }
        decoded.positions.truncate(end);
        decoded.positions.drain(..start);
        Ok(decoded)
    }

    /// How many games have a recorded problem (from the head: no game column is read).
    pub fn games_with_issues(&self) -> u64 {
        let mut games: Vec<u32> = self
            .data()
            .issues
            .iter()
            .map(|i| i.game.to_native())
            .collect();
        games.sort_unstable();
        games.dedup();
        games.len() as u64
    }

    /// The issues recorded for this segment's games.
    pub fn issues(&self) -> Result<Vec<(IssueRecord, String)>> {
        self.parts(&[Part::Attributes])?;
        let d = self.data();
        Ok(d.issues
            .iter()
            .map(|i| {
                let rec = IssueRecord {
                    game: i.game.to_native(),
                    line: i.line.to_native(),
                    column: i.column.to_native(),
                    kind: i.kind.as_str().to_owned(),
                    message: i.message.as_str().to_owned(),
                };
                let file = d
                    .games
                    .file
                    .get(rec.game as usize)
                    .and_then(|f| d.files.get(f.to_native() as usize))
                    .map_or_else(|| "?".to_owned(), |f| f.as_str().to_owned());
                (rec, file)
            })
            .collect())
    }

    /// A position block's entry, its data checked against its checksum.
    fn block_entry(&self, block: usize, ahead: Option<&mut Ahead>) -> Result<BlockRef<'_>> {
        self.parts(&[Part::BlockTable])?;
        let d = self.data();
        let b = d
            .blocks
            .get(block)
            .ok_or_else(|| self.corrupt("block index out of range"))?;
        let data = self.blob(&b.data, "position block")?;
        match ahead {
            Some(a) => self.file.will_need_in_order(data, a),
            None => self.file.will_need(data),
        }
        self.check_blob(data, d.block_crcs.get(block), "position block")?;
        Ok(BlockRef {
            data,
            raw_len: b.raw_len.to_native(),
            positions: b.positions.to_native(),
        })
    }

    /// A text chunk, checked and decompressed.
    fn text_chunk(&self, chunk: u32) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.text_chunk_into(chunk, &mut out, None)?;
        Ok(out)
    }

    /// As [`Self::text_chunk`], into `out` (contents replaced, allocation reused).
    fn text_chunk_into(
        &self,
        chunk: u32,
        out: &mut Vec<u8>,
        ahead: Option<&mut Ahead>,
    ) -> Result<()> {
        self.parts(&[Part::TextTable])?;
        let d = self.data();
        let header = d
            .text_chunks
            .get(chunk as usize)
            .ok_or_else(|| self.corrupt("text chunk index out of range"))?;
        let data = self.blob(header, "text chunk")?;
        match ahead {
            Some(a) => self.file.will_need_in_order(data, a),
            None => self.file.will_need(data),
        }
        self.check_blob(data, d.text_crcs.get(chunk as usize), "text chunk")?;
        // A frame made with a dictionary names it (plain frames, as segments written before
        // dictionaries and single games have, name none).
        if zstd::zstd_safe::get_dict_id_from_frame(data).is_some() {
            let dictionary = self
                .text_dictionary()?
                .ok_or_else(|| self.corrupt("text chunk compressed with a dictionary it lacks"))?;
            return dictionary
                .decompress_into(data, 1 << 30, out)
                .map_err(|e| self.corrupt(&format!("text chunk: {e}")));
        }
        decompress_frame_into(data, 1 << 30, out)
            .map_err(|e| self.corrupt(&format!("text chunk: {e}")))
    }

    /// The dictionary its text chunks were compressed with (`None` for plain chunks), checked
    /// against its checksum when first read: a merge writes its games again with it.
    pub fn text_dictionary(&self) -> Result<Option<&TextDictionary>> {
        let Some((range, crc)) = self.table.as_ref().and_then(|t| t.dictionary.clone()) else {
            return Ok(None);
        };
        if let Some(d) = self.dictionary.get() {
            return Ok(Some(d));
        }
        let bytes = self
            .file
            .payload()
            .get(range)
            .ok_or_else(|| self.corrupt("text dictionary outside the file"))?;
        if crc32fast::hash(bytes) != crc || self.file.shrunk() {
            return Err(self.corrupt("checksum mismatch (text dictionary)"));
        }
        let d = TextDictionary::from_bytes(bytes)
            .ok_or_else(|| self.corrupt("unusable text dictionary"))?;
        Ok(Some(self.dictionary.get_or_init(|| d)))
    }

    /// Checks a blob against its recorded checksum (read just before use: a damaged byte is an
    /// error naming the file, never a wrong answer).
    fn check_blob(&self, blob: &[u8], crc: Option<&rkyv::rend::u32_le>, what: &str) -> Result<()> {
        match crc {
            Some(c) if c.to_native() == blob_crc(blob) && !self.file.shrunk() => Ok(()),
            Some(_) => Err(self.corrupt(&format!("checksum mismatch ({what})"))),
            None => Err(self.corrupt(&format!("no checksum for a {what}"))),
        }
    }

    /// Checks every byte of the file against its header checksum (what opening skips).
    pub fn verify(&self) -> Result<()> {
        self.file.verify(&self.path)
    }

    /// Byte sizes of the segment's parts: (position blocks, game text, bitmaps, other).
    pub fn size_breakdown(&self) -> [u64; 4] {
        let d = self.data();
        let blocks: u64 = d.blocks.iter().map(|b| b.data.blob_len()).sum();
        // Lengths from the headers, unchecked: a size to report, not data to read.
        let text: u64 = d.text_chunks.iter().map(BlobLen::blob_len).sum();
        let bitmaps: u64 = d.bitmap_blobs.iter().map(BlobLen::blob_len).sum();
        let total = self.file.payload().len() as u64;
        [
            blocks,
            text,
            bitmaps,
            total.saturating_sub(blocks + text + bitmaps),
        ]
    }
}

/// A position block's checked data and what its entry says of it.
struct BlockRef<'a> {
    data: &'a [u8],
    raw_len: u32,
    positions: u32,
}
