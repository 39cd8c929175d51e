//! What an index scan selects in one segment, and the arithmetic of such selections.
//!
//! A selection is a set of positions restricted to a set of games ([`Found`]): game-level
//! scans (tags, results, game numbers) stay whole games, so an `and` of a tag with the main
//! line never lists the games' positions, and the candidate games of a selection are found
//! from whichever side is cheaper. [`Layout`] knows where each game's positions are (game `i`
//! has positions `starts[i]..starts[i + 1]`) and turns selections into sets of games or of
//! positions. Every operation means what it would mean on plain position sets: `not` is the
//! complement within the segment's positions, and the games of a selection are the games with
//! a position in it; the property tests below check exactly that.

use std::borrow::Cow;

use roaring::{MultiOps, RoaringBitmap};

use cqldb_storage::bitmap_window::WindowSet;

use crate::positions::Positions;

/// Where each game of a segment has its positions.
pub struct Layout<'a> {
    /// Game `i` has positions `starts[i]..starts[i + 1]`.
    starts: Cow<'a, [u32]>,
    positions: u32,
}

impl<'a> Layout<'a> {
    /// A layout from where each game starts (one more entry than games, the last being the
    /// number of positions).
    pub fn new(starts: Cow<'a, [u32]>) -> Self {
        let positions = starts.last().copied().unwrap_or(0);
        Self { starts, positions }
    }

