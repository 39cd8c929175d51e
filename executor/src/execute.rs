//! Running a physical plan: [`execute`] is the one entry point of the `cqldb` binary, the tests
//! and the benchmarks.
//!
//! Over a database, each segment's index scans ([`crate::scan`]) give the candidate games
//! (every game without a scan); the residual filter then runs on those games only, or the
//! candidates are the answer when the plan needs no residual. Over PGN, games are read by one
//! thread and parsed (and, for queries without variables, evaluated) in parallel batches. Both
//! use every core and hand the sink games in input order.

use anyhow::{Context, Result, anyhow};
use cqldb_indexer::Input;
use cqldb_indexer::split::{RawGame, Splitter};
use cqldb_planner::plan::{OpStats, PhysicalPlan, Residual, RunStats, SinkKind};
use cqldb_storage::{Database, Pages};
use rayon::prelude::*;

use crate::sink::{GameOut, Sink, Summary};
use crate::source::{game_from_pgn, game_from_rows};
use crate::{Engine, Game, GameMatch};

/// Where the games come from, opened (see [`crate::query::Source`] for what a request names).
pub enum Opened<'a> {
    /// A PGN input (file, compressed file or stdin), read on the fly.
    Pgn(&'a Input),
    /// A database.
    Db(&'a Database),
}

/// How a plan is run.
#[derive(Copy, Clone, Debug, Default)]
pub struct ExecOptions {
    /// Measure every operator (`EXPLAIN ANALYZE`): also count the games of each scan.
    pub analyze: bool,
    /// With a positions sink, each matched position's ply too (positions listed from the
    /// index then decode the games with variations for theirs).
    pub plies: bool,
    /// What becomes of each segment's mapped pages once the run is done with the segment:
    /// released by a run over a database opened for it alone (one command), kept by a
    /// process answering many queries (see [`Pages`]).
    pub pages: Pages,
}

/// Runs `plan` over `source` into `sink` and returns what the run found.
pub fn execute(plan: PhysicalPlan, source: &Opened<'_>, sink: Sink<'_>) -> Result<Summary> {
    execute_with(plan, source, sink, ExecOptions::default())
}

/// [`execute`] with options.
pub fn execute_with(
    plan: PhysicalPlan,
    source: &Opened<'_>,
    mut sink: Sink<'_>,
    opts: ExecOptions,
) -> Result<Summary> {
    let mut engine = Engine::new((*plan.query).clone(), plan.variations);
    engine.comments = sink.writes();
    match source {
        Opened::Pgn(input) => run_pgn(input, &mut engine, &mut sink)?,
        Opened::Db(db) => {
            // A database file that shrinks under the run reads as zeros (see
            // `cqldb_storage::mapped`): the sink stops at the next game, and the run is an
            // error naming the file, whether it ended or a library panicked on the zeros.
            let before = cqldb_storage::mapped::faults();
            sink.faults_since = Some(before);
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_db(db, &plan, opts, &mut engine, &mut sink)
            }));
            db.check_shrink(before)?;
            sink.summary.stats = match ran {
                Ok(stats) => stats?,
                Err(panic) => std::panic::resume_unwind(panic),
            };
        }
    }
    sink.summary.messages.extend(engine.persistent_report());
    sink.summary.plan = Some(plan);
    sink.finish()
}

/// Evaluates a parsed query over games already in memory, in order, into `sink` exactly as a
/// planned run would (sorting included); no index is involved. The conformance tests use it.
pub fn execute_games<'g>(
    query: &cqldb_planner::Query,
    games: impl IntoIterator<Item = &'g Game>,
    mut sink: Sink<'_>,
) -> Result<Summary> {
    let mut engine = Engine::new(query.clone(), false);
    for g in games {
        let m = engine.run_game(g);
        sink.take(g, &m)?;
    }
    sink.summary.messages.extend(engine.persistent_report());
    sink.finish()
}

/// Games per parallel batch when streaming PGN.
const BATCH: usize = 512;

fn run_pgn(input: &Input, engine: &mut Engine, sink: &mut Sink<'_>) -> Result<()> {
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
                    let game = game_from_pgn(n, raw, variations);
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

/// A segment with its first game's number and its candidate games (`None`: every game).
type Candidates<'d> = (
    u64,
    &'d cqldb_storage::Segment,
    Option<roaring::RoaringBitmap>,
);

