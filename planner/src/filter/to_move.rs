//! `wtm`, `btm`: White (Black) is to move. Under a colour-swapping transform the colour swaps.

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["wtm", "btm"];

/// Reads it (it has no arguments).
pub fn parse(word: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::ToMove(word == "wtm"))
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches where the side to move is White (`white`), seen through the transform's colours.
pub fn eval(white: bool, cx: &Cx) -> Option<Value> {
    ((cx.position().turn() == shakmaty::Color::White) == (white != cx.colours_swapped()))
        .then_some(Value::Matched)
}

/// Index rule: the white-to-move flag's bitmap or its complement, exactly.
pub fn bounds(white: bool) -> Bounds {
    let wtm = Scan::Flag(PositionFlag::WhiteToMove);
    Bounds::exact(if white { wtm } else { Scan::complement(wtm) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn each_side_and_its_flip() {
        assert_eq!(matching("wtm", SCHOLAR), vec![0, 2, 4, 6, 8]);
        assert_eq!(matching("btm", SCHOLAR), vec![1, 3, 5, 7]);
        assert_eq!(
            matching("flipcolor wtm", SCHOLAR),
            (0..=8).collect::<Vec<u32>>()
        );
        assert_eq!(bounds_of("wtm"), bounds(true));
        assert_eq!(bounds_of("btm"), bounds(false));
    }
}
