//! `depth`: how many non-main moves lead to the position (0 on the main line).

use crate::ast::{CmpOp, Expr};
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::{Bounds, TreeAttr, range_bounds};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["depth"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Depth)
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The position's depth.
pub fn eval(cx: &Cx) -> Option<Value> {
    Some(Value::Num(i64::from(cx.position().depth)))
}

/// Index rule as a filter: none (a number matches everywhere).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

/// Index rule of `depth op n`: depth 0 is the main line's bitmap, depth 1 or more its complement;
/// other ranges are bounded by them. `None` for `!=`.
pub fn compare_bounds(op: CmpOp, n: i64) -> Option<Bounds> {
    range_bounds(TreeAttr::Depth, op, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn its_value_and_index_rule() {
        assert_eq!(matching("depth == 1", SCHOLAR), vec![8]);
        assert_eq!(
            crate::filter::testing::bounds("depth == 0"),
            compare_bounds(CmpOp::Eq, 0).expect("a range")
        );
        assert!(compare_bounds(CmpOp::Eq, 0).is_some_and(|b| b.is_exact()));
        assert_eq!(bounds_of("depth"), bounds());
    }
}
