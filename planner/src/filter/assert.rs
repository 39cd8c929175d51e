//! `assert F`: a check written into a query. Where F holds it matches (it has no value);
//! where F fails the whole run stops with an error naming the assertion and the position,
//! rather than going on with an answer the query's author said is wrong.

use crate::ast::{Expr, Node};
use crate::eval::context::matches;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["assert"];

/// Reads the filter asserted.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Assert(Box::new(p.whole_filter()?)))
}

/// Matches, or records the failure that stops the run.
pub fn eval(f: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    if matches(&ev.value(f, cx)) {
        return Some(Value::Matched);
    }
    if cx.halt.is_none() {
        let at = cx.locate_text(cx.cur);
        cx.halt = Some(format!(
            "the assertion at bytes {}..{} of the query failed at {at}",
            f.span.start, f.span.end
        ));
    }
    None
}

/// Index rule: none (it must see every position the query visits).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use crate::eval::Engine;
    use crate::filter::testing::{SCHOLAR, game};

    #[test]
    fn a_halt_is_reported() {
        let q = crate::parse("cql() assert ply < 5").unwrap();
        let m = Engine::new(q, true).run_game(&game(SCHOLAR));
        assert!(m.halt.is_some_and(|w| w.contains("failed")));
        let q = crate::parse("cql() assert ply < 50").unwrap();
        let m = Engine::new(q, true).run_game(&game(SCHOLAR));
        assert!(m.halt.is_none());
        assert_eq!(m.matched.len(), 9);
    }
}
