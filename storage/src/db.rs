//! A database directory: the catalog, its segments and their tag indexes.
//!
//! [`DbWriter`] appends games: it fills a [`SegmentBuilder`], writes each full segment under a
//! fresh name, and on [`DbWriter::commit`] records all of them in the catalog in one transaction.
//! A process killed before that commit leaves only unreferenced files, which the next writer
//! deletes (those its journal names: `journal.rs`); readers never see them. [`Database`] opens the committed state read-only.

use std::path::{Path, PathBuf};

use crate::batch::{EncodedBatch, encode_batch};
use crate::catalog::{CATALOG_FILE, CatalogWriter, FileChecks, LOCK_FILE, SegmentEntry};
use crate::error::{Result, StorageError};
use crate::journal::{JOURNAL_FILE, Journal, Leftover};
use crate::manifest::MANIFEST_FILE;
use crate::segment::{NewGame, Segment, SegmentBuilder, Written};
use crate::segment_entry::Registration;
use crate::tags::TagWriter;
use crate::text_dictionary::TextDictionary;
use std::sync::Arc;

mod reader;

pub use reader::{Database, DbStats};

/// Knobs of a writer.
#[derive(Copy, Clone, Debug)]
pub struct WriterOptions {
    /// A segment is closed once it holds this many positions (bounds the writer's memory).
    pub segment_positions: u64,
    /// ... or once its compressed blocks and text reach this many bytes (comment-heavy games
    /// have few positions but much text).
    pub segment_bytes: u64,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            segment_positions: 2_000_000,
            segment_bytes: 96 << 20,
        }
    }
}

/// What the thread finishing a segment gives back: the segment's catalog entry, and its
/// board-key buffer for the next segment's builder.
type Finished = Result<(SegmentEntry, Vec<u64>)>;

/// Appends games to a database, atomically.
pub struct DbWriter {
    dir: PathBuf,
    catalog: CatalogWriter,
    options: WriterOptions,
    next_id: u64,
    next_game: u64,
    next_position: u64,
    written: Vec<SegmentEntry>,
    current: Option<(SegmentBuilder, TagWriter, u64)>,
    finishing: Option<std::thread::JoinHandle<Finished>>,
    /// A written segment's board-key buffer, for the next segment's builder.
    spare: Vec<u64>,
    files: Vec<String>,
    /// The input files read whole into this append, recorded at commit.
    sources: Vec<crate::SourceRecord>,
    /// Where the ids it creates are recorded before their files are (taken at commit).
    journal: Option<Journal>,
    /// The segment ids this writer created (their files are removed if it never commits).
    created: Vec<u64>,
    committed: bool,
    /// Whether this writer made the directory (a build that commits no game removes it).
    made_dir: bool,
    /// The adjacent segments a merge replaces (empty for an append): what it writes must
    /// hold exactly their games, and its commit takes them out.
    replacing: Vec<SegmentEntry>,
    /// Whether the readers' lock existed when this writer opened (see `retire.rs`).
    readers_lock: bool,
    /// The text dictionary of the last segment closed (see [`DbWriter::text_dictionary`]).
    last_dictionary: Option<Arc<TextDictionary>>,
}

/// What a commit added.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CommitSummary {
    /// Segments added.
    pub segments: u64,
    /// Games added.
    pub games: u64,
    /// Positions added.
    pub positions: u64,
    /// Problems recorded.
    pub issues: u64,
}

