//! Reading a `.gtl` file chunk by chunk, unpacking only the columns a query reads.

use std::io::Read;
use std::path::Path;

use super::packing::{unpack_into, unpack_moves};
use super::schema::TreeSchema;
use super::{CHUNK_NODES, MAGIC};
use crate::error::{Result, StorageError};

/// A decoded chunk: levels always, moves and attribute columns as asked.
#[derive(Debug, Default)]
pub struct Chunk {
    /// Pre-order number of the chunk's first node.
    pub first_id: u64,
    /// Level of each node.
    pub levels: Vec<u32>,
    /// Last move of each node (empty unless asked for).
    pub moves: Vec<String>,
    /// Attribute columns in schema order (empty where not asked for).
    pub cols: Vec<Vec<i64>>,
    /// Each node's id as its log gave it (empty when the tree has none, or not asked for):
    /// `node_id` is then the pre-order number.
    pub ids: Vec<i64>,
}

/// Streams the chunks of a `.gtl` file.
pub struct GtlReader {
    file: std::io::BufReader<std::fs::File>,
    schema: TreeSchema,
    path: std::path::PathBuf,
    next_id: u64,
    done: bool,
    /// Total nodes (known at the end marker).
    pub total: Option<u64>,
    z_buf: Vec<u8>,
    raw_buf: Vec<u8>,
    tmp_col: Vec<i64>,
    decompressor: zstd::bulk::Decompressor<'static>,
}

impl GtlReader {
    /// Opens a file and checks its header.
    pub fn open(path: &Path) -> Result<Self> {
        let f = std::fs::File::open(path).map_err(StorageError::io(path))?;
        let mut file = std::io::BufReader::new(f);
        let corrupt = |m: &str| StorageError::Corrupt {
            path: path.to_owned(),
            reason: m.to_owned(),
        };
        let mut head = [0u8; 12];
        file.read_exact(&mut head)
            .map_err(|_| corrupt("too short for a .gtl file"))?;
        if &head[..4] != MAGIC {
            return Err(corrupt("not a .gtl file (bad magic)"));
        }
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        let crc = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        if len > 1 << 20 {
            return Err(corrupt("header too large"));
        }
        let mut text = vec![0u8; len];
        file.read_exact(&mut text)
            .map_err(|_| corrupt("truncated header"))?;
        if crc32fast::hash(&text) != crc {
            return Err(corrupt("header checksum mismatch"));
        }
        let text = String::from_utf8(text).map_err(|_| corrupt("header is not UTF-8"))?;
        let mut schema = TreeSchema::default();
        for (i, line) in text.lines().enumerate() {
            if line == "ids" {
                schema.ids = true;
            } else if line.starts_with("const ") {
                schema.consts.push(TreeSchema::parse_const(line, i + 1)?);
            } else {
                schema.attrs.push(TreeSchema::parse_attr(line, i + 1)?);
            }
        }
        Ok(Self {
            file,
            schema,
            path: path.to_owned(),
            next_id: 0,
            done: false,
            total: None,
            z_buf: Vec::new(),
            raw_buf: Vec::new(),
            tmp_col: Vec::new(),
            decompressor: zstd::bulk::Decompressor::new().map_err(StorageError::io(path))?,
        })
    }

    /// The node attributes.
    pub fn schema(&self) -> &TreeSchema {
        &self.schema
    }

    fn corrupt(&self, m: &str) -> StorageError {
        StorageError::Corrupt {
            path: self.path.clone(),
            reason: m.to_owned(),
        }
    }

    /// The next chunk, with the moves if `moves` and the attribute columns marked in `want`
    /// (one past the attributes: the node ids, where the tree has them).
    pub fn next_chunk(&mut self, moves: bool, want: &[bool]) -> Result<Option<Chunk>> {
        let mut chunk = Chunk::default();
        Ok(self
            .next_chunk_into(&mut chunk, moves, want)?
            .then_some(chunk))
    }

