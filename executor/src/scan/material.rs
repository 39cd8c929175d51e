//! Material scans of one segment: the material-signature bitmaps that pass a plan's
//! [`MaterialTest`]s, found by the one key an exact material fixes or by a search through the
//! segment's signatures (`signature_search.rs`).

use cqldb_planner::ast::CmpOp;
use cqldb_planner::plan::MaterialTest;
use cqldb_storage::{BitmapKey, MaterialSignature};
use shakmaty::Role;

use super::signature_search::{Counted, passing};
use super::{SegmentScan, piece};

impl SegmentScan<'_> {
    /// The bitmaps of the segment's material signatures that pass `tests`.
    pub(super) fn passing_materials(
        &mut self,
        tests: &[MaterialTest],
    ) -> cqldb_storage::Result<&[BitmapKey]> {
        let at = match self.passing.iter().position(|(t, _)| t == tests) {
            Some(at) => at,
            None => {
                let keys = match fixed_signature(tests) {
                    Some(sig) => {
                        let key = BitmapKey::Material(sig);
                        self.seg
                            .has_bitmap(key)?
                            .then_some(key)
                            .into_iter()
                            .collect()
                    }
                    None => self.tested_materials(tests)?,
                };
                self.passing.push((tests.to_vec(), keys));
                self.passing.len() - 1
            }
        };
        Ok(&self.passing[at].1)
    }

    /// The bitmaps of the segment's material signatures that pass `tests`, found by a search
    /// that skips the stretches of signatures no test can pass (`signature_search.rs`).
    fn tested_materials(&self, tests: &[MaterialTest]) -> cqldb_storage::Result<Vec<BitmapKey>> {
        let counted: Vec<Counted> = tests.iter().map(Counted::new).collect();
        Ok(passing(self.seg.signatures()?, &counted)
            .into_iter()
            .map(BitmapKey::Material)
            .collect())
    }
}

/// The one signature that passes `tests` when they fix the count of each of the ten counted
/// kinds of piece (an exact `fen`'s material): looked up by its key instead of testing each of
/// the segment's thousands of signatures. `None` when the tests leave a count open, repeat a
/// kind or ask a count no signature holds (the general test then answers).
fn fixed_signature(tests: &[MaterialTest]) -> Option<MaterialSignature> {
    let mut fixed = 0u16;
    let mut sig = 0u64;
    for t in tests {
        let i = t.pieces.trailing_zeros() as usize;
        let (color, role) = piece(i.min(11));
        let fresh = t.pieces.count_ones() == 1 && fixed & t.pieces == 0 && role != Role::King;
        if t.op != CmpOp::Eq || !fresh || !(0..15).contains(&t.count) {
            return None;
        }
        fixed |= t.pieces;
        // A kind's count bits are four ones: a fifteenth of them is its unit.
        sig |= MaterialSignature::count_bits(color, role) / 15 * t.count as u64;
    }
    const KINGS: u16 = 1 << 5 | 1 << 11;
    (fixed == 0xfff & !KINGS).then_some(MaterialSignature(sig))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::piece;
    use proptest::prelude::*;

    /// Whether a signature passes the tests as the general path tests it.
    fn passes(sig: MaterialSignature, tests: &[MaterialTest]) -> bool {
        tests.iter().all(|t| Counted::new(t).passes(sig))
    }

    fn signature(counts: &[u8; 10]) -> MaterialSignature {
        let kinds = (0..12).filter(|&i| i != 5 && i != 11);
        MaterialSignature(kinds.zip(counts).fold(0, |sig, (i, &n)| {
            let (color, role) = piece(i);
            sig | (MaterialSignature::count_bits(color, role) / 15 * u64::from(n))
        }))
    }

    proptest! {
        /// The signature found by key is exactly the one the general test passes.
        #[test]
        fn a_fixed_material_is_the_one_signature_passing(
            want in proptest::array::uniform10(0u8..11),
            other in proptest::array::uniform10(0u8..16),
            order in any::<u64>(),
            missing in 0usize..11,
        ) {
            let mut tests: Vec<MaterialTest> = (0..12)
                .filter(|&i| i != 5 && i != 11)
                .zip(want)
                .map(|(i, n)| MaterialTest { pieces: 1 << i, op: CmpOp::Eq, count: i64::from(n) })
                .collect();
            tests.rotate_left((order % 10) as usize);
            let sig = fixed_signature(&tests);
            prop_assert_eq!(sig, Some(signature(&want)));
            prop_assert!(passes(signature(&want), &tests));
            prop_assert_eq!(passes(signature(&other), &tests), other == want);
            // A kind left open: no fixed signature.
            if missing < 10 {
                tests.remove(missing);
                prop_assert_eq!(fixed_signature(&tests), None);
            }
        }
    }

    #[test]
    fn tests_that_do_not_fix_every_count_are_tested_one_by_one() {
        let eq = |pieces: u16, count: i64| MaterialTest {
            pieces,
            op: CmpOp::Eq,
            count,
        };
        let all: Vec<MaterialTest> = (0..12)
            .filter(|&i| i != 5 && i != 11)
            .map(|i| eq(1 << i, 1))
            .collect();
        assert!(fixed_signature(&all).is_some());
        let mut twice = all.clone();
        twice.push(eq(1, 2));
        assert_eq!(fixed_signature(&twice), None);
        let mut ranged = all.clone();
        ranged[0].op = CmpOp::Le;
        assert_eq!(fixed_signature(&ranged), None);
        let mut kings = all.clone();
        kings.push(eq(1 << 5, 1));
        assert_eq!(fixed_signature(&kings), None);
        let mut two_kinds = all;
        two_kinds[0].pieces = 0b11;
        assert_eq!(fixed_signature(&two_kinds), None);
    }
}