impl DbWriter {
    /// Opens the database in `dir` for appending, creating it if needed (a missing or empty
    /// directory), and removes the files an earlier writer's journal says it created but never
    /// committed. A directory that is not a database is refused unless it is empty: one that
    /// holds segment files without a catalog is a damaged database (`cqldb repair` rebuilds
    /// its catalog), anything else is someone else's folder.
    pub fn open(dir: &Path, options: WriterOptions) -> Result<Self> {
        refuse_foreign_dir(dir)?;
        let made_dir = !dir.exists();
        std::fs::create_dir_all(dir).map_err(StorageError::io(dir))?;
        let catalog = CatalogWriter::open_or_create(dir)?;
        let (next_id, segments) = catalog.state()?;
        if let Some(left) = Leftover::read(dir)? {
            left.clean(dir, &segments)?;
        }
        let readers_lock = crate::retire::make_lock(dir)?;
        crate::retire::sweep(dir, &segments, readers_lock)?;
        // Never an id in use, whatever the catalog's counter says.
        let next_id = segments.iter().map(|s| s.id + 1).fold(next_id, u64::max);
        let (next_game, next_position) = segments.iter().fold((1, 0), |(g, p), s| {
            (
                g.max(s.first_game + s.games),
                p.max(s.first_position + s.positions),
            )
        });
        Ok(Self {
            dir: dir.to_owned(),
            catalog,
            options,
            next_id,
            next_game,
            next_position,
            written: Vec::new(),
            current: None,
            finishing: None,
            spare: Vec::new(),
            files: Vec::new(),
            sources: Vec::new(),
            journal: Some(Journal::new(dir)),
            created: Vec::new(),
            committed: false,
            made_dir,
            replacing: Vec::new(),
            readers_lock,
            last_dictionary: None,
        })
    }

    /// Opens the database in `dir` to merge the segments `ids`: adjacent in game order, given
    /// in that order. The games pushed must be theirs, in order (their global numbers do not
    /// change); [`DbWriter::commit`] then puts what was written in their place, atomically.
    pub fn open_replacing(dir: &Path, options: WriterOptions, ids: &[u64]) -> Result<Self> {
        if !dir.join(CATALOG_FILE).exists() && !dir.join(MANIFEST_FILE).exists() {
            return Err(crate::catalog::missing_catalog(dir));
        }
        let mut w = Self::open(dir, options)?;
        let (_, mut segments) = w.catalog.state()?;
        segments.sort_by_key(|s| s.first_game);
        let start = ids
            .first()
            .and_then(|first| segments.iter().position(|s| s.id == *first));
        let run = start.and_then(|i| segments.get(i..i + ids.len()));
        let Some(run) = run.filter(|r| r.iter().map(|s| s.id).eq(ids.iter().copied())) else {
            return Err(StorageError::Refused {
                path: dir.to_owned(),
                reason: format!(
                    "segments {ids:?} are not adjacent committed segments in game order"
                ),
            });
        };
        w.next_game = run[0].first_game;
        w.next_position = run[0].first_position;
        w.replacing = run.to_vec();
        Ok(w)
    }

    /// A fresh segment id whose names nothing in the directory uses yet (a file left by a
    /// writer from before journals, or a user's, is never written over), recorded in the
    /// journal before its files are created.
    fn allocate_id(&mut self) -> Result<u64> {
        loop {
            let id = self.next_id;
            self.next_id += 1;
            let taken = [SegmentEntry::segment_file(id), SegmentEntry::tags_dir(id)]
                .iter()
                .any(|n| self.dir.join(n).symlink_metadata().is_ok());
            if taken {
                continue;
            }
            if let Some(j) = self.journal.as_mut() {
                j.record(id)?;
            }
            self.created.push(id);
            return Ok(id);
        }
    }

    /// The segments a merge replaces, in game order (empty for an append).
    pub fn replacing(&self) -> &[SegmentEntry] {
        &self.replacing
    }

    /// The input files the database has recorded (see [`crate::source`]).
    pub fn sources(&self) -> Result<Vec<crate::SourceRecord>> {
        self.catalog.sources()
    }

    /// Positions after which a segment is closed (at the end of the batch that reaches them).
    pub fn segment_positions(&self) -> u64 {
        self.options.segment_positions
    }

    /// The global number the next game pushed will get.
    pub fn next_game(&self) -> u64 {
        self.next_game
    }

    /// Records an input file read whole into this append (kept at commit).
    pub fn record_source(&mut self, record: crate::SourceRecord) {
        self.sources.push(record);
    }

    /// Registers a source file name; returns the index to put in [`NewGame::file`].
    pub fn add_file(&mut self, name: &str) -> u32 {
        if let Some(i) = self.files.iter().position(|f| f == name) {
            return i as u32;
        }
        self.files.push(name.to_owned());
        (self.files.len() - 1) as u32
    }

    /// The text dictionary of the segment being filled, else of the last one this writer
    /// filled: what the next batches of this append are best compressed with (one dictionary
    /// for a whole append, whatever its number of input files).
    pub fn text_dictionary(&self) -> Option<Arc<TextDictionary>> {
        self.current
            .as_ref()
            .and_then(|(b, _, _)| b.text_dictionary().cloned())
            .or_else(|| self.last_dictionary.clone())
    }

