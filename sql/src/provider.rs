//! A table of a cqldb database as a DataFusion `TableProvider`: pushed filters become one CQL
//! query planned by the CQL planner ([`crate::pushdown`]); the scan reads only the games (and
//! positions) it matched, a chunk of games at a time, one stream per partition, and computes
//! only the projected columns. Its `EXPLAIN` line says what was pushed and the CQL plan beneath.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use cqldb_executor::query::{CqlRun, KeptPositions, Source};
use cqldb_storage::{Database, Pages};
use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::datasource::TableType;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, StatisticsArgs,
};

use crate::decode::{Chunks, GameSet, PassedSegments, Reading, game_count};
use crate::pushdown::{Piece, Pushed, piece};
use crate::selection::Selection;
use crate::tables::Table;
use crate::tables::indexed_games::{self, IndexedGames};

/// One table over an open database.
pub struct ChessTable {
    table: Table,
    db: Arc<Database>,
    /// Push filters to the index (off: the differential tests' baseline).
    pushdown: bool,
    /// Only these games (ascending), set by the `narrow_join_by_cql` rule on a copy.
    restrict: Option<Arc<Vec<u64>>>,
    /// And of their rows only these (same rule; `positions` and `moves`, when no pushed
    /// filter selects rows already).
    restrict_rows: Selection,
    /// What a scan does with a segment's pages once past it (the session's policy).
    pages: Pages,
    /// Rows the session's scans produced (what the benchmark reports against table sizes).
    scanned: Arc<AtomicU64>,
}

impl fmt::Debug for ChessTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChessTable({})", self.table.name())
    }
}

impl ChessTable {
    /// `scanned` counts the rows the table's scans produce (shared by a session's tables).
    pub fn new(
        table: Table,
        db: Arc<Database>,
        pushdown: bool,
        pages: Pages,
        scanned: Arc<AtomicU64>,
    ) -> Self {
        Self {
            table,
            db,
            pushdown,
            restrict: None,
            restrict_rows: Selection::Every,
            pages,
            scanned,
        }
    }

    /// A copy that reads only the games `games` (ascending) and of them the rows `rows`.
    pub fn restricted_to(&self, games: Arc<Vec<u64>>, rows: Selection) -> Self {
        Self {
            table: self.table,
            db: self.db.clone(),
            pushdown: self.pushdown,
            restrict: Some(games),
            restrict_rows: rows,
            pages: self.pages,
            scanned: self.scanned.clone(),
        }
    }

    pub fn table(&self) -> Table {
        self.table
    }

    pub fn is_restricted(&self) -> bool {
        self.restrict.is_some()
    }
}

pub(crate) fn df_error(e: anyhow::Error) -> DataFusionError {
    DataFusionError::External(e.into())
}

