//! Merging segments: adjacent segments written again as one, without reading any PGN.
//!
//! Every append adds segments, and a query pays a little for each one it opens; merging
//! keeps their number logarithmic in the database's size ([`policy`]). A merge reads the
//! games of the segments it replaces from the segments themselves (positions decoded whole,
//! text, source, attributes, recorded problems; tags read back from each game's text as
//! `repair` does) and encodes them again through the very encoder an append uses, so a merged
//! segment holds what one append of those games would have written: the same bitmaps, board
//! index and tag index. The games keep their global numbers. The merged segment replaces the
//! old ones in one catalog commit ([`cqldb_storage::DbWriter::open_replacing`]): readers see
//! the old segments or the new one, never both or neither, and a merge killed at any point
//! leaves the old state or the new one.

pub mod policy;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

use cqldb_storage::catalog::read_catalog;
use cqldb_storage::db::open_segment;
use cqldb_storage::{
    BatchEncoder, CommitSummary, DbWriter, EncodedBatch, IssueRecord, NewGame, Result, Segment,
    SegmentEntry, StorageError, TextDictionary, WriterOptions,
};
use crossbeam_channel::bounded;

pub use policy::MergePolicy;

use crate::pipeline::Progress;
use crate::tags::scan_tags;

/// Games per batch handed to an encoder thread (as an append's batches).
const BATCH_GAMES: usize = 16;

/// What merging did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Merges made (each replaced several segments by one).
    pub merges: usize,
    /// Segments before and after.
    pub segments_before: usize,
    pub segments_after: usize,
    /// Games written again.
    pub games: u64,
}

/// The committed segments of `dir`, in game order.
fn segments_of(dir: &Path) -> Result<Vec<SegmentEntry>> {
    let mut entries = read_catalog(dir)?;
    entries.sort_by_key(|e| e.first_game);
    Ok(entries)
}

/// How many merges `policy` asks for now, and how many games they would write (a merge's
/// result may be merged again: counted once here).
pub fn planned(dir: &Path, policy: MergePolicy) -> Result<(usize, u64)> {
    let mut entries = segments_of(dir)?;
    let (mut merges, mut games) = (0, 0);
    while let Some(ids) = policy.next_merge(&entries) {
        let Some(at) = entries.iter().position(|e| e.id == ids[0]) else {
            break;
        };
        let run = &entries[at..at + ids.len()];
        let merged = SegmentEntry {
            id: u64::MAX - merges as u64,
            first_game: run[0].first_game,
            first_position: run[0].first_position,
            games: run.iter().map(|e| e.games).sum(),
            positions: run.iter().map(|e| e.positions).sum(),
            ..SegmentEntry::default()
        };
        games += merged.games;
        merges += 1;
        entries.splice(at..at + ids.len(), [merged]);
    }
    Ok((merges, games))
}

/// Merges the segments of the database in `dir` until `policy` wants no more merges; `threads`
/// encoder threads; `progress.games` counts the games written.
pub fn merge(
    dir: &Path,
    policy: MergePolicy,
    threads: usize,
    progress: &Progress,
) -> Result<MergeReport> {
    let mut report = MergeReport {
        segments_before: segments_of(dir)?.len(),
        ..MergeReport::default()
    };
    // A writer's opening removes what an earlier writer killed midway left (its unfinished
    // segment, or the replaced segments of a merge it committed), even when nothing is to
    // be merged now.
    drop(DbWriter::open(dir, WriterOptions::default())?);
    while let Some(ids) = policy.next_merge(&segments_of(dir)?) {
        let summary = merge_segments(dir, &ids, threads, progress)?;
        report.merges += 1;
        report.games += summary.games;
    }
    report.segments_after = segments_of(dir)?.len();
    Ok(report)
}

