//! `currentposition`: the position being evaluated, as a position value (for `:` and the
//! game-tree filters).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["currentposition"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::CurrentPosition)
}

/// A position.
pub const TYPE: Ty = Ty::Position;

/// The current position.
pub fn eval(cx: &Cx) -> Option<Value> {
    Some(Value::Pos(cx.cur))
}

/// Index rule: it matches everywhere, exactly.
pub fn bounds() -> Bounds {
    Bounds::exact(crate::plan::scan::Scan::All)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn is_where_we_are() {
        assert_eq!(matching("currentposition : check", SCHOLAR), vec![7]);
        assert_eq!(
            matching("lca(currentposition position 8) == position 5", SCHOLAR),
            vec![5, 6, 7]
        );
        assert_eq!(bounds_of("currentposition"), bounds());
    }
}
