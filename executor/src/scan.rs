//! Index scans over a segment: a plan's [`Scan`] evaluated on the segment's bitmaps into the
//! set of candidate positions, and from it the candidate games.
//!
//! Sets are roaring bitmaps over segment-local position ids (games over segment-local game
//! numbers); `not` complements within the segment's positions, `GamesWith` widens a set to the
//! whole games it touches. Each operator's output size, games and time are recorded for
//! `EXPLAIN ANALYZE`, in the plan's pre-order.

use std::time::Instant;

use cqldb_planner::plan::{MaterialTest, MoveTraits, OpStats, PositionFlag, Scan};
use cqldb_storage::move_features::{MoveFeature, MoveSide};
use cqldb_storage::tags::TagReader;
use cqldb_storage::{BitmapKey, GameResult, MaterialSignature, PositionFlags, Segment};
use roaring::{MultiOps, RoaringBitmap};
use shakmaty::{Color, Role, Square};

/// A segment ready for scans.
pub struct SegmentScan<'a> {
    seg: &'a Segment,
    /// Global number of the segment's first game (from 1).
    first_game: u64,
    /// Game `i` has positions `starts[i]..starts[i + 1]`.
    starts: Vec<u32>,
    positions: u32,
    /// The segment's material signatures (read on first use).
    materials: Option<Vec<MaterialSignature>>,
    /// Whether to count the games of every operator's output (for `EXPLAIN ANALYZE`).
    pub count_games: bool,
    /// The segment's tag index, for tag scans (without it they give every game).
    pub tags: Option<&'a TagReader>,
    /// Set when some scan could not be answered exactly here (a tag index of an older
    /// version, a search the index cannot make): the segment's result is then no bound at all,
    /// and its games must all be evaluated.
    pub inexact: bool,
}

impl<'a> SegmentScan<'a> {
    /// Prepares `seg`, whose first game has the global number `first_game`.
    pub fn new(seg: &'a Segment, first_game: u64) -> Self {
        let starts = seg.game_starts();
        let positions = starts.last().copied().unwrap_or(0);
        Self {
            seg,
            first_game,
            starts,
            positions,
            materials: None,
            count_games: false,
            tags: None,
            inexact: false,
        }
    }

    /// Where each game starts (see [`Segment::game_starts`]), kept by the scan.
    pub fn into_game_starts(self) -> Vec<u32> {
        self.starts
    }

    /// The games (segment-local numbers) with a position in `positions`: each hit names its game,
    /// and the walk then jumps to the next game's first position, so the cost is one step per
    /// game found rather than one per position.
    pub fn games_of(&self, positions: &RoaringBitmap) -> RoaringBitmap {
        games_of(&self.starts, positions)
    }

    /// Every position of the games in `games`.
    pub fn positions_of(&self, games: &RoaringBitmap) -> RoaringBitmap {
        let mut out = RoaringBitmap::new();
        for g in games {
            let g = g as usize;
            if let (Some(&a), Some(&b)) = (self.starts.get(g), self.starts.get(g + 1)) {
                out.insert_range(a..b);
            }
        }
        out
    }

    /// The candidate games of `scan` (segment-local numbers); `stats` receives each
    /// operator's measurements in pre-order (it is extended as needed and added to, so one
    /// vector sums a run over every segment).
    pub fn eval_games(
        &mut self,
        scan: &Scan,
        stats: &mut Vec<OpStats>,
    ) -> cqldb_storage::Result<RoaringBitmap> {
        let mut index = 0;
        let found = self.eval_at(scan, stats, &mut index)?;
        Ok(self.games_in(&found))
    }

    /// The positions `scan` selects.
    pub fn eval(
        &mut self,
        scan: &Scan,
        stats: &mut Vec<OpStats>,
    ) -> cqldb_storage::Result<RoaringBitmap> {
        let mut index = 0;
        let found = self.eval_at(scan, stats, &mut index)?;
        Ok(self.positions_in(found))
    }