    /// As [`Self::next_chunk`], decoding into `chunk`'s buffers (reused from chunk to chunk, so
    /// a pass allocates nothing per chunk); `false` at the end.
    pub fn next_chunk_into(
        &mut self,
        chunk: &mut Chunk,
        moves: bool,
        want: &[bool],
    ) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let mut head = [0u8; 4];
        self.file
            .read_exact(&mut head)
            .map_err(|_| self.corrupt("truncated (no end marker)"))?;
        let n = u32::from_le_bytes(head) as usize;
        if n == 0 {
            let mut total = [0u8; 8];
            self.file
                .read_exact(&mut total)
                .map_err(|_| self.corrupt("truncated end marker"))?;
            let total = u64::from_le_bytes(total);
            if total != self.next_id {
                return Err(self.corrupt("node count at the end does not match the chunks"));
            }
            self.total = Some(total);
            self.done = true;
            return Ok(false);
        }
        if n > CHUNK_NODES {
            return Err(self.corrupt("chunk sizes out of range"));
        }
        let attrs = self.schema.attrs.len();
        chunk.cols.resize_with(attrs, Vec::new);
        chunk.ids.clear();
        let mut tmp = std::mem::take(&mut self.tmp_col);
        for stream in 0..self.schema.value_columns() + 2 {
            let wanted = match stream {
                0 => true,
                1 => moves,
                k => want.get(k - 2).copied().unwrap_or(false),
            };
            if !self.read_stream(wanted)? {
                match stream {
                    0 => {}
                    1 => chunk.moves.clear(),
                    k if k - 2 < attrs => chunk.cols[k - 2].clear(),
                    _ => chunk.ids.clear(),
                }
                continue;
            }
            let raw = std::mem::take(&mut self.raw_buf);
            let r = match stream {
                0 => {
                    let r = unpack_into(&raw, &mut 0, n, true, &mut tmp);
                    chunk.levels.clear();
                    chunk.levels.extend(tmp.iter().map(|&l| l as u32));
                    r
                }
                1 => unpack_moves(&raw, n, &mut chunk.moves, &mut tmp),
                k if k - 2 < attrs => unpack_into(&raw, &mut 0, n, true, &mut chunk.cols[k - 2]),
                _ => unpack_into(&raw, &mut 0, n, true, &mut chunk.ids),
            };
            self.raw_buf = raw;
            if r.is_none() {
                self.tmp_col = tmp;
                return Err(self.corrupt("malformed chunk"));
            }
        }
        self.tmp_col = tmp;
        chunk.first_id = self.next_id;
        self.next_id += n as u64;
        Ok(true)
    }

    /// Reads one stream of a chunk: decompressed into `raw_buf` if `wanted` (checksum
    /// verified), skipped otherwise. Returns whether it was read.
    fn read_stream(&mut self, wanted: bool) -> Result<bool> {
        let mut meta = [0u8; 12];
        self.file
            .read_exact(&mut meta)
            .map_err(|_| self.corrupt("truncated chunk"))?;
        let raw_len = u32::from_le_bytes([meta[0], meta[1], meta[2], meta[3]]) as usize;
        let z_len = u32::from_le_bytes([meta[4], meta[5], meta[6], meta[7]]) as usize;
        let crc = u32::from_le_bytes([meta[8], meta[9], meta[10], meta[11]]);
        if raw_len > 64 << 20 || z_len > 64 << 20 {
            return Err(self.corrupt("chunk sizes out of range"));
        }
        if !wanted {
            self.file
                .seek_relative(z_len as i64)
                .map_err(|_| self.corrupt("truncated chunk"))?;
            return Ok(false);
        }
        let mut z = std::mem::take(&mut self.z_buf);
        z.resize(z_len, 0);
        let read = self.file.read_exact(&mut z);
        let mut raw = std::mem::take(&mut self.raw_buf);
        raw.clear();
        raw.reserve(raw_len);
        let ok = read.is_ok()
            && crc32fast::hash(&z) == crc
            && self
                .decompressor
                .decompress_to_buffer(z.as_slice(), &mut raw)
                .is_ok();
        self.z_buf = z;
        self.raw_buf = raw;
        if !ok {
            return Err(self.corrupt("truncated chunk, checksum mismatch or bad compression"));
        }
        Ok(true)
    }
}
