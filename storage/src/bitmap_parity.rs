//! The side-to-move bitmap (`wtm`) stored as its difference from the position ids' parity.
//!
//! Why: along a line of a game tree numbered in pre-order, each next position is the next id
//! and the other side to move, so `wtm` as runs is one run per white-to-move position: half a
//! run per position, more than any other bitmap. Finding, grouping and packing those runs
//! was a large part of writing the flags, and applying them made every query that names the
//! side to move slow on a big database (`btm mate` read three million runs per segment of
//! six million positions). `wtm(id) XOR (id is odd)` (the *parity bitmap*) is constant along
//! a line and changes only where the pre-order jumps: at a game's first position and where a
//! variation starts or ends. It takes a few runs per game.
//!
//! A segment stores the parity bitmap's runs under the `wtm` key in a blob tagged
//! [`PARITY`](crate::bitmap_pack::PARITY); a reader rebuilds `wtm` from it a 64-bit word at a
//! time (within a word the bits of odd ids are the fixed pattern [`ODD_IDS`]) and hands it on
//! in roaring's format, so every reader of bitmaps reads it as before.
//!
//! Layout: the tag byte, then varints: the cardinality of `wtm` (what size estimates read, as
//! for packed blobs), the number of positions of the segment, then the parity runs as a
//! packed blob of their own.

use roaring::RoaringBitmap;

use crate::bitmap_pack::{self, PARITY};

/// The bits of the odd ids of a word whose first id is even (every word's is).
pub const ODD_IDS: u64 = 0xAAAA_AAAA_AAAA_AAAA;

/// The parity bit to store for position `id` given its side to move: `wtm XOR (id odd)`.
pub const fn parity_bit(white_to_move: bool, id: u32) -> bool {
    white_to_move ^ (id & 1 == 1)
}

/// The stored form of the `wtm` bitmap of a segment of `positions` positions whose parity
/// bitmap has `parity` (sorted, disjoint, half-open runs inside `0..positions`), or `None`
/// if the runs are not that.
pub fn store(parity: &[(u32, u32)], positions: u32) -> Option<Vec<u8>> {
    let words = words(parity, positions)?;
    let card: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
    let mut out = vec![PARITY];
    bitmap_pack::write_varint(&mut out, card);
    bitmap_pack::write_varint(&mut out, u64::from(positions));
    out.extend_from_slice(&bitmap_pack::pack(parity)?);
    Some(out)
}

/// The `wtm` bitmap of a [`PARITY`] blob in roaring's portable format, or `None` if the blob
/// is damaged (its runs out of order or past the segment, or its cardinality not theirs).
pub fn roaring_bytes(blob: &[u8]) -> Option<Vec<u8>> {
    Some(crate::roaring_runs::serialize_words(&checked_words(blob)?))
}

/// The members of `candidates` in the `wtm` bitmap of a [`PARITY`] blob, as single-position
/// runs: each looked up in the parity runs, of which only the chunks near a candidate are
/// decoded (a few positions tested against the side to move read no bitmap whole). `None` if
/// the blob is damaged.
pub fn members_of(blob: &[u8], candidates: &RoaringBitmap) -> Option<Vec<(u32, u32)>> {
    let (_, positions, packed) = parts(blob)?;
    let parity = bitmap_pack::runs_near(packed, candidates)?;
    let mut at = 0usize;
    let mut out = Vec::new();
    for v in candidates.iter().take_while(|&v| v < positions) {
        at += parity[at..].partition_point(|&(_, e)| e <= v);
        let in_parity = parity.get(at).is_some_and(|&(s, _)| s <= v);
        // The rule is its own inverse: `wtm` is the parity bit of the parity bit.
        if parity_bit(in_parity, v) {
            out.push((v, v + 1));
        }
    }
    Some(out)
}

/// The header's cardinality and `wtm`'s words, checked against each other.
fn checked_words(blob: &[u8]) -> Option<Vec<u64>> {
    let (card, positions, packed) = parts(blob)?;
    let parity = bitmap_pack::runs(packed)?;
    let words = words(&parity, positions)?;
    let have: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
    (have == card).then_some(words)
}

