//! Position blocks: the columns of a run of whole games, packed and zstd-compressed together.
//!
//! A block holds every position of its games (blocks never split a game, so a parent is always in
//! the same block as its child) as one little-endian array per column, plus the games' root piece
//! placements, comments and NAGs.
//!
//! Only what the tree cannot give back is stored: per position the parent, the move, castling
//! rights, en-passant square, half-move clock and the check / mate / stalemate / truncated bits
//! (usually 9 bytes before compression: the parent, move and half-move columns take the fewest
//! bytes their block's largest value needs, see `narrow`). Ply, depth, child index, number of children, move number, side to
//! move, the structural flags, material, board and Zobrist hash are derived on decode from the
//! parent (see `replay.rs`), and each game's root stores its board, move number and side to move. Parents are stored as `id - parent` (1 for a main-line move) and
//! the board column as moves (see `replay.rs`), which is what makes a block compress well.

use shakmaty::{Bitboard, Square};

use crate::replay::apply_move;
use crate::schema::{
    Bitboards, CommentPlacement, CommentRef, MaterialSignature, MoveCode, NO_PARENT, NagRef,
    PositionFlags, PositionRecord,
};

/// zstd level for position blocks (fast to decode, good on the delta-coded columns).
const BLOCK_LEVEL: i32 = 1;

/// One decoded block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecodedBlock {
    /// Positions in segment-local id order.
    pub positions: Vec<PositionRecord>,
    /// Comments, positions given as indexes into `positions`.
    pub comments: Vec<CommentRef>,
    /// NAGs, positions given as indexes into `positions`.
    pub nags: Vec<NagRef>,
}

/// Little-endian column reader; every read is bounds-checked (a corrupt block is an error).
struct In<'a> {
    buf: &'a [u8],
    at: usize,
}

/// A read-only view of one packed column.
#[derive(Copy, Clone)]
struct Col<'a> {
    bytes: &'a [u8],
    width: usize,
}

impl Col<'_> {
    // Called once per position and column in the decoder's inner loop.
    #[inline(always)]
    fn get(&self, i: usize) -> u64 {
        let b = &self.bytes[i * self.width..];
        match self.width {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
            3 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], 0])),
            4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        }
    }
}

impl<'a> In<'a> {
    /// The next column as a view, checked to hold `n` values (any number if `n` is `None`).
    fn view(&mut self, width: usize, n: Option<usize>) -> Option<(Col<'a>, usize)> {
        let len = u32::from_le_bytes(self.buf.get(self.at..self.at + 4)?.try_into().ok()?) as usize;
        if n.is_some_and(|n| n != len) {
            return None;
        }
        self.at += 4;
        let end = self.at.checked_add(len.checked_mul(width)?)?;
        let bytes = self.buf.get(self.at..end)?;
        self.at = end;
        Some((Col { bytes, width }, len))
    }

    /// The next column written by `narrow` (its width is stored with it).
    fn narrow_view(&mut self, n: Option<usize>) -> Option<(Col<'a>, usize)> {
        let len = u32::from_le_bytes(self.buf.get(self.at..self.at + 4)?.try_into().ok()?) as usize;
        if n.is_some_and(|n| n != len) {
            return None;
        }
        let width = usize::from(*self.buf.get(self.at + 4)?);
        if !(1..=4).contains(&width) {
            return None;
        }
        self.at += 5;
        let end = self.at.checked_add(len.checked_mul(width)?)?;
        let bytes = self.buf.get(self.at..end)?;
        self.at = end;
        Some((Col { bytes, width }, len))
    }

    fn col(&mut self, width: usize) -> Option<Vec<u64>> {
        let n = u32::from_le_bytes(self.buf.get(self.at..self.at + 4)?.try_into().ok()?) as usize;
        self.at += 4;
        let bytes = self
            .buf
            .get(self.at..self.at.checked_add(n.checked_mul(width)?)?)?;
        self.at += n * width;
        Some(
            bytes
                .chunks_exact(width)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..width].copy_from_slice(c);
                    u64::from_le_bytes(b)
                })
                .collect(),
        )
    }
}

