//! `gamenumber`: the game's number in its input (the first game is 1).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["gamenumber"];

/// Reads it (it has no arguments; the header's `gamenumber N M` is read with the header).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::GameNumber)
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The game's number.
pub fn eval(cx: &Cx) -> Option<Value> {
    Some(Value::Num(i64::try_from(cx.game.number).ok()?))
}

/// Index rule as a filter: none (a number matches everywhere; the header's range is a scan of
/// its own).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn the_first_game_is_one() {
        assert_eq!(matching("gamenumber == 1", SCHOLAR).len(), 9);
        assert_eq!(matching("gamenumber > 1", SCHOLAR), Vec::<u32>::new());
        assert_eq!(bounds_of("gamenumber"), bounds());
    }
}
