//! Writing a `.gtl` file: nodes are gathered into chunks, packed and compressed on a second
//! thread.

use std::io::Write;
use std::path::Path;

use super::packing::pack_column;
use super::schema::{NodeRow, TreeSchema};
use super::{CHUNK_NODES, MAGIC};
use crate::error::{Result, StorageError};
use crate::output_file::AtomicFile;

/// One chunk on its way to the writer thread. The parsing thread only appends: moves as one
/// byte run with end offsets, values row by row. The writer thread interns the moves and
/// turns rows into columns, keeping that work off the thread that sets the pace.
#[derive(Default)]
struct ChunkData {
    levels: Vec<i64>,
    move_bytes: Vec<u8>,
    move_ends: Vec<u32>,
    rows: Vec<i64>,
}

impl ChunkData {
    /// Room for a whole chunk: growing a chunk's vectors by doubling copied them, and faulted
    /// in fresh pages, on the parsing thread.
    fn with_capacity(attrs: usize) -> Self {
        Self {
            levels: Vec::with_capacity(CHUNK_NODES),
            move_bytes: Vec::with_capacity(CHUNK_NODES * 4),
            move_ends: Vec::with_capacity(CHUNK_NODES),
            rows: Vec::with_capacity(CHUNK_NODES * attrs),
        }
    }
}

/// Bytes written between syncs of the unfinished file.
const SYNC_EVERY: usize = 16 << 20;

type Finisher = std::thread::JoinHandle<Result<AtomicFile>>;

/// Writes a `.gtl` file: nodes are buffered one chunk at a time and each full chunk is packed,
/// compressed and written on a second thread; the file appears under its name only when
/// [`GtlWriter::finish`] succeeds.
pub struct GtlWriter {
    path: std::path::PathBuf,
    attrs: usize,
    cur: ChunkData,
    nodes: u64,
    prev_level: Option<u32>,
    to_worker: Option<std::sync::mpsc::SyncSender<ChunkData>>,
    recycled: std::sync::mpsc::Receiver<ChunkData>,
    worker: Option<Finisher>,
    finished: bool,
}

impl Drop for GtlWriter {
    /// A writer dropped before [`GtlWriter::finish`] (a failed import) removes its unfinished
    /// file: nothing half-written is left behind.
    fn drop(&mut self) {
        if !self.finished {
            // The file's own drop removes its temporary name.
            let _ = self.join();
        }
    }
}

impl GtlWriter {
    /// Starts a file at `path` (written under a temporary name, see [`AtomicFile`]; the caller
    /// has checked `path` with `refuse_unsafe_target`).
    pub fn create(path: &Path, schema: &TreeSchema) -> Result<Self> {
        let mut file = AtomicFile::create(path)?;
        let tmp = path.to_owned();
        let header = schema.to_text();
        let w = |file: &mut AtomicFile, b: &[u8]| file.write_all(b).map_err(StorageError::io(&tmp));
        w(&mut file, MAGIC)?;
        w(&mut file, &(header.len() as u32).to_le_bytes())?;
        w(&mut file, &crc32fast::hash(header.as_bytes()).to_le_bytes())?;
        w(&mut file, header.as_bytes())?;
        let (to_worker, from_main) = std::sync::mpsc::sync_channel::<ChunkData>(2);
        let (back, recycled) = std::sync::mpsc::channel::<ChunkData>();
        let wtmp = tmp.clone();
        let attrs = schema.value_columns();
        let worker = std::thread::Builder::new()
            .name("gtl-writer".into())
            .spawn(move || -> Result<AtomicFile> {
                let mut index = MoveIndex::default();
                let mut unsynced = 0usize;
                for mut chunk in from_main {
                    unsynced += write_chunk(&mut file, &wtmp, &chunk, attrs, &mut index)?;
                    if unsynced >= SYNC_EVERY {
                        // Waiting for the disk here overlaps with parsing; one sync at the end
                        // was a tenth of an import.
                        file.sync_data().map_err(StorageError::io(&wtmp))?;
                        unsynced = 0;
                    }
                    chunk.levels.clear();
                    chunk.move_bytes.clear();
                    chunk.move_ends.clear();
                    chunk.rows.clear();
                    let _ = back.send(chunk);
                }
                Ok(file)
            })
            .map_err(StorageError::io(&tmp))?;
        Ok(Self {
            path: tmp,
            attrs: schema.value_columns(),
            cur: ChunkData::with_capacity(schema.value_columns()),
            nodes: 0,
            prev_level: None,
            to_worker: Some(to_worker),
            recycled,
            worker: Some(worker),
            finished: false,
        })
    }

    /// Adds the next node (pre-order).
    pub fn push(&mut self, node: &NodeRow) -> Result<()> {
        self.push_parts(node.level, node.last_move.as_bytes(), &node.values)
    }

