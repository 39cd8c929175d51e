//! `notransform F`: F as written, whatever transform encloses it (`flip { Ka1 notransform
//! a1 }` keeps `a1` in every image). The value is F's.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};

/// Its keyword.
pub const KEYWORDS: &[&str] = &["notransform"];

/// Reads the filter.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::NoTransform(Box::new(p.operand()?)))
}

/// F evaluated with no transform in force.
pub fn eval(f: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let saved = std::mem::take(&mut cx.transforms);
    let v = ev.value(f, cx);
    cx.transforms = saved;
    v
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, matching};

    #[test]
    fn the_body_as_written() {
        // At the start White is to move: `btm`'s colour-swapped image holds there, but not
        // when it is kept as written.
        assert!(matching("flipcolor btm", SCHOLAR).contains(&0));
        assert!(!matching("flipcolor notransform btm", SCHOLAR).contains(&0));
        assert!(matching("flipcolor { Ke1 notransform Ke1 }", SCHOLAR).contains(&0));
    }
}
