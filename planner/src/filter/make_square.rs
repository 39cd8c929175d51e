//! `makesquare(F, R)`: the square on file `F` and rank `R` (numbers 1 to 8); no match for
//! other numbers.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["makesquare"];

/// Reads `makesquare(F R)`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let (a, b) = p.pair(word)?;
    Ok(Expr::MakeSquare(a, b))
}

/// A square set (of one square).
pub const TYPE: Ty = Ty::Set;

/// The square, if both numbers are in 1..=8.
pub fn eval(file: &Node, rank: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let (Value::Num(f), Value::Num(r)) = (ev.value(file, cx)?, ev.value(rank, cx)?) else {
        return None;
    };
    if !(1..=8).contains(&f) || !(1..=8).contains(&r) {
        return None;
    }
    Some(Value::Set(1 << ((r - 1) * 8 + f - 1)))
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn numbers_to_a_square() {
        assert_eq!(matching("makesquare(5 1) == e1", SCHOLAR).len(), 9);
        assert_eq!(matching("makesquare(9 1)", SCHOLAR), Vec::<u32>::new());
        assert_eq!(matching("K & makesquare(file K rank K)", SCHOLAR).len(), 9);
        assert_eq!(bounds_of("makesquare(1 1)"), bounds());
    }
}
