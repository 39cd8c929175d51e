//! `pin [from A] [through B] [to C]`: the pinned pieces — pieces on `B` standing between a
//! line piece on `A` and a king (or a piece on `C`) of their own colour. With only `from`, its
//! value is the pinning pieces instead.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["pin"];

/// Reads `pin` and its `from`, `through` and `to` parts, in any order.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let (mut from, mut through, mut to) = (None, None, None);
    loop {
        let slot = if p.eat_word("from") {
            &mut from
        } else if p.eat_word("through") {
            &mut through
        } else if p.eat_word("to") {
            &mut to
        } else {
            break;
        };
        *slot = Some(Box::new(p.operand()?));
    }
    Ok(Expr::Pin(from, through, to))
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// The pinned (or, with only `from`, pinning) pieces.
pub fn eval(
    from: Option<&Node>,
    through: Option<&Node>,
    to: Option<&Node>,
    ev: &mut impl Evaluate,
    cx: &mut Cx,
) -> Option<Value> {
    let from_set = match from {
        Some(f) => ev.set(f, cx)?,
        None => u64::MAX,
    };
    let through_set = match through {
        Some(t) => ev.set(t, cx)?,
        None => u64::MAX,
    };
    let to_set = match to {
        Some(t) => Some(ev.set(t, cx)?),
        None => None,
    };
    let (pinned, pinners) = board::pins(cx.position(), from_set, through_set, to_set);
    let only_from = from.is_some() && through.is_none() && to.is_none();
    Some(Value::Set(if only_from { pinners } else { pinned }))
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{bounds as bounds_of, matching};

    #[test]
    fn pinned_and_pinning() {
        // The bishop on b5 pins the knight on c6 to the king on e8 once d7 is empty.
        let pgn = "1. e4 e5 2. Nf3 Nc6 3. Bb5 d6 *\n";
        assert_eq!(matching("pin == c6", pgn), vec![6]);
        assert_eq!(matching("pin from B == b5", pgn), vec![6]);
        assert_eq!(matching("pin through n", pgn), vec![6]);
        assert_eq!(matching("pin from Q", pgn), Vec::<u32>::new());
        assert_eq!(bounds_of("pin"), bounds());
    }
}