    /// Appends one game; returns its global game number. (Batches compress better; see
    /// [`DbWriter::push_batch`].)
    pub fn push_game(&mut self, game: NewGame) -> Result<u64> {
        self.push_batch(encode_batch(vec![game]))
    }

    /// Appends a batch encoded with [`encode_batch`] (file indexes as returned by
    /// [`DbWriter::add_file`]); returns the global number of its first game.
    pub fn push_batch(&mut self, batch: EncodedBatch) -> Result<u64> {
        // A segment keeps one text dictionary: a batch compressed with another starts a new one.
        if let Some((builder, _, _)) = &self.current
            && !builder.takes(batch.text_dictionary.as_ref())
        {
            self.close_segment()?;
        }
        if self.current.is_none() {
            let id = self.allocate_id()?;
            let tags = TagWriter::create(&self.dir.join(SegmentEntry::tags_dir(id)))?;
            let builder = SegmentBuilder::reusing(std::mem::take(&mut self.spare));
            self.current = Some((builder, tags, id));
        }
        let Some((builder, tags, _)) = self.current.as_mut() else {
            unreachable!("a segment was just opened")
        };
        let first_local = builder.games() as u32;
        for (i, game) in batch.games.iter().enumerate() {
            tags.add(first_local + i as u32, &game.tags)?;
        }
        let mut map = Vec::new();
        for game in &batch.games {
            let name = self
                .files
                .get(game.file as usize)
                .map_or("?", String::as_str);
            let idx = builder.add_file(name);
            if map.len() <= game.file as usize {
                map.resize(game.file as usize + 1, 0);
            }
            map[game.file as usize] = idx;
        }
        let number = self.next_game;
        self.next_game += batch.games.len() as u64;
        builder.push_batch(batch, &|f| map.get(f as usize).copied().unwrap_or(0));
        if builder.positions() >= self.options.segment_positions
            || builder.data_bytes() >= self.options.segment_bytes
        {
            self.close_segment()?;
        }
        Ok(number)
    }

    /// Hands the open segment to a background thread that serialises and syncs it, so ingest
    /// goes on meanwhile; at most one segment is being finished at a time (bounds memory).
    fn close_segment(&mut self) -> Result<()> {
        let Some((builder, tags, id)) = self.current.take() else {
            return Ok(());
        };
        if let Some(d) = builder.text_dictionary() {
            self.last_dictionary = Some(Arc::clone(d));
        }
        self.join_finisher()?;
        let first_game = self.next_game - builder.games();
        let first_position = self.next_position;
        self.next_position += builder.positions();
        let dir = self.dir.clone();
        self.finishing = Some(std::thread::spawn(move || -> Finished {
            let path = dir.join(SegmentEntry::segment_file(id));
            let tags_dir = dir.join(SegmentEntry::tags_dir(id));
            let mut builder = builder;
            builder.add_tag_values(&tags.finish()?);
            let Written { stats, buffer } = builder.write(
                &path,
                Registration {
                    id,
                    first_game,
                    first_position,
                },
            )?;
            // tantivy writes some files private to the owner; they get the permissions every
            // other file of the database has (the umask's), so whoever may read it can search it.
            crate::tags::match_permissions(&tags_dir, &path)?;
            let checks = FileChecks {
                segment: stats.file_crc,
                tags: crate::tags::dir_digest(&tags_dir)?,
            };
            let bytes = file_bytes(&path)? + file_bytes(&tags_dir)?;
            let entry = SegmentEntry {
                id,
                first_game,
                first_position,
                games: stats.games,
                positions: stats.positions,
                variations: stats.variations,
                issues: stats.issues,
                bytes,
                checks: Some(checks),
            };
            Ok((entry, buffer))
        }));
        Ok(())
    }

    fn join_finisher(&mut self) -> Result<()> {
        if let Some(handle) = self.finishing.take() {
            let (entry, buffer) = handle.join().map_err(|_| {
                StorageError::corrupt(&self.dir, "the segment writer thread panicked")
            })??;
            self.written.push(entry);
            self.spare = buffer;
        }
        Ok(())
    }

