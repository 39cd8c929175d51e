//! Encoding a batch of games into segment-ready pieces, away from the writer thread.
//!
//! Everything expensive about storing games (packing and compressing position columns and game
//! text, finding and grouping the bitmap runs) depends only on the games themselves, so
//! [`encode_batch`] does it in parallel worker threads. The single writer then only concatenates
//! blobs and keeps the grouped runs (see `segment.rs` and `runs.rs`).

use crate::columns::{encode_block, raw_block_len};
use crate::runs::BatchRuns;
use crate::schema::{CommentRef, GameMeta, GameResult, NagRef, PositionRecord};
use crate::segment::{IssueRecord, NewGame};

/// zstd level of game text (text is read rarely and is most of the input, so compress well).
const TEXT_LEVEL: i32 = 1;

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
    /// Offset of the text in the batch's text chunk.
    pub text_offset: u32,
    /// Length of the text.
    pub text_len: u32,
    /// Indexed attributes.
    pub meta: GameMeta,
    /// Number of issues.
    pub issues: u32,
    /// Variations not in the tree.
    pub detached_variations: u32,
    /// Tag pairs (for the tag index).
    pub tags: Vec<(String, String)>,
}

/// A batch of games, encoded.
#[derive(Clone, Debug, Default)]
pub struct EncodedBatch {
    /// The games in input order.
    pub games: Vec<BatchGame>,
    /// Compressed position block holding all the batch's positions.
    pub block: Vec<u8>,
    /// Unpacked size of the block.
    pub block_raw_len: u32,
    /// Compressed concatenated game text.
    pub text: Vec<u8>,
    /// Bitmap runs over batch-local position ids, grouped by bitmap.
    pub runs: BatchRuns,
    /// Problems (game = batch-local game index).
    pub issues: Vec<IssueRecord>,
    /// Positions in the batch.
    pub positions: u32,
    /// Secondary moves in the batch.
    pub variations: u64,
}

/// Encodes games for a segment (call from any thread).
pub fn encode_batch(games: Vec<NewGame>) -> EncodedBatch {
    let mut out = EncodedBatch::default();
    let total = games.len();
    let mut positions: Vec<Vec<PositionRecord>> = Vec::with_capacity(total);
    let mut base = 0u32;
    let mut comments: Vec<CommentRef> = Vec::new();
    let mut nags: Vec<NagRef> = Vec::new();
    let mut text = TEXT_SCRATCH.with(|c| std::mem::take(&mut *c.borrow_mut()));
    text.clear();
    text.reserve(games.iter().map(|g| g.text.len()).sum());
    for (i, game) in games.into_iter().enumerate() {
        out.games.push(BatchGame {
            file: game.file,
            line: game.line,
            byte_offset: game.byte_offset,
            positions: game.positions.len() as u32,
            text_offset: text.len() as u32,
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
            tags: game.tags,
        });
        text.extend_from_slice(&game.text);
        out.issues.extend(game.issues.into_iter().map(|mut is| {
            is.game = i as u32;
            is
        }));
        comments.extend(game.comments.iter().map(|c| CommentRef {
            position: c.position + base,
            ..*c
        }));
        nags.extend(game.nags.iter().map(|n| NagRef {
            position: n.position + base,
            nag: n.nag,
        }));
        out.variations += game.positions.iter().filter(|p| p.child_index > 0).count() as u64;
        base += game.positions.len() as u32;
        positions.push(game.positions);
    }
    out.positions = base;
    out.runs = BatchRuns::of(&positions);
    out.block_raw_len = raw_block_len(&positions, &comments, &nags) as u32;
    out.block = encode_block(&positions, &comments, &nags);
    out.text = crate::columns::compress(&text, TEXT_LEVEL);
    TEXT_SCRATCH.with(|c| *c.borrow_mut() = text);
    out
}

thread_local! {
    /// Reused buffer for a batch's concatenated text (see `columns::SCRATCH`).
    static TEXT_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}
