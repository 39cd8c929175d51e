//! `A attacks B` (`A -> B`), `A attackedby B` (`A <- B`): the squares of `A` whose piece
//! attacks some square of `B`; the squares of `A` attacked by some piece on `B`.
//!
//! Three or more operands make a chain (`x -> y -> z`): a piece on x attacks a square of y,
//! and would attack a square of z beyond it if y were emptied, and so on along one line; its
//! value is the first written operand's squares for which such a line exists (the attackers
//! for `->`, the squares at the line's far end for `<-`, where `z <- y <- x` holds exactly
//! when `x -> y -> z` does).
//!
//! Its syntax is an infix operator, read by the parser's operator skeleton (`parser.rs`,
//! between `:` and the arithmetic operators) through [`join`].

use crate::ast::{Arrow, Expr, Node, Span};
use crate::error::ParseError;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its operators, as words and as symbols.
pub const OPERATORS: &[&str] = &["attacks", "->", "attackedby", "<-"];

/// The most operands one chain may join: a line on the board holds at most eight squares.
pub const MAX_CHAIN: usize = 8;

fn arrow_of(op: &str) -> Arrow {
    if op == "attacks" || op == "->" {
        Arrow::Attacks
    } else {
        Arrow::AttackedBy
    }
}

/// `operands` joined by `arrows` (one fewer, each one of [`OPERATORS`] with its span): the
/// operand alone, a binary filter, or a chain whose arrows all point one way.
pub fn join(
    mut operands: Vec<Node>,
    arrows: &[(String, Span)],
    span: Span,
) -> Result<Node, ParseError> {
    let Some((first, _)) = arrows.first() else {
        return operands
            .pop()
            .ok_or_else(|| ParseError::new("expected a filter", span));
    };
    let arrow = arrow_of(first);
    if let Some((_, at)) = arrows.iter().find(|(op, _)| arrow_of(op) != arrow) {
        return Err(ParseError::new(
            "attack arrows in one chain must point the same way; parenthesize to mix them",
            at.clone(),
        ));
    }
    let expr = if operands.len() == 2 {
        let rhs = Box::new(operands.pop().expect("two operands"));
        let lhs = Box::new(operands.pop().expect("two operands"));
        match arrow {
            Arrow::Attacks => Expr::Attacks(lhs, rhs),
            Arrow::AttackedBy => Expr::AttackedBy(lhs, rhs),
        }
    } else {
        Expr::AttackChain(arrow, operands)
    };
    Ok(Node { expr, span })
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

/// A chain of three or more operands, in written order.
pub fn eval_chain(
    arrow: Arrow,
    operands: &[Node],
    ev: &mut impl Evaluate,
    cx: &mut Cx,
) -> Option<Value> {
    let mut sets = Vec::with_capacity(operands.len());
    for o in operands {
        sets.push(ev.set(o, cx)?);
    }
    if arrow == Arrow::AttackedBy {
        sets.reverse();
    }
    let rec = cx.position();
    let (origins, ends) = board::attack_chains(rec, &sets);
    Some(Value::Set(match arrow {
        Arrow::Attacks => origins,
        Arrow::AttackedBy => ends,
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

    /// After 1. e4 e5 2. Bc4 d6 3. Qh5 the queen on h5 attacks the pawn on f7, and the king
    /// on e8 stands beyond it on the same diagonal.
    const THROUGH_F7: &str = "[Event \"t\"]\n[Result \"*\"]\n\n1. e4 e5 2. Bc4 d6 3. Qh5 *\n";

    #[test]
    fn chains_follow_one_line() {
        assert_eq!(matching("Q -> p -> k", THROUGH_F7), vec![5]);
        assert_eq!(matching("k <- p <- Q", THROUGH_F7), vec![5]);
        // The value is the first operand written: the queen, or the king.
        assert_eq!(matching("(Q -> p -> k) & h5", THROUGH_F7), vec![5]);
        assert_eq!(matching("(k <- p <- Q) & e8", THROUGH_F7), vec![5]);
        // Left to right, a chain is not nested binary attacks: `(Q -> p) -> k` asks whether
        // the queen itself attacks the king.
        assert_eq!(matching("(Q -> p) -> k", THROUGH_F7), Vec::<u32>::new());
        assert_eq!(matching("Q attacks p attacks k", THROUGH_F7), vec![5]);
        assert_eq!(matching("B -> p -> k", THROUGH_F7), Vec::<u32>::new());
    }

    #[test]
    fn mixed_arrows_are_refused() {
        let err = crate::parse("cql() Q -> p <- k").expect_err("mixed chain");
        assert!(err.to_string().contains("same way"), "{err}");
    }
}
