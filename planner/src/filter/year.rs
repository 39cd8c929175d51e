//! `year`: the year of the game's Date tag (its first four characters as a number); no match
//! when the tag is missing or its year unknown (`????`).

use crate::ast::{CmpOp, Expr};
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::GameAttr;
use crate::plan::bounds::{Bounds, game_range_bounds};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["year"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Year)
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The Date tag's year.
pub fn eval(cx: &Cx) -> Option<Value> {
    cx.game
        .tag("Date")
        .and_then(cqldb_storage::schema::date_year)
        .map(Value::Num)
}

/// Index rule as a filter: none (any year matches).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

/// Index rule of `year op n`: the games of the years passing, from the year bitmaps.
pub fn compare_bounds(op: CmpOp, n: i64) -> Bounds {
    game_range_bounds(GameAttr::Year, op, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{bounds as bounds_of, matching};

    #[test]
    fn from_the_date_tag() {
        let dated = "[Date \"1851.06.21\"]\n\n1. e4 *\n";
        assert_eq!(matching("year == 1851", dated), vec![0, 1]);
        let unknown = "[Date \"????.??.??\"]\n\n1. e4 *\n";
        assert_eq!(matching("year", unknown), Vec::<u32>::new());
        assert_eq!(matching("year", "1. e4 *\n"), Vec::<u32>::new());
        assert_eq!(bounds_of("year"), bounds());
        assert_eq!(bounds_of("year >= 1990"), compare_bounds(CmpOp::Ge, 1990));
        assert_eq!(bounds_of("1990 <= year"), compare_bounds(CmpOp::Ge, 1990));
        let b = compare_bounds(CmpOp::Lt, 1900);
        assert!(b.is_exact());
        assert_eq!(
            b.upper,
            crate::plan::Scan::GameRange {
                attr: GameAttr::Year,
                lo: 0,
                hi: 1899
            }
        );
        // No year within 0..=65535 passes, but "-500" would: the scan of none is still read.
        let none = compare_bounds(CmpOp::Lt, 0);
        assert_eq!(
            none.upper,
            crate::plan::Scan::GameRange {
                attr: GameAttr::Year,
                lo: 1,
                hi: 0
            }
        );
        assert_eq!(none.lower, crate::plan::Scan::Empty);
    }
}
