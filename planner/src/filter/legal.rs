//! `legal --...` and `pseudolegal --...`: a dash over the moves generated at the position
//! (legal ones; or pseudo-legal: every piece of the side to move to each square it attacks
//! not held by its own piece, pawn pushes, en passant, and the legal castlings) rather than
//! the game's moves. Generated moves have no position after them, so the dash may not capture
//! (`[x]`), promote, or have a target other than `o-o`, `o-o-o`, `castle` or `enpassant`.
//! Evaluated, typed and bounded as the dash it is (`dash.rs`).

use crate::ast::{Dash, Expr, MoveSource};
use crate::error::ParseError;
use crate::filter::dash;
use crate::filter::syntax::{PResult, Syntax};

/// Its keywords.
pub const KEYWORDS: &[&str] = &["legal", "pseudolegal"];

/// Reads the dash after `legal` or `pseudolegal`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let source = if word == "legal" {
        MoveSource::Legal
    } else {
        MoveSource::PseudoLegal
    };
    Ok(Expr::Dash(Box::new(generated(source, word, p)?)))
}

/// The dash after `word`, over the moves `source` generates: one that needs a position after
/// the move is an error.
pub fn generated(source: MoveSource, word: &str, p: &mut dyn Syntax) -> PResult<Dash> {
    let mut d = dash::after_keyword(word, p)?;
    let here = p.here();
    if d.capture {
        return Err(ParseError::new(
            "'legal' and 'pseudolegal' are not supported with a capturing dash '[x]'; use '--'",
            here..here,
        ));
    }
    let ok_target = match &d.target {
        None => true,
        Some(t) => matches!(t.expr, Expr::Castled(_) | Expr::EnPassant),
    };
    if !ok_target || d.promotion.is_some() {
        let span = d.target.as_ref().map_or(here..here, |t| t.span.clone());
        return Err(ParseError::new(
            "the target of a 'legal'/'pseudolegal' dash must be o-o, o-o-o, castle or enpassant, without promotion",
            span,
        ));
    }
    d.source = source;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, bounds, matching};
    use crate::plan::bounds::Bounds;

    #[test]
    fn moves_that_could_be_played() {
        // Positions: 0 start, 1 e4, 2 e5, 3 Qh5, 4 Nc6, 5 Bc4, 6 Nf6, 7 Qxf7#, 8 g6.
        assert_eq!(matching("legal K--", SCHOLAR), vec![2, 4, 6, 8], "Ke2");
        assert_eq!(matching("legal K--e2", SCHOLAR), vec![2, 4, 6, 8]);
        assert_eq!(
            matching("legal --", SCHOLAR),
            (0..=8).filter(|&p| p != 7).collect::<Vec<_>>()
        );
        // The queen on h5 may take f7 (pinned pieces aside, pseudo-legal is the same here).
        assert_eq!(matching("legal Q--f7", SCHOLAR), vec![4, 6]);
        assert_eq!(matching("pseudolegal Q--f7", SCHOLAR), vec![4, 6]);
        assert_eq!(bounds("legal Q--f7"), Bounds::unknown());
    }

    #[test]
    fn what_needs_a_position_after_the_move_is_refused() {
        for q in [
            "legal [x]",
            "pseudolegal --=q",
            "legal --(check)",
            "legal check",
        ] {
            assert!(crate::parse(&format!("cql() {q}")).is_err(), "{q}");
        }
        assert!(crate::parse("cql() legal --(o-o)").is_ok());
    }
}
