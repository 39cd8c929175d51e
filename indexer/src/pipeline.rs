//! The ingest pipeline: one thread reads and splits, worker threads parse games in parallel, and
//! the calling thread appends the results to the database in input order.
//!
//! Channels are bounded, so at most a few batches of games are in memory at once whatever the
//! input size.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use cqldb_storage::text_dictionary::TRAIN_BYTES;
use cqldb_storage::{BatchEncoder, DbWriter, EncodedBatch, NewGame, TEXT_GAMES, TextDictionary};
use crossbeam_channel::{Receiver, Sender, bounded};

use crate::flatten::{index_game, spare_positions};
use crate::source::{DamagedCompression, Input};
use crate::split::{RawGame, Splitter};

/// Counters the caller can watch while an ingest runs (e.g. to draw a progress bar).
#[derive(Debug, Default)]
pub struct Progress {
    /// Input bytes consumed (compressed bytes for compressed files).
    pub bytes: Arc<AtomicU64>,
    /// Games stored.
    pub games: AtomicU64,
    /// Positions stored.
    pub positions: AtomicU64,
    /// Games with at least one problem.
    pub games_with_issues: AtomicU64,
}

/// Tuning of the pipeline.
#[derive(Copy, Clone, Debug)]
pub struct IngestOptions {
    /// Cores the build runs on, and its parser threads (default: available cores). Fewer
    /// than the machine has hold every thread of the build (reader, parsers, writer, segment
    /// finisher) to that many cores ([`crate::cores::CoreBudget`]).
    pub threads: usize,
    /// Games per batch handed to a parser thread: the unit of parallel encoding and of
    /// finding bitmap runs. A batch becomes position blocks of [`cqldb_storage::BLOCK_GAMES`]
    /// and text chunks of [`cqldb_storage::TEXT_GAMES`] games, the units a reader
    /// decompresses to read one game (BENCHMARKS.md). 64 rather than 16: each batch is two
    /// hand-overs between threads, and with 16 the parsers waited for them a tenth of the
    /// time (6.3–6.9 s → 6.0–6.7 s for the large set, the same bytes). Small segments take
    /// smaller batches (see [`batch_games`]).
    pub batch_games: usize,
}

impl Default for IngestOptions {
    fn default() -> Self {
        Self {
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            batch_games: 64,
        }
    }
}

/// An input that could not be read to its end.
#[derive(Clone, Debug)]
pub struct InputFailure {
    /// The input's name.
    pub input: String,
    /// What went wrong.
    pub message: String,
    /// Whether its compressed data is damaged: then the games read from it may hold the damage
    /// (gzip finds it only at a member's end), and a caller should commit none of them; else
    /// the games before the failure are sound.
    pub damaged_compression: bool,
}

/// Outcome of ingesting inputs.
#[derive(Clone, Debug, Default)]
pub struct IngestReport {
    /// Games stored.
    pub games: u64,
    /// Positions stored.
    pub positions: u64,
    /// Games with at least one problem.
    pub games_with_issues: u64,
    /// Inputs that failed part-way.
    pub failures: Vec<InputFailure>,
}

/// Reads every input into `writer` (which the caller commits). Storage errors abort; read errors
/// of an input are reported and the next input is read.
pub fn ingest(
    inputs: &[Input],
    writer: &mut DbWriter,
    options: IngestOptions,
    progress: &Progress,
) -> cqldb_storage::Result<IngestReport> {
    let mut report = IngestReport::default();
    // Threads started from here take its cores: the budget holds the whole build.
    let _cores = crate::cores::CoreBudget::hold(options.threads);
    for input in inputs {
        let file = writer.add_file(&input.name());
        let first_game = writer.next_game();
        match ingest_one(input, file, writer, options, progress, &mut report)? {
            Err((message, damaged_compression)) => report.failures.push(InputFailure {
                input: input.name(),
                message,
                damaged_compression,
            }),
            // A file read whole is recorded, so that indexing it again is noticed.
            Ok(()) => {
                if let Input::Path(p) = input
                    && let Ok(fingerprint) = cqldb_storage::fingerprint(p)
                {
                    writer.record_source(cqldb_storage::SourceRecord {
                        fingerprint,
                        name: input.name(),
                        first_game,
                        games: writer.next_game() - first_game,
                    });
                }
            }
        }
    }
    Ok(report)
}

type Batch = (u64, Vec<RawGame>);

