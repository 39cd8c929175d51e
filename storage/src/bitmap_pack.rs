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
//! byte: roaring's cookies start with 0x3A or 0x3B, a packed blob with [`VARINTS`],
//! [`ZSTD`] or [`CHUNKS`]; the side-to-move bitmap's own form with [`PARITY`].
//!
//! Layout: the tag byte, then varints: the cardinality (so a size estimate needs no unpacking),
//! the run count and, after [`ZSTD`], the unpacked stream's length; then the stream (zstd
//! frame or as is). The stream holds per run `gap << 1 | long` (the gap from the previous run's
//! end less one, since runs do not touch; the first's from 0) and, when `long`, the run's
//! length minus two: a single value costs one varint.

use crate::roaring_runs::{RunScratch, serialize_runs_with, serialized_runs_len};

/// Tag of a packed blob whose run stream is stored as is (small bitmaps: a zstd frame's own
/// header would eat the gain).
pub const VARINTS: u8 = 0x01;
/// Tag of a packed blob whose run stream is one zstd frame.
pub const ZSTD: u8 = 0x02;

/// zstd level of packed streams: level 1 already takes what there is (level 3 did no better
/// on piece bitmaps).
const LEVEL: i32 = 1;

/// Tag of a packed blob cut into chunks of [`CHUNK_RUNS`] runs, each a packed blob of its own
/// (of [`VARINTS`] or [`ZSTD`]), behind an index of the value range each covers: a few
/// positions tested against a large bitmap unpack only the chunks they fall in, as roaring
/// reads only their containers. (The main line's bitmap, which nearly every query tests a
/// few positions against, is not packed at all: `bitmap.rs`.)
pub const CHUNKS: u8 = 0x03;

/// Tag of the side-to-move bitmap stored as its parity runs (`bitmap_parity.rs`).
pub const PARITY: u8 = 0x04;

/// Runs per chunk of a [`CHUNKS`] blob: a piece's bitmap in a segment of two million positions
/// holds a few thousand, so most bitmaps are one chunk (4,096 cost 0.06 bytes/position of
/// zstd's context on the large set).
#[cfg(not(test))]
const CHUNK_RUNS: usize = 16384;
/// Small in tests, so that their bitmaps of a few hundred runs are cut into chunks too.
#[cfg(test)]
const CHUNK_RUNS: usize = 64;

/// Whether `blob` is in packed form (else it is roaring's, or not a bitmap at all).
pub fn is_packed(blob: &[u8]) -> bool {
    matches!(blob.first(), Some(&VARINTS | &ZSTD | &CHUNKS | &PARITY))
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
    // Only measured: most bitmaps pack smaller and are never written in roaring's format.
    let roaring_len = serialized_runs_len(runs, scratch);
    // Tiny bitmaps: nothing to win worth a branch on every read.
    if roaring_len < 32 {
        return serialize_runs_with(runs, scratch);
    }
    match pack(runs) {
        Some(p) if p.len() < roaring_len => p,
        _ => serialize_runs_with(runs, scratch),
    }
}

/// The packed form of `runs`: one packed blob, or [`CHUNKS`] of them.
pub(crate) fn pack(runs: &[(u32, u32)]) -> Option<Vec<u8>> {
    if runs.len() <= CHUNK_RUNS {
        return pack_one(runs);
    }
    let card: u64 = runs.iter().map(|&(s, e)| u64::from(e - s)).sum();
    let chunks = runs
        .chunks(CHUNK_RUNS)
        .map(pack_one)
        .collect::<Option<Vec<_>>>()?;
    let mut out = vec![CHUNKS];
    write_varint(&mut out, card);
    write_varint(&mut out, chunks.len() as u64);
    // Each chunk's range: its first value as a gap from the previous chunk's end, its end as a
    // length, then its bytes.
    let mut end = 0u32;
    for (part, bytes) in runs.chunks(CHUNK_RUNS).zip(&chunks) {
        let (first, last) = (part.first()?.0, part.last()?.1);
        write_varint(&mut out, u64::from(first - end));
        write_varint(&mut out, u64::from(last - first));
        write_varint(&mut out, bytes.len() as u64);
        end = last;
    }
    for bytes in &chunks {
        out.extend_from_slice(bytes);
    }
    Some(out)
}

/// One chunk of a [`CHUNKS`] blob: the values `first..end` it covers and its bytes.
struct Chunk<'a> {
    first: u64,
    end: u64,
    bytes: &'a [u8],
}

