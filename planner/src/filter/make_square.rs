//! `makesquare(F, R)`: the square on file `F` and rank `R` (numbers 1 to 8); no match for
//! other numbers. `makesquare "b3"`: the square a string names; no match for other strings.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["makesquare"];

/// Reads `makesquare(F R)` or `makesquare "b3"`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    if !p.sym_at(0, "(") {
        return Ok(Expr::MakeSquareOf(Box::new(p.value_operand()?)));
    }
    let (a, b) = p.pair(word)?;
    Ok(Expr::MakeSquare(a, b))
}

/// The square a string such as "b3" names.
pub fn eval_name(name: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let Value::Str(s) = ev.value(name, cx)? else {
        return None;
    };
    match s.as_bytes() {
        [f @ b'a'..=b'h', r @ b'1'..=b'8'] => Some(Value::Set(1 << ((r - b'1') * 8 + (f - b'a')))),
        _ => None,
    }
}

/// A square set (of one square).
pub const TYPE: Ty = Ty::Set;

/// The square, if both numbers are in 1..=8.
pub fn eval(file: &Node, rank: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let (Value::Num(f), Value::Num(r)) = (ev.value(file, cx)?, ev.value(rank, cx)?) else {
        return None;
    };
    if !(1..=8).contains(&f) || !(1..=8).contains(&r) {
        return None;
    }
    Some(Value::Set(1 << ((r - 1) * 8 + f - 1)))
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
    fn numbers_to_a_square() {
        assert_eq!(matching("makesquare(5 1) == e1", SCHOLAR).len(), 9);
        assert_eq!(matching("makesquare(9 1)", SCHOLAR), Vec::<u32>::new());
        assert_eq!(matching("K & makesquare(file K rank K)", SCHOLAR).len(), 9);
        assert_eq!(bounds_of("makesquare(1 1)"), bounds());
        assert_eq!(matching("makesquare \"b3\" == b3", SCHOLAR).len(), 9);
        assert_eq!(matching("makesquare \"b\" + \"3\" == b3", SCHOLAR).len(), 9);
        assert_eq!(matching("makesquare \"b9\"", SCHOLAR), Vec::<u32>::new());
    }
}
