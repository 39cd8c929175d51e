//! `movenumber`: the move number of the position (counted from the game's first position, which is move 1, whatever its FEN says, as the reference does).

use crate::ast::{CmpOp, Expr};
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::{Bounds, TreeAttr, range_bounds};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["movenumber"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::MoveNumber)
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The move number: one more than the full moves since the first position.
pub fn eval(cx: &Cx) -> Option<Value> {
    // Counted from the root, ignoring a FEN's fullmove field (as the reference does).
    let root_black = cx.game.positions[0].turn() == shakmaty::Color::Black;
    Some(Value::Num(
        1 + (i64::from(cx.position().ply) + i64::from(root_black)) / 2,
    ))
}

/// Index rule as a filter: none (a number matches everywhere).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

/// Index rule of `movenumber op n`: a highest move number is a highest ply, except in games with a null move
/// (kept whole); a lowest one bounds nothing. `None` for `!=`.
pub fn compare_bounds(op: CmpOp, n: i64) -> Option<Bounds> {
    range_bounds(TreeAttr::MoveNumber, op, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn its_value_and_index_rule() {
        assert_eq!(matching("movenumber == 2 wtm", SCHOLAR), vec![2]);
        assert_eq!(matching("movenumber == 4", SCHOLAR), vec![6, 7, 8]);
        // A highest move number bounds the ply; a lowest one cannot.
        assert!(compare_bounds(CmpOp::Le, 10).is_some());
        assert_eq!(compare_bounds(CmpOp::Ge, 10), Some(Bounds::unknown()));
        assert_eq!(bounds_of("movenumber"), bounds());
    }
}
