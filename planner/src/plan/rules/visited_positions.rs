//! `visited_positions`: only the positions the residual visits can match.

use super::{Draft, Rule};
use crate::plan::{PositionFlag, Scan};

/// Without variations the residual visits main-line positions only, so the candidates are
/// those of the main line: `not` complements within what is visited.
pub struct VisitedPositions;

impl Rule for VisitedPositions {
    fn name(&self) -> &'static str {
        "visited_positions"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        if d.no_pruning.is_some() || d.logical.variations || d.upper == Scan::All {
            return None;
        }
        let main = Scan::Flag(PositionFlag::Mainline);
        d.upper = Scan::and(std::mem::replace(&mut d.upper, Scan::All), main.clone());
        d.lower = Scan::and(std::mem::replace(&mut d.lower, Scan::All), main);
        Some("main-line positions only".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::tests::draft;

    #[test]
    fn main_line_unless_variations() {
        let mut d = draft("check");
        d.upper = Scan::Flag(PositionFlag::Check);
        assert!(VisitedPositions.apply(&mut d).is_some());
        assert_eq!(
            d.upper,
            Scan::And(vec![
                Scan::Flag(PositionFlag::Check),
                Scan::Flag(PositionFlag::Mainline)
            ])
        );
        let mut d = draft("check");
        d.logical.variations = true;
        d.upper = Scan::Flag(PositionFlag::Check);
        assert!(VisitedPositions.apply(&mut d).is_none());
    }
}
