//! `year`: the year of the game's Date tag (its first four characters as a number); no match
//! when the tag is missing or its year unknown (`????`).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
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
    let d = cx.game.tag("Date")?;
    d.get(..4)?.parse::<i64>().ok().map(Value::Num)
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
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
    }
}
