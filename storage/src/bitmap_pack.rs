//! Packed bitmaps: a smaller stored form of a bitmap in roaring's portable format, unpacked to
//! the very same bytes when read.
//!
//! Why: a position bitmap is mostly runs (a piece stays on its square for a stretch of the
//! pre-order), and roaring spends four bytes on each (a 16-bit start and length). Written as
//! varint gaps and lengths, then zstd, the piece bitmaps of the large set take 0.48 of their
//! roaring bytes, material 0.57, the move features 0.42–0.56 (BENCHMARKS). Every structure the
//! planner reads keeps its meaning: a reader unpacks to roaring's bytes, byte for byte, and
//! reads those as before (lookups in the stored bytes, dense sets, whole decodes), so the
//! answers cannot change; [`crate::bitmap_cache`] keeps unpacked bitmaps that are read again.
//!
//! Bitmaps are packed from their runs as they are written ([`store_runs`]); one that would not
//! shrink is stored in roaring's format. The two forms are told apart by the first
//! byte: roaring's cookies start with 0x3A or 0x3B, a packed blob with [`VARINTS`] or
//! [`ZSTD`].
//!
//! Layout: the tag byte, then varints: the cardinality (so a size estimate needs no unpacking),
//! the run count and, after [`ZSTD`], the unpacked stream's length; then the stream (zstd
//! frame or as is). The stream holds per run `gap << 1 | long` (the gap from the previous run's
//! end less one, since runs do not touch; the first's from 0) and, when `long`, the run's
//! length minus two: a single value costs one varint.

use crate::bitmap::{RunScratch, serialize_runs_with};

/// Tag of a packed blob whose run stream is stored as is (small bitmaps: a zstd frame's own
/// header would eat the gain).
pub const VARINTS: u8 = 0x01;
/// Tag of a packed blob whose run stream is one zstd frame.
pub const ZSTD: u8 = 0x02;

/// zstd level of packed streams: level 1 already takes what there is (level 3 did no better
/// on piece bitmaps).
const LEVEL: i32 = 1;

/// Whether `blob` is in packed form (else it is roaring's, or not a bitmap at all).
pub fn is_packed(blob: &[u8]) -> bool {
    matches!(blob.first(), Some(&VARINTS | &ZSTD))
}

/// The cardinality recorded in a packed blob's header (`None` if it is not packed or cut
/// short). Like [`crate::bitmap_lookup::serialized_len`], an estimate: unchecked.
pub fn packed_len(blob: &[u8]) -> Option<u64> {
    if !is_packed(blob) {
        return None;
    }
    let mut at = 1;
    read_varint(blob, &mut at)
}

/// How a bitmap of `runs` (sorted, disjoint, non-touching, half-open) is stored: packed, or
/// in roaring's portable format when packing would not make it smaller. What every
/// bitmap writer calls instead of [`serialize_runs_with`]; [`unpack`] gives that function's
/// bytes back.
pub fn store_runs(runs: &[(u32, u32)], scratch: &mut RunScratch) -> Vec<u8> {
    let roaring = serialize_runs_with(runs, scratch);
    // Tiny bitmaps: nothing to win worth a branch on every read.
    if roaring.len() < 32 {
        return roaring;
    }
    match pack(runs) {
        Some(p) if p.len() < roaring.len() => p,
        _ => roaring,
    }
}

/// The packed form of `runs`.
fn pack(runs: &[(u32, u32)]) -> Option<Vec<u8>> {
    let card: u64 = runs.iter().map(|&(s, e)| u64::from(e - s)).sum();
    let mut stream = Vec::with_capacity(runs.len() * 2);
    // Runs after the first do not touch their predecessor: their gap is at least one.
    let mut end = 0u32;
    for (i, &(s, e)) in runs.iter().enumerate() {
        let long = e - s > 1;
        let gap = s.checked_sub(end)?.checked_sub(u32::from(i > 0))?;
        write_varint(&mut stream, (u64::from(gap) << 1) | u64::from(long));
        if long {
            write_varint(&mut stream, u64::from(e - s - 2));
        }
        end = e;
    }
    let mut out = Vec::with_capacity(stream.len() / 2 + 16);
    let header = |tag: u8, out: &mut Vec<u8>| {
        out.push(tag);
        write_varint(out, card);
        write_varint(out, runs.len() as u64);
    };
    let frame = (stream.len() >= 128)
        .then(|| crate::columns::compress(&stream, LEVEL))
        .filter(|z| !z.is_empty() && z.len() + 4 < stream.len() - stream.len() / 16);
    match frame {
        Some(z) => {
            header(ZSTD, &mut out);
            write_varint(&mut out, stream.len() as u64);
            out.extend_from_slice(&z);
        }
        None => {
            header(VARINTS, &mut out);
            out.extend_from_slice(&stream);
        }
    }
    Some(out)
}

/// The roaring bytes a packed blob was made from (`None` if it is damaged: a reader calls that
/// corrupt).
pub fn unpack(blob: &[u8], scratch: &mut RunScratch) -> Option<Vec<u8>> {
    Some(serialize_runs_with(&runs(blob)?, scratch))
}

