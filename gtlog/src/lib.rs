//! Logging a game-tree search as it runs, for analysis with GTQL (`cqldb gtql import x.gtf`).
//!
//! Its own top-level crate (not part of the indexer) because a chess engine links it: it has
//! no dependencies, knows nothing of cqldb, and costs one branch per call when logging is off.
//!
//! The format is the GT-log `.gtf` of Ísleifsdóttir & Björnsson: a text header (versions,
//! record size, aliases, fields), then one binary record per node written when the node's search
//! returns (post-order): node id, id of its last child, id of its previous sibling, move, and
//! the engine's fields. The engine only keeps a stack as deep as its search.
//!
//! ```
//! let mut out = Vec::new();
//! let mut log = gtlog::Logger::new(&mut out, &[("PVNode", 0)], &[("value", 4)]).unwrap();
//! log.enter();            // root
//! log.enter();            // its first child
//! log.exit(12, &[7]).unwrap();
//! log.exit(0, &[7]).unwrap();
//! assert_eq!(log.nodes(), 2);
//! ```

use std::io::{self, Write};

/// Writes a `.gtf` log; [`Logger::disabled`] makes every call a no-op.
pub struct Logger<W: Write> {
    out: Option<W>,
    sizes: Vec<usize>,
    rec_size: usize,
    /// Per open node: (id of its last finished child, id of the previous sibling it follows).
    stack: Vec<(u32, u32)>,
    /// Id of the last node finished at each depth below the open ones.
    next_id: u32,
    buf: Vec<u8>,
}

impl<W: Write> Logger<W> {
    /// Starts a log with named integer constants (`aliases`) and fields of 1, 2, 4 or 8 bytes.
    pub fn new(mut out: W, aliases: &[(&str, i64)], fields: &[(&str, usize)]) -> io::Result<Self> {
        let rec_size: usize = fields.iter().map(|f| f.1).sum();
        if fields.iter().any(|f| !matches!(f.1, 1 | 2 | 4 | 8)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "field sizes are 1, 2, 4 or 8 bytes",
            ));
        }
        writeln!(out, "1 1 {rec_size} {} {}", aliases.len(), fields.len())?;
        for (n, v) in aliases {
            writeln!(out, "{n} {v}")?;
        }
        let mut off = 0;
        for (n, size) in fields {
            writeln!(out, "{n} {off} {size}")?;
            off += size;
        }
        Ok(Self {
            out: Some(out),
            sizes: fields.iter().map(|f| f.1).collect(),
            rec_size,
            stack: Vec::new(),
            next_id: 0,
            buf: Vec::with_capacity(16 + rec_size),
        })
    }

    /// A logger that records nothing.
    pub fn disabled() -> Self {
        Self {
            out: None,
            sizes: Vec::new(),
            rec_size: 0,
            stack: Vec::new(),
            next_id: 0,
            buf: Vec::new(),
        }
    }

    /// Whether anything is recorded.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.out.is_some()
    }

    /// A node's search begins (call before searching its children).
    #[inline]
    pub fn enter(&mut self) {
        if self.out.is_none() {
            return;
        }
        // The previous sibling is the parent's last finished child so far.
        let prev = self.stack.last().map_or(0, |p| p.0);
        self.stack.push((0, prev));
    }

    /// The node's search returns with the move that led to it and its field values.
    #[inline]
    pub fn exit(&mut self, mv: u32, values: &[i64]) -> io::Result<()> {
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        let Some((last_child, prev)) = self.stack.pop() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "exit without enter",
            ));
        };
        self.next_id += 1;
        let id = self.next_id;
        if let Some(parent) = self.stack.last_mut() {
            parent.0 = id;
        }
        self.buf.clear();
        for x in [id, last_child, prev, mv] {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
        for (v, &size) in values.iter().zip(&self.sizes) {
            self.buf.extend_from_slice(&v.to_le_bytes()[..size]);
        }
        self.buf.resize(16 + self.rec_size, 0);
        out.write_all(&self.buf)
    }

    /// Nodes written so far.
    pub fn nodes(&self) -> u32 {
        self.next_id
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<Option<W>> {
        if let Some(out) = self.out.as_mut() {
            out.flush()?;
        }
        Ok(self.out.take())
    }
}
