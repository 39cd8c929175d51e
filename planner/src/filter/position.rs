//! `position N`: the position whose id is `N` in the current game (ids in pre-order, the first
//! position is 0), if the traversal can see it; `initialposition` is `position 0`.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["position", "initialposition"];

/// Reads `position N` or `initialposition`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let id = if word == "initialposition" {
        Node {
            expr: Expr::Number(0),
            span: p.here()..p.here(),
        }
    } else {
        p.operand()?
    };
    Ok(Expr::Position(Box::new(id)))
}

/// A position.
pub const TYPE: Ty = Ty::Position;

/// The position numbered `id`, if visible.
pub fn eval(id: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let Value::Num(id) = ev.value(id, cx)? else {
        return None;
    };
    let id = u32::try_from(id).ok()?;
    cx.game.visible(id).then_some(Value::Pos(id))
}

/// Index rule as a filter: none (whether the id exists depends on the game).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn by_id() {
        assert_eq!(matching("position 7 : mate", SCHOLAR).len(), 9);
        assert_eq!(matching("initialposition : wtm", SCHOLAR).len(), 9);
        assert_eq!(matching("position 99", SCHOLAR), Vec::<u32>::new());
        // Without variations, a variation's position is not there.
        let q = crate::parse("cql() position 8").expect("parses");
        let g = crate::filter::testing::game(SCHOLAR);
        let g = crate::eval::Game::new(1, g.positions, g.tags, false);
        assert!(
            crate::eval::Engine::new(q, false)
                .run_game(&g)
                .matched
                .is_empty()
        );
        assert_eq!(bounds_of("position 0"), bounds());
    }
}
