//! The direction filters: `up`, `down`, `left`, `right`, `northeast`, `northwest`, `southeast`,
//! `southwest`, `vertical`, `horizontal`, `diagonal`, `orthogonal`, `anydirection`, with an
//! optional distance `N` or range `N M` (1 to 7 without one), then a set: the squares that
//! far from a square of the set in that direction, over any pieces. A negative distance is
//! that far the opposite way and 0 the square itself (`up -2 d4` is `d2`, `right -1 1 d4` is
//! `c-e4`). Inside a transform the
//! direction is read through its images (`rotate45` turns `horizontal` and `vertical` into
//! the two diagonal lines, which have no keyword).

use crate::ast::{Direction, Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::transform;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &[
    "up",
    "down",
    "left",
    "right",
    "northeast",
    "northwest",
    "southeast",
    "southwest",
    "vertical",
    "horizontal",
    "diagonal",
    "orthogonal",
    "anydirection",
];

/// Reads `up [N [M]] S`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let Some(d) = crate::ast_direction(word) else {
        unreachable!("every keyword names a direction")
    };
    let (lo, hi) = match signed_number(p) {
        None => (1, 7),
        Some(lo) => (lo, signed_number(p).unwrap_or(lo)),
    };
    // Beyond 7 squares every distance leaves the board.
    let clamp = |v: i64| v.clamp(-8, 8) as i8;
    let set = p.set_arg(word)?;
    Ok(Expr::Direction(d, clamp(lo), clamp(hi), Box::new(set)))
}

/// A number next, with a `-` before it read as its sign (a set cannot start with `-`).
fn signed_number(p: &mut dyn Syntax) -> Option<i64> {
    if p.number_at(0).is_some() {
        return p.number();
    }
    if p.number_at(1).is_some() && p.eat_sym("-") {
        return p.number().map(|n| -n);
    }
    None
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// The squares `lo..=hi` steps from `set` in direction `d` (seen through the transform).
pub fn eval(
    d: Direction,
    lo: i8,
    hi: i8,
    set: &Node,
    ev: &mut impl Evaluate,
    cx: &mut Cx,
) -> Option<Value> {
    let x = ev.set(set, cx)?;
    let d = transform::map_direction(&cx.transforms, d);
    Some(Value::Set(board::direction(d, lo, hi, x)))
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
    fn steps_and_ranges() {
        assert_eq!(matching("up 1 e2 == e3", SCHOLAR).len(), 9);
        assert_eq!(matching("up 2 3 e2 == e4-5", SCHOLAR).len(), 9);
        assert_eq!(matching("up e7 == e8", SCHOLAR).len(), 9);
        assert_eq!(matching("diagonal 1 a1 == b2", SCHOLAR).len(), 9);
        // In front of the white pawn on e4, Black's pawn on e5 from 1... e5.
        assert_eq!(
            matching("up 1 (P & e4) & p", SCHOLAR),
            (2..=8).collect::<Vec<u32>>()
        );
        assert_eq!(matching("flipcolor { down 1 e7 == e6 }", SCHOLAR).len(), 9);
        // Negative distances step the other way, 0 is the square itself.
        assert_eq!(matching("up -2 d4 == d2", SCHOLAR).len(), 9);
        assert_eq!(matching("right -1 1 d4 == c-e4", SCHOLAR).len(), 9);
        assert_eq!(matching("up 0 2 d4 == d4-6", SCHOLAR).len(), 9);
        assert_eq!(matching("vertical -1 d4 == [d3,d5]", SCHOLAR).len(), 9);
        assert_eq!(matching("diagonal 0 d4 == d4", SCHOLAR).len(), 9);
        assert_eq!(matching("down -3 -1 a1 == a2-4", SCHOLAR).len(), 9);
        assert_eq!(matching("up -9 9 d4 == d1-8", SCHOLAR).len(), 9);
        assert_eq!(matching("up 3 1 d4", SCHOLAR).len(), 0);
        assert_eq!(bounds_of("up P"), bounds());
    }
}
