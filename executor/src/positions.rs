//! A set of a segment's positions, kept sparse (a roaring bitmap) or dense (a bitset over every
//! position of the segment), and the set arithmetic between the two forms.
//!
//! Why two forms: a rare flag or a `fen` selects a few positions, which roaring keeps in a few
//! bytes and a dense set would spend a bit on each of the segment's million positions for. A
//! broad one (`check`, a king on its castled square) selects a twentieth to a third of them:
//! there roaring's containers are bitsets and runs, every intersection turns runs into bitsets,
//! and finding the games of the result steps through each member, while over a plain bitset each
//! operation is one pass over words and a game is tested in the one or two words its positions
//! span (see `cqldb_storage::bitmap_dense`, which reads stored bitmaps into this form). The
//! scan picks the form from the stored bitmaps' sizes; every operation here means the same on
//! either form, which the property tests check.

use cqldb_storage::bitmap_window::{WINDOW_WORDS, WindowSet};
use fixedbitset::FixedBitSet;
use roaring::{MultiOps, RoaringBitmap};

/// A set holding more than this fraction of a segment's positions (one in `DENSE`) is kept
/// dense: past it, a bitset's pass over every word costs less than roaring's steps per member.
pub const DENSE: u64 = 128;

/// A set of positions of one segment.
#[derive(Debug, Clone)]
pub enum Positions {
    Sparse(RoaringBitmap),
    /// A bitset whose length is the segment's number of positions.
    Dense(FixedBitSet),
}

impl Positions {
    /// How many positions are in the set.
    pub fn len(&self) -> u64 {
        match self {
            Self::Sparse(p) => p.len(),
            Self::Dense(d) => d.count_ones(..) as u64,
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Self::Sparse(p) => p.is_empty(),
            Self::Dense(d) => d.is_clear(),
        }
    }

    /// Whether a position of `a..b` is in the set.
    pub fn any_in(&self, a: u32, b: u32) -> bool {
        match self {
            Self::Sparse(p) => a < b && (p.contains(a) || p.range_cardinality(a..b) > 0),
            Self::Dense(d) => any_in_words(d.as_slice(), a as usize, (b as usize).min(d.len())),
        }
    }

    /// How many positions of `a..b` are in the set.
    pub fn count_in(&self, a: u32, b: u32) -> u64 {
        match self {
            Self::Sparse(p) => p.range_cardinality(a..b),
            Self::Dense(d) => {
                let b = (b as usize).min(d.len());
                if (a as usize) < b {
                    d.count_ones(a as usize..b) as u64
                } else {
                    0
                }
            }
        }
    }

    /// The positions in both sets: dense when both are, otherwise the sparse one's members that
    /// the other holds.
    pub fn and(self, other: Positions) -> Positions {
        match (self, other) {
            (Self::Sparse(a), Self::Sparse(b)) => Self::Sparse(a & b),
            (Self::Dense(mut a), Self::Dense(b)) => {
                a.intersect_with(&b);
                Self::Dense(a)
            }
            (Self::Sparse(s), Self::Dense(d)) | (Self::Dense(d), Self::Sparse(s)) => {
                if s.len().saturating_mul(DENSE) >= d.len() as u64 {
                    // Testing each of many members costs more than a pass over the words.
                    return Self::Sparse(Self::Dense(d).into_sparse() & s);
                }
                // Ascending and distinct, as the sparse set's members are.
                Self::Sparse(
                    RoaringBitmap::from_sorted_iter(s.iter().filter(|&p| d.contains(p as usize)))
                        .unwrap_or_default(),
                )
            }
        }
    }

    /// The positions in any of `parts` (of a segment of `universe` positions): sparse when
    /// every part is.
    pub fn union(parts: Vec<Positions>, universe: u32) -> Positions {
        if parts.iter().all(|p| matches!(p, Self::Sparse(_))) {
            return Self::Sparse(
                parts
                    .into_iter()
                    .filter_map(|p| match p {
                        Self::Sparse(p) => Some(p),
                        Self::Dense(_) => None,
                    })
                    .union(),
            );
        }
        let mut out = FixedBitSet::with_capacity(universe as usize);
        for p in parts {
            match p {
                Self::Dense(d) => out.union_with(&d),
                Self::Sparse(s) => insert_sparse(&mut out, &s),
            }
        }
        Self::Dense(out)
    }

