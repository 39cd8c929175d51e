//! Writing a `.gtl` file: nodes are gathered into chunks, packed and compressed on a second
//! thread.

use std::io::Write;
use std::path::Path;

use super::packing::pack_column;
use super::schema::{NodeRow, TreeSchema};
use super::{CHUNK_NODES, MAGIC};
use crate::error::{Result, StorageError};

/// One chunk's columns on their way to the writer thread (moves as one byte run with end
/// offsets; the writer thread interns them, keeping hashing off the parsing thread).
#[derive(Default)]
struct ChunkData {
    levels: Vec<i64>,
    move_bytes: Vec<u8>,
    move_ends: Vec<u32>,
    cols: Vec<Vec<i64>>,
}

type Finisher = std::thread::JoinHandle<Result<std::io::BufWriter<std::fs::File>>>;

/// Writes a `.gtl` file: nodes are buffered one chunk at a time and each full chunk is packed,
/// compressed and written on a second thread; the file appears under its name only when
/// [`GtlWriter::finish`] succeeds.
pub struct GtlWriter {
    tmp: std::path::PathBuf,
    path: std::path::PathBuf,
    attrs: usize,
    cur: ChunkData,
    nodes: u64,
    prev_level: Option<u32>,
    to_worker: Option<std::sync::mpsc::SyncSender<ChunkData>>,
    recycled: std::sync::mpsc::Receiver<ChunkData>,
    worker: Option<Finisher>,
}

impl GtlWriter {
    /// Starts a file at `path`.
    pub fn create(path: &Path, schema: &TreeSchema) -> Result<Self> {
        let tmp = path.with_extension("gtl.tmp");
        let f = std::fs::File::create(&tmp).map_err(StorageError::io(&tmp))?;
        let mut file = std::io::BufWriter::new(f);
        let header = schema.to_text();
        let w = |file: &mut std::io::BufWriter<std::fs::File>, b: &[u8]| {
            file.write_all(b).map_err(StorageError::io(&tmp))
        };
        w(&mut file, MAGIC)?;
        w(&mut file, &(header.len() as u32).to_le_bytes())?;
        w(&mut file, &crc32fast::hash(header.as_bytes()).to_le_bytes())?;
        w(&mut file, header.as_bytes())?;
        let (to_worker, from_main) = std::sync::mpsc::sync_channel::<ChunkData>(2);
        let (back, recycled) = std::sync::mpsc::channel::<ChunkData>();
        let wtmp = tmp.clone();
        let worker = std::thread::Builder::new()
            .name("gtl-writer".into())
            .spawn(move || -> Result<std::io::BufWriter<std::fs::File>> {
                let mut index = rustc_hash::FxHashMap::default();
                for mut chunk in from_main {
                    write_chunk(&mut file, &wtmp, &chunk, &mut index)?;
                    chunk.levels.clear();
                    chunk.move_bytes.clear();
                    chunk.move_ends.clear();
                    for c in &mut chunk.cols {
                        c.clear();
                    }
                    let _ = back.send(chunk);
                }
                Ok(file)
            })
            .map_err(StorageError::io(&tmp))?;
        Ok(Self {
            tmp,
            path: path.to_owned(),
            attrs: schema.attrs.len(),
            cur: ChunkData {
                cols: vec![Vec::new(); schema.attrs.len()],
                ..ChunkData::default()
            },
            nodes: 0,
            prev_level: None,
            to_worker: Some(to_worker),
            recycled,
            worker: Some(worker),
        })
    }

    /// Adds the next node (pre-order).
    pub fn push(&mut self, node: &NodeRow) -> Result<()> {
        self.push_parts(node.level, node.last_move.as_bytes(), &node.values)
    }

    /// Adds the next node from its parts (no allocation for a move already in the chunk).
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
        for (c, v) in self.cur.cols.iter_mut().zip(values) {
            c.push(*v);
        }
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
        let next = self.recycled.try_recv().unwrap_or_else(|_| ChunkData {
            cols: vec![Vec::new(); self.attrs],
            ..ChunkData::default()
        });
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

    fn join(&mut self) -> Result<std::io::BufWriter<std::fs::File>> {
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
        let tmp = self.tmp.clone();
        file.write_all(&0u32.to_le_bytes())
            .and_then(|_| file.write_all(&self.nodes.to_le_bytes()))
            .map_err(StorageError::io(&tmp))?;
        let f = file
            .into_inner()
            .map_err(|e| StorageError::io(&tmp)(e.into_error()))?;
        f.sync_all().map_err(StorageError::io(&tmp))?;
        std::fs::rename(&tmp, &self.path).map_err(StorageError::io(&self.path))?;
        Ok(self.nodes)
    }
}

/// Interns the moves, packs, compresses and appends one chunk.
fn write_chunk(
    file: &mut std::io::BufWriter<std::fs::File>,
    tmp: &Path,
    c: &ChunkData,
    index: &mut rustc_hash::FxHashMap<Vec<u8>, u32>,
) -> Result<()> {
    let n = c.levels.len();
    // Each column is its own zstd stream, so a reader decompresses only what a query reads.
    let mut streams: Vec<Vec<u8>> = Vec::with_capacity(2 + c.cols.len());
    let mut raw = Vec::with_capacity(n + 9);
    pack_column(&mut raw, &c.levels);
    streams.push(raw);
    // Moves: the chunk's distinct moves, then an index per node.
    index.clear();
    let mut table: Vec<&[u8]> = Vec::new();
    let mut ids = Vec::with_capacity(n);
    let mut start = 0usize;
    for &end in &c.move_ends {
        let m = &c.move_bytes[start..end as usize];
        start = end as usize;
        let id = match index.get(m) {
            Some(&id) => id,
            None => {
                let id = table.len() as u32;
                table.push(m);
                index.insert(m.to_vec(), id);
                id
            }
        };
        ids.push(i64::from(id));
    }
    let mut raw = Vec::new();
    raw.extend_from_slice(&(table.len() as u32).to_le_bytes());
    for m in &table {
        raw.push(m.len() as u8);
        raw.extend_from_slice(m);
    }
    pack_column(&mut raw, &ids);
    streams.push(raw);
    for col in &c.cols {
        let mut raw = Vec::with_capacity(n * 2 + 9);
        pack_column(&mut raw, col);
        streams.push(raw);
    }
    let w = |file: &mut std::io::BufWriter<std::fs::File>, b: &[u8]| {
        file.write_all(b).map_err(StorageError::io(tmp))
    };
    w(file, &(n as u32).to_le_bytes())?;
    for raw in &streams {
        // The thread's reused context and buffer (a context per stream showed in profiles).
        let z = crate::columns::compress(raw, 1);
        w(file, &(raw.len() as u32).to_le_bytes())?;
        w(file, &(z.len() as u32).to_le_bytes())?;
        w(file, &crc32fast::hash(&z).to_le_bytes())?;
        w(file, &z)?;
    }
    Ok(())
}
