//! `echo [quiet] (s t) [in all] body`: the current position is the source `s`; every other
//! position the query visits (with `in all` the source too) is a target `t`, at which `body` is
//! evaluated (the current position moved there). It matches when `body` does at some target;
//! its value is the largest of a numeric body's values. Pairs across variations are visited
//! when the query visits variations.
//!
//! Unless `quiet` (or the header's `quiet`), the source gets the note `s <--where <--where`
//! naming every matching target, and each matching target the note `t -->where` naming its
//! sources (one note per target, the sources added as they come). After the filter `s` and `t`
//! are unbound again.
//!
//! Parsed with the language's core (`filters.rs`): its names are new variables. A body that
//! only tests the pair of positions runs compiled (`pairs.rs`).

pub mod pair_plan;
mod pairs;

use crate::ast::Echo;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, matches};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// What the engine lets `echo` do with its variables.
pub trait Bind {
    /// Sets (or with `None` unbinds) the variable in `slot`.
    fn bind(&mut self, slot: usize, v: Option<Value>);
    /// The name of the variable in `slot`.
    fn name(&self, slot: usize) -> String;
    /// `e`'s body compiled and split (see [`pair_plan`]), made once per echo, with its
    /// columns over `g`, made once per game; `None` if the body cannot be compiled.
    fn pairs(
        &mut self,
        e: &Echo,
        g: &crate::eval::game::Game,
    ) -> Option<(
        std::sync::Arc<pair_plan::PairPlan>,
        std::sync::Arc<pair_plan::GameColumns>,
    )>;
}

/// A number when the body is one, else a match without value.
pub fn ty(body_ty: Ty) -> Ty {
    if body_ty == Ty::Number {
        Ty::Number
    } else {
        Ty::Logical
    }
}

/// The marker of a target note in the comment list: merged per target and name at the end of
/// the game (see [`crate::eval::Cx::merge_notes`]).
pub const TARGET_NOTE: char = '\u{1}';

/// Evaluates the echo at the current position.
pub fn eval(e: &Echo, ev: &mut (impl Evaluate + Bind), cx: &mut Cx) -> Option<Value> {
    let g = cx.game;
    let source = cx.cur;
    let mut best: Option<i64> = None;
    let mut any = false;
    let mut hits = Vec::new();
    if !cx.charge(g.len() as u64, "echo") {
        return None;
    }
    // Literals read through transforms are the interpreter's business.
    if cx.transforms.is_empty()
        && let Some((plan, columns)) = ev.pairs(e, g)
    {
        // Without notes only whether some target matches counts.
        let first_only = e.quiet || cx.quiet;
        let visible = |t: u32| g.visible(t) && (t != source || e.in_all);
        hits = plan.targets(g, &columns, source, visible, first_only);
        // As after an interpreted echo, its names are unbound.
        ev.bind(e.source, None);
        ev.bind(e.target, None);
        if hits.is_empty() {
            return None;
        }
        note(e, ev, cx, source, &hits);
        return Some(Value::Matched);
    }
    ev.bind(e.source, Some(Value::Pos(source)));
    for t in 0..g.len() as u32 {
        if !g.visible(t) || (t == source && !e.in_all) {
            continue;
        }
        ev.bind(e.target, Some(Value::Pos(t)));
        cx.cur = t;
        let mark = cx.comments.len();
        let v = ev.value(&e.body, cx);
        if !matches(&v) {
            cx.comments.truncate(mark);
            continue;
        }
        any = true;
        hits.push(t);
        if let Some(Value::Num(n)) = v {
            best = Some(best.map_or(n, |b| b.max(n)));
        }
    }
    cx.cur = source;
    ev.bind(e.source, None);
    ev.bind(e.target, None);
    if !any {
        return None;
    }
    note(e, ev, cx, source, &hits);
    Some(match best {
        Some(n) => Value::Num(n),
        None => Value::Matched,
    })
}

/// The notes of a matching echo (none when quiet).
fn note(e: &Echo, ev: &mut impl Bind, cx: &mut Cx, source: u32, hits: &[u32]) {
    if !e.quiet && !cx.quiet {
        let (s, t) = (ev.name(e.source), ev.name(e.target));
        let mut note = s;
        for &h in hits {
            note.push_str(" <--");
            let at = cx.locate(h);
            note.push_str(&at);
        }
        let from = cx.locate(source);
        for &h in hits {
            cx.comments
                .push((h, format!("{TARGET_NOTE}{t}{TARGET_NOTE} -->{from}")));
        }
        cx.comments.push((source, note));
    }
}

/// Index rule: none (it relates positions of the game).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::matching;

    /// The body is one whole filter, its comparison included: `s & t == .` compares the two
    /// boards, as `{s & t == .}` does.
    #[test]
    fn the_body_takes_its_comparison() {
        // Positions: 0 start, 1 Nf3, 2 Nf6, 3 Ng1, 4 Ng8 (the start's board again), 5 e4.
        let shuffle = "[Event \"t\"]\n[Result \"*\"]\n\n1. Nf3 Nf6 2. Ng1 Ng8 3. e4 *\n";
        let braced = matching("echo quiet (s t) { s & t == . }", shuffle);
        assert_eq!(braced, vec![0, 4]);
        assert_eq!(matching("echo quiet (s t) s & t == .", shuffle), braced);
        // A number compared inside the body, at each target: some other position is the
        // second one, for every source but that one (the echo's own value, the largest id
        // of a target, is never 1).
        assert_eq!(
            matching("echo quiet (s t) positionid == 1", shuffle),
            vec![0, 2, 3, 4, 5]
        );
    }
}
