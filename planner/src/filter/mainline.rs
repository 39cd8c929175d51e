//! `mainline`: the position is on the game's main line (reached by main moves only).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["mainline"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Mainline)
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches at depth 0.
pub fn eval(cx: &Cx) -> Option<Value> {
    (cx.position().depth == 0).then_some(Value::Matched)
}

/// Index rule: the main-line flag's bitmap, exactly.
pub fn bounds() -> Bounds {
    Bounds::exact(Scan::Flag(PositionFlag::Mainline))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn matches_the_main_line_only() {
        assert_eq!(matching("mainline", SCHOLAR), (0..=7).collect::<Vec<u32>>());
        assert_eq!(bounds_of("mainline"), bounds());
    }
}
