//! An SQL session over one open database: the five tables, the `cql()` table function and the
//! chess functions registered in a DataFusion context, and a runtime to run statements on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use anyhow::{Context, Result};
use cqldb_storage::{Database, Pages};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::provider::ChessTable;
use crate::tables::Table;

/// How a session runs.
#[derive(Copy, Clone, Debug)]
pub struct SqlOptions {
    /// Push filters to the index (off: every game is read and DataFusion filters; the
    /// differential tests' baseline).
    pub pushdown: bool,
    /// Partitions per scan and worker threads (default: the cores).
    pub threads: usize,
    /// What a scan does with a segment's mapped pages once it has passed the segment: kept by
    /// default (a shell or a server reads them again), released by a session that runs one
    /// statement (`cqldb sql`), so that its peak does not grow with the database.
    pub pages: Pages,
}

impl Default for SqlOptions {
    fn default() -> Self {
        Self {
            pushdown: true,
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            pages: Pages::Keep,
        }
    }
}

/// What a statement returned.
pub struct Answer {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl Answer {
    /// Rows in all batches.
    pub fn rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// A warm SQL session (the `sql` command runs one statement in it; the shell many).
pub struct SqlSession {
    ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
    /// Rows the database tables' scans produced so far.
    scanned: Arc<AtomicU64>,
}

impl SqlSession {
    /// A session over `db` with the default options.
    pub fn open(db: Arc<Database>) -> Result<Self> {
        Self::with_options(db, SqlOptions::default())
    }

    pub fn with_options(db: Arc<Database>, opts: SqlOptions) -> Result<Self> {
        let threads = opts.threads.max(1);
        let config = SessionConfig::new()
            .with_target_partitions(threads)
            .with_information_schema(true);
        let ctx = SessionContext::new_with_config(config);
        let scanned = Arc::new(AtomicU64::new(0));
        for t in Table::ALL {
            ctx.register_table(
                t.name(),
                Arc::new(ChessTable::new(
                    t,
                    db.clone(),
                    opts.pushdown,
                    opts.pages,
                    scanned.clone(),
                )),
            )
            .with_context(|| format!("registering table {}", t.name()))?;
        }
        ctx.register_udtf(
            "cql",
            Arc::new(crate::cql_function::CqlFunction::new(
                db.clone(),
                opts.pages,
            )),
        );
        for f in crate::functions::all(&db) {
            ctx.register_udf(f);
        }
        // Without pushdown, no narrowing either: that session is the differential tests' baseline.
        if opts.pushdown {
            ctx.add_optimizer_rule(Arc::new(crate::rules::narrow_join_by_cql::NarrowJoinByCql));
        }
        Ok(Self {
            ctx,
            runtime: runtime(threads)?,
            scanned,
        })
    }

    /// Rows the database tables' scans produced since the session opened (0 over Parquet).
    pub fn rows_scanned(&self) -> u64 {
        self.scanned.load(Ordering::Relaxed)
    }

    /// A session over a Parquet export (`cqldb export`) instead of a database: the five tables
    /// read from `dir/<table>/*.parquet` by DataFusion's own Parquet scan, with no index, no
    /// `cql()` and no chess functions. What the index buys is measured against it, and the
    /// export's round trip is checked with it.
    pub fn over_parquet(dir: &std::path::Path, threads: usize) -> Result<Self> {
        let threads = threads.max(1);
        let config = SessionConfig::new()
            .with_target_partitions(threads)
            .with_information_schema(true);
        let ctx = SessionContext::new_with_config(config);
        let runtime = runtime(threads)?;
        runtime.block_on(async {
            for t in Table::ALL {
                let folder = dir.join(t.name());
                let url = format!("{}/", folder.display());
                ctx.register_parquet(
                    t.name(),
                    &url,
                    datafusion::prelude::ParquetReadOptions::default(),
                )
                .await
                .with_context(|| format!("reading {}", folder.display()))?;
            }
            Ok::<_, anyhow::Error>(())
        })?;
        Ok(Self {
            ctx,
            runtime,
            scanned: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Runs one statement, unless `stop` is set before it ends: then its tasks are dropped
    /// (DataFusion stops at its next batch) and the answer is `None`. The shell's Ctrl-C.
    pub fn query_until(&self, sql: &str, stop: &AtomicBool) -> Result<Option<Answer>> {
        let ctx = self.ctx.clone();
        let sql = sql.to_owned();
        let waiter = std::thread::current();
        let task = self.runtime.spawn(async move {
            let answer = async {
                let df = ctx.sql(&sql).await?;
                let schema = Arc::new(df.schema().as_arrow().clone());
                let batches = df.collect().await?;
                Ok::<_, datafusion::error::DataFusionError>(Answer { schema, batches })
            }
            .await;
            waiter.unpark();
            answer
        });
        while !task.is_finished() {
            if stop.load(Ordering::Relaxed) {
                task.abort();
                // Wait for the abort to land, so nothing of the statement runs on.
                let _ = self.runtime.block_on(task);
                return Ok(None);
            }
            // Woken by the task's end; the timeout bounds how late a stop is seen.
            std::thread::park_timeout(std::time::Duration::from_millis(20));
        }
        match self.runtime.block_on(task) {
            Ok(answer) => answer.map(Some).map_err(|e| anyhow::anyhow!("{e}")),
            Err(e) => Err(anyhow::anyhow!("the statement's task failed: {e}")),
        }
    }

    /// Runs one statement to the end.
    pub fn query(&self, sql: &str) -> Result<Answer> {
        self.runtime
            .block_on(async {
                let df = self.ctx.sql(sql).await?;
                let schema = Arc::new(df.schema().as_arrow().clone());
                let batches = df.collect().await?;
                Ok::<_, datafusion::error::DataFusionError>(Answer { schema, batches })
            })
            .map_err(|e| anyhow::anyhow!("{e}"))
    }
}

fn runtime(threads: usize) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("cqldb-sql")
        .build()
        .context("starting the SQL runtime")
}
