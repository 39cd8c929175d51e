//! The material signatures of a segment that pass a plan's material tests, found without
//! testing each one.
//!
//! A signature is ten four-bit counts, and a segment's signatures are sorted, so those sharing
//! their upper counts are one stretch. The search fixes the counts from the most significant
//! down (black queens first, white pawns last), bisecting each stretch into the stretches of
//! the next count's values; a stretch is dropped as soon as the counts fixed so far fail a
//! test whatever the others hold, and taken whole as soon as they pass every test whatever
//! the others hold. A database of ten million synthetic games has some 67,000 signatures per
//! segment: testing each of them for `flipcolor {#A == 2 #P == 1 #a == 1}` cost 45 ms over
//! 144 segments, where the descent reads a few dozen (BENCHMARKS.md). Where the counts being
//! fixed bound no test from above (no `==`, `<` or `<=` reads them), bisecting prunes nothing,
//! and the stretch is tested one signature at a time.

use std::ops::Range;

use cqldb_planner::ast::CmpOp;
use cqldb_planner::plan::MaterialTest;
use cqldb_storage::bitmap_lookup::first;
use cqldb_storage::{MaterialSignature, Signatures};
use shakmaty::Role;

use super::piece;

/// A stretch this short is tested one signature at a time: cheaper than bisecting it.
const LINEAR: usize = 32;
/// A signature holds ten counts of four bits.
const COUNTS: u32 = 10;

/// A material test as a signature is tested against it.
#[derive(Copy, Clone, Debug)]
pub(super) struct Counted {
    /// The bits of the counts the test sums ([`MaterialSignature::total`]).
    mask: u64,
    /// The kings among its pieces (one each, not in a signature).
    kings: i64,
    op: CmpOp,
    count: i64,
}

impl Counted {
    pub(super) fn new(t: &MaterialTest) -> Self {
        let mut mask = 0;
        let mut kings = 0;
        for i in (0..12).filter(|i| t.pieces >> i & 1 == 1) {
            let (color, role) = piece(i);
            if role == Role::King {
                kings += 1;
            } else {
                mask |= MaterialSignature::count_bits(color, role);
            }
        }
        Self {
            mask,
            kings,
            op: t.op,
            count: t.count,
        }
    }

    pub(super) fn passes(&self, sig: MaterialSignature) -> bool {
        let n = i64::from(sig.total(self.mask)) + self.kings;
        self.verdict(n, n).0
    }

    /// Whether some total in `lo..=hi` passes, and whether every one does.
    fn verdict(&self, lo: i64, hi: i64) -> (bool, bool) {
        let c = self.count;
        match self.op {
            CmpOp::Eq => (lo <= c && c <= hi, lo == c && hi == c),
            CmpOp::Ne => (!(lo == c && hi == c), c < lo || hi < c),
            CmpOp::Lt => (lo < c, hi < c),
            CmpOp::Le => (lo <= c, hi <= c),
            CmpOp::Gt => (c < hi, c < lo),
            CmpOp::Ge => (c <= hi, c <= lo),
        }
    }

    /// Whether a total of at least `lo` fails: a bound from above already passed, which a
    /// larger count can only pass further.
    fn exceeded(&self, lo: i64) -> bool {
        match self.op {
            CmpOp::Eq | CmpOp::Le => lo > self.count,
            CmpOp::Lt => lo >= self.count,
            CmpOp::Ne | CmpOp::Gt | CmpOp::Ge => false,
        }
    }

    /// Whether the test sums count `j` (0 = white pawns ... 9 = black queens).
    fn reads(&self, j: u32) -> bool {
        self.mask >> (4 * j) & 15 != 0
    }

    /// How many of the counts below `j` the test sums.
    fn open_below(&self, j: u32) -> i64 {
        i64::from((self.mask & ((1u64 << (4 * j)) - 1)).count_ones() / 4)
    }
}

/// Signatures in ascending order, read by index.
pub(super) trait SortedSignatures: Copy {
    fn len(&self) -> usize;
    /// The `i`-th (`i < len()`).
    fn get(&self, i: usize) -> MaterialSignature;
}

impl SortedSignatures for Signatures<'_> {
    fn len(&self) -> usize {
        Signatures::len(self)
    }
    fn get(&self, i: usize) -> MaterialSignature {
        Signatures::get(self, i)
    }
}

