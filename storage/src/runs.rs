//! The bitmap runs of one batch of games, found in a parser thread and grouped by bitmap.
//!
//! Positions in pre-order keep a piece on a square for many consecutive ids, so every position
//! bitmap is a list of runs. A batch finds its runs by comparing each position with the one before
//! it (only the two to four piece bitboards a move changes are looked at) and groups them by
//! bitmap with a counting sort, so the segment writer never touches runs one by one: it keeps each
//! batch's groups as they are and concatenates them per bitmap when the segment is finished (see
//! [`crate::bitmap::BitmapBuilder`]). Walking runs one at a time in the single writer thread cost
//! more than finding them in the parallel parser threads.
//!
//! The side-to-move flag is the exception: its slot gets the runs of the parity bitmap
//! (`wtm XOR odd id`, see [`crate::bitmap_parity`]), a few per game instead of one per
//! white-to-move position.

use shakmaty::{Color, Role, Square};

use crate::bitmap_key::BitmapKey;
use crate::bitmap_parity::parity_bit;
use crate::move_features::MoveFeature;
use crate::schema::{MaterialSignature, PositionFlags, PositionRecord};

/// Piece-square bitmaps (12 pieces × 64 squares), the 16 flag bitmaps and the 64 move-feature
/// bitmaps (see [`crate::move_features`]): the bitmaps that get nearly every run, numbered
/// densely.
pub const DENSE_SLOTS: usize = 12 * 64 + 16 + 64;

const FLAG_SLOT: usize = 12 * 64;
const MOVE_SLOT: usize = FLAG_SLOT + 16;

/// The side-to-move flag's bit in a row's flags.
const SIDE_TO_MOVE: u64 = PositionFlags::WHITE_TO_MOVE.0 as u64;

/// The dense slot of the side-to-move flag, whose runs are those of its parity bitmap
/// (`bitmap_parity.rs`).
pub const SIDE_TO_MOVE_SLOT: usize = FLAG_SLOT + SIDE_TO_MOVE.trailing_zeros() as usize;

/// The bitmap key of a dense slot (`slot < DENSE_SLOTS`).
///
/// ```
/// use cqldb_storage::BitmapKey;
/// use cqldb_storage::runs::slot_key;
/// use shakmaty::{Color, Role, Square};
/// assert_eq!(slot_key(64 + 12), BitmapKey::Piece(Color::White, Role::Knight, Square::E2).to_u64());
/// ```
pub fn slot_key(slot: usize) -> u64 {
    if slot >= MOVE_SLOT {
        return BitmapKey::Move((slot - MOVE_SLOT) as u8).to_u64();
    }
    if slot >= FLAG_SLOT {
        return BitmapKey::Flag((slot - FLAG_SLOT) as u8).to_u64();
    }
    let piece = slot / 64;
    let color = if piece < 6 {
        Color::White
    } else {
        Color::Black
    };
    BitmapKey::Piece(color, Role::ALL[piece % 6], Square::new((slot % 64) as u32)).to_u64()
}

/// A batch's runs over batch-local position ids, grouped by bitmap, ascending within a bitmap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchRuns {
    /// `offsets[s]..offsets[s + 1]` is dense slot `s`'s part of `dense`.
    offsets: Vec<u32>,
    /// Half-open runs of the dense slots, slot after slot.
    dense: Vec<(u32, u32)>,
    /// Material runs as (key, start, end), sorted by key, then start.
    material: Vec<(u64, u32, u32)>,
    /// Positions of the batch.
    positions: u32,
}

