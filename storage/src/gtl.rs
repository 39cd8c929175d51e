//! Search-tree logs for GTQL: the schema of node attributes, the plain-text log format any
//! engine can write with printf, and the compact columnar `.gtl` file `cqldb gtql import` makes.
//!
//! Text log (version 1), one line each, `#` starts a comment line:
//!
//! ```text
//! gtql-log 1
//! const INF 32000
//! attr type enum PVNode=0 CUTNode=1 ALLNode=2
//! attr flags flags QRootNode=1 QNode=2 NullMove=4 Research=8
//! attr depth int
//! nodes
//! 0 - 0 0 5
//! 1 e2e4 1 0 4
//! ```
//!
//! After `nodes`, one line per node in depth-first pre-order: its level (root = 0, a child is one
//! deeper than its parent), the move that led to it (`-` for none), then one integer per
//! attribute in declaration order (enum constants and flag names may be written by name, flags
//! joined with `|`). `node_id` (pre-order number, root = 0) and `last_move` always exist.
//!
//! `.gtl` (version 2): `GTL2`, the header text (CRC-checked), then chunks of up to
//! [`CHUNK_NODES`] nodes, each a node count and one zstd stream with its own CRC per column
//! (levels; the chunk's move list and an index per node; one column per attribute, each stored
//! at the narrowest width that holds its range), then an end marker with the node count. A chunk is decoded on its own and
//! only the columns a query reads are unpacked, so a tree larger than memory streams.

use std::io::{BufRead, Read, Write};
use std::path::Path;

use crate::error::{Result, StorageError};

/// Nodes per `.gtl` chunk.
pub const CHUNK_NODES: usize = 1 << 16;
const MAGIC: &[u8; 4] = b"GTL2";

/// How an attribute's integers are to be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// A plain integer.
    Int,
    /// One of named values.
    Enum(Vec<(String, i64)>),
    /// Bit flags with names.
    Flags(Vec<(String, i64)>),
}

/// A declared node attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrDef {
    /// Name (a letter, then letters, digits, `_`).
    pub name: String,
    /// Kind.
    pub kind: AttrKind,
}

/// The attributes of a tree's nodes (besides `node_id` and `last_move`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeSchema {
    /// Attributes in declaration order.
    pub attrs: Vec<AttrDef>,
    /// Constants not tied to one attribute (`const NAME value`; the GT-log aliases).
    pub consts: Vec<(String, i64)>,
}

impl TreeSchema {
    /// Every named constant (enum values and flag bits) with its value.
    pub fn constants(&self) -> Vec<(String, i64)> {
        let mut out: Vec<(String, i64)> = self
            .attrs
            .iter()
            .flat_map(|a| match &a.kind {
                AttrKind::Int => Vec::new(),
                AttrKind::Enum(v) | AttrKind::Flags(v) => v.clone(),
            })
            .collect();
        out.extend(self.consts.iter().cloned());
        out
    }

