//! `mate`: the side to move is checkmated.

use cqldb_storage::PositionFlags;

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["mate"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Mate)
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches where the position's flag is set (found when the game was indexed or read).
pub fn eval(cx: &Cx) -> Option<Value> {
    cx.position()
        .flags
        .contains(PositionFlags::MATE)
        .then_some(Value::Matched)
}

/// Index rule: the flag's bitmap, exactly.
pub fn bounds() -> Bounds {
    Bounds::exact(Scan::Flag(PositionFlag::Mate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn matches_where_the_flag_is_set_and_the_index_says_so() {
        assert_eq!(matching("mate", SCHOLAR), vec![7]);
        assert_eq!(bounds_of("mate"), bounds());
        assert!(bounds().is_exact());
    }
}
