//! `narrow_join_by_cql`: a join on `game` with a `cql()` table reads only the games the CQL
//! query matched from the other side.
//!
//! `cql()` runs when the statement is planned, so its games are known before any table is
//! scanned; without this rule `cql('mate') m JOIN games g USING (game)` decodes every game of
//! `games` to throw nearly all of them away in the hash join. The rule gives the other side's
//! scan the matched game numbers (a restricted copy of its table provider), which its scan
//! intersects with whatever else was pushed. Only joins whose other side can hold no row of a
//! game missing from `cql()` are narrowed: inner joins, the outer side of an outer join whose
//! preserved side is the `cql()` table, and semi joins filtered by it.

use std::sync::Arc;

use datafusion::common::tree_node::Transformed;
use datafusion::common::{JoinType, Result};
use datafusion::datasource::{provider_as_source, source_as_provider};
use datafusion::logical_expr::logical_plan::{Filter, Join, SubqueryAlias, TableScan};
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};

use crate::cql_function::CqlMatches;
use crate::provider::ChessTable;

#[derive(Debug, Default)]
pub struct NarrowJoinByCql;

impl OptimizerRule for NarrowJoinByCql {
    fn name(&self) -> &str {
        "narrow_join_by_cql"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Join(join) = plan else {
            return Ok(Transformed::no(plan));
        };
        let on_game = join
            .on
            .iter()
            .any(|(l, r)| column_name(l) == Some("game") && column_name(r) == Some("game"));
        if !on_game {
            return Ok(Transformed::no(LogicalPlan::Join(join)));
        }
        // Which side may be narrowed by a cql() table on the other.
        let (left_may, right_may) = match join.join_type {
            JoinType::Inner => (true, true),
            JoinType::Left | JoinType::LeftSemi => (false, true),
            JoinType::Right | JoinType::RightSemi => (true, false),
            _ => (false, false),
        };
        let left_games = cql_games(&join.left);
        let right_games = cql_games(&join.right);
        let mut join: Join = join;
        let mut changed = false;
        if let (true, Some(games)) = (right_may, &left_games)
            && let Some(narrowed) = narrow(&join.right, games)?
        {
            join.right = Arc::new(narrowed);
            changed = true;
        }
        if let (true, Some(games)) = (left_may, &right_games)
            && let Some(narrowed) = narrow(&join.left, games)?
        {
            join.left = Arc::new(narrowed);
            changed = true;
        }
        let plan = LogicalPlan::Join(join);
        Ok(if changed {
            Transformed::yes(plan)
        } else {
            Transformed::no(plan)
        })
    }
}

fn column_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Column(c) => Some(c.name.as_str()),
        _ => None,
    }
}

/// The games of the `cql()` table `plan` reads (through aliases and filters, which only drop
/// rows), if it is one.
fn cql_games(plan: &LogicalPlan) -> Option<Arc<Vec<u64>>> {
    match plan {
        LogicalPlan::SubqueryAlias(a) => cql_games(&a.input),
        LogicalPlan::Filter(f) => cql_games(&f.input),
        LogicalPlan::TableScan(s) => {
            let provider = source_as_provider(&s.source).ok()?;
            let any: &dyn std::any::Any = provider.as_ref();
            any.downcast_ref::<CqlMatches>().map(CqlMatches::games)
        }
        _ => None,
    }
}

/// `plan` with its table scan restricted to `games`, if it is a cqldb table seen through
/// aliases and filters and not restricted yet.
fn narrow(plan: &LogicalPlan, games: &Arc<Vec<u64>>) -> Result<Option<LogicalPlan>> {
    Ok(match plan {
        LogicalPlan::SubqueryAlias(a) => match narrow(&a.input, games)? {
            Some(input) => Some(LogicalPlan::SubqueryAlias(SubqueryAlias::try_new(
                Arc::new(input),
                a.alias.clone(),
            )?)),
            None => None,
        },
        LogicalPlan::Filter(f) => match narrow(&f.input, games)? {
            Some(input) => Some(LogicalPlan::Filter(Filter::try_new(
                f.predicate.clone(),
                Arc::new(input),
            )?)),
            None => None,
        },
        LogicalPlan::TableScan(s) => {
            let Ok(provider) = source_as_provider(&s.source) else {
                return Ok(None);
            };
            let any: &dyn std::any::Any = provider.as_ref();
            match any.downcast_ref::<ChessTable>() {
                Some(table) if !table.is_restricted() => {
                    let restricted = Arc::new(table.restricted_to(games.clone()));
                    Some(LogicalPlan::TableScan(TableScan {
                        source: provider_as_source(restricted),
                        ..s.clone()
                    }))
                }
                _ => None,
            }
        }
        _ => None,
    })
}
