//! `A attacks B` (`A -> B`), `A attackedby B` (`A <- B`): the squares of `A` whose piece
//! attacks some square of `B`; the squares of `A` attacked by some piece on `B`.
//!
//! Its syntax is an infix operator, read by the parser's operator skeleton (`parser.rs`,
//! between `:` and the arithmetic operators) through [`infix`].

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its operators, as words and as symbols.
pub const OPERATORS: &[&str] = &["attacks", "->", "attackedby", "<-"];

/// `lhs op rhs` for one of [`OPERATORS`].
pub fn infix(op: &str, lhs: Node, rhs: Node) -> Expr {
    let (lhs, rhs) = (Box::new(lhs), Box::new(rhs));
    if op == "attacks" || op == "->" {
        Expr::Attacks(lhs, rhs)
    } else {
        Expr::AttackedBy(lhs, rhs)
    }
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// `attacks` (`forward`) or `attackedby`.
pub fn eval(
    forward: bool,
    a: &Node,
    b: &Node,
    ev: &mut impl Evaluate,
    cx: &mut Cx,
) -> Option<Value> {
    let x = ev.set(a, cx)?;
    let y = ev.set(b, cx)?;
    let rec = cx.position();
    Some(Value::Set(if forward {
        board::attackers(rec, x, y)
    } else {
        board::attacked_by(rec, x, y)
    }))
}

/// Index rule: none (attacks need the board).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn both_ways_and_both_spellings() {
        // 2. Qh5 attacks e5 and f7; the queen takes on f7 with check.
        assert_eq!(matching("Q attacks k", SCHOLAR), vec![7]);
        assert_eq!(matching("Q -> (p & f7)", SCHOLAR), vec![3, 4, 5, 6]);
        assert_eq!(matching("k <- Q", SCHOLAR), vec![7]);
        assert_eq!(matching("k attackedby Q", SCHOLAR), vec![7]);
        assert_eq!(bounds_of("Q attacks k"), bounds());
    }
}