/// The chunks of a [`CHUNKS`] blob (`None` if its index is damaged).
fn chunks(blob: &[u8]) -> Option<(u64, Vec<Chunk<'_>>)> {
    let mut at = 1;
    let card = read_varint(blob, &mut at)?;
    let n = read_varint(blob, &mut at)?;
    // Each entry takes at least three bytes.
    if n.checked_mul(3)? > blob.len() as u64 {
        return None;
    }
    let mut ranges = Vec::with_capacity(n as usize);
    let mut end = 0u64;
    for _ in 0..n {
        let first = end.checked_add(read_varint(blob, &mut at)?)?;
        end = first.checked_add(read_varint(blob, &mut at)?)?;
        let len = usize::try_from(read_varint(blob, &mut at)?).ok()?;
        ranges.push((first, end, len));
    }
    let mut out = Vec::with_capacity(ranges.len());
    for (first, end, len) in ranges {
        let bytes = blob.get(at..at.checked_add(len)?)?;
        at += len;
        out.push(Chunk { first, end, bytes });
    }
    (at == blob.len()).then_some((card, out))
}

/// The runs of the chunks of `blob` (packed) whose value range `wanted` accepts: every run of
/// the bitmap that can hold a value in such a range (the runs of a [`CHUNKS`] blob's other
/// chunks are left packed; a blob of one chunk is read whole). `None` if it is damaged.
pub fn runs_where(blob: &[u8], wanted: impl Fn(u64, u64) -> bool) -> Option<Vec<(u32, u32)>> {
    if blob.first() != Some(&CHUNKS) {
        return runs(blob);
    }
    let (card, chunks) = chunks(blob)?;
    let mut out = Vec::new();
    let mut total = 0u64;
    let mut every = true;
    for c in &chunks {
        if !wanted(c.first, c.end) {
            every = false;
            continue;
        }
        // Decoded in place after the runs before it: a chunk's own vector, then copied over,
        // moved every run twice (most of the time of a flag's bitmap of single positions).
        let from = out.len();
        let before = out.last().map(|&(_, e): &(u32, u32)| u64::from(e));
        one_runs_into(c.bytes, &mut out)?;
        let part = &out[from..];
        // The chunk holds what its index says, after the runs before it.
        if part.first().map(|r| u64::from(r.0)) != Some(c.first)
            || part.last().map(|r| u64::from(r.1)) != Some(c.end)
            || before.is_some_and(|e| e >= c.first)
        {
            return None;
        }
        total += part.iter().map(|&(s, e)| u64::from(e - s)).sum::<u64>();
    }
    (!every || total == card).then_some(out)
}

/// [`runs_where`] for a caller that tests only the members of `near`: the chunks whose value
/// range holds one of them.
pub fn runs_near(blob: &[u8], near: &roaring::RoaringBitmap) -> Option<Vec<(u32, u32)>> {
    runs_where(blob, |first, end| {
        let (a, z) = (first.min(u64::from(u32::MAX)) as u32, end.saturating_sub(1));
        z >= u64::from(a) && near.range_cardinality(a..=z.min(u64::from(u32::MAX)) as u32) > 0
    })
}

