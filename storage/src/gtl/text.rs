//! Reading the plain-text log: the header, then one node per line.

use std::io::BufRead;

use super::block::{Line, scan_block};
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
                let attr = TreeSchema::parse_attr(t, lineno)?;
                if schema.attrs.iter().any(|a| a.name == attr.name) {
                    return Err(StorageError::Format(format!(
                        "line {lineno}: attribute '{}' is declared twice",
                        attr.name
                    )));
                }
                schema.attrs.push(attr);
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
        let mut fast_values = vec![0; self.schema.attrs.len()];
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
            let block = &buf[start..=last];
            let (schema, prev_level, lineno) =
                (&self.schema, &mut self.prev_level, &mut self.lineno);
            scan_block(block, &mut fast_values, |line| {
                *lineno += 1;
                let (start, end) = match line {
                    Line::Node {
                        level,
                        last_move,
                        values,
                        ..
                    } if level_follows(*prev_level, level) => {
                        *prev_level = Some(level);
                        count += 1;
                        return f(level, last_move, values);
                    }
                    // The careful reader says what is wrong with the level.
                    Line::Node { start, end, .. } | Line::Other { start, end } => (start, end),
                };
                let careful = parse_line(
                    &block[start..end],
                    schema,
                    prev_level,
                    *lineno,
                    &mut mv,
                    &mut values,
                )?;
                if let Some(level) = careful {
                    count += 1;
                    f(level, &mv, &values)?;
                }
                Ok(())
            })?;
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

/// Whether a node at `level` may follow one at `prev` in pre-order (the careful reader's rule).
#[inline]
fn level_follows(prev: Option<u32>, level: u32) -> bool {
    match prev {
        None => level == 0,
        Some(p) => level >= 1 && level <= p.saturating_add(1),
    }
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
        Some(p) if level > p.saturating_add(1) => {
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

#[cfg(test)]
mod tests {
    use super::TextLogReader;
    use proptest::prelude::*;

    const HEADER: &str = "gtql-log 1\nattr type enum PVNode=0 CUTNode=1\n\
                          attr flags flags A=1 B=2\nattr value int\nnodes\n";

    /// A node line's parts, mostly well formed, in any of the spellings the format allows,
    /// and now and then with a mistake in it; the level is chosen once the previous is known.
    #[derive(Debug, Clone)]
    enum Spec {
        Node {
            level: (u8, u64),
            lead: &'static str,
            s1: &'static str,
            mv: &'static str,
            values: Vec<String>,
            s2: &'static str,
            end: &'static str,
        },
        Other(&'static str),
    }

    fn spec() -> impl Strategy<Value = Spec> {
        let value = prop_oneof![
            12 => (-40_000i64..40_000).prop_map(|v| v.to_string()),
            1 => Just("PVNode".to_string()),
            1 => Just("A|B".to_string()),
            1 => Just("-".to_string()),
            1 => Just("1-2".to_string()),
            1 => Just("12345678901234567890".to_string()),
        ];
        let sep = prop_oneof![12 => Just(" "), 1 => Just("  "), 1 => Just("\t")];
        let mv = prop_oneof![
            Just("-"),
            Just("e2e4"),
            Just("O-O"),
            Just("m38"),
            Just("0-0")
        ];
        let values = prop_oneof![
            12 => proptest::collection::vec(value.clone(), 3..4),
            1 => proptest::collection::vec(value, 2..5),
        ];
        let end = prop_oneof![12 => Just(""), 1 => Just(" "), 1 => Just("\r")];
        let lead = prop_oneof![12 => Just(""), 1 => Just(" ")];
        prop_oneof![
            40 => ((0u8..100, any::<u64>()), lead, sep.clone(), mv, values, sep, end).prop_map(
                |(level, lead, s1, mv, values, s2, end)| Spec::Node {
                    level, lead, s1, mv, values, s2, end
                }
            ),
            1 => Just(Spec::Other("")),
            1 => Just(Spec::Other("# a comment")),
            1 => Just(Spec::Other("1 e2e4 0 0 x1")),
        ]
    }

    /// The lines, each node's level following the last node's (but for a few mistakes).
    fn body(specs: &[Spec]) -> Vec<String> {
        let mut prev: Option<u64> = None;
        let mut out = Vec::new();
        for s in specs {
            match s {
                Spec::Other(t) => out.push(t.to_string()),
                Spec::Node {
                    level: (how, r),
                    lead,
                    s1,
                    mv,
                    values,
                    s2,
                    end,
                } => {
                    let level = match (how, prev) {
                        (0..=91, None) => 0,
                        (0..=91, Some(p)) => 1 + r % (p + 1),
                        (92..=93, _) => 0,
                        (94..=95, _) => 9,
                        _ => 4_294_967_296,
                    };
                    prev = Some(level);
                    out.push(format!("{lead}{level}{s1}{mv}{s2}{}{end}", values.join(s2)));
                }
            }
        }
        out
    }

    /// A node as read: level, move, values.
    type Read = (u32, Vec<u8>, Vec<i64>);

    /// Every node (or the first error) the careful line-by-line reader sees.
    fn careful(text: &str) -> Result<Vec<Read>, String> {
        let mut r = TextLogReader::new(text.as_bytes()).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        let (mut mv, mut values) = (Vec::new(), Vec::new());
        while let Some(level) = r
            .next_parts(&mut mv, &mut values)
            .map_err(|e| e.to_string())?
        {
            out.push((level, mv.clone(), values.clone()));
        }
        Ok(out)
    }

    proptest! {
        /// Reading whole blocks (the import's way) finds the same nodes, and the same first
        /// error, as reading line by line, wherever the read buffer splits the lines.
        #[test]
        fn blocks_read_like_lines(
            specs in proptest::collection::vec(spec(), 0..30),
            capacity in 1usize..200,
            final_newline: bool,
        ) {
            let mut text = HEADER.to_string();
            text.push_str(&body(&specs).join("\n"));
            if final_newline {
                text.push('\n');
            }
            let expected = careful(&text);
            let input = std::io::BufReader::with_capacity(capacity, text.as_bytes());
            let mut r = TextLogReader::new(input).unwrap();
            let mut got = Vec::new();
            let result = r
                .for_each_node(|level, mv, values| {
                    got.push((level, mv.to_vec(), values.to_vec()));
                    Ok(())
                })
                .map_err(|e| e.to_string());
            match (result, expected) {
                (Ok(n), Ok(want)) => {
                    prop_assert_eq!(n as usize, want.len());
                    prop_assert_eq!(got, want);
                }
                (Err(e), Err(want)) => prop_assert_eq!(e, want),
                (r, want) => prop_assert!(false, "blocks {r:?}, lines {want:?}"),
            }
        }
    }
}
