//! The matching positions of a plan the index answers exactly, listed from the index: each
//! segment's scan is evaluated as a position set (the planner's bounds are position sets, so
//! an exact plan's set is the matching positions themselves), restricted to the main line when
//! variations are not visited, and no game is decoded except, when plies are asked for, the
//! games with variations among the matches (in a game without variations a position's ply is
//! its id). SQL's `cql()` and pushed filters run this way.

use anyhow::Result;
use cqldb_storage::{BitmapKey, Pages, PositionFlags, Segment};
use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::sink::Sink;

/// One segment's matches: (segment-local game, game-local id, ply), in position order.
type Listed = Vec<(u32, u32, u32)>;

/// What a listing visits and reports.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Visit {
    /// Positions in variations too (else the main line only, as the engine visits it: a
    /// filter about the whole game, such as a tag, holds at every visited position).
    pub variations: bool,
    /// Decode the games with variations among the matches for their positions' plies
    /// (otherwise each row's ply is its id).
    pub plies: bool,
    /// What becomes of each segment's mapped pages once it is listed.
    pub pages: Pages,
}

/// Lists the positions each segment's scan found (`(first game number, segment, positions)`)
/// into `sink`, game by game in order.
pub(crate) fn list_positions(
    segments: Vec<(u64, &Segment, RoaringBitmap)>,
    visit: Visit,
    sink: &mut Sink<'_>,
) -> Result<()> {
    let firsts: Vec<u64> = segments.iter().map(|s| s.0).collect();
    let found: Vec<cqldb_storage::Result<Listed>> = segments
        .into_par_iter()
        .map(|(_, seg, positions)| {
            let listed = segment_positions(seg, positions, visit);
            seg.done_reading(visit.pages);
            listed
        })
        .collect();
    for (first, listed) in firsts.into_iter().zip(found) {
        let listed = listed?;
        let mut at = 0;
        while at < listed.len() {
            let game = listed[at].0;
            let end = at + listed[at..].partition_point(|r| r.0 == game);
            let number = first + u64::from(game);
            sink.listed(
                number,
                listed[at..end].iter().map(|&(_, id, ply)| (id, ply)),
            )?;
            at = end;
        }
    }
    Ok(())
}

fn segment_positions(
    seg: &Segment,
    mut positions: RoaringBitmap,
    visit: Visit,
) -> cqldb_storage::Result<Listed> {
    if !visit.variations {
        positions &= seg.bitmap(BitmapKey::flag(PositionFlags::MAINLINE))?;
    }
    let starts = seg.game_starts()?;
    let games = starts.len().saturating_sub(1);
    let mut out: Listed = Vec::with_capacity(positions.len() as usize);
    let mut g = 0usize;
    for p in &positions {
        while g < games && starts[g + 1] <= p {
            g += 1;
        }
        if g >= games {
            break;
        }
        let id = p - starts[g];
        out.push((g as u32, id, id));
    }
    // Games with a position off the main line: their positions' plies are not their ids.
    let variation = seg.bitmap(BitmapKey::flag(PositionFlags::VARIATION))?;
    if !visit.plies || variation.is_empty() {
        return Ok(out);
    }
    let mut branching = RoaringBitmap::new();
    let mut last = None;
    for &(game, _, _) in &out {
        if last != Some(game) {
            last = Some(game);
            let i = game as usize;
            if variation.range_cardinality(starts[i]..starts[i + 1]) > 0 {
                branching.insert(game);
            }
        }
    }
    if branching.is_empty() {
        return Ok(out);
    }
    let mut plies: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    seg.for_each_game_positions_in(&branching, |local, positions| {
        plies.insert(local, positions.iter().map(|p| p.ply).collect());
        Ok(())
    })?;
    for row in &mut out {
        if let Some(ply) = plies.get(&row.0).and_then(|p| p.get(row.1 as usize)) {
            row.2 = *ply;
        }
    }
    Ok(out)
}