    /// Writes the last segment and makes everything pushed part of the database, atomically.
    pub fn commit(mut self) -> Result<CommitSummary> {
        self.close_segment()?;
        self.join_finisher()?;
        sync_dir(&self.dir)?;
        let removed: Vec<u64> = self.replacing.iter().map(|s| s.id).collect();
        if !removed.is_empty() {
            let sum = |v: &[SegmentEntry]| -> (u64, u64) {
                v.iter()
                    .fold((0, 0), |(g, p), s| (g + s.games, p + s.positions))
            };
            if sum(&self.written) != sum(&self.replacing) {
                return Err(StorageError::corrupt(
                    &self.dir,
                    format!(
                        "a merge wrote {:?} games and positions in place of {:?}: nothing was committed",
                        sum(&self.written),
                        sum(&self.replacing)
                    ),
                ));
            }
            // Listed before the catalog stops naming them, so no crash can forget them.
            crate::retire::record(&self.dir, &removed)?;
        }
        self.catalog
            .commit_replacing(&self.written, &removed, &self.sources)?;
        if let Err(e) = self.catalog.publish() {
            let ids: Vec<u64> = self.written.iter().map(|s| s.id).collect();
            return Err(match self.catalog.published(&ids) {
                // The manifest was renamed into place before the error (a failed directory
                // sync): committed, and nothing may remove the new files.
                Some(true) | None => {
                    self.committed = true;
                    StorageError::Catalog(format!(
                        "the games were committed, but making that durable failed ({e}); run `cqldb check`"
                    ))
                }
                Some(false) => {
                    // Not committed: readers never saw these segments. Taken out of redb so
                    // that this writer's drop removes their files (else the next writer does);
                    // a merge's replaced segments go back.
                    let _ = if removed.is_empty() {
                        self.catalog.roll_back(&ids, &self.sources)
                    } else {
                        self.catalog.restore_published()
                    };
                    StorageError::Catalog(format!(
                        "writing {MANIFEST_FILE} failed ({e}): nothing was committed"
                    ))
                }
            });
        }
        self.committed = true;
        if let Some(j) = self.journal.take() {
            j.finish()?;
        }
        if !removed.is_empty() {
            // Their files go now unless a reader has the database open (then the next
            // writer removes them).
            let (_, state) = self.catalog.state()?;
            crate::retire::sweep(&self.dir, &state, self.readers_lock)?;
        }
        Ok(CommitSummary {
            segments: self.written.len() as u64,
            games: self.written.iter().map(|s| s.games).sum(),
            positions: self.written.iter().map(|s| s.positions).sum(),
            issues: self.written.iter().map(|s| s.issues).sum(),
        })
    }
}

impl Drop for DbWriter {
    /// A writer dropped without [`DbWriter::commit`] commits nothing, but first lets a segment that
    /// is being finished in the background end, so nothing writes into the directory after the
    /// writer lock is released, and removes the files it wrote (after a full disk, they would
    /// keep it full). A writer killed instead leaves them to the next writer, which removes
    /// those its journal names.
    fn drop(&mut self) {
        if let Some(handle) = self.finishing.take() {
            let _ = handle.join();
        }
        if !self.committed {
            self.current = None;
            self.remove_uncommitted();
        }
        if !self.catalog.exists() {
            // A new database that got no game (an empty or unreadable input) is no database:
            // its lock goes, and the directory if this writer made it, so nothing reads as an
            // empty database.
            let _ = std::fs::remove_file(self.dir.join(LOCK_FILE));
            let _ = std::fs::remove_file(self.dir.join(crate::retire::READERS_LOCK));
            if self.made_dir {
                let _ = std::fs::remove_dir(&self.dir);
            }
        }
    }
}

impl DbWriter {
    /// Removes the files of the segments this writer created that no catalog names, then its
    /// journal (kept when a removal failed, for the next writer to finish).
    fn remove_uncommitted(&mut self) {
        // Never a committed segment's files, whatever happened on the way here.
        let committed: Vec<u64> = match self.catalog.state() {
            Ok((_, segs)) => segs.iter().map(|s| s.id).collect(),
            Err(_) => return,
        };
        let mut all_removed = true;
        for &id in self.created.iter().filter(|id| !committed.contains(id)) {
            all_removed &= crate::journal::remove_segment_files(&self.dir, id).is_ok();
        }
        if all_removed && let Some(j) = self.journal.take() {
            j.discard();
        }
    }
}