    /// Where each game starts.
    pub fn into_starts(self) -> Cow<'a, [u32]> {
        self.starts
    }

    /// Where each game starts, borrowed.
    pub fn starts(&self) -> &[u32] {
        &self.starts
    }

    /// The games (segment-local numbers) with a position in `positions`: each hit names its game,
    /// and the walk then jumps to the next game's first position, so the cost is one step per
    /// game found rather than one per position.
    pub fn games_of(&self, positions: &Positions) -> RoaringBitmap {
        match positions {
            Positions::Sparse(p) => games_of(&self.starts, p),
            // A game's positions span a word or two of a dense set: each game is one test.
            Positions::Dense(d) => crate::positions::games_of_dense(d, &self.starts),
        }
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

    /// Every game of the segment with at least one position.
    pub fn all_games(&self) -> RoaringBitmap {
        let mut games: RoaringBitmap = RoaringBitmap::new();
        games.insert_range(0..self.game_count());
        if self.starts.windows(2).any(|w| w[0] == w[1]) {
            games = self.nonempty(&games);
        }
        games
    }

    pub fn game_count(&self) -> u32 {
        self.starts.len().saturating_sub(1) as u32
    }

    /// The games of `games` that have a position.
    pub fn nonempty(&self, games: &RoaringBitmap) -> RoaringBitmap {
        let n = self.game_count();
        // A few games are looked up one by one; a large set (the games with a check) loses
        // the few games without positions found by one pass over the starts, instead of a
        // lookup and an insertion per game.
        if games.len().saturating_mul(8) < u64::from(n) {
            return games
                .iter()
                .filter(|&g| self.range(g).is_some_and(|(a, b)| a < b))
                .collect();
        }
        let mut out = games.clone();
        out.remove_range(n..);
        for (g, w) in (0u32..).zip(self.starts.windows(2)) {
            if w[0] >= w[1] {
                out.remove(g);
            }
        }
        out
    }

    /// Game `g`'s positions.
    pub fn range(&self, g: u32) -> Option<(u32, u32)> {
        let g = g as usize;
        Some((*self.starts.get(g)?, *self.starts.get(g + 1)?))
    }

    /// The games with a position in `found`.
    pub fn games_in(&self, found: &Found) -> RoaringBitmap {
        match (&found.games, &found.positions) {
            (None, None) => self.all_games(),
            (Some(g), None) => self.nonempty(g),
            (None, Some(p)) => self.games_of(p),
            // Testing each game costs a lookup per game, walking the positions a step per game
            // they hold: the smaller side is walked.
            (Some(g), Some(p)) if g.len() < self.games_of_cost(p) => g
                .iter()
                .filter(|&g| self.range(g).is_some_and(|(a, b)| p.any_in(a, b)))
                .collect(),
            (Some(g), Some(p)) => self.games_of(p) & g,
        }
    }

    /// About how many steps [`Self::games_of`] takes over `p`.
    pub fn games_of_cost(&self, p: &Positions) -> u64 {
        match p {
            Positions::Sparse(p) => p.len().min(u64::from(self.game_count())),
            Positions::Dense(_) => u64::from(self.game_count()),
        }
    }

    /// The positions `found` selects, as a set.
    pub fn positions_in(&self, found: Found) -> Positions {
        match (found.games, found.positions) {
            (None, None) => Positions::Sparse(self.universe()),
            (Some(g), None) => Positions::Sparse(self.positions_of(&g)),
            (None, Some(p)) => p,
            (Some(g), Some(Positions::Dense(mut d))) => {
                // The games outside `g` are cleared: one step per game, none per position.
                for (i, w) in self.starts.windows(2).enumerate() {
                    if w[0] < w[1] && !g.contains(i as u32) {
                        d.remove_range(w[0] as usize..(w[1] as usize).min(d.len()));
                    }
                }
                Positions::Dense(d)
            }
            (Some(g), Some(p)) => p.and(Positions::Sparse(self.positions_of(&g))),
        }
    }

    /// How many positions `found` selects (for `EXPLAIN ANALYZE`, the only place that counts).
    pub fn position_count(&self, found: &Found) -> u64 {
        match (&found.games, &found.positions) {
            (None, None) => u64::from(self.positions),
            (Some(g), None) => g
                .iter()
                .filter_map(|g| self.range(g))
                .map(|(a, b)| u64::from(b - a))
                .sum(),
            (Some(g), Some(p)) => g
                .iter()
                .filter_map(|g| self.range(g))
                .map(|(a, b)| p.count_in(a, b))
                .sum(),
            (None, Some(p)) => p.len(),
        }
    }

    /// The union of `parts`: kept as whole games when every part is whole games.
    pub fn or(&self, parts: Vec<Found>) -> Found {
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
        Found::set(Positions::union(positions, self.positions))
    }

    /// The positions not in `found`: whole games stay whole games.
    pub fn not(&self, found: Found) -> Found {
        match (found.games, found.positions) {
            (None, None) => Found::positions(RoaringBitmap::new()),
            (Some(g), None) => {
                let mut all = RoaringBitmap::new();
                all.insert_range(0..self.game_count());
                Found::games(all - g)
            }
            (games, positions) => Found::set(match self.positions_in(Found { games, positions }) {
                Positions::Sparse(p) => Positions::Sparse(self.complement(&p)),
                Positions::Dense(mut d) => {
                    d.toggle_range(..);
                    Positions::Dense(d)
                }
            }),
        }
    }

    /// The segment's positions not in `p`. Taken from a universe of bitmap containers: taking
    /// a large set from one made of runs removed its members one at a time.
    pub fn complement(&self, p: &RoaringBitmap) -> RoaringBitmap {
        let bytes = vec![0xffu8; (self.positions as usize).div_ceil(8)];
        let mut u = RoaringBitmap::from_lsb0_bytes(0, &bytes);
        u.remove_range(self.positions..);
        u - p
    }

    /// How many positions the segment has.
    pub fn universe_len(&self) -> u32 {
        self.positions
    }

    /// Every position of the segment.
    pub fn universe(&self) -> RoaringBitmap {
        let mut u = RoaringBitmap::new();
        u.insert_range(0..self.positions);
        u
    }
}

/// What a scan selects: the positions of `positions` (every position when `None`) that belong
/// to the games of `games` (every game when `None`). Game-level scans (tags, results, game
/// numbers) stay whole games, so an `and` of a tag with the main line never lists the games'
/// positions.
#[derive(Debug)]
pub struct Found {
    /// The games (every game when `None`).
    pub games: Option<RoaringBitmap>,
    /// The positions (every position when `None`).
    pub positions: Option<Positions>,
}

impl Found {
    pub const ALL: Found = Found {
        games: None,
        positions: None,
    };

    pub fn games(g: RoaringBitmap) -> Self {
        Found {
            games: Some(g),
            positions: None,
        }
    }

    pub fn positions(p: RoaringBitmap) -> Self {
        Self::set(Positions::Sparse(p))
    }

    pub fn set(p: Positions) -> Self {
        Found {
            games: None,
            positions: Some(p),
        }
    }

    pub fn is_all(&self) -> bool {
        self.games.is_none() && self.positions.is_none()
    }

    pub fn is_empty(&self) -> bool {
        self.games.as_ref().is_some_and(RoaringBitmap::is_empty)
            || self.positions.as_ref().is_some_and(Positions::is_empty)
    }

