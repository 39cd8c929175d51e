//! Running a CQL query over PGN or an index and writing the matching games.
//!
//! Both sources use every core: PGN games are read by one thread and parsed (and, for queries
//! without variables, evaluated) in parallel batches; an index is evaluated a segment per core.
//! Output always keeps input order.

use std::io::Write;
use std::path::PathBuf;

use crate::games::game_from_rows;
use anyhow::{Context, Result, anyhow};
use cqldb_executor::output::{OutputOptions, write_game};
use cqldb_executor::{Engine, Game, GameMatch};
use cqldb_indexer::Input;
use cqldb_indexer::split::{RawGame, Splitter};
use cqldb_planner::plan::rules::optimize;
use cqldb_planner::plan::{LogicalPlan, OpStats, PhysicalPlan, Residual, RunStats, SinkKind};
use cqldb_storage::Database;
use rayon::prelude::*;

/// Where the games come from.
pub enum Source {
    /// A PGN input (file, compressed file or stdin), read on the fly.
    Pgn(Input),
    /// A cqldb database.
    Db(PathBuf),
    /// A database already open (repeated queries: benchmarks, a server).
    Open(std::sync::Arc<Database>),
}

/// How matching games are written.
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
        }
    }
}

/// What a run found.
#[derive(Debug, Default)]
pub struct CqlSummary {
    /// Games read.
    pub games: u64,
    /// Positions visited (evaluated).
    pub positions: u64,
    /// Numbers of the games written, in output order.
    pub matched: Vec<u64>,
    /// `message` output.
    pub messages: Vec<String>,
    /// Games the query could not be fully evaluated on: (game number, why).
    pub warnings: Vec<(u64, String)>,
    /// The plan that ran.
    pub plan: Option<PhysicalPlan>,
    /// What the executor measured of it.
    pub stats: RunStats,
}

/// Games per parallel batch when streaming PGN.
const BATCH: usize = 512;

struct Sink<'a> {
    out: Option<Box<dyn Write + 'a>>,
    opts: OutputOptions,
    format: MatchFormat,
    summary: CqlSummary,
    /// `sort matchcount`: selected games wait here (key, number, PGN) until the end.
    sorted: Option<Vec<(i64, u64, Vec<u8>)>>,
}

/// What one game contributes to the run.
#[derive(Default)]
struct GameOut {
    number: u64,
    positions: u64,
    selected: bool,
    sort_key: i64,
    pgn: Vec<u8>,
    messages: Vec<String>,
    warnings: Vec<String>,
}

impl GameOut {
    fn of(
        game: &Game,
        m: &GameMatch,
        opts: Option<&OutputOptions>,
        format: MatchFormat,
    ) -> Result<Self> {
        let mut pgn = Vec::new();
        if let (true, Some(opts)) = (m.selected, opts) {
            match format {
                MatchFormat::Pgn => write_game(&mut pgn, game, m, opts)?,
                MatchFormat::Json => cqldb_executor::rows::write_json_row(&mut pgn, game, m)?,
                MatchFormat::Csv => cqldb_executor::rows::write_csv_row(&mut pgn, game, m)?,
            }
        }
        Ok(Self {
            number: game.number,
            positions: visited(game),
            selected: m.selected,
            sort_key: m.matched.len() as i64,
            pgn,
            messages: m.messages.clone(),
            warnings: m.warnings.clone(),
        })
    }
}

