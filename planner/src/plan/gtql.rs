//! GTQL over indexed game trees: what the index can say of a query's node part.
//!
//! A node is an answer only where the node part holds, so the node part's upper bound (over
//! the attributes the index keeps as flags: main line, check, mate, ..., comparisons of ply
//! and depth with numbers, and comparisons of the game's own values — its number, year,
//! ratings and result — with numbers) bounds the answers;
//! games without a candidate position hold no answer and are not fed to the pass. Child,
//! subtree and sibling parts, aggregates and ancestor references are the residual. A
//! stand-alone count ranges over every node, so it is never pruned.

use crate::gtql::{GExpr, GOp, GtqlQuery, Scope};

use super::bounds::{Bounds, TreeAttr, game_range_bounds, range_bounds};
use super::scan::{GameAttr, Scan};
use super::{Estimate, RunStats};
use crate::ast::CmpOp;

/// What the index knows of one attribute of a game tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexedAttr {
    /// A 0/1 attribute with this scan (`check`, `mainline`, ...).
    Flag(Scan),
    /// A position's ply or depth: comparisons with numbers become ranges.
    Tree(TreeAttr),
    /// The game's number (from 1 across the database): comparisons become ranges of games.
    GameNumber,
    /// A number from the game's tags as CQL's filters read it (`year`, `elo white`), 0 where
    /// the tag is missing or not a number: comparisons that 0 fails become ranges of values.
    GameValue(GameAttr),
    /// The game's result from its first `Result` tag: see [`RESULT_CODES`].
    GameResult,
}

/// The values of GTQL's `result` over games: the first `Result` tag, spelled exactly as CQL's
/// `result` reads it; [`NO_RESULT`] for any other (`*`, a missing or misspelt tag).
pub const RESULT_CODES: [(&str, i64); 3] = [("1-0", 1), ("1/2-1/2", 0), ("0-1", -1)];

/// GTQL's `result` of a game without one of [`RESULT_CODES`].
pub const NO_RESULT: i64 = -2;

/// The candidate positions of a query's answers, given what the index knows of each attribute
/// (`None` for the others); `Scan::All` when the index cannot help.
pub fn answer_bounds(q: &GtqlQuery, flag_of: &dyn Fn(usize) -> Option<IndexedAttr>) -> Scan {
    if q.standalone.is_some() {
        return Scan::All;
    }
    match &q.node {
        Some(e) => truth(e, flag_of).upper,
        None => Scan::All,
    }
}

/// The bounds of `e` as a condition (true where non-zero).
fn truth(e: &GExpr, attr_of: &dyn Fn(usize) -> Option<IndexedAttr>) -> Bounds {
    let flag_of = |a: usize| match attr_of(a) {
        Some(IndexedAttr::Flag(s)) => Some(s),
        _ => None,
    };
    // `ply > 40`, `20 >= ply`, `depth = 0`: ranges.
    if let GExpr::Bin(op, a, b) = e
        && let Some(bounds) = tree_comparison(*op, a, b, attr_of)
    {
        return bounds;
    }
    match e {
        GExpr::Attr(Scope::Bare, a) => flag_of(*a).map_or_else(Bounds::unknown, Bounds::exact),
        GExpr::Num(n) => Bounds::exact(if *n != 0 { Scan::All } else { Scan::Empty }),
        GExpr::Not(a) => {
            let b = truth(a, attr_of);
            Bounds {
                upper: Scan::complement(b.lower),
                lower: Scan::complement(b.upper),
            }
        }
        GExpr::Bin(GOp::And, a, b) => {
            let (a, b) = (truth(a, attr_of), truth(b, attr_of));
            Bounds {
                upper: Scan::and(a.upper, b.upper),
                lower: Scan::and(a.lower, b.lower),
            }
        }
        GExpr::Bin(GOp::Or, a, b) => {
            let (a, b) = (truth(a, attr_of), truth(b, attr_of));
            Bounds {
                upper: Scan::or(a.upper, b.upper),
                lower: Scan::or(a.lower, b.lower),
            }
        }
        // `flag = 1`, `flag != 0`, `0 = flag`, ... for a 0/1 flag.
        GExpr::Bin(op @ (GOp::Eq | GOp::Ne), a, b) => {
            let (attr, n) = match (&**a, &**b) {
                (GExpr::Attr(Scope::Bare, x), GExpr::Num(n))
                | (GExpr::Num(n), GExpr::Attr(Scope::Bare, x)) => (*x, *n),
                _ => return Bounds::unknown(),
            };
            let Some(flag) = flag_of(attr) else {
                return Bounds::unknown();
            };
            let set = match (op, n) {
                (GOp::Eq, 1) | (GOp::Ne, 0) => flag,
                (GOp::Eq, 0) | (GOp::Ne, 1) => Scan::complement(flag),
                (GOp::Eq, _) => Scan::Empty,
                _ => Scan::All,
            };
            Bounds::exact(set)
        }
        GExpr::Attr(..)
        | GExpr::Agg(_)
        | GExpr::Bin(GOp::BitAnd | GOp::Lt | GOp::Gt | GOp::Le | GOp::Ge, ..) => Bounds::unknown(),
    }
}