    /// The header lines of the text format (without `gtql-log` and `nodes`).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for (n, v) in &self.consts {
            s.push_str(&format!("const {n} {v}\n"));
        }
        for a in &self.attrs {
            s.push_str("attr ");
            s.push_str(&a.name);
            match &a.kind {
                AttrKind::Int => s.push_str(" int"),
                AttrKind::Enum(v) | AttrKind::Flags(v) => {
                    s.push_str(if matches!(a.kind, AttrKind::Enum(_)) {
                        " enum"
                    } else {
                        " flags"
                    });
                    for (n, x) in v {
                        s.push_str(&format!(" {n}={x}"));
                    }
                }
            }
            s.push('\n');
        }
        s
    }

    fn parse_const(line: &str, lineno: usize) -> Result<(String, i64)> {
        let bad = |m: &str| StorageError::Format(format!("line {lineno}: {m}"));
        let mut w = line.split_whitespace().skip(1);
        let (Some(n), Some(v), None) = (w.next(), w.next(), w.next()) else {
            return Err(bad("expected 'const NAME value'"));
        };
        if !valid_name(n) {
            return Err(bad(&format!("'{n}' is not a usable constant name")));
        }
        let v = v
            .parse::<i64>()
            .map_err(|_| bad(&format!("'{v}' is not an integer")))?;
        Ok((n.to_owned(), v))
    }

    fn parse_attr(line: &str, lineno: usize) -> Result<AttrDef> {
        let bad = |m: &str| StorageError::Format(format!("line {lineno}: {m}"));
        let mut w = line.split_whitespace();
        w.next();
        let name = w.next().ok_or_else(|| bad("attr needs a name"))?.to_owned();
        if !valid_name(&name) || matches!(name.as_str(), "node_id" | "last_move") {
            return Err(bad(&format!("'{name}' is not a usable attribute name")));
        }
        let kind = w.next().ok_or_else(|| bad("attr needs a type"))?;
        let mut consts = Vec::new();
        for c in w {
            let (n, v) = c
                .split_once('=')
                .ok_or_else(|| bad(&format!("expected NAME=value, found '{c}'")))?;
            if !valid_name(n) {
                return Err(bad(&format!("'{n}' is not a usable constant name")));
            }
            let v = v
                .parse::<i64>()
                .map_err(|_| bad(&format!("'{v}' is not an integer")))?;
            consts.push((n.to_owned(), v));
        }
        let kind = match kind {
            "int" => AttrKind::Int,
            "enum" => AttrKind::Enum(consts),
            "flags" => AttrKind::Flags(consts),
            other => return Err(bad(&format!("unknown attribute type '{other}'"))),
        };
        Ok(AttrDef { name, kind })
    }
}

fn valid_name(n: &str) -> bool {
    let mut c = n.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
        && !matches!(
            n,
            "node" | "child" | "subtree" | "count" | "and" | "or" | "not"
        )
}

/// One node as read from a log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRow {
    /// Depth in the tree (root = 0).
    pub level: u32,
    /// The move that led to it (`-` for the root).
    pub last_move: String,
    /// Attribute values in schema order.
    pub values: Vec<i64>,
}

/// Streams the nodes of a text log.
pub struct TextLogReader<R> {
    input: R,
    schema: TreeSchema,
    bytes: Vec<u8>,
    lineno: usize,
    prev_level: Option<u32>,
}

impl<R: BufRead> TextLogReader<R> {
    /// Reads the header.
    pub fn new(mut input: R) -> Result<Self> {
        let mut line = String::new();
        let mut lineno = 0;
        let mut schema = TreeSchema::default();
        let mut seen_magic = false;
        loop {
            line.clear();
            if input
                .read_line(&mut line)
                .map_err(StorageError::io("log"))?
                == 0
            {
                return Err(StorageError::Format("log ends before 'nodes'".into()));
            }
            lineno += 1;
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if !seen_magic {
                if t != "gtql-log 1" {
                    return Err(StorageError::Format(format!(
                        "line {lineno}: expected 'gtql-log 1', found '{t}'"
                    )));
                }
                seen_magic = true;
                continue;
            }
            if t == "nodes" {
                break;
            }
            if t.starts_with("attr ") {
                schema.attrs.push(TreeSchema::parse_attr(t, lineno)?);
            } else if t.starts_with("const ") {
                schema.consts.push(TreeSchema::parse_const(t, lineno)?);
            } else {
                return Err(StorageError::Format(format!(
                    "line {lineno}: expected 'attr' or 'nodes', found '{t}'"
                )));
            }
        }
        Ok(Self {
            input,
            schema,
            bytes: Vec::new(),
            lineno,
            prev_level: None,
        })
    }

    /// The declared attributes.
    pub fn schema(&self) -> &TreeSchema {
        &self.schema
    }

    /// The next node, `None` at the end.
    pub fn next_node(&mut self) -> Result<Option<NodeRow>> {
        let mut mv = Vec::new();
        let mut values = Vec::new();
        Ok(self.next_parts(&mut mv, &mut values)?.map(|level| NodeRow {
            level,
            last_move: String::from_utf8_lossy(&mv).into_owned(),
            values,
        }))
    }

