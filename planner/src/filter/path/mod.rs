//! `path` (⊢) and the deprecated `line`: regular expressions over the moves of the game tree,
//! and the path status filters (`pathstart`, `pathlastposition`, `pathcount`,
//! `pathcountunfocused`).
//!
//! A `path` starts at the current position; its dash constituents are moves of the game (any
//! branch, or with `primary` only main continuations; variations only when the query visits
//! them), its other constituents test the position reached. Its value is the number of moves
//! of its longest match (with `focus`, of moves by the focused pieces; with `lastposition`,
//! the position the match ends at; with `max F`, the match where `F` is largest at its end;
//! with `firstmatch`, the first match found). `line --> C1 --> C2 ...` matches one position per
//! constituent, each a move after the one before (`<--`: before it); its value counts
//! positions.
//!
//! A match writes `Start path that ends at <where>` at its start and `End path of length L that
//! starts at <where>` at its end (`line` for a line; not with `quiet`, in the query or its
//! header; the End note is made first, as the reference orders them). Without `nestban` every
//! position of a long run starts a match of its own; with it, no match starts inside an earlier
//! one.
//!
//! Syntax in `syntax.rs`, the search in `matcher.rs`.

mod matcher;
mod syntax;

use crate::ast::{Expr, PathFilter, PathKind, PathStatus, Pattern};
use crate::eval::context::PathRun;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::Scan;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &[
    "path",
    "line",
    "pathstart",
    "pathlastposition",
    "pathcount",
    "pathcountunfocused",
];

/// Reads `path ...`, `line ...` or a status filter.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    match word {
        "path" => syntax::path(p),
        "line" => syntax::line(p),
        "pathstart" => Ok(Expr::PathStatus(PathStatus::Start)),
        "pathlastposition" => Ok(Expr::PathStatus(PathStatus::LastPosition)),
        "pathcount" => Ok(Expr::PathStatus(PathStatus::Count)),
        _ => Ok(Expr::PathStatus(PathStatus::CountUnfocused)),
    }
}

/// A number (its length), or with `lastposition` a position.
pub fn ty(f: &PathFilter) -> Ty {
    if f.params.lastposition {
        Ty::Position
    } else {
        Ty::Number
    }
}

/// A position for `pathstart` and `pathlastposition`, else a number.
pub fn status_ty(s: PathStatus) -> Ty {
    match s {
        PathStatus::Start | PathStatus::LastPosition => Ty::Position,
        PathStatus::Count | PathStatus::CountUnfocused => Ty::Number,
    }
}

/// The best match from the current position, with its notes.
pub fn eval(f: &PathFilter, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let start = cx.cur;
    let key = std::ptr::from_ref(f) as usize;
    if f.params.nestban
        && cx
            .path_banned
            .get(&key)
            .is_some_and(|banned| banned.contains(&start))
    {
        return None;
    }
    let focus = match &f.params.focus {
        Some((_, s)) => {
            let squares = ev.set(s, cx)?;
            let ids = &cx.game.piece_ids()[start as usize];
            Some(
                crate::eval::board::bits(squares)
                    .map(|sq| ids[sq as usize])
                    .filter(|&id| id != 0)
                    .collect(),
            )
        }
        None => None,
    };
    let search = matcher::Search {
        f,
        nfa: matcher::Nfa::of(&f.pattern),
        focus,
        start,
    };
    // What the search evaluated on the way (branches that did not become the match) leaves
    // no note.
    let mark = cx.comments.len();
    let found = search.run(ev, cx);
    cx.comments.truncate(mark);
    let found = found?;
    let is_line = matches!(f.kind, PathKind::Line { .. });
    if f.params.nestban {
        let inside = found.positions.iter().skip(usize::from(is_line)).copied();
        cx.path_banned.entry(key).or_default().extend(inside);
    }
    cx.last_path = Some(PathRun {
        start,
        end: found.end,
        count: found.len,
        walked: found.walked,
    });
    if found.len > 0 && !f.params.quiet && !cx.quiet {
        let name = f
            .params
            .title
            .clone()
            .unwrap_or_else(|| if is_line { "line" } else { "path" }.to_owned());
        let from = cx.locate(start);
        cx.comments.push((
            found.end,
            format!("End {name} of length {} that starts at {from}", found.len),
        ));
        let to = cx.locate(found.end);
        cx.comments
            .push((start, format!("Start {name} that ends at {to}")));
    }
    Some(if f.params.lastposition {
        Value::Pos(found.end)
    } else {
        Value::Num(i64::from(found.len))
    })
}

