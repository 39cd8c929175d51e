//! Roaring bitmaps in the portable format, written straight from sorted runs: what every
//! bitmap of a segment is made from (`bitmap.rs` for the builder, `bitmap_pack.rs` for the
//! packed form, which unpacks to exactly these bytes); and from 64-bit words, for the
//! side-to-move bitmap (`bitmap_parity.rs`), whose runs would be one per member.

/// Serialises sorted, disjoint, non-touching half-open runs as a roaring bitmap in the portable
/// format (the one `RoaringBitmap::deserialize_from` reads), choosing for each 2^16 chunk the
/// smallest of run, array and bitmap containers as `RoaringBitmap::optimize` would.
pub fn serialize_runs(runs: &[(u32, u32)]) -> Vec<u8> {
    serialize_runs_with(runs, &mut RunScratch::default())
}

/// The length of [`serialize_runs`]'s bytes, without writing them (what packing a bitmap
/// compares its packed form with: most bitmaps pack smaller and are never written this way).
pub fn serialized_runs_len(runs: &[(u32, u32)], scratch: &mut RunScratch) -> usize {
    group(runs, scratch);
    let chunks = &scratch.chunks;
    let has_runs = chunks
        .iter()
        .any(|&(_, _, k, c)| Kind::of(k, c) == Kind::Run);
    let n = chunks.len();
    let head = if has_runs { 4 + n.div_ceil(8) } else { 8 };
    let offsets = if !has_runs || n >= NO_OFFSET_THRESHOLD {
        4 * n
    } else {
        0
    };
    let bodies: usize = chunks
        .iter()
        .map(|&(_, _, k, c)| Kind::of(k, c).size(k, c))
        .sum();
    head + 4 * n + offsets + bodies
}

/// A bitmap with run containers has an offset per container from this many containers on
/// (without run containers, always).
const NO_OFFSET_THRESHOLD: usize = 4;

/// The runs cut at 2^16 boundaries: each piece's container key and its first and last value in
/// the container.
fn pieces(runs: &[(u32, u32)]) -> impl Iterator<Item = (u16, u16, u16)> + '_ {
    runs.iter().flat_map(|&(start, end)| {
        let e = u64::from(end); // exclusive
        let mut s = u64::from(start);
        std::iter::from_fn(move || {
            (s < e).then(|| {
                let key = s >> 16;
                let piece_end = e.min((key + 1) << 16);
                let piece = (
                    key as u16,
                    (s & 0xffff) as u16,
                    ((piece_end - 1) & 0xffff) as u16,
                );
                s = piece_end;
                piece
            })
        })
    })
}

/// A container's kind, chosen as `RoaringBitmap::optimize` would: the smallest.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Array,
    Bitmap,
    Run,
}

impl Kind {
    fn of(pieces: usize, card: u32) -> Self {
        let other = if card > 4096 {
            Self::Bitmap
        } else {
            Self::Array
        };
        if Self::Run.size(pieces, card) < other.size(pieces, card) {
            Self::Run
        } else {
            other
        }
    }

    /// Stored bytes of a container of this kind.
    fn size(self, pieces: usize, card: u32) -> usize {
        match self {
            Self::Array => 2 * card as usize,
            Self::Bitmap => 8192,
            Self::Run => 2 + 4 * pieces,
        }
    }
}

/// Reusable buffers of [`serialize_runs_with`] (a segment serialises hundreds of bitmaps).
#[derive(Default)]
pub struct RunScratch {
    /// Runs split at chunk boundaries, in chunk coordinates (start, end inclusive).
    pieces: Vec<(u16, u16)>,
    /// Per chunk: (chunk key, first piece, pieces, cardinality).
    chunks: Vec<(u16, usize, usize, u32)>,
}

/// Cuts `runs` at 2^16 boundaries into `scratch`: the pieces, and per container its key, first
/// piece, number of pieces and cardinality.
fn group(runs: &[(u32, u32)], scratch: &mut RunScratch) {
    let RunScratch {
        pieces: kept,
        chunks,
    } = scratch;
    kept.clear();
    chunks.clear();
    for (key, lo, hi) in pieces(runs) {
        match chunks.last_mut() {
            Some((k, _, n, card)) if *k == key => {
                *n += 1;
                *card += u32::from(hi - lo) + 1;
            }
            _ => chunks.push((key, kept.len(), 1, u32::from(hi - lo) + 1)),
        }
        kept.push((lo, hi));
    }
}

