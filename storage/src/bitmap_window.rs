//! The intersection of several stored bitmaps of a segment, one window of 65,536 positions (a
//! roaring container's range) at a time.
//!
//! Why: intersecting operand by operand over a bitset of the whole segment
//! ([`crate::bitmap_dense`]) passes over every word of it once to clear it, once per operand,
//! once to count what is kept and once more to list it. At six million positions a segment's
//! bitset is 760 KB, more than a core's cache holds, so a three-piece `Kg1 kg8 Rf1` at 10 M
//! games spent most of its time moving that bitset between the cache and memory. A window's
//! 8 KB stay in the first-level cache while every operand is applied to it, and a window that
//! one operand leaves empty reads no further operand there.

use crate::bitmap_dense::{CONTAINER, WORDS, fill, write_container};
use crate::bitmap_lookup::{ContainerBytes, StoredBitmap};

/// One bitmap of an intersection, in the form its reading gave.
pub(crate) enum Operand<'a> {
    /// Roaring's portable format (stored, or kept unpacked by the cache).
    Roaring(StoredBitmap<'a>),
    /// A packed bitmap's runs: sorted, disjoint, half-open.
    Runs(&'a [(u32, u32)]),
}

/// Words of one window handed to an intersection's caller: bit `i` of word `j` is position
/// `base + 64 j + i`.
pub const WINDOW_WORDS: usize = WORDS;

/// Hands `sink` each window of positions below `universe` that every operand holds something
/// in (ascending, from the window's first position; a window left empty is not handed over).
/// With no operand, every position is held.
pub(crate) fn intersect(
    operands: &[Operand<'_>],
    universe: u32,
    sink: &mut dyn FnMut(u32, &[u64; WINDOW_WORDS]),
) {
    let mut cursors: Vec<Cursor<'_>> = operands.iter().map(Cursor::new).collect();
    let (mut first, rest) = match cursors.split_first_mut() {
        Some((first, rest)) => (Some(first), rest),
        None => (None, &mut [][..]),
    };
    let mut window = [0u64; WORDS];
    let mut mask = [0u64; WORDS];
    for key in 0..universe.div_ceil(CONTAINER as u32) {
        // Windows are 2^16 positions and positions are u32: the key fits.
        let key = key as u16;
        let held = match first.as_mut() {
            Some(c) => c.write(key, &mut window),
            None => {
                window.fill(u64::MAX);
                true
            }
        };
        if !held || !rest.iter_mut().all(|c| c.and(key, &mut window, &mut mask)) {
            continue;
        }
        let base = u32::from(key) << 16;
        // The last window ends at the segment's last position.
        let end = universe - base;
        if (end as usize) < CONTAINER {
            let mut past = [0u64; WORDS];
            fill(&mut past, end as usize, CONTAINER - 1);
            let mut any = 0;
            for (w, p) in window.iter_mut().zip(past) {
                *w &= !p;
                any |= *w;
            }
            if any == 0 {
                continue;
            }
        }
        sink(base, &window);
    }
}

/// How far an operand has been read: windows are visited in ascending order.
enum Cursor<'a> {
    Containers {
        containers: Vec<(u16, ContainerBytes<'a>)>,
        at: usize,
    },
    Runs {
        runs: &'a [(u32, u32)],
        at: usize,
    },
}

impl<'a> Cursor<'a> {
    fn new(operand: &Operand<'a>) -> Self {
        match operand {
            Operand::Roaring(b) => Cursor::Containers {
                containers: b.containers().collect(),
                at: 0,
            },
            Operand::Runs(runs) => Cursor::Runs { runs, at: 0 },
        }
    }

    /// Writes the operand's members in window `key` to `window`; false if it has none there
    /// (`window` is then left as it was).
    fn write(&mut self, key: u16, window: &mut [u64; WORDS]) -> bool {
        match self {
            Cursor::Containers { containers, at } => {
                let Some(c) = container(containers, at, key) else {
                    return false;
                };
                write_container(c, window);
                true
            }
            Cursor::Runs { runs, at } => {
                window.fill(0);
                fill_runs(window, runs, at, key)
            }
        }
    }

    /// Keeps in `window` only the operand's members in window `key` (written to `mask`
    /// first); false if nothing is left.
    fn and(&mut self, key: u16, window: &mut [u64; WORDS], mask: &mut [u64; WORDS]) -> bool {
        if !self.write(key, mask) {
            return false;
        }
        let mut any = 0u64;
        for (w, m) in window.iter_mut().zip(mask.iter()) {
            *w &= m;
            any |= *w;
        }
        any != 0
    }
}

/// The container of window `key`, searched from `at` (left at the first container not below
/// `key`).
fn container<'c, 'a>(
    containers: &'c [(u16, ContainerBytes<'a>)],
    at: &mut usize,
    key: u16,
) -> Option<&'c ContainerBytes<'a>> {
    while containers.get(*at).is_some_and(|&(k, _)| k < key) {
        *at += 1;
    }
    containers
        .get(*at)
        .filter(|&&(k, _)| k == key)
        .map(|(_, c)| c)
}

