//! `ancestor(A, B)`, `descendant(A, B)`: position `A` comes before position `B` on the way
//! from the game's first position to `B` (for `descendant`, `B` before `A`); a position is not
//! its own ancestor.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["ancestor", "descendant"];

/// Reads `ancestor(A B)` or `descendant(A B)`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let (a, b) = p.pair(word)?;
    Ok(if word == "ancestor" {
        Expr::Ancestor(a, b)
    } else {
        Expr::Descendant(a, b)
    })
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Whether `older` is a strict ancestor of `younger`.
pub fn eval(older: &Node, younger: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let x = ev.position(older, cx)?;
    let y = ev.position(younger, cx)?;
    (x != y && cx.game.is_ancestor_or_self(x, y)).then_some(Value::Matched)
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
    fn along_the_tree() {
        assert_eq!(
            matching("ancestor(position 5 currentposition)", SCHOLAR),
            vec![6, 7, 8]
        );
        assert_eq!(
            matching("descendant(currentposition position 6)", SCHOLAR),
            vec![7]
        );
        assert_eq!(
            matching("ancestor(position 7 position 8)", SCHOLAR),
            Vec::<u32>::new()
        );
        assert_eq!(
            matching("ancestor(currentposition currentposition)", SCHOLAR),
            Vec::<u32>::new()
        );
        assert_eq!(bounds_of("ancestor(position 0 currentposition)"), bounds());
    }
}