    /// Both: the sets of each kind intersect (a position is in a game's positions exactly
    /// when its game is that game).
    pub fn and(self, other: Found) -> Found {
        Found {
            games: match (self.games, other.games) {
                (Some(a), Some(b)) => Some(a & b),
                (a, None) => a,
                (None, b) => b,
            },
            positions: match (self.positions, other.positions) {
                (Some(a), Some(b)) => Some(a.and(b)),
                (a, None) => a,
                (None, b) => b,
            },
        }
    }
}

/// The games with a position in `positions`, game `i` having positions
/// `starts[i]..starts[i + 1]` (see [`SegmentScan::games_of`]).
fn games_of(starts: &[u32], positions: &RoaringBitmap) -> RoaringBitmap {
    let n = starts.len().saturating_sub(1);
    let total = starts.last().copied().unwrap_or(0).max(1);
    if positions.len() * 4 > u64::from(total) {
        // A dense set holds most games' first positions: one lookup per game finds them.
        return (0..n)
            .filter(|&g| {
                let (a, b) = (starts[g], starts[g + 1]);
                a < b && (positions.contains(a) || positions.range_cardinality(a..b) > 0)
            })
            .map(|g| g as u32)
            .collect();
    }
    sparse_games_of::<BATCH>(starts, positions)
}

/// [`games_of`] by walking the set: it is read `B` members at a time (roaring decodes a batch
/// far faster than it steps one member at a time); within a batch, a game's remaining members
/// are passed by a galloping search, and a game that outlasts the batch is left with one jump
/// of the iterator.
fn sparse_games_of<const B: usize>(starts: &[u32], positions: &RoaringBitmap) -> RoaringBitmap {
    let n = starts.len().saturating_sub(1);
    let mut found = Vec::new();
    let mut it = positions.iter();
    let mut buf = [0u32; B];
    let mut g = 0usize;
    'walk: loop {
        let batch = it.next_many(&mut buf);
        let k = batch.len();
        if k == 0 {
            break;
        }
        let mut i = 0;
        while i < k {
            g = game_at(starts, g, batch[i]);
            if g >= n {
                break 'walk;
            }
            found.push(g as u32);
            let end = starts[g + 1];
            if batch[k - 1] < end {
                it.advance_to(end);
                break;
            }
            i += first_at_or_after(&batch[i..], end);
        }
    }
    games_found(found)
}

/// The games of a set of positions handed over a window of words at a time, in ascending order
/// (as [`cqldb_storage::Segment::bitmaps_and`] hands an intersection): each member found names
/// its game, and the words up to that game's end are passed over, so a game costs one search
/// however many of its positions the set holds, and the set itself is never built.
pub struct WindowGames<'l> {
    /// Game `i` has positions `starts[i]..starts[i + 1]`.
    starts: &'l [u32],
    /// The game the last member fell in (the search for the next starts there).
    game: usize,
    /// The first position not yet decided: the end of the last game found.
    next: u32,
    found: Vec<u32>,
}

impl<'l> WindowGames<'l> {
    pub fn new(layout: &'l Layout<'_>) -> Self {
        Self {
            starts: layout.starts(),
            game: 0,
            next: 0,
            found: Vec::new(),
        }
    }

    /// Adds the games of the members of a window whose first word holds position `base` (past
    /// every window before).
    pub fn push(&mut self, base: u32, set: WindowSet<'_>) {
        match set {
            WindowSet::Words(words) => self.push_words(base, words),
            WindowSet::Runs(runs) => self.push_runs(runs),
        }
    }

    /// Adds the games of runs of positions, ascending and past every window before.
    fn push_runs(&mut self, runs: &[(u32, u32)]) {
        let games = self.starts.len().saturating_sub(1);
        for &(s, e) in runs {
            // Members before the end of the last game found are in a game already named; a
            // run reaching past a game's end names the games after it too.
            let mut p = s.max(self.next);
            while p < e {
                self.game = game_at(self.starts, self.game, p);
                if self.game >= games {
                    return;
                }
                self.found.push(self.game as u32);
                self.next = self.starts[self.game + 1];
                p = self.next;
            }
        }
    }

