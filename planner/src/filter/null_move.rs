//! `nullmove`: the move that reached the position was a null move (`--` in the PGN).

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
pub const KEYWORDS: &[&str] = &["nullmove"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::NullMove)
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches after a null move.
pub fn eval(cx: &Cx) -> Option<Value> {
    last_move(cx.position())
        .filter(|c| c.kind == MoveKind::Null)
        .map(|_| Value::Matched)
}

/// Index rule: the null-move bitmap of the reaching move.
pub fn bounds() -> Bounds {
    move_bounds::last_move(MoveTraits::NULL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{bounds as bounds_of, matching};

    #[test]
    fn after_a_pass() {
        let pgn = "1. e4 -- 2. d4 *\n";
        assert_eq!(matching("nullmove", pgn), vec![2]);
        assert_eq!(bounds_of("nullmove"), bounds());
    }
}
