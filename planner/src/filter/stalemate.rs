//! `stalemate`: the side to move has no legal move and is not in check.

use cqldb_storage::PositionFlags;

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["stalemate"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Stalemate)
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches where the position's flag is set (found when the game was indexed or read).
pub fn eval(cx: &Cx) -> Option<Value> {
    cx.position()
        .flags
        .contains(PositionFlags::STALEMATE)
        .then_some(Value::Matched)
}

/// Index rule: the flag's bitmap, exactly.
pub fn bounds() -> Bounds {
    Bounds::exact(Scan::Flag(PositionFlag::Stalemate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{bounds as bounds_of, matching};

    #[test]
    fn matches_where_the_flag_is_set_and_the_index_says_so() {
        let pgn = "[FEN \"7k/8/6K1/8/8/8/8/5Q2 w - - 0 1\"]\n\n1. Qf6 *\n";
        assert_eq!(matching("stalemate", pgn), Vec::<u32>::new());
        let pgn = "[FEN \"7k/8/6K1/8/8/8/8/5Q2 w - - 0 1\"]\n\n1. Qf7 *\n";
        assert_eq!(matching("stalemate", pgn), vec![1]);
        assert_eq!(bounds_of("stalemate"), bounds());
        assert!(bounds().is_exact());
    }
}
