//! `answer_from_index`: when the index answers exactly and no game needs to be written, no
//! game is read.

use super::{Draft, Residual, Rule};
use crate::plan::SinkKind;

/// If the candidates are exactly the matching positions and the run only counts games or
/// lists the matching positions (no `matchcount`, no `sort`: those count positions per game),
/// the residual is dropped: the games with a candidate position, or the candidate positions
/// themselves, are the answer.
pub struct AnswerFromIndex;

impl Rule for AnswerFromIndex {
    fn name(&self) -> &'static str {
        "answer_from_index"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        let h = &d.logical.query.header;
        let counting = matches!(d.logical.sink, SinkKind::Count | SinkKind::Positions);
        let exact = d.no_pruning.is_none() && d.upper == d.lower;
        if !(counting && exact && h.matchcount.is_none() && !h.sort_matchcount) {
            return None;
        }
        d.residual = Residual::None;
        Some(match d.logical.sink {
            SinkKind::Positions => "positions listed from the index alone".into(),
            SinkKind::Count | SinkKind::Games => "counted from the index alone".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::tests::draft;
    use crate::plan::{PositionFlag, Scan};

    #[test]
    fn only_exact_counts() {
        let mut d = draft("mate");
        d.upper = Scan::Flag(PositionFlag::Mate);
        d.lower = d.upper.clone();
        assert!(AnswerFromIndex.apply(&mut d).is_none(), "games are written");
        d.logical.sink = SinkKind::Count;
        assert!(AnswerFromIndex.apply(&mut d).is_some());
        assert_eq!(d.residual, Residual::None);
        let mut d = draft("mate");
        d.upper = Scan::Flag(PositionFlag::Mate);
        d.lower = d.upper.clone();
        d.logical.sink = SinkKind::Positions;
        assert!(AnswerFromIndex.apply(&mut d).is_some(), "positions listed");
        let mut d = draft("mate");
        d.logical.sink = SinkKind::Count;
        d.upper = Scan::Flag(PositionFlag::Mate);
        assert!(AnswerFromIndex.apply(&mut d).is_none(), "not exact");
    }
}
