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
    // No run is longer than the shorter line: when one position is the other's ancestor (an
    // `echo` along one line, most of its pairs) the answer is 0, and a range above the
    // shorter line's length cannot be met. Neither needs the lines walked, which keeps an
    // `echo` over a long game's pairs within the work allowed for a game.
    let most = i64::try_from(na.min(nb)).unwrap_or(i64::MAX);
    if let Some((lo, _)) = c.range
        && lo > most
    {
        return None;
    }
    if most == 0 {
        return in_range(c, 0);
    }
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
    in_range(c, best as i64)
}

/// The value `n`, or no match when the filter has a range without it.
fn in_range(c: &ConsecutiveMoves, n: i64) -> Option<Value> {
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

    /// An `echo` over every pair of a long game's positions: along one line the run is 0
    /// without the lines being walked, so the game stays within the work allowed for it
    /// (walking the lines of its 160,000 pairs went past the 20 M allowed before).
    #[test]
    fn an_echo_over_a_long_line_is_not_stopped() {
        let shuffle = (0..99)
            .map(|k| format!("{}. Nf3 Nf6 {}. Ng1 Ng8", 2 * k + 1, 2 * k + 2))
            .collect::<Vec<_>>()
            .join(" ");
        let with_try = format!(
            "[Event \"t\"]\n[Result \"*\"]\n\n{shuffle} 199. Nf3 Nf6 (199... Nc6 200. Ng1 Nb8) 200. Ng1 Ng8 *\n"
        );
        let g = crate::filter::testing::game(&with_try);
        let run = |q: &str| {
            let q = crate::parse(&format!("cql(variations) {q}")).expect("parses");
            crate::eval::Engine::new(q, true).run_game(&g)
        };
        let r = run("echo (s t) consecutivemoves quiet 15 100 (s t)");
        assert_eq!(r.halt, None, "{:?}", r.warnings);
        assert!(r.matched.is_empty());
        // Without a range every pair still gets its value (0 along one line).
        let r = run("echo (s t) consecutivemoves (s t) == 0");
        assert_eq!(r.halt, None);
        let missing: Vec<u32> = (0..g.len() as u32)
            .filter(|p| !r.matched.contains(p))
            .collect();
        assert_eq!(missing, Vec::<u32>::new());
        // A variation's lines are still compared: Nf6 Ng1 Ng8 after the last common position.
        let r =
            run("terminal variation echo (s t) { terminal mainline consecutivemoves (s t) >= 1 }");
        assert_eq!(r.halt, None);
        assert_eq!(r.matched.len(), 1);
    }
}