    /// The set as a roaring bitmap.
    pub fn into_sparse(self) -> RoaringBitmap {
        match self {
            Self::Sparse(p) => p,
            Self::Dense(d) => to_roaring(&d),
        }
    }
}

/// A set of positions made window by window by an intersection
/// ([`cqldb_storage::segment::Segment::bitmaps_and`]): sparse while its windows are sparse,
/// dense from the first window (or the first total) holding one in [`DENSE`] of its positions,
/// what it held so far moved over once. A few members are pushed one by one; a broad result's
/// windows are copied a word at a time, as the dense form reads them.
pub struct WindowedPositions {
    universe: u32,
    len: u64,
    sparse: RoaringBitmap,
    dense: Option<FixedBitSet>,
}

impl WindowedPositions {
    pub fn new(universe: u32) -> Self {
        Self {
            universe,
            len: 0,
            sparse: RoaringBitmap::new(),
            dense: None,
        }
    }

    /// Adds the members of a window starting at position `base`, past every member so far.
    pub fn push(&mut self, base: u32, set: WindowSet<'_>) {
        let words = match set {
            WindowSet::Words(words) => words,
            WindowSet::Runs(runs) => return self.push_runs(runs),
        };
        self.count_window(words.iter().map(|w| u64::from(w.count_ones())).sum());
        if let Some(d) = &mut self.dense {
            copy_words(d, base, words);
            return;
        }
        for (j, &w) in words.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                // Ascending: each member is past the last one pushed.
                let _ = self
                    .sparse
                    .try_push(base + 64 * j as u32 + w.trailing_zeros());
                w &= w - 1;
            }
        }
    }

    /// Counts a window of `count` members about to be added: the set turns dense from a broad
    /// window on, or from a broad total.
    fn count_window(&mut self, count: u64) {
        self.len += count;
        if self.dense.is_none()
            && (count.saturating_mul(DENSE) >= 64 * WINDOW_WORDS as u64
                || self.len.saturating_mul(DENSE) >= u64::from(self.universe))
        {
            let mut d = FixedBitSet::with_capacity(self.universe as usize);
            insert_sparse(&mut d, &std::mem::take(&mut self.sparse));
            self.dense = Some(d);
        }
    }

    /// Adds runs of positions, ascending and past every member so far.
    fn push_runs(&mut self, runs: &[(u32, u32)]) {
        self.count_window(runs.iter().map(|&(s, e)| u64::from(e - s)).sum());
        match &mut self.dense {
            Some(d) => {
                for &(s, e) in runs {
                    let (s, e) = (s as usize, (e as usize).min(d.len()));
                    if s < e {
                        d.insert_range(s..e);
                    }
                }
            }
            None => {
                for &(s, e) in runs {
                    // A short run member by member: roaring's range insertion costs more.
                    if e - s <= 8 {
                        (s..e).for_each(|x| {
                            let _ = self.sparse.try_push(x);
                        });
                    } else {
                        self.sparse.insert_range(s..e);
                    }
                }
            }
        }
    }

    /// How many positions the set holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn finish(self) -> Positions {
        match self.dense {
            Some(d) => Positions::Dense(d),
            None => Positions::Sparse(self.sparse),
        }
    }
}

/// Adds the members of `s` to `d` (those past its length are dropped).
fn insert_sparse(d: &mut FixedBitSet, s: &RoaringBitmap) {
    let len = d.len();
    s.iter()
        .filter(|&x| (x as usize) < len)
        .for_each(|x| d.insert(x as usize));
}

