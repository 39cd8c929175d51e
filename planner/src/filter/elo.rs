//! `elo white`, `elo black`: the player's rating from the WhiteElo (BlackElo) tag; no match
//! when the tag is missing or not a number. Under a colour-swapping transform the sides swap.

use crate::ast::{CmpOp, Expr};
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::GameAttr;
use crate::plan::bounds::{Bounds, game_range_bounds};
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
    let tag = if white != cx.colours_swapped() {
        "WhiteElo"
    } else {
        "BlackElo"
    };
    cx.game
        .tag(tag)
        .and_then(cqldb_storage::schema::rating)
        .map(Value::Num)
}

/// Index rule as a filter: none (any rating matches).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

/// Index rule of `elo white op n` (`black`): the games whose rating passes, from the bitmaps of
/// rating bands (exact where `n` falls on a band's edge, otherwise the edge band is a
/// candidate).
pub fn compare_bounds(white: bool, op: CmpOp, n: i64) -> Bounds {
    let attr = if white {
        GameAttr::WhiteElo
    } else {
        GameAttr::BlackElo
    };
    game_range_bounds(attr, op, n)
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
        use crate::plan::Scan::GameRange;
        let range = |attr, lo, hi| GameRange { attr, lo, hi };
        // On a band's edge: exact.
        let b = bounds_of("elo white >= 2600");
        assert!(b.is_exact());
        assert_eq!(b.upper, range(GameAttr::WhiteElo, 2600, u16::MAX));
        // Inside a band: that band is a candidate, not a sure match.
        let b = bounds_of("elo black > 2650");
        assert_eq!(b.upper, range(GameAttr::BlackElo, 2600, u16::MAX));
        assert_eq!(b.lower, range(GameAttr::BlackElo, 2700, u16::MAX));
        let b = bounds_of("elo white < 2650");
        assert_eq!(b.upper, range(GameAttr::WhiteElo, 0, 2699));
        assert_eq!(b.lower, range(GameAttr::WhiteElo, 0, 2599));
        // The sides swap under a colour flip.
        assert_eq!(
            bounds_of("flipcolor { elo white >= 2600 }").upper,
            crate::plan::Scan::or(
                range(GameAttr::WhiteElo, 2600, u16::MAX),
                range(GameAttr::BlackElo, 2600, u16::MAX)
            )
        );
    }
}