    fn eval_at(
        &mut self,
        scan: &Scan,
        stats: &mut Vec<OpStats>,
        index: &mut usize,
    ) -> cqldb_storage::Result<Found> {
        let me = *index;
        *index += 1;
        let t = Instant::now();
        let found = match scan {
            Scan::All => Found::ALL,
            Scan::Empty => Found::positions(RoaringBitmap::new()),
            Scan::Flag(f) => Found::positions(self.seg.bitmap(BitmapKey::flag(flag(*f)))?),
            Scan::Pieces { pieces, squares } => Found::positions(self.pieces(*pieces, *squares)?),
            Scan::Material(tests) => Found::positions(self.material(tests)?),
            Scan::GameNumbers(lo, hi) => Found::games(self.game_numbers(*lo, *hi)),
            Scan::GameResult(r) => Found::games(
                self.seg
                    .bitmap(BitmapKey::Result(GameResult::from_pgn(r)))?,
            ),
            Scan::GameTag { tag, needle } => {
                let seg = self.seg;
                let games_of = |v: u32| seg.bitmap(BitmapKey::TagValue(v));
                let found = match &self.tags {
                    Some(t) => t.games_containing(tag, needle, &games_of)?,
                    None => None,
                };
                match found {
                    Some(games) => Found::games(games),
                    None => {
                        self.inexact = true;
                        Found::ALL
                    }
                }
            }
            Scan::Moves { leaving, traits } => Found::positions(self.moves(*leaving, *traits)?),
            Scan::Ply(lo, hi) => Found::positions(self.plies(*lo, *hi)?),
            Scan::And(xs) => {
                let mut acc = Found::ALL;
                for x in xs {
                    if acc.is_empty() {
                        skip(x, index);
                        continue;
                    }
                    let s = self.eval_at(x, stats, index)?;
                    acc = acc.and(s);
                }
                acc
            }
            Scan::Or(xs) => {
                let mut parts = Vec::with_capacity(xs.len());
                for x in xs {
                    parts.push(self.eval_at(x, stats, index)?);
                }
                self.or(parts)
            }
            Scan::Not(x) => {
                let inner = self.eval_at(x, stats, index)?;
                self.not(inner)
            }
            Scan::GamesWith(x) => {
                let inner = self.eval_at(x, stats, index)?;
                Found::games(self.games_in(&inner))
            }
        };
        if stats.len() <= me {
            stats.resize(me + 1, OpStats::default());
        }
        let st = &mut stats[me];
        st.positions += self.position_count(&found);
        st.micros += t.elapsed().as_micros() as u64;
        if self.count_games {
            st.games += self.games_in(&found).len();
        }
        Ok(found)
    }

    /// Every game of the segment with at least one position.
    fn all_games(&self) -> RoaringBitmap {
        let mut games: RoaringBitmap = RoaringBitmap::new();
        games.insert_range(0..self.game_count());
        if self.starts.windows(2).any(|w| w[0] == w[1]) {
            games = self.nonempty(&games);
        }
        games
    }

    fn game_count(&self) -> u32 {
        self.starts.len().saturating_sub(1) as u32
    }

    /// The games of `games` that have a position.
    fn nonempty(&self, games: &RoaringBitmap) -> RoaringBitmap {
        games
            .iter()
            .filter(|&g| self.range(g).is_some_and(|(a, b)| a < b))
            .collect()
    }

    /// Game `g`'s positions.
    fn range(&self, g: u32) -> Option<(u32, u32)> {
        let g = g as usize;
        Some((*self.starts.get(g)?, *self.starts.get(g + 1)?))
    }

    /// The games with a position in `found`.
    fn games_in(&self, found: &Found) -> RoaringBitmap {
        match (&found.games, &found.positions) {
            (None, None) => self.all_games(),
            (Some(g), None) => self.nonempty(g),
            (None, Some(p)) => self.games_of(p),
            // Testing each game costs a lookup per game, walking the positions a step per game
            // they hold: the smaller side is walked.
            (Some(g), Some(p)) if g.len() < self.games_of_cost(p) => g
                .iter()
                .filter(|&g| {
                    self.range(g).is_some_and(|(a, b)| {
                        a < b && (p.contains(a) || p.range_cardinality(a..b) > 0)
                    })
                })
                .collect(),
            (Some(g), Some(p)) => self.games_of(p) & g,
        }
    }