/// Writes a window's words into `d` from position `base` (a multiple of 65,536; words past the
/// set are dropped, and the window holds nothing past the set's length).
fn copy_words(d: &mut FixedBitSet, base: u32, words: &[u64; WINDOW_WORDS]) {
    const WORD: usize = usize::BITS as usize;
    let slice = d.as_mut_slice();
    for (j, &w) in words.iter().enumerate() {
        for k in 0..64 / WORD {
            if let Some(x) = slice.get_mut((base as usize + 64 * j) / WORD + k) {
                *x = (w >> (k * WORD)) as usize;
            }
        }
    }
}

/// The members of a dense set as a roaring bitmap, a word at a time.
pub fn to_roaring(d: &FixedBitSet) -> RoaringBitmap {
    let bytes: Vec<u8> = d.as_slice().iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut p = RoaringBitmap::from_lsb0_bytes(0, &bytes);
    // Whole words were copied: nothing past the set's length is set in them.
    p.remove_range(d.len() as u32..);
    p
}

/// The members of a dense set known to hold few, as a roaring bitmap: read off its words,
/// without the byte copy of the set [`to_roaring`] makes.
pub fn few_to_roaring(d: &FixedBitSet) -> RoaringBitmap {
    RoaringBitmap::from_sorted_iter(d.ones().map(|x| x as u32)).unwrap_or_default()
}

/// The games (numbered from 0) whose positions hold a member of `d`, game `i` having
/// positions `starts[i]..starts[i + 1]`.
///
/// Without branches on the data: whether a game matches, and whether its positions fit in one
/// word, are both close to coin flips over a broad query's games, and their mispredictions
/// were most of the time this took; the answers are combined with masks and written as bits.
pub fn games_of_dense(d: &FixedBitSet, starts: &[u32]) -> RoaringBitmap {
    let (words, len) = (d.as_slice(), d.len());
    let mut bits = vec![0u8; starts.len().saturating_sub(1).div_ceil(8)];
    for (g, w) in starts.windows(2).enumerate() {
        let hit = any_in_words(words, w[0] as usize, (w[1] as usize).min(len));
        bits[g / 8] |= u8::from(hit) << (g % 8);
    }
    RoaringBitmap::from_lsb0_bytes(0, &bits)
}

