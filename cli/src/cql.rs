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
use cqldb_storage::Database;
use rayon::prelude::*;

/// Where the games come from.
pub enum Source {
    /// A PGN input (file, compressed file or stdin), read on the fly.
    Pgn(Input),
    /// A cqldb database.
    Db(PathBuf),
}

/// A query run, with the reference program's options.
pub struct CqlRun {
    /// The query text (a whole `cql(...)` file).
    pub query: String,
    /// Name for diagnostics (file name or `-cql`).
    pub query_name: String,
    /// Games to read.
    pub source: Source,
    /// Output PGN (`None` = no output file).
    pub output: Option<PathBuf>,
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
}

/// Games per parallel batch when streaming PGN.
const BATCH: usize = 512;

struct Sink {
    out: Option<Box<dyn Write>>,
    opts: OutputOptions,
    summary: CqlSummary,
}

impl Sink {
    fn take(&mut self, game: &Game, m: &GameMatch) -> Result<()> {
        self.summary.games += 1;
        self.summary.positions += visited(game);
        self.summary.messages.extend(m.messages.iter().cloned());
        for w in &m.warnings {
            self.summary.warnings.push((game.number, w.clone()));
        }
        if m.selected {
            self.summary.matched.push(game.number);
            if let Some(w) = self.out.as_mut() {
                write_game(w.as_mut(), game, m, &self.opts)?;
            }
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

/// Parses the query (errors come back rendered with a caret) and runs it.
pub fn run(r: &CqlRun) -> Result<CqlSummary> {
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
    let opts = OutputOptions {
        matchstring: query
            .header
            .matchstring
            .clone()
            .unwrap_or_else(|| "CQL".to_owned()),
        silent: query.header.silent,
        quiet: query.header.quiet,
    };
    let engine = Engine::new(query, r.variations && !r.mainline);
    let out: Option<Box<dyn Write>> = match &r.output {
        None => None,
        Some(p) if p.as_os_str() == "-" => {
            Some(Box::new(std::io::BufWriter::new(std::io::stdout())))
        }
        Some(p) => Some(Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        ))),
    };
    let mut sink = Sink {
        out,
        opts,
        summary: CqlSummary::default(),
    };
    match &r.source {
        Source::Pgn(input) => run_pgn(input, engine, &mut sink)?,
        Source::Db(dir) => run_db(&Database::open(dir)?, engine, &mut sink)?,
    }
    if let Some(w) = sink.out.as_mut() {
        w.flush()?;
    }
    Ok(sink.summary)
}

fn run_pgn(input: &Input, mut engine: Engine, sink: &mut Sink) -> Result<()> {
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

/// Output of one segment evaluated on its own.
#[derive(Default)]
struct SegmentOut {
    games: u64,
    positions: u64,
    matched: Vec<u64>,
    messages: Vec<String>,
    warnings: Vec<(u64, String)>,
    pgn: Vec<u8>,
}

fn run_db(db: &Database, mut engine: Engine, sink: &mut Sink) -> Result<()> {
    let variations = engine.variations;
    let with_text = engine.query().reads_tags || sink.out.is_some();
    let writing = sink.out.is_some();
    let mut segments = Vec::new();
    let mut first = 1u64;
    for (entry, seg) in db.segments() {
        segments.push((first, seg));
        first += entry.games;
    }
    if engine.query().has_state() {
        for (first, seg) in segments {
            let mut failure = None;
            seg.for_each_game(with_text, |local, rows| {
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
        return Ok(());
    }
    // A few segments at a time, so that buffered output stays bounded.
    let width = rayon::current_num_threads().max(1);
    for chunk in segments.chunks(width) {
        let outs: Vec<Result<SegmentOut>> = chunk
            .par_iter()
            .map(|(first, seg)| {
                let mut e = engine.fork();
                let mut out = SegmentOut::default();
                let mut failure = None;
                seg.for_each_game(with_text, |local, rows| {
                    let game =
                        game_from_rows(first + u64::from(local), &rows, with_text, variations);
                    let m = e.run_game(&game);
                    out.games += 1;
                    out.positions += visited(&game);
                    out.messages.extend(m.messages.iter().cloned());
                    for w in &m.warnings {
                        out.warnings.push((game.number, w.clone()));
                    }
                    if m.selected {
                        out.matched.push(game.number);
                        if writing
                            && failure.is_none()
                            && let Err(err) = write_game(&mut out.pgn, &game, &m, &sink.opts)
                        {
                            failure = Some(err);
                        }
                    }
                    Ok(())
                })?;
                if let Some(e) = failure {
                    return Err(e.into());
                }
                Ok(out)
            })
            .collect();
        for out in outs {
            let out = out?;
            sink.summary.games += out.games;
            sink.summary.positions += out.positions;
            sink.summary.matched.extend(out.matched);
            sink.summary.messages.extend(out.messages);
            sink.summary.warnings.extend(out.warnings);
            if let Some(w) = sink.out.as_mut() {
                w.write_all(&out.pgn)?;
            }
        }
    }
    Ok(())
}