    /// About how many steps [`Self::games_of`] takes over `p`.
    fn games_of_cost(&self, p: &RoaringBitmap) -> u64 {
        p.len().min(u64::from(self.game_count()))
    }

    /// The positions `found` selects, as a set.
    fn positions_in(&self, found: Found) -> RoaringBitmap {
        match (found.games, found.positions) {
            (None, None) => self.universe(),
            (Some(g), None) => self.positions_of(&g),
            (None, Some(p)) => p,
            (Some(g), Some(p)) => p & self.positions_of(&g),
        }
    }

    /// How many positions `found` selects (for `EXPLAIN ANALYZE`; outside it, positions in
    /// both a set and a game set are counted as the set's, an upper bound that costs nothing).
    fn position_count(&self, found: &Found) -> u64 {
        match (&found.games, &found.positions) {
            (None, None) => u64::from(self.positions),
            (Some(g), None) => g
                .iter()
                .filter_map(|g| self.range(g))
                .map(|(a, b)| u64::from(b - a))
                .sum(),
            (Some(g), Some(p)) if self.count_games => g
                .iter()
                .filter_map(|g| self.range(g))
                .map(|(a, b)| p.range_cardinality(a..b))
                .sum(),
            (_, Some(p)) => p.len(),
        }
    }

    /// The union of `parts`: kept as whole games when every part is whole games.
    fn or(&self, parts: Vec<Found>) -> Found {
        if parts.iter().any(Found::is_all) {
            return Found::ALL;
        }
        if parts.iter().all(|f| f.positions.is_none()) {
            let games = parts
                .into_iter()
                .filter_map(|f| f.games)
                .collect::<Vec<_>>();
            return Found::games(games.union());
        }
        let positions = parts
            .into_iter()
            .map(|f| self.positions_in(f))
            .collect::<Vec<_>>();
        Found::positions(positions.union())
    }

    /// The positions not in `found`: whole games stay whole games.
    fn not(&self, found: Found) -> Found {
        match (found.games, found.positions) {
            (None, None) => Found::positions(RoaringBitmap::new()),
            (Some(g), None) => {
                let mut all = RoaringBitmap::new();
                all.insert_range(0..self.game_count());
                Found::games(all - g)
            }
            (games, positions) => {
                Found::positions(self.universe() - self.positions_in(Found { games, positions }))
            }
        }
    }

    fn universe(&self) -> RoaringBitmap {
        let mut u = RoaringBitmap::new();
        u.insert_range(0..self.positions);
        u
    }

    /// Segment-local numbers of the games numbered `lo..=hi` in the database.
    fn game_numbers(&self, lo: i64, hi: i64) -> RoaringBitmap {
        let n = self.starts.len().saturating_sub(1) as i64;
        let first = self.first_game as i64;
        let (a, b) = (
            lo.saturating_sub(first).max(0),
            hi.saturating_sub(first).saturating_add(1).min(n),
        );
        let mut games = RoaringBitmap::new();
        if a < b {
            games.insert_range(a as u32..b as u32);
        }
        games
    }

    fn pieces(&self, pieces: u16, squares: u64) -> cqldb_storage::Result<RoaringBitmap> {
        let mut out = RoaringBitmap::new();
        for i in (0..12).filter(|i| pieces >> i & 1 == 1) {
            let (color, role) = piece(i);
            for sq in (0..64u32).filter(|s| squares >> s & 1 == 1) {
                out |= self
                    .seg
                    .bitmap(BitmapKey::Piece(color, role, Square::new(sq)))?;
            }
        }
        Ok(out)
    }