#[async_trait]
impl TableProvider for ChessTable {
    fn schema(&self) -> SchemaRef {
        self.table.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match (self.pushdown, piece(self.table, f)) {
                (true, Some(Piece::Narrowing(_))) => TableProviderFilterPushDown::Inexact,
                (true, Some(Piece::Cql(_))) if self.table == Table::Games => {
                    // CQL matches at positions, and a game whose moves could not be set up
                    // has none: such games are added to the candidates and DataFusion
                    // filters the candidates again.
                    TableProviderFilterPushDown::Inexact
                }
                (true, Some(_)) => TableProviderFilterPushDown::Exact,
                (false, _) | (true, None) => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut pushed = Pushed::of(self.table, filters);
        if let Some(only) = &self.restrict {
            pushed.list = Some(match pushed.list.take() {
                Some(l) => l
                    .into_iter()
                    .filter(|g| only.binary_search(g).is_ok())
                    .collect(),
                None => only.to_vec(),
            });
        }
        let mut found = find(&self.db, self.table, &pushed, self.pages).map_err(df_error)?;
        if matches!(found.keep, Selection::Every)
            && matches!(self.table, Table::Positions | Table::Moves)
        {
            found.keep = self.restrict_rows.clone();
        }
        let full = self.table.schema();
        let columns: Vec<usize> = projection
            .cloned()
            .unwrap_or_else(|| (0..full.fields().len()).collect());
        let schema = Arc::new(full.project(&columns)?);
        let mut parts = found.games.split(state.config().target_partitions());
        if parts.is_empty() {
            // One empty partition, not none: a plan with a zero-partition input cannot meet a
            // join's single-partition requirement.
            parts.push(GameSet::List(Arc::new(Vec::new()), 0, 0));
        }
        let reading = self.table.reading(&columns);
        let partitions: Vec<Arc<dyn PartitionStream>> = parts
            .into_iter()
            .map(|set| {
                Arc::new(ChunkStream {
                    table: self.table,
                    db: self.db.clone(),
                    set,
                    keep: found.keep.clone(),
                    columns: columns.clone(),
                    schema: schema.clone(),
                    reading,
                    pages: self.pages,
                    scanned: self.scanned.clone(),
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        let rows = estimated_rows(&self.db, self.table, &found);
        let exec = StreamingTableExec::try_new(schema, partitions, None, [], false, limit)?;
        Ok(Arc::new(ChessScanExec {
            inner: Arc::new(exec),
            table: self.table,
            description: found.description,
            rows,
        }))
    }
}

/// What the pushed filters found.
struct Found {
    games: GameSet,
    keep: Selection,
    description: String,
}

/// Runs the pushed filters' CQL query (if any) for the games and positions to read.
fn find(db: &Arc<Database>, table: Table, pushed: &Pushed, pages: Pages) -> anyhow::Result<Found> {
    let end = game_count(db) + 1;
    let (lo, hi) = (pushed.lo.max(1), pushed.hi.saturating_add(1).min(end));
    let in_range = |g: &u64| (lo..hi).contains(g);
    let list = pushed
        .list
        .as_ref()
        .map(|l| l.iter().copied().filter(in_range).collect::<Vec<u64>>());
    let range_text = if (lo, hi) == (1, end) {
        String::new()
    } else {
        format!(" games {lo}..{}", hi.saturating_sub(1))
    };
    if hi <= lo {
        return Ok(Found {
            description: format!("pushed:{range_text} (no game)"),
            games: GameSet::List(Arc::new(Vec::new()), 0, 0),
            keep: Selection::Every,
        });
    }
    if pushed.cql.is_empty() {
        let games = match list {
            Some(l) => {
                let n = l.len();
                GameSet::List(Arc::new(l), 0, n)
            }
            None => GameSet::Range(lo, hi),
        };
        return Ok(Found {
            description: format!("pushed:{range_text} {}", list_text(&pushed.list)),
            games,
            keep: Selection::Every,
        });
    }
    let body = pushed.cql.join("\n");
    let positions = matches!(table, Table::Positions | Table::Moves);
    let mut run = CqlRun::new(format!("cql(variations)\n{body}"), Source::Open(db.clone()));
    run.query_name = "pushed filters".into();
    run.pages = pages;
    // Only ids: the scan reads the games it needs itself.
    run.positions = if positions {
        KeptPositions::Ids
    } else {
        KeptPositions::None
    };
    run.variations = true;
    run.gamenumber = Some((lo as i64, (hi - 1) as i64));
    let plan = cqldb_executor::query::plan(&run)?;
    let plan_text = plan.explain(&run.query, &[], None);
    let summary = cqldb_executor::query::run_plan(&run, plan)?;
    let mut matched = summary.matched.into_vec();
    if table == Table::Games {
        matched.extend(games_without_positions(db, lo, hi, pages)?);
    }
    matched.sort_unstable();
    matched.dedup();
    if let Some(l) = &list {
        matched.retain(|g| l.binary_search(g).is_ok());
    }
    let keep = if positions {
        let mut map: std::collections::HashMap<u64, Vec<u32>> = Default::default();
        for (g, id, _) in summary.positions_matched {
            map.entry(g).or_default().push(id);
        }
        for ids in map.values_mut() {
            ids.sort_unstable();
        }
        Selection::Positions(Arc::new(map))
    } else {
        Selection::Every
    };
    let n = matched.len();
    Ok(Found {
        description: format!(
            "pushed:{range_text} {} cql=`{}` games={n}\n{}",
            list_text(&pushed.list),
            body.replace('\n', " "),
            indent(&plan_text)
        ),
        games: GameSet::List(Arc::new(matched), 0, n),
        keep,
    })
}

/// How many rows the scan will produce, as far as the index tells without decoding: exact
/// for `games` and for matched positions, the database's average for `positions` and `moves`
/// of whole games, unknown for `tags` and `comments`. DataFusion's join planning reads it
/// (the smaller side is built), so a pushed scan is known to be small.
fn estimated_rows(db: &Database, table: Table, found: &Found) -> Option<usize> {
    let games = found.games.len();
    let (total_games, total_positions) = db.segments().fold((0u64, 0u64), |(g, p), (e, _)| {
        (g + e.games, p + e.positions)
    });
    let per_game = total_positions as f64 / total_games.max(1) as f64;
    let rows = match (table, &found.keep) {
        (Table::Games, _) => games as f64,
        // A position has about one child: the moves out of listed positions are about as many.
        (
            Table::Positions | Table::Moves,
            Selection::Positions(map) | Selection::ChildrenOf(map),
        ) => map.values().map(Vec::len).sum::<usize>() as f64,
        (Table::Positions, _) => games as f64 * per_game,
        (Table::Moves, _) => games as f64 * (per_game - 1.0).max(0.0),
        (Table::Tags | Table::Comments, _) => return None,
    };
    Some(rows.round() as usize)
}

/// The games numbered `lo..hi` that have no position (their setup could not be read), which
/// no CQL filter can match.
fn games_without_positions(
    db: &Database,
    lo: u64,
    hi: u64,
    pages: Pages,
) -> cqldb_storage::Result<Vec<u64>> {
    let mut out = Vec::new();
    let mut first = 1u64;
    for (entry, seg) in db.segments() {
        let end = first + entry.games;
        if first < hi && lo < end {
            let starts = seg.game_starts()?;
            for (i, w) in starts.windows(2).enumerate() {
                let g = first + i as u64;
                if w[0] == w[1] && (lo..hi).contains(&g) {
                    out.push(g);
                }
            }
            seg.done_reading(pages);
        }
        first = end;
    }
    Ok(out)
}

fn list_text(list: &Option<Vec<u64>>) -> String {
    match list {
        Some(l) => format!("game in {} numbers", l.len()),
        None => String::new(),
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One partition's games, decoded a chunk at a time into record batches.
struct ChunkStream {
    table: Table,
    db: Arc<Database>,
    set: GameSet,
    keep: Selection,
    columns: Vec<usize>,
    schema: SchemaRef,
    reading: Reading,
    pages: Pages,
    scanned: Arc<AtomicU64>,
}

impl fmt::Debug for ChunkStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChunkStream({}, {:?})", self.table.name(), self.set)
    }
}

impl PartitionStream for ChunkStream {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        if self.table == Table::Games && self.columns.iter().all(|&c| c == GAME_COLUMN) {
            return self.game_numbers_only();
        }
        if self.table == Table::Games && indexed_games::covers(&self.columns) {
            return self.indexed_games();
        }
        if let (Table::Positions, Selection::Positions(map)) = (self.table, &self.keep)
            && self
                .columns
                .iter()
                .all(|&c| c == GAME_COLUMN || c == POSITION_COLUMN)
        {
            return self.matched_ids_only(map.clone());
        }
        let mut chunks = Chunks::new(self.db.clone(), self.set.clone(), self.reading, self.pages);
        let (table, keep, columns, schema, scanned) = (
            self.table,
            self.keep.clone(),
            self.columns.clone(),
            self.schema.clone(),
            self.scanned.clone(),
        );
        let batches = std::iter::from_fn(move || {
            let games = chunks.next_chunk()?;
            Some(
                games
                    .and_then(|games| batch(table, &games, &keep, &columns, &schema))
                    .inspect(|b| {
                        scanned.fetch_add(b.num_rows() as u64, Ordering::Relaxed);
                    })
                    .map_err(df_error),
            )
        });
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        ))
    }
}

/// The `game` column's index in every table.
const GAME_COLUMN: usize = 0;
/// The `position` column's index in `positions`.
const POSITION_COLUMN: usize = 1;

impl ChunkStream {
    /// A `positions` scan of the positions a pushed query matched that needs nothing but their
    /// game and id (`count(*)`, `SELECT game, position`): the rows are the matched ids, and no
    /// game is decoded.
    fn matched_ids_only(
        &self,
        map: Arc<std::collections::HashMap<u64, Vec<u32>>>,
    ) -> SendableRecordBatchStream {
        self.undecoded(move |numbers| {
            let (mut games, mut ids) = (Vec::new(), Vec::new());
            for g in numbers {
                for &id in map.get(&g).map_or(&[][..], Vec::as_slice) {
                    games.push(g as i64);
                    ids.push(i64::from(id));
                }
            }
            (games, ids)
        })
    }

    /// A `games` scan whose columns the index holds (results, years, ratings, plies, ...):
    /// see [`indexed_games`]; no game's text is read unless the index cannot tell its value.
    fn indexed_games(&self) -> SendableRecordBatchStream {
        let mut set = self.set.clone();
        let mut reader = IndexedGames::new(self.db.clone(), self.columns.clone());
        let db = self.db.clone();
        let mut passed = PassedSegments::new(&db, &set, self.pages);
        let (schema, scanned) = (self.schema.clone(), self.scanned.clone());
        let batches = std::iter::from_fn(move || {
            let numbers = set.take(crate::decode::CHUNK_GAMES);
            let &last = numbers.last()?;
            let groups = reader.arrays(&numbers);
            passed.reached(&db, last, set.front());
            let groups = match groups {
                Ok(g) => g,
                Err(e) => return Some(vec![Err(df_error(e))]),
            };
            Some(
                groups
                    .into_iter()
                    .map(|arrays| {
                        let b = RecordBatch::try_new(schema.clone(), arrays)?;
                        scanned.fetch_add(b.num_rows() as u64, Ordering::Relaxed);
                        Ok(b)
                    })
                    .collect::<Vec<Result<RecordBatch>>>(),
            )
        })
        .flatten();
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        ))
    }

