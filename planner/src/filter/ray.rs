//! `ray(A B ...)`, `xray(A B ...)`, optionally with a direction word first: the squares of
//! the last set that lie on a line starting from a square of `A`, passing through a square of
//! each set in order, with the squares between them empty (for `xray`, any pieces on the way
//! but those in the sets are ignored too, as the reference does not distinguish them).

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
    ev: &mut impl Evaluate,
    cx: &mut Cx,
) -> Option<Value> {
    let mut values = Vec::with_capacity(sets.len());
    for s in sets {
        values.push(ev.set(s, cx)?);
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
}