    /// A superset of the positions at plies `lo..=hi`: in pre-order a position at ply `p` is at
    /// least `p` after its game's first, and exactly `p` after it in a game without variations
    /// (a game whose positions are all on the main line).
    fn plies(&self, lo: u32, hi: u32) -> cqldb_storage::Result<RoaringBitmap> {
        let side = self.universe() - self.seg.bitmap(BitmapKey::flag(PositionFlags::MAINLINE))?;
        let with_variations = self.games_of(&side);
        let mut out = RoaringBitmap::new();
        for (g, w) in self.starts.windows(2).enumerate() {
            let (start, end) = (u64::from(w[0]), u64::from(w[1]));
            let from = start + u64::from(lo);
            let to = if with_variations.contains(g as u32) {
                end
            } else {
                end.min(start + u64::from(hi) + 1)
            };
            if from < to {
                // Both ends are within the segment's u32 position ids.
                out.insert_range(from as u32..to as u32);
            }
        }
        Ok(out)
    }

    /// The positions whose move (the one that reached them, or one leaving them) has one of
    /// the facts; every position in a segment written before move bitmaps existed.
    fn moves(&self, leaving: bool, traits: MoveTraits) -> cqldb_storage::Result<RoaringBitmap> {
        // The piece type that moved is kept for leaving moves only (see
        // `MoveFeature::REACHED_KEPT`): asked of the reaching move, no bitmap can tell.
        let unindexed = !leaving && traits.0 & !MoveFeature::REACHED_KEPT != 0;
        if unindexed || !self.seg.has_bitmap(BitmapKey::MOVES_MARKER) {
            return Ok(self.universe());
        }
        let side = if leaving {
            MoveSide::Leaving
        } else {
            MoveSide::Reached
        };
        let bitmaps = (0..MoveFeature::COUNT)
            .filter(|&b| traits.0 >> b & 1 == 1)
            .filter_map(MoveFeature::from_bit)
            .map(|f| self.seg.bitmap(BitmapKey::move_feature(side, f)))
            .collect::<cqldb_storage::Result<Vec<_>>>()?;
        Ok(bitmaps.union())
    }

    /// The union of the bitmaps of every material that passes all `tests`.
    fn material(&mut self, tests: &[MaterialTest]) -> cqldb_storage::Result<RoaringBitmap> {
        let seg = self.seg;
        let sigs = self.materials.get_or_insert_with(|| seg.materials());
        let passing = sigs.iter().filter(|&&sig| {
            tests.iter().all(|t| {
                let n: i64 = (0..12)
                    .filter(|i| t.pieces >> i & 1 == 1)
                    .map(|i| {
                        let (color, role) = piece(i);
                        i64::from(sig.count(color, role))
                    })
                    .sum();
                t.holds(n)
            })
        });
        let bitmaps = passing
            .map(|&sig| seg.bitmap(BitmapKey::Material(sig)))
            .collect::<cqldb_storage::Result<Vec<_>>>()?;
        Ok(bitmaps.union())
    }
}

/// What a scan selects: the positions of `positions` (every position when `None`) that belong
/// to the games of `games` (every game when `None`). Game-level scans (tags, results, game
/// numbers) stay whole games, so an `and` of a tag with the main line never lists the games'
/// positions.
#[derive(Debug)]
struct Found {
    games: Option<RoaringBitmap>,
    positions: Option<RoaringBitmap>,
}

impl Found {
    const ALL: Found = Found {
        games: None,
        positions: None,
    };

    fn games(g: RoaringBitmap) -> Self {
        Found {
            games: Some(g),
            positions: None,
        }
    }

    fn positions(p: RoaringBitmap) -> Self {
        Found {
            games: None,
            positions: Some(p),
        }
    }

    fn is_all(&self) -> bool {
        self.games.is_none() && self.positions.is_none()
    }

    fn is_empty(&self) -> bool {
        self.games.as_ref().is_some_and(RoaringBitmap::is_empty)
            || self.positions.as_ref().is_some_and(RoaringBitmap::is_empty)
    }

    /// Both: the sets of each kind intersect (a position is in a game's positions exactly
    /// when its game is that game).
    fn and(self, other: Found) -> Found {
        fn both(a: Option<RoaringBitmap>, b: Option<RoaringBitmap>) -> Option<RoaringBitmap> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a & b),
                (a, None) => a,
                (None, b) => b,
            }
        }
        Found {
            games: both(self.games, other.games),
            positions: both(self.positions, other.positions),
        }
    }
}

