//! GTQL over indexed game trees: what the index can say of a query's node part.
//!
//! A node is an answer only where the node part holds, so the node part's upper bound (over
//! the attributes the index keeps as flags: main line, check, mate, ..., and comparisons of
//! ply and depth with numbers) bounds the answers;
//! games without a candidate position hold no answer and are not fed to the pass. Child,
//! subtree and sibling parts, aggregates and ancestor references are the residual. A
//! stand-alone count ranges over every node, so it is never pruned.

use crate::gtql::{GExpr, GOp, GtqlQuery, Scope};

use super::RunStats;
use super::bounds::{Bounds, TreeAttr, range_bounds};
use super::scan::Scan;
use crate::ast::CmpOp;

/// What the index knows of one attribute of a game tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexedAttr {
    /// A 0/1 attribute with this scan (`check`, `mainline`, ...).
    Flag(Scan),
    /// A position's ply or depth: comparisons with numbers become ranges.
    Tree(TreeAttr),
}

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

/// `attr op n` or `n op attr` for a ply or depth attribute.
fn tree_comparison(
    op: GOp,
    a: &GExpr,
    b: &GExpr,
    attr_of: &dyn Fn(usize) -> Option<IndexedAttr>,
) -> Option<Bounds> {
    let cmp = |op: GOp, flipped: bool| -> Option<CmpOp> {
        Some(match (op, flipped) {
            (GOp::Eq, _) => CmpOp::Eq,
            (GOp::Lt, false) | (GOp::Gt, true) => CmpOp::Lt,
            (GOp::Le, false) | (GOp::Ge, true) => CmpOp::Le,
            (GOp::Gt, false) | (GOp::Lt, true) => CmpOp::Gt,
            (GOp::Ge, false) | (GOp::Le, true) => CmpOp::Ge,
            _ => return None,
        })
    };
    let tree = |x: &GExpr| match x {
        GExpr::Attr(Scope::Bare, i) => match attr_of(*i) {
            Some(IndexedAttr::Tree(t)) => Some(t),
            _ => None,
        },
        _ => None,
    };
    match (a, b) {
        (x, GExpr::Num(n)) => range_bounds(tree(x)?, cmp(op, false)?, *n),
        (GExpr::Num(n), x) => range_bounds(tree(x)?, cmp(op, true)?, *n),
        _ => None,
    }
}

/// `EXPLAIN` of GTQL queries over game trees: the queries, what the index gives, the pass.
pub fn explain(queries: &[String], scan: Option<&Scan>) -> String {
    explain_analyzed(queries, scan, None)
}

/// As [`explain`], with what a run measured (`--analyze`): per scan operator its positions,
/// games and time; the games and nodes fed to the pass and the time to the last answer.
pub fn explain_analyzed(
    queries: &[String],
    scan: Option<&Scan>,
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
            if let Some(st) = stats {
                let _ = write!(s, "  [games={} of {}]", st.residual.games, st.games);
            }
            s.push('\n');
            super::render(c, 4, &mut 0, stats, &mut s);
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
}