    /// Adds the games of the members of words whose first holds position `base`.
    pub fn push_words(&mut self, base: u32, words: &[u64]) {
        let games = self.starts.len().saturating_sub(1);
        let mut j = 0usize;
        while let Some(&word) = words.get(j) {
            let at = u64::from(base) + 64 * j as u64;
            let next = u64::from(self.next);
            // Members before the end of the last game found are in a game already named.
            let w = match next.checked_sub(at) {
                Some(skip) if skip >= 64 => 0,
                Some(skip) => word & (u64::MAX << skip),
                None => word,
            };
            if w == 0 {
                j += 1;
                continue;
            }
            let p = (at + u64::from(w.trailing_zeros())) as u32;
            self.game = game_at(self.starts, self.game, p);
            if self.game >= games {
                return;
            }
            self.found.push(self.game as u32);
            self.next = self.starts[self.game + 1];
        }
    }

    pub fn finish(self) -> RoaringBitmap {
        games_found(self.found)
    }
}

/// The games a search found, ascending and distinct by construction; were they not, the games
/// are still all given (collected unordered), never an empty set.
fn games_found(found: Vec<u32>) -> RoaringBitmap {
    match RoaringBitmap::from_sorted_iter(found.iter().copied()) {
        Ok(games) => games,
        Err(_) => found.into_iter().collect(),
    }
}

/// Members of a position set decoded at a time by [`games_of`].
const BATCH: usize = 512;

