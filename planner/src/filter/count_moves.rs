//! `countmoves --...` (also `countmoves legal --...`, `countmoves pseudolegal --...`): the
//! number of moves the dash matches, where `--...` alone matches its origins.

use crate::ast::{Dash, Expr, MoveSource};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::filter::{dash, legal};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["countmoves"];

/// Reads an optional `legal` or `pseudolegal`, then the dash.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let d = if p.eat_word("legal") {
        legal::generated(MoveSource::Legal, word, p)?
    } else if p.eat_word("pseudolegal") {
        legal::generated(MoveSource::PseudoLegal, word, p)?
    } else {
        dash::after_keyword(word, p)?
    };
    Ok(Expr::CountMoves(Box::new(d)))
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// How many moves the dash matches.
pub fn eval(d: &Dash, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    dash::matching(d, ev, cx).map(|(_, n)| Value::Num(n))
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, matching};

    #[test]
    fn moves_counted() {
        // Positions: 0 start, 1 e4, 2 e5, 3 Qh5, 4 Nc6, 5 Bc4, 6 Nf6, 7 Qxf7#, 8 g6.
        assert_eq!(matching("countmoves -- == 2", SCHOLAR), vec![5]);
        assert_eq!(matching("countmoves legal -- == 20", SCHOLAR), vec![0, 1]);
        assert_eq!(
            matching("countmoves pseudolegal -- == 20", SCHOLAR),
            vec![0, 1]
        );
        assert_eq!(
            matching("countmoves legal -- == 0", SCHOLAR),
            vec![7],
            "mate"
        );
        assert!(crate::parse("cql() countmoves legal [x]").is_err());
    }
}
