//! `child`, `child(N)`: the position after the current one's main move (its `N`th move, 0
//! being the main one); none where there is no such move.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["child"];

/// Reads `child` or `child(N)` (the parenthesis attached to the word).
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    if !p.paren_attached() {
        return Ok(Expr::Child(None));
    }
    let n = p
        .paren_args(1, word)?
        .pop()
        .unwrap_or_else(|| unreachable!("paren_args(1) gives one argument"));
    Ok(Expr::Child(Some(Box::new(n))))
}

/// A position.
pub const TYPE: Ty = Ty::Position;

/// The child reached by move `index` (the main one without it).
pub fn eval(index: Option<&Node>, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let i = match index {
        None => 0,
        Some(n) => match ev.value(n, cx)? {
            Value::Num(v) => usize::try_from(v).ok()?,
            _ => return None,
        },
    };
    cx.game.children(cx.cur).get(i).copied().map(Value::Pos)
}

/// Index rule: a position with a move after it is not terminal (an upper bound: `child(1)`
/// needs a second move).
pub fn bounds() -> Bounds {
    Bounds {
        upper: Scan::complement(Scan::Flag(PositionFlag::Terminal)),
        lower: Scan::Empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn main_move_and_alternatives() {
        assert_eq!(matching("child : check", SCHOLAR), vec![6]);
        assert_eq!(matching("child(1)", SCHOLAR), vec![5]);
        assert_eq!(matching("child(1) == position 8", SCHOLAR), vec![5]);
        assert_eq!(matching("child", SCHOLAR), (0..=6).collect::<Vec<u32>>());
        assert_eq!(bounds_of("child"), bounds());
    }
}
