//! `terminal`: the position has no move after it (a leaf of the game tree).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["terminal"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Terminal)
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches where the position has no child the traversal can see.
pub fn eval(cx: &Cx) -> Option<Value> {
    cx.game
        .children(cx.cur)
        .is_empty()
        .then_some(Value::Matched)
}

/// Index rule: the terminal flag's bitmap, exactly.
pub fn bounds() -> Bounds {
    Bounds::exact(Scan::Flag(PositionFlag::Terminal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn matches_the_leaves() {
        // The main line's last position and the variation's.
        assert_eq!(matching("terminal", SCHOLAR), vec![7, 8]);
        assert_eq!(bounds_of("terminal"), bounds());
    }
}
