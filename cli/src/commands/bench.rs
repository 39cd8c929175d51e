//! `cqldb bench ...`: throughput measurements with a baseline run in the same process.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::Subcommand;
use cqldb_indexer::{IngestOptions, Input};
use cqldb_storage::Database;

/// What to benchmark.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Index PGN files and compare with a bare pgn-reader + shakmaty replay of the same input.
    Ingest {
        /// Inputs (default: every file in ../shared/data/large).
        inputs: Vec<PathBuf>,
        /// Cores the build runs on, and as many parser threads: the reader and the writer share
        /// them (default: all cores).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: Option<u64>,
        /// Keep the database here instead of a temporary directory.
        #[arg(long)]
        db: Option<PathBuf>,
        /// Rounds of (baseline, cqldb), run alternately; the best and the median of each are
        /// reported (this machine is shared, single runs move by ±10 %).
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Run a fixed set of CQL queries streaming from PGN and over an index, against a bare
    /// pgn-reader + shakmaty replay of the same input.
    Cql {
        /// Inputs (default: every file in ../shared/data/large).
        inputs: Vec<PathBuf>,
        /// Use this database (built from the same inputs) instead of building one.
        #[arg(long)]
        db: Option<PathBuf>,
        /// Timed runs per query over the index (for latency percentiles).
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// GTQL over a synthetic search-tree log: import rate, single queries, ten queries in one
    /// pass, against the naive evaluator on a smaller tree.
    Gtql {
        /// Nodes in the generated log.
        #[arg(long, default_value_t = 10_000_000)]
        nodes: u64,
        /// Nodes in the tree the naive evaluator gets.
        #[arg(long, default_value_t = 20_000)]
        naive_nodes: u64,
        /// Keep the generated log and `.gtl` in this folder (to profile queries on them).
        #[arg(long)]
        keep: Option<PathBuf>,
    },
    /// A fixed set of CQL queries over databases: each planned and as a full scan (unless
    /// `--no-full-scan`), with matches, candidate games, in-process latency percentiles
    /// (database open and warm), the time to write the matching games, and the command's
    /// end-to-end time.
    Query {
        /// Databases (default: one built from every file in ../shared/data/large).
        #[arg(long)]
        db: Vec<PathBuf>,
        /// Most timed runs per query (each query gets about 3 s).
        #[arg(long, default_value_t = 50)]
        runs: usize,
        /// Only the queries whose name contains this text.
        #[arg(long)]
        only: Option<String>,
        /// Time these CQL bodies (or whole queries starting with `cql(`) instead of the fixed
        /// set (repeatable).
        #[arg(long = "cql", value_name = "QUERY")]
        queries: Vec<String>,
        /// Skip each query's full scan (its time and ratio print as `-`, and the check that
        /// both give the same games is not made): for timing the planned runs over a database
        /// so large that a scan takes minutes.
        #[arg(long)]
        no_full_scan: bool,
    },
    /// Decode every position block of a database and count mates, against the mate bitmap.
    Scan {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
    },
    /// A fixed set of SQL statements with filter pushdown and without it, in one process.
    Sql {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// Most timed runs per statement with pushdown (each gets about 3 s).
        #[arg(long, default_value_t = 20)]
        runs: usize,
        /// A Parquet export of the same database (`cqldb export`): each plain statement also
        /// runs through DataFusion's Parquet scan, without the index.
        #[arg(long)]
        parquet: Option<PathBuf>,
    },
}

/// Runs a benchmark.
pub fn run(cmd: BenchCommand) -> Result<ExitCode> {
    match cmd {
        BenchCommand::Ingest {
            inputs,
            threads,
            db,
            runs,
        } => ingest(inputs, threads.map(|t| t as usize), db, runs),
        BenchCommand::Scan { db } => scan(&db),
        BenchCommand::Sql { db, runs, parquet } => {
            super::bench_sql::run(&db, runs, parquet.as_ref())
        }
        BenchCommand::Query {
            db,
            runs,
            only,
            queries,
            no_full_scan,
        } => {
            let queries = super::bench_query::QuerySet::new(queries, only);
            let full_scan = !no_full_scan;
            if db.is_empty() {
                let dir = std::env::temp_dir()
                    .join(format!("cqldb-bench-query-db-{}", std::process::id()));
                let _ = std::fs::remove_dir_all(&dir);
                let ins: Vec<Input> = default_inputs()?.into_iter().map(Input::Path).collect();
                super::index::index_inputs(
                    &ins,
                    &dir,
                    IngestOptions::default(),
                    cqldb_storage::WriterOptions::default().segment_positions,
                    true,
                )?;
                let code = super::bench_query::run(vec![dir.clone()], runs, &queries, full_scan);
                let _ = std::fs::remove_dir_all(&dir);
                code
            } else {
                super::bench_query::run(db, runs, &queries, full_scan)
            }
        }
        BenchCommand::Cql { inputs, db, runs } => cql(inputs, db, runs),
        BenchCommand::Gtql {
            nodes,
            naive_nodes,
            keep,
        } => gtql(nodes, naive_nodes, keep),
    }
}

/// Full decode of the position columns (one thread) versus the same count from a bitmap.
fn scan(db: &std::path::Path) -> Result<ExitCode> {
    use cqldb_storage::{BitmapKey, PositionFlags};
    let database = Database::open(db)?;
    let start = Instant::now();
    let (mut positions, mut mates) = (0u64, 0u64);
    for (_, seg) in database.segments() {
        for b in 0..seg.block_count() {
            let block = seg.block(b)?;
            positions += block.positions.len() as u64;
            mates += block
                .positions
                .iter()
                .filter(|p| p.flags.contains(PositionFlags::MATE))
                .count() as u64;
        }
    }
    let scan_secs = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let from_bitmap = database.bitmap_count(BitmapKey::flag(PositionFlags::MATE))?;
    let bitmap_secs = start.elapsed().as_secs_f64();
    outln!("cqldb bench scan: {positions} positions");
    outln!(
        "full decode (1 thread): {mates} mates in {scan_secs:.2}s = {:.1} M positions/s",
        positions as f64 / scan_secs / 1e6
    );
    outln!(
        "mate bitmap:            {from_bitmap} mates in {:.2} ms ({:.0}x faster)",
        bitmap_secs * 1e3,
        scan_secs / bitmap_secs.max(1e-9)
    );
    if from_bitmap != mates {
        anyhow::bail!("bitmap and scan disagree: {from_bitmap} vs {mates}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The benchmark's queries: (name, CQL body).
const CQL_QUERIES: [(&str, &str); 5] = [
    ("terminal mate", "terminal mate"),
    ("K+P vs K", "flipcolor { #A == 2 #P == 1 #a == 1 }"),
    (
        "smothered mate",
        "mate flipcolor { btm N attacks k (anydirection 1 k) in a }",
    ),
    ("pin of a queen", "pin through [Qq]"),
    ("tag: player white", "player white \"Carlsen\""),
];

fn cql(inputs: Vec<PathBuf>, db: Option<PathBuf>, runs: usize) -> Result<ExitCode> {
    use cqldb::cql::{CqlRun, Source, run as run_query};
    let inputs = announce("cql", inputs)?;

    let start = Instant::now();
    let mut base = cqldb_bench_data::baseline::ReplayStats::default();
    for p in &inputs {
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let s = cqldb_bench_data::baseline::replay(Input::Path(p.clone()).open(counter)?)?;
        base.games += s.games;
        base.positions += s.positions;
    }
    let base_secs = start.elapsed().as_secs_f64();
    let base_rate = base.games as f64 / base_secs;

    // Only a database this run created is removed at the end; a --db given by the user stays.
    let created = db.is_none();
    let tmp;
    let db_dir = match db {
        Some(d) => d,
        None => {
            tmp = std::env::temp_dir().join(format!("cqldb-bench-cql-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&tmp);
            let ins: Vec<Input> = inputs.iter().cloned().map(Input::Path).collect();
            super::index::index_inputs(
                &ins,
                &tmp,
                IngestOptions::default(),
                cqldb_storage::WriterOptions::default().segment_positions,
                true,
            )?;
            tmp.clone()
        }
    };
    let make = |body: &str, source: Source| CqlRun {
        query_name: "bench".into(),
        ..CqlRun::new(format!("cql()\n{body}"), source)
    };
    outln!(
        "baseline: bare pgn-reader + shakmaty replay, 1 thread: {:.0} games/s ({} games)",
        base_rate,
        base.games
    );
    outln!(
        "{:<20} {:>8} | {:>10} {:>7} | {:>10} {:>9} {:>8} {:>8} {:>8}",
        "query",
        "matches",
        "stream g/s",
        "x base",
        "index g/s",
        "M pos/s",
        "p50 ms",
        "min ms",
        "max ms"
    );
    for (name, body) in CQL_QUERIES {
        let t = Instant::now();
        let mut streamed = 0u64;
        let mut stream_matches = 0usize;
        for p in &inputs {
            let s = run_query(&make(body, Source::Pgn(Input::Path(p.clone()))))?;
            streamed += s.games;
            stream_matches += s.matched.len();
        }
        let stream_secs = t.elapsed().as_secs_f64();
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..runs.max(1) {
            let t = Instant::now();
            let s = run_query(&make(body, Source::Db(db_dir.clone())))?;
            times.push(t.elapsed().as_secs_f64());
            last = Some(s);
        }
        let s = last.unwrap_or_default();
        if s.matched.len() != stream_matches {
            anyhow::bail!(
                "{name}: index found {} games, streaming {stream_matches}",
                s.matched.len()
            );
        }
        times.sort_by(f64::total_cmp);
        let p50 = times[times.len() / 2];
        outln!(
            "{:<20} {:>8} | {:>10.0} {:>7.1} | {:>10.0} {:>9.1} {:>8.0} {:>8.0} {:>8.0}",
            name,
            s.matched.len(),
            streamed as f64 / stream_secs,
            streamed as f64 / stream_secs / base_rate,
            s.games as f64 / p50,
            s.positions as f64 / p50 / 1e6,
            p50 * 1e3,
            times[0] * 1e3,
            times[times.len() - 1] * 1e3
        );
    }
    relations(&db_dir, runs)?;
    if let Some(rss) = super::peak_rss::peak_rss_mib() {
        outln!("peak RSS: {rss:.0} MiB");
    }
    if created {
        let _ = std::fs::remove_dir_all(&db_dir);
    }
    Ok(ExitCode::SUCCESS)
}

/// The three canonical CQL 3 `:relation` examples (the reference's section on them).
const CQL3_RELATIONS: [(&str, &str); 3] = [
    (
        "missing pieces",
        "(match :result 1-0 (position :relation (:missingpiececount A 1 10)))",
    ),
    (
        "other side to move",
        "(match (position :relation (:changesidetomove)))",
    ),
    (
        "moved recurrence",
        "(match (position Ke6 be7 be4 nd5 :shift :flip :relation \
         (:pattern :shift :flip :originalsamecount 0 :samesidetomove :variations)))",
    ),
];

/// The CQL 3 relations over the database, planned (p50 of `runs`) against one full scan;
/// both must find the same games.
fn relations(db: &std::path::Path, runs: usize) -> Result<()> {
    use cqldb::cql::{CqlRun, Source, run as run_query};
    outln!(
        "{:<20} {:>8} | {:>10} {:>8} {:>8} | {:>12} {:>7}",
        "CQL 3 relation",
        "matches",
        "planned ms",
        "min ms",
        "max ms",
        "full scan ms",
        "x plan"
    );
    for (name, list) in CQL3_RELATIONS {
        let make = |full_scan: bool| CqlRun {
            query_name: "bench".into(),
            full_scan,
            ..CqlRun::new(list, Source::Db(db.to_path_buf()))
        };
        let mut times = Vec::new();
        let mut planned = None;
        for _ in 0..runs.max(1) {
            let t = Instant::now();
            planned = Some(run_query(&make(false))?);
            times.push(t.elapsed().as_secs_f64());
        }
        let t = Instant::now();
        let full = run_query(&make(true))?;
        let full_secs = t.elapsed().as_secs_f64();
        let planned = planned.unwrap_or_default();
        if planned.matched != full.matched {
            anyhow::bail!(
                "{name}: planned found {} games, the full scan {}",
                planned.matched.len(),
                full.matched.len()
            );
        }
        times.sort_by(f64::total_cmp);
        let p50 = times[times.len() / 2];
        outln!(
            "{:<20} {:>8} | {:>10.0} {:>8.0} {:>8.0} | {:>12.0} {:>7.1}",
            name,
            planned.matched.len(),
            p50 * 1e3,
            times[0] * 1e3,
            times[times.len() - 1] * 1e3,
            full_secs * 1e3,
            full_secs / p50
        );
    }
    Ok(())
}

/// The benchmark's GTQL queries (the paper's analyses and a few more).
const GTQL_QUERIES: [&str; 10] = [
    "node: type = PVNode; child: count([]type = type) >= 2",
    "node: type = PVNode; child: count([]type = type) >= 5",
    "node: flags & QRootNode; subtree: count(*) > 20",
    "node: type = CUTNode; child: count(*) >= 2",
    "node: type = ALLNode and depth >= 3; subtree: count(flags & QNode) > 50",
    "child: count([]value > [<]value) >= 3",
    "node: flags & NullMove; subtree: count(*) > 100",
    "node: type != PVNode and beta > alpha",
    "subtree: sum(flags & QNode) > 1000 and count(*) < 5000",
    "node: depth >= 4; child: max([]value) > 300",
];

/// Queries with the language's additions: ancestors, sibling parts, aggregates beyond count.
const GTQL_BEYOND: [&str; 4] = [
    "node: type = CUTNode and [^2]type = CUTNode",
    "node: type = PVNode; sibling: max([]value) > value",
    "node: type = CUTNode; sibling: count([]value < value) = 0",
    "node: type = ALLNode; child: avg([]value) > 0; subtree: avg(depth) < 0",
];

/// `cqldb gtql import` of a text log, but reading it line by line as the careful reader does
/// (the speed every line had before block reading, and what unusual lines still get).
fn import_line_by_line(log: &std::path::Path, out: &std::path::Path) -> Result<u64> {
    use cqldb_storage::gtl::{GtlWriter, ReadAhead, TextLogReader};
    let mut r = TextLogReader::new(ReadAhead::new(std::fs::File::open(log)?))?;
    let mut w = GtlWriter::create(out, r.schema())?;
    let (mut mv, mut values) = (Vec::new(), Vec::new());
    while let Some(level) = r.next_parts(&mut mv, &mut values)? {
        w.push_parts(level, &mv, &values)?;
    }
    let n = w.finish()?;
    std::fs::remove_file(out)?;
    Ok(n)
}

fn gtql(nodes: u64, naive_nodes: u64, keep: Option<PathBuf>) -> Result<ExitCode> {
    use cqldb_executor::gtql::{GtlSource, Pass, naive_answers};
    use cqldb_planner::gtql::parse_gtql;
    use cqldb_storage::gtl::{GtlReader, TextLogReader};
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("cqldb-bench-gtql-{}", std::process::id()))
    });
    std::fs::create_dir_all(&dir)?;
    let log = dir.join("tree.log");
    let gtl = dir.join("tree.gtl");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&log)?);
        cqldb_bench_data::search_tree::write_log(&mut w, nodes, 7)?;
        std::io::Write::flush(&mut w)?;
    }
    let log_bytes = std::fs::metadata(&log)?.len();
    // Imports are short and the machine's speed wanders: the median of three, against the
    // line-by-line reader (the careful path every unusual line takes) on the same file.
    let mut import_runs = Vec::new();
    let mut n = 0;
    for _ in 0..3 {
        // Replacing a file costs freeing its pages: each run writes a new one.
        let _ = std::fs::remove_file(&gtl);
        let t = Instant::now();
        n = super::gtql::import(&log, &gtl)?;
        import_runs.push(t.elapsed().as_secs_f64());
    }
    import_runs.sort_by(f64::total_cmp);
    let import_secs = import_runs[1];
    let t = Instant::now();
    let careful_n = import_line_by_line(&log, &dir.join("careful.gtl"))?;
    let careful_secs = t.elapsed().as_secs_f64();
    let gtl_bytes = std::fs::metadata(&gtl)?.len();
    outln!(
        "cqldb bench gtql: {n} nodes (text log {:.0} MB, .gtl {:.1} MB = {:.2} bytes/node)",
        log_bytes as f64 / 1e6,
        gtl_bytes as f64 / 1e6,
        gtl_bytes as f64 / n as f64
    );
    outln!(
        "import: {:.2} s = {:.1} M nodes/s (median of 3; runs {:.2}-{:.2} s)   [target >= 10]",
        import_secs,
        n as f64 / import_secs / 1e6,
        import_runs[0],
        import_runs[2]
    );
    outln!(
        "  baseline, the line-by-line reader: {:.2} s = {:.1} M nodes/s; block reading {:.2}x faster",
        careful_secs,
        careful_n as f64 / careful_secs / 1e6,
        careful_secs / import_secs
    );

    // The same tree as a GT-log `.gtf` file, as an engine linking `gtlog` writes it.
    let gtf = dir.join("tree.gtf");
    let gtf_n = {
        let w = std::io::BufWriter::new(std::fs::File::create(&gtf)?);
        cqldb_bench_data::search_tree::write_gtf(w, nodes, 7)?
    };
    let mut gtf_runs = Vec::new();
    let gtf_out = dir.join("from-gtf.gtl");
    for _ in 0..3 {
        let _ = std::fs::remove_file(&gtf_out);
        let t = Instant::now();
        let got = super::gtql::import(&gtf, &gtf_out)?;
        gtf_runs.push(t.elapsed().as_secs_f64());
        if got != gtf_n {
            anyhow::bail!("the .gtf import read {got} of {gtf_n} nodes");
        }
    }
    gtf_runs.sort_by(f64::total_cmp);
    outln!(
        "import from .gtf ({:.0} MB): {:.2} s = {:.1} M nodes/s (median of 3), .gtl {:.2} bytes/node with ids",
        std::fs::metadata(&gtf)?.len() as f64 / 1e6,
        gtf_runs[1],
        gtf_n as f64 / gtf_runs[1] / 1e6,
        std::fs::metadata(&gtf_out)?.len() as f64 / gtf_n as f64
    );
    std::fs::remove_file(&gtf)?;
    std::fs::remove_file(&gtf_out)?;

    let schema = GtlReader::open(&gtl)?.schema().clone();
    let names = cqldb_executor::gtql::tree_names(&schema);
    let queries: Vec<_> = GTQL_QUERIES
        .iter()
        .map(|q| parse_gtql(q, &names).map_err(|e| anyhow::anyhow!("{q}: {}", e.message)))
        .collect::<Result<_>>()?;
    let run = |qs: Vec<cqldb_planner::gtql::GtqlQuery>| -> Result<(f64, Vec<u64>)> {
        let t = Instant::now();
        let mut source = GtlSource::open(&gtl)?;
        source.prepare(&qs, false);
        let mut pass = Pass::new(qs, names.columns(), false, 0);
        let mut c = cqldb_storage::gtl::Chunk::default();
        while source.next_chunk(&mut c)? {
            pass.feed(&c);
        }
        let answers = pass.finish();
        Ok((
            t.elapsed().as_secs_f64(),
            answers.iter().map(|a| a.count).collect(),
        ))
    };
    outln!("{:<75} {:>10} {:>12}", "query", "answers", "M nodes/s");
    let mut singles = Vec::new();
    for q in queries.iter() {
        let text = GTQL_QUERIES[singles.len()];
        let (secs, counts) = run(vec![q.clone()])?;
        outln!(
            "{text:<75} {:>10} {:>12.1}",
            counts[0],
            n as f64 / secs / 1e6
        );
        singles.push(counts[0]);
    }
    let (secs, counts) = run(queries.clone())?;
    if counts != singles {
        anyhow::bail!("the batch pass disagrees with the single passes");
    }
    outln!(
        "{:<75} {:>10} {:>12.1}",
        "all 10 queries in one pass, one core",
        counts.iter().sum::<u64>(),
        n as f64 / secs / 1e6
    );
    // The same batch as `cqldb gtql -f` runs it: decoded once, queries spread over the cores.
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let t = Instant::now();
    let mut source = GtlSource::open(&gtl)?;
    let opts = cqldb_executor::gtql::GtqlOptions {
        limit: 0,
        threads,
        pages: cqldb_storage::Pages::Keep,
    };
    let counts: Vec<u64> = cqldb_executor::gtql::answer_tree(&mut source, &queries, opts)?
        .answers
        .iter()
        .map(|a| a.count)
        .collect();
    let par_secs = t.elapsed().as_secs_f64();
    if counts != singles {
        anyhow::bail!("the parallel pass disagrees with the single passes");
    }
    outln!(
        "{:<75} {:>10} {:>12.1}",
        format!("all 10 queries in one pass, {threads} worker threads (wall clock)"),
        counts.iter().sum::<u64>(),
        n as f64 / par_secs / 1e6
    );
    // The paper's PV-children analysis: one node part and aggregate, four thresholds.
    let family: Vec<_> = [2, 5, 7, 9]
        .iter()
        .map(|k| {
            let text = format!("node: type = PVNode; child: count([]type = PVNode) >= {k}");
            parse_gtql(&text, &names).map_err(|e| anyhow::anyhow!("{text}: {}", e.message))
        })
        .collect::<Result<_>>()?;
    let (secs, counts) = run(family)?;
    outln!(
        "{:<75} {:>10} {:>12.1}",
        "PV nodes with >= 2, 5, 7, 9 PV children (paper), in one pass",
        counts.iter().sum::<u64>(),
        n as f64 / secs / 1e6
    );
    outln!("beyond the paper, each alone:");
    for text in GTQL_BEYOND {
        let q = parse_gtql(text, &names).map_err(|e| anyhow::anyhow!("{text}: {}", e.message))?;
        let (secs, counts) = run(vec![q])?;
        outln!(
            "{text:<75} {:>10} {:>12.1}",
            counts[0],
            n as f64 / secs / 1e6
        );
    }

    // The naive evaluator (every aggregate recounted for every node) on a small tree.
    let small = dir.join("small.log");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&small)?);
        cqldb_bench_data::search_tree::write_log(&mut w, naive_nodes, 7)?;
        std::io::Write::flush(&mut w)?;
    }
    let mut r = TextLogReader::new(std::io::BufReader::new(std::fs::File::open(&small)?))?;
    let (mut levels, mut rows) = (Vec::new(), Vec::new());
    while let Some(mut node) = r.next_node()? {
        levels.push(node.level);
        node.values.push(cqldb_planner::gtql::text_move_code(
            node.last_move.as_bytes(),
        ));
        rows.push(node.values);
    }
    let t = Instant::now();
    let slow = naive_answers(&queries, &levels, &rows, &[]);
    let naive_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut pass = Pass::new(queries.clone(), names.columns(), false, usize::MAX);
    pass.feed(&cqldb_storage::gtl::Chunk {
        first_id: 0,
        levels: levels.clone(),
        moves: Vec::new(),
        cols: (0..names.columns())
            .map(|k| rows.iter().map(|r| r[k]).collect())
            .collect(),
        ids: Vec::new(),
    });
    let fast = pass.finish();
    let fast_secs = t.elapsed().as_secs_f64();
    if fast
        .iter()
        .map(|a| a.count)
        .ne(slow.iter().map(|a| a.count))
    {
        anyhow::bail!("the single pass and the naive evaluator disagree");
    }
    let m = levels.len() as f64;
    outln!(
        "naive evaluator, 10 queries, {} nodes: {:.3} M nodes/s; single pass on the same tree in memory: {:.1} M nodes/s ({:.0}x)",
        levels.len(),
        m / naive_secs / 1e6,
        m / fast_secs / 1e6,
        naive_secs / fast_secs
    );
    if let Some(rss) = super::peak_rss::peak_rss_mib() {
        outln!("peak RSS: {rss:.0} MiB");
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(ExitCode::SUCCESS)
}