/// Whether a bit of `a..b` is set in `words` (`b` within them). A game's positions span a word
/// or two, and finding a dense set's games asks this once per game: the words are read
/// directly, and the one-word and several-word cases are combined with masks rather than
/// branched on.
#[inline]
fn any_in_words(words: &[usize], a: usize, b: usize) -> bool {
    const WORD: usize = usize::BITS as usize;
    if a >= b {
        return false;
    }
    let (i, j) = (a / WORD, (b - 1) / WORD);
    let (Some(&first), Some(&last), Some(middle)) =
        (words.get(i), words.get(j), words.get(i + 1..j.max(i + 1)))
    else {
        return false;
    };
    let low = usize::MAX << (a % WORD);
    let high = usize::MAX >> (WORD - 1 - (b - 1) % WORD);
    // All ones when `a..b` spans several words, none when it fits in one.
    let several = usize::from(i != j).wrapping_neg();
    let head = first & low & (high | several);
    let tail = last & high & several;
    let inner = middle.iter().fold(0, |acc, &x| acc | x);
    head | tail | inner != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The games of a dense set are the games holding one of its members.
        #[test]
        fn games_of_dense_finds_every_game_with_a_member(
            lengths in proptest::collection::vec(0u32..200, 1..60),
            xs in proptest::collection::vec(0u32..12_000, 0..400),
            cut in 0u32..64,
        ) {
            let mut starts = vec![0u32];
            for l in &lengths {
                starts.push(starts.last().copied().unwrap_or(0) + l);
            }
            // A set shorter than the games' positions (members past it do not count).
            let total = starts.last().copied().unwrap_or(0);
            let len = total.saturating_sub(cut) as usize;
            let mut d = FixedBitSet::with_capacity(len);
            xs.iter().filter(|&&x| (x as usize) < len).for_each(|&x| d.insert(x as usize));
            let naive: RoaringBitmap = (0..lengths.len() as u32)
                .filter(|&g| (starts[g as usize]..starts[g as usize + 1]).any(|p| d.contains(p as usize)))
                .collect();
            prop_assert_eq!(games_of_dense(&d, &starts), naive);
        }

        /// The dense form answers `any_in`, `count_in`, `and` and `union` as the sparse one.
        #[test]
        fn both_forms_agree(
            len in 1u32..2000,
            xs in proptest::collection::vec(0u32..2000, 0..300),
            ys in proptest::collection::vec(0u32..2000, 0..300),
            ranges in proptest::collection::vec((0u32..2000, 0u32..200), 1..40),
        ) {
            let sparse = |v: &[u32]| -> RoaringBitmap { v.iter().map(|x| x % len).collect() };
            let dense = |v: &[u32]| {
                let mut d = FixedBitSet::with_capacity(len as usize);
                v.iter().for_each(|x| d.insert((x % len) as usize));
                Positions::Dense(d)
            };
            let (sx, sy) = (sparse(&xs), sparse(&ys));
            for &(a, n) in &ranges {
                let (a, b) = (a % len, (a % len + n).min(len));
                let naive = sx.range_cardinality(a..b);
                prop_assert_eq!(dense(&xs).any_in(a, b), naive > 0);
                prop_assert_eq!(dense(&xs).count_in(a, b), naive);
                prop_assert_eq!(Positions::Sparse(sx.clone()).any_in(a, b), naive > 0);
            }
            let both = &sx & &sy;
            prop_assert_eq!(dense(&xs).and(dense(&ys)).into_sparse(), both.clone());
            prop_assert_eq!(dense(&xs).and(Positions::Sparse(sy.clone())).into_sparse(), both.clone());
            prop_assert_eq!(Positions::Sparse(sx.clone()).and(dense(&ys)).into_sparse(), both);
            let either = &sx | &sy;
            let u = Positions::union(vec![dense(&xs), Positions::Sparse(sy.clone())], len);
            prop_assert_eq!(u.len(), either.len());
            prop_assert_eq!(u.into_sparse(), either);
        }

        /// Windows pushed in order make the set of their members, sparse or dense (a broad
        /// window, or enough of them, turns it dense midway), counted as they come.
        #[test]
        fn windowed_positions_hold_their_windows(
            universe in 1u32..400_000,
            windows in proptest::collection::vec(
                (any::<bool>(), proptest::collection::vec(0u32..65_536, 0..40), 0u32..65_536, 0u32..3000),
                0..7,
            ),
        ) {
            let mut w = WindowedPositions::new(universe);
            let mut want = RoaringBitmap::new();
            for (key, (used, singles, start, len)) in windows.into_iter().enumerate() {
                let base = (key as u32) << 16;
                if !used || base >= universe {
                    continue;
                }
                let mut members: RoaringBitmap =
                    singles.into_iter().map(|x| base + x).collect();
                members.insert_range(base + start..base + (start + len).min(65_536));
                members.remove_range(universe..);
                if members.is_empty() {
                    continue;
                }
                // Every other window as runs, the form a seeking intersection hands over.
                if key % 2 == 1 {
                    let mut runs: Vec<(u32, u32)> = Vec::new();
                    for x in &members {
                        match runs.last_mut() {
                            Some(r) if r.1 == x => r.1 = x + 1,
                            _ => runs.push((x, x + 1)),
                        }
                    }
                    w.push(base, WindowSet::Runs(&runs));
                } else {
                    let mut words = [0u64; WINDOW_WORDS];
                    for x in &members {
                        let i = (x - base) as usize;
                        words[i / 64] |= 1 << (i % 64);
                    }
                    w.push(base, WindowSet::Words(&words));
                }
                want |= members;
            }
            prop_assert_eq!(w.len(), want.len());
            let got = w.finish();
            if let Positions::Dense(d) = &got {
                prop_assert_eq!(d.len(), universe as usize);
            }
            prop_assert_eq!(got.into_sparse(), want);
        }
    }
}
