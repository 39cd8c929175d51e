//! `consecutivemoves [quiet] [N [M]] (X Y)`: of the moves played from the latest common
//! ancestor of positions X and Y down to X, and down to Y, the length of the longest run of
//! consecutive moves that is the same in both (same piece from the same square to the same
//! square, same promotion); with a range, a match only when the length lies in it. (The
//! reference marks the runs with comments whose wording it does not document; none are
//! written here, `quiet` or not.)

use crate::ast::{ConsecutiveMoves, Expr};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["consecutivemoves"];

/// Reads `quiet` and a range in either order, then `(X Y)`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let mut quiet = p.eat_word("quiet");
    let range = p.number().map(|lo| (lo, p.number().unwrap_or(lo)));
    quiet |= p.eat_word("quiet");
    let (x, y) = p.pair(word)?;
    Ok(Expr::ConsecutiveMoves(Box::new(ConsecutiveMoves {
        quiet,
        range,
        x: *x,
        y: *y,
    })))
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The moves from `from` (exclusive) down to `to`, in order, each as what identifies a move:
/// its code and the piece that made it.
fn moves_between(cx: &Cx, from: u32, to: u32) -> Vec<(u32, Option<usize>)> {
    let g = cx.game;
    let mut out = Vec::new();
    let mut at = to;
    while at != from {
        let Some(parent) = g.parent(at) else { break };
        let rec = &g.positions[at as usize];
        let piece = rec
            .mv
            .from()
            .and_then(|sq| board::piece_on(&g.positions[parent as usize], u32::from(sq)));
        out.push((rec.mv.0, piece));
        at = parent;
    }
    out.reverse();
    out
}

/// The longest common run of the two lines' moves.
pub fn eval(c: &ConsecutiveMoves, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let x = ev.position(&c.x, cx)?;
    let y = ev.position(&c.y, cx)?;
    let l = cx.game.lca(x, y);
    let ply = |p: u32| u64::from(cx.game.positions[p as usize].ply);
    let (na, nb) = (ply(x) - ply(l), ply(y) - ply(l));
    // The comparison is quadratic in the lines' lengths, and walking them linear.
    if !cx.charge(na + nb + na.saturating_mul(nb), "consecutivemoves") {
        return None;
    }
    let (a, b) = (moves_between(cx, l, x), moves_between(cx, l, y));
    // Longest common substring, one row of the table at a time.
    let mut best = 0usize;
    let mut prev = vec![0usize; b.len() + 1];
    for ma in &a {
        let mut cur = vec![0usize; b.len() + 1];
        for (j, mb) in b.iter().enumerate() {
            if ma == mb {
                cur[j + 1] = prev[j] + 1;
                best = best.max(cur[j + 1]);
            }
        }
        prev = cur;
    }
    let n = best as i64;
    match c.range {
        Some((lo, hi)) if !(lo..=hi).contains(&n) => None,
        _ => Some(Value::Num(n)),
    }
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::matching;

    /// Main line 1. e4 e5 2. Nf3 Nc6 3. Bb5; a variation 1... c5 2. Nf3 Nc6 3. Bb5.
    const TRY: &str = "[Event \"t\"]\n[Result \"*\"]\n\n1. e4 e5 (1... c5 2. Nf3 Nc6 3. Bb5) 2. Nf3 Nc6 3. Bb5 *\n";

    #[test]
    fn runs_after_the_common_ancestor() {
        // From the main line's end, to the variation's end: e5 Nf3 Nc6 Bb5 against c5 Nf3 Nc6
        // Bb5 share the run Nf3 Nc6 Bb5.
        let both =
            "terminal mainline echo (s t) { terminal variation consecutivemoves (s t) == 3 }";
        assert!(!matching(both, TRY).is_empty(), "{both}");
        let ranged =
            "terminal mainline echo (s t) { terminal variation consecutivemoves 4 10 (s t) }";
        assert!(matching(ranged, TRY).is_empty());
        let quiet_first =
            "terminal mainline echo (s t) { terminal variation consecutivemoves quiet 3 (s t) }";
        assert!(!matching(quiet_first, TRY).is_empty());
    }
}
