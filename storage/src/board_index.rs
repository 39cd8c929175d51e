//! The board index of a segment: for a piece placement too rare in the segment to have a board
//! bitmap of its own, the few stretches of the segment's positions that may hold it.
//!
//! Why: an exact `fen` of such a placement is found by intersecting its pieces' bitmaps, and
//! where it shares most of its pieces with common placements (a sideline a few moves into an
//! opening, where every other piece is still on its first square) the running intersection
//! stays large for several dense bitmaps before it shrinks: 6.7 ms on the 256k-game database and
//! 26 ms on a million synthetic games, against well under a millisecond for a placement found in
//! a board bitmap. Narrowed first to the stretches this index names, the same intersection reads
//! a few containers of each bitmap.
//!
//! What is in it: every position whose placement has no board bitmap is an entry (its
//! placement's bucket, its stretch), duplicates dropped. A placement's positions are then all in
//! the stretches listed under its bucket; other placements share the bucket, so the stretches
//! are candidates, decided by the pieces' bitmaps.
//!
//! Layout: the buckets are cut into parts of at most [`PART_BUCKETS`], each stored as one blob
//! under [`BitmapKey::BoardIndex`] (its part number) in the segment's bitmap table, so that a
//! lookup reads and checksums a few kilobytes rather than the whole index, and a segment written
//! before the index reads as before: without one. A part, little-endian:
//! - byte 0: the format, [`FORMAT`]; byte 1: log2 of the stretch length; byte 2: log2 of the
//!   segment's number of buckets (at least 6); byte 3: log2 of the buckets in a part;
//! - a `u32`: the number of entries in the part;
//! - a byte per bucket of the part: its number of entries (at most 255: a segment has at most
//!   [`MAX_STRETCHES`] stretches);
//! - a `u32` per group of 64 buckets: the part's entries before the group;
//! - the entries, bucket after bucket: each a stretch number (a byte), ascending in its bucket.
//!
//! A position `p` whose placement has the board key `k` ([`BitmapKey::board`]'s value) is in
//! bucket `b = k & (buckets - 1)`, part `b >> part_bits`, and stretch `p >> shift`.
//!
//! [`BitmapKey::BoardIndex`]: crate::BitmapKey::BoardIndex
//! [`BitmapKey::board`]: crate::BitmapKey::board

use fixedbitset::FixedBitSet;
use roaring::RoaringBitmap;

/// The layout version in byte 0 of each part.
pub const FORMAT: u8 = 1;

/// A segment is cut into at most this many stretches: a stretch number is a byte, and a bucket
/// lists each stretch at most once, so its count is a byte too.
pub const MAX_STRETCHES: usize = 255;

/// Buckets in a part: about five kilobytes of counts and entries, what a lookup reads.
pub const PART_BUCKETS: usize = 1024;

/// Buckets per group with a stored offset: a lookup adds at most this many counts.
const GROUP: usize = 64;

/// About this many entries share a bucket: more buckets would cost a byte each for fewer
/// candidate stretches per lookup (a placement's own stretches are usually one).
const ENTRIES_PER_BUCKET: usize = 4;

const HEADER: usize = 8;