/// Packs the columns of a block one game at a time (while the game's rows are still in cache)
/// and compresses them at the end. Reusable: [`BlockWriter::finish`] leaves it empty with its
/// buffers kept.
///
/// Games are whole games in id order, parents given as game-local ids (as in
/// [`PositionRecord::parent`]); comment and NAG positions are block-local.
#[derive(Default)]
pub struct BlockWriter {
    positions: usize,
    parent_delta: Vec<u32>,
    flags: Vec<u8>,
    moves: Vec<u32>,
    castling: Vec<u8>,
    ep: Vec<u8>,
    halfmoves: Vec<u32>,
    roots: usize,
    root_boards: [Vec<u8>; 8],
    root_move_number: Vec<u8>,
    root_white: Vec<u8>,
    raw: Vec<u8>,
}

impl BlockWriter {
    /// Appends one game's rows.
    pub fn push_game(&mut self, game: &[PositionRecord]) {
        self.positions += game.len();
        for (i, p) in game.iter().enumerate() {
            let delta = if p.parent == NO_PARENT {
                0
            } else {
                (i as u32).wrapping_sub(p.parent)
            };
            self.parent_delta.push(delta);
            self.flags.push(stored_flags(p.flags));
            self.moves.push(p.mv.0);
            self.castling
                .extend_from_slice(&castling_to_u16(p.castling).to_le_bytes());
            self.ep.push(p.ep_square.map_or(64, u8::from));
            self.halfmoves
                .push(p.halfmove_clock.min(u32::from(u16::MAX)));
        }
        if let Some(root) = game.first() {
            self.roots += 1;
            for (col, bb) in self.root_boards.iter_mut().zip(root.board.0) {
                col.extend_from_slice(&bb.to_le_bytes());
            }
            self.root_move_number
                .extend_from_slice(&root.move_number.to_le_bytes());
            self.root_white
                .push(u8::from(root.flags.contains(PositionFlags::WHITE_TO_MOVE)));
        }
    }

    /// The packed size so far plus the comment and NAG columns (what [`decode_block`] needs as
    /// its bound).
    pub fn raw_len(&self, comments: &[CommentRef], nags: &[NagRef]) -> usize {
        4 * 32 + 3 + self.positions * 14 + self.roots * 69 + comments.len() * 13 + nags.len() * 5
    }

    /// The compressed block of everything pushed, with these comments and NAGs; the writer is
    /// then empty again.
    pub fn finish(&mut self, comments: &[CommentRef], nags: &[NagRef]) -> Vec<u8> {
        let mut raw = std::mem::take(&mut self.raw);
        raw.clear();
        raw.reserve(self.raw_len(comments, nags));
        let (n, roots) = (self.positions as u32, self.roots as u32);
        let col = |raw: &mut Vec<u8>, count: u32, bytes: &mut Vec<u8>| {
            raw.extend_from_slice(&count.to_le_bytes());
            raw.extend_from_slice(bytes);
            bytes.clear();
        };
        narrow(&mut raw, &mut self.parent_delta);
        col(&mut raw, n, &mut self.flags);
        narrow(&mut raw, &mut self.moves);
        col(&mut raw, n, &mut self.castling);
        col(&mut raw, n, &mut self.ep);
        narrow(&mut raw, &mut self.halfmoves);
        for board in &mut self.root_boards {
            col(&mut raw, roots, board);
        }
        col(&mut raw, roots, &mut self.root_move_number);
        col(&mut raw, roots, &mut self.root_white);
        let c = comments.len() as u32;
        let mut packed = |count: u32, f: &dyn Fn(&mut Vec<u8>)| {
            raw.extend_from_slice(&count.to_le_bytes());
            f(&mut raw);
        };
        packed(c, &|o| {
            comments
                .iter()
                .for_each(|x| o.extend_from_slice(&x.position.to_le_bytes()))
        });
        packed(c, &|o| {
            comments
                .iter()
                .for_each(|x| o.push(u8::from(x.placement == CommentPlacement::Before)))
        });
        packed(c, &|o| {
            comments
                .iter()
                .for_each(|x| o.extend_from_slice(&x.start.to_le_bytes()))
        });
        packed(c, &|o| {
            comments
                .iter()
                .for_each(|x| o.extend_from_slice(&x.len.to_le_bytes()))
        });
        let g = nags.len() as u32;
        packed(g, &|o| {
            nags.iter()
                .for_each(|x| o.extend_from_slice(&x.position.to_le_bytes()))
        });
        packed(g, &|o| nags.iter().for_each(|x| o.push(x.nag)));
        let out = compress(&raw, BLOCK_LEVEL);
        self.raw = raw;
        self.positions = 0;
        self.roots = 0;
        out
    }
}