/// Portable-format cookie of a bitmap without run containers.
const SERIAL_COOKIE_NO_RUNCONTAINER: u32 = 12346;
/// Words per container (2^16 values).
const CONTAINER_WORDS: usize = 1024;
/// An array container holds at most this many values (more take a bitmap container).
const ARRAY_MAX: u32 = 4096;

/// Serialises the set whose value `64 * i + b` is bit `b` of `words[i]` as a roaring bitmap in
/// the portable format: per 2^16 values an array container up to 4,096 members, else a bitmap
/// container (as `RoaringBitmap::from_lsb0_bytes` makes them).
pub fn serialize_words(words: &[u64]) -> Vec<u8> {
    let containers: Vec<(u16, &[u64], u32)> = (0u16..)
        .zip(words.chunks(CONTAINER_WORDS))
        .map(|(key, part)| (key, part, part.iter().map(|w| w.count_ones()).sum()))
        .filter(|&(_, _, card)| card > 0)
        .collect();
    let n = containers.len();
    let body = |card: u32| {
        if card > ARRAY_MAX {
            8 * CONTAINER_WORDS
        } else {
            2 * card as usize
        }
    };
    let size = 8 + 8 * n + containers.iter().map(|c| body(c.2)).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&SERIAL_COOKIE_NO_RUNCONTAINER.to_le_bytes());
    out.extend_from_slice(&(n as u32).to_le_bytes());
    for &(key, _, card) in &containers {
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&((card - 1) as u16).to_le_bytes());
    }
    let mut offset = 8 + 8 * n;
    for &(_, _, card) in &containers {
        out.extend_from_slice(&(offset as u32).to_le_bytes());
        offset += body(card);
    }
    for &(_, part, card) in &containers {
        if card > ARRAY_MAX {
            for w in part {
                out.extend_from_slice(&w.to_le_bytes());
            }
            // A last container cut short is padded with empty words.
            out.resize(out.len() + 8 * (CONTAINER_WORDS - part.len()), 0);
        } else {
            for (i, &w) in part.iter().enumerate() {
                let mut left = w;
                while left != 0 {
                    let v = (i * 64) as u16 + left.trailing_zeros() as u16;
                    out.extend_from_slice(&v.to_le_bytes());
                    left &= left - 1;
                }
            }
        }
    }
    out
}

