//! [`Database`]: the committed state of a database directory opened for reading, its segments
//! checked and their tag indexes opened on demand within a byte budget.

use std::path::{Path, PathBuf};

use roaring::RoaringBitmap;

use super::open_segments;
use crate::bitmap::BitmapKey;
use crate::catalog::{SegmentEntry, read_catalog};
use crate::columns::DecodedBlock;
use crate::error::{Result, StorageError};
use crate::segment::{GameInfo, IssueRecord, Pages, Segment};
use crate::tags::TagReader;

/// Totals over a whole database.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DbStats {
    /// Segments.
    pub segments: u64,
    /// Games.
    pub games: u64,
    /// Positions.
    pub positions: u64,
    /// Secondary moves.
    pub variations: u64,
    /// Recorded problems.
    pub issues: u64,
    /// Bytes on disk, catalog included.
    pub bytes: u64,
}

/// A database opened for reading: the committed segments, verified.
pub struct Database {
    /// Keeps a merge from removing the files of segments this reader may still read.
    _hold: crate::retire::ReaderHold,
    dir: PathBuf,
    entries: Vec<SegmentEntry>,
    segments: Vec<Segment>,
    /// The segments' tag indexes, opened when a query needs them and kept within a byte
    /// budget (repeated queries on an open database do not open them again).
    tag_readers: crate::tag_reader_cache::TagReaderCache,
}

impl Database {
    /// Opens the committed state of the database in `dir`: the catalog, and every segment's
    /// tables checked (each part of a segment is checked when it is read).
    pub fn open(dir: &Path) -> Result<Self> {
        // Taken before the catalog is read: a merge committed after this point removes
        // nothing this reader could name.
        let hold = crate::retire::ReaderHold::take(dir)?;
        let mut entries = read_catalog(dir)?;
        entries.sort_by_key(|e| e.first_game);
        let segments = open_segments(dir, &entries)?;
        let tag_readers = crate::tag_reader_cache::TagReaderCache::from_env();
        Ok(Self {
            _hold: hold,
            dir: dir.to_owned(),
            entries,
            segments,
            tag_readers,
        })
    }