    /// A `games` scan that needs nothing but the game numbers (`count(*)`, `SELECT game`): its
    /// rows are the numbers themselves, and no game is decoded.
    fn game_numbers_only(&self) -> SendableRecordBatchStream {
        self.undecoded(|numbers| (numbers.iter().map(|&g| g as i64).collect(), Vec::new()))
    }

    /// The partition's games a chunk at a time, each chunk's rows given by `rows` as their
    /// `game` and `position` values (the only columns such a scan has), without decoding.
    fn undecoded(
        &self,
        mut rows: impl FnMut(Vec<u64>) -> (Vec<i64>, Vec<i64>) + Send + 'static,
    ) -> SendableRecordBatchStream {
        let mut set = self.set.clone();
        let (columns, schema, scanned) = (
            self.columns.clone(),
            self.schema.clone(),
            self.scanned.clone(),
        );
        let batches = std::iter::from_fn(move || {
            let numbers = set.take(crate::decode::CHUNK_GAMES);
            if numbers.is_empty() {
                return None;
            }
            let (games, ids) = rows(numbers);
            let n = games.len();
            scanned.fetch_add(n as u64, Ordering::Relaxed);
            let game: ArrayRef = Arc::new(Int64Array::from(games));
            let id: ArrayRef = Arc::new(Int64Array::from(ids));
            let arrays = columns
                .iter()
                .map(|&c| {
                    if c == GAME_COLUMN {
                        game.clone()
                    } else {
                        id.clone()
                    }
                })
                .collect();
            let opts = RecordBatchOptions::new().with_row_count(Some(n));
            Some(
                RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
                    .map_err(DataFusionError::from),
            )
        });
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        ))
    }
}

