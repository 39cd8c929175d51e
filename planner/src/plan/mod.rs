//! Query plans: a CQL query becomes index scans that produce candidate games, and a residual
//! filter that decides on the candidates.
//!
//! The stages, as in a relational engine: the parsed query and how it is run make a
//! [`LogicalPlan`]; the optimizer ([`rules`]) rewrites it one named rule at a time, each rule in
//! its own file; the result is a [`PhysicalPlan`] the executor runs: an optional candidate
//! [`Scan`] (no scan: every game), the residual (the whole query, evaluated on candidate games
//! only, or nothing when the index answers exactly) and the sink. [`PhysicalPlan::explain`]
//! prints every stage, with the executor's measurements when it has them.
//!
//! Soundness is the contract every rule keeps: the candidate set contains every position where
//! the query can match ([`bounds`]), so planned and full-scan runs give the same answers; the
//! differential tests check exactly that.

pub mod bounds;
pub mod gtql;
pub mod index_rule;
pub(crate) mod move_bounds;
pub mod rules;
pub mod scan;

use std::fmt::Write as _;
use std::sync::Arc;

use crate::ast::Query;
pub use scan::{GameAttr, GameLine, MaterialTest, MoveOf, MoveTraits, PositionFlag, Scan};

/// What the run produces.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SinkKind {
    /// The number of matching games only.
    Count,
    /// The matching games, written (PGN, rows): their positions are needed.
    Games,
    /// The matching positions themselves (SQL's `cql()` and pushed filters): game, id and
    /// ply of each, no text.
    Positions,
}

/// A query and how it is to be run, before optimization.
#[derive(Clone, Debug)]
pub struct LogicalPlan {
    /// The checked query (header settings already merged with the command line).
    pub query: Arc<Query>,
    /// Whether variations are visited.
    pub variations: bool,
    /// What the run produces.
    pub sink: SinkKind,
    /// No index scans at all (`--full-scan`, the differential tests' baseline).
    pub full_scan: bool,
}

/// What the residual filter does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Residual {
    /// The whole query is evaluated at every visited position of each candidate game.
    Query,
    /// Nothing: the candidate games are the answer.
    None,
}

/// One rule's outcome, for `EXPLAIN`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleNote {
    /// The rule's name.
    pub rule: &'static str,
    /// What it did (`None`: it did not apply).
    pub note: Option<String>,
}

/// A plan the executor runs.
#[derive(Clone, Debug)]
pub struct PhysicalPlan {
    /// The query (the residual evaluates it).
    pub query: Arc<Query>,
    /// Whether variations are visited.
    pub variations: bool,
    /// The candidate positions (their games are evaluated); `None`: every game.
    pub candidates: Option<Scan>,
    /// Whether the candidates are exactly the matching positions.
    pub exact: bool,
    /// What is evaluated on the candidates.
    pub residual: Residual,
    /// What the run produces.
    pub sink: SinkKind,
    /// The rules in the order they ran, and what each did.
    pub rules: Vec<RuleNote>,
}

/// Measurements of one operator, filled in by the executor (`EXPLAIN ANALYZE`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct OpStats {
    /// Positions the operator produced.
    pub positions: u64,
    /// Games they belong to.
    pub games: u64,
    /// Time spent in the operator, its inputs included (µs).
    pub micros: u64,
}

/// What the data's statistics say of one scan operator before it runs (`EXPLAIN`'s
/// estimates, made by the executor from the stored bitmaps' headers without reading a
/// bitmap): about how many positions it produces and how many games hold them. `None` where
/// the statistics say nothing (a tag search; an operator over one).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    /// Positions the operator is expected to produce.
    pub positions: Option<u64>,
    /// Games they are expected to belong to.
    pub games: Option<u64>,
}

/// What the executor measured of a run: one [`OpStats`] per scan operator in pre-order
/// ([`Scan::visit`]), then the residual's and the sink's.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Per scan operator, in pre-order.
    pub scans: Vec<OpStats>,
    /// Games the residual evaluated, positions it visited, time.
    pub residual: OpStats,
    /// Games the sink received, time.
    pub sink: OpStats,
    /// Games in the database.
    pub games: u64,
    /// Whether some segment's scans could not be answered exactly, so that its games were all
    /// evaluated (see `SegmentScan::inexact`).
    pub inexact: bool,
}

