//! `power S`: the material value of the pieces on the squares of `S` (pawn 1, knight and bishop
//! 3, rook 5, queen 9; kings count nothing), whatever their colour.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["power"];

/// Reads `power S`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Power(Box::new(p.set_arg(word)?)))
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The power of `set`'s pieces at the current position.
pub fn eval(set: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let x = ev.set(set, cx)?;
    Some(Value::Num(board::power(cx.position(), x)))
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
    fn counts_material() {
        // White has given up nothing; Black's f-pawn falls on move 4.
        assert_eq!(matching("power A == 39", SCHOLAR).len(), 9);
        assert_eq!(matching("power a == 39", SCHOLAR).len(), 8);
        assert_eq!(matching("power a == 38", SCHOLAR), vec![7]);
        assert_eq!(bounds_of("power Q"), bounds());
    }
}
