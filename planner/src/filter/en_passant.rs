//! `enpassant`: the move that reached the position was an en passant capture.

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::candidate::last_move;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::move_bounds;
use crate::plan::scan::MoveTraits;
use crate::types::Ty;
use cqldb_storage::MoveKind;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["enpassant"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::EnPassant)
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches after an en passant capture.
pub fn eval(cx: &Cx) -> Option<Value> {
    last_move(cx.position())
        .filter(|c| c.kind == MoveKind::EnPassant)
        .map(|_| Value::Matched)
}

/// Index rule: the en passant bitmap of the reaching move.
pub fn bounds() -> Bounds {
    move_bounds::last_move(MoveTraits::EN_PASSANT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{bounds as bounds_of, matching};

    #[test]
    fn after_the_capture() {
        let pgn = "1. e4 a6 2. e5 d5 3. exd6 *\n";
        assert_eq!(matching("enpassant", pgn), vec![5]);
        assert_eq!(bounds_of("enpassant"), bounds());
    }
}
