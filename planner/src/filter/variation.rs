//! `variation`: the position is inside a variation (some move on the way to it is not a main
//! move).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["variation"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Variation)
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches at depth 1 or more.
pub fn eval(cx: &Cx) -> Option<Value> {
    (cx.position().depth > 0).then_some(Value::Matched)
}

/// Index rule: every position off the main line, exactly.
pub fn bounds() -> Bounds {
    Bounds::exact(Scan::complement(Scan::Flag(PositionFlag::Mainline)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn matches_inside_variations_only() {
        assert_eq!(matching("variation", SCHOLAR), vec![8]);
        assert_eq!(bounds_of("variation"), bounds());
    }
}
