//! Logging a game-tree search as it runs, for analysis with GTQL (`cqldb gtql import x.gtf`).
//!
//! Its own top-level crate (not part of the indexer) because a chess engine links it: it has
//! no dependencies, knows nothing of cqldb, and costs one branch per call when logging is off.
//!
//! The format is the GT-log `.gtf` of Ísleifsdóttir & Björnsson: a text header (the engine's
//! name for itself, a data version, record size, aliases, fields), then one binary record per
//! node written when the node's search returns (post-order): node id, id of its last child, id
//! of its previous sibling, move, and the engine's fields. Node ids are the 1-based record
//! numbers, so the root, written last, has the largest; `cqldb gtql` reports nodes by these
//! ids. The engine only keeps a stack as deep as its search.
//!
//! ```
//! let mut out = Vec::new();
//! let mut log =
//!     gtlog::Logger::new(&mut out, "mychess-1.0", &[("PVNode", 0)], &[("value", 4)]).unwrap();
//! log.enter();            // root
//! log.enter();            // its first child
//! assert_eq!(log.exit(12, &[7]).unwrap(), 1);
//! assert_eq!(log.exit(0, &[7]).unwrap(), 2);
//! assert_eq!(log.nodes(), 2);
//! assert!(out.starts_with(b"mychess-1.0 1 4 1 1\n"));
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
    /// Starts a log for the engine `game_version` (its name for itself, such as `fruit-2.1`:
    /// no spaces, at most 20 bytes), with named integer constants (`aliases`) and fields of 1,
    /// 2, 4 or 8 bytes (names without spaces, at most 20 bytes).
    pub fn new(
        mut out: W,
        game_version: &str,
        aliases: &[(&str, i64)],
        fields: &[(&str, usize)],
    ) -> io::Result<Self> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        let names = std::iter::once(game_version)
            .chain(aliases.iter().map(|a| a.0))
            .chain(fields.iter().map(|f| f.0));
        for name in names {
            if name.is_empty() || name.len() > 20 || name.contains(char::is_whitespace) {
                return Err(invalid(format!(
                    "'{name}': names are 1 to 20 bytes without spaces"
                )));
            }
        }
        let rec_size: usize = fields.iter().map(|f| f.1).sum();
        if fields.iter().any(|f| !matches!(f.1, 1 | 2 | 4 | 8)) {
            return Err(invalid("field sizes are 1, 2, 4 or 8 bytes".into()));
        }
        writeln!(
            out,
            "{game_version} 1 {rec_size} {} {}",
            aliases.len(),
            fields.len()
        )?;
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

    /// The node's search returns with the move that led to it (0 for none) and its field
    /// values; returns the node's id (0 when logging is off).
    #[inline]
    pub fn exit(&mut self, mv: u32, values: &[i64]) -> io::Result<u32> {
        let Some(out) = self.out.as_mut() else {
            return Ok(0);
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
        out.write_all(&self.buf)?;
        Ok(id)
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