/// `attr op n` or `n op attr` for an attribute the index ranges over: a position's ply or
/// depth, or one of the game's own values.
fn tree_comparison(
    op: GOp,
    a: &GExpr,
    b: &GExpr,
    attr_of: &dyn Fn(usize) -> Option<IndexedAttr>,
) -> Option<Bounds> {
    let cmp = |op: GOp, flipped: bool| -> Option<CmpOp> {
        Some(match (op, flipped) {
            (GOp::Eq, _) => CmpOp::Eq,
            (GOp::Ne, _) => CmpOp::Ne,
            (GOp::Lt, false) | (GOp::Gt, true) => CmpOp::Lt,
            (GOp::Le, false) | (GOp::Ge, true) => CmpOp::Le,
            (GOp::Gt, false) | (GOp::Lt, true) => CmpOp::Gt,
            (GOp::Ge, false) | (GOp::Le, true) => CmpOp::Ge,
            _ => return None,
        })
    };
    let (x, op, n) = match (a, b) {
        (GExpr::Attr(Scope::Bare, x), GExpr::Num(n)) => (*x, cmp(op, false)?, *n),
        (GExpr::Num(n), GExpr::Attr(Scope::Bare, x)) => (*x, cmp(op, true)?, *n),
        _ => return None,
    };
    match attr_of(x)? {
        IndexedAttr::Tree(t) => range_bounds(t, op, n),
        IndexedAttr::GameNumber => Some(game_numbers(op, n)),
        // Games without the tag read 0, which no bitmap holds: only a comparison 0 fails can
        // be answered from the bitmaps of values.
        IndexedAttr::GameValue(attr) => Some(if holds(op, 0, n) {
            Bounds::unknown()
        } else {
            game_range_bounds(attr, op, n)
        }),
        IndexedAttr::GameResult => Some(result_bounds(op, n)),
        IndexedAttr::Flag(_) => None,
    }
}

/// Whether `v op n`.
fn holds(op: CmpOp, v: i64, n: i64) -> bool {
    match op {
        CmpOp::Eq => v == n,
        CmpOp::Ne => v != n,
        CmpOp::Lt => v < n,
        CmpOp::Le => v <= n,
        CmpOp::Gt => v > n,
        CmpOp::Ge => v >= n,
    }
}

/// `game op n`: the games whose number passes, exactly.
fn game_numbers(op: CmpOp, n: i64) -> Bounds {
    let range = |lo: i64, hi: i64| {
        if lo.max(1) <= hi {
            Scan::GameNumbers(lo.max(1), hi)
        } else {
            Scan::Empty
        }
    };
    Bounds::exact(match op {
        CmpOp::Eq => range(n, n),
        CmpOp::Lt => range(1, n.saturating_sub(1)),
        CmpOp::Le => range(1, n),
        CmpOp::Gt => range(n.saturating_add(1), i64::MAX),
        CmpOp::Ge => range(n, i64::MAX),
        CmpOp::Ne => Scan::or(
            range(1, n.saturating_sub(1)),
            range(n.saturating_add(1), i64::MAX),
        ),
    })
}

/// `result op n`: the games whose first Result tag has one of the passing codes, exactly; no
/// bound where [`NO_RESULT`] passes (no bitmap holds every other spelling).
fn result_bounds(op: CmpOp, n: i64) -> Bounds {
    if holds(op, NO_RESULT, n) {
        return Bounds::unknown();
    }
    Bounds::exact(
        RESULT_CODES
            .iter()
            .filter(|(_, code)| holds(op, *code, n))
            .fold(Scan::Empty, |set, (spelling, _)| {
                Scan::or(set, Scan::GameResult((*spelling).to_owned()))
            }),
    )
}

