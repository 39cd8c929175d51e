//! Encoding a batch of games into segment-ready pieces, away from the writer thread.
//!
//! Everything expensive about storing games (packing and compressing position columns and game
//! text, finding and grouping the bitmap runs) depends only on the games themselves, so
//! [`encode_batch`] does it in parallel worker threads. The single writer then only concatenates
//! blobs and keeps the grouped runs (see `segment/` and `runs.rs`).

use crate::bitmap_key::GameLine;
use crate::columns::BlockWriter;
use crate::runs::{BatchRuns, RunFinder};
use crate::schema::{CommentRef, GameMeta, GameResult, NagRef, PositionFlags, PositionRecord};
use crate::segment::{IssueRecord, NewGame};
use crate::text_dictionary::TextDictionary;
use shakmaty::Color;
use std::sync::Arc;

/// zstd level of game text (text is read rarely and is most of the input, so compress well).
const TEXT_LEVEL: i32 = 2;

/// Games per position block, the unit a reader decompresses to read one game's positions. A
/// batch (the unit of parallel encoding and of bitmap run finding) holds several: 8-game
/// blocks made writing a thousand scattered games about a tenth faster than 16-game ones, and
/// finding runs over whole batches of several blocks keeps ingest from paying for a batch
/// boundary per block (BENCHMARKS.md).
pub const BLOCK_GAMES: usize = 8;

/// Games per text chunk, the unit a reader decompresses to read one game's text. Writing a
/// game found by a query decompresses its whole chunk: four games instead of the batch's
/// sixteen cut that cost by three quarters, for about 15 % more text bytes (measured on
/// the 256k-game set; BENCHMARKS.md).
pub const TEXT_GAMES: usize = 4;

/// Per-game facts the segment keeps uncompressed.
#[derive(Clone, Debug)]
pub struct BatchGame {
    /// Source file index.
    pub file: u32,
    /// First line.
    pub line: u32,
    /// Byte offset in the decompressed source.
    pub byte_offset: u64,
    /// Positions in the tree.
    pub positions: u32,
    /// The batch's block holding the game's positions.
    pub block: u32,
    /// The batch's text chunk holding the game's text.
    pub text_chunk: u32,
    /// Offset of the text in that chunk.
    pub text_offset: u32,
    /// Length of the text.
    pub text_len: u32,
    /// Indexed attributes.
    pub meta: GameMeta,
    /// Number of issues.
    pub issues: u32,
    /// Variations not in the tree.
    pub detached_variations: u32,
    /// The flags some position of the game carries (for the segment's game bitmaps).
    pub flags: GameFlags,
    /// Tag pairs (for the tag index).
    pub tags: Vec<(String, String)>,
}

/// The flags some position of a game carries, on its main line and anywhere in its tree, per
/// side to move in that position.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GameFlags {
    /// The union of the flags of the positions on each line ([`GameLine`] order) with each side
    /// to move (`Color` order: Black, White).
    by_line_and_side: [[PositionFlags; 2]; 2],
}

impl GameFlags {
    /// The flags of a game whose positions carry `flags`.
    pub fn of(flags: impl IntoIterator<Item = PositionFlags>) -> Self {
        let mut by = [[0u16; 2]; 2];
        for f in flags {
            let side = usize::from(f.contains(PositionFlags::WHITE_TO_MOVE));
            by[GameLine::Anywhere as usize][side] |= f.0;
            if f.contains(PositionFlags::MAINLINE) {
                by[GameLine::Main as usize][side] |= f.0;
            }
        }
        Self {
            by_line_and_side: by.map(|sides| sides.map(PositionFlags)),
        }
    }

    /// The flags on `line` of the positions with `side` to move (`None`: either side).
    pub fn on(self, line: GameLine, side: Option<Color>) -> PositionFlags {
        let [black, white] = self.by_line_and_side[line as usize];
        match side {
            None => PositionFlags(black.0 | white.0),
            Some(Color::White) => white,
            Some(Color::Black) => black,
        }
    }
}

/// A batch of games, encoded.
#[derive(Clone, Debug, Default)]
pub struct EncodedBatch {
    /// The games in input order.
    pub games: Vec<BatchGame>,
    /// Compressed position blocks, each of [`BLOCK_GAMES`] games (the last maybe fewer).
    pub blocks: Vec<EncodedBlock>,
    /// Compressed text chunks, each the concatenated text of [`TEXT_GAMES`] games (the last
    /// maybe fewer).
    pub text: Vec<Vec<u8>>,
    /// Bitmap runs over batch-local position ids, grouped by bitmap.
    pub runs: BatchRuns,
    /// Problems (game = batch-local game index).
    pub issues: Vec<IssueRecord>,
    /// Positions in the batch.
    pub positions: u32,
    /// Secondary moves in the batch.
    pub variations: u64,
    /// Each position's board key, in position order (see [`crate::BitmapKey::Board`]).
    pub boards: Vec<u64>,
    /// The dictionary its text chunks were compressed with (a segment must keep it).
    pub text_dictionary: Option<Arc<TextDictionary>>,
}

/// A compressed position block of a batch.
#[derive(Clone, Debug, Default)]
pub struct EncodedBlock {
    /// The compressed columns.
    pub data: Vec<u8>,
    /// Their unpacked size.
    pub raw_len: u32,
    /// The batch-local id of the block's first position.
    pub first_position: u32,
    /// Positions in the block.
    pub positions: u32,
    /// The batch-local index of the block's first game.
    pub first_game: u32,
}