/// Games per batch for segments closed after `segment_positions`: `wanted`, but no more than
/// a sixteenth of a segment of long games (250 positions), and no fewer than 16 unless fewer
/// are wanted. A segment closes between batches, so small segments (`--segment-positions`)
/// keep closing after about as many games as with 16-game batches.
pub fn batch_games(wanted: usize, segment_positions: u64) -> usize {
    let per_segment = usize::try_from(segment_positions / (16 * 250)).unwrap_or(usize::MAX);
    wanted.min(per_segment.max(16)).max(1)
}

/// A text dictionary trained on games' texts, in chunks as they will be compressed (at most
/// [`TRAIN_BYTES`] of them); `None` for too little text.
fn train_dictionary(texts: &[Vec<u8>]) -> Option<TextDictionary> {
    let mut samples = Vec::new();
    let mut bytes = 0;
    for chunk in texts.chunks(TEXT_GAMES) {
        if bytes >= TRAIN_BYTES {
            break;
        }
        let sample: Vec<u8> = chunk.concat();
        bytes += sample.len();
        samples.push(sample);
    }
    TextDictionary::train(&samples)
}

/// A parser thread: reads each batch's games into trees and encodes them, sending the encoded
/// batches on `done`.
///
/// Batches that come before the text dictionary is decided are read into trees at once and
/// encoded once it is: training takes the reader 20-80 ms per input, during which the parsers
/// used to wait with nothing to do. `ready` disconnects when the dictionary is decided (or
/// the reader is gone), so a parser holding such batches need not wait for another batch to
/// notice. After that a game is encoded as soon as it is read, while its rows are in cache.
fn parse_batches(
    file: u32,
    dictionary: &OnceLock<Option<Arc<TextDictionary>>>,
    raw: &Receiver<Batch>,
    ready: &Receiver<()>,
    done: &Sender<(u64, EncodedBatch)>,
) {
    let mut encoder: Option<BatchEncoder> = None;
    let mut waiting: Vec<(u64, Vec<NewGame>)> = Vec::new();
    // Made once the dictionary is decided (none if the reader ended without deciding one,
    // which only a panic does).
    let make = || BatchEncoder::with_text_dictionary(dictionary.get().cloned().flatten());
    // Encodes the waiting batches; false once the writer is gone.
    let flush = |encoder: &mut BatchEncoder, waiting: &mut Vec<(u64, Vec<NewGame>)>| {
        waiting.drain(..).all(|(seq, games)| {
            games
                .into_iter()
                .for_each(|g| spare_positions(encoder.push(g)));
            done.send((seq, encoder.finish())).is_ok()
        })
    };
    loop {
        // Decided while this thread was busy: the waiting batches go now, not with the next.
        if !waiting.is_empty()
            && dictionary.get().is_some()
            && !flush(encoder.get_or_insert_with(make), &mut waiting)
        {
            return;
        }
        let next = if waiting.is_empty() {
            raw.recv().ok()
        } else {
            crossbeam_channel::select! {
                recv(raw) -> batch => batch.ok(),
                recv(ready) -> _ => {
                    if !flush(encoder.get_or_insert_with(make), &mut waiting) {
                        return;
                    }
                    continue;
                }
            }
        };
        let Some((seq, batch)) = next else { break };
        if dictionary.get().is_none() {
            let games = batch.into_iter().map(|raw| index_game(raw, file)).collect();
            waiting.push((seq, games));
            continue;
        }
        let encoder = encoder.get_or_insert_with(make);
        if !flush(encoder, &mut waiting) {
            return;
        }
        for raw in batch {
            spare_positions(encoder.push(index_game(raw, file)));
        }
        if done.send((seq, encoder.finish())).is_err() {
            return;
        }
    }
    if !waiting.is_empty() {
        flush(encoder.get_or_insert_with(make), &mut waiting);
    }
}

