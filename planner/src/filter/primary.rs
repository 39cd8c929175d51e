//! `primary`, `secondary`: the move that reached the position was its parent's main move (an
//! alternative to it, that is, the first move of a variation). The game's first position is
//! neither.

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["primary", "secondary"];

/// Reads it (it has no arguments).
pub fn parse(word: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(if word == "primary" {
        Expr::Primary
    } else {
        Expr::Secondary
    })
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches after a main move (`primary`) or after an alternative.
pub fn eval(primary: bool, cx: &Cx) -> Option<Value> {
    let index = cx.position().child_index;
    let ok = if primary {
        cx.game.parent(cx.cur).is_some() && index == 0
    } else {
        index > 0
    };
    ok.then_some(Value::Matched)
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
    fn main_moves_and_alternatives() {
        assert_eq!(matching("secondary", SCHOLAR), vec![8]);
        assert_eq!(matching("primary", SCHOLAR), (1..=7).collect::<Vec<u32>>());
        assert_eq!(bounds_of("primary"), bounds());
    }
}
