//! An intersection's leading stored bitmaps read together, a window of 65,536 positions at a
//! time (`cqldb_storage::bitmap_window`): which operands qualify, and the set they make (or
//! only its games).

use std::time::Instant;

use cqldb_planner::plan::{OpStats, Scan};
use cqldb_storage::BitmapKey;
use cqldb_storage::bitmap_window::WindowSet;
use roaring::RoaringBitmap;

use super::SegmentScan;
use crate::found::{Found, WindowGames};
use crate::positions::{DENSE, Positions, WindowedPositions, few_to_roaring};

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
        let mut found = WindowedPositions::new(self.layout.universe_len());
        self.for_each_window(lead, &mut |base, words| found.push(base, words))?;
        let kept = found.len();
        Ok(Found::set(match found.finish() {
            // Sparse once few are left, as after an intersection of dense sets.
            Positions::Dense(d) if self.few_to_look_up(kept) => {
                Positions::Sparse(few_to_roaring(&d))
            }
            p => p,
        }))
    }

    /// The candidate games of `scan` when it is an intersection of stored bitmaps read together
    /// a window at a time, the smallest sparse: straight from the windows (`Qd4` over the main
    /// line). `None` for any other scan, and for a denser intersection, which is faster made
    /// dense and its games found by the branch-free pass over every game (`wtm check`).
    pub(super) fn window_games(
        &mut self,
        scan: &Scan,
        stats: &mut Vec<OpStats>,
    ) -> cqldb_storage::Result<Option<RoaringBitmap>> {
        let Scan::And(xs) = scan else {
            return Ok(None);
        };
        // Only an intersection of stored bitmaps alone qualifies: any other is ordered and
        // read by `and`, and is not ordered here first for nothing.
        for x in xs {
            if self.single_key(x)?.is_none() {
                return Ok(None);
            }
        }
        let t = Instant::now();
        let order = self.and_order(xs);
        let universe = u64::from(self.layout.universe_len());
        let sparse = order.first().is_some_and(|&i| {
            self.estimated_len(&xs[i])
                .is_some_and(|n| n.saturating_mul(DENSE) < universe)
        });
        let lead = if sparse {
            self.window_lead(xs, &order)?
        } else {
            Vec::new()
        };
        if lead.is_empty() || lead.len() < xs.len() {
            return Ok(None);
        }
        let games = self.and_windows_games(&lead)?;
        self.record(stats, 0, &Found::games(games.clone()), t);
        Ok(Some(games))
    }

    /// The games with a position in every bitmap of `lead`, when nothing else is asked of
    /// the intersection: found window by window, without making its set of positions.
    fn and_windows_games(
        &mut self,
        lead: &[(usize, BitmapKey)],
    ) -> cqldb_storage::Result<RoaringBitmap> {
        let mut games = WindowGames::new(&self.layout);
        self.for_each_window(lead, &mut |base, words| games.push(base, words))?;
        Ok(games.finish())
    }

    /// Hands `sink` the positions in every bitmap of `lead`, a window at a time.
    fn for_each_window(
        &self,
        lead: &[(usize, BitmapKey)],
        sink: &mut dyn FnMut(u32, WindowSet<'_>),
    ) -> cqldb_storage::Result<()> {
        let keys: Vec<BitmapKey> = lead.iter().map(|&(_, k)| k).collect();
        self.seg
            .bitmaps_and(&keys, self.layout.universe_len(), sink)
    }
}
