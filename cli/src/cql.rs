//! A CQL query as the command line states it ([`CqlRun`]): the query text merged with the
//! reference program's options into a logical plan, optimized, and handed to the executor's
//! one entry point (`cqldb_executor::execute`) with its source and sink.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, anyhow};
use cqldb_executor::Game;
use cqldb_executor::estimate::estimate;
use cqldb_executor::execute::{ExecOptions, Source as ExecSource, execute_games, execute_with};
use cqldb_executor::sink::{self, Sink, open_output};
use cqldb_indexer::Input;
use cqldb_planner::plan::rules::optimize;
use cqldb_planner::plan::{LogicalPlan, PhysicalPlan, RunStats, SinkKind};
use cqldb_storage::Database;

/// Where the games come from.
pub enum Source {
    /// A PGN input (file, compressed file or stdin), read on the fly.
    Pgn(Input),
    /// A cqldb database.
    Db(PathBuf),
    /// A database already open (repeated queries: benchmarks, a server).
    Open(std::sync::Arc<Database>),
}

/// How matching games are written (the command line's `--format`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MatchFormat {
    /// PGN, as the reference CQL program writes it.
    #[default]
    Pgn,
    /// One JSON object per matching game and line (number, roster tags, the matched
    /// positions with ply, FEN and SAN).
    Json,
    /// One CSV row per matching game, with a header line.
    Csv,
}

impl From<MatchFormat> for sink::MatchFormat {
    fn from(f: MatchFormat) -> Self {
        match f {
            MatchFormat::Pgn => Self::Pgn,
            MatchFormat::Json => Self::Json,
            MatchFormat::Csv => Self::Csv,
        }
    }
}

/// A query run, with the reference program's options.
pub struct CqlRun {
    /// The query text (a whole `cql(...)` file).
    pub query: String,
    /// Name for diagnostics (file name or `-cql`).
    pub query_name: String,
    /// Games to read.
    pub source: Source,
    /// Output file (`None` = none: counting only; `-` = stdout; `.zst` / `.gz` compress).
    pub output: Option<PathBuf>,
    /// How matching games are written.
    pub format: MatchFormat,
    /// `-variations`
    pub variations: bool,
    /// `-mainline`
    pub mainline: bool,
    /// `-gamenumber N M`
    pub gamenumber: Option<(i64, i64)>,
    /// `-matchcount N M`
    pub matchcount: Option<(i64, i64)>,
    /// `-silent`
    pub silent: bool,
    /// `-matchstring S`
    pub matchstring: Option<String>,
    /// No index scans: every game is evaluated (the differential tests' baseline).
    pub full_scan: bool,
    /// Measure every operator (`EXPLAIN ANALYZE`).
    pub analyze: bool,
    /// What the reference program's other options set.
    pub options: QueryOptions,
}

/// What the reference program's command line sets beyond the header's parameters.
#[derive(Clone, Debug, Default)]
pub struct QueryOptions {
    /// `-flipcolor`, `-flip`, ...: the body under this transform.
    pub transform: Option<cqldb_planner::ast::TransformKind>,
    /// `-quiet`
    pub quiet: bool,
    /// `-alwayscomment`
    pub always_comment: bool,
    /// `-noheader`
    pub no_game_header: bool,
    /// `-nosettag`
    pub no_settag: bool,
    /// `-assign X V`, in order.
    pub assign: Vec<(String, String)>,
    /// `--files DIR`: where `readfile` and `writefile` may read and write.
    pub file_dir: Option<std::path::PathBuf>,
}

impl CqlRun {
    /// A run of `query` over `source` with the defaults of the command line: main line only,
    /// no output file (a count), the header's settings as they are.
    pub fn new(query: impl Into<String>, source: Source) -> Self {
        Self {
            query: query.into(),
            query_name: "query".into(),
            source,
            output: None,
            format: MatchFormat::Pgn,
            variations: false,
            mainline: false,
            gamenumber: None,
            matchcount: None,
            silent: false,
            matchstring: None,
            full_scan: false,
            analyze: false,
            options: QueryOptions::default(),
        }
    }
}

/// What a run found.
pub type CqlSummary = sink::Summary;