/// Encodes games for a segment (call from any thread).
pub fn encode_batch(games: Vec<NewGame>) -> EncodedBatch {
    let mut encoder = BatchEncoder::default();
    for game in games {
        // The emptied position buffer is for a parser thread's next game; none follows here.
        encoder.push(game);
    }
    encoder.finish()
}

/// Encodes a batch one game at a time: each game's rows are packed into the block columns and
/// searched for bitmap runs right after they are made, while still in cache, and then dropped,
/// so a batch never holds all its rows. A parser thread keeps one encoder and reuses its buffers
/// from batch to batch.
#[derive(Default)]
pub struct BatchEncoder {
    out: EncodedBatch,
    text: Vec<u8>,
    comments: Vec<CommentRef>,
    nags: Vec<NagRef>,
    block: BlockWriter,
    /// Batch-local first position and first game of the block being gathered.
    block_start: (u32, u32),
    runs: RunFinder,
    /// What text chunks are compressed with (none: plain frames).
    dictionary: Option<Arc<TextDictionary>>,
}

impl BatchEncoder {
    /// An encoder whose text chunks are compressed with `dictionary` (see
    /// `text_dictionary.rs`).
    pub fn with_text_dictionary(dictionary: Option<Arc<TextDictionary>>) -> Self {
        Self {
            dictionary,
            ..Self::default()
        }
    }

    /// Games pushed since the last [`BatchEncoder::finish`].
    pub fn len(&self) -> usize {
        self.out.games.len()
    }

    /// True when no game was pushed since the last [`BatchEncoder::finish`].
    pub fn is_empty(&self) -> bool {
        self.out.games.is_empty()
    }

    /// Adds the next game of the batch, handing back its position buffer emptied: a parser
    /// thread fills it with its next game instead of allocating one per game.
    pub fn push(&mut self, game: NewGame) -> Vec<PositionRecord> {
        let i = self.out.games.len() as u32;
        // Comment and NAG positions are block-local.
        let base = self.out.positions - self.block_start.0;
        self.out.games.push(BatchGame {
            file: game.file,
            line: game.line,
            byte_offset: game.byte_offset,
            positions: game.positions.len() as u32,
            block: self.out.blocks.len() as u32,
            text_chunk: (i as usize / TEXT_GAMES) as u32,
            text_offset: self.text.len() as u32,
            text_len: game.text.len() as u32,
            meta: game.meta.unwrap_or(GameMeta {
                result: GameResult::Unknown,
                year: 0,
                eco: 0,
                white_elo: 0,
                black_elo: 0,
            }),
            issues: game.issues.len() as u32,
            detached_variations: game.detached_variations,
            flags: GameFlags::of(game.positions.iter().map(|p| p.flags)),
            tags: game.tags,
        });
        self.text.extend_from_slice(&game.text);
        if self.out.games.len().is_multiple_of(TEXT_GAMES) {
            self.finish_text_chunk();
        }
        self.out.issues.extend(
            game.issues
                .into_iter()
                .map(|is| IssueRecord { game: i, ..is }),
        );
        self.comments
            .extend(game.comments.iter().map(|c| CommentRef {
                position: c.position + base,
                ..*c
            }));
        self.nags.extend(game.nags.iter().map(|n| NagRef {
            position: n.position + base,
            nag: n.nag,
        }));
        self.out.variations += game.positions.iter().filter(|p| p.child_index > 0).count() as u64;
        self.out.boards.extend(
            game.positions
                .iter()
                .map(|p| crate::BitmapKey::board(&p.board).to_u64()),
        );
        self.out.positions += game.positions.len() as u32;
        self.block.push_game(&game.positions);
        self.runs.push_game(&game.positions);
        if self.out.games.len().is_multiple_of(BLOCK_GAMES) {
            self.finish_block();
        }
        let mut positions = game.positions;
        positions.clear();
        positions
    }

    /// The encoded batch of every game pushed; the encoder is then empty again.
    pub fn finish(&mut self) -> EncodedBatch {
        self.out.runs = self.runs.finish();
        // The batch's last games (fewer than a block's or a chunk's worth) get their block and
        // chunk even when they have no positions or no text: every game names parts that exist.
        if !self.out.games.len().is_multiple_of(BLOCK_GAMES) {
            self.finish_block();
        }
        if !self.out.games.len().is_multiple_of(TEXT_GAMES) {
            self.finish_text_chunk();
        }
        self.block_start = (0, 0);
        self.out.text_dictionary = self.dictionary.clone();
        std::mem::take(&mut self.out)
    }

    /// Compresses the positions, comments and NAGs gathered since the last block into the
    /// next block.
    fn finish_block(&mut self) {
        let (first_position, first_game) = self.block_start;
        let raw_len = self.block.raw_len(&self.comments, &self.nags) as u32;
        let data = self.block.finish(&self.comments, &self.nags);
        self.out.blocks.push(EncodedBlock {
            data,
            raw_len,
            first_position,
            positions: self.out.positions - first_position,
            first_game,
        });
        self.comments.clear();
        self.nags.clear();
        self.block_start = (self.out.positions, self.out.games.len() as u32);
    }

    /// Compresses the text gathered since the last chunk into the next chunk.
    fn finish_text_chunk(&mut self) {
        let frame = match &self.dictionary {
            Some(d) => d.compress(&self.text),
            None => crate::columns::compress(&self.text, TEXT_LEVEL),
        };
        self.out.text.push(frame);
        self.text.clear();
    }
}