impl Sink<'_> {
    fn take(&mut self, game: &Game, m: &GameMatch) -> Result<()> {
        let writing = self.out.is_some();
        let g = GameOut::of(game, m, writing.then_some(&self.opts), self.format)?;
        self.accept(g)
    }

    fn accept(&mut self, g: GameOut) -> Result<()> {
        self.summary.games += 1;
        self.summary.positions += g.positions;
        self.summary.messages.extend(g.messages);
        for w in g.warnings {
            self.summary.warnings.push((g.number, w));
        }
        if !g.selected {
            return Ok(());
        }
        if let Some(sorted) = self.sorted.as_mut() {
            sorted.push((g.sort_key, g.number, g.pgn));
            return Ok(());
        }
        self.summary.matched.push(g.number);
        if let Some(w) = self.out.as_mut() {
            w.write_all(&g.pgn)?;
        }
        Ok(())
    }

    /// Writes sorted output (largest key first, ties in input order) and flushes.
    fn finish(&mut self) -> Result<()> {
        if let Some(mut sorted) = self.sorted.take() {
            sorted.sort_by_key(|g| std::cmp::Reverse(g.0));
            for (_, number, pgn) in sorted {
                self.summary.matched.push(number);
                if let Some(w) = self.out.as_mut() {
                    w.write_all(&pgn)?;
                }
            }
        }
        if let Some(w) = self.out.as_mut() {
            w.flush()?;
        }
        Ok(())
    }
}

fn visited(game: &Game) -> u64 {
    if game.variations {
        game.len() as u64
    } else {
        game.positions.iter().filter(|p| p.depth == 0).count() as u64
    }
}

/// Evaluates a parsed query over games already in memory, in order, writing the selected games
/// to `out` exactly as `cqldb cql` would (sorting included). Used by the conformance tests.
pub fn run_games<'a>(
    query: &cqldb_planner::Query,
    games: impl IntoIterator<Item = &'a Game>,
    out: Option<Box<dyn Write + 'a>>,
) -> Result<CqlSummary> {
    let opts = output_options(query);
    let mut engine = Engine::new(query.clone(), false);
    let sorted = query.header.sort_matchcount.then(Vec::new);
    let mut sink = Sink {
        out,
        opts,
        format: MatchFormat::Pgn,
        summary: CqlSummary::default(),
        sorted,
    };
    for g in games {
        let m = engine.run_game(g);
        sink.take(g, &m)?;
    }
    sink.finish()?;
    Ok(std::mem::take(&mut sink.summary))
}

fn output_options(query: &cqldb_planner::Query) -> OutputOptions {
    OutputOptions {
        matchstring: query
            .header
            .matchstring
            .clone()
            .unwrap_or_else(|| "CQL".to_owned()),
        silent: query.header.silent,
        quiet: query.header.quiet,
    }
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
        full_scan: r.full_scan,
    })
}

fn merged_query(r: &CqlRun) -> Result<cqldb_planner::Query> {
    let mut query = cqldb_planner::parse(&r.query)
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
    Ok(query)
}

/// Plans the query and runs it.
pub fn run(r: &CqlRun) -> Result<CqlSummary> {
    run_plan(r, plan(r)?)
}

/// Runs a plan made for `r` (tests plant plans made with other rules).
pub fn run_plan(r: &CqlRun, plan: PhysicalPlan) -> Result<CqlSummary> {
    let query = (*plan.query).clone();
    let opts = output_options(&query);
    let engine = Engine::new(query, plan.variations);
    let mut out = match &r.output {
        None => None,
        Some(p) => Some(open_output(p)?),
    };
    if let (Some(w), MatchFormat::Csv) = (out.as_mut(), r.format) {
        writeln!(w, "{}", cqldb_executor::rows::CSV_HEADER)?;
    }
    let sorted = engine.query().header.sort_matchcount.then(Vec::new);
    let mut sink = Sink {
        out,
        opts,
        format: r.format,
        summary: CqlSummary::default(),
        sorted,
    };
    match &r.source {
        Source::Pgn(input) => run_pgn(input, engine, &mut sink)?,
        Source::Db(dir) => {
            let db = Database::open(dir)?;
            sink.summary.stats = run_db(&db, &plan, r.analyze, engine, &mut sink)?;
        }
        Source::Open(db) => {
            sink.summary.stats = run_db(db, &plan, r.analyze, engine, &mut sink)?;
        }
    }
    let t = std::time::Instant::now();
    sink.finish()?;
    sink.summary.stats.sink.micros += t.elapsed().as_micros() as u64;
    sink.summary.stats.sink.games = sink.summary.matched.len() as u64;
    sink.summary.plan = Some(plan);
    Ok(std::mem::take(&mut sink.summary))
}

