//! `cql('QUERY')`: a CQL query as a table of the positions it matches — `game`, `position`,
//! `ply` — planned and run by the CQL engine, to join with the other tables:
//!
//! ```sql
//! SELECT g.white, count(*) FROM cql('mate') m JOIN games g USING (game) GROUP BY 1 ORDER BY 2 DESC
//! ```
//!
//! QUERY is a CQL body (`mate flipcolor {...}`) or a whole query with its header
//! (`cql(variations) mate`): without a header, the main line is searched, as CQL does. The
//! query runs when the SQL statement is planned.

use std::sync::Arc;

use cqldb_executor::query::{CqlRun, KeptPositions, Source};
use cqldb_storage::{Database, Pages};
use datafusion::arrow::array::{ArrayRef, Int64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::datasource::MemTable;
use datafusion::datasource::TableType;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;

use crate::provider::df_error;
use crate::selection::PositionsByGame;

/// The `cql` table function over one database.
pub struct CqlFunction {
    db: Arc<Database>,
    /// The session's policy for the pages its query reads.
    pages: Pages,
}

impl std::fmt::Debug for CqlFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CqlFunction")
    }
}

impl CqlFunction {
    pub fn new(db: Arc<Database>, pages: Pages) -> Self {
        Self { db, pages }
    }
}

/// The matched positions of `query` over `db`: (game, position id, ply), in game order.
pub fn matched_positions(
    db: &Arc<Database>,
    query: &str,
    pages: Pages,
) -> anyhow::Result<Vec<(u64, u32, u32)>> {
    let text = if query.trim_start().starts_with("cql") && query.contains('(') {
        query.to_owned()
    } else {
        format!("cql()\n{query}")
    };
    let mut run = CqlRun::new(text, Source::Open(db.clone()));
    run.query_name = "cql()".into();
    run.positions = KeptPositions::WithPlies;
    run.pages = pages;
    Ok(cqldb_executor::query::run(&run)?.positions_matched)
}

impl TableFunctionImpl for CqlFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let query = match args.exprs() {
            [Expr::Literal(ScalarValue::Utf8(Some(q)) | ScalarValue::Utf8View(Some(q)), _)] => {
                q.clone()
            }
            _ => {
                return Err(DataFusionError::Plan(
                    "cql() takes one string: the CQL query, e.g. cql('mate')".into(),
                ));
            }
        };
        // Game order, as the rule's intersection with other game lists expects.
        let mut rows = matched_positions(&self.db, &query, self.pages).map_err(df_error)?;
        rows.sort_unstable();
        let schema = Arc::new(Schema::new(vec![
            Field::new("game", DataType::Int64, false),
            Field::new("position", DataType::Int64, false),
            Field::new("ply", DataType::Int64, false),
        ]));
        let col = |f: fn(&(u64, u32, u32)) -> i64| -> ArrayRef {
            Arc::new(rows.iter().map(f).collect::<Int64Array>())
        };
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                col(|r| r.0 as i64),
                col(|r| i64::from(r.1)),
                col(|r| i64::from(r.2)),
            ],
        )?;
        let mut games: Vec<u64> = rows.iter().map(|r| r.0).collect();
        games.dedup();
        let mut positions: std::collections::HashMap<u64, Vec<u32>> = Default::default();
        for &(g, id, _) in &rows {
            // Sorted rows: each game's ids come ascending.
            positions.entry(g).or_default().push(id);
        }
        Ok(Arc::new(CqlMatches {
            rows: MemTable::try_new(schema, vec![vec![batch]])?,
            games: Arc::new(games),
            positions: Arc::new(positions),
        }))
    }
}

/// A `cql()` table: its rows, and the games they are in (which the `narrow_join_by_cql` rule
/// gives the other side of a join).
#[derive(Debug)]
pub struct CqlMatches {
    rows: MemTable,
    games: Arc<Vec<u64>>,
    positions: PositionsByGame,
}

impl CqlMatches {
    /// The matched games, ascending.
    pub fn games(&self) -> Arc<Vec<u64>> {
        self.games.clone()
    }

    /// The matched positions of each game, ascending.
    pub fn positions(&self) -> PositionsByGame {
        self.positions.clone()
    }
}

#[async_trait::async_trait]
impl TableProvider for CqlMatches {
    fn schema(&self) -> SchemaRef {
        self.rows.schema()
    }

    fn table_type(&self) -> TableType {
        self.rows.table_type()
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.rows.scan(state, projection, filters, limit).await
    }
}