/// Opens the segment `e` names, and checks that the file is the one committed (a valid segment
/// file copied over another's name is not).
pub fn open_segment(dir: &Path, e: &SegmentEntry) -> Result<Segment> {
    let path = dir.join(SegmentEntry::segment_file(e.id));
    let seg = Segment::open(&path)?;
    if let Some(checks) = e.checks
        && seg.recorded_crc() != checks.segment
    {
        return Err(StorageError::corrupt(
            &path,
            "not the segment file the catalog committed (replaced or copied over)",
        ));
    }
    if u64::from(seg.games()) != e.games {
        return Err(StorageError::corrupt(
            &path,
            format!("holds {} games, the catalog says {}", seg.games(), e.games),
        ));
    }
    Ok(seg)
}

/// Opens every segment of `entries`, in order, spread over the machine's cores: opening checks
/// each segment's tables, which is most of the time a command over a large database takes to
/// start.
fn open_segments(dir: &Path, entries: &[SegmentEntry]) -> Result<Vec<Segment>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = entries.len().div_ceil(cores).max(1);
    if entries.len() <= per_thread {
        return entries.iter().map(|e| open_segment(dir, e)).collect();
    }
    std::thread::scope(|scope| {
        let parts: Vec<_> = entries
            .chunks(per_thread)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|e| open_segment(dir, e))
                        .collect::<Result<Vec<_>>>()
                })
            })
            .collect();
        let mut segments = Vec::with_capacity(entries.len());
        for part in parts {
            let opened = part
                .join()
                .map_err(|_| StorageError::corrupt(dir, "opening a segment panicked"))??;
            segments.extend(opened);
        }
        Ok(segments)
    })
}

fn sync_dir(dir: &Path) -> Result<()> {
    // Directory fsync makes the new file names durable before the catalog names them.
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(StorageError::io(dir))
}

pub(crate) fn file_bytes(path: &Path) -> Result<u64> {
    let meta = std::fs::metadata(path).map_err(StorageError::io(path))?;
    if !meta.is_dir() {
        return Ok(meta.len());
    }
    let mut total = 0;
    for entry in std::fs::read_dir(path).map_err(StorageError::io(path))? {
        let entry = entry.map_err(StorageError::io(path))?;
        total += file_bytes(&entry.path())?;
    }
    Ok(total)
}

/// Refuses to make a database in `dir` unless it is one already, or is missing or empty (an
/// interrupted first build, whose journal names every segment file, counts as empty).
fn refuse_foreign_dir(dir: &Path) -> Result<()> {
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StorageError::io(dir)(e)),
    };
    if !meta.is_dir() {
        return Err(StorageError::Refused {
            path: dir.to_owned(),
            reason: "exists and is not a directory (give a new or existing database directory)"
                .into(),
        });
    }
    if [CATALOG_FILE, MANIFEST_FILE]
        .iter()
        .any(|f| dir.join(f).exists())
    {
        return Ok(());
    }
    let left = Leftover::read(dir)?.filter(|l| !l.committed);
    let journaled = |id: u64| left.as_ref().is_some_and(|l| l.created.contains(&id));
    let mut foreign = Vec::new();
    let mut segments = 0;
    for entry in std::fs::read_dir(dir).map_err(StorageError::io(dir))? {
        let name = entry
            .map_err(StorageError::io(dir))?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if [LOCK_FILE, JOURNAL_FILE, crate::retire::READERS_LOCK].contains(&name.as_str()) {
            continue;
        }
        match SegmentEntry::id_of(&name) {
            Some((id, _)) if journaled(id) => {}
            Some(_) => segments += 1,
            None => foreign.push(name),
        }
    }
    if segments > 0 {
        return Err(StorageError::LostCatalog(dir.to_owned()));
    }
    if !foreign.is_empty() {
        foreign.sort();
        let shown: Vec<&str> = foreign.iter().take(3).map(String::as_str).collect();
        return Err(StorageError::Refused {
            path: dir.to_owned(),
            reason: format!(
                "is not empty and is not a cqldb database (it holds {}{}); give a new or empty directory",
                shown.join(", "),
                if foreign.len() > 3 { ", ..." } else { "" }
            ),
        });
    }
    Ok(())
}