/// The inputs (default: every file in ../shared/data/large), announced with the core count.
fn announce(what: &str, inputs: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
    let inputs = if inputs.is_empty() {
        default_inputs()?
    } else {
        inputs
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    outln!(
        "cqldb bench {what}: {} input file(s), {cores} core(s)",
        inputs.len()
    );
    Ok(inputs)
}

fn default_inputs() -> Result<Vec<PathBuf>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/large");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| anyhow::anyhow!("{}: {e} (pass input files explicitly)", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

struct Counting<R>(R, u64);

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        self.1 += n as u64;
        Ok(n)
    }
}

fn ingest(
    inputs: Vec<PathBuf>,
    threads: Option<usize>,
    db: Option<PathBuf>,
    runs: usize,
) -> Result<ExitCode> {
    let inputs = announce("ingest", inputs)?;
    // Only a database this run created is removed at the end; a --db given by the user stays.
    let created = db.is_none();
    let tmp;
    let db_dir = match db {
        Some(d) => d,
        None => {
            tmp = std::env::temp_dir().join(format!("cqldb-bench-{}", std::process::id()));
            tmp.clone()
        }
    };
    let mut options = IngestOptions::default();
    if let Some(t) = threads {
        options.threads = t.max(1);
    }
    let ins: Vec<Input> = inputs.iter().cloned().map(Input::Path).collect();
    let mut base = cqldb_bench_data::baseline::ReplayStats::default();
    let mut raw_bytes = 0u64;
    let mut base_times = Vec::new();
    let mut times = Vec::new();
    let mut report = cqldb_indexer::IngestReport::default();
    for round in 0..runs.max(1) {
        // Baseline: decompress + pgn-reader + shakmaty replay, one thread.
        let start = Instant::now();
        base = cqldb_bench_data::baseline::ReplayStats::default();
        raw_bytes = 0;
        for p in &inputs {
            let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            let mut reader = Counting(Input::Path(p.clone()).open(counter)?, 0);
            let s = cqldb_bench_data::baseline::replay(&mut reader)?;
            raw_bytes += reader.1;
            base.games += s.games;
            base.positions += s.positions;
            base.bad_moves += s.bad_moves;
        }
        base_times.push(start.elapsed().as_secs_f64());
        // cqldb: split + parse + tree + columns + bitmaps + tag index + commit, into a new
        // database each round.
        if created || round > 0 {
            let _ = std::fs::remove_dir_all(&db_dir);
        }
        let (r, elapsed) = super::index::index_inputs(
            &ins,
            &db_dir,
            options,
            cqldb_storage::WriterOptions::default().segment_positions,
            true,
        )?;
        report = r;
        times.push(elapsed.as_secs_f64());
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (base_secs, secs) = (best(&base_times), best(&times));
    let stats = Database::open(&db_dir)?.stats()?;
    let mb = raw_bytes as f64 / 1e6;

    outln!(
        "{:<28} {:>10} {:>13} {:>11} {:>11} {:>8}",
        "run",
        "games",
        "positions",
        "games/s",
        "pos/s",
        "MB/s"
    );
    let row = |name: &str, games: u64, positions: u64, s: f64| -> Result<()> {
        outln!(
            "{name:<28} {games:>10} {positions:>13} {:>11.0} {:>11.0} {:>8.1}",
            games as f64 / s,
            positions as f64 / s,
            mb / s
        );
        Ok(())
    };
    row(
        "baseline replay (1 thread)",
        base.games,
        base.positions,
        base_secs,
    )?;
    row(
        &format!("cqldb index ({} threads)", options.threads),
        report.games,
        report.positions,
        secs,
    )?;
    outln!(
        "ratio (input MB/s, cqldb / baseline): {:.2} best of {} rounds, {:.2} median   [target >= 0.50, goal 0.8]",
        base_secs / secs,
        times.len(),
        median(&base_times) / median(&times)
    );
    outln!(
        "on disk: {} bytes, {:.2} bytes/position   [target <= 16]",
        stats.bytes,
        stats.bytes as f64 / stats.positions.max(1) as f64
    );
    if let Some(rss) = super::peak_rss::peak_rss_mib() {
        outln!("peak RSS: {rss:.0} MiB   [target < 1024]");
    }
    outln!(
        "games with problems: {} (baseline bad moves: {})",
        report.games_with_issues,
        base.bad_moves
    );
    if created {
        let _ = std::fs::remove_dir_all(&db_dir);
    }
    Ok(ExitCode::SUCCESS)
}