/// A [`PARITY`] blob's cardinality, number of positions and packed parity runs.
fn parts(blob: &[u8]) -> Option<(u64, u32, &[u8])> {
    if blob.first() != Some(&PARITY) {
        return None;
    }
    let mut at = 1;
    let card = bitmap_pack::read_varint(blob, &mut at)?;
    let positions = u32::try_from(bitmap_pack::read_varint(blob, &mut at)?).ok()?;
    // The nested blob is packed: a parity blob inside would recurse.
    let packed = blob.get(at..)?;
    (bitmap_pack::is_packed(packed) && packed.first() != Some(&PARITY))
        .then_some((card, positions, packed))
}

/// The words of `wtm` over `0..positions` given its parity runs: the odd ids' pattern with the
/// parity runs' bits flipped. `None` if the runs are out of order or reach past `positions`.
fn words(parity: &[(u32, u32)], positions: u32) -> Option<Vec<u64>> {
    let n = (positions as usize).div_ceil(64);
    let mut words = vec![ODD_IDS; n];
    let mut end = 0u32;
    for &(s, e) in parity {
        if s < end || e <= s || e > positions {
            return None;
        }
        flip(&mut words, s as usize, e as usize);
        end = e;
    }
    let tail = positions % 64;
    if let (Some(last), true) = (words.last_mut(), tail != 0) {
        *last &= (1u64 << tail) - 1;
    }
    Some(words)
}

/// Flips bits `from..to` (`from < to`, inside `words`).
fn flip(words: &mut [u64], from: usize, to: usize) {
    let (first, last) = (from / 64, (to - 1) / 64);
    let head = !0u64 << (from % 64);
    let tail = !0u64 >> (63 - (to - 1) % 64);
    if first == last {
        words[first] ^= head & tail;
        return;
    }
    words[first] ^= head;
    for w in &mut words[first + 1..last] {
        *w = !*w;
    }
    words[last] ^= tail;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The parity runs of a side-to-move sequence, as the run finder makes them.
    fn parity_runs(wtm: &[bool]) -> Vec<(u32, u32)> {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for (id, &w) in (0u32..).zip(wtm) {
            if parity_bit(w, id) {
                match runs.last_mut() {
                    Some(last) if last.1 == id => last.1 = id + 1,
                    _ => runs.push((id, id + 1)),
                }
            }
        }
        runs
    }

    proptest! {
        /// Stored as parity runs, `wtm` reads back as the same set, as roaring bytes and by
        /// lookups (lines alternate sides and jump anywhere, as games and variations do).
        #[test]
        fn side_to_move_reads_back(lines in proptest::collection::vec((any::<bool>(), 1usize..150), 0..40)) {
            let wtm: Vec<bool> = lines
                .iter()
                .flat_map(|&(white, len)| (0..len).map(move |i| white ^ (i % 2 == 1)))
                .collect();
            let n = wtm.len() as u32;
            let want: RoaringBitmap = (0u32..).zip(&wtm).filter(|(_, w)| **w).map(|(i, _)| i).collect();
            let blob = store(&parity_runs(&wtm), n).unwrap();
            prop_assert_eq!(bitmap_pack::packed_len(&blob), Some(want.len()));
            let got = RoaringBitmap::deserialize_from(&roaring_bytes(&blob).unwrap()[..]).unwrap();
            prop_assert_eq!(&got, &want);
            // Looked up a few at a time, as a test of a few positions reads it.
            let some: RoaringBitmap = (0..n + 3).filter(|v| v % 3 == 0).collect();
            let members: RoaringBitmap = members_of(&blob, &some).unwrap().into_iter().map(|(s, _)| s).collect();
            prop_assert_eq!(&members, &(&want & &some));
        }

        /// A damaged blob reads as damaged or as some bitmap within the segment, never a panic.
        #[test]
        fn damaged_blobs_are_refused(flip_at in 0usize..64, bits in 1u8..255) {
            let wtm: Vec<bool> = (0..300).map(|i| (i / 7) % 3 == 0).collect();
            let mut blob = store(&parity_runs(&wtm), 300).unwrap();
            let at = flip_at % blob.len();
            blob[at] ^= bits;
            if let Some(bytes) = roaring_bytes(&blob) {
                let got = RoaringBitmap::deserialize_from(&bytes[..]).unwrap();
                prop_assert!(got.max().is_none_or(|m| m < 300));
            }
            let _ = members_of(&blob, &(0..400).collect());
        }
    }

    #[test]
    fn runs_out_of_the_segment_are_refused() {
        assert!(store(&[(3, 9)], 8).is_none());
        assert!(store(&[(3, 5), (4, 6)], 8).is_none());
        assert!(store(&[(0, 64), (65, 130)], 200).is_some());
    }
}
