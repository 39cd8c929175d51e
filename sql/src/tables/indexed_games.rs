//! The `games` columns a segment already holds, read without decoding a game: numbers,
//! results, years, ratings, ECO codes, plies and positions, sources and problems come from the
//! segment's per-game columns and game bitmaps (the ones CQL's `result`, `year` and `elo` scan),
//! so an aggregate over every game costs a few bitmap reads per segment instead of decompressing
//! every game's text.
//!
//! Every value here must equal what [`super::games`] computes from the decoded game. Where the
//! index cannot tell (a `Result` tag that is none of the four spellings or missing, a year or
//! rating outside 0..=65535, a rating of 0, a game with variations for `variations`), that game
//! is decoded after all — only it, and only for that column. A segment written before the
//! result-tag, year and rating bitmaps existed is read from its text throughout.
//! `tests/indexed_games.rs` compares both ways on games with odd tags.

use std::sync::Arc;

use anyhow::Result;
use cqldb_storage::schema::{ELO_BAND_WIDTH, date_year, rating};
use cqldb_storage::{BitmapKey, Database, GameResult, PositionFlags, Segment};
use datafusion::arrow::array::ArrayRef;
use roaring::RoaringBitmap;
use shakmaty::Color;

use super::games::{COLUMNS, eco_text};
use super::{ints, texts};

/// The columns this module reads from the index.
const INDEXED: &[&str] = &[
    "game",
    "result",
    "white_elo",
    "black_elo",
    "eco",
    "year",
    "plies",
    "positions",
    "variations",
    "source_file",
    "source_line",
    "errors",
];

/// Whether every column of `columns` comes from the index.
pub fn covers(columns: &[usize]) -> bool {
    columns.iter().all(|&c| INDEXED.contains(&COLUMNS[c].0))
}

/// The four `Result` spellings a result-tag bitmap holds.
const RESULTS: [GameResult; 4] = [
    GameResult::WhiteWins,
    GameResult::BlackWins,
    GameResult::Draw,
    GameResult::Unknown,
];

/// One segment's games as the index knows them, for the columns a scan asked for.
pub struct SegmentGames {
    /// Number of the segment's first game.
    first: u64,
    /// Position in the database's segment list.
    index: usize,
    /// The `Result` tag when it is one of the four spellings.
    result: Vec<Option<GameResult>>,
    /// Year of the first `Date` tag, when in 0..=65535.
    year: Vec<Option<u16>>,
    /// Positions at depth > 0, per game.
    variation_positions: Vec<u32>,
    /// Games whose value of some asked column only the text gives.
    need_text: RoaringBitmap,
    /// Games whose `variations` only the tree gives.
    need_tree: RoaringBitmap,
    /// The asked columns, by name.
    names: Vec<&'static str>,
}