fn ingest_one(
    input: &Input,
    file: u32,
    writer: &mut DbWriter,
    options: IngestOptions,
    progress: &Progress,
    report: &mut IngestReport,
) -> cqldb_storage::Result<Result<(), (String, bool)>> {
    let threads = options.threads.max(1);
    let options = IngestOptions {
        batch_games: batch_games(options.batch_games, writer.segment_positions()),
        ..options
    };
    // The text dictionary, decided before any game is encoded: one trained on this input's
    // first megabyte of text if it has that much (inputs differ: a dictionary trained on
    // another file's games did half as well), else the writer's (an earlier input's: a run of
    // small files then shares one and fills segments together), else one trained on what
    // there is.
    let known = writer.text_dictionary();
    let dictionary: OnceLock<Option<Arc<TextDictionary>>> = OnceLock::new();
    let dictionary = &dictionary;
    let (raw_tx, raw_rx) = bounded::<Batch>(threads * 2);
    let (ready_tx, ready_rx) = bounded::<()>(0);
    let (done_tx, done_rx) = bounded::<(u64, EncodedBatch)>(threads * 2);
    std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("cqldb-read".into())
            .spawn_scoped(scope, move || -> Result<(), (String, bool)> {
                let failed = |e: std::io::Error| (e.to_string(), DamagedCompression::is(&e));
                let source = input.open(progress.bytes.clone()).map_err(failed)?;
                let mut splitter = Splitter::new(source);
                let mut seq = 0u64;
                let mut batch = Vec::with_capacity(options.batch_games);
                let mut bytes = 0usize;
                // The texts read while the dictionary is undecided (what it is trained on), and
                // the signal parsers waiting for it wake on: dropped once it is decided, or
                // with this thread if it ends any other way.
                let mut training: Vec<Vec<u8>> = Vec::new();
                let mut training_bytes = 0usize;
                let mut ready = Some(ready_tx);
                loop {
                    let (end, failure) = match splitter.next_game() {
                        Ok(Some(game)) => {
                            bytes += game.text.len();
                            if ready.is_some() {
                                training.push(game.text.clone());
                            }
                            batch.push(game);
                            (false, None)
                        }
                        Ok(None) => (true, None),
                        Err(e) => (true, Some(failed(e))),
                    };
                    if end || batch.len() >= options.batch_games || bytes >= 4 << 20 {
                        training_bytes += bytes;
                        bytes = 0;
                        // Sent before the dictionary is trained: the parsers read its games
                        // into trees meanwhile, and only encoding them waits.
                        if !batch.is_empty() {
                            if raw_tx.send((seq, std::mem::take(&mut batch))).is_err() {
                                return Ok(());
                            }
                            seq += 1;
                        }
                        if ready.is_some() && (training_bytes >= TRAIN_BYTES || end) {
                            let chosen = match &known {
                                Some(k) if training_bytes < TRAIN_BYTES => Some(Arc::clone(k)),
                                _ => train_dictionary(&training)
                                    .map(Arc::new)
                                    .or_else(|| known.clone()),
                            };
                            let _ = dictionary.set(chosen);
                            training = Vec::new();
                            ready = None;
                        }
                    }
                    if end {
                        return failure.map_or(Ok(()), Err);
                    }
                }
            });
        for _ in 0..threads {
            let raw_rx = raw_rx.clone();
            let ready_rx = ready_rx.clone();
            let done_tx = done_tx.clone();
            let _ = std::thread::Builder::new()
                .name("cqldb-parse".into())
                .spawn_scoped(scope, move || {
                    parse_batches(file, dictionary, &raw_rx, &ready_rx, &done_tx);
                });
        }
        drop(raw_rx);
        drop(ready_rx);
        drop(done_tx);
        // Reassemble in input order.
        let mut pending = std::collections::BTreeMap::new();
        let mut next_seq = 0u64;
        let mut storage_error = None;
        for (seq, batch) in done_rx.iter() {
            pending.insert(seq, batch);
            while let Some(batch) = pending.remove(&next_seq) {
                next_seq += 1;
                let games = batch.games.len() as u64;
                let positions = u64::from(batch.positions);
                let with_issues = batch.games.iter().filter(|g| g.issues > 0).count() as u64;
                if let Err(e) = writer.push_batch(batch) {
                    storage_error = Some(e);
                    break;
                }
                report.games += games;
                report.positions += positions;
                report.games_with_issues += with_issues;
                progress.games.fetch_add(games, Ordering::Relaxed);
                progress.positions.fetch_add(positions, Ordering::Relaxed);
                progress
                    .games_with_issues
                    .fetch_add(with_issues, Ordering::Relaxed);
            }
            if storage_error.is_some() {
                break;
            }
        }
        drop(done_rx);
        let read_result = match reader {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|_| Err(("reader thread panicked".to_owned(), false))),
            Err(e) => Err((format!("cannot start the reader thread: {e}"), false)),
        };
        match storage_error {
            Some(e) => Err(e),
            None => Ok(read_result),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::batch_games;

    #[test]
    fn small_segments_keep_small_batches() {
        assert_eq!(batch_games(64, 2_000_000), 64);
        assert_eq!(batch_games(64, 60), 16);
        assert_eq!(batch_games(64, 200_000), 50);
        assert_eq!(batch_games(8, 60), 8, "fewer wanted");
        assert_eq!(batch_games(0, 60), 1);
    }
}