impl SortedSignatures for &[MaterialSignature] {
    fn len(&self) -> usize {
        <[MaterialSignature]>::len(self)
    }
    fn get(&self, i: usize) -> MaterialSignature {
        self[i]
    }
}

/// The signatures of `sigs` passing every test, ascending.
pub(super) fn passing<S: SortedSignatures>(sigs: S, tests: &[Counted]) -> Vec<MaterialSignature> {
    let mut search = Search {
        sigs,
        tests,
        out: Vec::new(),
    };
    let low: Vec<i64> = tests.iter().map(|t| t.kings).collect();
    search.stretch(0..sigs.len(), COUNTS, &low);
    search.out
}

struct Search<'t, S> {
    sigs: S,
    tests: &'t [Counted],
    out: Vec<MaterialSignature>,
}

impl<S: SortedSignatures> Search<'_, S> {
    /// The signatures of `range`, which agree on their counts from `unfixed` up; `low[t]` is
    /// what test `t` sums of those counts (plus its kings). Depth is at most [`COUNTS`].
    fn stretch(&mut self, range: Range<usize>, unfixed: u32, low: &[i64]) {
        let mut every = true;
        for (t, &lo) in self.tests.iter().zip(low) {
            let (some, all) = t.verdict(lo, lo + 15 * t.open_below(unfixed));
            if !some {
                return;
            }
            every &= all;
        }
        let sigs = self.sigs;
        if every {
            self.out.extend(range.map(|i| sigs.get(i)));
            return;
        }
        // With every count fixed the verdicts above were exact: all passed or one failed.
        let Some(j) = unfixed.checked_sub(1) else {
            return;
        };
        if range.len() <= LINEAR || !self.tests.iter().any(|t| t.reads(j) && bounds_above(t)) {
            let tests = self.tests;
            self.out.extend(
                range
                    .map(|i| sigs.get(i))
                    .filter(|&s| tests.iter().all(|t| t.passes(s))),
            );
            return;
        }
        let count = |i: usize| (sigs.get(i).0 >> (4 * j)) & 15;
        let mut at = range.start;
        let mut child = low.to_vec();
        while at < range.end {
            let v = count(at) as i64;
            for ((c, &lo), t) in child.iter_mut().zip(low).zip(self.tests) {
                *c = lo + if t.reads(j) { v } else { 0 };
            }
            // Counts ascend through the stretch: once one exceeds a bound, the rest do too.
            if self
                .tests
                .iter()
                .zip(&child)
                .any(|(t, &lo)| t.reads(j) && t.exceeded(lo))
            {
                return;
            }
            let end = first(at, range.end, |i| count(i) as i64 > v);
            self.stretch(at..end, j, &child);
            at = end;
        }
    }
}

/// Whether a test bounds its total from above (`==`, `<`, `<=`): only those let a large count
/// drop a stretch.
fn bounds_above(t: &Counted) -> bool {
    matches!(t.op, CmpOp::Eq | CmpOp::Lt | CmpOp::Le)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn op(i: u8) -> CmpOp {
        [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
        ][usize::from(i % 6)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// The descent finds exactly the signatures that testing each one finds. Counts are
        /// mostly small (as in games) so that stretches share their upper counts, with some
        /// at the saturated 15.
        #[test]
        fn the_descent_finds_what_testing_each_finds(
            raw in proptest::collection::vec(proptest::array::uniform10(
                prop_oneof![6 => 0u64..3, 2 => 0u64..9, 1 => Just(15u64)]), 0..700),
            tests in proptest::collection::vec((1u16..4096, any::<u8>(), -2i64..20), 1..4),
        ) {
            let mut sigs: Vec<MaterialSignature> = raw
                .iter()
                .map(|c| MaterialSignature(c.iter().enumerate().fold(0, |s, (i, &n)| s | n << (4 * i))))
                .collect();
            sigs.sort();
            sigs.dedup();
            let tests: Vec<Counted> = tests
                .iter()
                .map(|&(pieces, o, count)| Counted::new(&MaterialTest { pieces, op: op(o), count }))
                .collect();
            let want: Vec<MaterialSignature> = sigs
                .iter()
                .copied()
                .filter(|&s| tests.iter().all(|t| t.passes(s)))
                .collect();
            prop_assert_eq!(passing(&sigs[..], &tests), want);
        }
    }
}