    /// An error naming a file of the database that shrank while it was read since `before`
    /// (a [`crate::mapped::faults`] reading taken when the read began): then what was read
    /// may hold zeros, and no answer may come from it.
    pub fn check_shrink(&self, before: u64) -> Result<()> {
        if crate::mapped::faults() == before {
            return Ok(());
        }
        for s in &self.segments {
            s.intact()?;
        }
        match crate::mapped::shrunk_since(before, &self.dir) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Totals.
    pub fn stats(&self) -> Result<DbStats> {
        // The catalog's two copies (either may be missing: the manifest in a database written
        // before it existed, `catalog.redb` when damaged and removed; the other answers).
        let catalog: u64 = [crate::catalog::CATALOG_FILE, crate::manifest::MANIFEST_FILE]
            .iter()
            .filter_map(|f| std::fs::metadata(self.dir.join(f)).ok())
            .map(|m| m.len())
            .sum();
        Ok(DbStats {
            segments: self.entries.len() as u64,
            games: self.entries.iter().map(|e| e.games).sum(),
            positions: self.entries.iter().map(|e| e.positions).sum(),
            variations: self.entries.iter().map(|e| e.variations).sum(),
            issues: self.entries.iter().map(|e| e.issues).sum(),
            bytes: catalog + self.entries.iter().map(|e| e.bytes).sum::<u64>(),
        })
    }

    /// The catalog entries and opened segments, in game order.
    pub fn segments(&self) -> impl Iterator<Item = (&SegmentEntry, &Segment)> {
        self.entries.iter().zip(&self.segments)
    }

    /// Number of games.
    pub fn game_count(&self) -> u64 {
        self.entries.iter().map(|e| e.games).sum()
    }

    fn locate(&self, game: u64) -> Result<(usize, u32)> {
        let i = self
            .entries
            .partition_point(|e| e.first_game + e.games <= game);
        match self.entries.get(i) {
            Some(e) if game >= e.first_game => Ok((i, (game - e.first_game) as u32)),
            _ => Err(StorageError::NotFound {
                what: "game",
                number: game,
                available: self.game_count(),
            }),
        }
    }

    /// Provenance and attributes of game `game` (numbered from 1).
    pub fn game_info(&self, game: u64) -> Result<GameInfo> {
        let (s, local) = self.locate(game)?;
        self.segments[s].game_info(local)
    }

    /// The original text of a game.
    pub fn game_text(&self, game: u64) -> Result<Vec<u8>> {
        let (s, local) = self.locate(game)?;
        self.segments[s].game_text(local)
    }

    /// The position table of a game, with its comments and NAGs.
    pub fn game_positions(&self, game: u64) -> Result<DecodedBlock> {
        let (s, local) = self.locate(game)?;
        self.segments[s].game_positions(local)
    }

    /// Every recorded problem: (global game number, source file, issue).
    pub fn issues(&self) -> Result<Vec<(u64, String, IssueRecord)>> {
        let mut out = Vec::new();
        for (e, s) in self.segments() {
            out.extend(
                s.issues()?
                    .into_iter()
                    .map(|(i, f)| (e.first_game + u64::from(i.game), f, i)),
            );
        }
        Ok(out)
    }

    /// The tag index of one of the database's segments.
    pub fn tag_reader(&self, entry: &SegmentEntry) -> Result<std::sync::Arc<TagReader>> {
        let Some(i) = self.entries.iter().position(|e| e.id == entry.id) else {
            return Err(StorageError::corrupt(
                &self.dir,
                format!("segment {} is not in this database", entry.id),
            ));
        };
        self.tag_readers.get_or_open(i, || {
            let dir = self.dir.join(SegmentEntry::tags_dir(entry.id));
            match self.entries[i].checks {
                Some(checks) => TagReader::open_checked(&dir, checks.tags),
                None => TagReader::open(&dir),
            }
        })
    }

    /// Global game numbers whose tags match a tantivy query (see [`TagReader::search`]).
    pub fn search_tags(&self, query: &str) -> Result<Vec<u64>> {
        self.search_tags_then(query, Pages::Keep)
    }

    /// [`Self::search_tags`] for a process that searches once (a command): each segment's
    /// pages are dropped from the process once it is searched ([`Pages::Release`]), so that
    /// the peak does not grow with the number of segments.
    pub fn search_tags_once(&self, query: &str) -> Result<Vec<u64>> {
        self.search_tags_then(query, Pages::Release)
    }

    fn search_tags_then(&self, query: &str, pages: Pages) -> Result<Vec<u64>> {
        let before = crate::mapped::faults();
        let out = self.search_tags_unchecked(query, pages);
        self.check_shrink(before)?;
        out
    }

    fn search_tags_unchecked(&self, query: &str, pages: Pages) -> Result<Vec<u64>> {
        // A field no game has is a mistake (`foo:bar`, `plyer:carlsen`), not a search with
        // no answer: refused, with the fields and the tags there are. The names are gathered
        // in the same pass as the search, so each segment's index is opened once.
        let asked = crate::tags::tag_fields(query)?;
        let mut present = std::collections::BTreeSet::new();
        let mut found: Result<Vec<u64>> = Ok(Vec::new());
        for (e, segment) in self.entries.iter().zip(&self.segments) {
            let reader = self.tag_reader(e)?;
            if !asked.is_empty() {
                present.extend(reader.tag_names()?);
            }
            let Ok(out) = &mut found else {
                // The other segments are opened only for the names an unknown field's error
                // lists.
                if asked.is_empty() {
                    break;
                }
                continue;
            };
            let games_of = |v: u32| segment.bitmap(BitmapKey::TagValue(v));
            let mut all = RoaringBitmap::new();
            all.insert_range(0..e.games as u32);
            // The games' attributes are checked only if the query reads them (`year:`, `elo:`,
            // ...): checking them up front read 37 bytes per game of every segment, and a
            // `white:` search at 10 M games peaked at 382 MB for it. A failed check is the
            // search's error, not a game without attributes, and ends the asking (a failed
            // check is not remembered: each game would hash the whole part again).
            let damaged = std::cell::RefCell::new(None);
            let meta = |g: u32| {
                if damaged.borrow().is_some() {
                    return None;
                }
                match segment.game_meta(g) {
                    Ok(m) => m,
                    Err(err) => {
                        *damaged.borrow_mut() = Some(err);
                        None
                    }
                }
            };
            let games = reader.search(query, &games_of, &all, &meta);
            let games = match damaged.into_inner() {
                Some(err) => Err(err),
                None => games,
            };
            match games {
                Ok(games) => out.extend(games.into_iter().map(|g| e.first_game + u64::from(g))),
                Err(err) => found = Err(err),
            }
            segment.done_reading(pages);
        }
        if let Some(unknown) = asked.iter().find(|f| !present.contains(*f)) {
            let tags: Vec<&str> = present
                .iter()
                .map(String::as_str)
                .filter(|t| !crate::tags::QUERY_FIELDS.contains(t))
                .collect();
            let known = crate::tags::QUERY_FIELDS
                .iter()
                .copied()
                .chain(present.iter().map(String::as_str));
            let hint = crate::did_you_mean(unknown, known)
                .map(|s| format!(" (did you mean '{s}'?)"))
                .unwrap_or_default();
            return Err(StorageError::TagQuery(format!(
                "no game has a field or tag '{unknown}'{hint}: the fields are {}; the other \
                 tags these games have are {}",
                crate::tags::QUERY_FIELDS.join(", "),
                if tags.is_empty() {
                    "none".to_owned()
                } else {
                    tags.join(", ")
                }
            )));
        }
        found
    }

    /// Number of positions (over all segments) in a bitmap; games for game keys.
    pub fn bitmap_count(&self, key: BitmapKey) -> Result<u64> {
        let mut n = 0;
        for s in &self.segments {
            n += s.bitmap(key)?.len();
        }
        Ok(n)
    }
}