/// What the last matching path found.
pub fn status(s: PathStatus, cx: &Cx) -> Option<Value> {
    let run = cx.last_path?;
    Some(match s {
        PathStatus::Start => Value::Pos(run.start),
        PathStatus::LastPosition => Value::Pos(run.end),
        PathStatus::Count => Value::Num(i64::from(run.count)),
        PathStatus::CountUnfocused => Value::Num(i64::from(run.walked)),
    })
}

/// Index rule: every constituent the pattern cannot do without holds at some position of the
/// game, so the game has a position in each one's upper bound. `bound` gives a filter's bounds.
pub fn bounds(f: &PathFilter, bound: &dyn Fn(&crate::ast::Node) -> Bounds) -> Bounds {
    let mut needed = Vec::new();
    mandatory(&f.pattern, &mut needed);
    let upper = needed
        .into_iter()
        .map(|n| Scan::games_with(bound(n).upper))
        .fold(Scan::All, Scan::and);
    Bounds {
        upper,
        lower: Scan::Empty,
    }
}

/// The filters of `p` every match passes (not under a repetition that may be skipped).
fn mandatory<'a>(p: &'a Pattern, out: &mut Vec<&'a crate::ast::Node>) {
    match p {
        Pattern::Seq(items) => items.iter().for_each(|i| mandatory(i, out)),
        Pattern::Repeat(inner, min, _) if *min > 0 => mandatory(inner, out),
        Pattern::Repeat(..) | Pattern::Step => {}
        Pattern::Test(n) => out.push(n),
        Pattern::Move(_, then) => out.extend(then),
    }
}

/// The status filters look at the last match: no rule.
pub fn status_bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::matching;

    /// Checks at positions 3 (2. Qh5+) and 5 (3. Qxg6+).
    const CHECKS: &str =
        "[Event \"t\"]\n\n1. e4 f5 2. Qh5+ g6 3. Qxg6+ hxg6 4. Bd3 Rxh2 5. Rxh2 Nc6 *\n";

    #[test]
    fn paths_count_moves_and_lines_positions() {
        // A check, a move, a check: three moves from position 2.
        assert_eq!(matching("path -- check -- -- check", CHECKS), vec![2]);
        assert_eq!(
            matching("(path -- check -- -- check) == 3", CHECKS),
            vec![2]
        );
        // A line of three positions: a check, a non-check, a check.
        assert_eq!(
            matching("(line --> check --> not check --> check) == 3", CHECKS),
            vec![3]
        );
        assert_eq!(
            matching("line <-- check <-- not check <-- check", CHECKS),
            vec![5]
        );
        // Repetition: the longest run of (check, reply) pairs.
        assert_eq!(matching("(path (-- check --){2,}) == 4", CHECKS), vec![2]);
        // A path that needs a capture on g6 by the queen.
        assert_eq!(matching("path -- -- Q[x]g6", CHECKS), vec![2]);
        // Every suffix of a run is a match of its own, unless nestban forbids it.
        assert_eq!(
            matching("path --{3}", CHECKS),
            (0..=7).collect::<Vec<u32>>()
        );
        assert_eq!(matching("path nestban --{3}", CHECKS), vec![0, 4]);
    }

    #[test]
    fn the_path_ends_at_a_filter_after_a_group() {
        let q = crate::parse("cql() Run = path (-- check --){1,} Run >= 2").expect("parses");
        assert_eq!(q.body.len(), 2);
        assert!(crate::parse("cql() path (N[x]f7 | B[x]f7) k[x]f7").is_err());
        assert!(crate::parse("cql() path P--=Q check? [x]Qa-h8").is_ok());
        assert!(crate::parse("cql() line --> check <-- check").is_err());
    }
}
