//! `index_bounds`: what the index knows of the query body.

use super::{Draft, Rule};
use crate::plan::Scan;
use crate::plan::index_rule::body_bounds;

/// Replaces the draft's bounds with the body's (see [`crate::plan::bounds`]): position flags,
/// pieces on squares and piece counts become scans of their bitmaps, `and`/`or`/`not` and
/// transforms combine them, filters at other positions give game-level bounds.
pub struct IndexBounds;

impl Rule for IndexBounds {
    fn name(&self) -> &'static str {
        "index_bounds"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        if d.no_pruning.is_some() {
            return None;
        }
        let b = body_bounds(&d.logical.query.body, d.logical.variations);
        if b.upper == Scan::All {
            // No candidates, but what is known to match is kept for later rules.
            d.lower = b.lower;
            return None;
        }
        let note = if b.is_exact() {
            "the body is an index expression (exact)".to_owned()
        } else {
            "candidates from the body's index-friendly parts".to_owned()
        };
        d.upper = b.upper;
        d.lower = b.lower;
        Some(note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PositionFlag;
    use crate::plan::rules::tests::draft;

    #[test]
    fn flags_and_unknown_filters() {
        let mut d = draft("mate");
        assert!(IndexBounds.apply(&mut d).is_some());
        assert_eq!(d.upper, Scan::Flag(PositionFlag::Mate));
        assert_eq!(d.lower, d.upper);
        let mut d = draft("mate K attacks q");
        IndexBounds.apply(&mut d);
        assert_eq!(d.upper, Scan::Flag(PositionFlag::Mate));
        assert_eq!(d.lower, Scan::Empty);
        // Nothing the index knows: no candidates.
        let mut d = draft("K attacks q");
        assert!(IndexBounds.apply(&mut d).is_none());
        assert_eq!(d.upper, Scan::All);
    }

    #[test]
    fn not_swaps_the_bounds() {
        let mut d = draft("not (mate and K attacks q)");
        IndexBounds.apply(&mut d);
        // not(mate and X): upper = not(lower) = not(Empty) = All.
        assert_eq!(d.upper, Scan::All);
        let mut d = draft("not check");
        IndexBounds.apply(&mut d);
        assert_eq!(d.upper, Scan::complement(Scan::Flag(PositionFlag::Check)));
    }
}