/// The index scans of every segment: the candidate games. Segments are scanned in parallel;
/// each operator's measurements are summed over them (its time is then CPU time).
fn candidates<'d>(
    db: &'d Database,
    plan: &PhysicalPlan,
    opts: ExecOptions,
    stats: &mut RunStats,
    listed: &mut Vec<roaring::RoaringBitmap>,
) -> Result<Vec<Candidates<'d>>> {
    let mut segments = Vec::new();
    let mut first = 1u64;
    for (entry, seg) in db.segments() {
        stats.games += entry.games;
        segments.push((first, entry, seg));
        first += entry.games;
    }
    let analyze = opts.analyze;
    let Some(scan) = &plan.candidates else {
        return Ok(segments
            .into_iter()
            .map(|(first, _, seg)| (first, seg, None))
            .collect());
    };
    let scanned: Vec<cqldb_storage::Result<SegmentCandidates>> = segments
        .par_iter()
        .map(|&(first, entry, seg)| {
            let mut s = crate::scan::SegmentScan::new(seg, first)?;
            s.count_games = analyze;
            // A tag index that cannot be read (an older version) only costs the pruning: tag
            // scans then give every game.
            if scan.uses_tags() {
                s.tags = db.tag_reader(entry).ok();
            }
            let mut ops = Vec::new();
            // A plan that lists its positions from the index keeps the scan's positions.
            let (games, positions) = if lists_positions(plan) {
                let (games, positions) = s.eval_positions(scan, &mut ops)?;
                (games, Some(positions))
            } else {
                (s.eval_games(scan, &mut ops)?, None)
            };
            if let Some(top) = ops.first_mut()
                && !analyze
            {
                top.games += games.len();
            }
            // The scan's pages (bitmaps, directory) are not what the residual reads (blocks,
            // text): a residual faults its own in.
            seg.done_reading(opts.pages);
            Ok(SegmentCandidates {
                games,
                positions,
                ops,
                inexact: s.inexact,
            })
        })
        .collect();
    let mut out = Vec::with_capacity(segments.len());
    for ((first, _, seg), found) in segments.into_iter().zip(scanned) {
        let found = found?;
        if stats.scans.len() < found.ops.len() {
            stats.scans.resize(found.ops.len(), OpStats::default());
        }
        for (total, op) in stats.scans.iter_mut().zip(&found.ops) {
            total.positions += op.positions;
            total.games += op.games;
            total.micros += op.micros;
        }
        // No bound where a scan was inexact: every game of the segment is evaluated.
        stats.inexact |= found.inexact;
        listed.extend(found.positions);
        out.push((first, seg, (!found.inexact).then_some(found.games)));
    }
    Ok(out)
}

/// Whether the plan's answer is its scan's positions (an exact plan whose sink lists the
/// matching positions): `listed.rs` reports them without evaluating a game.
fn lists_positions(plan: &PhysicalPlan) -> bool {
    plan.residual == Residual::None && plan.sink == SinkKind::Positions && plan.candidates.is_some()
}

/// What the index scans found in one segment.
struct SegmentCandidates {
    games: roaring::RoaringBitmap,
    /// The scan's positions, for a plan that lists them (see [`lists_positions`]).
    positions: Option<roaring::RoaringBitmap>,
    /// Each operator's measurements, in pre-order.
    ops: Vec<OpStats>,
    /// Whether some scan could not be answered exactly (see `SegmentScan::inexact`).
    inexact: bool,
}