/// Writes a column of small numbers with the fewest bytes (1 to 4) that hold its largest value:
/// count, width, then the values little-endian. Parent distances are nearly all 1, half-move
/// clocks small and move codes 23 bits, so this feeds zstd a third less input than fixed widths.
fn narrow(raw: &mut Vec<u8>, values: &mut Vec<u32>) {
    let max = values.iter().copied().max().unwrap_or(0);
    let width = (4 - max.leading_zeros() as usize / 8).max(1);
    raw.extend_from_slice(&(values.len() as u32).to_le_bytes());
    raw.push(width as u8);
    raw.reserve(values.len() * width);
    match width {
        1 => raw.extend(values.iter().map(|&v| v as u8)),
        2 => values
            .iter()
            .for_each(|&v| raw.extend_from_slice(&(v as u16).to_le_bytes())),
        3 => values
            .iter()
            .for_each(|&v| raw.extend_from_slice(&v.to_le_bytes()[..3])),
        _ => values
            .iter()
            .for_each(|&v| raw.extend_from_slice(&v.to_le_bytes())),
    }
    values.clear();
}

/// Packs and compresses a block of whole games (see [`BlockWriter`]).
pub fn encode_block(
    games: &[Vec<PositionRecord>],
    comments: &[CommentRef],
    nags: &[NagRef],
) -> Vec<u8> {
    let mut w = BlockWriter::default();
    games.iter().for_each(|g| w.push_game(g));
    w.finish(comments, nags)
}

/// Decompresses and unpacks a block; `None` if it is malformed. `raw_len` bounds the allocation.
pub fn decode_block(data: &[u8], raw_len: usize) -> Option<DecodedBlock> {
    decode_block_opts(data, raw_len, true)
}

/// As [`decode_block`]; without `hashes` the Zobrist and material columns are left at zero
/// (they cost a quarter of the decode time and query evaluation does not read them).
pub fn decode_block_opts(data: &[u8], raw_len: usize, hashes: bool) -> Option<DecodedBlock> {
    let raw = decompress_block(data, raw_len)?;
    let view = BlockView::parse(&raw)?;
    let positions = view.replay(0..view.len(), 0, hashes)?;
    let (comments, nags) = view.notes()?;
    Some(DecodedBlock {
        positions,
        comments,
        nags,
    })
}

/// A block's packed columns, decompressed (see [`BlockView`]).
pub fn decompress_block(data: &[u8], raw_len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    decompress_block_into(data, raw_len, &mut out)?;
    Some(out)
}