/// Evaluates a parsed query over games already in memory, in order, writing the selected games
/// to `out` exactly as `cqldb cql` would (sorting included). Used by the conformance tests.
pub fn run_games<'a>(
    query: &cqldb_planner::Query,
    games: impl IntoIterator<Item = &'a Game>,
    out: Option<Box<dyn Write + 'a>>,
) -> Result<CqlSummary> {
    let out = out.map(|w| Box::new(sink::Plain(w)) as Box<dyn sink::MatchWriter + 'a>);
    let sink = Sink::new(query, out, sink::MatchFormat::Pgn)?;
    execute_games(query, games, sink)
}

/// Parses the query (errors come back rendered with a caret), merges the command line into
/// its header, and plans it.
pub fn plan(r: &CqlRun) -> Result<PhysicalPlan> {
    Ok(optimize(logical_plan(r)?))
}

/// The query and how it is to be run, before the optimizer.
pub fn logical_plan(r: &CqlRun) -> Result<LogicalPlan> {
    let query = merged_query(r)?;
    // As the engine decides: the command line or the header (`-mainline` clears the header's).
    let variations = (r.variations && !r.mainline) || query.header.variations;
    Ok(LogicalPlan {
        query: std::sync::Arc::new(query),
        variations,
        sink: if r.output.is_some() {
            SinkKind::Games
        } else {
            SinkKind::Count
        },
        // A PGN file has no index: every game is read, and the plan says so.
        full_scan: r.full_scan || matches!(r.source, Source::Pgn(_)),
    })
}

fn merged_query(r: &CqlRun) -> Result<cqldb_planner::Query> {
    let mut query = cqldb_planner::parse_with_assignments(&r.query, &r.options.assign)
        .map_err(|e| anyhow!("{:?}", e.report(&r.query_name, &r.query)))?;
    if let Some(g) = r.gamenumber {
        query.header.gamenumber = Some(g);
    }
    if let Some(m) = r.matchcount {
        query.header.matchcount = Some(m);
    }
    if r.silent {
        query.header.silent = true;
    }
    if let Some(s) = &r.matchstring {
        query.header.matchstring = Some(s.clone());
    }
    if r.mainline {
        query.header.variations = false;
    }
    let o = &r.options;
    query.header.quiet |= o.quiet;
    query.header.always_comment |= o.always_comment;
    query.header.no_game_header |= o.no_game_header;
    query.header.no_settag |= o.no_settag;
    if let Some(dir) = &o.file_dir {
        if !dir.is_dir() {
            return Err(crate::Usage(format!("--files {}: not a directory", dir.display())).into());
        }
        query.header.file_dir = Some(dir.clone());
    }
    if let Some(kind) = o.transform {
        use cqldb_planner::ast::{Combine, Expr, Node, Transformed};
        let span = 0..0;
        let body = Node {
            expr: Expr::Compound(std::mem::take(&mut query.body)),
            span: span.clone(),
        };
        query.body = vec![Node {
            expr: Expr::Transform(Box::new(Transformed {
                kind,
                count: false,
                combine: Combine::First,
                body,
            })),
            span,
        }];
    }
    Ok(query)
}

/// `plan` (made for `r`) as `EXPLAIN` prints it: over a database with each scan operator's
/// estimates from the stored bitmaps' headers, and with what a run measured when `stats` is
/// given (`--analyze`).
pub fn explain(r: &CqlRun, plan: &PhysicalPlan, stats: Option<&RunStats>) -> Result<String> {
    let estimates = match (&plan.candidates, &r.source) {
        (Some(scan), Source::Db(dir)) => estimate(&Database::open(dir)?, scan),
        (Some(scan), Source::Open(db)) => estimate(db, scan),
        (None, _) | (_, Source::Pgn(_)) => Vec::new(),
    };
    Ok(plan.explain(&r.query, &estimates, stats))
}

/// Plans the query and runs it.
pub fn run(r: &CqlRun) -> Result<CqlSummary> {
    run_plan(r, plan(r)?)
}

/// Runs a plan made for `r` (tests plant plans made with other rules).
pub fn run_plan(r: &CqlRun, plan: PhysicalPlan) -> Result<CqlSummary> {
    let out = match &r.output {
        None => None,
        Some(p) => Some(open_output(p)?),
    };
    let sink = Sink::new(&plan.query, out, r.format.into())?;
    let opts = ExecOptions { analyze: r.analyze };
    match &r.source {
        Source::Pgn(input) => execute_with(plan, &ExecSource::Pgn(input), sink, opts),
        Source::Db(dir) => {
            let db = Database::open(dir)?;
            execute_with(plan, &ExecSource::Db(&db), sink, opts)
        }
        Source::Open(db) => execute_with(plan, &ExecSource::Db(db), sink, opts),
    }
}