    /// Calls `f` for every remaining node (level, last move, values), parsing whole buffers of
    /// lines at a time: the fastest way through a large log.
    pub fn for_each_node(
        &mut self,
        mut f: impl FnMut(u32, &[u8], &[i64]) -> Result<()>,
    ) -> Result<u64> {
        let (mut mv, mut values) = (Vec::new(), Vec::new());
        let mut count = 0u64;
        loop {
            let buf = self.input.fill_buf().map_err(StorageError::io("log"))?;
            if buf.is_empty() {
                if !self.bytes.is_empty() {
                    self.lineno += 1;
                    let r = parse_line(
                        &self.bytes,
                        &self.schema,
                        &mut self.prev_level,
                        self.lineno,
                        &mut mv,
                        &mut values,
                    );
                    self.bytes.clear();
                    if let Some(level) = r? {
                        f(level, &mv, &values)?;
                        count += 1;
                    }
                }
                return Ok(count);
            }
            let Some(last) = memchr::memrchr(b'\n', buf) else {
                let n = buf.len();
                self.bytes.extend_from_slice(buf);
                self.input.consume(n);
                continue;
            };
            let mut start = 0;
            if !self.bytes.is_empty() {
                // Finish the line that began in the previous buffer.
                let end = memchr::memchr(b'\n', buf).unwrap_or(last);
                self.bytes.extend_from_slice(&buf[..end]);
                self.lineno += 1;
                let r = parse_line(
                    &self.bytes,
                    &self.schema,
                    &mut self.prev_level,
                    self.lineno,
                    &mut mv,
                    &mut values,
                );
                self.bytes.clear();
                if let Some(level) = r? {
                    f(level, &mv, &values)?;
                    count += 1;
                }
                start = end + 1;
            }
            let base = start;
            for end in memchr::memchr_iter(b'\n', &buf[base..=last]) {
                let line = &buf[start..base + end];
                self.lineno += 1;
                if let Some(level) = parse_line(
                    line,
                    &self.schema,
                    &mut self.prev_level,
                    self.lineno,
                    &mut mv,
                    &mut values,
                )? {
                    f(level, &mv, &values)?;
                    count += 1;
                }
                start = base + end + 1;
            }
            self.input.consume(last + 1);
        }
    }

    /// The next node into reused buffers: returns its level, `None` at the end. Lines are
    /// parsed in the reader's buffer where they lie whole (no copy).
    pub fn next_parts(&mut self, mv: &mut Vec<u8>, values: &mut Vec<i64>) -> Result<Option<u32>> {
        loop {
            let buf = self.input.fill_buf().map_err(StorageError::io("log"))?;
            if buf.is_empty() {
                if self.bytes.is_empty() {
                    return Ok(None);
                }
                self.lineno += 1;
                let r = parse_line(
                    &self.bytes,
                    &self.schema,
                    &mut self.prev_level,
                    self.lineno,
                    mv,
                    values,
                );
                self.bytes.clear();
                match r? {
                    Some(l) => return Ok(Some(l)),
                    None => continue,
                }
            }
            match memchr::memchr(b'\n', buf) {
                Some(pos) => {
                    self.lineno += 1;
                    let r = if self.bytes.is_empty() {
                        parse_line(
                            &buf[..pos],
                            &self.schema,
                            &mut self.prev_level,
                            self.lineno,
                            mv,
                            values,
                        )
                    } else {
                        self.bytes.extend_from_slice(&buf[..pos]);
                        let r = parse_line(
                            &self.bytes,
                            &self.schema,
                            &mut self.prev_level,
                            self.lineno,
                            mv,
                            values,
                        );
                        self.bytes.clear();
                        r
                    };
                    self.input.consume(pos + 1);
                    if let Some(level) = r? {
                        return Ok(Some(level));
                    }
                }
                None => {
                    let n = buf.len();
                    self.bytes.extend_from_slice(buf);
                    self.input.consume(n);
                }
            }
        }
    }
}