/// As [`decompress_block`], into `out` (its contents replaced, its allocation reused: readers
/// that go from block to block keep one buffer, since a fresh one per block made the kernel
/// zero new pages for most of them).
pub fn decompress_block_into(data: &[u8], raw_len: usize, out: &mut Vec<u8>) -> Option<()> {
    thread_local! {
        // A decompression context per thread: making one per block cost more than a small
        // block's decompression.
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    // Room for what the frame says it holds, never more than `raw_len`: a damaged length
    // cannot make a large allocation.
    let size = match zstd::zstd_safe::get_frame_content_size(data) {
        Ok(Some(n)) => usize::try_from(n).ok().filter(|&n| n <= raw_len)?,
        _ => raw_len,
    };
    out.clear();
    out.reserve(size);
    CONTEXT.with(|c| {
        let mut c = c.try_borrow_mut().ok()?;
        if c.is_none() {
            *c = zstd::bulk::Decompressor::new().ok();
        }
        // A reused buffer may hold more than `raw_len`: the output is checked against it.
        let n = c.as_mut()?.decompress_to_buffer(data, out).ok()?;
        (n <= raw_len).then_some(())
    })
}

/// Decompresses one zstd frame into `out` (contents replaced, allocation reused), with the
/// thread's context when its header records its size (as [`compress`] writes them); a frame
/// without the size (or claiming more than `limit`) is streamed instead.
pub fn decompress_frame_into(data: &[u8], limit: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
    match zstd::zstd_safe::get_frame_content_size(data) {
        Ok(Some(n)) if n as usize <= limit => decompress_block_into(data, n as usize, out)
            .ok_or_else(|| std::io::Error::other("the frame does not decompress to its size")),
        _ => {
            out.clear();
            zstd::stream::copy_decode(data, &mut *out)
        }
    }
}

/// The columns of a decompressed block, parsed but not replayed: any of its games can then be
/// rebuilt alone ([`BlockView::replay`]), so reading a few candidate games of a block costs
/// their positions, not the block's.
pub struct BlockView<'a> {
    raw: &'a [u8],
    parent_delta: Col<'a>,
    stored: Col<'a>,
    moves: Col<'a>,
    castling: Col<'a>,
    ep: Col<'a>,
    halfmoves: Col<'a>,
    roots: Vec<Col<'a>>,
    root_count: usize,
    n: usize,
    /// Where the comment and NAG columns start.
    notes_at: usize,
}

impl<'a> BlockView<'a> {
    /// Parses the column layout of a decompressed block (`None` when it is malformed).
    pub fn parse(raw: &'a [u8]) -> Option<Self> {
        let mut r = In { buf: raw, at: 0 };
        let (parent_delta, n) = r.narrow_view(None)?;
        let (stored, _) = r.view(1, Some(n))?;
        let (moves, _) = r.narrow_view(Some(n))?;
        let (castling, _) = r.view(2, Some(n))?;
        let (ep, _) = r.view(1, Some(n))?;
        let (halfmoves, _) = r.narrow_view(Some(n))?;
        let roots: Vec<(Col, usize)> = (0..10)
            .map(|k| {
                r.view(
                    if k < 8 {
                        8
                    } else if k == 8 {
                        4
                    } else {
                        1
                    },
                    None,
                )
            })
            .collect::<Option<_>>()?;
        let root_count = roots[0].1;
        if roots.iter().any(|(_, len)| *len != root_count) {
            return None;
        }
        Some(Self {
            raw,
            parent_delta,
            stored,
            moves,
            castling,
            ep,
            halfmoves,
            roots: roots.into_iter().map(|(c, _)| c).collect(),
            root_count,
            n,
            notes_at: r.at,
        })
    }