/// The board index of a segment whose position `p` has the board key `boards[p]`, leaving out
/// the positions in `covered` (those whose placement has a board bitmap): its parts, in order.
pub fn build(boards: &[u64], covered: &FixedBitSet) -> Vec<Vec<u8>> {
    let shift = stretch_shift(boards.len());
    let uncovered = boards.len() - covered.count_ones(..).min(boards.len());
    let bucket_bits = (uncovered / ENTRIES_PER_BUCKET)
        .next_power_of_two()
        .trailing_zeros()
        .clamp(GROUP.trailing_zeros(), 24);
    let buckets = 1usize << bucket_bits;
    let part_bits = bucket_bits.min(PART_BUCKETS.trailing_zeros());
    let bucket = |key: u64| (key as usize) & (buckets - 1);
    let is_entry = |p: usize| !covered.contains(p);

    // A counting sort by bucket: positions are visited in order, so each bucket's stretches come
    // out ascending and its duplicates adjacent.
    let mut starts = vec![0u32; buckets + 1];
    for (p, &key) in boards.iter().enumerate() {
        if is_entry(p) {
            starts[bucket(key) + 1] += 1;
        }
    }
    for b in 0..buckets {
        starts[b + 1] += starts[b];
    }
    let mut next = starts.clone();
    let mut sorted = vec![0u8; uncovered];
    for (p, &key) in boards.iter().enumerate() {
        if is_entry(p) {
            let at = &mut next[bucket(key)];
            // At most MAX_STRETCHES stretches: the number fits a byte.
            sorted[*at as usize] = (p >> shift) as u8;
            *at += 1;
        }
    }

    let part_len = 1usize << part_bits;
    (0..buckets / part_len)
        .map(|part| {
            let mut counts = vec![0u8; part_len];
            let mut entries: Vec<u8> = Vec::new();
            let mut groups = Vec::with_capacity(part_len / GROUP);
            for (i, count) in counts.iter_mut().enumerate() {
                if i % GROUP == 0 {
                    groups.push(entries.len() as u32);
                }
                let b = part * part_len + i;
                let first = entries.len();
                for &s in &sorted[starts[b] as usize..starts[b + 1] as usize] {
                    if entries.len() == first || entries.last() != Some(&s) {
                        entries.push(s);
                    }
                }
                *count = (entries.len() - first) as u8;
            }
            let mut out = Vec::with_capacity(HEADER + part_len + 4 * groups.len() + entries.len());
            out.extend_from_slice(&[FORMAT, shift as u8, bucket_bits as u8, part_bits as u8]);
            out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
            out.extend_from_slice(&counts);
            for g in groups {
                out.extend_from_slice(&g.to_le_bytes());
            }
            out.extend_from_slice(&entries);
            out
        })
        .collect()
}

/// log2 of the stretch length for a segment of `positions`: the shortest power of two that cuts
/// it into at most [`MAX_STRETCHES`] stretches.
fn stretch_shift(positions: usize) -> u32 {
    (0..usize::BITS)
        .find(|&s| positions.div_ceil(1 << s) <= MAX_STRETCHES)
        .unwrap_or(usize::BITS - 1)
}

/// Which part of a segment's board index lists the placements with board key `key`, given any
/// one part of it (every part records the segment's bucket count), or `None` if `any_part` is
/// not a part of this format.
pub fn part_of(any_part: &[u8], key: u64) -> Option<u32> {
    let head = any_part.get(..HEADER)?;
    let (bucket_bits, part_bits) = (u32::from(head[2]), u32::from(head[3]));
    if head[0] != FORMAT || !(6..=24).contains(&bucket_bits) || part_bits > bucket_bits {
        return None;
    }
    Some(((key & ((1 << bucket_bits) - 1)) >> part_bits) as u32)
}

/// A stored part of a board index, read in place.
#[derive(Copy, Clone, Debug)]
pub struct BoardIndexPart<'a> {
    shift: u32,
    counts: &'a [u8],
    groups: &'a [u8],
    entries: &'a [u8],
}

impl<'a> BoardIndexPart<'a> {
    /// Reads a stored part, or `None` if `blob` is not one of this format (its pieces' sizes
    /// are checked here, so a lookup stays within them).
    pub fn parse(blob: &'a [u8]) -> Option<Self> {
        let head = blob.get(..HEADER)?;
        let (shift, bucket_bits, part_bits) =
            (u32::from(head[1]), u32::from(head[2]), u32::from(head[3]));
        let valid = head[0] == FORMAT
            && shift < 32
            && (6..=24).contains(&bucket_bits)
            && (6..=bucket_bits).contains(&part_bits);
        if !valid {
            return None;
        }
        let buckets = 1usize << part_bits;
        let n = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        let counts = blob.get(HEADER..HEADER + buckets)?;
        let groups_end = HEADER + buckets + 4 * (buckets / GROUP);
        let groups = blob.get(HEADER + buckets..groups_end)?;
        let entries = blob.get(groups_end..)?;
        (entries.len() == n).then_some(Self {
            shift,
            counts,
            groups,
            entries,
        })
    }

