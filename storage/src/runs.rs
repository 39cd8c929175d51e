//! The bitmap runs of one batch of games, found in a parser thread and grouped by bitmap.
//!
//! Positions in pre-order keep a piece on a square for many consecutive ids, so every position
//! bitmap is a list of runs. A batch finds its runs by comparing each position with the one before
//! it (only the two to four piece bitboards a move changes are looked at) and groups them by
//! bitmap with a counting sort, so the segment writer never touches runs one by one: it keeps each
//! batch's groups as they are and concatenates them per bitmap when the segment is finished (see
//! [`crate::bitmap::BitmapBuilder`]). Walking runs one at a time in the single writer thread cost
//! more than finding them in the parallel parser threads.

use shakmaty::{Color, Role, Square};

use crate::bitmap::BitmapKey;
use crate::schema::{Bitboards, PositionRecord};

/// Piece-square bitmaps (12 pieces × 64 squares) followed by the 16 flag bitmaps: the bitmaps that
/// get nearly every run, numbered densely.
pub const DENSE_SLOTS: usize = 12 * 64 + 16;

const FLAG_SLOT: usize = 12 * 64;

/// The bitmap key of a dense slot (`slot < DENSE_SLOTS`).
///
/// ```
/// use cqldb_storage::BitmapKey;
/// use cqldb_storage::runs::slot_key;
/// use shakmaty::{Color, Role, Square};
/// assert_eq!(slot_key(64 + 12), BitmapKey::Piece(Color::White, Role::Knight, Square::E2).to_u64());
/// ```
pub fn slot_key(slot: usize) -> u64 {
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
        FLAT.with(|cell| {
            let mut flat = cell.borrow_mut();
            flat.clear();
            let mut material = Vec::new();
            find_runs(games, &mut flat, &mut material);
            // Counting sort by slot; runs of one slot keep their (ascending) order.
            let mut offsets = vec![0u32; DENSE_SLOTS + 1];
            for &(slot, ..) in flat.iter() {
                offsets[slot as usize + 1] += 1;
            }
            for s in 0..DENSE_SLOTS {
                offsets[s + 1] += offsets[s];
            }
            let mut next = offsets.clone();
            let mut dense = vec![(0u32, 0u32); flat.len()];
            for &(slot, start, end) in flat.iter() {
                let at = &mut next[slot as usize];
                dense[*at as usize] = (start, end);
                *at += 1;
            }
            material.sort_by_key(|&(key, start, _)| (key, start));
            Self {
                offsets,
                dense,
                material,
            }
        })
    }
}

thread_local! {
    /// Reused buffer of (slot, start, end) before grouping.
    static FLAT: std::cell::RefCell<Vec<(u16, u32, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The twelve piece bitboards (index colour * 6 + role - 1, white first) of a placement.
fn piece_boards(b: &Bitboards) -> [u64; 12] {
    let mut out = [0u64; 12];
    for (i, bb) in out.iter_mut().enumerate() {
        *bb = b.0[i / 6] & b.0[2 + i % 6];
    }
    out
}

fn find_runs(
    games: &[Vec<PositionRecord>],
    flat: &mut Vec<(u16, u32, u32)>,
    material_runs: &mut Vec<(u64, u32, u32)>,
) {
    let n: usize = games.iter().map(Vec::len).sum();
    flat.reserve(n * 3);
    // run_start[piece * 64 + square]: where the current run of that piece on that square began.
    let mut run_start = [0u32; 12 * 64];
    let mut prev = [0u64; 12];
    let mut flag_start = [0u32; 16];
    let mut prev_flags = 0u16;
    let mut material = (0u32, None);
    let end = n as u32;
    for (id, rec) in games.iter().flatten().enumerate() {
        let id = id as u32;
        let now = piece_boards(&rec.board);
        for (piece, (&old, &new)) in prev.iter().zip(now.iter()).enumerate() {
            let diff = old ^ new;
            if diff == 0 {
                continue;
            }
            let mut gone = old & diff;
            while gone != 0 {
                let slot = piece * 64 + gone.trailing_zeros() as usize;
                gone &= gone - 1;
                flat.push((slot as u16, run_start[slot], id));
            }
            let mut came = new & diff;
            while came != 0 {
                let slot = piece * 64 + came.trailing_zeros() as usize;
                came &= came - 1;
                run_start[slot] = id;
            }
        }
        prev = now;
        let flags = rec.flags.0;
        let mut changed = flags ^ prev_flags;
        while changed != 0 {
            let bit = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            if flags >> bit & 1 == 1 {
                flag_start[bit] = id;
            } else {
                flat.push(((FLAG_SLOT + bit) as u16, flag_start[bit], id));
            }
        }
        prev_flags = flags;
        if material.1 != Some(rec.material) {
            if let Some(m) = material.1 {
                material_runs.push((BitmapKey::Material(m).to_u64(), material.0, id));
            }
            material = (id, Some(rec.material));
        }
    }
    for (piece, &bb) in prev.iter().enumerate() {
        let mut left = bb;
        while left != 0 {
            let slot = piece * 64 + left.trailing_zeros() as usize;
            left &= left - 1;
            flat.push((slot as u16, run_start[slot], end));
        }
    }
    for (bit, &start) in flag_start.iter().enumerate() {
        if prev_flags >> bit & 1 == 1 {
            flat.push(((FLAG_SLOT + bit) as u16, start, end));
        }
    }
    if let Some(m) = material.1 {
        material_runs.push((BitmapKey::Material(m).to_u64(), material.0, end));
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
