//! `parent`: the position before the current one (none at the game's first position).

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["parent"];

/// Reads it (it has no arguments).
pub fn parse(_: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Parent)
}

/// A position.
pub const TYPE: Ty = Ty::Position;

/// The parent position.
pub fn eval(cx: &Cx) -> Option<Value> {
    cx.game.parent(cx.cur).map(Value::Pos)
}

/// Index rule: every position but the first of its game, exactly.
pub fn bounds() -> Bounds {
    Bounds::exact(Scan::complement(Scan::Flag(PositionFlag::Initial)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn one_move_back() {
        assert_eq!(matching("parent", SCHOLAR), (1..=8).collect::<Vec<u32>>());
        assert_eq!(matching("parent : check", SCHOLAR), Vec::<u32>::new());
        // The variation's position follows 3. Bc4 (position 5).
        assert_eq!(matching("parent == position 5", SCHOLAR), vec![6, 8]);
        assert_eq!(bounds_of("parent"), bounds());
    }
}
