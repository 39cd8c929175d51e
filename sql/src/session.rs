//! An SQL session over one open database: the five tables, the `cql()` table function and the
//! chess functions registered in a DataFusion context, and a runtime to run statements on.

use std::sync::Arc;

use anyhow::{Context, Result};
use cqldb_storage::Database;
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
}

impl Default for SqlOptions {
    fn default() -> Self {
        Self {
            pushdown: true,
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
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
        for t in Table::ALL {
            ctx.register_table(
                t.name(),
                Arc::new(ChessTable::new(t, db.clone(), opts.pushdown)),
            )
            .with_context(|| format!("registering table {}", t.name()))?;
        }
        ctx.register_udtf(
            "cql",
            Arc::new(crate::cql_function::CqlFunction::new(db.clone())),
        );
        for f in crate::functions::all(&db) {
            ctx.register_udf(f);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("cqldb-sql")
            .build()
            .context("starting the SQL runtime")?;
        Ok(Self { ctx, runtime })
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