/// The index of the first element of `xs` (ascending, its last element `>= x`) that is at least
/// `x`, searched outwards from the front: a game usually holds few of a set's members.
fn first_at_or_after(xs: &[u32], x: u32) -> usize {
    let mut lo = 0usize;
    let mut step = 1usize;
    while step < xs.len() && xs[step] < x {
        lo = step;
        step *= 2;
    }
    let hi = step.min(xs.len());
    lo + xs[lo..hi].partition_point(|&q| q < x)
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The maximal runs of `b`, half-open.
    fn runs_of(b: &RoaringBitmap) -> Vec<(u32, u32)> {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for x in b {
            match runs.last_mut() {
                Some(r) if r.1 == x => r.1 = x + 1,
                _ => runs.push((x, x + 1)),
            }
        }
        runs
    }

    proptest! {
        #[test]
        fn games_of_names_every_game_with_a_position(
            lens in proptest::collection::vec(0u32..40, 0..60),
            picks in proptest::collection::vec(any::<u32>(), 0..400),
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
            prop_assert_eq!(&games_of(&starts, &positions), &naive);
            prop_assert_eq!(&sparse_games_of::<3>(&starts, &positions), &naive);
            prop_assert_eq!(&sparse_games_of::<1>(&starts, &positions), &naive);
            // Handed over in windows of one to three words, games crossing their edges.
            let layout = Layout::new(starts.clone().into());
            for width in 1..=3usize {
                let mut windows = WindowGames::new(&layout);
                let span = 64 * width as u32;
                for base in (0..total.div_ceil(span)).map(|w| w * span) {
                    let mut words = vec![0u64; width];
                    for p in positions.range(base..base + span) {
                        words[((p - base) / 64) as usize] |= 1 << ((p - base) % 64);
                    }
                    windows.push_words(base, &words);
                }
                prop_assert_eq!(&windows.finish(), &naive, "windows of {} words", width);
            }
            // Handed over as runs, in groups of one to three, runs crossing games' edges.
            let runs = runs_of(&positions);
            for group in 1..=3usize {
                let mut windows = WindowGames::new(&layout);
                runs.chunks(group).for_each(|c| windows.push(0, WindowSet::Runs(c)));
                prop_assert_eq!(&windows.finish(), &naive, "runs in groups of {}", group);
            }
        }
    }

    proptest! {
        /// Games without positions are dropped, and numbers past the last game, whether the
        /// set is small (looked up one by one) or large (one pass over the starts).
        #[test]
        fn nonempty_keeps_the_games_with_a_position(
            lens in proptest::collection::vec(0u32..3, 0..200),
            games in proptest::collection::vec(0u32..220, 0..220),
        ) {
            let mut starts = vec![0u32];
            for l in &lens {
                starts.push(starts.last().copied().unwrap_or(0) + l);
            }
            let games: RoaringBitmap = games.into_iter().collect();
            let naive: RoaringBitmap = games
                .iter()
                .filter(|&g| (g as usize) < lens.len() && lens[g as usize] > 0)
                .collect();
            prop_assert_eq!(Layout::new(starts.into()).nonempty(&games), naive);
        }
    }

    /// A selection expression over one segment, as index scans combine them.
    #[derive(Clone, Debug)]
    enum Expr {
        Positions(Vec<u32>),
        /// The same positions, held as a dense set.
        Dense(Vec<u32>),
        Games(Vec<u32>),
        All,
        And(Vec<Expr>),
        Or(Vec<Expr>),
        Not(Box<Expr>),
        GamesWith(Box<Expr>),
    }

    fn expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            proptest::collection::vec(any::<u32>(), 0..30).prop_map(Expr::Positions),
            proptest::collection::vec(any::<u32>(), 0..30).prop_map(Expr::Dense),
            proptest::collection::vec(any::<u32>(), 0..8).prop_map(Expr::Games),
            Just(Expr::All),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Expr::And),
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Expr::Or),
                inner.clone().prop_map(|e| Expr::Not(Box::new(e))),
                inner.prop_map(|e| Expr::GamesWith(Box::new(e))),
            ]
        })
    }

    /// The selection as the scan evaluator builds it.
    fn eval(l: &Layout<'_>, e: &Expr, total: u32, games: u32) -> Found {
        match e {
            Expr::Positions(p) => Found::positions(
                p.iter()
                    .filter(|_| total > 0)
                    .map(|x| x % total.max(1))
                    .collect(),
            ),
            Expr::Dense(p) => {
                let mut d = fixedbitset::FixedBitSet::with_capacity(total as usize);
                for x in p.iter().filter(|_| total > 0) {
                    d.insert((x % total.max(1)) as usize);
                }
                Found::set(Positions::Dense(d))
            }
            Expr::Games(g) => Found::games(
                g.iter()
                    .filter(|_| games > 0)
                    .map(|x| x % games.max(1))
                    .collect(),
            ),
            Expr::All => Found::ALL,
            Expr::And(xs) => xs
                .iter()
                .fold(Found::ALL, |acc, x| acc.and(eval(l, x, total, games))),
            Expr::Or(xs) => l.or(xs.iter().map(|x| eval(l, x, total, games)).collect()),
            Expr::Not(x) => l.not(eval(l, x, total, games)),
            Expr::GamesWith(x) => Found::games(l.games_in(&eval(l, x, total, games))),
        }
    }

    /// The same over plain position sets.
    fn naive(starts: &[u32], e: &Expr, total: u32, games: u32) -> RoaringBitmap {
        let universe: RoaringBitmap = (0..total).collect();
        let of_games = |g: &RoaringBitmap| -> RoaringBitmap {
            g.iter()
                .flat_map(|g| starts[g as usize]..starts[g as usize + 1])
                .collect()
        };
        match e {
            Expr::Positions(p) | Expr::Dense(p) => p
                .iter()
                .filter(|_| total > 0)
                .map(|x| x % total.max(1))
                .collect(),
            Expr::Games(g) => of_games(
                &g.iter()
                    .filter(|_| games > 0)
                    .map(|x| x % games.max(1))
                    .collect(),
            ),
            Expr::All => universe,
            Expr::And(xs) => xs
                .iter()
                .fold(universe, |acc, x| acc & naive(starts, x, total, games)),
            Expr::Or(xs) => xs.iter().fold(RoaringBitmap::new(), |acc, x| {
                acc | naive(starts, x, total, games)
            }),
            Expr::Not(x) => universe - naive(starts, x, total, games),
            Expr::GamesWith(x) => {
                let inner = naive(starts, x, total, games);
                of_games(&naive_games(starts, &inner))
            }
        }
    }

    fn naive_games(starts: &[u32], p: &RoaringBitmap) -> RoaringBitmap {
        (0..starts.len().saturating_sub(1))
            .filter(|&g| (starts[g]..starts[g + 1]).any(|x| p.contains(x)))
            .map(|g| g as u32)
            .collect()
    }

    proptest! {
        /// Every combination of selections means what it means on plain position sets, games
        /// without positions included.
        #[test]
        fn selections_mean_what_position_sets_mean(
            lens in proptest::collection::vec(0u32..12, 0..20),
            e in expr(),
        ) {
            let mut starts = vec![0u32];
            for l in &lens {
                starts.push(starts.last().copied().unwrap_or(0) + l);
            }
            let total = *starts.last().unwrap_or(&0);
            let games = lens.len() as u32;
            let l = Layout::new(Cow::Owned(starts.clone()));
            let want = naive(&starts, &e, total, games);
            let got = eval(&l, &e, total, games);
            prop_assert_eq!(l.games_in(&got), naive_games(&starts, &want));
            prop_assert_eq!(l.position_count(&got), want.len());
            prop_assert_eq!(l.positions_in(got).into_sparse(), want);
        }
    }
}