    /// Number of positions in the block.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True for a block without positions.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Rebuilds the positions `range` of the block: whole games, the first of which is the
    /// block's game number `first_root` (0-based). `None` when the range does not start at that
    /// game's root or the columns are inconsistent.
    pub fn replay(
        &self,
        range: std::ops::Range<usize>,
        first_root: usize,
        hashes: bool,
    ) -> Option<Vec<PositionRecord>> {
        if range.end > self.n || range.start > range.end {
            return None;
        }
        let base = range.start;
        let mut positions: Vec<PositionRecord> = Vec::with_capacity(range.len());
        let mut next_child = vec![0u32; range.len()];
        let mut next_root = first_root;
        let mut game_start = base;
        for i in range {
            let mv = MoveCode(self.moves.get(i) as u32);
            let delta = self.parent_delta.get(i) as usize;
            let flags = STORED_FLAG_SETS[(self.stored.get(i) & 15) as usize];
            let ep = self.ep.get(i);
            // Built in place at the end of the rows (a record built aside and pushed was copied
            // once more, the replay's most expensive store).
            positions.push(PositionRecord {
                parent: NO_PARENT,
                child_index: 0,
                children: 0,
                ply: 0,
                depth: 0,
                move_number: 0,
                flags,
                mv,
                castling: castling_from_u16(self.castling.get(i) as u16),
                ep_square: (ep < 64).then(|| Square::new(ep as u32)),
                halfmove_clock: self.halfmoves.get(i) as u32,
                zobrist: 0,
                material: MaterialSignature::default(),
                board: Bitboards::default(),
            });
            let (done, last) = positions.split_at_mut(i - base);
            let rec = &mut last[0];
            if delta == 0 {
                if next_root >= self.root_count {
                    return None;
                }
                for (k, col) in self.roots[..8].iter().enumerate() {
                    rec.board.0[k] = col.get(next_root);
                }
                rec.move_number = self.roots[8].get(next_root) as u32;
                rec.flags.set(
                    PositionFlags::WHITE_TO_MOVE,
                    self.roots[9].get(next_root) == 1,
                );
                rec.flags |= PositionFlags::INITIAL | PositionFlags::VIRTUAL_MAINLINE;
                if hashes {
                    rec.material = MaterialSignature::of(&rec.board.to_board()?);
                    rec.zobrist = crate::replay::zobrist(rec);
                }
                next_root += 1;
                game_start = i;
            } else {
                let p = i.checked_sub(delta)?;
                if p < game_start {
                    return None;
                }
                let parent = &done[p - base];
                let child_index = next_child[p - base];
                next_child[p - base] += 1;
                rec.parent = (p - game_start) as u32;
                rec.child_index = child_index;
                rec.ply = parent.ply.saturating_add(1);
                rec.depth = parent.depth.saturating_add(u32::from(child_index > 0));
                let parent_black = parent.turn() == shakmaty::Color::Black;
                let null = mv.kind() == Some(crate::schema::MoveKind::Null);
                rec.move_number = parent
                    .move_number
                    .saturating_add(u32::from(parent_black && !null));
                rec.flags.set(PositionFlags::WHITE_TO_MOVE, parent_black);
                rec.flags.set(
                    PositionFlags::VIRTUAL_MAINLINE,
                    parent.flags.contains(PositionFlags::VIRTUAL_MAINLINE)
                        && (parent_black || child_index == 0),
                );
                rec.board = parent.board;
                apply_move(&mut rec.board, parent.turn(), mv);
                if hashes {
                    rec.material = if mv.capture().is_some() || mv.promotion().is_some() {
                        MaterialSignature::of(&rec.board.to_board()?)
                    } else {
                        parent.material
                    };
                    rec.zobrist = crate::replay::zobrist_after(parent, rec);
                }
            }
            rec.flags.set(PositionFlags::MAINLINE, rec.depth == 0);
            rec.flags.set(PositionFlags::VARIATION, rec.depth > 0);
        }
        for (i, rec) in positions.iter_mut().enumerate() {
            rec.children = next_child[i];
            rec.flags.set(PositionFlags::TERMINAL, rec.children == 0);
        }
        Some(positions)
    }

