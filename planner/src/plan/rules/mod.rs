//! The optimizer: named rules, one per file, applied in order to a plan being built.
//!
//! Each rule sees the [`Draft`] (the logical plan and what earlier rules decided) and either
//! rewrites it, returning a note for `EXPLAIN`, or leaves it alone. The order matters and is
//! fixed in [`RULES`]: whether pruning is allowed at all, then the bounds the index gives, the
//! header's game filters, the visited positions, simplification, factoring what every branch of
//! an `or` shares, the operators' order, whether
//! the index answers alone, whether the scan is worth its cost, and last whether a flag's games
//! can be read instead of its positions.

mod answer_from_index;
mod factor_conjuncts;
mod flag_games;
mod header_scans;
mod index_bounds;
mod keep_full_scan;
mod order_conjuncts;
pub(crate) mod simplify;
mod skip_unselective;
mod visited_positions;

use super::{LogicalPlan, PhysicalPlan, Residual, RuleNote, Scan};

pub use answer_from_index::AnswerFromIndex;
pub use factor_conjuncts::FactorConjuncts;
pub use flag_games::FlagGames;
pub use header_scans::HeaderScans;
pub use index_bounds::IndexBounds;
pub use keep_full_scan::KeepFullScan;
pub use order_conjuncts::OrderConjuncts;
pub use simplify::Simplify;
pub use skip_unselective::SkipUnselective;
pub use visited_positions::VisitedPositions;

/// A plan being optimized.
#[derive(Clone, Debug)]
pub struct Draft {
    /// The logical plan.
    pub logical: LogicalPlan,
    /// Why the index may not prune, if it may not.
    pub no_pruning: Option<String>,
    /// Every position where the query can match is in this set.
    pub upper: Scan,
    /// The query matches at every position of this set.
    pub lower: Scan,
    /// What is evaluated on the candidates.
    pub residual: Residual,
}

impl Draft {
    /// The starting point: no index knowledge, the whole query as the residual.
    pub fn new(logical: LogicalPlan) -> Self {
        Self {
            logical,
            no_pruning: None,
            upper: Scan::All,
            lower: Scan::Empty,
            residual: Residual::Query,
        }
    }
}

/// One optimizer rule.
pub trait Rule {
    /// Its name in `EXPLAIN`.
    fn name(&self) -> &'static str;
    /// Rewrites the draft; returns what it did, or `None` if it did not apply.
    fn apply(&self, draft: &mut Draft) -> Option<String>;
}

/// The rules, in the order they run.
pub const RULES: [&dyn Rule; 10] = [
    &KeepFullScan,
    &IndexBounds,
    &HeaderScans,
    &VisitedPositions,
    &Simplify,
    &FactorConjuncts,
    &OrderConjuncts,
    &AnswerFromIndex,
    &SkipUnselective,
    &FlagGames,
];

/// Runs every rule and builds the physical plan.
pub fn optimize(logical: LogicalPlan) -> PhysicalPlan {
    optimize_with(logical, &RULES)
}

/// Runs the given rules (tests drop or plant rules) and builds the physical plan.
pub fn optimize_with(logical: LogicalPlan, rules: &[&dyn Rule]) -> PhysicalPlan {
    let mut d = Draft::new(logical);
    let notes = rules
        .iter()
        .map(|r| RuleNote {
            rule: r.name(),
            note: r.apply(&mut d),
        })
        .collect();
    let pruning = d.no_pruning.is_none() && d.upper != Scan::All;
    PhysicalPlan {
        query: d.logical.query.clone(),
        variations: d.logical.variations,
        exact: pruning && d.upper == d.lower,
        candidates: pruning.then(|| d.upper.clone()),
        residual: if pruning { d.residual } else { Residual::Query },
        sink: d.logical.sink,
        rules: notes,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::Draft;
    use crate::plan::{LogicalPlan, SinkKind};

    /// A draft of `cql() BODY`, writing games, main line only.
    pub fn draft(body: &str) -> Draft {
        draft_src(&format!("cql() {body}"))
    }

    /// A draft of a whole query text.
    pub fn draft_src(src: &str) -> Draft {
        let q = crate::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        Draft::new(LogicalPlan {
            variations: q.header.variations,
            query: Arc::new(q),
            sink: SinkKind::Games,
            full_scan: false,
        })
    }
}
