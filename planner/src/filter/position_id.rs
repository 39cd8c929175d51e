//! `positionid`: the position's number in its game tree, in pre-order (the first position is 0).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["positionid"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::PositionId)
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The position's id.
pub fn eval(cx: &Cx) -> Option<Value> {
    Some(Value::Num(i64::from(cx.cur)))
}

/// Index rule as a filter: none (a number matches everywhere).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn its_value_and_index_rule() {
        assert_eq!(matching("positionid == 8", SCHOLAR), vec![8]);
        assert_eq!(bounds_of("positionid"), bounds());
    }
}
