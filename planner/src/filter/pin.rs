//! `pin [from A] [through B] [to C]`: pins of a piece on `B` standing between a line piece on
//! `A` and a king (or a piece on `C`) of its own colour. The set it stands for follows the part
//! written first, as CQL says: with `from` first the pinning pieces, otherwise the pinned ones
//! (`pin from Q` and `pin from Q through [Aa] to [Kk]` are the same filter).

use crate::ast::{Expr, Node, PinSet};
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
    let mut first = None;
    loop {
        let (slot, set) = if p.eat_word("from") {
            (&mut from, PinSet::Pinning)
        } else if p.eat_word("through") {
            (&mut through, PinSet::Pinned)
        } else if p.eat_word("to") {
            (&mut to, PinSet::Pinned)
        } else {
            break;
        };
        first.get_or_insert(set);
        *slot = Some(Box::new(p.operand()?));
    }
    let set = first.unwrap_or(PinSet::Pinned);
    Ok(Expr::Pin(from, through, to, set))
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// The pinned or the pinning pieces, as `set` says; the parts are `from`, `through`, `to`.
pub fn eval(
    [from, through, to]: [Option<&Node>; 3],
    set: PinSet,
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
    Some(Value::Set(match set {
        PinSet::Pinning => pinners,
        PinSet::Pinned => pinned,
    }))
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
        // The part written first decides the set: `from` first, the pinning pieces.
        assert_eq!(matching("pin from B through n == b5", pgn), vec![6]);
        assert_eq!(
            matching("pin from B through [Aa] to [Kk] == b5", pgn),
            vec![6]
        );
        assert_eq!(matching("pin through n from B == c6", pgn), vec![6]);
        assert_eq!(matching("pin to k from B == c6", pgn), vec![6]);
        assert_eq!(bounds_of("pin"), bounds());
    }
}
