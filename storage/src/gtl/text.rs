//! Reading the plain-text log: the header, then one node per line.

use std::io::BufRead;

use super::schema::{AttrDef, AttrKind, NodeRow, TreeSchema};
use crate::error::{Result, StorageError};

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
                    let r = parse_carried(
                        &mut self.bytes,
                        &self.schema,
                        &mut self.prev_level,
                        &mut self.lineno,
                        &mut mv,
                        &mut values,
                    );
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
                let r = parse_carried(
                    &mut self.bytes,
                    &self.schema,
                    &mut self.prev_level,
                    &mut self.lineno,
                    &mut mv,
                    &mut values,
                );
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
                let r = parse_carried(
                    &mut self.bytes,
                    &self.schema,
                    &mut self.prev_level,
                    &mut self.lineno,
                    mv,
                    values,
                );
                match r? {
                    Some(l) => return Ok(Some(l)),
                    None => continue,
                }
            }
            match memchr::memchr(b'\n', buf) {
                Some(pos) => {
                    let r = if self.bytes.is_empty() {
                        self.lineno += 1;
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
                        parse_carried(
                            &mut self.bytes,
                            &self.schema,
                            &mut self.prev_level,
                            &mut self.lineno,
                            mv,
                            values,
                        )
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

/// Parses the line carried over from one read buffer into the next (it gets the next line
/// number) and empties the carry.
fn parse_carried(
    bytes: &mut Vec<u8>,
    schema: &TreeSchema,
    prev_level: &mut Option<u32>,
    lineno: &mut usize,
    mv: &mut Vec<u8>,
    values: &mut Vec<i64>,
) -> Result<Option<u32>> {
    *lineno += 1;
    let r = parse_line(bytes, schema, prev_level, *lineno, mv, values);
    bytes.clear();
    r
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
