//! Writing a segment: encoded batches are appended to its columns and bitmaps, then the whole
//! is archived with rkyv and written in one pass with its checksums.

use std::path::Path;

use super::{BlockEntry, GameColumns, IssueRecord, MAGIC, SegmentData, SegmentStats};
use crate::batch::EncodedBatch;
use crate::bitmap::BitmapBuilder;
use crate::digest::{Digest, LeColumn, Native, blob_crc};
use crate::error::Result;
use crate::file::write_file_streaming;
use crate::text_dictionary::TextDictionary;
use std::sync::Arc;

/// Builds one segment from encoded batches and writes it.
pub struct SegmentBuilder {
    data: SegmentData,
    bitmaps: BitmapBuilder,
    /// Every position's board key, in position order: the one column as long as the segment's
    /// positions, so its buffer is handed from segment to segment (see [`Self::reusing`]).
    boards: Vec<u64>,
    positions: u64,
    data_bytes: u64,
    /// The dictionary of its text chunks, written after the archive (see `parts.rs`).
    text_dictionary: Option<Arc<TextDictionary>>,
}

impl Default for SegmentBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SegmentBuilder {
    /// An empty segment.
    pub fn new() -> Self {
        Self {
            data: SegmentData {
                files: Vec::new(),
                games: GameColumns::default(),
                blocks: Vec::new(),
                text_chunks: Vec::new(),
                bitmap_keys: Vec::new(),
                bitmap_blobs: Vec::new(),
                issues: Vec::new(),
                variations: 0,
                block_crcs: Vec::new(),
                text_crcs: Vec::new(),
                bitmap_crcs: Vec::new(),
                meta_crc: 0,
            },
            bitmaps: BitmapBuilder::new(),
            boards: Vec::new(),
            positions: 0,
            data_bytes: 0,
            text_dictionary: None,
        }
    }

    /// An empty segment whose board keys go into `buffer` (emptied), the buffer a written
    /// segment handed back ([`Written::buffer`]). Why: grown afresh for every segment, that
    /// column was most of the kernel's zeroing of new pages on the writer thread, 3 % of a
    /// build's CPU samples (0.6 % reused; BENCHMARKS.md, fourteenth session).
    pub fn reusing(mut buffer: Vec<u64>) -> Self {
        buffer.clear();
        Self {
            boards: buffer,
            ..Self::new()
        }
    }

    /// The dictionary its text is compressed with, if any: a batch compressed with another
    /// one cannot join it (the writer starts a new segment, see [`Self::takes`]).
    pub fn text_dictionary(&self) -> Option<&Arc<TextDictionary>> {
        self.text_dictionary.as_ref()
    }

    /// Whether a batch whose text was compressed with `dictionary` can join this segment: a
    /// segment keeps one dictionary (plain frames, which name none, join any segment).
    pub fn takes(&self, dictionary: Option<&Arc<TextDictionary>>) -> bool {
        match (dictionary, &self.text_dictionary) {
            (None, _) | (Some(_), None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.bytes() == b.bytes(),
        }
    }

    /// Registers a source file name and returns its index in this segment.
    pub fn add_file(&mut self, name: &str) -> u32 {
        if let Some(i) = self.data.files.iter().position(|f| f == name) {
            return i as u32;
        }
        self.data.files.push(name.to_owned());
        (self.data.files.len() - 1) as u32
    }

    /// Games added so far.
    pub fn games(&self) -> u64 {
        self.data.games.result.len() as u64
    }

    /// Positions added so far.
    pub fn positions(&self) -> u64 {
        self.positions
    }

    /// Bytes of compressed blocks and text held so far.
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }

    /// Appends a batch; `file_map` maps the batch's file indexes to this segment's.
    pub fn push_batch(&mut self, batch: EncodedBatch, file_map: &dyn Fn(u32) -> u32) {
        if self.text_dictionary.is_none() {
            self.text_dictionary = batch.text_dictionary.clone();
        }
        let first_game = self.games() as u32;
        let base = self.positions as u32;
        let block = self.data.blocks.len() as u32;
        let chunk = self.data.text_chunks.len() as u32;
        let mut pos = base;
        for (i, game) in batch.games.iter().enumerate() {
            let g = &mut self.data.games;
            g.pos_start.push(pos);
            pos += game.positions;
            g.block.push(block + game.block);
            g.text_chunk.push(chunk + game.text_chunk);
            g.text_offset.push(game.text_offset);
            g.text_len.push(game.text_len);
            g.file.push(file_map(game.file));
            g.line.push(game.line);
            g.byte_offset.push(game.byte_offset);
            g.result.push(game.meta.result as u8);
            g.year.push(game.meta.year);
            g.eco.push(game.meta.eco);
            g.white_elo.push(game.meta.white_elo);
            g.black_elo.push(game.meta.black_elo);
            g.issues.push(game.issues);
            g.detached_variations.push(game.detached_variations);
            self.bitmaps
                .push_game(first_game + i as u32, &game.meta, game.flags, &game.tags);
        }
        self.data
            .issues
            .extend(batch.issues.iter().map(|is| IssueRecord {
                game: is.game + first_game,
                ..is.clone()
            }));
        let block_bytes: usize = batch.blocks.iter().map(|b| b.data.len()).sum();
        let text_bytes: usize = batch.text.iter().map(Vec::len).sum();
        self.data_bytes += (block_bytes + text_bytes) as u64;
        self.data
            .block_crcs
            .extend(batch.blocks.iter().map(|b| blob_crc(&b.data)));
        self.data
            .text_crcs
            .extend(batch.text.iter().map(|t| blob_crc(t)));
        self.data
            .blocks
            .extend(batch.blocks.into_iter().map(|b| BlockEntry {
                first_position: base + b.first_position,
                positions: b.positions,
                first_game: first_game + b.first_game,
                raw_len: b.raw_len,
                data: b.data,
            }));
        self.data.text_chunks.extend(batch.text);
        self.bitmaps.add_runs(base, batch.runs);
        self.boards.extend_from_slice(&batch.boards);
        self.data.variations += batch.variations;
        self.positions += u64::from(batch.positions);
    }

    /// Adds the game bitmaps of the segment's tag values (see `tags/`).
    pub fn add_tag_values(&mut self, values: &[Vec<u32>]) {
        self.bitmaps.add_tag_values(values);
    }

    /// Serialises the segment to a new file at `path` (synced), returning its totals and its
    /// board-key buffer for the next segment.
    pub fn write(
        mut self,
        path: &Path,
        registration: crate::segment_entry::Registration,
    ) -> Result<Written> {
        self.data.games.pos_start.push(self.positions as u32);
        // The board bitmaps are built beside the others: the build's last segment is finished
        // with nothing else left to do, so one core would wait through both.
        let bitmaps = std::mem::take(&mut self.bitmaps);
        let boards = &self.boards;
        let ((mut keys, mut blobs), (board_keys, board_blobs)) = std::thread::scope(|scope| {
            let board = std::thread::Builder::new()
                .spawn_scoped(scope, || crate::bitmap::board_bitmaps(boards));
            let others = bitmaps.finish();
            match board.map(|b| b.join()) {
                Ok(Ok(board)) => (others, board),
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                // No thread to be had: built here instead.
                Err(_) => (others, crate::bitmap::board_bitmaps(boards)),
            }
        });
        // Board keys sort after every other kind.
        keys.extend(board_keys);
        blobs.extend(board_blobs);
        self.data.bitmap_crcs = blobs.iter().map(|b| blob_crc(b)).collect();
        self.data.bitmap_keys = keys;
        self.data.bitmap_blobs = blobs;
        self.data.meta_crc = digest_meta!(&self.data);
        let stats = SegmentStats {
            games: self.data.games.result.len() as u64,
            positions: self.positions,
            variations: self.data.variations,
            issues: self.data.issues.len() as u64,
            detached_variations: self
                .data
                .games
                .detached_variations
                .iter()
                .map(|&v| u64::from(v))
                .sum(),
            file_crc: 0,
        };
        // Streamed to the file: no in-memory copy of the whole archive (that copy's fresh pages
        // cost more than the serialisation).
        let file_crc = write_file_streaming(path, MAGIC, Some(&registration.to_bytes()), |w| {
            let mut w = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(
                &self.data,
                rkyv::ser::writer::IoWriter::new(w),
            )
            .map(rkyv::ser::writer::IoWriter::into_inner)
            .map_err(|e| e.to_string())?;
            // The text dictionary, then the parts' checksums (see `parts.rs`).
            let archive_len = w.written();
            let dictionary = self.text_dictionary.as_ref().map_or(&[][..], |d| d.bytes());
            std::io::Write::write_all(&mut w, dictionary).map_err(|e| e.to_string())?;
            let table = super::parts::table(&self.data, archive_len, dictionary);
            std::io::Write::write_all(&mut w, &table).map_err(|e| e.to_string())?;
            Ok(w)
        })?;
        Ok(Written {
            stats: SegmentStats { file_crc, ..stats },
            buffer: self.boards,
        })
    }
}

/// A segment written by [`SegmentBuilder::write`].
pub struct Written {
    /// Its totals.
    pub stats: SegmentStats,
    /// Its board-key buffer, for [`SegmentBuilder::reusing`].
    pub buffer: Vec<u64>,
}
