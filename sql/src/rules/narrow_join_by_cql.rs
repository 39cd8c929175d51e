//! `narrow_join_by_cql`: a join on `game` with a `cql()` table reads only the games the CQL
//! query matched from the other side.
//!
//! `cql()` runs when the statement is planned, so its games are known before any table is
//! scanned; without this rule `cql('mate') m JOIN games g USING (game)` decodes every game of
//! `games` to throw nearly all of them away in the hash join. The rule gives the other side's
//! scan the matched game numbers (a restricted copy of its table provider), which its scan
//! intersects with whatever else was pushed. When the join also matches the other side's
//! `position` with the `cql()` position (`USING (game, position)`), that side keeps only the
//! matched positions; when it matches its `parent` (`m.parent = c.position`, the moves out of
//! the matched positions, as an opening tree asks), only their children: the rows the join
//! would keep, without computing the others' SAN or FEN. Only joins whose other side can hold
//! no row of a game missing from `cql()` are narrowed: inner joins, the outer side of an outer
//! join whose preserved side is the `cql()` table, and semi joins filtered by it.

use std::sync::Arc;

use datafusion::common::tree_node::Transformed;
use datafusion::common::{JoinType, Result};
use datafusion::datasource::{provider_as_source, source_as_provider};
use datafusion::logical_expr::logical_plan::{Filter, Join, SubqueryAlias, TableScan};
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};

use crate::cql_function::CqlMatches;
use crate::provider::ChessTable;
use crate::selection::{PositionsByGame, Selection};
use crate::tables::Table;

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
        let left_cql = cql_matches(&join.left);
        let right_cql = cql_matches(&join.right);
        let mut join: Join = join;
        let mut changed = false;
        if let (true, Some(m)) = (right_may, &left_cql) {
            let rows = row_restriction(&join.on, m, Side::Right);
            if let Some(narrowed) = narrow(&join.right, &m.games, &rows)? {
                join.right = Arc::new(narrowed);
                changed = true;
            }
        }
        if let (true, Some(m)) = (left_may, &right_cql) {
            let rows = row_restriction(&join.on, m, Side::Left);
            if let Some(narrowed) = narrow(&join.left, &m.games, &rows)? {
                join.left = Arc::new(narrowed);
                changed = true;
            }
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

/// What a `cql()` table matched.
struct Matched {
    games: Arc<Vec<u64>>,
    positions: PositionsByGame,
}

/// The side of a join a table is narrowed on.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// The rows of the narrowed side the join can keep, from its other conditions: `position =`
/// the `cql()` position keeps those positions, `parent =` it keeps their children.
fn row_restriction(on: &[(Expr, Expr)], cql: &Matched, narrowed: Side) -> Selection {
    for (l, r) in on {
        let (mine, theirs) = match narrowed {
            Side::Left => (l, r),
            Side::Right => (r, l),
        };
        if column_name(theirs) != Some("position") {
            continue;
        }
        match column_name(mine) {
            Some("position") => return Selection::Positions(cql.positions.clone()),
            Some("parent") => return Selection::ChildrenOf(cql.positions.clone()),
            _ => {}
        }
    }
    Selection::Every
}

/// The `cql()` table `plan` reads (through aliases and filters, which only drop rows), if it
/// is one.
fn cql_matches(plan: &LogicalPlan) -> Option<Matched> {
    match plan {
        LogicalPlan::SubqueryAlias(a) => cql_matches(&a.input),
        LogicalPlan::Filter(f) => cql_matches(&f.input),
        LogicalPlan::TableScan(s) => {
            let provider = source_as_provider(&s.source).ok()?;
            let any: &dyn std::any::Any = provider.as_ref();
            any.downcast_ref::<CqlMatches>().map(|m| Matched {
                games: m.games(),
                positions: m.positions(),
            })
        }
        _ => None,
    }
}

/// `plan` with its table scan restricted to `games`, if it is a cqldb table seen through
/// aliases and filters and not restricted yet.
fn narrow(
    plan: &LogicalPlan,
    games: &Arc<Vec<u64>>,
    rows: &Selection,
) -> Result<Option<LogicalPlan>> {
    Ok(match plan {
        LogicalPlan::SubqueryAlias(a) => match narrow(&a.input, games, rows)? {
            Some(input) => Some(LogicalPlan::SubqueryAlias(SubqueryAlias::try_new(
                Arc::new(input),
                a.alias.clone(),
            )?)),
            None => None,
        },
        LogicalPlan::Filter(f) => match narrow(&f.input, games, rows)? {
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
                    let rows = match table.table() {
                        Table::Positions | Table::Moves => rows.clone(),
                        Table::Games | Table::Tags | Table::Comments => Selection::Every,
                    };
                    let restricted = Arc::new(table.restricted_to(games.clone(), rows));
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