/// The games with a position in `positions`, game `i` having positions
/// `starts[i]..starts[i + 1]` (see [`SegmentScan::games_of`]).
fn games_of(starts: &[u32], positions: &RoaringBitmap) -> RoaringBitmap {
    let n = starts.len().saturating_sub(1);
    let total = starts.last().copied().unwrap_or(0).max(1);
    // Jumping past a game's remaining positions costs a search in the set, stepping over them
    // one each: measured, a jump pays as soon as the set likely holds one of them (the set's
    // density times the game's remaining length).
    let jump_beyond = (JUMP_COST * f64::from(total) / positions.len().max(1) as f64) as u64;
    let mut found = Vec::new();
    let mut it = positions.iter();
    let mut g = 0usize;
    let mut next = it.next();
    while let Some(p) = next {
        g = game_at(starts, g, p);
        if g >= n {
            break;
        }
        found.push(g as u32);
        let end = starts[g + 1];
        if u64::from(end - p) > jump_beyond {
            it.advance_to(end);
            next = it.next();
        } else {
            next = it.by_ref().find(|&q| q >= end);
        }
    }
    // Ascending and distinct by construction.
    RoaringBitmap::from_sorted_iter(found).unwrap_or_default()
}

/// What a jump in a position set costs, in steps over its members (measured on the 256k-game
/// database: stepping over more than about one member is already slower).
const JUMP_COST: f64 = 0.5;

/// The last game from `g` on that starts at or before `p` (`starts` ascending, `starts[g] <=
/// p`): searched outwards from `g`, since the next game holding a position is usually near.
fn game_at(starts: &[u32], g: usize, p: u32) -> usize {
    let rest = &starts[g..];
    let mut step = 1usize;
    let mut lo = 0usize;
    while step < rest.len() && rest[step] <= p {
        lo = step;
        step *= 2;
    }
    let hi = step.min(rest.len());
    g + lo + rest[lo..hi].partition_point(|&s| s <= p).saturating_sub(1)
}

/// Advances `index` past a scan that was not evaluated (an `and` already empty).
fn skip(scan: &Scan, index: &mut usize) {
    scan.visit(&mut |_| *index += 1);
}

fn flag(f: PositionFlag) -> PositionFlags {
    match f {
        PositionFlag::Check => PositionFlags::CHECK,
        PositionFlag::Mate => PositionFlags::MATE,
        PositionFlag::Stalemate => PositionFlags::STALEMATE,
        PositionFlag::Initial => PositionFlags::INITIAL,
        PositionFlag::Terminal => PositionFlags::TERMINAL,
        PositionFlag::Mainline => PositionFlags::MAINLINE,
        PositionFlag::VirtualMainline => PositionFlags::VIRTUAL_MAINLINE,
        PositionFlag::WhiteToMove => PositionFlags::WHITE_TO_MOVE,
    }
}

/// Piece index `i` of a designator: white P N B R Q K, then black.
fn piece(i: usize) -> (Color, Role) {
    const ROLES: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];
    (Color::from_white(i < 6), ROLES[i % 6])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn games_of_names_every_game_with_a_position(
            lens in proptest::collection::vec(0u32..40, 0..60),
            picks in proptest::collection::vec(any::<u32>(), 0..200),
        ) {
            let mut starts = vec![0u32];
            for l in &lens {
                starts.push(starts.last().copied().unwrap_or(0) + l);
            }
            let total = *starts.last().unwrap_or(&0);
            let positions: RoaringBitmap =
                picks.iter().filter(|_| total > 0).map(|p| p % total.max(1)).collect();
            let naive: RoaringBitmap = (0..lens.len())
                .filter(|&g| (starts[g]..starts[g + 1]).any(|p| positions.contains(p)))
                .map(|g| g as u32)
                .collect();
            prop_assert_eq!(games_of(&starts, &positions), naive);
        }
    }
}