    /// The block's comments and NAGs (positions block-local).
    pub fn notes(&self) -> Option<(Vec<CommentRef>, Vec<NagRef>)> {
        let mut r = In {
            buf: self.raw,
            at: self.notes_at,
        };
        let cpos = r.col(4)?;
        let cplace = r.col(1)?;
        let cstart = r.col(4)?;
        let clen = r.col(4)?;
        let comments = (0..cpos.len())
            .map(|i| {
                Some(CommentRef {
                    position: *cpos.get(i)? as u32,
                    placement: if *cplace.get(i)? == 1 {
                        CommentPlacement::Before
                    } else {
                        CommentPlacement::After
                    },
                    start: *cstart.get(i)? as u32,
                    len: *clen.get(i)? as u32,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let npos = r.col(4)?;
        let nval = r.col(1)?;
        let nags = npos
            .iter()
            .zip(&nval)
            .map(|(&p, &v)| NagRef {
                position: p as u32,
                nag: v as u8,
            })
            .collect();
        Some((comments, nags))
    }
}

/// The flags of each combination of the four stored bits.
const STORED_FLAG_SETS: [PositionFlags; 16] = {
    let mut sets = [PositionFlags(0); 16];
    let mut bits = 0;
    while bits < 16 {
        let mut f = 0;
        let mut k = 0;
        while k < STORED_FLAGS.len() {
            if bits >> k & 1 == 1 {
                f |= STORED_FLAGS[k].0;
            }
            k += 1;
        }
        sets[bits] = PositionFlags(f);
        bits += 1;
    }
    sets
};

/// Flags that cannot be derived from the tree and are stored (one bit each, in this order).
const STORED_FLAGS: [PositionFlags; 4] = [
    PositionFlags::CHECK,
    PositionFlags::MATE,
    PositionFlags::STALEMATE,
    PositionFlags::TRUNCATED,
];

fn stored_flags(f: PositionFlags) -> u8 {
    STORED_FLAGS.iter().enumerate().fold(0, |acc, (bit, flag)| {
        acc | (u8::from(f.contains(*flag)) << bit)
    })
}

/// Castling rooks always stand on their own back rank: one byte of files per colour.
fn castling_to_u16(b: Bitboard) -> u16 {
    ((b.0 & 0xff) | ((b.0 >> 56) << 8)) as u16
}

fn castling_from_u16(v: u16) -> Bitboard {
    Bitboard(u64::from(v & 0xff) | (u64::from(v >> 8) << 56))
}

thread_local! {
    /// One compression context per thread and level: creating a context per call costs an
    /// allocation and a table reset, which showed up in ingest profiles.
    static COMPRESSORS: std::cell::RefCell<Vec<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// zstd-compresses `data` at `level`, reusing this thread's context for that level.
///
/// The output is made in a per-thread buffer of the worst-case size and copied out at its real
/// size: a fresh worst-case buffer per call (what `Compressor::compress` does) made the kernel
/// zero new pages for every batch, which cost more than a fifth of the parser threads' time on
/// comment-heavy input.
pub fn compress(data: &[u8], level: i32) -> Vec<u8> {
    COMPRESSORS.with(|cell| {
        let mut list = cell.borrow_mut();
        if !list.iter().any(|(l, _)| *l == level) {
            match zstd::bulk::Compressor::new(level) {
                Ok(c) => list.push((level, c)),
                Err(_) => return zstd::bulk::compress(data, level).unwrap_or_default(),
            }
        }
        let Some((_, c)) = list.iter_mut().find(|(l, _)| *l == level) else {
            return zstd::bulk::compress(data, level).unwrap_or_default();
        };
        in_scratch(data.len(), |out| c.compress_to_buffer(data, out).is_ok())
            .unwrap_or_else(|| zstd::bulk::compress(data, level).unwrap_or_default())
    })
}

/// Runs `fill` on this thread's output buffer, emptied and with room for the compressed form of
/// `len` bytes, and copies out what it wrote (`None` if it failed): see [`compress`] for why
/// the buffer is kept.
pub(crate) fn in_scratch(len: usize, fill: impl FnOnce(&mut Vec<u8>) -> bool) -> Option<Vec<u8>> {
    OUT_SCRATCH.with(|out| {
        let mut out = out.try_borrow_mut().ok()?;
        out.clear();
        out.reserve(zstd::zstd_safe::compress_bound(len));
        fill(&mut out).then(|| out.as_slice().to_vec())
    })
}

thread_local! {
    /// Per-thread compression output buffer (see [`compress`]).
    static OUT_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}