impl SegmentGames {
    /// Reads segment `index` (whose first game is `first`) for `columns`.
    pub fn read(seg: &Segment, index: usize, first: u64, columns: &[usize]) -> Result<Self> {
        let names: Vec<&'static str> = columns.iter().map(|&c| COLUMNS[c].0).collect();
        let games = seg.games();
        let asks = |n: &str| names.contains(&n);
        let mut out = Self {
            first,
            index,
            result: Vec::new(),
            year: Vec::new(),
            variation_positions: Vec::new(),
            need_text: RoaringBitmap::new(),
            need_tree: RoaringBitmap::new(),
            names: names.clone(),
        };
        let mut recent = seg.has_bitmap(BitmapKey::ResultTag(GameResult::Unknown))?
            && seg.has_bitmap(BitmapKey::YearOutside)?;
        for c in Color::ALL {
            recent = recent && seg.has_bitmap(BitmapKey::EloOutside(c))?;
        }
        let by_text = asks("result") || asks("year") || asks("white_elo") || asks("black_elo");
        if by_text && !recent {
            out.need_text.insert_range(0..games);
        }
        if asks("result") && recent {
            out.result = vec![None; games as usize];
            let mut known = RoaringBitmap::new();
            for r in RESULTS {
                let b = seg.bitmap(BitmapKey::ResultTag(r))?;
                for g in &b {
                    if let Some(slot) = out.result.get_mut(g as usize) {
                        *slot = Some(r);
                    }
                }
                known |= b;
            }
            // Missing, or some other text: the text says which.
            let mut unknown = RoaringBitmap::new();
            unknown.insert_range(0..games);
            out.need_text |= unknown - known;
        }
        if asks("year") && recent {
            out.year = vec![None; games as usize];
            for key in seg.keys_between(BitmapKey::Year(0), BitmapKey::Year(u16::MAX))? {
                let BitmapKey::Year(y) = key else { continue };
                for g in &seg.bitmap(key)? {
                    if let Some(slot) = out.year.get_mut(g as usize) {
                        *slot = Some(y);
                    }
                }
            }
            out.need_text |= seg.bitmap(BitmapKey::YearOutside)?;
        }
        for (color, name) in [(Color::White, "white_elo"), (Color::Black, "black_elo")] {
            if asks(name) && recent {
                out.need_text |= unclear_ratings(seg, color)?;
            }
        }
        if asks("plies") || asks("variations") {
            out.variation_positions = variation_positions(seg)?;
            if asks("variations") {
                for (g, &n) in out.variation_positions.iter().enumerate() {
                    if n > 0 {
                        out.need_tree.insert(g as u32);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Position of the segment in the database's list.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The asked columns of the games `locals` (ascending segment-local numbers).
    pub fn arrays(&self, seg: &Segment, locals: &[u32]) -> Result<Vec<ArrayRef>> {
        let only = |need: &RoaringBitmap| -> RoaringBitmap {
            locals
                .iter()
                .copied()
                .filter(|g| need.contains(*g))
                .collect()
        };
        let mut tags: std::collections::HashMap<u32, Vec<(String, String)>> = Default::default();
        seg.for_each_game_text_in(&only(&self.need_text), |local, text| {
            tags.insert(local, cqldb_indexer::tags::scan_tags(text));
            Ok(())
        })?;
        let mut variations: std::collections::HashMap<u32, i64> = Default::default();
        let tree = only(&self.need_tree);
        if !tree.is_empty() {
            seg.for_each_game_positions_in(&tree, |local, positions| {
                let n = positions.iter().filter(|p| p.child_index > 0).count();
                variations.insert(local, n as i64);
                Ok(())
            })?;
        }
        let files = seg.source_files();
        let tag = |local: u32, name: &str| -> Option<Option<String>> {
            let t = tags.get(&local)?;
            Some(t.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()))
        };
        let starts = seg.game_starts()?;
        // Checked here: the per-game reads below then cannot fail.
        seg.check_attributes()?;
        let positions = |g: u32| -> i64 {
            let i = g as usize;
            match (starts.get(i), starts.get(i + 1)) {
                (Some(a), Some(b)) => i64::from(b - a),
                _ => 0,
            }
        };
        let l = locals.iter().copied();
        let mut out = Vec::with_capacity(self.names.len());
        for &name in &self.names {
            out.push(match name {
                "game" => ints(l.clone().map(|g| Some((self.first + u64::from(g)) as i64))),
                "result" => texts(l.clone().map(|g| match tag(g, "Result") {
                    Some(written) => written,
                    None => self.result[g as usize].map(|r| r.as_pgn().to_owned()),
                })),
                "year" => ints(l.clone().map(|g| match tag(g, "Date") {
                    Some(date) => date.as_deref().and_then(date_year),
                    None => self.year.get(g as usize).copied().flatten().map(i64::from),
                })),
                "white_elo" | "black_elo" => {
                    let written = if name == "white_elo" {
                        "WhiteElo"
                    } else {
                        "BlackElo"
                    };
                    ints(l.clone().map(|g| match tag(g, written) {
                        Some(v) => v.as_deref().and_then(rating),
                        None => {
                            let meta = seg.game_meta(g).ok().flatten()?;
                            let elo = if name == "white_elo" {
                                meta.white_elo
                            } else {
                                meta.black_elo
                            };
                            (elo > 0).then_some(i64::from(elo))
                        }
                    }))
                }
                "eco" => texts(l.clone().map(|g| {
                    seg.game_meta(g)
                        .ok()
                        .flatten()
                        .and_then(|m| eco_text(m.eco))
                })),
                "plies" => ints(l.clone().map(|g| {
                    let v = i64::from(
                        self.variation_positions
                            .get(g as usize)
                            .copied()
                            .unwrap_or(0),
                    );
                    Some((positions(g) - v - 1).max(0))
                })),
                "positions" => ints(l.clone().map(|g| Some(positions(g)))),
                "variations" => ints(
                    l.clone()
                        .map(|g| Some(variations.get(&g).copied().unwrap_or(0))),
                ),
                "source_file" => texts(l.clone().map(|g| {
                    seg.game_source(g)
                        .ok()
                        .flatten()
                        .and_then(|s| files.get(s.file as usize).copied())
                })),
                "source_line" => ints(
                    l.clone()
                        .map(|g| seg.game_source(g).ok().flatten().map(|s| i64::from(s.line))),
                ),
                "errors" => ints(l.clone().map(|g| {
                    seg.game_source(g)
                        .ok()
                        .flatten()
                        .map(|s| i64::from(s.issues))
                })),
                other => anyhow::bail!("the games column {other} is not read from the index"),
            });
        }
        Ok(out)
    }
}

/// Games whose rating of `color` the per-game column does not give: it keeps 0 both for none
/// and for a rating of 0, and has no room for one outside 0..=65535. A game in a rating bitmap
/// of band 0 or outside every band is read from its text (with the stored 0 it can only be one
/// of those, and the text settles it).
fn unclear_ratings(seg: &Segment, color: Color) -> Result<RoaringBitmap> {
    let mut out = seg.bitmap(BitmapKey::EloOutside(color))?;
    let bands = seg.keys_between(
        BitmapKey::EloBand(color, 0),
        BitmapKey::EloBand(color, u16::MAX / ELO_BAND_WIDTH),
    )?;
    let mut rated = RoaringBitmap::new();
    for key in bands {
        rated |= seg.bitmap(key)?;
    }
    for g in &rated {
        let stored = seg.game_meta(g)?.map(|m| match color {
            Color::White => m.white_elo,
            Color::Black => m.black_elo,
        });
        if stored == Some(0) {
            out.insert(g);
        }
    }
    Ok(out)
}

/// Positions at depth > 0 per game, from the variation flag's bitmap (main-line plies are the
/// game's positions less these, less the root).
fn variation_positions(seg: &Segment) -> Result<Vec<u32>> {
    let starts = seg.game_starts()?;
    let games = starts.len().saturating_sub(1);
    let variation = seg.bitmap(BitmapKey::flag(PositionFlags::VARIATION))?;
    let mut counts = vec![0u32; games];
    let mut g = 0usize;
    for p in &variation {
        while g < games && starts[g + 1] <= p {
            g += 1;
        }
        if let Some(c) = counts.get_mut(g) {
            *c += 1;
        }
    }
    Ok(counts)
}

/// A `games` scan read from the index: each call gives the asked columns of some games, one
/// group of arrays per segment they fall in, keeping the last segment's values for the next.
pub struct IndexedGames {
    db: Arc<Database>,
    /// First game number and game count of each segment, in order.
    spans: Vec<(u64, u64)>,
    columns: Vec<usize>,
    current: Option<SegmentGames>,
}

impl IndexedGames {
    pub fn new(db: Arc<Database>, columns: Vec<usize>) -> Self {
        let mut first = 1u64;
        let spans = db
            .segments()
            .map(|(e, _)| {
                let span = (first, e.games);
                first += e.games;
                span
            })
            .collect();
        Self {
            db,
            spans,
            columns,
            current: None,
        }
    }

    /// The asked columns of the games `numbers` (ascending, 1-based; numbers past the end are
    /// skipped), one group per segment.
    pub fn arrays(&mut self, numbers: &[u64]) -> Result<Vec<Vec<ArrayRef>>> {
        let mut out = Vec::new();
        let mut rest = numbers;
        while let Some(&g) = rest.first() {
            let index = self.spans.partition_point(|&(first, n)| first + n <= g);
            let Some(&(first, n)) = self.spans.get(index) else {
                break;
            };
            let here = rest.partition_point(|&x| x < first + n);
            let (mine, later) = rest.split_at(here);
            rest = later;
            let Some((_, seg)) = self.db.segments().nth(index) else {
                break;
            };
            if self.current.as_ref().map(SegmentGames::index) != Some(index) {
                self.current = Some(SegmentGames::read(seg, index, first, &self.columns)?);
            }
            let locals: Vec<u32> = mine.iter().map(|&x| (x - first) as u32).collect();
            if let Some(games) = &self.current {
                out.push(games.arrays(seg, &locals)?);
            }
        }
        Ok(out)
    }
}
