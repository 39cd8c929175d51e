//! `between(A, B)`: the squares strictly between a square of `A` and a square of `B` on a
//! line (rank, file or diagonal) joining them.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["between"];

/// Reads `between(A B)`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let (a, b) = p.pair(word)?;
    Ok(Expr::Between(a, b))
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// The squares between.
pub fn eval(a: &Node, b: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let x = ev.set(a, cx)?;
    let y = ev.set(b, cx)?;
    Some(Value::Set(board::between(x, y)))
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
    fn squares_on_the_line() {
        assert_eq!(matching("between(a1 a8) == a2-7", SCHOLAR).len(), 9);
        assert_eq!(matching("between(a1 b3)", SCHOLAR), Vec::<u32>::new());
        assert_eq!(bounds_of("between(K k)"), bounds());
    }
}
