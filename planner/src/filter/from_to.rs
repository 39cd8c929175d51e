//! `from`, `to`: the square the move that reached the position left (arrived at). For castling,
//! `to` is the king's square and the rook's, so that `to attacks k` sees a check the rook gives
//! (as the reference does).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::candidate::last_move;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;
use cqldb_storage::MoveKind;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["from", "to"];

/// Reads it (it has no arguments).
pub fn parse(word: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(if word == "from" { Expr::From } else { Expr::To })
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// The origin (`from`) or destination squares of the last move; none at the first position
/// or after a null move.
pub fn eval(from: bool, cx: &Cx) -> Option<Value> {
    let c = last_move(cx.position())?;
    if from {
        return Some(Value::Set(1 << c.from));
    }
    let rook = match c.kind {
        MoveKind::Castle if c.king_side => 1u64 << (c.dest - 1),
        MoveKind::Castle => 1u64 << (c.dest + 1),
        _ => 0,
    };
    Some(Value::Set(1 << c.dest | rook))
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn the_last_move_squares() {
        assert_eq!(matching("from == e2", SCHOLAR), vec![1]);
        assert_eq!(matching("to == f7", SCHOLAR), vec![7]);
        assert_eq!(matching("(to & A) attacks k", SCHOLAR), vec![7]);
        let castled = "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O *\n";
        assert_eq!(matching("to == (g1 | f1)", castled), vec![7]);
        assert_eq!(bounds_of("from"), bounds());
    }
}