    /// The stretches that may hold a placement with board key `key` (one of this part's), or
    /// `None` if the stored offsets point outside the entries (a damaged index).
    pub fn stretches(&self, key: u64) -> Option<&'a [u8]> {
        let b = (key as usize) & (self.counts.len() - 1);
        let g = b / GROUP;
        let at = self.groups.get(4 * g..4 * g + 4)?;
        let before: usize = self.counts[g * GROUP..b]
            .iter()
            .map(|&c| usize::from(c))
            .sum();
        let first =
            (u32::from_le_bytes([at[0], at[1], at[2], at[3]]) as usize).checked_add(before)?;
        self.entries
            .get(first..first.checked_add(usize::from(self.counts[b]))?)
    }

    /// The positions of the stretches that may hold a placement with board key `key`, in a
    /// segment of `universe` positions (`None`: a damaged index).
    pub fn candidates(&self, key: u64, universe: u32) -> Option<RoaringBitmap> {
        let mut out = RoaringBitmap::new();
        for &s in self.stretches(key)? {
            let from = u64::from(s) << self.shift;
            let to = ((u64::from(s) + 1) << self.shift).min(u64::from(universe));
            if from < to {
                // Both ends are within the segment's u32 position ids.
                out.insert_range(from as u32..to as u32);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stretches_cut_a_segment_into_at_most_255() {
        for n in [0, 1, 254, 255, 256, 510, 511, 2_000_000, 1 << 31] {
            let s = stretch_shift(n);
            assert!(n.div_ceil(1 << s) <= MAX_STRETCHES, "{n}");
            assert!(s == 0 || n.div_ceil(1 << (s - 1)) > MAX_STRETCHES, "{n}");
        }
    }

    /// The candidates of `key` from the parts of an index.
    fn lookup(parts: &[Vec<u8>], key: u64, universe: u32) -> Option<RoaringBitmap> {
        let part = part_of(&parts[0], key)? as usize;
        BoardIndexPart::parse(parts.get(part)?)?.candidates(key, universe)
    }

    #[test]
    fn damaged_indexes_are_refused() {
        let boards: Vec<u64> = (0..1000).map(|i| i * 7919).collect();
        let parts = build(&boards, &FixedBitSet::with_capacity(boards.len()));
        let blob = &parts[0];
        assert!(BoardIndexPart::parse(blob).is_some());
        assert!(BoardIndexPart::parse(&blob[..blob.len() - 1]).is_none());
        assert!(BoardIndexPart::parse(&[]).is_none());
        let mut other = blob.clone();
        other[0] = FORMAT + 1;
        assert!(BoardIndexPart::parse(&other).is_none());
        assert!(part_of(&other, 0).is_none());
        // Offsets past the entries: no answer rather than a wrong one.
        let mut bad = blob.clone();
        let groups = HEADER + (1 << bad[3]);
        bad[groups..groups + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let idx = BoardIndexPart::parse(&bad).expect("sizes are intact");
        assert!(idx.stretches(0).is_none());
    }

    #[test]
    fn a_large_segment_is_cut_into_parts() {
        let boards: Vec<u64> = (0..40_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let parts = build(&boards, &FixedBitSet::with_capacity(boards.len()));
        // 10,000 buckets of four, rounded up to a power of two.
        assert_eq!(parts.len(), 16_384 / PART_BUCKETS);
        for (p, &key) in boards.iter().enumerate() {
            let c = lookup(&parts, key, boards.len() as u32).expect("intact");
            assert!(c.contains(p as u32));
            // A few stretches of 256 positions, not the segment.
            assert!(c.len() <= 16 * 256, "{}", c.len());
        }
    }

    proptest! {
        /// Every position not covered by a board bitmap is among its placement's candidates,
        /// and each bucket lists a stretch once.
        #[test]
        fn every_uncovered_position_is_a_candidate_of_its_placement(
            keys in proptest::collection::vec(0u64..5_000, 1..3_000),
            kinds in 1u64..400,
            covered_every in 1usize..9,
            salt in any::<u64>(),
        ) {
            // Few distinct placements (`kinds`), so buckets and stretches repeat.
            let boards: Vec<u64> = keys.iter().map(|k| (k % kinds).wrapping_mul(salt | 1)).collect();
            let mut covered = FixedBitSet::with_capacity(boards.len());
            for p in (0..boards.len()).step_by(covered_every).skip(1) {
                covered.insert(p);
            }
            let parts = build(&boards, &covered);
            let universe = boards.len() as u32;
            for (p, &key) in boards.iter().enumerate() {
                let c = lookup(&parts, key, universe).expect("intact");
                prop_assert!(covered.contains(p) || c.contains(p as u32), "position {}", p);
                prop_assert!(c.max().is_none_or(|m| m < universe));
                let part = &parts[part_of(&parts[0], key).expect("ours") as usize];
                let s = BoardIndexPart::parse(part).expect("ours").stretches(key).expect("intact");
                prop_assert!(s.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }
}
