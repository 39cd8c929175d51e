//! Encoding a batch of games into segment-ready pieces, away from the writer thread.
//!
//! Everything expensive about storing games (packing and compressing position columns and game
//! text, finding the bitmap runs) depends only on the games themselves, so [`encode_batch`] does it
//! in parallel worker threads. The single writer then only concatenates blobs and inserts runs at
//! an offset (see `segment.rs`).

use shakmaty::{Color, Role};

use crate::bitmap::BitmapKey;
use crate::columns::{encode_block, raw_block_len};
use crate::schema::{Bitboards, CommentRef, GameMeta, GameResult, NagRef, PositionRecord};
use crate::segment::{IssueRecord, NewGame};

/// zstd level of game text (text is read rarely and is most of the input, so compress well).
const TEXT_LEVEL: i32 = 1;

/// A run of consecutive batch-local position ids that have a bitmap key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Encoded [`BitmapKey`].
    pub key: u64,
    /// First id (batch-local).
    pub start: u32,
    /// One past the last id.
    pub end: u32,
}

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
    /// Bitmap runs over batch-local position ids.
    pub runs: Vec<Run>,
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
    out.runs = runs(&positions);
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

/// The piece (as an index 0..12: colour * 6 + role - 1) standing on `sq`, if any.
fn piece_at(b: &Bitboards, sq: u32) -> Option<usize> {
    let bit = 1u64 << sq;
    let color = if b.0[0] & bit != 0 {
        0
    } else if b.0[1] & bit != 0 {
        1
    } else {
        return None;
    };
    (0..6)
        .find(|r| b.0[2 + r] & bit != 0)
        .map(|r| color * 6 + r)
}

fn piece_key(piece: usize, sq: u32) -> u64 {
    let color = if piece < 6 {
        Color::White
    } else {
        Color::Black
    };
    let role = Role::ALL[piece % 6];
    BitmapKey::Piece(color, role, shakmaty::Square::new(sq)).to_u64()
}

/// The bitmap runs of consecutive positions: pieces on squares, flags, material. Only the squares
/// whose contents differ from the previous position are looked at (two to four per move).
fn runs(games: &[Vec<PositionRecord>]) -> Vec<Run> {
    let n: usize = games.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(n * 3);
    let mut run_start = [0u32; 64];
    let mut prev = Bitboards::default();
    let mut flag_start = [0u32; 16];
    let mut prev_flags = 0u16;
    let mut material = (0u32, None);
    let end = n as u32;
    for (id, rec) in games.iter().flatten().enumerate() {
        let id = id as u32;
        let mut changed = 0u64;
        for (a, b) in prev.0.iter().zip(rec.board.0.iter()) {
            changed |= a ^ b;
        }
        while changed != 0 {
            let sq = changed.trailing_zeros();
            changed &= changed - 1;
            let (old, new) = (piece_at(&prev, sq), piece_at(&rec.board, sq));
            if old == new {
                continue;
            }
            if let Some(p) = old {
                out.push(Run {
                    key: piece_key(p, sq),
                    start: run_start[sq as usize],
                    end: id,
                });
            }
            if new.is_some() {
                run_start[sq as usize] = id;
            }
        }
        prev = rec.board;
        let flags = rec.flags.0;
        let mut changed = flags ^ prev_flags;
        while changed != 0 {
            let bit = changed.trailing_zeros();
            changed &= changed - 1;
            if flags >> bit & 1 == 1 {
                flag_start[bit as usize] = id;
            } else {
                out.push(Run {
                    key: BitmapKey::Flag(bit as u8).to_u64(),
                    start: flag_start[bit as usize],
                    end: id,
                });
            }
        }
        prev_flags = flags;
        if material.1 != Some(rec.material) {
            if let Some(m) = material.1 {
                out.push(Run {
                    key: BitmapKey::Material(m).to_u64(),
                    start: material.0,
                    end: id,
                });
            }
            material = (id, Some(rec.material));
        }
    }
    let mut occupied = prev.0[0] | prev.0[1];
    while occupied != 0 {
        let sq = occupied.trailing_zeros();
        occupied &= occupied - 1;
        if let Some(p) = piece_at(&prev, sq) {
            out.push(Run {
                key: piece_key(p, sq),
                start: run_start[sq as usize],
                end,
            });
        }
    }
    for bit in 0..16u32 {
        if prev_flags >> bit & 1 == 1 {
            out.push(Run {
                key: BitmapKey::Flag(bit as u8).to_u64(),
                start: flag_start[bit as usize],
                end,
            });
        }
    }
    if let Some(m) = material.1 {
        out.push(Run {
            key: BitmapKey::Material(m).to_u64(),
            start: material.0,
            end,
        });
    }
    out
}
