//! `ply`: half-moves from the game's first position (0 there).

use crate::ast::{CmpOp, Expr};
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::{Bounds, TreeAttr, range_bounds};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["ply"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Ply)
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The position's ply.
pub fn eval(cx: &Cx) -> Option<Value> {
    Some(Value::Num(i64::from(cx.position().ply)))
}

/// Index rule as a filter: none (a number matches everywhere).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

/// Index rule of `ply op n`: positions whose ply lies in the range, by where positions lie in their game (an upper
/// bound); `None` for `!=`.
pub fn compare_bounds(op: CmpOp, n: i64) -> Option<Bounds> {
    range_bounds(TreeAttr::Ply, op, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn its_value_and_index_rule() {
        assert_eq!(matching("ply == 3", SCHOLAR), vec![3]);
        // The variation's position is at ply 6 too.
        assert_eq!(matching("ply >= 6", SCHOLAR), vec![6, 7, 8]);
        let b = compare_bounds(CmpOp::Gt, 5).expect("a range");
        assert_eq!(crate::filter::testing::bounds("ply > 5"), b);
        assert_eq!(bounds_of("ply"), bounds());
    }
}