/// The output file: `-` is stdout; a name ending in `.zst` or `.gz` is compressed (the
/// stream is finished by the sink's last flush).
fn open_output(p: &std::path::Path) -> Result<Box<dyn Write>> {
    if p.as_os_str() == "-" {
        return Ok(Box::new(std::io::BufWriter::new(std::io::stdout())));
    }
    let file =
        std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?;
    let file = std::io::BufWriter::new(file);
    let name = p.to_string_lossy();
    Ok(if name.ends_with(".zst") {
        Box::new(Finishing::Zstd(Some(zstd::Encoder::new(file, 3)?)))
    } else if name.ends_with(".gz") {
        Box::new(Finishing::Gzip(Some(flate2::write::GzEncoder::new(
            file,
            flate2::Compression::default(),
        ))))
    } else {
        Box::new(file)
    })
}

/// A compressing writer whose `flush` at the end of a run writes the compressed stream's end:
/// the sink only knows `Write`, and a stream that is never finished is unreadable.
enum Finishing<W: Write> {
    Zstd(Option<zstd::Encoder<'static, W>>),
    Gzip(Option<flate2::write::GzEncoder<W>>),
}

impl<W: Write> Write for Finishing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Finishing::Zstd(Some(e)) => e.write(buf),
            Finishing::Gzip(Some(e)) => e.write(buf),
            _ => Err(std::io::Error::other("output already finished")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let mut inner = match self {
            Finishing::Zstd(e) => match e.take() {
                Some(e) => e.finish()?,
                None => return Ok(()),
            },
            Finishing::Gzip(e) => match e.take() {
                Some(e) => e.finish()?,
                None => return Ok(()),
            },
        };
        inner.flush()
    }
}

fn run_pgn(input: &Input, mut engine: Engine, sink: &mut Sink<'_>) -> Result<()> {
    let stateless = !engine.query().has_state();
    let variations = engine.variations;
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let reader = input
        .open(counter)
        .with_context(|| format!("cannot open {}", input.name()))?;
    let name = input.name();
    let (tx, rx) = crossbeam_channel::bounded::<Vec<(u64, RawGame)>>(4);
    let read = std::thread::Builder::new()
        .name("cqldb-read".into())
        .spawn(move || -> Result<()> {
            let mut split = Splitter::new(reader);
            let mut n = 0u64;
            let mut batch = Vec::with_capacity(BATCH);
            while let Some(raw) = split
                .next_game()
                .with_context(|| format!("reading {name}"))?
            {
                n += 1;
                batch.push((n, raw));
                if batch.len() == BATCH && tx.send(std::mem::take(&mut batch)).is_err() {
                    return Ok(());
                }
            }
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            Ok(())
        })?;
    let mut result = Ok(());
    for batch in &rx {
        let done: Vec<(Game, Option<GameMatch>)> = batch
            .into_par_iter()
            .map_init(
                || engine.fork(),
                |e, (n, raw)| {
                    let game = crate::games::game_from_pgn(n, raw, variations);
                    let m = stateless.then(|| e.run_game(&game));
                    (game, m)
                },
            )
            .collect();
        for (game, m) in done {
            let m = m.unwrap_or_else(|| engine.run_game(&game));
            if let Err(e) = sink.take(&game, &m) {
                result = Err(e);
                break;
            }
        }
        if result.is_err() {
            break;
        }
    }
    drop(rx);
    let read_result = read
        .join()
        .map_err(|_| anyhow!("the reader thread panicked"))?;
    result.and(read_result)
}