/// The plan over an index: the candidates, then the residual on them (or the candidates as the
/// answer).
fn run_db(
    db: &Database,
    plan: &PhysicalPlan,
    opts: ExecOptions,
    engine: &mut Engine,
    sink: &mut Sink<'_>,
) -> Result<RunStats> {
    let variations = engine.variations;
    let with_text = engine.query().reads_tags || sink.writes();
    let mut stats = RunStats::default();
    let mut listed = Vec::new();
    let segments = candidates(db, plan, opts, &mut stats, &mut listed)?;
    // Games skipped by the index are read (and do not match).
    let read: u64 = segments
        .iter()
        // (A segment's size is read only when needed: its pages may have been released.)
        .map(|(_, seg, c)| {
            c.as_ref()
                .map_or_else(|| u64::from(seg.games()), |g| g.len())
        })
        .sum();
    sink.summary.games += stats.games - read;
    // A segment that could not be bounded exactly needs the residual even in a plan that
    // counts from the index.
    if lists_positions(plan) && !stats.inexact && listed.len() == segments.len() {
        sink.summary.games += read;
        let all: Vec<(u64, &cqldb_storage::Segment, roaring::RoaringBitmap)> = segments
            .iter()
            .zip(listed)
            .map(|(&(first, seg, _), positions)| (first, seg, positions))
            .collect();
        let visit = crate::listed::Visit {
            variations: plan.variations,
            plies: opts.plies,
            pages: opts.pages,
        };
        crate::listed::list_positions(all, visit, sink)?;
        return Ok(stats);
    }
    if plan.residual == Residual::None && !stats.inexact && plan.sink != SinkKind::Positions {
        sink.summary.games += read;
        for (first, _, games) in segments {
            if let Some(games) = games {
                sink.summary.matched.push_segment(first, games);
            }
        }
        return Ok(stats);
    }
    let t = std::time::Instant::now();
    let before = (sink.summary.games, sink.summary.positions);
    if engine.query().has_state() {
        // Variables carry over from game to game: one engine, games in order.
        for (first, seg, games) in segments {
            let mut failure = None;
            seg.for_each_game_in(games.as_ref(), with_text, |local, rows| {
                if failure.is_some() {
                    return Ok(());
                }
                let game = game_from_rows(first + u64::from(local), rows, with_text, variations);
                let m = engine.run_game(&game);
                if let Err(e) = sink.take(&game, &m) {
                    failure = Some(e);
                }
                Ok(())
            })?;
            if let Some(e) = failure {
                return Err(e);
            }
            seg.done_reading(opts.pages);
        }
        residual_stats(&mut stats.residual, sink, before, t);
        return Ok(stats);
    }
    // Work units of a few thousand games on every core (whole segments left one core idle
    // while the last ran), handed to the sink in order; workers run at most a few units ahead
    // of the sink, which bounds buffered output.
    let units = work_units(&segments);
    let threads = rayon::current_num_threads().max(1);
    let pages = opts.pages;
    let opts = sink.writes().then(|| sink.opts.clone());
    let output = sink.output.clone();
    let work = |&(first, seg, ref games, _): &Unit<'_>| {
        let mut e = engine.fork();
        // Sized once: growing it a game at a time was a tenth of a material scan's time.
        let mut outs = Vec::with_capacity(games.len() as usize);
        let mut failure = None;
        seg.for_each_game_in(Some(games), with_text, |local, rows| {
            let game = game_from_rows(first + u64::from(local), rows, with_text, variations);
            let m = e.run_game(&game);
            match GameOut::of(&game, &m, opts.as_ref(), output.as_ref()) {
                Ok(g) => outs.push(g),
                Err(err) => failure = Some(err),
            }
            Ok(())
        })?;
        match failure {
            Some(e) => Err(e),
            None => Ok(outs),
        }
    };
    // Units are consumed in order, so a segment's last unit consumed is the last of its units
    // any worker reads.
    let mut consumed = units.iter();
    crate::ordered::for_each_ordered(&units, threads, threads * 4, work, |outs| {
        outs.into_iter().try_for_each(|g| sink.accept(g))?;
        if let Some(&(_, seg, _, true)) = consumed.next() {
            seg.done_reading(pages);
        }
        Ok(())
    })?;
    residual_stats(&mut stats.residual, sink, before, t);
    Ok(stats)
}

/// Games per work unit of the parallel residual.
const UNIT_GAMES: u32 = 2048;

/// A work unit of the parallel residual: its segment's first game number, the segment, the
/// unit's games and whether it is the segment's last unit.
type Unit<'d> = (
    u64,
    &'d cqldb_storage::Segment,
    roaring::RoaringBitmap,
    bool,
);

/// The candidate games of every segment cut into units of at most [`UNIT_GAMES`] games, in
/// order.
fn work_units<'d>(segments: &[Candidates<'d>]) -> Vec<Unit<'d>> {
    let mut units: Vec<Unit<'d>> = Vec::new();
    for (first, seg, games) in segments {
        // Nothing to read (and its pages may have been released after its scan).
        if games.as_ref().is_some_and(roaring::RoaringBitmap::is_empty) {
            continue;
        }
        let before = units.len();
        let n = seg.games();
        let mut lo = 0u32;
        while lo < n {
            let hi = lo.saturating_add(UNIT_GAMES).min(n);
            let mut unit = roaring::RoaringBitmap::new();
            unit.insert_range(lo..hi);
            if let Some(c) = games {
                unit &= c;
            }
            if !unit.is_empty() {
                units.push((*first, *seg, unit, false));
            }
            lo = hi;
        }
        if let Some(last) = units.get_mut(before..).and_then(<[Unit<'d>]>::last_mut) {
            last.3 = true;
        }
    }
    units
}

/// The residual's share of a run: games and positions evaluated since `before`, time since
/// `t` (the sink's time included: they interleave).
fn residual_stats(st: &mut OpStats, sink: &Sink<'_>, before: (u64, u64), t: std::time::Instant) {
    st.games = sink.summary.games - before.0;
    st.positions = sink.summary.positions - before.1;
    st.micros = t.elapsed().as_micros() as u64;
}
