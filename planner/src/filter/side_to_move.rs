//! `sidetomove`: the side to move as a number, 1 for White and -1 for Black (compare it with
//! `white` and `black`).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["sidetomove"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::SideToMove)
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// 1 or -1.
pub fn eval(cx: &Cx) -> Option<Value> {
    Some(Value::Num(
        if cx.position().turn() == shakmaty::Color::White {
            1
        } else {
            -1
        },
    ))
}

/// Index rule: none (a number matches everywhere; comparisons with it are left to the
/// residual).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn compares_with_the_colour_constants() {
        assert_eq!(matching("sidetomove == black", SCHOLAR), vec![1, 3, 5, 7]);
        assert_eq!(matching("sidetomove == 1", SCHOLAR), vec![0, 2, 4, 6, 8]);
        assert_eq!(bounds_of("sidetomove"), bounds());
    }
}