/// The packed form of `runs`, one blob.
fn pack_one(runs: &[(u32, u32)]) -> Option<Vec<u8>> {
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

/// Whether reading `blob` (packed) costs more than a cache lookup (zstd, chunks, or a long
/// stream): such blobs are worth keeping unpacked (`bitmap_cache.rs`); the others decode
/// faster. (A rare `fen` tests a few positions against some thirty piece bitmaps: decoding
/// those of a few kilobytes whole each time made it 0.1 → 2.9 ms.)
pub fn is_costly(blob: &[u8]) -> bool {
    matches!(blob.first(), Some(&ZSTD | &CHUNKS | &PARITY)) || blob.len() >= 1024
}

/// The runs a packed blob holds (sorted, disjoint, non-touching, half-open), or `None` if it is
/// damaged or of the side to move's own form ([`PARITY`], read through `bitmap_parity.rs`).
pub fn runs(blob: &[u8]) -> Option<Vec<(u32, u32)>> {
    if blob.first() == Some(&CHUNKS) {
        return runs_where(blob, |_, _| true);
    }
    one_runs(blob)
}

/// The runs of a packed blob of one chunk. Every count in the header is checked against what
/// the stream holds before it sizes anything, so a damaged blob cannot make a large allocation.
fn one_runs(blob: &[u8]) -> Option<Vec<(u32, u32)>> {
    let mut out = Vec::new();
    one_runs_into(blob, &mut out)?;
    Some(out)
}

/// [`one_runs`], appended to `runs` (which may keep a part of them if the blob is damaged).
fn one_runs_into(blob: &[u8], runs: &mut Vec<(u32, u32)>) -> Option<()> {
    thread_local! {
        // The unzipped stream: a fresh buffer per bitmap made the kernel zero new pages.
        static STREAM: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let tag = *blob.first()?;
    let mut at = 1;
    let card = read_varint(blob, &mut at)?;
    let count = read_varint(blob, &mut at)?;
    match tag {
        VARINTS => decode_stream(blob.get(at..)?, card, count, runs),
        ZSTD => {
            let len = usize::try_from(read_varint(blob, &mut at)?).ok()?;
            // A run takes at most 10 bytes of stream (two 5-byte varints of 32-bit values).
            if u64::try_from(len).ok()? > count.checked_mul(10)? {
                return None;
            }
            let frame = blob.get(at..)?;
            STREAM.with(|cell| {
                let mut owned = Vec::new();
                let mut kept = cell.try_borrow_mut().ok();
                let out = kept.as_deref_mut().unwrap_or(&mut owned);
                crate::columns::decompress_block_into(frame, len, out)?;
                decode_stream(out, card, count, runs)
            })
        }
        _ => None,
    }
}

/// The `count` runs of a packed stream holding `card` values (see the module's layout).
fn decode_stream(stream: &[u8], card: u64, count: u64, runs: &mut Vec<(u32, u32)>) -> Option<()> {
    // Each run takes at least one byte of stream.
    if count > stream.len() as u64 {
        return None;
    }
    runs.reserve(count as usize);
    let (mut pos, mut end, mut total) = (0usize, 0u64, 0u64);
    // Runs after the first are at least one past their predecessor's end.
    let mut apart = 0u64;
    for _ in 0..count {
        let word = read_varint(stream, &mut pos)?;
        let len = if word & 1 == 1 {
            read_varint(stream, &mut pos)?.saturating_add(2)
        } else {
            1
        };
        // Saturating: a damaged value ends past 2^32 and is refused there.
        let start = end.saturating_add(word >> 1).saturating_add(apart);
        end = start.saturating_add(len);
        if end > u64::from(u32::MAX) {
            // A run may not reach 2^32 either: its end would not fit the u32 pairs.
            return None;
        }
        apart = 1;
        total += len;
        runs.push((start as u32, end as u32));
    }
    (pos == stream.len() && total == card).then_some(())
}

pub(crate) fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline(always)]
pub(crate) fn read_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    // Most gaps and lengths fit one byte.
    let first = *b.get(*at)?;
    *at += 1;
    if first < 0x80 {
        return Some(u64::from(first));
    }
    let mut v = u64::from(first & 0x7f);
    for shift in (7..64).step_by(7) {
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
    use crate::roaring_runs::serialize_runs;
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
    fn chunks_read_whole_and_in_part() {
        // Sparse enough that roaring keeps runs and arrays (no bitset is smaller).
        let runs: Vec<(u32, u32)> = (0..20_000u32)
            .map(|i| (40 * i, 40 * i + 1 + i % 3))
            .collect();
        let roaring = serialize_runs(&runs);
        let mut scratch = RunScratch::default();
        let packed = store_runs(&runs, &mut scratch);
        assert_eq!(packed[0], CHUNKS);
        assert_eq!(unpack(&packed, &mut scratch), Some(roaring));
        // Only the chunks around 50,000: their runs, which hold every member there.
        let part = runs_where(&packed, |a, z| a <= 500_000 && 500_000 < z).unwrap();
        assert!(part.len() <= CHUNK_RUNS && !part.is_empty());
        let want: Vec<_> = runs.iter().filter(|r| part.contains(r)).collect();
        assert_eq!(want.len(), part.len());
        let holds = |list: &[(u32, u32)]| list.iter().any(|&(s, e)| s <= 500_000 && 500_000 < e);
        assert_eq!(holds(&part), holds(&runs));
    }

    #[test]
    fn dense_bitsets_and_boundaries_round_trip() {
        // Every other value in a chunk: a bitset container; runs across chunk boundaries.
        let mut runs: Vec<(u32, u32)> = (0..20_000).map(|i| (2 * i, 2 * i + 1)).collect();
        runs.push((65_530, 131_080));
        runs.push((u32::MAX - 10, u32::MAX));
        let roaring = serialize_runs(&runs);
        let mut scratch = RunScratch::default();
        let stored = store_runs(&runs, &mut scratch);
        // Packed or not (bitsets are dense), the bytes read back are roaring's.
        match is_packed(&stored) {
            true => assert_eq!(unpack(&stored, &mut scratch), Some(roaring)),
            false => assert_eq!(stored, roaring),
        }
    }
}
