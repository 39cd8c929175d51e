//! A stored bitmap read into, or intersected with, a dense bitset over a segment's positions,
//! straight from its stored bytes.
//!
//! Why a dense set, and why not through the `roaring` crate: a broad query (a flag held by a
//! twentieth of the positions, a king on its castled square in a third of them) combines
//! bitmaps whose containers are mostly bitsets and runs. `roaring` turns a run container into
//! a bitset at each intersection with one, and finding the games of a large result steps
//! through its every member; over a plain bitset of the segment's positions an `and` or an
//! `or` is one pass over words, and whether a game has a member is a test of the one or two
//! words its positions span. The dense set is `fixedbitset`'s (the bitset petgraph is built
//! on): its word slice is written here, container by container, in the portable format
//! [`StoredBitmap`] parses.

use fixedbitset::FixedBitSet;

use crate::bitmap_lookup::{ContainerBytes, StoredBitmap};

/// Bits per word of a [`FixedBitSet`]'s slice.
const WORD: usize = usize::BITS as usize;

/// Positions in one container.
pub(crate) const CONTAINER: usize = 1 << 16;

/// 64-bit words in one container.
pub(crate) const WORDS: usize = CONTAINER / 64;

/// Adds the members of `b` to `dense` (members past its length are ignored).
pub(crate) fn or_into(b: &StoredBitmap, dense: &mut FixedBitSet) {
    let len = dense.len();
    for (key, c) in b.containers() {
        let base = usize::from(key) << 16;
        if base >= len {
            break;
        }
        let slice = dense.as_mut_slice();
        match c {
            ContainerBytes::Bitset(words) => {
                combine(slice, base, u64s(words), |d, w| *d |= w);
            }
            // A few thousand values: set one by one, without a pass over the container.
            ContainerBytes::Array(values) => {
                for v in u16s(values) {
                    let x = base + usize::from(v);
                    if let Some(d) = slice.get_mut(x / WORD) {
                        *d |= 1 << (x % WORD);
                    }
                }
            }
            ContainerBytes::Runs(runs) => {
                for (start, extra) in pairs(runs) {
                    let from = base + usize::from(start);
                    set_bits(slice, from, from + usize::from(extra) + 1);
                }
            }
        }
    }
    trim(dense);
}

/// Writes a container's members to `words` (bit `i` of the container in word `i / 64`),
/// clearing the rest.
pub(crate) fn write_container(c: &ContainerBytes, words: &mut [u64; WORDS]) {
    match c {
        ContainerBytes::Bitset(bytes) => {
            for (w, x) in words.iter_mut().zip(u64s(bytes)) {
                *w = x;
            }
        }
        ContainerBytes::Array(values) => {
            words.fill(0);
            for v in u16s(values) {
                words[usize::from(v) / 64] |= 1 << (v % 64);
            }
        }
        ContainerBytes::Runs(runs) => {
            words.fill(0);
            for (start, extra) in pairs(runs) {
                let last = usize::from(start) + usize::from(extra);
                fill(words, usize::from(start), last.min(CONTAINER - 1));
            }
        }
    }
}

/// Keeps in `dense` only the members of `b`; returns how many it keeps (counted as the words
/// are written, so a caller can switch a set that became small to a sparse form for free).
pub(crate) fn and_into(b: &StoredBitmap, dense: &mut FixedBitSet) -> u64 {
    let mut kept = 0u64;
    let len = dense.len();
    let mut mask = [0u64; WORDS];
    // The first position not yet decided: everything before a container's start that no
    // container covers is not in `b`.
    let mut next = 0usize;
    for (key, c) in b.containers() {
        let base = usize::from(key) << 16;
        if base >= len {
            break;
        }
        clear(dense, next, base);
        next = next.max(base + CONTAINER);
        let slice = dense.as_mut_slice();
        // A running intersection soon leaves whole containers empty: nothing to read there.
        let (from, to) = container_words(slice, base);
        if slice[from..to].iter().all(|&w| w == 0) {
            continue;
        }
        match c {
            ContainerBytes::Bitset(words) => {
                kept += combine(slice, base, u64s(words), |d, w| *d &= w);
            }
            // Through a mask of the container's own size, whose indexing needs no bounds
            // checks: faster, over the many short runs of a piece on its square, than
            // clearing the gaps in place.
            ContainerBytes::Array(_) | ContainerBytes::Runs(_) => {
                write_container(&c, &mut mask);
                kept += combine(slice, base, mask.iter().copied(), |d, w| *d &= w);
            }
        }
    }
    clear(dense, next, len);
    kept
}