/// The plan over an index: per segment, the candidate games from the index scans (all games
/// without a scan), then the residual on those games only, or the candidates as the answer.
fn run_db(
    db: &Database,
    plan: &PhysicalPlan,
    analyze: bool,
    mut engine: Engine,
    sink: &mut Sink<'_>,
) -> Result<RunStats> {
    let variations = engine.variations;
    let with_text = engine.query().reads_tags || sink.out.is_some();
    let writing = sink.out.is_some();
    let mut stats = RunStats::default();
    let mut segments = Vec::new();
    let mut first = 1u64;
    for (entry, seg) in db.segments() {
        stats.games += entry.games;
        let candidates = match &plan.candidates {
            None => None,
            Some(scan) => {
                let mut s = cqldb_executor::scan::SegmentScan::new(seg, first);
                s.count_games = analyze;
                // A tag index that cannot be read (an older version) only costs the pruning:
                // tag scans then give every game.
                if scan.uses_tags() {
                    s.tags = db.tag_reader(entry).ok();
                }
                let positions = s.eval(scan, &mut stats.scans)?;
                let games = s.games_of(&positions);
                if let Some(top) = stats.scans.first_mut()
                    && !analyze
                {
                    top.games += games.len();
                }
                Some(games)
            }
        };
        segments.push((first, seg, candidates));
        first += entry.games;
    }
    // Games skipped by the index are read (and do not match).
    let read: u64 = segments
        .iter()
        .map(|(_, seg, c)| c.as_ref().map_or(u64::from(seg.games()), |g| g.len()))
        .sum();
    sink.summary.games += stats.games - read;
    if plan.residual == Residual::None {
        sink.summary.games += read;
        for (first, _, games) in &segments {
            for g in games.iter().flatten() {
                sink.summary.matched.push(first + u64::from(g));
            }
        }
        return Ok(stats);
    }
    let t = std::time::Instant::now();
    let before = (sink.summary.games, sink.summary.positions);
    if engine.query().has_state() {
        for (first, seg, games) in segments {
            let mut failure = None;
            seg.for_each_game_in(games.as_ref(), with_text, |local, rows| {
                if failure.is_some() {
                    return Ok(());
                }
                let game = game_from_rows(first + u64::from(local), &rows, with_text, variations);
                let m = engine.run_game(&game);
                if let Err(e) = sink.take(&game, &m) {
                    failure = Some(e);
                }
                Ok(())
            })?;
            if let Some(e) = failure {
                return Err(e);
            }
        }
        residual_stats(&mut stats.residual, sink, before, t);
        return Ok(stats);
    }
    // A few segments at a time, so that buffered output stays bounded.
    let width = rayon::current_num_threads().max(1);
    let opts = writing.then(|| sink.opts.clone());
    let format = sink.format;
    for chunk in segments.chunks(width) {
        let outs: Vec<Result<Vec<GameOut>>> = chunk
            .par_iter()
            .map(|(first, seg, games)| {
                let mut e = engine.fork();
                let mut outs = Vec::new();
                let mut failure = None;
                seg.for_each_game_in(games.as_ref(), with_text, |local, rows| {
                    let game =
                        game_from_rows(first + u64::from(local), &rows, with_text, variations);
                    let m = e.run_game(&game);
                    match GameOut::of(&game, &m, opts.as_ref(), format) {
                        Ok(g) => outs.push(g),
                        Err(err) => failure = Some(err),
                    }
                    Ok(())
                })?;
                if let Some(e) = failure {
                    return Err(e);
                }
                Ok(outs)
            })
            .collect();
        for out in outs {
            for g in out? {
                sink.accept(g)?;
            }
        }
    }
    residual_stats(&mut stats.residual, sink, before, t);
    Ok(stats)
}

/// The residual's share of a run: games and positions evaluated since `before`, time since
/// `t` (the sink's time included: they interleave).
fn residual_stats(st: &mut OpStats, sink: &Sink<'_>, before: (u64, u64), t: std::time::Instant) {
    st.games = sink.summary.games - before.0;
    st.positions = sink.summary.positions - before.1;
    st.micros = t.elapsed().as_micros() as u64;
}
