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
use crate::bitmap_lookup::{ContainerBytes, StoredBitmap, first};
use crate::bitmap_seek::{View, intersect_by_seeking};

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

/// The members of one window of an intersection, in the form that was cheaper to find them in.
#[derive(Clone, Copy, Debug)]
pub enum WindowSet<'a> {
    /// Bit `i` of word `j` is position `base + 64 j + i`.
    Words(&'a [u64; WINDOW_WORDS]),
    /// Half-open runs of positions, ascending and disjoint, not empty.
    Runs(&'a [(u32, u32)]),
}

/// At most this many runs (or single members) in the first operand's part of a window, and the
/// window is intersected by seeking from run to run ([`crate::bitmap_seek`]) rather than
/// written out as words: each seek costs a few nanoseconds, writing an operand's window out
/// about a microsecond and then a nanosecond per run.
const SEEK_RUNS: usize = 256;

/// Hands `sink` each window of positions below `universe` that every operand holds something
/// in (ascending, from the window's first position; a window left empty is not handed over).
/// With no operand, every position is held.
pub(crate) fn intersect(
    operands: &[Operand<'_>],
    universe: u32,
    sink: &mut dyn FnMut(u32, WindowSet<'_>),
) {
    intersect_seeking_below(operands, universe, SEEK_RUNS, sink);
}

/// [`intersect`], seeking in windows whose first operand holds at most `seek_runs` runs there.
fn intersect_seeking_below(
    operands: &[Operand<'_>],
    universe: u32,
    seek_runs: usize,
    sink: &mut dyn FnMut(u32, WindowSet<'_>),
) {
    let mut cursors: Vec<Cursor<'_>> = operands.iter().map(Cursor::new).collect();
    let mut window = [0u64; WORDS];
    let mut mask = [0u64; WORDS];
    let mut parts = Vec::with_capacity(operands.len());
    let mut views = Vec::with_capacity(operands.len());
    let (mut runs, mut scratch) = (Vec::new(), Vec::new());
    'windows: for key in 0..universe.div_ceil(CONTAINER as u32) {
        // Windows are 2^16 positions and positions are u32: the key fits.
        let key = key as u16;
        let base = u32::from(key) << 16;
        // The last window ends at the segment's last position.
        let end = universe - base;
        parts.clear();
        for c in &mut cursors {
            match c.part(key) {
                Some(part) => parts.push(part),
                None => continue 'windows,
            }
        }
        // The operands come sparsest first (by positions, not runs: a broad operand of a few
        // long runs, the main line of games without variations, listed first would be
        // narrowed run by run by every other).
        if parts
            .first()
            .and_then(Part::runs)
            .is_some_and(|n| n <= seek_runs)
        {
            views.clear();
            views.extend(parts.iter().map(|p| p.view(base)));
            let limit = end.min(CONTAINER as u32);
            intersect_by_seeking(&views, base, limit, &mut runs, &mut scratch);
            if !runs.is_empty() {
                sink(base, WindowSet::Runs(&runs));
            }
            continue;
        }
        match parts.first() {
            Some(part) => part.write(base, &mut window),
            None => window.fill(u64::MAX),
        }
        for part in parts.iter().skip(1) {
            part.write(base, &mut mask);
            let mut any = 0u64;
            for (w, m) in window.iter_mut().zip(mask.iter()) {
                *w &= m;
                any |= *w;
            }
            if any == 0 {
                continue 'windows;
            }
        }
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
        sink(base, WindowSet::Words(&window));
    }
}

/// An operand's members in one window, as stored.
#[derive(Clone, Copy)]
enum Part<'a> {
    Container(ContainerBytes<'a>),
    /// The packed runs that meet the window (the first may begin before it, the last end
    /// after it).
    Runs(&'a [(u32, u32)]),
}

impl<'a> Part<'a> {
    /// Runs (or single members) held; `None` for a bitset.
    fn runs(&self) -> Option<usize> {
        match self {
            Part::Container(ContainerBytes::Runs(pairs)) => Some(pairs.len() / 4),
            Part::Container(ContainerBytes::Array(values)) => Some(values.len() / 2),
            Part::Container(ContainerBytes::Bitset(_)) => None,
            Part::Runs(runs) => Some(runs.len()),
        }
    }

    fn view(self, base: u32) -> View<'a> {
        match self {
            Part::Container(c) => View::of_container(c),
            Part::Runs(runs) => View::Packed { runs, base },
        }
    }

    /// Writes the part's members into `window` (the window starting at position `base`).
    fn write(self, base: u32, window: &mut [u64; WORDS]) {
        match self {
            Part::Container(c) => write_container(&c, window),
            Part::Runs(runs) => {
                window.fill(0);
                let (base, end) = (u64::from(base), u64::from(base) + CONTAINER as u64);
                for &(s, e) in runs {
                    let (s, e) = (u64::from(s).max(base), u64::from(e).min(end));
                    if s < e {
                        fill(window, (s - base) as usize, (e - base - 1) as usize);
                    }
                }
            }
        }
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

    /// The operand's members in window `key`; `None` if it has none there.
    fn part(&mut self, key: u16) -> Option<Part<'a>> {
        match self {
            Cursor::Containers { containers, at } => {
                container(containers, at, key).map(|&c| Part::Container(c))
            }
            Cursor::Runs { runs, at } => {
                let runs: &'a [(u32, u32)] = runs;
                let base = u64::from(key) << 16;
                let end = base + CONTAINER as u64;
                *at = first(*at, runs.len(), |i| u64::from(runs[i].1) > base);
                let past = first(*at, runs.len(), |i| u64::from(runs[i].0) >= end);
                let part = &runs[*at..past];
                // The last run may reach into the next window: it is read there again.
                *at = match part.last() {
                    Some(&(_, e)) if u64::from(e) > end => past - 1,
                    _ => past,
                };
                (!part.is_empty()).then_some(Part::Runs(part))
            }
        }
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
            seek_runs in prop_oneof![Just(0usize), 1usize..64, Just(usize::MAX)],
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
            let mut last = None;
            intersect_seeking_below(&operands, universe, seek_runs, &mut |base, set| {
                assert!(last.is_none_or(|l| l < base), "windows ascending, each once");
                last = Some(base);
                match set {
                    WindowSet::Words(words) => {
                        assert!(words.iter().any(|&w| w != 0), "an empty window is not handed over");
                        for (j, &w) in words.iter().enumerate() {
                            for i in 0..64 {
                                if w >> i & 1 == 1 {
                                    got.insert(base + 64 * j as u32 + i);
                                }
                            }
                        }
                    }
                    WindowSet::Runs(runs) => {
                        assert!(!runs.is_empty(), "an empty window is not handed over");
                        assert!(runs.windows(2).all(|w| w[0].1 <= w[1].0), "ascending, disjoint");
                        for &(s, e) in runs {
                            assert!(s < e && s >= base && e <= base + CONTAINER as u32);
                            got.insert_range(s..e);
                        }
                    }
                }
            });
            prop_assert_eq!(got, want);
        }
    }
}