impl BatchRuns {
    /// The runs of dense slot `slot` (empty for a slot out of range).
    pub fn slot(&self, slot: usize) -> &[(u32, u32)] {
        match (self.offsets.get(slot), self.offsets.get(slot + 1)) {
            (Some(&a), Some(&b)) => &self.dense[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Material-signature runs as (key, start, end), sorted by key, then start.
    pub fn material(&self) -> &[(u64, u32, u32)] {
        &self.material
    }

    /// Number of positions in the batch.
    pub fn positions(&self) -> u32 {
        self.positions
    }

    /// Number of runs.
    pub fn len(&self) -> usize {
        self.dense.len() + self.material.len()
    }

    /// True when there are no runs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The runs of the positions of `games` numbered consecutively from 0.
    pub fn of(games: &[Vec<PositionRecord>]) -> Self {
        let mut finder = RunFinder::default();
        games.iter().for_each(|g| finder.push_game(g));
        finder.finish()
    }
}

/// The open runs of up to 64 bitmaps that are one bit of a per-position word (flags, move
/// features), numbered from dense slot `slot`.
struct BitRuns {
    slot: usize,
    /// Where the current run of each bit began.
    start: [u32; 64],
    /// The last row's bits.
    prev: u64,
}

impl BitRuns {
    fn new(slot: usize) -> Self {
        Self {
            slot,
            start: [0; 64],
            prev: 0,
        }
    }

    /// Row `id` has `bits`: runs open where a bit is set anew and close where one is cleared.
    fn update(&mut self, bits: u64, id: u32, flat: &mut Vec<(u16, u32, u32)>) {
        let mut changed = bits ^ self.prev;
        while changed != 0 {
            let bit = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            if bits >> bit & 1 == 1 {
                self.start[bit] = id;
            } else {
                flat.push(((self.slot + bit) as u16, self.start[bit], id));
            }
        }
        self.prev = bits;
    }

    /// Closes every open run at `end`.
    fn close(&self, end: u32, flat: &mut Vec<(u16, u32, u32)>) {
        let mut open = self.prev;
        while open != 0 {
            let bit = open.trailing_zeros() as usize;
            open &= open - 1;
            flat.push(((self.slot + bit) as u16, self.start[bit], end));
        }
    }
}

/// Finds a batch's runs one game at a time (while the game's rows are still in cache); the state
/// carries over from game to game, so a piece that stands on the same square at the end of one
/// game and the start of the next stays in one run. Reusable after [`RunFinder::finish`].
pub struct RunFinder {
    /// Position id of the next row.
    next: u32,
    /// `run_start[piece * 64 + square]`: where the current run of that piece on that square began.
    run_start: [u32; 12 * 64],
    /// The twelve piece bitboards (index colour * 6 + role - 1, white first) of the last row.
    prev: [u64; 12],
    /// The last row's eight raw bitboards (colours, then roles).
    raw: [u64; 8],
    /// The flag bitmaps' runs.
    flags: BitRuns,
    /// The move-feature bitmaps' runs: reaching features in the low half, leaving ones in the
    /// high half.
    moves: BitRuns,
    /// Per row of the current game: the features of the move reaching it.
    reached: Vec<u32>,
    /// Per row of the current game: the features of the moves leaving it.
    leaving: Vec<u32>,
    material: (u32, Option<MaterialSignature>),
    /// Runs as (slot, start, end) in the order found.
    flat: Vec<(u16, u32, u32)>,
    material_runs: Vec<(u64, u32, u32)>,
    /// Per-slot counters of the grouping sort.
    counts: Vec<u32>,
}

impl Default for RunFinder {
    fn default() -> Self {
        Self {
            next: 0,
            run_start: [0; 12 * 64],
            prev: [0; 12],
            raw: [0; 8],
            flags: BitRuns::new(FLAG_SLOT),
            moves: BitRuns::new(MOVE_SLOT),
            reached: Vec::new(),
            leaving: Vec::new(),
            material: (0, None),
            flat: Vec::new(),
            material_runs: Vec::new(),
            counts: Vec::new(),
        }
    }
}

impl RunFinder {
    /// Feeds the rows of the next game.
    pub fn push_game(&mut self, game: &[PositionRecord]) {
        // Each row's move features: of the move reaching it, and (filled from its children) of
        // the moves leaving it.
        self.reached.clear();
        self.reached
            .extend(game.iter().map(|r| MoveFeature::set_of(r.mv)));
        self.leaving.clear();
        self.leaving.resize(game.len(), 0);
        for (rec, &features) in game.iter().zip(&self.reached) {
            if let Some(l) = self.leaving.get_mut(rec.parent as usize) {
                *l |= features;
            }
        }
        for (row, rec) in game.iter().enumerate() {
            let id = self.next;
            self.next += 1;
            let b = &rec.board.0;
            let color_diff = (self.raw[0] ^ b[0]) | (self.raw[1] ^ b[1]);
            for role in 0..6 {
                // A piece board can change only where its role board or a colour board did.
                let role_board = b[2 + role];
                if (self.raw[2 + role] ^ role_board) | (color_diff & role_board) == 0 {
                    continue;
                }
                for (color, &color_board) in b[..2].iter().enumerate() {
                    let piece = color * 6 + role;
                    let (old, new) = (self.prev[piece], color_board & role_board);
                    let diff = old ^ new;
                    if diff == 0 {
                        continue;
                    }
                    self.prev[piece] = new;
                    let mut gone = old & diff;
                    while gone != 0 {
                        let slot = piece * 64 + gone.trailing_zeros() as usize;
                        gone &= gone - 1;
                        self.flat.push((slot as u16, self.run_start[slot], id));
                    }
                    let mut came = new & diff;
                    while came != 0 {
                        let slot = piece * 64 + came.trailing_zeros() as usize;
                        came &= came - 1;
                        self.run_start[slot] = id;
                    }
                }
            }
            self.raw = *b;
            // The side-to-move slot holds the parity bitmap (`bitmap_parity.rs`), over
            // batch-local ids: the segment's builder flips a batch that starts at an odd id.
            let white = rec.flags.contains(PositionFlags::WHITE_TO_MOVE);
            let parity = if parity_bit(white, id) {
                SIDE_TO_MOVE
            } else {
                0
            };
            let flags = (u64::from(rec.flags.0) & !SIDE_TO_MOVE) | parity;
            self.flags.update(flags, id, &mut self.flat);
            let moves = u64::from(self.reached[row] & MoveFeature::REACHED_KEPT)
                | u64::from(self.leaving[row]) << 32;
            self.moves.update(moves, id, &mut self.flat);
            if self.material.1 != Some(rec.material) {
                if let (start, Some(m)) = self.material {
                    self.material_runs
                        .push((BitmapKey::Material(m).to_u64(), start, id));
                }
                self.material = (id, Some(rec.material));
            }
        }
    }

    /// Closes every open run and returns the batch's runs grouped by bitmap; the finder is then
    /// ready for a new batch.
    pub fn finish(&mut self) -> BatchRuns {
        let end = self.next;
        for (piece, &bb) in self.prev.iter().enumerate() {
            let mut left = bb;
            while left != 0 {
                let slot = piece * 64 + left.trailing_zeros() as usize;
                left &= left - 1;
                self.flat.push((slot as u16, self.run_start[slot], end));
            }
        }
        self.flags.close(end, &mut self.flat);
        self.moves.close(end, &mut self.flat);
        if let (start, Some(m)) = self.material {
            self.material_runs
                .push((BitmapKey::Material(m).to_u64(), start, end));
        }
        // Counting sort by slot; runs of one slot keep their (ascending) order.
        let counts = &mut self.counts;
        counts.clear();
        counts.resize(DENSE_SLOTS + 1, 0);
        for &(slot, ..) in &self.flat {
            counts[slot as usize + 1] += 1;
        }
        for s in 0..DENSE_SLOTS {
            counts[s + 1] += counts[s];
        }
        let offsets = counts.clone();
        let mut dense = vec![(0u32, 0u32); self.flat.len()];
        for &(slot, start, end) in &self.flat {
            let at = &mut counts[slot as usize];
            dense[*at as usize] = (start, end);
            *at += 1;
        }
        let mut material = std::mem::take(&mut self.material_runs);
        material.sort_by_key(|&(key, start, _)| (key, start));
        self.flat.clear();
        self.next = 0;
        self.prev = [0; 12];
        self.raw = [0; 8];
        self.flags.prev = 0;
        self.moves.prev = 0;
        self.material = (0, None);
        BatchRuns {
            offsets,
            dense,
            material,
            positions: end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_name_distinct_keys() {
        let keys: std::collections::HashSet<u64> = (0..DENSE_SLOTS).map(slot_key).collect();
        assert_eq!(keys.len(), DENSE_SLOTS);
        assert_eq!(
            slot_key(FLAG_SLOT + 3),
            BitmapKey::Flag(3).to_u64(),
            "flags follow the pieces"
        );
        assert_eq!(
            slot_key(6 * 64 + 5 * 64 + 60),
            BitmapKey::Piece(Color::Black, Role::King, Square::E8).to_u64()
        );
    }
}