/// Removes the members of `b` from `dense` (`dense and not b`), container by container: the
/// complement of `b` is never made (a pass over every word to toggle, then one to intersect).
pub(crate) fn and_not_into(b: &StoredBitmap, dense: &mut FixedBitSet) {
    let len = dense.len();
    for (key, c) in b.containers() {
        let base = usize::from(key) << 16;
        if base >= len {
            break;
        }
        let slice = dense.as_mut_slice();
        match c {
            ContainerBytes::Bitset(words) => {
                combine(slice, base, u64s(words), |d, w| *d &= !w);
            }
            ContainerBytes::Array(values) => {
                for v in u16s(values) {
                    let x = base + usize::from(v);
                    if let Some(d) = slice.get_mut(x / WORD) {
                        *d &= !(1 << (x % WORD));
                    }
                }
            }
            ContainerBytes::Runs(runs) => {
                for (start, extra) in pairs(runs) {
                    let from = base + usize::from(start);
                    clear(dense, from, from + usize::from(extra) + 1);
                }
            }
        }
    }
}

/// [`or_into`] for a bitmap given as runs (a packed blob's, `bitmap_pack.rs`): sorted,
/// disjoint, half-open.
pub(crate) fn or_runs(runs: &[(u32, u32)], dense: &mut FixedBitSet) {
    let slice = dense.as_mut_slice();
    for &(s, e) in runs {
        set_bits(slice, s as usize, e as usize);
    }
    trim(dense);
}

/// [`and_into`] for a bitmap given as runs: the gaps between them are cleared.
pub(crate) fn and_runs(runs: &[(u32, u32)], dense: &mut FixedBitSet) -> u64 {
    let mut next = 0usize;
    let len = dense.len();
    let slice = dense.as_mut_slice();
    for &(s, e) in runs {
        clear_bits(slice, next, s as usize);
        next = e as usize;
    }
    clear_bits(slice, next, len);
    // One pass over the words: counting run by run cost more than the clearing.
    dense.count_ones(..) as u64
}

/// [`and_not_into`] for a bitmap given as runs.
pub(crate) fn and_not_runs(runs: &[(u32, u32)], dense: &mut FixedBitSet) {
    let slice = dense.as_mut_slice();
    for &(s, e) in runs {
        clear_bits(slice, s as usize, e as usize);
    }
}

/// The words of `slice` that hold the container starting at bit `base`.
fn container_words(slice: &[usize], base: usize) -> (usize, usize) {
    let from = (base / WORD).min(slice.len());
    (from, (from + CONTAINER / WORD).min(slice.len()))
}

/// Sets bits `from..=to` of `mask` (`from <= to`, both within a container).
///
/// Without a branch on whether the run fits in one word: over a piece's many short runs on
/// its square that is a coin flip, and its mispredictions were much of an intersection's time.
pub(crate) fn fill(mask: &mut [u64; WORDS], from: usize, to: usize) {
    let (a, z) = ((from / 64) % WORDS, (to / 64) % WORDS);
    let low = u64::MAX << (from % 64);
    let high = u64::MAX >> (63 - to % 64);
    // All ones when the run spans several words, none when it fits in one.
    let several = u64::from(a != z).wrapping_neg();
    mask[a] |= low & (high | several);
    mask[z] |= high & (low | several);
    // The word after the first, whole when the run reaches past it (again without a branch:
    // a short run's is a no-op); only a run over more than three words takes the loop, whose
    // call to fill memory cost more than the rest for the short runs of a piece's squares.
    let inner = u64::from(a + 1 < z).wrapping_neg();
    mask[(a + 1) % WORDS] |= inner;
    if z > a + 2 {
        mask[a + 2..z].fill(u64::MAX);
    }
}

/// Sets the bits `from..to` of `words` (clipped to them).
fn set_bits(words: &mut [usize], from: usize, to: usize) {
    if let Some(Span { a, z, first, last }) = span(words.len(), from, to) {
        words[a] |= first;
        words[z] |= last;
        if let Some(inner) = words.get_mut(a + 1..z) {
            inner.fill(usize::MAX);
        }
    }
}

/// Clears the bits `from..to` of `words` (clipped to them).
fn clear_bits(words: &mut [usize], from: usize, to: usize) {
    if let Some(Span { a, z, first, last }) = span(words.len(), from, to) {
        words[a] &= !first;
        words[z] &= !last;
        if let Some(inner) = words.get_mut(a + 1..z) {
            inner.fill(0);
        }
    }
}

/// The bits `from..to` of a slice of words: its first and last word (equal for a span within
/// one) and their masks; the words between are whole.
struct Span {
    a: usize,
    z: usize,
    first: usize,
    last: usize,
}

/// The [`Span`] of bits `from..to` within `words` words (clipped to them; `None` if empty).
/// Branch-free on the span's width, as in `fill`.
fn span(words: usize, from: usize, to: usize) -> Option<Span> {
    let to = to.min(words * WORD);
    if from >= to {
        return None;
    }
    let (a, z) = (from / WORD, (to - 1) / WORD);
    let low = usize::MAX << (from % WORD);
    let high = usize::MAX >> (WORD - 1 - (to - 1) % WORD);
    // All ones when the span covers several words, none when it fits in one.
    let several = usize::from(a != z).wrapping_neg();
    Some(Span {
        a,
        z,
        first: low & (high | several),
        last: high & (low | several),
    })
}