/// Whether reading `blob` (packed) needs zstd: such blobs are worth keeping unpacked
/// (`bitmap_cache.rs`); the others decode faster than a lookup.
pub fn is_zstd(blob: &[u8]) -> bool {
    blob.first() == Some(&ZSTD)
}

/// The runs a packed blob holds (sorted, disjoint, non-touching, half-open), or `None` if it is
/// damaged. Every count in the header is checked against what the stream holds before it
/// sizes anything, so a damaged blob cannot make a large allocation.
pub fn runs(blob: &[u8]) -> Option<Vec<(u32, u32)>> {
    let tag = *blob.first()?;
    let mut at = 1;
    let card = read_varint(blob, &mut at)?;
    let count = read_varint(blob, &mut at)?;
    let unzipped;
    let stream = match tag {
        VARINTS => blob.get(at..)?,
        ZSTD => {
            let len = usize::try_from(read_varint(blob, &mut at)?).ok()?;
            // A run takes at most 10 bytes of stream (two 5-byte varints of 32-bit values).
            if u64::try_from(len).ok()? > count.checked_mul(10)? {
                return None;
            }
            let mut out = Vec::new();
            crate::columns::decompress_block_into(blob.get(at..)?, len, &mut out)?;
            unzipped = out;
            &unzipped[..]
        }
        _ => return None,
    };
    // Each run takes at least one byte of stream.
    if count > stream.len() as u64 {
        return None;
    }
    let mut runs = Vec::with_capacity(count as usize);
    let (mut pos, mut end, mut total) = (0usize, 0u64, 0u64);
    for i in 0..count {
        let word = read_varint(stream, &mut pos)?;
        let len = if word & 1 == 1 {
            read_varint(stream, &mut pos)?.checked_add(2)?
        } else {
            1
        };
        let start = end.checked_add(word >> 1)?.checked_add(u64::from(i > 0))?;
        end = start.checked_add(len)?;
        if end > 1 << 32 {
            return None;
        }
        total += len;
        runs.push((start as u32, end as u32));
    }
    if pos != stream.len() || total != card {
        return None;
    }
    // A run may end at 2^32 exactly: its end does not fit the u32 pairs of `serialize_runs`.
    if end == 1 << 32 {
        return None;
    }
    Some(runs)
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitmap::serialize_runs;
    use proptest::prelude::*;
    use roaring::RoaringBitmap;

    /// Sorted, disjoint, non-touching runs from (gap, length) pairs.
    fn runs_from(parts: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut end = 0u32;
        let mut runs = Vec::new();
        for (i, &(gap, len)) in parts.iter().enumerate() {
            let start = end + gap + u32::from(i > 0);
            runs.push((start, start + len + 1));
            end = start + len + 1;
        }
        runs
    }

    proptest! {
        #[test]
        fn unpacks_to_the_same_bytes(
            parts in proptest::collection::vec((0u32..5000, prop_oneof![Just(0u32), 0u32..3, 0u32..70_000]), 0..600),
        ) {
            let runs = runs_from(&parts);
            let roaring = serialize_runs(&runs);
            let mut scratch = RunScratch::default();
            let stored = store_runs(&runs, &mut scratch);
            if stored != roaring {
                prop_assert!(is_packed(&stored));
                prop_assert!(stored.len() < roaring.len());
                let want: u64 = runs.iter().map(|&(s, e)| u64::from(e - s)).sum();
                prop_assert_eq!(packed_len(&stored), Some(want));
                prop_assert_eq!(unpack(&stored, &mut scratch), Some(roaring.clone()));
            }
            prop_assert!(!is_packed(&roaring));
        }

        #[test]
        fn damaged_packed_blobs_are_refused_or_harmless(
            parts in proptest::collection::vec((0u32..300, 0u32..40), 10..400),
            at in 0usize..4096,
            flip in 1u8..=255,
            cut in 0usize..8,
        ) {
            let mut scratch = RunScratch::default();
            let mut packed = store_runs(&runs_from(&parts), &mut scratch);
            prop_assume!(is_packed(&packed));
            let i = at % packed.len();
            packed[i] ^= flip;
            packed.truncate(packed.len().saturating_sub(cut));
            // Never a panic; whatever unpacks is a well-formed bitmap (checksums catch
            // damage before real reads).
            if let Some(bytes) = unpack(&packed, &mut scratch) {
                prop_assert!(RoaringBitmap::deserialize_from(bytes.as_slice()).is_ok());
            }
        }
    }

    #[test]
    fn dense_bitsets_and_boundaries_round_trip() {
        // Every other value in a chunk: a bitset container; runs across chunk boundaries.
        let mut runs: Vec<(u32, u32)> = (0..20_000).map(|i| (2 * i, 2 * i + 1)).collect();
        runs.push((65_530, 131_080));
        runs.push((u32::MAX - 10, u32::MAX));
        let roaring = serialize_runs(&runs);
        let mut scratch = RunScratch::default();
        let packed = store_runs(&runs, &mut scratch);
        assert!(is_packed(&packed));
        assert_eq!(unpack(&packed, &mut scratch), Some(roaring));
    }
}
