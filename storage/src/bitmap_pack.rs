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
//! the run count and, after [`ZSTD`] or [`ZSTD_MARKED`], the unpacked stream's length; after a
//! marked tag, its marks (below); then the stream (zstd frame or as is). The stream holds per
//! run `gap << 1 | long` (the gap from the previous run's end less one, since runs do not touch;
//! the first's from 0) and, when `long`, the run's length minus two: a single value costs one
//! varint.
//!
//! Marks: a long stream is cut into windows of `2^shift` runs, and each window after the first
//! has a mark: the end of the run before it and its first byte in the stream (both as varint
//! gaps from the previous mark's), after a byte holding `shift` and a varint count of marks. A
//! reader that needs only some values decodes only the windows whose range can hold them:
//! varint decoding is sequential, and a rare `fen` among the 6 M positions of a merged segment
//! spent most of its time decoding 16 K-run chunks to test a few stretches against them.

use crate::roaring_runs::{RunScratch, serialize_runs_with, serialized_runs_len};

/// Tag of a packed blob whose run stream is stored as is (small bitmaps: a zstd frame's own
/// header would eat the gain).
pub const VARINTS: u8 = 0x01;
/// Tag of a packed blob whose run stream is one zstd frame.
pub const ZSTD: u8 = 0x02;

/// zstd level of packed streams: level 1 already takes what there is (level 3 did no better
/// on piece bitmaps).
const LEVEL: i32 = 1;

/// Shortest run stream given to zstd. Measured over a build of ../shared/data/large (223,452
/// packed streams): the 26,179 streams of 128 bytes to 1 KiB shrank by 1-2 % under zstd (a
/// frame's header and entropy tables eat what little repeats), while each still cost a frame's
/// setup; from 1 KiB on they shrink to 0.71-0.88.
#[cfg(not(test))]
const MIN_ZSTD_STREAM: usize = 1024;
/// Small in tests, so that their bitmaps of a few hundred runs take the zstd path too.
#[cfg(test)]
const MIN_ZSTD_STREAM: usize = 128;

/// Tag of a packed blob cut into chunks of [`CHUNK_RUNS`] runs, each a packed blob of its own
/// (of [`VARINTS`] or [`ZSTD`]), behind an index of the value range each covers: a few
/// positions tested against a large bitmap unpack only the chunks they fall in, as roaring
/// reads only their containers. (The main line's bitmap, which nearly every query tests a
/// few positions against, is not packed at all: `bitmap.rs`.)
pub const CHUNKS: u8 = 0x03;

/// Tag of the side-to-move bitmap stored as its parity runs (`bitmap_parity.rs`).
pub const PARITY: u8 = 0x04;

/// [`VARINTS`] with marks (see the module's layout): a stream of more than one window.
pub const VARINTS_MARKED: u8 = 0x05;
/// [`ZSTD`] with marks.
pub const ZSTD_MARKED: u8 = 0x06;

/// log2 of the runs in a window between two marks: a mark costs about five bytes, some 0.3 %
/// of the packed bytes of 1,024 runs, and a reader of a few values decodes at most about that
/// many runs around each instead of a whole chunk of [`CHUNK_RUNS`].
#[cfg(not(test))]
const MARK_SHIFT: u32 = 10;
/// Small in tests, so that their bitmaps of a few dozen runs have marks too.
#[cfg(test)]
const MARK_SHIFT: u32 = 3;

/// The largest window a reader accepts (a damaged shift byte must not make one of 2^255 runs).
const MAX_MARK_SHIFT: u32 = 24;

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
    matches!(
        blob.first(),
        Some(&VARINTS | &ZSTD | &CHUNKS | &PARITY | &VARINTS_MARKED | &ZSTD_MARKED)
    )
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

