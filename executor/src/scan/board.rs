//! Exact `fen` scans of one segment: where a placement's positions are (its board bitmap, the
//! board index's stretches, or its pieces), and the last candidates decided by their decoded
//! positions.
//!
//! Why the decoding: where a segment keeps no bitmap of a placement, its positions are the intersection of
//! some thirty piece bitmaps (and a material key) within the board index's stretches. After the
//! few most selective operands only a handful of candidates are left, yet each later operand
//! still unpacks the zstd frame of its bitmap that holds them: at 10 M games, an opening
//! placement spent most of its 0.2 s there. Decoding the candidates' games and comparing their
//! placements gives the same positions, exactly (a [`Scan::Board`]'s `otherwise` is, by its
//! definition, the positions with that placement), at the price of a block per game.
//!
//! [`Scan::Board`]: cqldb_planner::plan::Scan::Board

use cqldb_planner::plan::Scan;
use cqldb_storage::{Bitboards, BitmapKey};
use roaring::RoaringBitmap;

use super::SegmentScan;
use crate::positions::Positions;

/// About how many more operands of a placement can be read (one zstd frame of up to 16,384
/// runs per segment each) in the time one game's positions take to decode.
const OPERANDS_PER_GAME: u64 = 4;

impl SegmentScan<'_> {
    /// Where the positions of a placement are to be found in this segment.
    pub(super) fn board(&self, placement: &[u64; 12]) -> cqldb_storage::Result<Board> {
        let key = BitmapKey::board(&Bitboards::from_pieces(placement));
        if self.seg.has_bitmap(key)? {
            return Ok(Board::Bitmap(key));
        }
        Ok(match self.seg.board_candidates(key)? {
            Some(stretches) => Board::Within(stretches),
            None => Board::Pieces,
        })
    }

    /// The games of the `candidates` left, if deciding them by their decoded positions costs
    /// less than reading the operands `rest` of `xs` still to intersect. Only operands whose bitmaps are
    /// costly to read count (packed and not kept unpacked in the cache: on a database whose
    /// bitmaps the cache holds, reading them is cheaper than decoding a single game).
    ///
    /// `costly` remembers, per operand, what was found (`and` asks again after each operand).
    pub(super) fn games_to_decode(
        &mut self,
        candidates: &RoaringBitmap,
        xs: &[Scan],
        rest: &[usize],
        costly: &mut Vec<Option<bool>>,
    ) -> cqldb_storage::Result<Option<RoaringBitmap>> {
        // A game holds at least one candidate, and at most a few share one: far more
        // candidates than the budget could allow are not looked at further.
        let most = rest.len() as u64 / OPERANDS_PER_GAME;
        if candidates.len() > most.saturating_mul(8) {
            return Ok(None);
        }
        costly.resize(xs.len(), None);
        let mut left = 0u64;
        for &i in rest {
            let known = match costly[i] {
                Some(c) => c,
                None => {
                    let c = match self.single_key(&xs[i])? {
                        Some(key) => !self.seg.bitmap_is_cheap(key)?,
                        None => true,
                    };
                    costly[i] = Some(c);
                    c
                }
            };
            left += u64::from(known);
        }
        let budget = left / OPERANDS_PER_GAME;
        if budget == 0 || candidates.len() > budget.saturating_mul(8) {
            return Ok(None);
        }
        let games = self.layout.games_of(&Positions::Sparse(candidates.clone()));
        Ok((games.len() <= budget).then_some(games))
    }

    /// The members of `candidates` (all in `games`) whose piece placement is `placement` (white
    /// P N B R Q K, then black), read from their games' decoded positions.
    pub(super) fn with_placement(
        &self,
        candidates: &RoaringBitmap,
        games: &RoaringBitmap,
        placement: &[u64; 12],
    ) -> cqldb_storage::Result<RoaringBitmap> {
        let want = Bitboards::from_pieces(placement);
        let starts = self.layout.starts();
        let mut out = RoaringBitmap::new();
        self.seg.for_each_game_positions_in(games, |g, positions| {
            let Some(&first) = starts.get(g as usize) else {
                return Ok(());
            };
            for (i, rec) in positions.iter().enumerate() {
                let id = first.saturating_add(i as u32);
                if rec.board == want && candidates.contains(id) {
                    out.insert(id);
                }
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// Where a placement's positions are in a segment.
pub(super) enum Board {
    /// In its own board bitmap (the placement is repeated in the segment).
    Bitmap(BitmapKey),
    /// Within these positions, the stretches the board index lists for it: its pieces'
    /// bitmaps decide, read only there.
    Within(RoaringBitmap),
    /// Wherever its pieces' bitmaps say (a segment written before the board index).
    Pieces,
}
