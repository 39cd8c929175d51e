//! Index scans over a segment: a plan's [`Scan`] evaluated on the segment's bitmaps into the
//! set of candidate positions, and from it the candidate games.
//!
//! Sets are roaring bitmaps over segment-local position ids (games over segment-local game
//! numbers); `not` complements within the segment's positions, `GamesWith` widens a set to the
//! whole games it touches. Each operator's output size, games and time are recorded for
//! `EXPLAIN ANALYZE`, in the plan's pre-order.

use std::time::Instant;

use cqldb_planner::plan::{GameAttr, MaterialTest, MoveOf, MoveTraits, OpStats, Scan};
use cqldb_storage::move_features::{MoveFeature, MoveSide};
use cqldb_storage::tags::TagReader;
use cqldb_storage::{Bitboards, BitmapKey, GameResult, PositionFlags, Segment};
use roaring::{MultiOps, RoaringBitmap};

mod board;
use board::Board;
mod flags;
use flags::{flag, flag_games_key, flag_positions};
mod material;
mod signature_search;
mod window;

use crate::found::{Found, Layout};
use crate::positions::{DENSE, Positions, few_to_roaring};
use fixedbitset::FixedBitSet;
use shakmaty::{Color, Role, Square};

/// The size of a leaf scan in one segment, from its stored bitmaps' headers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum StoredSize {
    /// A set of positions of this size.
    Positions(u64),
    /// A set of whole games, this many.
    Games(u64),
}

/// A segment ready for scans.
pub struct SegmentScan<'a> {
    seg: &'a Segment,
    /// Global number of the segment's first game (from 1).
    first_game: u64,
    /// Where each game's positions are.
    layout: Layout<'a>,
    /// The bitmaps of the material signatures passing each material test met so far (a test
    /// is met twice: to order an intersection, then to read it).
    passing: Vec<(Vec<MaterialTest>, Vec<BitmapKey>)>,
    /// Whether to count the games of every operator's output (for `EXPLAIN ANALYZE`).
    pub count_games: bool,
    /// The segment's tag index, for tag scans (without it they give every game).
    pub tags: Option<std::sync::Arc<TagReader>>,
    /// Set when some scan could not be answered exactly here (a tag index of an older
    /// version, a search the index cannot make): the segment's result is then no bound at all,
    /// and its games must all be evaluated.
    pub inexact: bool,
}

impl<'a> SegmentScan<'a> {
    /// Prepares `seg`, whose first game has the global number `first_game`.
    pub fn new(seg: &'a Segment, first_game: u64) -> cqldb_storage::Result<Self> {
        Ok(Self {
            seg,
            first_game,
            layout: Layout::new(seg.game_starts()?),
            passing: Vec::new(),
            count_games: false,
            tags: None,
            inexact: false,
        })
    }

