//! Running a CQL query, the library's entry point for every interface (the `cqldb` binary,
//! SQL's `cql()` table function, the tests and the benchmarks): a [`CqlRun`] states the query
//! text, the reference program's options, the source of the games and where matches go; it is
//! parsed once, merged into a logical plan (which also decides whether variations are
//! visited), optimized, and handed to [`crate::execute`] with its source and sink.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, anyhow};
use cqldb_indexer::Input;
use cqldb_planner::plan::rules::optimize;
use cqldb_planner::plan::{LogicalPlan, PhysicalPlan, RunStats, SinkKind};
use cqldb_storage::{Database, Pages};

use crate::Game;
use crate::estimate::estimate;
use crate::execute::{ExecOptions, Opened, execute_games, execute_with};
pub use crate::sink::MatchFormat;
use crate::sink::{self, Sink, open_output};

/// Where the games come from.
pub enum Source {
    /// A PGN input (file, compressed file or stdin), read on the fly.
    Pgn(Input),
    /// A cqldb database, opened for the run.
    Db(PathBuf),
    /// A database already open (repeated queries: benchmarks, SQL, a server).
    Open(std::sync::Arc<Database>),
}

impl Source {
    /// What a run over this source does with a segment's pages by default: a database opened
    /// for the run alone is read once, so they are released; an open one is kept for the
    /// queries that follow.
    pub fn pages(&self) -> Pages {
        match self {
            Self::Db(_) => Pages::Release,
            Self::Pgn(_) | Self::Open(_) => Pages::Keep,
        }
    }
}

/// A request that cannot be run as stated (a missing directory, options that contradict):
/// the binary exits with 2 for it, as for its argument parser's errors, and with 1 for a query
/// or data error.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A query run, with the reference program's options.
pub struct CqlRun {
    /// The query text (a whole `cql(...)` file).
    pub query: String,
    /// Name for diagnostics (file name or `-cql`).
    pub query_name: String,
    /// The query text already parsed (with the `assign` options), when the caller had to read
    /// its header first: it is not parsed again.
    pub prepared: Option<cqldb_planner::Query>,
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
    /// Whether the matched positions are kept, not only the games (SQL's `cql()` rows and
    /// pushed filters).
    pub positions: KeptPositions,
    /// What the reference program's other options set.
    pub options: QueryOptions,
    /// What becomes of each segment's mapped pages once the run is done with it: released
    /// when the database is read once (a command, or one SQL statement), kept by a process
    /// that answers many queries. [`CqlRun::new`] takes [`Source::pages`].
    pub pages: Pages,
}

/// Which of the matched positions' facts a run keeps.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum KeptPositions {
    /// None: the games only.
    #[default]
    None,
    /// Each position's game, id and ply.
    WithPlies,
    /// Game and id only: where the index lists the positions, no game is decoded for plies
    /// (the plies reported are then the ids).
    Ids,
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
    /// `--cql3-skip-initial`: a CQL 3 list file skips the start position, as the CQL 3
    /// standard did (by default it is examined, as Scidb and CQL 6 do).
    pub cql3_skip_initial: bool,
}

impl QueryOptions {
    fn cql3(&self) -> cqldb_planner::cql3::Options {
        cqldb_planner::cql3::Options {
            skip_initial: self.cql3_skip_initial,
        }
    }
}

impl CqlRun {
    /// A run of `query` over `source` with the defaults of the command line: main line only,
    /// no output file (a count), the header's settings as they are.
    pub fn new(query: impl Into<String>, source: Source) -> Self {
        Self {
            query: query.into(),
            query_name: "query".into(),
            prepared: None,
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
            positions: KeptPositions::None,
            options: QueryOptions::default(),
            pages: source.pages(),
            source,
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
    let sink = Sink::new(query, out, sink::MatchFormat::Pgn.output())?;
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
        } else if r.positions != KeptPositions::None {
            SinkKind::Positions
        } else {
            SinkKind::Count
        },
        // A PGN file has no index: every game is read, and the plan says so.
        full_scan: r.full_scan || matches!(r.source, Source::Pgn(_)),
    })
}

/// Parses a query's text, CQL 6 or a CQL 3 list file (one that starts with `(`, read as the
/// CQL 6 query it means), with `-assign` bindings and the CQL 3 choices of `options`; an error comes back rendered with a caret
/// under its place (`name` is the file's name in it).
pub fn parse_query(
    text: &str,
    name: &str,
    options: &QueryOptions,
) -> std::result::Result<cqldb_planner::Query, String> {
    let assign = &options.assign;
    let cql6 = match cqldb_planner::cql3::to_cql6(text, options.cql3()) {
        Ok(Some(cql6)) => cql6,
        Ok(None) => text.to_owned(),
        Err(e) => return Err(format!("{:?}", e.report(name, text))),
    };
    cqldb_planner::parse_with_assignments(&cql6, assign).map_err(|e| {
        if cql6 == text {
            format!("{:?}", e.report(name, text))
        } else {
            // An error in the CQL 6 text a CQL 3 list became: shown in that text.
            format!("{:?}", e.report(&format!("{name} (as CQL 6)"), &cql6))
        }
    })
}

fn merged_query(r: &CqlRun) -> Result<cqldb_planner::Query> {
    let mut query = match &r.prepared {
        Some(q) => q.clone(),
        None => parse_query(&r.query, &r.query_name, &r.options).map_err(|e| anyhow!(e))?,
    };
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
            return Err(Usage(format!("--files {}: not a directory", dir.display())).into());
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
    let text = plan.explain(&r.query, &estimates, stats);
    Ok(
        match cqldb_planner::cql3::to_cql6(&r.query, r.options.cql3()) {
            // A user migrating learns the new syntax from it.
            Ok(Some(cql6)) => format!("CQL 3 list syntax; as CQL 6:\n{cql6}\n{text}"),
            Ok(None) | Err(_) => text,
        },
    )
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
    let output: std::sync::Arc<dyn crate::match_output::MatchOutput> =
        if r.positions != KeptPositions::None {
            std::sync::Arc::new(crate::match_output::MatchedPositions)
        } else {
            r.format.output()
        };
    let sink = Sink::new(&plan.query, out, output)?;
    let opts = ExecOptions {
        analyze: r.analyze,
        plies: r.positions != KeptPositions::Ids,
        pages: r.pages,
    };
    match &r.source {
        Source::Pgn(input) => execute_with(plan, &Opened::Pgn(input), sink, opts),
        Source::Db(dir) => {
            let db = Database::open(dir)?;
            execute_with(plan, &Opened::Db(&db), sink, opts)
        }
        Source::Open(db) => execute_with(plan, &Opened::Db(db), sink, opts),
    }
}