/// As [`serialize_runs`], with buffers kept from call to call.
pub fn serialize_runs_with(runs: &[(u32, u32)], scratch: &mut RunScratch) -> Vec<u8> {
    const SERIAL_COOKIE: u32 = 12347;
    group(runs, scratch);
    let RunScratch { pieces, chunks } = scratch;
    let n = chunks.len();
    let has_runs = chunks
        .iter()
        .any(|&(_, _, k, c)| Kind::of(k, c) == Kind::Run);
    let mut out = Vec::with_capacity(8 + 8 * n + 4 * pieces.len());
    if has_runs {
        out.extend_from_slice(&(SERIAL_COOKIE | ((n as u32 - 1) << 16)).to_le_bytes());
        let mut flags = vec![0u8; n.div_ceil(8)];
        for (i, &(_, _, k, c)) in chunks.iter().enumerate() {
            if Kind::of(k, c) == Kind::Run {
                flags[i / 8] |= 1 << (i % 8);
            }
        }
        out.extend_from_slice(&flags);
    } else {
        out.extend_from_slice(&SERIAL_COOKIE_NO_RUNCONTAINER.to_le_bytes());
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    for &(key, _, _, card) in chunks.iter() {
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&((card - 1) as u16).to_le_bytes());
    }
    let with_offsets = !has_runs || n >= NO_OFFSET_THRESHOLD;
    let offsets_at = out.len();
    if with_offsets {
        out.resize(out.len() + 4 * n, 0);
    }
    for (i, &(_, first, count, card)) in chunks.iter().enumerate() {
        if with_offsets {
            let at = offsets_at + 4 * i;
            let here = out.len() as u32;
            out[at..at + 4].copy_from_slice(&here.to_le_bytes());
        }
        let list = &pieces[first..first + count];
        match Kind::of(count, card) {
            Kind::Run => {
                out.extend_from_slice(&(list.len() as u16).to_le_bytes());
                for &(a, b) in list {
                    out.extend_from_slice(&a.to_le_bytes());
                    out.extend_from_slice(&(b - a).to_le_bytes());
                }
            }
            Kind::Array => {
                for &(a, b) in list {
                    for v in a..=b {
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
            Kind::Bitmap => {
                let mut words = [0u64; 1024];
                for &(a, b) in list {
                    for v in a as usize..=b as usize {
                        words[v / 64] |= 1 << (v % 64);
                    }
                }
                for w in words {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use roaring::RoaringBitmap;

    proptest! {
        /// Words serialise to the set their bits hold, in the bytes roaring itself writes.
        #[test]
        fn words_serialise_as_roaring_does(
            picks in proptest::collection::vec((0usize..2600, any::<u64>(), 0u8..4), 0..60),
        ) {
            let n = picks.iter().map(|p| p.0 + 1).max().unwrap_or(0);
            let mut words = vec![0u64; n];
            for &(at, w, density) in &picks {
                // Sparse and dense words, so containers of both kinds.
                words[at] = match density {
                    0 => w & w.rotate_left(7) & w.rotate_left(19),
                    1 => !0,
                    _ => w,
                };
                if density == 1 {
                    for x in words.iter_mut().skip(at).take(1100) {
                        *x = !0;
                    }
                }
            }
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let want = RoaringBitmap::from_lsb0_bytes(0, &bytes);
            let mut theirs = Vec::new();
            want.serialize_into(&mut theirs).unwrap();
            let ours = serialize_words(&words);
            prop_assert_eq!(RoaringBitmap::deserialize_from(&ours[..]).unwrap(), want);
            prop_assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn alternating_ids_use_bitmap_containers() {
        // Like the white-to-move flag: every other position, over several chunks.
        let runs: Vec<(u32, u32)> = (0..100_000u32).map(|i| (2 * i, 2 * i + 1)).collect();
        let blob = serialize_runs(&runs);
        let back = RoaringBitmap::deserialize_from(blob.as_slice()).unwrap();
        assert_eq!(back.len(), 100_000);
        assert!(back.contains(199_998) && !back.contains(199_999));
        assert!(
            blob.len() < 4 * 8192 + 64,
            "bitmap containers, not runs: {}",
            blob.len()
        );
        assert_eq!(serialize_runs(&[]).len(), 8);
        let mut scratch = RunScratch::default();
        assert_eq!(serialized_runs_len(&[], &mut scratch), 8);
        assert_eq!(serialized_runs_len(&runs, &mut scratch), blob.len());
        assert!(
            RoaringBitmap::deserialize_from(serialize_runs(&[]).as_slice())
                .unwrap()
                .is_empty()
        );
    }

    proptest! {
        #[test]
        fn serialized_runs_read_back_as_the_same_bitmap(
            gaps in proptest::collection::vec((0u32..70_000, 1u32..70_000), 0..300),
            sparse in any::<bool>(),
        ) {
            let mut runs = Vec::new();
            let mut at = 0u32;
            for (gap, len) in gaps {
                let len = if sparse { 1 + len % 3 } else { len };
                let start = at + gap + 1;
                runs.push((start, start + len));
                at = start + len;
            }
            let mut expected = RoaringBitmap::new();
            for &(a, b) in &runs {
                expected.insert_range(a..b);
            }
            let blob = serialize_runs(&runs);
            prop_assert_eq!(serialized_runs_len(&runs, &mut RunScratch::default()), blob.len());
            let back = RoaringBitmap::deserialize_from(blob.as_slice()).unwrap();
            prop_assert_eq!(back, expected);
        }
    }
}
