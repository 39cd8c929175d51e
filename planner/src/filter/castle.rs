//! `o-o`, `o-o-o`, `castle`: the move that reached the position castled king side, queen
//! side, or either.

use crate::ast::{Castle, Expr};
use crate::eval::Cx;
use crate::eval::candidate::last_move;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::move_bounds;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["o-o", "o-o-o", "castle"];

/// Reads it (it has no arguments).
pub fn parse(word: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Castled(match word {
        "o-o" => Castle::King,
        "o-o-o" => Castle::Queen,
        _ => Castle::Any,
    }))
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches after a castling move of that side.
pub fn eval(which: Castle, cx: &Cx) -> Option<Value> {
    last_move(cx.position())
        .filter(|c| c.castles(which))
        .map(|_| Value::Matched)
}

/// Index rule: the castling bitmaps of the reaching move.
pub fn bounds(which: Castle) -> Bounds {
    move_bounds::castled(which)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{bounds as bounds_of, matching};

    #[test]
    fn each_side() {
        let pgn = "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O d6 5. d3 Be6 6. Nc3 Qd7 7. Be3 O-O-O *\n";
        assert_eq!(matching("o-o", pgn), vec![7]);
        assert_eq!(matching("o-o-o", pgn), vec![14]);
        assert_eq!(matching("castle", pgn), vec![7, 14]);
        assert_eq!(bounds_of("o-o"), bounds(Castle::King));
    }
}