fn batch(
    table: Table,
    games: &[crate::decode::Decoded],
    keep: &Selection,
    columns: &[usize],
    schema: &SchemaRef,
) -> anyhow::Result<RecordBatch> {
    if columns.is_empty() {
        // `count(*)`: no column, only the number of rows (that of the first column).
        let rows = table.arrays(games, keep, &[0])?[0].len();
        let opts = RecordBatchOptions::new().with_row_count(Some(rows));
        return Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            Vec::new(),
            &opts,
        )?);
    }
    Ok(RecordBatch::try_new(
        schema.clone(),
        table.arrays(games, keep, columns)?,
    )?)
}

/// The scan as EXPLAIN shows it: the table, what was pushed and the CQL plan that answered it.
#[derive(Debug)]
struct ChessScanExec {
    inner: Arc<dyn ExecutionPlan>,
    table: Table,
    description: String,
    /// The scan's estimated rows (see [`estimated_rows`]).
    rows: Option<usize>,
}

impl DisplayAs for ChessScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "CqldbScan: table={} {}",
            self.table.name(),
            self.description
        )
    }
}

impl ExecutionPlan for ChessScanExec {
    fn name(&self) -> &str {
        "CqldbScan"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "a cqldb scan has no children".into(),
            ))
        }
    }

    fn fetch(&self) -> Option<usize> {
        self.inner.fetch()
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        let mut stats = Statistics::new_unknown(&self.schema());
        if let Some(rows) = self.rows {
            let parts = self.properties().partitioning.partition_count().max(1);
            let rows = match args.partition() {
                Some(_) => rows.div_ceil(parts),
                None => rows,
            };
            let rows = self.fetch().map_or(rows, |f| rows.min(f));
            stats.num_rows = Precision::Inexact(rows);
        }
        Ok(Arc::new(stats))
    }

    fn execute(
        &self,
        partition: usize,
        ctx: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.inner.execute(partition, ctx)
    }
}