/// Combines a container's words into `slice` from bit `base` (a multiple of 65,536) with `op`;
/// words past the slice are left alone. Returns how many bits the written words hold.
#[cfg(target_pointer_width = "64")]
fn combine(
    slice: &mut [usize],
    base: usize,
    words: impl Iterator<Item = u64>,
    op: impl Fn(&mut usize, usize),
) -> u64 {
    let from = (base / WORD).min(slice.len());
    let mut ones = 0u64;
    for (d, w) in slice[from..].iter_mut().zip(words) {
        op(d, w as usize);
        ones += u64::from(d.count_ones());
    }
    ones
}

/// Combines a container's words into `slice` from bit `base` (a multiple of 65,536) with `op`;
/// words past the slice are left alone.
#[cfg(not(target_pointer_width = "64"))]
fn combine(
    slice: &mut [usize],
    base: usize,
    words: impl Iterator<Item = u64>,
    op: impl Fn(&mut usize, usize),
) -> u64 {
    let mut ones = 0u64;
    for (i, w) in words.enumerate() {
        for k in 0..64 / WORD {
            if let Some(d) = slice.get_mut((base + 64 * i) / WORD + k) {
                op(d, (w >> (k * WORD)) as usize);
                ones += u64::from(d.count_ones());
            }
        }
    }
    ones
}

/// Removes `from..to` (clipped to the set) from `dense`.
fn clear(dense: &mut FixedBitSet, from: usize, to: usize) {
    let to = to.min(dense.len());
    if from < to {
        dense.remove_range(from..to);
    }
}

/// Clears the bits past the set's length in its last word, which a container's words may have
/// set: the set's counts read whole words.
fn trim(dense: &mut FixedBitSet) {
    let len = dense.len();
    if !len.is_multiple_of(WORD)
        && let Some(last) = dense.as_mut_slice().get_mut(len / WORD)
    {
        *last &= (1usize << (len % WORD)) - 1;
    }
}

fn u16s(b: &[u8]) -> impl Iterator<Item = u16> + '_ {
    b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]))
}

fn u64s(b: &[u8]) -> impl Iterator<Item = u64> + '_ {
    b.chunks_exact(8).map(|c| {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        u64::from_le_bytes(w)
    })
}

fn pairs(b: &[u8]) -> impl Iterator<Item = (u16, u16)> + '_ {
    b.chunks_exact(4).map(|c| {
        (
            u16::from_le_bytes([c[0], c[1]]),
            u16::from_le_bytes([c[2], c[3]]),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use roaring::RoaringBitmap;

    use crate::bitmap_lookup::tests::{runs_of, stored};

    fn members(d: &FixedBitSet) -> RoaringBitmap {
        d.ones().map(|x| x as u32).collect()
    }

    proptest! {
        /// `or`, `and` and `and not` from the stored bytes give what roaring gives, for bitsets, runs and
        /// arrays, over a set that ends inside a container or a word.
        #[test]
        fn dense_reads_agree_with_roaring(
            ranges in proptest::collection::vec((0u32..300_000, 0u32..70_000), 0..10),
            singles in proptest::collection::vec(0u32..330_000, 0..6000),
            start in proptest::collection::vec(0u32..330_000, 0..3000),
            start_ranges in proptest::collection::vec((0u32..300_000, 0u32..70_000), 0..4),
            len in 0usize..340_000,
            optimize: bool,
        ) {
            let (b, blob) = stored(ranges, singles, optimize);
            let parsed = StoredBitmap::parse(&blob).expect("parses");
            let mut dense = FixedBitSet::with_capacity(len);
            for &x in &start {
                if (x as usize) < len {
                    dense.insert(x as usize);
                }
            }
            for &(s, n) in &start_ranges {
                let (a, z) = ((s as usize).min(len), ((s + n) as usize).min(len));
                dense.insert_range(a..z);
            }
            let before = members(&dense);
            let mut universe = RoaringBitmap::new();
            universe.insert_range(0..len as u32);

            let mut ored = dense.clone();
            or_into(&parsed, &mut ored);
            prop_assert_eq!(members(&ored), (&before | &b) & &universe);
            prop_assert_eq!(ored.count_ones(..) as u64, ((&before | &b) & &universe).len());

            let mut without = dense.clone();
            and_not_into(&parsed, &mut without);
            prop_assert_eq!(members(&without), &before - &b);

            // The same from the bitmap's runs (a packed blob's reading).
            let runs = runs_of(&b);
            let mut ored_runs = dense.clone();
            or_runs(&runs, &mut ored_runs);
            prop_assert_eq!(&ored_runs, &ored);
            prop_assert_eq!(ored_runs.count_ones(..), ored.count_ones(..));
            let mut without_runs = dense.clone();
            and_not_runs(&runs, &mut without_runs);
            prop_assert_eq!(&without_runs, &without);
            let mut anded_runs = dense.clone();
            let kept_runs = and_runs(&runs, &mut anded_runs);

            let mut anded = dense;
            let kept = and_into(&parsed, &mut anded);
            prop_assert_eq!(members(&anded), &before & &b);
            prop_assert_eq!(kept, (&before & &b).len());
            prop_assert_eq!(&anded_runs, &anded);
            prop_assert_eq!(kept_runs, kept);
        }
    }
}