/// The runs of `blob` (packed) in the parts whose value range `wanted` accepts (`first..end`):
/// every run of the bitmap that can hold a value in such a range, and maybe more (the runs of
/// a [`CHUNKS`] blob's other chunks and of a marked stream's other windows stay packed). `None`
/// if it is damaged.
pub fn runs_where(blob: &[u8], wanted: impl Fn(u64, u64) -> bool) -> Option<Vec<(u32, u32)>> {
    let mut out = Vec::new();
    if blob.first() != Some(&CHUNKS) {
        one_runs_where(blob, (0, u64::from(u32::MAX) + 1), &wanted, &mut out)?;
        return Some(out);
    }
    let (card, chunks) = chunks(blob)?;
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
        let whole = one_runs_where(c.bytes, (c.first, c.end), &wanted, &mut out)?;
        let part = &out[from..];
        let (first, last) = (
            part.first().map(|r| u64::from(r.0)),
            part.last().map(|r| u64::from(r.1)),
        );
        // The chunk holds what its index says (all of it when read whole), after the runs
        // before it.
        let held = match whole {
            true => first == Some(c.first) && last == Some(c.end),
            false => first.is_none_or(|f| f >= c.first) && last.is_none_or(|l| l <= c.end),
        };
        if !held || before.is_some_and(|e| e >= c.first) {
            return None;
        }
        total += part.iter().map(|&(s, e)| u64::from(e - s)).sum::<u64>();
        every &= whole;
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

/// The packed form of `runs`, one blob: zstd when it pays, marks when its stream has more than
/// one window.
fn pack_one(runs: &[(u32, u32)]) -> Option<Vec<u8>> {
    let card: u64 = runs.iter().map(|&(s, e)| u64::from(e - s)).sum();
    let mut stream = Vec::with_capacity(runs.len() * 2);
    // Where each window after the first starts: the end before it, its first byte.
    let mut marks = Vec::new();
    let window = 1usize << MARK_SHIFT;
    // Runs after the first do not touch their predecessor: their gap is at least one.
    let mut end = 0u32;
    for (i, &(s, e)) in runs.iter().enumerate() {
        if i > 0 && i % window == 0 {
            marks.push((end, stream.len()));
        }
        let long = e - s > 1;
        let gap = s.checked_sub(end)?.checked_sub(u32::from(i > 0))?;
        write_varint(&mut stream, (u64::from(gap) << 1) | u64::from(long));
        if long {
            write_varint(&mut stream, u64::from(e - s - 2));
        }
        end = e;
    }
    let mut out = Vec::with_capacity(stream.len() / 2 + 16 + 6 * marks.len());
    let frame = (stream.len() >= MIN_ZSTD_STREAM)
        .then(|| crate::columns::compress(&stream, LEVEL))
        .filter(|z| !z.is_empty() && z.len() + 4 < stream.len() - stream.len() / 16);
    let tag = match (&frame, marks.is_empty()) {
        (Some(_), true) => ZSTD,
        (Some(_), false) => ZSTD_MARKED,
        (None, true) => VARINTS,
        (None, false) => VARINTS_MARKED,
    };
    out.push(tag);
    write_varint(&mut out, card);
    write_varint(&mut out, runs.len() as u64);
    if frame.is_some() {
        write_varint(&mut out, stream.len() as u64);
    }
    if !marks.is_empty() {
        out.push(MARK_SHIFT as u8);
        write_varint(&mut out, marks.len() as u64);
        let (mut end, mut at) = (0u32, 0usize);
        for &(e, a) in &marks {
            write_varint(&mut out, u64::from(e - end));
            write_varint(&mut out, (a - at) as u64);
            (end, at) = (e, a);
        }
    }
    out.extend_from_slice(frame.as_deref().unwrap_or(&stream));
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
    matches!(blob.first(), Some(&ZSTD | &CHUNKS | &PARITY | &ZSTD_MARKED)) || blob.len() >= 1024
}

/// The runs a packed blob holds (sorted, disjoint, non-touching, half-open), or `None` if it is
/// damaged or of the side to move's own form ([`PARITY`], read through `bitmap_parity.rs`).
pub fn runs(blob: &[u8]) -> Option<Vec<(u32, u32)>> {
    runs_where(blob, |_, _| true)
}

/// The runs of a packed blob of one chunk, whose values lie in `bounds`, in the windows `wanted`
/// accepts, appended to `runs` (which may keep a part of them if the blob is damaged); whether
/// every window was read.
/// Every count in the header is checked against what the stream holds before it sizes
/// anything, so a damaged blob cannot make a large allocation.
fn one_runs_where(
    blob: &[u8],
    bounds: (u64, u64),
    wanted: &dyn Fn(u64, u64) -> bool,
    runs: &mut Vec<(u32, u32)>,
) -> Option<bool> {
    thread_local! {
        // The unzipped stream: a fresh buffer per bitmap made the kernel zero new pages.
        static STREAM: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let tag = *blob.first()?;
    let mut at = 1;
    let card = read_varint(blob, &mut at)?;
    let count = read_varint(blob, &mut at)?;
    let (zipped, marked) = match tag {
        VARINTS => (false, false),
        ZSTD => (true, false),
        VARINTS_MARKED => (false, true),
        ZSTD_MARKED => (true, true),
        _ => return None,
    };
    let unzipped_len = match zipped {
        true => Some(usize::try_from(read_varint(blob, &mut at)?).ok()?),
        false => None,
    };
    let windows = match marked {
        true => Windows::read(blob, &mut at, count)?,
        false => Windows::one(count),
    };
    let body = blob.get(at..)?;
    let Some(len) = unzipped_len else {
        return windows.decode(body, card, bounds, wanted, runs);
    };
    // A run takes at most 10 bytes of stream (two 5-byte varints of 32-bit values).
    if u64::try_from(len).ok()? > count.checked_mul(10)? {
        return None;
    }
    STREAM.with(|cell| {
        let mut owned = Vec::new();
        let mut kept = cell.try_borrow_mut().ok();
        let out = kept.as_deref_mut().unwrap_or(&mut owned);
        crate::columns::decompress_block_into(body, len, out)?;
        windows.decode(out, card, bounds, wanted, runs)
    })
}

/// The windows of a packed stream: `size` runs each (the last the rest), each after the first
/// starting at its mark.
struct Windows {
    size: u64,
    count: u64,
    /// Per window after the first: the end of the run before it, its first byte in the stream.
    marks: Vec<(u64, usize)>,
}

impl Windows {
    /// The one window of an unmarked stream of `count` runs.
    fn one(count: u64) -> Self {
        Self {
            size: count,
            count,
            marks: Vec::new(),
        }
    }

    /// The marks of a stream of `count` runs, read at `at` in `blob`.
    fn read(blob: &[u8], at: &mut usize, count: u64) -> Option<Self> {
        let shift = u32::from(*blob.get(*at)?);
        *at += 1;
        let n = read_varint(blob, at)?;
        // Each mark takes at least two bytes; a stream of `count` runs has this many windows.
        if !(1..=MAX_MARK_SHIFT).contains(&shift)
            || n.checked_mul(2)? > blob.len() as u64
            || count == 0
            || n != (count - 1) >> shift
        {
            return None;
        }
        let mut marks = Vec::with_capacity(n as usize);
        let (mut end, mut byte) = (0u64, 0usize);
        for _ in 0..n {
            end = end.checked_add(read_varint(blob, at)?)?;
            byte = byte.checked_add(usize::try_from(read_varint(blob, at)?).ok()?)?;
            marks.push((end, byte));
        }
        Some(Self {
            size: 1 << shift,
            count,
            marks,
        })
    }

    /// The runs of `stream` in the windows `wanted` accepts, appended to `runs`; whether every
    /// window was read (then the values are checked against `card`). A window's range is asked
    /// about within `bounds`, the values the whole stream holds (a chunk's, from its index).
    fn decode(
        &self,
        stream: &[u8],
        card: u64,
        (lo, hi): (u64, u64),
        wanted: &dyn Fn(u64, u64) -> bool,
        runs: &mut Vec<(u32, u32)>,
    ) -> Option<bool> {
        let (mut total, mut every) = (0u64, true);
        let last = self.marks.len();
        for w in 0..=last {
            let (end, from) = match w {
                0 => (0, 0),
                _ => self.marks[w - 1],
            };
            let (upto, to, n) = match self.marks.get(w) {
                Some(&(e, b)) => (e, b, self.size),
                // The marks were counted from `count`: the windows before leave at least one run.
                None => (
                    u64::from(u32::MAX) + 1,
                    stream.len(),
                    self.count - last as u64 * self.size,
                ),
            };
            if !wanted(end.max(lo), upto.min(hi)) {
                every = false;
                continue;
            }
            let (after, sum) = decode_stream(stream.get(from..to)?, n, end, w > 0, runs)?;
            // A window ends where the next one's mark says.
            if w < last && after != upto {
                return None;
            }
            total += sum;
        }
        (!every || total == card).then_some(every)
    }
}

/// The `count` runs of a packed stream (see the module's layout) after a run ending at `end`
/// (`apart`: runs came before it), appended to `runs`: the end of the last and the values.
fn decode_stream(
    stream: &[u8],
    count: u64,
    mut end: u64,
    apart: bool,
    runs: &mut Vec<(u32, u32)>,
) -> Option<(u64, u64)> {
    // Each run takes at least one byte of stream.
    if count > stream.len() as u64 {
        return None;
    }
    runs.reserve(count as usize);
    let (mut pos, mut total) = (0usize, 0u64);
    // Runs after the first are at least one past their predecessor's end.
    let mut apart = u64::from(apart);
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
    (pos == stream.len()).then_some((end, total))
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

    /// Runs with gaps and lengths from a generator (no pattern for zstd to find), `n` of them.
    fn scattered_runs(n: usize, seed: u64) -> Vec<(u32, u32)> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut end = 0u32;
        (0..n)
            .map(|_| {
                let start = end + 1 + (next() % 300) as u32;
                end = start + 1 + (next() % 90) as u32;
                (start, end)
            })
            .collect()
    }

    proptest! {
        /// A reader of a few values gets every run that holds one of them, decodes only the
        /// windows around them, and the bitmap read whole is the one stored.
        #[test]
        fn marked_streams_read_only_the_windows_asked_for(
            n in 1usize..400,
            seed in any::<u64>(),
            probes in proptest::collection::vec(any::<u32>(), 1..4),
        ) {
            let runs = scattered_runs(n, seed);
            let mut scratch = RunScratch::default();
            let stored = store_runs(&runs, &mut scratch);
            prop_assume!(is_packed(&stored));
            prop_assert_eq!(unpack(&stored, &mut scratch), Some(serialize_runs(&runs)));
            let top = runs.last().map_or(1, |r| r.1);
            let probes: Vec<u64> = probes.iter().map(|&p| u64::from(p % top)).collect();
            let part = runs_where(&stored, |a, z| probes.iter().any(|&v| a <= v && v < z)).unwrap();
            prop_assert!(part.iter().all(|r| runs.contains(r)));
            prop_assert!(part.windows(2).all(|w| w[0].1 < w[1].0));
            for &v in &probes {
                let holds = |l: &[(u32, u32)]| l.iter().any(|&(s, e)| u64::from(s) <= v && v < u64::from(e));
                prop_assert_eq!(holds(&part), holds(&runs));
            }
            // At most the window holding each probe.
            prop_assert!(part.len() <= probes.len() << MARK_SHIFT);
        }
    }

    #[test]
    fn long_streams_are_marked_and_read_in_windows() {
        let window = 1usize << MARK_SHIFT;
        let runs = scattered_runs(CHUNK_RUNS, 7);
        let mut scratch = RunScratch::default();
        let stored = store_runs(&runs, &mut scratch);
        assert!(
            matches!(stored[0], VARINTS_MARKED | ZSTD_MARKED),
            "{}",
            stored[0]
        );
        let v = u64::from(runs[runs.len() / 2].0);
        let part = runs_where(&stored, |a, z| a <= v && v < z).unwrap();
        assert!(!part.is_empty() && part.len() <= window, "{}", part.len());
        assert!(
            part.iter()
                .any(|&(s, e)| u64::from(s) <= v && v < u64::from(e))
        );
        // Each run's first and last value, asked alone, is found (windows meet without a gap).
        for &(s, e) in &runs {
            for v in [u64::from(s), u64::from(e) - 1] {
                let part = runs_where(&stored, |a, z| a <= v && v < z).unwrap();
                assert!(part.len() <= window);
                assert!(part.contains(&(s, e)), "{v}");
            }
        }
        // A short stream has no marks.
        let short = store_runs(&scattered_runs(window, 7), &mut scratch);
        assert!(matches!(short[0], VARINTS | ZSTD), "{}", short[0]);
    }

    #[test]
    fn damaged_marks_are_refused() {
        let runs = scattered_runs(CHUNK_RUNS, 11);
        let mut scratch = RunScratch::default();
        let stored = store_runs(&runs, &mut scratch);
        assert_eq!(stored[0], VARINTS_MARKED);
        // The header: tag, card, count, then the shift byte and the mark count.
        let mut at = 1;
        read_varint(&stored, &mut at).unwrap();
        read_varint(&stored, &mut at).unwrap();
        assert_eq!(u32::from(stored[at]), MARK_SHIFT);
        for (i, bad) in [(at, 0u8), (at, 99), (at + 1, 0), (at + 3, 0x7f)] {
            let mut damaged = stored.clone();
            damaged[i] = bad;
            assert_eq!(runs_where(&damaged, |_, _| true), None, "byte {i} = {bad}");
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
        let stored = store_runs(&runs, &mut scratch);
        // Packed or not (bitsets are dense), the bytes read back are roaring's.
        match is_packed(&stored) {
            true => assert_eq!(unpack(&stored, &mut scratch), Some(roaring)),
            false => assert_eq!(stored, roaring),
        }
    }
}
