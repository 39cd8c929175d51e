//! `lca(A, B)`: the last position that positions `A` and `B` share on their way from the
//! game's first position (one of them, if it comes before the other).

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["lca"];

/// Reads `lca(A B)`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let (a, b) = p.pair(word)?;
    Ok(Expr::Lca(a, b))
}

/// A position.
pub const TYPE: Ty = Ty::Position;

/// The common ancestor.
pub fn eval(a: &Node, b: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let x = ev.position(a, cx)?;
    let y = ev.position(b, cx)?;
    Some(Value::Pos(cx.game.lca(x, y)))
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
    fn where_lines_part() {
        assert_eq!(
            matching("lca(position 7 position 8) == position 5", SCHOLAR).len(),
            9
        );
        assert_eq!(
            matching("lca(position 3 position 7) == position 3", SCHOLAR).len(),
            9
        );
        assert_eq!(bounds_of("lca(position 1 position 2)"), bounds());
    }
}
