//! `ray [direction] (A B ...)`: the squares of `A` from which a line (in the direction, or
//! any) passes through a square of each following set in order, with the squares between them
//! empty. `xray (A B ...)` is the same along the lines `A`'s pieces move on, as CQL defines it:
//! `ray orthogonal ({A&[RrQq]} B ...) | ray diagonal ({A&[BbQq]} B ...)`.

use crate::ast::{Direction, Expr, Node};
use crate::error::ParseError;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::transform;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["ray", "xray"];

/// Reads `ray [direction] (A B ...)`: at least two sets.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let start = p.here();
    let dir = p.direction();
    if word == "xray"
        && let Some(d) = dir
    {
        return Err(ParseError::new(
            format!("'xray' takes no direction ('{d:?}'): it follows the lines its pieces move on"),
            start..p.here(),
        ));
    }
    let args = p.any_args()?;
    if args.len() < 2 {
        return Err(ParseError::new(
            format!("'{word}' needs at least two sets"),
            start..p.here(),
        ));
    }
    Ok(Expr::Ray(dir, args, word == "xray"))
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// The ray's end squares.
pub fn eval(
    dir: Option<Direction>,
    sets: &[Node],
    xray: bool,
    ev: &mut impl Evaluate,
    cx: &mut Cx,
) -> Option<Value> {
    let mut values = Vec::with_capacity(sets.len());
    for s in sets {
        values.push(ev.set(s, cx)?);
    }
    if xray {
        return Some(Value::Set(board::xray(cx.position(), &values)));
    }
    let dir = dir.map(|d| transform::map_direction(&cx.transforms, d));
    Some(Value::Set(board::ray(cx.position(), dir, &values)))
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
    fn lines_through_sets() {
        // After 2. Qh5 the queen eyes f7 over the empty g6 (3... g6 blocks it).
        assert_eq!(matching("ray(Q f7)", SCHOLAR), vec![3, 4, 5, 6]);
        assert_eq!(matching("ray diagonal (Q p)", SCHOLAR), vec![3, 4, 5, 6, 8]);
        assert_eq!(matching("ray orthogonal (Q k)", SCHOLAR), Vec::<u32>::new());
        assert!(crate::parse("cql() ray(Q)").is_err());
        assert_eq!(bounds_of("ray(Q k)"), bounds());
    }

    /// `xray` is a ray along the lines its first set's pieces move on.
    #[test]
    fn xray_follows_the_pieces_lines() {
        // After 2. Qh5 the queen eyes f7 diagonally over g6.
        assert_eq!(matching("xray(Q f7)", SCHOLAR), vec![3, 4, 5, 6]);
        // A bishop does not move along a file, a rook not along a diagonal (the bishop stands
        // on f1 in the first five positions, until 3. Bc4).
        assert_eq!(matching("ray(Bf1 Ph2)", SCHOLAR).len(), 0);
        assert_eq!(matching("ray(Rh1 Pg2)", SCHOLAR).len(), 9);
        assert_eq!(matching("xray(Rh1 Pg2)", SCHOLAR).len(), 0);
        assert_eq!(matching("xray(Rh1 Ph2)", SCHOLAR).len(), 9);
        assert_eq!(matching("ray(Bf1 Pg2)", SCHOLAR).len(), 5);
        assert_eq!(matching("xray(Bf1 Pg2)", SCHOLAR).len(), 5);
        assert_eq!(matching("xray(Bf1 Pf2)", SCHOLAR).len(), 0);
        assert_eq!(matching("ray(Bf1 Pf2)", SCHOLAR).len(), 5);
        // A knight or a pawn first: no line at all.
        assert_eq!(matching("xray(Ng1 Ph2)", SCHOLAR).len(), 0);
        // The definition itself, at every position.
        for (x, rest) in [
            ("R", "a k"),
            ("B", "a k"),
            ("Q", "A K"),
            ("[Aa]", "[Aa] [Kk]"),
        ] {
            let q = format!(
                "xray ({x} {rest}) == (ray orthogonal (({x}&[RrQq]) {rest}) | ray diagonal (({x}&[BbQq]) {rest}))"
            );
            assert_eq!(matching(&q, SCHOLAR).len(), 9, "{q}");
        }
        assert!(crate::parse("cql() xray diagonal (Q k)").is_err());
    }
}
