//! An intersection's leading stored bitmaps read together, a window of 65,536 positions at a
//! time (`cqldb_storage::bitmap_window`): which operands qualify, and the set they make.

use cqldb_planner::plan::Scan;
use cqldb_storage::BitmapKey;

use super::SegmentScan;
use roaring::RoaringBitmap;

use crate::found::{Found, WindowGames};
use crate::positions::{Positions, WindowedPositions, few_to_roaring};

impl SegmentScan<'_> {
    /// The operands (indices into `xs`, in `order`, with their keys) that an intersection
    /// starting from every position reads together, a window at a time
    /// ([`cqldb_storage::Segment::bitmaps_and`]): the stored bitmaps it starts with, if there
    /// are at least two and the first is too large to be looked up member by member (a narrow
    /// first one is looked up in the others instead, reading only the parts of them it falls
    /// in). Windows the first leaves empty are skipped, so a first operand bunched in a few of
    /// them costs only those. Not under `EXPLAIN ANALYZE`, which measures each operand's own
    /// result.
    pub(super) fn window_lead(
        &mut self,
        xs: &[Scan],
        order: &[usize],
    ) -> cqldb_storage::Result<Vec<(usize, BitmapKey)>> {
        let mut lead = Vec::new();
        if self.count_games {
            return Ok(lead);
        }
        for &i in order {
            match self.single_key(&xs[i])? {
                Some(key) => lead.push((i, key)),
                None => break,
            }
        }
        // As after a dense intersection: a set this large is not looked up member by member.
        let broad = lead
            .first()
            .is_some_and(|&(_, key)| !self.few_to_look_up(self.seg.bitmap_len(key)));
        if lead.len() < 2 || !broad {
            lead.clear();
        }
        Ok(lead)
    }

    /// The positions in every bitmap of `lead` ([`Self::window_lead`]'s operands).
    pub(super) fn and_windows(
        &mut self,
        lead: &[(usize, BitmapKey)],
    ) -> cqldb_storage::Result<Found> {
        let keys: Vec<BitmapKey> = lead.iter().map(|&(_, k)| k).collect();
        let universe = self.layout.universe_len();
        let mut found = WindowedPositions::new(universe);
        self.seg
            .bitmaps_and(&keys, universe, &mut |base, words| found.push(base, words))?;
        let kept = found.len();
        Ok(Found::set(match found.finish() {
            // Sparse once few are left, as after an intersection of dense sets.
            Positions::Dense(d) if self.few_to_look_up(kept) => {
                Positions::Sparse(few_to_roaring(&d))
            }
            p => p,
        }))
    }

    /// The games with a position in every bitmap of `lead`, when nothing else is asked of
    /// the intersection: found window by window, without making its set of positions.
    pub(super) fn and_windows_games(
        &mut self,
        lead: &[(usize, BitmapKey)],
    ) -> cqldb_storage::Result<RoaringBitmap> {
        let keys: Vec<BitmapKey> = lead.iter().map(|&(_, k)| k).collect();
        let universe = self.layout.universe_len();
        let mut games = WindowGames::new(&self.layout);
        self.seg
            .bitmaps_and(&keys, universe, &mut |base, words| games.push(base, words))?;
        Ok(games.finish())
    }
}
