//! The games a scan reads: game numbers (all, or a pushed-down list) cut into chunks, each
//! chunk decoded from its segments' blocks in one pass (a block is decompressed once for all
//! the chunk's games in it).

use std::sync::Arc;

use anyhow::Result;
use cqldb_executor::Game;
use cqldb_executor::source::game_from_rows;
use cqldb_storage::{Database, GameInfo, Pages};

/// A decoded game with its provenance.
pub struct Decoded {
    /// Its whole tree (variations included), tags, comments and NAGs when read with text.
    pub game: Game,
    /// Source file and line, problems recorded.
    pub info: GameInfo,
}

/// Which games a scan reads.
#[derive(Clone, Debug)]
pub enum GameSet {
    /// Numbers `from..to` (1-based, `to` exclusive).
    Range(u64, u64),
    /// These numbers, ascending.
    List(Arc<Vec<u64>>, usize, usize),
}

impl GameSet {
    /// How many games.
    pub fn len(&self) -> u64 {
        match self {
            Self::Range(a, b) => b.saturating_sub(*a),
            Self::List(_, a, b) => (b - a) as u64,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The set cut into `parts` consecutive pieces (the scan's partitions).
    pub fn split(&self, parts: usize) -> Vec<GameSet> {
        let parts = parts.max(1) as u64;
        let n = self.len();
        let step = n.div_ceil(parts).max(1);
        let mut out = Vec::new();
        let mut at = 0;
        while at < n {
            let end = (at + step).min(n);
            out.push(match self {
                Self::Range(a, _) => Self::Range(a + at, a + end),
                Self::List(l, a, _) => Self::List(l.clone(), a + at as usize, a + end as usize),
            });
            at = end;
        }
        out
    }

    /// The next game number, if any is left.
    pub fn front(&self) -> Option<u64> {
        match self {
            Self::Range(a, b) => (a < b).then_some(*a),
            Self::List(l, a, b) => (a < b).then(|| l.get(*a).copied()).flatten(),
        }
    }

    /// Takes the next `n` game numbers off the front.
    pub fn take(&mut self, n: u64) -> Vec<u64> {
        match self {
            Self::Range(a, b) => {
                let end = (*a + n).min(*b);
                let out = (*a..end).collect();
                *a = end;
                out
            }
            Self::List(l, a, b) => {
                let end = (*a + n as usize).min(*b);
                let out = l[*a..end].to_vec();
                *a = end;
                out
            }
        }
    }
}

/// Games per decoded chunk (one record batch of the `games` table).
pub const CHUNK_GAMES: u64 = 512;

/// What of a game a scan reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Its tree of positions, without the text.
    Positions,
    /// Its tree and its text (tags, comments, NAGs).
    PositionsAndText,
    /// Its text alone (tags): no position is decoded, the game's tree is empty.
    TextOnly,
}

/// Decodes the games of `set` a chunk at a time.
pub struct Chunks {
    db: Arc<Database>,
    set: GameSet,
    reading: Reading,
    passed: PassedSegments,
}

impl Chunks {
    /// `pages`: what becomes of a segment's pages once the chunks have passed it.
    pub fn new(db: Arc<Database>, set: GameSet, reading: Reading, pages: Pages) -> Self {
        Self {
            passed: PassedSegments::new(&db, &set, pages),
            db,
            set,
            reading,
        }
    }

    /// The next chunk's games, in order; `None` when every game was read.
    pub fn next_chunk(&mut self) -> Option<Result<Vec<Decoded>>> {
        let numbers = self.set.take(CHUNK_GAMES);
        let &last = numbers.last()?;
        let decoded = match self.reading {
            Reading::Positions => decode(&self.db, &numbers, false),
            Reading::PositionsAndText => decode(&self.db, &numbers, true),
            Reading::TextOnly => decode_text(&self.db, &numbers),
        };
        self.passed.reached(&self.db, last, self.set.front());
        Some(decoded)
    }
}

/// The segments a scan in ascending game order is done with, handed to
/// [`cqldb_storage::Segment::done_reading`] as it passes them.
pub struct PassedSegments {
    pages: Pages,
    /// Segments before this index (in the database's order) are done with.
    done: usize,
}

impl PassedSegments {
    /// For a scan of `set`: the segments before its first game are not its to release.
    pub fn new(db: &Database, set: &GameSet, pages: Pages) -> Self {
        let done = match (pages, set.front()) {
            (Pages::Keep, _) | (_, None) => 0,
            (Pages::Release, Some(first)) => db
                .segments()
                .take_while(|(e, _)| e.first_game + e.games <= first)
                .count(),
        };
        Self { pages, done }
    }

    /// The scan has read up to game `last`, and `next` is the next game it will read (`None`:
    /// it is finished): every segment ending before `next` is done with, and at the end, every
    /// segment holding a game up to `last`. (Another partition may still read a released
    /// segment: it faults its pages in again, the answers are the same.)
    pub fn reached(&mut self, db: &Database, last: u64, next: Option<u64>) {
        if self.pages == Pages::Keep {
            return;
        }
        for (entry, seg) in db.segments().skip(self.done) {
            let passed = match next {
                Some(next) => entry.first_game + entry.games <= next,
                None => entry.first_game <= last,
            };
            if !passed {
                break;
            }
            seg.done_reading(self.pages);
            self.done += 1;
        }
    }
}

/// Calls `f` for each segment holding some of `numbers` (ascending, 1-based) with the
/// segment's first game number and those games' segment-local numbers; numbers past the end
/// are skipped.
fn for_each_segment_part(
    db: &Database,
    numbers: &[u64],
    mut f: impl FnMut(u64, &cqldb_storage::Segment, &roaring::RoaringBitmap) -> Result<()>,
) -> Result<()> {
    let mut first = 1u64;
    let mut rest = numbers;
    for (entry, seg) in db.segments() {
        let end = first + entry.games;
        let here = rest.partition_point(|&g| g < end);
        let (mine, later) = rest.split_at(here);
        rest = later;
        if !mine.is_empty() {
            let locals: roaring::RoaringBitmap = mine
                .iter()
                .filter(|&&g| g >= first)
                .map(|&g| (g - first) as u32)
                .collect();
            f(first, seg, &locals)?;
        }
        first = end;
        if rest.is_empty() {
            break;
        }
    }
    Ok(())
}

/// Decodes the games numbered `numbers` (ascending, 1-based) with their trees (and their text
/// with `with_text`); numbers past the end are skipped.
pub fn decode(db: &Database, numbers: &[u64], with_text: bool) -> Result<Vec<Decoded>> {
    let mut out = Vec::with_capacity(numbers.len());
    for_each_segment_part(db, numbers, |first, seg, locals| {
        let mut failure = None;
        seg.for_each_game_in(Some(locals), with_text, |local, rows| {
            match seg.game_info(local) {
                Ok(info) => out.push(Decoded {
                    game: game_from_rows(first + u64::from(local), rows, with_text, true),
                    info,
                }),
                Err(e) => failure = Some(e),
            }
            Ok(())
        })?;
        match failure {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    })?;
    Ok(out)
}

/// The games numbered `numbers` (ascending) with their tags and no positions.
pub fn decode_text(db: &Database, numbers: &[u64]) -> Result<Vec<Decoded>> {
    let mut out = Vec::with_capacity(numbers.len());
    for_each_segment_part(db, numbers, |first, seg, locals| {
        seg.for_each_game_text_in(locals, |local, text| {
            let info = seg.game_info(local)?;
            let tags = cqldb_indexer::tags::scan_tags(text);
            out.push(Decoded {
                game: Game::new(first + u64::from(local), Vec::new(), tags, true),
                info,
            });
            Ok(())
        })?;
        Ok(())
    })?;
    Ok(out)
}

/// The number of games in the database.
pub fn game_count(db: &Database) -> u64 {
    db.segments().map(|(e, _)| e.games).sum()
}
