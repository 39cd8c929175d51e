//! `light S`, `dark S`: the light (dark) squares of `S`.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["light", "dark"];

/// Reads `light S` or `dark S`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Shade(word == "light", Box::new(p.set_arg(word)?)))
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// `set`'s squares of the shade (`light` or dark).
pub fn eval(light: bool, set: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let x = ev.set(set, cx)?;
    // An image that maps light squares onto dark ones reads `light` as `dark`.
    let light = light != crate::transform::shades_swapped(&cx.transforms);
    Some(Value::Set(if light {
        x & board::LIGHT
    } else {
        x & !board::LIGHT
    }))
}

/// Index rule: none (the pieces inside are not bounded through it).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn splits_the_board() {
        // White's bishops start on c1 (dark) and f1 (light); the f1 bishop leaves at move 3.
        assert_eq!(matching("light B", SCHOLAR).len(), 9);
        assert_eq!(matching("dark B & f1", SCHOLAR), Vec::<u32>::new());
        assert_eq!(matching("light B & c4", SCHOLAR), vec![5, 6, 7, 8]);
        assert_eq!(bounds_of("light B"), bounds());
    }
}
