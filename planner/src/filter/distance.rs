//! `distance(A, B)`: the number of moves between positions `A` and `B` through the game tree
//! (up from one to their last common ancestor, then down to the other).

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["distance"];

/// Reads `distance(A B)`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let (a, b) = p.pair(word)?;
    Ok(Expr::Distance(a, b))
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The distance.
pub fn eval(a: &Node, b: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let x = ev.position(a, cx)?;
    let y = ev.position(b, cx)?;
    let g = cx.game;
    let l = g.lca(x, y);
    let ply = |p: u32| i64::from(g.positions[p as usize].ply);
    Some(Value::Num(ply(x) + ply(y) - 2 * ply(l)))
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
    fn through_the_tree() {
        assert_eq!(
            matching("distance(position 7 position 8) == 3", SCHOLAR).len(),
            9
        );
        assert_eq!(
            matching("distance(position 0 currentposition) == 2", SCHOLAR),
            vec![2]
        );
        assert_eq!(bounds_of("distance(position 0 position 1)"), bounds());
    }
}