/// A decimal integer (optional `-`) ending at a space or the line's end, read at `at` and
/// stepped over; `None` (and `at` unchanged) for anything else.
#[inline]
fn number_at(line: &[u8], at: &mut usize) -> Option<i64> {
    let n = line.len();
    let neg = line.get(*at) == Some(&b'-');
    let first = *at + usize::from(neg);
    let mut i = first;
    let mut v: i64 = 0;
    while i < n {
        let d = line[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(i64::from(d));
        i += 1;
    }
    if i == first || i - first > 18 || (i < n && !line[i].is_ascii_whitespace()) {
        return None;
    }
    *at = i;
    Some(if neg { -v } else { v })
}

/// Parses one node line; `None` for a blank or comment line.
fn parse_line(
    line: &[u8],
    schema: &TreeSchema,
    prev_level: &mut Option<u32>,
    lineno: usize,
    mv: &mut Vec<u8>,
    values: &mut Vec<i64>,
) -> Result<Option<u32>> {
    let bad = |m: String| StorageError::Format(format!("line {lineno}: {m}"));
    let line = line.trim_ascii();
    if line.is_empty() || line[0] == b'#' {
        return Ok(None);
    }
    // One scan over the line: numbers are parsed as their digits are passed.
    let n = line.len();
    let mut at = 0usize;
    let skip = |at: &mut usize| {
        while *at < n && line[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    let word_end = |at: usize| {
        let mut e = at;
        while e < n && !line[e].is_ascii_whitespace() {
            e += 1;
        }
        e
    };
    skip(&mut at);
    let level = number_at(line, &mut at)
        .and_then(|l| u32::try_from(l).ok())
        .ok_or_else(|| bad("expected a level".into()))?;
    match *prev_level {
        None if level != 0 => {
            return Err(bad("the first node must be the root (level 0)".into()));
        }
        Some(p) if level > p + 1 => {
            return Err(bad(format!(
                "level {level} after level {p}: a node can only be one deeper than the node before it"
            )));
        }
        Some(_) if level == 0 => return Err(bad("a second root (level 0)".into())),
        _ => {}
    }
    *prev_level = Some(level);
    skip(&mut at);
    let e = word_end(at);
    if e == at {
        return Err(bad("expected the last move".into()));
    }
    mv.clear();
    mv.extend_from_slice(&line[at..e]);
    at = e;
    values.clear();
    for a in &schema.attrs {
        skip(&mut at);
        if at >= n {
            return Err(bad(format!("missing value for '{}'", a.name)));
        }
        let start = at;
        let v = number_at(line, &mut at).or_else(|| {
            let e = word_end(start);
            at = e;
            value_of(a, &String::from_utf8_lossy(&line[start..e]))
        });
        values.push(v.ok_or_else(|| {
            bad(format!(
                "'{}' is not a value of '{}'",
                String::from_utf8_lossy(&line[start..word_end(start)]),
                a.name
            ))
        })?);
    }
    skip(&mut at);
    if at < n {
        return Err(bad("more values than declared attributes".into()));
    }
    Ok(Some(level))
}

fn value_of(a: &AttrDef, tok: &str) -> Option<i64> {
    if let Ok(v) = tok.parse::<i64>() {
        return Some(v);
    }
    match &a.kind {
        AttrKind::Int => None,
        AttrKind::Enum(c) => c.iter().find(|(n, _)| n == tok).map(|(_, v)| *v),
        AttrKind::Flags(c) => {
            let mut v = 0;
            for part in tok.split('|') {
                v |= c.iter().find(|(n, _)| n == part)?.1;
            }
            Some(v)
        }
    }
}

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

/// Converts a GT-log `.gtf` file (the paper's format: post-order records with last-child and
/// previous-sibling links) into pre-order nodes, calling `f` for each. Fields become `int`
/// attributes, aliases constants; the last move is written as its number.
pub fn import_gtf(
    path: &Path,
    mut f: impl FnMut(&TreeSchema, u32, &[u8], &[i64]) -> Result<()>,
) -> Result<u64> {
    let file = std::fs::File::open(path).map_err(StorageError::io(path))?;
    // SAFETY: read-only map of a file we do not modify; a concurrent writer could only make
    // the bounds-checked reads below fail or see other bytes.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(StorageError::io(path))?;
    let bytes: &[u8] = &map;
    let bad = |m: String| StorageError::Format(format!("{}: {m}", path.display()));
    // Header: text lines.
    let mut at = 0usize;
    let line = |at: &mut usize| -> Result<String> {
        let rest = bytes.get(*at..).unwrap_or_default();
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| bad("header line without newline".into()))?;
        let l = String::from_utf8_lossy(&rest[..end]).trim().to_owned();
        *at += end + 1;
        Ok(l)
    };
    let first = line(&mut at)?;
    let nums: Vec<usize> = first
        .split_whitespace()
        .map(|w| {
            w.parse()
                .map_err(|_| bad(format!("bad header line '{first}'")))
        })
        .collect::<Result<_>>()?;
    let [_, _, rec_size, aliases, fields] = nums[..] else {
        return Err(bad(format!("header line '{first}' needs 5 numbers")));
    };
    let mut schema = TreeSchema::default();
    for _ in 0..aliases {
        let l = line(&mut at)?;
        let mut w = l.split_whitespace();
        let (Some(n), Some(v)) = (w.next(), w.next()) else {
            return Err(bad(format!("bad alias line '{l}'")));
        };
        let v = v
            .parse::<i64>()
            .map_err(|_| bad(format!("bad alias value in '{l}'")))?;
        schema.consts.push((n.to_owned(), v));
    }
    let mut layout = Vec::new();
    for _ in 0..fields {
        let l = line(&mut at)?;
        let w: Vec<&str> = l.split_whitespace().collect();
        let [name, off, size] = w[..] else {
            return Err(bad(format!("bad field line '{l}'")));
        };
        let off: usize = off
            .parse()
            .map_err(|_| bad(format!("bad offset in '{l}'")))?;
        let size: usize = size
            .parse()
            .map_err(|_| bad(format!("bad size in '{l}'")))?;
        if !matches!(size, 1 | 2 | 4 | 8) || off + size > rec_size {
            return Err(bad(format!("field '{name}' does not fit the record")));
        }
        schema.attrs.push(AttrDef {
            name: name.to_owned(),
            kind: AttrKind::Int,
        });
        layout.push((off, size));
    }
    let body = &bytes[at..];
    let stride = 16 + rec_size;
    if !body.len().is_multiple_of(stride) {
        return Err(bad(format!(
            "body of {} bytes is not a whole number of {stride}-byte records",
            body.len()
        )));
    }
    let n = body.len() / stride;
    if n == 0 {
        return Ok(0);
    }
    let u32_at = |i: usize, k: usize| -> u32 {
        let o = i * stride + 4 * k;
        u32::from_le_bytes([body[o], body[o + 1], body[o + 2], body[o + 3]])
    };
    // Record i (0-based) has id i + 1; the root is the last record.
    let mut emitted = 0u64;
    let mut stack: Vec<(usize, u32)> = vec![(n - 1, 0)];
    let mut kids = Vec::new();
    let mut values = vec![0i64; layout.len()];
    let mut mv = Vec::with_capacity(12);
    while let Some((i, level)) = stack.pop() {
        let rec = &body[i * stride + 16..(i + 1) * stride];
        for (v, &(off, size)) in values.iter_mut().zip(&layout) {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(&rec[off..off + size]);
            let shift = 64 - 8 * size as u32;
            *v = (i64::from_le_bytes(b) << shift) >> shift;
        }
        mv.clear();
        if level == 0 {
            mv.push(b'-');
        } else {
            use std::io::Write as _;
            let _ = write!(mv, "{}", u32_at(i, 3));
        }
        f(&schema, level, &mv, &values)?;
        emitted += 1;
        if emitted > n as u64 {
            return Err(bad("child links form a cycle".into()));
        }
        // Children: from the last child back along previous-sibling links, then reversed,
        // pushed so that the first child is visited first.
        kids.clear();
        let mut c = u32_at(i, 1);
        while c != 0 {
            let ci = c as usize - 1;
            if ci >= i || kids.len() > n {
                return Err(bad(format!("node {} has a bad child link {c}", i + 1)));
            }
            kids.push(ci);
            c = u32_at(ci, 2);
        }
        for &k in &kids {
            stack.push((k, level + 1));
        }
    }
    Ok(emitted)
}

/// Frame-of-reference packing: base (i64), width (1, 2, 4 or 8 bytes), values - base.
fn pack_column(out: &mut Vec<u8>, v: &[i64]) {
    // One pass for both bounds (two passes read the column from memory twice).
    let (min, max) = v
        .iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let (min, max) = if v.is_empty() { (0, 0) } else { (min, max) };
    let span = (max as i128 - min as i128) as u128;
    let width: u8 = if span < 1 << 8 {
        1
    } else if span < 1 << 16 {
        2
    } else if span < 1 << 32 {
        4
    } else {
        8
    };
    out.extend_from_slice(&min.to_le_bytes());
    out.push(width);
    out.reserve(v.len() * width as usize);
    // One loop per width: the generic slice-of-bytes version was a fifth of import time.
    match width {
        1 => out.extend(v.iter().map(|&x| x.wrapping_sub(min) as u8)),
        2 => {
            for &x in v {
                out.extend_from_slice(&(x.wrapping_sub(min) as u16).to_le_bytes());
            }
        }
        4 => {
            for &x in v {
                out.extend_from_slice(&(x.wrapping_sub(min) as u32).to_le_bytes());
            }
        }
        _ => {
            for &x in v {
                out.extend_from_slice(&(x.wrapping_sub(min) as u64).to_le_bytes());
            }
        }
    }
}

/// Reads a packed column of `n` values at `at` into `out`, advancing `at`; `want` = false
/// skips it (and leaves `out` empty).
fn unpack_into(raw: &[u8], at: &mut usize, n: usize, want: bool, out: &mut Vec<i64>) -> Option<()> {
    let base = i64::from_le_bytes(raw.get(*at..*at + 8)?.try_into().ok()?);
    let width = *raw.get(*at + 8)? as usize;
    if !matches!(width, 1 | 2 | 4 | 8) {
        return None;
    }
    let start = *at + 9;
    let end = start.checked_add(width.checked_mul(n)?)?;
    let bytes = raw.get(start..end)?;
    *at = end;
    out.clear();
    if !want {
        return Some(());
    }
    match width {
        1 => out.extend(bytes.iter().map(|&b| base.wrapping_add(i64::from(b)))),
        2 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|c| base.wrapping_add(i64::from(u16::from_le_bytes([c[0], c[1]])))),
        ),
        4 => {
            out.extend(bytes.chunks_exact(4).map(|c| {
                base.wrapping_add(i64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            }))
        }
        _ => out.extend(bytes.chunks_exact(8).map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            base.wrapping_add(u64::from_le_bytes(a) as i64)
        })),
    }
    Some(())
}

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
            if line.starts_with("const ") {
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

    /// The next chunk, with the moves if `moves` and the attribute columns marked in `want`.
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
        let mut tmp = std::mem::take(&mut self.tmp_col);
        for stream in 0..attrs + 2 {
            let wanted = match stream {
                0 => true,
                1 => moves,
                k => want.get(k - 2).copied().unwrap_or(false),
            };
            if !self.read_stream(wanted)? {
                if stream >= 2 {
                    chunk.cols[stream - 2].clear();
                } else {
                    chunk.moves.clear();
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
                k => unpack_into(&raw, &mut 0, n, true, &mut chunk.cols[k - 2]),
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

/// The move stream of a chunk: its move list, then an index per node.
fn unpack_moves(raw: &[u8], n: usize, out: &mut Vec<String>, tmp: &mut Vec<i64>) -> Option<()> {
    let count = u32::from_le_bytes(raw.get(0..4)?.try_into().ok()?) as usize;
    let mut at = 4;
    let mut table = Vec::with_capacity(count);
    for _ in 0..count {
        let len = *raw.get(at)? as usize;
        table.push(String::from_utf8_lossy(raw.get(at + 1..at + 1 + len)?).into_owned());
        at += 1 + len;
    }
    unpack_into(raw, &mut at, n, true, tmp)?;
    out.clear();
    for &i in tmp.iter() {
        out.push(table.get(usize::try_from(i).ok()?)?.clone());
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# a tree\ngtql-log 1\nattr type enum PVNode=0 CUTNode=1 ALLNode=2\n\
attr flags flags QRootNode=1 QNode=2\nattr value int\nnodes\n0 - PVNode 0 5\n1 e2e4 CUTNode QRootNode|QNode -300000\n2 e7e5 2 2 7\n1 d2d4 ALLNode 0 1\n";

    #[test]
    fn text_log_round_trips_through_gtl() {
        let mut r = TextLogReader::new(LOG.as_bytes()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gtl");
        let mut w = GtlWriter::create(&path, r.schema()).unwrap();
        let mut rows = Vec::new();
        while let Some(n) = r.next_node().unwrap() {
            w.push(&n).unwrap();
            rows.push(n);
        }
        assert_eq!(w.finish().unwrap(), 4);
        assert_eq!(rows[1].values, vec![1, 3, -300000]);
        let mut g = GtlReader::open(&path).unwrap();
        assert_eq!(g.schema(), r.schema());
        let c = g.next_chunk(true, &[true, true, true]).unwrap().unwrap();
        assert_eq!(c.levels, vec![0, 1, 2, 1]);
        assert_eq!(c.moves, vec!["-", "e2e4", "e7e5", "d2d4"]);
        assert_eq!(c.cols[2], vec![5, -300000, 7, 1]);
        assert!(g.next_chunk(false, &[]).unwrap().is_none());
        assert_eq!(g.total, Some(4));
    }

    #[test]
    fn bad_logs_are_errors_with_lines() {
        for (log, want) in [
            ("gtql-log 2\n", "line 1"),
            ("gtql-log 1\nattr x float\nnodes\n", "line 2"),
            ("gtql-log 1\nattr x int\nnodes\n1 - 0\n", "line 4"),
            ("gtql-log 1\nattr x int\nnodes\n0 - 0\n2 a 0\n", "line 5"),
            ("gtql-log 1\nattr x int\nnodes\n0 - zz\n", "line 4"),
        ] {
            let err = TextLogReader::new(log.as_bytes()).and_then(|mut r| {
                while r.next_node()?.is_some() {}
                Ok(())
            });
            let msg = err.unwrap_err().to_string();
            assert!(msg.contains(want), "{log:?}: {msg}");
        }
    }

    #[test]
    fn corrupt_gtl_is_an_error() {
        let mut r = TextLogReader::new(LOG.as_bytes()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gtl");
        let mut w = GtlWriter::create(&path, r.schema()).unwrap();
        while let Some(n) = r.next_node().unwrap() {
            w.push(&n).unwrap();
        }
        w.finish().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 20;
        bytes[last] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let mut g = GtlReader::open(&path).unwrap();
        assert!(g.next_chunk(true, &[true, true, true]).is_err());
    }

    #[test]
    fn gtf_post_order_becomes_pre_order() {
        let mut f = b"1 1 2 1 1\nPVNode 0\nval 0 2\n".to_vec();
        let rec = |f: &mut Vec<u8>, id: u32, last: u32, prev: u32, mv: u32, val: i16| {
            for x in [id, last, prev, mv] {
                f.extend_from_slice(&x.to_le_bytes());
            }
            f.extend_from_slice(&val.to_le_bytes());
        };
        rec(&mut f, 1, 0, 0, 11, 5);
        rec(&mut f, 2, 1, 0, 10, -3);
        rec(&mut f, 3, 0, 2, 20, 7);
        rec(&mut f, 4, 3, 0, 0, 1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gtf");
        std::fs::write(&path, &f).unwrap();
        let mut got = Vec::new();
        let mut consts = Vec::new();
        let n = import_gtf(&path, |s, level, mv, values| {
            consts = s.constants();
            got.push((level, String::from_utf8_lossy(mv).into_owned(), values[0]));
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 4);
        assert_eq!(consts, vec![("PVNode".to_owned(), 0)]);
        assert_eq!(
            got,
            vec![
                (0, "-".to_owned(), 1),
                (1, "10".to_owned(), -3),
                (2, "11".to_owned(), 5),
                (1, "20".to_owned(), 7)
            ]
        );
        // A truncated body is an error, not a panic.
        std::fs::write(&path, &f[..f.len() - 3]).unwrap();
        assert!(import_gtf(&path, |_, _, _, _| Ok(())).is_err());
    }
}
