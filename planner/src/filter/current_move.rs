//! `currentmove --...`: a dash over the move that reached the position (read from the
//! position before it). Evaluated, typed and bounded as the dash it is (`dash.rs`).

use crate::ast::{Expr, MoveSource};
use crate::filter::dash;
use crate::filter::syntax::{PResult, Syntax};

/// Its keyword.
pub const KEYWORDS: &[&str] = &["currentmove"];

/// Reads the dash after it.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let mut d = dash::after_keyword(word, p)?;
    d.source = MoveSource::Current;
    Ok(Expr::Dash(Box::new(d)))
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, bounds, matching};
    use crate::plan::scan::{MoveOf, MoveTraits, Scan};

    #[test]
    fn the_move_played() {
        // Positions: 0 start, 1 e4, 2 e5, 3 Qh5, 4 Nc6, 5 Bc4, 6 Nf6, 7 Qxf7#, 8 g6.
        assert_eq!(matching("currentmove [x]", SCHOLAR), vec![7]);
        assert_eq!(matching("currentmove n--", SCHOLAR), vec![4, 6]);
        assert_eq!(matching("currentmove --g6", SCHOLAR), vec![8]);
        assert_eq!(
            bounds("currentmove [x]").upper,
            Scan::Moves {
                of: MoveOf::Reached,
                traits: MoveTraits::CAPTURE
            }
        );
        assert!(crate::parse("cql() currentmove check").is_err());
    }
}