/// `EXPLAIN` of GTQL queries over game trees: the queries, what the index gives (with each scan
/// operator's estimates, in pre-order, where `estimates` has them), the pass; with `stats`,
/// what a run measured (`--analyze`): per scan operator its positions, games and time; the
/// games and nodes fed to the pass and the time to the last answer.
pub fn explain(
    queries: &[String],
    scan: Option<&Scan>,
    estimates: &[Estimate],
    stats: Option<&RunStats>,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::from("Logical plan:\n");
    for q in queries {
        let _ = writeln!(s, "  GTQL: {q}");
    }
    s.push_str("  Scan: every position of every game, one forest\nRules:\n");
    match scan {
        Some(_) => s.push_str("  answer_bounds: candidates from the node parts' flags\n"),
        None => s.push_str("  answer_bounds: - (a query needs every game)\n"),
    }
    s.push_str("Physical plan:\n  Sink: answers\n    Residual: one GTQL pass over the fed games");
    if let Some(st) = stats {
        let _ = write!(
            s,
            "  [games={}, nodes={}, time={}]",
            st.residual.games,
            st.residual.positions,
            super::micros(st.residual.micros)
        );
    }
    s.push('\n');
    match scan {
        Some(c) => {
            s.push_str("      CandidateGames");
            if let Some(games) = estimates.first().and_then(|e| e.games) {
                let _ = write!(s, "  [est. games={games}]");
            }
            if let Some(st) = stats {
                let _ = write!(s, "  [games={} of {}]", st.residual.games, st.games);
            }
            s.push('\n');
            super::render(c, 4, &mut 0, estimates, stats, &mut s);
        }
        None => s.push_str("      FullScan: every game\n"),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gtql::{GtqlNames, parse_gtql};
    use crate::plan::PositionFlag;

    #[test]
    fn node_parts_over_flags() {
        let names = GtqlNames {
            attrs: vec!["mate".into(), "mainline".into(), "ply".into()],
            ..Default::default()
        };
        let flag_of = |a: usize| match a {
            0 => Some(IndexedAttr::Flag(Scan::Flag(PositionFlag::Mate))),
            1 => Some(IndexedAttr::Flag(Scan::Flag(PositionFlag::Mainline))),
            2 => Some(IndexedAttr::Tree(TreeAttr::Ply)),
            _ => None,
        };
        let b = |q: &str| answer_bounds(&parse_gtql(q, &names).unwrap(), &flag_of);
        assert_eq!(b("node: mate"), Scan::Flag(PositionFlag::Mate));
        assert_eq!(
            b("node: mate = 1 and ply > 3"),
            Scan::and(Scan::Flag(PositionFlag::Mate), Scan::Ply(4, u32::MAX))
        );
        assert_eq!(b("node: 10 >= ply"), Scan::Ply(0, 10));
        assert_eq!(
            b("node: mainline = 0; subtree: count(*) > 2"),
            Scan::complement(Scan::Flag(PositionFlag::Mainline))
        );
        assert_eq!(b("node: not (mate and ply > 3)"), Scan::All);
        assert_eq!(b("node: ply != 3"), Scan::All);
        assert_eq!(b("node: count(mate = 1)"), Scan::All);
        assert_eq!(b("child: count(*) > 1"), Scan::All);
    }

    #[test]
    fn the_game_s_own_values() {
        let names = GtqlNames {
            attrs: vec![
                "game".into(),
                "year".into(),
                "white_elo".into(),
                "result".into(),
                "mate".into(),
            ],
            ..Default::default()
        };
        let attr_of = |a: usize| match a {
            0 => Some(IndexedAttr::GameNumber),
            1 => Some(IndexedAttr::GameValue(GameAttr::Year)),
            2 => Some(IndexedAttr::GameValue(GameAttr::WhiteElo)),
            3 => Some(IndexedAttr::GameResult),
            4 => Some(IndexedAttr::Flag(Scan::Flag(PositionFlag::Mate))),
            _ => None,
        };
        let b = |q: &str| answer_bounds(&parse_gtql(q, &names).unwrap(), &attr_of);
        let result = |r: &str| Scan::GameResult(r.into());
        // Game numbers: exact ranges, either way round.
        assert_eq!(b("node: game = 7"), Scan::GameNumbers(7, 7));
        assert_eq!(b("node: 10 >= game"), Scan::GameNumbers(1, 10));
        assert_eq!(b("node: game < 1"), Scan::Empty);
        assert_eq!(
            b("node: game != 3"),
            Scan::or(Scan::GameNumbers(1, 2), Scan::GameNumbers(4, i64::MAX))
        );
        // Values from tags: where a missing tag (0) cannot pass, the bitmaps of values.
        assert_eq!(
            b("node: year >= 1990 and mate"),
            Scan::and(
                Scan::GameRange {
                    attr: GameAttr::Year,
                    lo: 1990,
                    hi: u16::MAX
                },
                Scan::Flag(PositionFlag::Mate)
            )
        );
        assert_eq!(
            b("node: white_elo > 2750"),
            Scan::GameRange {
                attr: GameAttr::WhiteElo,
                lo: 2700,
                hi: u16::MAX
            }
        );
        assert_eq!(b("node: year < 1900"), Scan::All);
        assert_eq!(b("node: white_elo != 2700"), Scan::All);
        // The result: codes of the first Result tag; anything else reads NO_RESULT.
        assert_eq!(b("node: result = 1"), result("1-0"));
        assert_eq!(
            b("node: result >= 0"),
            Scan::or(result("1-0"), result("1/2-1/2"))
        );
        assert_eq!(b("node: result = 5"), Scan::Empty);
        assert_eq!(b("node: result <= 0"), Scan::All);
        assert_eq!(
            b("node: not (result = -1)"),
            Scan::complement(result("0-1"))
        );
    }
}