/// Replaces the adjacent segments `ids` (in game order) by one holding their games.
pub fn merge_segments(
    dir: &Path,
    ids: &[u64],
    threads: usize,
    progress: &Progress,
) -> Result<CommitSummary> {
    // One segment, whatever its size: the policy bounds it.
    let options = WriterOptions {
        segment_positions: u64::MAX,
        segment_bytes: u64::MAX,
    };
    let mut writer = DbWriter::open_replacing(dir, options, ids)?;
    let entries = writer.replacing().to_vec();
    let segments = entries
        .iter()
        .map(|e| open_segment(dir, e))
        .collect::<Result<Vec<_>>>()?;
    let file_maps: Vec<Vec<u32>> = segments
        .iter()
        .map(|s| {
            s.source_files()
                .into_iter()
                .map(|f| writer.add_file(f))
                .collect()
        })
        .collect();
    // The merged text is compressed with the first replaced segment's dictionary (a segment
    // keeps one; plain text where the first had none).
    let dictionary = match segments.first() {
        Some(s) => s
            .text_dictionary()?
            .and_then(|d| TextDictionary::from_bytes(d.bytes()))
            .map(std::sync::Arc::new),
        None => None,
    };
    let dictionary = &dictionary;
    let threads = threads.max(1);
    let (raw_tx, raw_rx) = bounded::<(u64, Vec<NewGame>)>(threads * 2);
    let (done_tx, done_rx) = bounded::<(u64, EncodedBatch)>(threads * 2);
    std::thread::scope(|scope| -> Result<()> {
        let file_maps = &file_maps;
        let reader = scope.spawn(move || -> Result<()> {
            let mut seq = 0u64;
            let mut batch = Vec::with_capacity(BATCH_GAMES);
            // Each segment is unmapped once read: its pages leave this process's memory.
            for (segment, map) in segments.into_iter().zip(file_maps) {
                let segment = &segment;
                let mut issues = issues_by_game(segment)?;
                segment.for_each_game_whole(|local, rows| {
                    batch.push(game_again(segment, map, &mut issues, local, rows)?);
                    if batch.len() == BATCH_GAMES {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_GAMES));
                        if raw_tx.send((seq, full)).is_err() {
                            return Err(StorageError::Catalog("merge stopped".into()));
                        }
                        seq += 1;
                    }
                    Ok(())
                })?;
            }
            if !batch.is_empty() {
                let _ = raw_tx.send((seq, batch));
            }
            Ok(())
        });
        for _ in 0..threads {
            let raw_rx = raw_rx.clone();
            let done_tx = done_tx.clone();
            scope.spawn(move || {
                let mut encoder = BatchEncoder::with_text_dictionary(dictionary.clone());
                for (seq, games) in raw_rx {
                    for g in games {
                        encoder.push(g);
                    }
                    if done_tx.send((seq, encoder.finish())).is_err() {
                        return;
                    }
                }
            });
        }
        drop(raw_rx);
        drop(done_tx);
        let mut pending = BTreeMap::new();
        let mut next = 0u64;
        let mut failed = None;
        for (seq, batch) in done_rx.iter() {
            pending.insert(seq, batch);
            while let Some(batch) = pending.remove(&next) {
                next += 1;
                let games = batch.games.len() as u64;
                if let Err(e) = writer.push_batch(batch) {
                    failed = Some(e);
                    break;
                }
                progress.games.fetch_add(games, Ordering::Relaxed);
            }
            if failed.is_some() {
                break;
            }
        }
        drop(done_rx);
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(StorageError::Catalog("merge reader panicked".into())));
        match failed {
            Some(e) => Err(e),
            None => read,
        }
    })?;
    writer.commit()
}

/// A segment's recorded problems by segment-local game.
fn issues_by_game(segment: &Segment) -> Result<BTreeMap<u32, Vec<IssueRecord>>> {
    let mut out: BTreeMap<u32, Vec<IssueRecord>> = BTreeMap::new();
    for (issue, _) in segment.issues()? {
        out.entry(issue.game).or_default().push(issue);
    }
    Ok(out)
}

/// One stored game as an append hands it to the encoder.
fn game_again(
    segment: &Segment,
    file_map: &[u32],
    issues: &mut BTreeMap<u32, Vec<IssueRecord>>,
    local: u32,
    rows: cqldb_storage::GameRows<'_>,
) -> Result<NewGame> {
    let info = segment.game_info(local)?;
    // `game_info` read the same column: the game has a source.
    let file = segment.game_source(local)?.map_or(0, |s| s.file);
    let first = rows.first;
    Ok(NewGame {
        file: file_map.get(file as usize).copied().unwrap_or(0),
        line: info.line,
        byte_offset: info.byte_offset,
        text: rows.text.to_vec(),
        tags: scan_tags(rows.text),
        meta: Some(info.meta),
        positions: rows.positions,
        comments: rows
            .comments
            .iter()
            .map(|c| cqldb_storage::CommentRef {
                position: c.position - first,
                ..*c
            })
            .collect(),
        nags: rows
            .nags
            .iter()
            .map(|n| cqldb_storage::NagRef {
                position: n.position - first,
                nag: n.nag,
            })
            .collect(),
        issues: issues.remove(&local).unwrap_or_default(),
        detached_variations: info.detached_variations,
    })
}
