//! `result R`: the game's Result tag is exactly `R` (`1-0`, `0-1`, `1/2-1/2` or `*`).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::Scan;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["result"];

/// Reads `result R`.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Result(p.result(
        "expected 1-0, 0-1, 1/2-1/2 or * after 'result'",
    )?))
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches in a game whose (first) Result tag is `r`, spelled exactly so (`1-0` and `0-1`
/// exchanged by a colour swap).
pub fn eval(r: &str, cx: &Cx) -> Option<Value> {
    let r = crate::transform::map_result(&cx.transforms, r);
    (cx.game.tag("Result") == Some(r)).then_some(Value::Matched)
}

/// Index rule: the game bitmap of that exact Result tag.
pub fn bounds(r: &str) -> Bounds {
    Bounds::exact(Scan::GameResult(r.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn the_tag_as_written() {
        assert_eq!(matching("result 1-0", SCHOLAR).len(), 9);
        assert_eq!(matching("result 0-1", SCHOLAR), Vec::<u32>::new());
        // The termination marker alone does not make a Result tag.
        let untagged = "[Event \"t\"]\n\n1. e4 1-0\n";
        assert_eq!(matching("result 1-0", untagged), Vec::<u32>::new());
        assert_eq!(bounds_of("result 1/2-1/2"), bounds("1/2-1/2"));
        assert!(crate::parse("cql() result 2-0").is_err());
    }
}