    /// Where each game starts (see [`Segment::game_starts`]), kept by the scan.
    pub fn into_game_starts(self) -> std::borrow::Cow<'a, [u32]> {
        self.layout.into_starts()
    }

    /// The candidate games of `scan` (segment-local numbers); `stats` receives each
    /// operator's measurements in pre-order (it is extended as needed and added to, so one
    /// vector sums a run over every segment).
    pub fn eval_games(
        &mut self,
        scan: &Scan,
        stats: &mut Vec<OpStats>,
    ) -> cqldb_storage::Result<RoaringBitmap> {
        if let Some(games) = self.window_games(scan, stats)? {
            return Ok(games);
        }
        let mut index = 0;
        let found = self.eval_at(scan, stats, &mut index)?;
        Ok(self.layout.games_in(&found))
    }

    /// The games and the positions `scan` finds (segment-local numbers and ids): for a plan
    /// the index answers exactly, the matching positions themselves (see `listed.rs`).
    pub fn eval_positions(
        &mut self,
        scan: &Scan,
        stats: &mut Vec<OpStats>,
    ) -> cqldb_storage::Result<(RoaringBitmap, RoaringBitmap)> {
        let mut index = 0;
        let found = self.eval_at(scan, stats, &mut index)?;
        let games = self.layout.games_in(&found);
        Ok((games, self.layout.positions_in(found).into_sparse()))
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
            Scan::Flag(f) => {
                let key = BitmapKey::flag(flag(*f));
                // The main line of a segment without variations is every position: kept as
                // "all", an `and` with it costs nothing.
                if self.seg.bitmap_len(key) == u64::from(self.layout.universe_len()) {
                    Found::ALL
                } else {
                    Found::set(self.union(&[key])?)
                }
            }
            Scan::Pieces { pieces, squares } => {
                let keys: Vec<BitmapKey> = piece_keys(*pieces, *squares).collect();
                Found::set(self.union(&keys)?)
            }
            Scan::Material(tests) => {
                let keys = self.passing_materials(tests)?.to_vec();
                Found::set(self.union(&keys)?)
            }
            Scan::GameNumbers(lo, hi) => Found::games(self.game_numbers(*lo, *hi)),
            Scan::GameResult(r) => {
                let key = BitmapKey::ResultTag(GameResult::from_pgn(r));
                if self.seg.has_bitmap(key)? {
                    Found::games(self.seg.bitmap(key)?)
                } else {
                    // A segment from before the Result tag's bitmaps: its games are all read.
                    self.inexact = true;
                    Found::ALL
                }
            }
            Scan::GameRange { attr, lo, hi } => match self.value_keys(*attr, *lo, *hi)? {
                Some(keys) => Found::games(
                    keys.iter()
                        .map(|&k| self.seg.bitmap(k))
                        .collect::<cqldb_storage::Result<Vec<_>>>()?
                        .union(),
                ),
                None => {
                    self.inexact = true;
                    Found::ALL
                }
            },
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
            Scan::FlagGames { flag, line, side } => {
                let key = flag_games_key(*flag, *line, *side);
                if self.seg.has_bitmap(key)? {
                    Found::games(self.seg.bitmap(key)?)
                } else {
                    // A segment from before the game bitmaps: the flag's positions, their
                    // games (measured as this operator's).
                    let positions = flag_positions(*flag, *line, *side);
                    let inner = self.eval_at(&positions, &mut Vec::new(), &mut 0)?;
                    Found::games(self.layout.games_in(&inner))
                }
            }
            Scan::Moves { of, traits } => Found::positions(self.moves(*of, *traits)?),
            Scan::Ply(lo, hi) => Found::positions(self.plies(*lo, *hi)?),
            Scan::Board {
                placement,
                otherwise,
            } => match self.board(placement)? {
                Board::Bitmap(key) => {
                    skip(otherwise, index);
                    Found::set(self.union(&[key])?)
                }
                Board::Within(stretches) => self.eval_within(
                    otherwise,
                    Found::positions(stretches),
                    Some(placement),
                    stats,
                    index,
                )?,
                Board::Pieces => self.eval_at(otherwise, stats, index)?,
            },
            Scan::And(xs) => self.and(Found::ALL, xs, None, stats, index)?,
            Scan::Or(xs) => {
                let mut parts = Vec::with_capacity(xs.len());
                for x in xs {
                    parts.push(self.eval_at(x, stats, index)?);
                }
                self.layout.or(parts)
            }
            Scan::Not(x) => {
                let inner = self.eval_at(x, stats, index)?;
                self.layout.not(inner)
            }
            Scan::GamesWith(x) => {
                let inner = self.eval_at(x, stats, index)?;
                Found::games(self.layout.games_in(&inner))
            }
        };
        self.record(stats, me, &found, t);
        Ok(found)
    }

    /// Adds an operator's output and time to its place `at` (pre-order) in `stats`.
    fn record(&self, stats: &mut Vec<OpStats>, at: usize, found: &Found, since: Instant) {
        if stats.len() <= at {
            stats.resize(at + 1, OpStats::default());
        }
        let st = &mut stats[at];
        st.micros += since.elapsed().as_micros() as u64;
        // Counting costs a pass over a dense set: only `EXPLAIN ANALYZE` shows the counts.
        if self.count_games {
            st.positions += self.layout.position_count(found);
            st.games += self.layout.games_in(found).len();
        }
    }

    /// `scan` evaluated within the positions `within`: an intersection starts from them, so that
    /// each stored bitmap after it is read only where they are. With `placement`, `scan` is
    /// the positions with that piece placement (a [`Scan::Board`]'s `otherwise`), and its last
    /// few candidates may be decided by their decoded positions (see [`Self::and`]).
    fn eval_within(
        &mut self,
        scan: &Scan,
        within: Found,
        placement: Option<&[u64; 12]>,
        stats: &mut Vec<OpStats>,
        index: &mut usize,
    ) -> cqldb_storage::Result<Found> {
        let Scan::And(xs) = scan else {
            let found = self.eval_at(scan, stats, index)?;
            return Ok(within.and(found));
        };
        let me = *index;
        *index += 1;
        let t = Instant::now();
        let found = self.and(within, xs, placement, stats, index)?;
        self.record(stats, me, &found, t);
        Ok(found)
    }

    /// The intersection of `within` and `xs`: the most selective bitmaps first (their stored headers'
    /// sizes), so the running set shrinks early; once it is small, each stored bitmap after it
    /// is only read where the set has positions ([`Segment::bitmap_and`]); once it is empty,
    /// nothing more is read. Each operand's measurements keep their place in pre-order.
    ///
    /// With `placement` (the intersection is the positions with that piece placement), once
    /// decoding the few candidates left costs less than reading the operands left, they are
    /// decoded and compared with it, and the operands left are not read (their measurements stay
    /// empty; the one where it stopped gets the comparison's).
    fn and(
        &mut self,
        within: Found,
        xs: &[Scan],
        placement: Option<&[u64; 12]>,
        stats: &mut Vec<OpStats>,
        index: &mut usize,
    ) -> cqldb_storage::Result<Found> {
        let mut starts = Vec::with_capacity(xs.len());
        for x in xs {
            starts.push(*index);
            skip(x, index);
        }
        let end = *index;
        let order = self.and_order(xs);
        let mut acc = within;
        let lead = if acc.is_all() {
            self.window_lead(xs, &order)?
        } else {
            Vec::new()
        };
        if !lead.is_empty() {
            let t = Instant::now();
            acc = self.and_windows(&lead)?;
            // One operation: its time and result are the first operand's.
            self.record(stats, starts[lead[0].0], &acc, t);
        }
        let order: Vec<usize> = order.into_iter().skip(lead.len()).collect();
        let mut costly = Vec::new();
        for (k, &i) in order.iter().enumerate() {
            // An inexact segment is evaluated whole: nothing more to read here.
            if acc.is_empty() || self.inexact {
                break;
            }
            let mut at = starts[i];
            if let (Some(placement), Some(Positions::Sparse(p)), None) =
                (placement, &acc.positions, &acc.games)
                && let Some(games) = self.games_to_decode(p, xs, &order[k..], &mut costly)?
            {
                let t = Instant::now();
                acc = Found::positions(self.with_placement(p, &games, placement)?);
                self.record(stats, at, &acc, t);
                break;
            }
            // `and not` one stored bitmap: its members are cleared from a dense running set,
            // with no complement made (`mainline and not check`).
            if let (Some(Positions::Dense(d)), Scan::Not(inner)) = (&mut acc.positions, &xs[i])
                && let Some(key) = self.single_key(inner)?
            {
                let t = Instant::now();
                self.seg.bitmap_and_not_dense(key, d)?;
                self.record(stats, at, &acc, t);
                continue;
            }
            // The same against a few positions: those of them in the bitmap are read where the
            // set has positions and removed (`btm stalemate` does not make the side to move's
            // complement over the whole segment for a hundred positions).
            if acc.games.is_none()
                && let (Some(Positions::Sparse(p)), Scan::Not(inner)) = (&mut acc.positions, &xs[i])
                && let Some(key) = self.single_key(inner)?
            {
                let t = Instant::now();
                let hit = self.seg.bitmap_and(key, p)?;
                *p -= hit;
                self.record(stats, at, &acc, t);
                continue;
            }
            if let Some(key) = self.single_key(&xs[i])? {
                let t = Instant::now();
                match &mut acc.positions {
                    // A dense set is intersected word by word from the stored bytes; once few
                    // positions are left it turns sparse, for the lookups below (an exact
                    // `fen` intersects some thirty dense bitmaps and is soon down to a few).
                    Some(Positions::Dense(d)) => {
                        let kept = self.seg.bitmap_and_dense(key, d)?;
                        // Sparse once looking its members up in a dense operand (below) costs
                        // less than a pass over the bitset: before that, each further operand
                        // would be read whole anyway.
                        if self.few_to_look_up(kept) {
                            acc.positions = Some(Positions::Sparse(few_to_roaring(d)));
                        }
                        self.record(stats, at, &acc, t);
                        continue;
                    }
                    // A few positions are looked up in the stored bitmap one by one; a set in
                    // few of its containers reads only those (a set spread over every container
                    // would read them all: no cheaper than decoding the bitmap whole).
                    Some(Positions::Sparse(p)) if acc.games.is_none() => {
                        if let Some(kept) = self.few_in_stored(key, p)? {
                            acc = Found::positions(kept);
                            self.record(stats, at, &acc, t);
                            continue;
                        }
                    }
                    _ => {}
                }
            }
            let s = self.eval_at(&xs[i], stats, &mut at)?;
            // roaring intersects two run containers range by range, far slower than a word-wise
            // intersection of plain containers: the running set drops its runs before an
            // intersection (once: what comes out of one is plain).
            if let (Some(Positions::Sparse(p)), Some(Positions::Sparse(_))) =
                (acc.positions.as_mut(), s.positions.as_ref())
            {
                p.remove_run_compression();
            }
            acc = acc.and(s);
        }
        *index = end;
        Ok(acc)
    }

    /// The order an intersection reads its operands in: smallest first; operands whose size is
    /// unknown keep their order, after the stored bitmaps.
    fn and_order(&mut self, xs: &[Scan]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..xs.len()).collect();
        order.sort_by_cached_key(|&i| self.estimated_len(&xs[i]).unwrap_or(u64::MAX));
        order
    }

    /// The positions of `p` in `key`'s stored bitmap when `p` is few enough for them to be
    /// looked up one by one, or spread over few enough of its containers for only those to be
    /// read; `None` when reading the bitmap whole costs less.
    fn few_in_stored(
        &self,
        key: BitmapKey,
        p: &RoaringBitmap,
    ) -> cqldb_storage::Result<Option<RoaringBitmap>> {
        // The alternative is to read the operand: a pass over a bitset of every position (an
        // eighth of a byte each) when it would be read dense.
        let universe = u64::from(self.layout.universe_len());
        let mut read = self.seg.bitmap_bytes(key) as u64;
        if self.seg.bitmap_len(key).saturating_mul(DENSE) >= universe {
            read = read.max(universe / 8);
        }
        let lookups = p.len().saturating_mul(LOOKUP_COST) <= read;
        let containers = universe.div_ceil(1 << 16);
        Ok(if lookups {
            Some(self.seg.bitmap_filter(key, p)?)
        } else if u64::from(p.statistics().n_containers) * SPARSE <= containers {
            Some(self.seg.bitmap_and(key, p)?)
        } else {
            None
        })
    }

    /// Whether `n` positions are few enough to look up one by one in a stored bitmap rather
    /// than pass over a bitset of the segment's positions (an eighth of a byte each).
    fn few_to_look_up(&self, n: u64) -> bool {
        n.saturating_mul(LOOKUP_COST * 8) <= u64::from(self.layout.universe_len())
    }

    /// About how many positions `scan` selects, from the stored bitmaps' headers, if it is a
    /// read of stored bitmaps: the order of an intersection. Sizes, not bytes: a bitmap of long
    /// runs (a pawn on its first square) is small on disk and selects nearly everything. A tag
    /// search and a range of game numbers count as none: usually very selective, and whole
    /// games are cheap to intersect with.
    fn estimated_len(&mut self, scan: &Scan) -> Option<u64> {
        match scan {
            Scan::GameNumbers(..) | Scan::GameTag { .. } => Some(0),
            Scan::GameResult(r) => {
                let games = self
                    .seg
                    .bitmap_len(BitmapKey::ResultTag(GameResult::from_pgn(r)));
                Some(games.saturating_mul(self.positions_per_game()))
            }
            Scan::GameRange { attr, lo, hi } => {
                // An estimate: what cannot be read is reported when the scan is.
                let games: u64 = self
                    .value_keys(*attr, *lo, *hi)
                    .ok()??
                    .iter()
                    .map(|&k| self.seg.bitmap_len(k))
                    .sum();
                Some(games.saturating_mul(self.positions_per_game()))
            }
            Scan::Flag(f) => Some(self.seg.bitmap_len(BitmapKey::flag(flag(*f)))),
            Scan::FlagGames { flag, line, side } => {
                let key = flag_games_key(*flag, *line, *side);
                if self.seg.has_bitmap(key).ok()? {
                    Some(
                        self.seg
                            .bitmap_len(key)
                            .saturating_mul(self.positions_per_game()),
                    )
                } else {
                    self.estimated_len(&flag_positions(*flag, *line, *side))
                }
            }
            Scan::Pieces { pieces, squares } => Some(
                piece_keys(*pieces, *squares)
                    .map(|k| self.seg.bitmap_len(k))
                    .sum(),
            ),
            // An intersection selects at most its smallest known part, a union at most the sum.
            Scan::And(xs) => xs.iter().filter_map(|x| self.estimated_len(x)).min(),
            Scan::Or(xs) => xs.iter().map(|x| self.estimated_len(x)).sum(),
            Scan::GamesWith(x) => self.estimated_len(x),
            Scan::Board {
                placement,
                otherwise,
            } => match self.board(placement) {
                Ok(Board::Bitmap(key)) => Some(self.seg.bitmap_len(key)),
                Ok(Board::Within(stretches)) => Some(stretches.len()),
                // A damaged index is reported when the scan is read.
                Ok(Board::Pieces) | Err(_) => self.estimated_len(otherwise),
            },
            // The passing signatures' bitmaps: `fen`'s whole material is one, and a test
            // no material in the segment passes (`[Aa] <= 5` in a segment of openings) is
            // none, read first and ending the intersection at once.
            Scan::Material(tests) => {
                let seg = self.seg;
                Some(seg.bitmaps_len(self.passing_materials(tests).ok()?))
            }
            // The feature bitmaps' sizes (for a main-line move, at most that): without them a
            // move was read after the main line (`move promote N` made the main line dense
            // first, 43 % of its time).
            Scan::Moves { of, traits } => {
                let keys = self.move_keys(*of, *traits).ok()??;
                Some(keys.map(|k| self.seg.bitmap_len(k)).sum())
            }
            Scan::All | Scan::Empty | Scan::Not(_) | Scan::Ply(..) => None,
        }
    }

    /// What the stored bitmaps' headers say of the size of a leaf `scan`, read without
    /// decoding a bitmap (`EXPLAIN`'s estimates): positions for a read of position bitmaps,
    /// games for a set of whole games; `None` for a composite scan and for what the headers
    /// cannot tell (a tag search, a ply range, a segment without the bitmaps).
    pub(crate) fn stored_size(&mut self, scan: &Scan) -> Option<StoredSize> {
        let universe = u64::from(self.layout.universe_len());
        match scan {
            Scan::Flag(_) | Scan::Pieces { .. } | Scan::Material(_) | Scan::Moves { .. } => self
                .estimated_len(scan)
                .map(|n| StoredSize::Positions(n.min(universe))),
            // A placement's own bitmap, if the segment keeps one (else its input tells).
            Scan::Board { .. } => self
                .single_key(scan)
                .ok()?
                .map(|key| StoredSize::Positions(self.seg.bitmap_len(key))),
            Scan::GameNumbers(lo, hi) => Some(StoredSize::Games(self.game_numbers(*lo, *hi).len())),
            Scan::FlagGames { flag, line, side } => {
                let key = flag_games_key(*flag, *line, *side);
                if self.seg.has_bitmap(key).ok()? {
                    Some(StoredSize::Games(self.seg.bitmap_len(key)))
                } else {
                    // A segment from before the game bitmaps: at most the flag's positions.
                    self.stored_size(&Scan::Flag(*flag))
                }
            }
            Scan::GameResult(r) => {
                let key = BitmapKey::ResultTag(GameResult::from_pgn(r));
                self.seg
                    .has_bitmap(key)
                    .ok()?
                    .then(|| StoredSize::Games(self.seg.bitmap_len(key)))
            }
            Scan::GameRange { attr, lo, hi } => {
                let keys = self.value_keys(*attr, *lo, *hi).ok()??;
                Some(StoredSize::Games(
                    keys.iter().map(|&k| self.seg.bitmap_len(k)).sum(),
                ))
            }
            Scan::All
            | Scan::Empty
            | Scan::GameTag { .. }
            | Scan::Ply(..)
            | Scan::And(_)
            | Scan::Or(_)
            | Scan::Not(_)
            | Scan::GamesWith(_) => None,
        }
    }

    /// The segment's positions and games.
    pub(crate) fn size(&self) -> (u64, u64) {
        (
            u64::from(self.layout.universe_len()),
            u64::from(self.layout.game_count()),
        )
    }

    /// The segment's average positions per game (at least one).
    fn positions_per_game(&self) -> u64 {
        (u64::from(self.layout.universe_len()) / u64::from(self.layout.game_count().max(1))).max(1)
    }

    /// The bitmaps of the games whose `attr` is in `lo..=hi` (whole bands for a rating), or
    /// `None` where they are not the whole answer: a segment with games whose value lies
    /// outside 0..=65535 (no bitmap holds them), or one written before the bitmaps held the
    /// values a query reads.
    fn value_keys(
        &self,
        attr: GameAttr,
        lo: u16,
        hi: u16,
    ) -> cqldb_storage::Result<Option<Vec<BitmapKey>>> {
        let band = attr.band();
        let (outside, first, last) = match attr {
            GameAttr::Year => (
                BitmapKey::YearOutside,
                BitmapKey::Year(lo),
                BitmapKey::Year(hi),
            ),
            GameAttr::WhiteElo | GameAttr::BlackElo => {
                let c = Color::from_white(attr == GameAttr::WhiteElo);
                (
                    BitmapKey::EloOutside(c),
                    BitmapKey::EloBand(c, lo / band),
                    BitmapKey::EloBand(c, hi / band),
                )
            }
        };
        // The marker is written empty where no value lies outside: its presence says the
        // segment's bitmaps hold the values queries read.
        if !self.seg.has_bitmap(outside)? || self.seg.bitmap_len(outside) > 0 {
            return Ok(None);
        }
        Ok(Some(if lo <= hi {
            self.seg.keys_between(first, last)?
        } else {
            Vec::new()
        }))
    }

    /// The one stored bitmap `scan` is, if it is one (an exact material is one signature's).
    fn single_key(&mut self, scan: &Scan) -> cqldb_storage::Result<Option<BitmapKey>> {
        Ok(match scan {
            Scan::Flag(f) => Some(BitmapKey::flag(flag(*f))),
            Scan::Pieces { pieces, squares }
                if pieces.count_ones() == 1 && squares.count_ones() == 1 =>
            {
                piece_keys(*pieces, *squares).next()
            }
            Scan::Material(tests) => match self.passing_materials(tests)? {
                &[key] => Some(key),
                _ => None,
            },
            Scan::Board { placement, .. } => {
                let key = BitmapKey::board(&Bitboards::from_pieces(placement));
                self.seg.has_bitmap(key)?.then_some(key)
            }
            _ => None,
        })
    }

    /// Segment-local numbers of the games numbered `lo..=hi` in the database.
    fn game_numbers(&self, lo: i64, hi: i64) -> RoaringBitmap {
        let n = i64::from(self.layout.game_count());
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

    /// The union of the stored bitmaps of `keys`: dense when they hold more than one in
    /// [`DENSE`] of the segment's positions, read straight into the dense set.
    fn union(&self, keys: &[BitmapKey]) -> cqldb_storage::Result<Positions> {
        let len = self.seg.bitmaps_len(keys);
        let universe = self.layout.universe_len();
        if universe > 0 && len.saturating_mul(DENSE) >= u64::from(universe) {
            let mut d = FixedBitSet::with_capacity(universe as usize);
            self.seg.bitmaps_or_dense(keys, &mut d)?;
            return Ok(Positions::Dense(d));
        }
        let bitmaps = keys
            .iter()
            .map(|&key| self.seg.bitmap(key))
            .collect::<cqldb_storage::Result<Vec<_>>>()?;
        Ok(Positions::Sparse(bitmaps.union()))
    }

    /// A superset of the positions at plies `lo..=hi`: in pre-order a position at ply `p` is at
    /// least `p` after its game's first, and exactly `p` after it in a game without variations
    /// (a game whose positions are all on the main line).
    fn plies(&self, lo: u32, hi: u32) -> cqldb_storage::Result<RoaringBitmap> {
        let side =
            self.layout.universe() - self.seg.bitmap(BitmapKey::flag(PositionFlags::MAINLINE))?;
        let with_variations = self.layout.games_of(&Positions::Sparse(side));
        let mut out = RoaringBitmap::new();
        for (g, w) in self.layout.starts().windows(2).enumerate() {
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

    /// The positions whose move (`of`) has one of the facts; every position in a segment
    /// written before move bitmaps existed.
    /// The move-feature bitmaps whose union is a move scan's set, or `None` where the segment
    /// has none that can tell: it predates them, or the scan asks the reaching move for the
    /// piece type that moved, which is kept for leaving moves only (`MoveFeature::REACHED_KEPT`).
    fn move_keys(
        &self,
        of: MoveOf,
        traits: MoveTraits,
    ) -> cqldb_storage::Result<Option<impl Iterator<Item = BitmapKey> + use<>>> {
        let indexed = of == MoveOf::Leaving || traits.0 & !MoveFeature::REACHED_KEPT == 0;
        if !indexed || !self.seg.has_bitmap(BitmapKey::MOVES_MARKER)? {
            return Ok(None);
        }
        let side = match of {
            MoveOf::Leaving => MoveSide::Leaving,
            MoveOf::Reached | MoveOf::MainLineNext => MoveSide::Reached,
        };
        Ok(Some(
            (0..MoveFeature::COUNT)
                .filter(move |&b| traits.0 >> b & 1 == 1)
                .filter_map(MoveFeature::from_bit)
                .map(move |f| BitmapKey::move_feature(side, f)),
        ))
    }

    fn moves(&mut self, of: MoveOf, traits: MoveTraits) -> cqldb_storage::Result<RoaringBitmap> {
        let Some(keys) = self.move_keys(of, traits)? else {
            // Every position: sound for the upper bounds the planner makes of an unindexed
            // reaching move; a segment without move bitmaps, or a main-line move (the planner
            // uses those exactly), has no bound here at all and is evaluated whole.
            let unindexed = of != MoveOf::Leaving && traits.0 & !MoveFeature::REACHED_KEPT != 0;
            if !unindexed || of == MoveOf::MainLineNext {
                self.inexact = true;
            }
            return Ok(self.layout.universe());
        };
        let bitmaps = keys
            .map(|k| self.seg.bitmap(k))
            .collect::<cqldb_storage::Result<Vec<_>>>()?;
        let reached = bitmaps.union();
        if of != MoveOf::MainLineNext {
            return Ok(reached);
        }
        // A main-line position's main-line move reached the next position: the one right
        // after it (positions are numbered in pre-order, a position's first child next). A few
        // reached positions (a promotion to a knight) are looked up in the main line instead
        // of reading it whole.
        let main_key = BitmapKey::flag(PositionFlags::MAINLINE);
        let on_main = match self.few_in_stored(main_key, &reached)? {
            Some(kept) => kept,
            None => reached & self.seg.bitmap(main_key)?,
        };
        let before = |c: u32| c.checked_sub(1);
        // Ascending by construction; were it not, still every position (unordered).
        Ok(
            RoaringBitmap::from_sorted_iter(on_main.iter().filter_map(before))
                .unwrap_or_else(|_| on_main.iter().filter_map(before).collect()),
        )
    }
}

/// A running intersection in at most a `SPARSE`th of the segment's containers (of 65,536
/// positions) is "small": stored bitmaps are then read only where it has positions.
const SPARSE: u64 = 4;

/// What looking one position up in a stored bitmap costs, in stored bytes decoded: a running
/// intersection of fewer positions than a bitmap's size over this looks them up one by one.
const LOOKUP_COST: u64 = 64;

/// The keys of the piece-on-square bitmaps of a designator.
fn piece_keys(pieces: u16, squares: u64) -> impl Iterator<Item = BitmapKey> {
    (0..12)
        .filter(move |i| pieces >> i & 1 == 1)
        .flat_map(move |i| {
            let (color, role) = piece(i);
            (0..64u32)
                .filter(move |s| squares >> s & 1 == 1)
                .map(move |sq| BitmapKey::Piece(color, role, Square::new(sq)))
        })
}

/// Advances `index` past a scan that was not evaluated (an `and` already empty).
fn skip(scan: &Scan, index: &mut usize) {
    scan.visit(&mut |_| *index += 1);
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

    /// The planner's rating ranges are whole bands of the storage's.
    #[test]
    fn rating_bands_are_the_storage_s() {
        for attr in [GameAttr::WhiteElo, GameAttr::BlackElo] {
            assert_eq!(attr.band(), cqldb_storage::schema::ELO_BAND_WIDTH);
        }
    }
}
