//! `white`, `black`: the colour constants 1 and -1 (what `sidetomove` is compared with).
//! Under a colour-swapping transform each stands for the other.

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keywords (`player white`, `elo black` read these words themselves).
pub const KEYWORDS: &[&str] = &["white", "black"];

/// Reads it.
pub fn parse(word: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::ColorConst(if word == "white" { 1 } else { -1 }))
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The constant, negated inside a colour swap.
pub fn eval(c: i64, cx: &Cx) -> Option<Value> {
    Some(Value::Num(if cx.colours_swapped() { -c } else { c }))
}

/// Index rule: none (a number matches everywhere).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn constants_swap_with_the_colours() {
        assert_eq!(matching("white == 1", SCHOLAR).len(), 9);
        assert_eq!(
            matching("sidetomove == white", SCHOLAR),
            vec![0, 2, 4, 6, 8]
        );
        assert_eq!(
            matching("flipcolor { sidetomove == white }", SCHOLAR),
            (0..=8).collect::<Vec<u32>>()
        );
        assert_eq!(bounds_of("black"), bounds());
    }
}