/// Sets in `window` the parts of `runs` (from `at` on) within window `key`, leaving `at` at the
/// first run that reaches past the window (the next window may need it); false if none is in
/// the window.
fn fill_runs(window: &mut [u64; WORDS], runs: &[(u32, u32)], at: &mut usize, key: u16) -> bool {
    let base = u64::from(key) << 16;
    let end = base + CONTAINER as u64;
    let mut any = false;
    while let Some(&(s, e)) = runs.get(*at) {
        let (s, e) = (u64::from(s), u64::from(e));
        if e <= base {
            *at += 1;
            continue;
        }
        if s >= end {
            break;
        }
        let (from, to) = (s.max(base) - base, e.min(end) - base - 1);
        fill(window, from as usize, to as usize);
        any = true;
        if e > end {
            break;
        }
        *at += 1;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use roaring::RoaringBitmap;

    use crate::bitmap_lookup::tests::{runs_of, stored};

    proptest! {
        /// Any mix of stored forms (bitsets, arrays, run containers, packed runs) intersects to
        /// what roaring's own intersection gives, below the universe.
        #[test]
        fn windows_intersect_as_roaring_does(
            bitmaps in proptest::collection::vec(
                (
                    proptest::collection::vec((0u32..300_000, 0u32..70_000), 0..8),
                    proptest::collection::vec(0u32..330_000, 0..6000),
                    any::<bool>(),
                    any::<bool>(),
                ),
                0..4,
            ),
            universe in 0u32..340_000,
        ) {
            let stored: Vec<(RoaringBitmap, Vec<u8>, bool)> = bitmaps
                .into_iter()
                .map(|(ranges, singles, optimize, as_runs)| {
                    let (b, blob) = stored(ranges, singles, optimize);
                    (b, blob, as_runs)
                })
                .collect();
            let runs: Vec<Vec<(u32, u32)>> = stored.iter().map(|(b, _, _)| runs_of(b)).collect();
            let operands: Vec<Operand<'_>> = stored
                .iter()
                .zip(&runs)
                .map(|((_, blob, as_runs), r)| {
                    if *as_runs {
                        Operand::Runs(r)
                    } else {
                        Operand::Roaring(StoredBitmap::parse(blob).expect("parses"))
                    }
                })
                .collect();
            let mut want = RoaringBitmap::new();
            want.insert_range(0..universe);
            for (b, _, _) in &stored {
                want &= b;
            }
            let mut got = RoaringBitmap::new();
            intersect(&operands, universe, &mut |base, words| {
                assert!(words.iter().any(|&w| w != 0), "an empty window is not handed over");
                for (j, &w) in words.iter().enumerate() {
                    for i in 0..64 {
                        if w >> i & 1 == 1 {
                            got.insert(base + 64 * j as u32 + i);
                        }
                    }
                }
            });
            prop_assert_eq!(got, want);
        }
    }
}
