//! `elo white`, `elo black`: the player's rating from the WhiteElo (BlackElo) tag; no match
//! when the tag is missing or not a number. Under a colour-swapping transform the sides swap.

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["elo"];

/// Reads `elo white` or `elo black`.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    if p.eat_word("white") {
        Ok(Expr::Elo(true))
    } else if p.eat_word("black") {
        Ok(Expr::Elo(false))
    } else {
        Err(p.error("expected 'white' or 'black' after 'elo'"))
    }
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The rating of White (`white`) or Black, seen through the transform's colours.
pub fn eval(white: bool, cx: &Cx) -> Option<Value> {
    let tag = if white != cx.flip {
        "WhiteElo"
    } else {
        "BlackElo"
    };
    cx.game.tag(tag)?.trim().parse::<i64>().ok().map(Value::Num)
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
    fn each_side_and_its_flip() {
        let pgn = "[WhiteElo \"2700\"]\n[BlackElo \"?\"]\n\n1. e4 *\n";
        assert_eq!(matching("elo white == 2700", pgn), vec![0, 1]);
        assert_eq!(matching("elo black", pgn), Vec::<u32>::new());
        assert_eq!(matching("flipcolor { elo black > 2600 }", pgn), vec![0, 1]);
        assert!(crate::parse("cql() elo 2700").is_err());
        assert_eq!(bounds_of("elo white"), bounds());
    }
}