impl PhysicalPlan {
    /// The plan as text: the logical plan, the rules that ran, the physical operators (with
    /// each scan operator's estimates, in pre-order, where `estimates` has them, and the
    /// measurements when `stats` is given).
    pub fn explain(
        &self,
        query_text: &str,
        estimates: &[Estimate],
        stats: Option<&RunStats>,
    ) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Logical plan:");
        let _ = writeln!(
            s,
            "  Filter: {}",
            query_text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        let _ = writeln!(
            s,
            "  Scan: {} positions of every game",
            if self.variations { "all" } else { "main-line" }
        );
        let _ = writeln!(s, "Rules:");
        for r in &self.rules {
            match &r.note {
                Some(n) => {
                    let _ = writeln!(s, "  {}: {n}", r.rule);
                }
                None => {
                    let _ = writeln!(s, "  {}: -", r.rule);
                }
            }
        }
        let _ = writeln!(s, "Physical plan:");
        let sink = match self.sink {
            SinkKind::Count => "count",
            SinkKind::Games => "games",
            SinkKind::Positions => "positions",
        };
        let mut line = format!("  Sink: {sink}");
        if let Some(st) = stats {
            let _ = write!(line, "  [games={}", st.sink.games);
            let _ = write!(line, ", time={}]", micros(st.sink.micros));
        }
        let _ = writeln!(s, "{line}");
        let mut line = match self.residual {
            Residual::Query => "    Residual: the query at each visited position".to_owned(),
            Residual::None => "    Residual: none (the index answers exactly)".to_owned(),
        };
        if let Some(st) = stats {
            let _ = write!(
                line,
                "  [games={}, positions={}, time={}]",
                st.residual.games,
                st.residual.positions,
                micros(st.residual.micros)
            );
        }
        let _ = writeln!(s, "{line}");
        match &self.candidates {
            None => {
                let mut line = "      FullScan: every game".to_owned();
                if let Some(st) = stats {
                    let _ = write!(line, "  [games={}]", st.games);
                }
                let _ = writeln!(s, "{line}");
            }
            Some(c) => {
                let mut line = format!(
                    "      CandidateGames{}",
                    if self.exact { " (exact)" } else { "" }
                );
                if let Some(games) = estimates.first().and_then(|e| e.games) {
                    let _ = write!(line, "  [est. games={games}]");
                }
                if let (Some(st), Some(top)) = (stats, stats.and_then(|st| st.scans.first())) {
                    let _ = write!(line, "  [games={} of {}]", top.games, st.games);
                }
                let _ = writeln!(s, "{line}");
                let mut index = 0;
                render(c, 4, &mut index, estimates, stats, &mut s);
            }
        }
        s
    }
}

pub(crate) fn micros(us: u64) -> String {
    if us >= 10_000 {
        format!("{:.1} ms", us as f64 / 1000.0)
    } else {
        format!("{us} µs")
    }
}

/// Writes a scan tree, one operator a line, indented by `depth` (with the estimates and the
/// measured stats of each operator, in pre-order from `index`).
pub(crate) fn render(
    scan: &Scan,
    depth: usize,
    index: &mut usize,
    estimates: &[Estimate],
    stats: Option<&RunStats>,
    s: &mut String,
) {
    let mut line = format!("{}{}", "  ".repeat(depth), scan.describe());
    if let Some(e) = estimates.get(*index) {
        let known = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
        let _ = write!(
            line,
            "  [est. positions={}, games={}]",
            known(e.positions),
            known(e.games)
        );
    }
    if let Some(st) = stats.and_then(|st| st.scans.get(*index)) {
        let _ = write!(
            line,
            "  [positions={}, games={}, time={}]",
            st.positions,
            st.games,
            micros(st.micros)
        );
    }
    let _ = writeln!(s, "{line}");
    *index += 1;
    for c in scan.children() {
        render(c, depth + 1, index, estimates, stats, s);
    }
}