    /// Adds the next node from its parts (no allocation for a move already in the chunk):
    /// one value per attribute, then its id where the schema has ids.
    pub fn push_parts(&mut self, level: u32, last_move: &[u8], values: &[i64]) -> Result<()> {
        if values.len() != self.attrs {
            return Err(StorageError::Format(
                "node has the wrong number of values".into(),
            ));
        }
        let ok = match self.prev_level {
            None => level == 0,
            Some(p) => level >= 1 && level <= p + 1,
        };
        if !ok {
            return Err(StorageError::Format(format!(
                "node {} has level {level} after {:?}: not a pre-order tree",
                self.nodes, self.prev_level
            )));
        }
        self.prev_level = Some(level);
        self.cur.levels.push(i64::from(level));
        self.cur
            .move_bytes
            .extend_from_slice(&last_move[..last_move.len().min(255)]);
        self.cur.move_ends.push(self.cur.move_bytes.len() as u32);
        self.cur.rows.extend_from_slice(values);
        self.nodes += 1;
        if self.cur.levels.len() == CHUNK_NODES {
            self.flush_chunk()?;
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<()> {
        if self.cur.levels.is_empty() {
            return Ok(());
        }
        let next = self
            .recycled
            .try_recv()
            .unwrap_or_else(|_| ChunkData::with_capacity(self.attrs));
        let full = std::mem::replace(&mut self.cur, next);
        let sent = self
            .to_worker
            .as_ref()
            .is_some_and(|t| t.send(full).is_ok());
        if !sent {
            // The writer thread stopped: its error comes out of `finish`.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    fn join(&mut self) -> Result<AtomicFile> {
        self.to_worker = None;
        let worker = self
            .worker
            .take()
            .ok_or_else(|| StorageError::Format("the .gtl writer already stopped".into()))?;
        worker
            .join()
            .map_err(|_| StorageError::Format("the .gtl writer thread panicked".into()))?
    }

    /// Writes the last chunk and the end marker, syncs, and renames the file into place.
    pub fn finish(mut self) -> Result<u64> {
        self.flush_chunk()?;
        let mut file = self.join()?;
        let tmp = self.path.clone();
        file.write_all(&0u32.to_le_bytes())
            .and_then(|_| file.write_all(&self.nodes.to_le_bytes()))
            .map_err(StorageError::io(&tmp))?;
        file.commit()?;
        self.finished = true;
        Ok(self.nodes)
    }
}

/// A chunk's distinct moves so far, by move.
#[derive(Default)]
struct MoveIndex {
    /// Moves of up to 7 bytes, keyed by [`short_key`]: almost all of them, and a hash of a
    /// word is far cheaper than one of a byte string.
    short: rustc_hash::FxHashMap<u64, u32>,
    long: rustc_hash::FxHashMap<Vec<u8>, u32>,
}

/// A move of up to 7 bytes as one word: its bytes, and its length in the top byte (so `a`
/// and `a\0` differ).
fn short_key(m: &[u8]) -> Option<u64> {
    let mut key = [0u8; 8];
    key.get_mut(..7)?.get_mut(..m.len())?.copy_from_slice(m);
    key[7] = m.len() as u8;
    Some(u64::from_le_bytes(key))
}

impl MoveIndex {
    /// The id of `m`: its old one, or `next` if it is new to the chunk.
    fn intern(&mut self, m: &[u8], next: u32) -> u32 {
        match short_key(m) {
            Some(k) => *self.short.entry(k).or_insert(next),
            // Looked up before inserting, so only a new move is copied.
            None => match self.long.get(m) {
                Some(&id) => id,
                None => *self.long.entry(m.to_vec()).or_insert(next),
            },
        }
    }

    fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
    }
}

/// Interns the moves, packs, compresses and appends one chunk; returns the bytes written.
fn write_chunk(
    file: &mut AtomicFile,
    tmp: &Path,
    c: &ChunkData,
    attrs: usize,
    index: &mut MoveIndex,
) -> Result<usize> {
    let n = c.levels.len();
    // Each column is its own zstd stream, so a reader decompresses only what a query reads.
    let mut streams: Vec<Vec<u8>> = Vec::with_capacity(2 + attrs);
    let mut raw = Vec::with_capacity(n + 9);
    pack_column(&mut raw, c.levels.iter().copied());
    streams.push(raw);
    // Moves: the chunk's distinct moves, then an index per node.
    index.clear();
    let mut table: Vec<&[u8]> = Vec::new();
    let mut ids = Vec::with_capacity(n);
    let mut start = 0usize;
    for &end in &c.move_ends {
        let m = &c.move_bytes[start..end as usize];
        start = end as usize;
        let next = table.len() as u32;
        let id = index.intern(m, next);
        if id == next {
            table.push(m);
        }
        ids.push(i64::from(id));
    }
    let mut raw = Vec::new();
    raw.extend_from_slice(&(table.len() as u32).to_le_bytes());
    for m in &table {
        raw.push(m.len() as u8);
        raw.extend_from_slice(m);
    }
    pack_column(&mut raw, ids.iter().copied());
    streams.push(raw);
    for a in 0..attrs {
        let mut raw = Vec::with_capacity(n * 2 + 9);
        pack_column(&mut raw, c.rows.chunks_exact(attrs).map(|row| row[a]));
        streams.push(raw);
    }
    let w = |file: &mut AtomicFile, b: &[u8]| file.write_all(b).map_err(StorageError::io(tmp));
    w(file, &(n as u32).to_le_bytes())?;
    let mut written = 4;
    for raw in &streams {
        // The thread's reused context and buffer (a context per stream showed in profiles).
        let z = crate::columns::compress(raw, 1);
        w(file, &(raw.len() as u32).to_le_bytes())?;
        w(file, &(z.len() as u32).to_le_bytes())?;
        w(file, &crc32fast::hash(&z).to_le_bytes())?;
        w(file, &z)?;
        written += 12 + z.len();
    }
    Ok(written)
}
