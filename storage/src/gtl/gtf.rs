//! Importing the paper's GT-log `.gtf` files (post-order records) as pre-order nodes.

use std::path::Path;

use super::schema::{AttrDef, AttrKind, TreeSchema};
use crate::error::{Result, StorageError};

/// Converts a GT-log `.gtf` file (the paper's format: post-order records with last-child and
/// previous-sibling links) into pre-order nodes, calling `f` for each. Fields become `int`
/// attributes, aliases constants; the last move is written as its number (`0` at a root
/// without one); each node's values end with its id from the record (the schema has `ids`).
/// Returns the schema (also for a file without records) and the node count.
pub fn import_gtf(
    path: &Path,
    mut f: impl FnMut(&TreeSchema, u32, &[u8], &[i64]) -> Result<()>,
) -> Result<(TreeSchema, u64)> {
    let file = std::fs::File::open(path).map_err(StorageError::io(path))?;
    // A file that shrinks while it is read reads as zeros and is then reported (`mapped.rs`);
    // an empty one cannot be mapped.
    let empty = file.metadata().map_err(StorageError::io(path))?.len() == 0;
    let map = if empty {
        None
    } else {
        Some(crate::mapped::Map::open(&file, path).map_err(StorageError::io(path))?)
    };
    let bytes: &[u8] = map.as_deref().unwrap_or_default();
    let shrunk = || {
        map.as_ref()
            .is_some_and(crate::mapped::Map::shrunk)
            .then(|| {
                StorageError::corrupt(
                    path,
                    "the file shrank while it was being read (truncated by another program?)",
                )
            })
    };
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
    let (rec_size, aliases, fields) = parse_first_line(&first).map_err(bad)?;
    let mut schema = TreeSchema {
        ids: true,
        ..TreeSchema::default()
    };
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
        // An offset near 2^64 must not wrap past the check.
        if !matches!(size, 1 | 2 | 4 | 8) || off.checked_add(size).is_none_or(|end| end > rec_size)
        {
            return Err(bad(format!("field '{name}' does not fit the record")));
        }
        if matches!(name, "node_id" | "last_move") || schema.attrs.iter().any(|a| a.name == name) {
            return Err(bad(format!(
                "field '{name}' is declared twice or clashes with a built-in attribute"
            )));
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
        return Ok((schema, 0));
    }
    let u32_at = |i: usize, k: usize| -> u32 {
        let o = i * stride + 4 * k;
        u32::from_le_bytes([body[o], body[o + 1], body[o + 2], body[o + 3]])
    };
    let index = RecordIndex::new(n, |i| u32_at(i, 0)).map_err(bad)?;
    // The root is the last record (records are written when a node's search returns).
    let mut emitted = 0u64;
    let mut stack: Vec<(usize, u32)> = vec![(n - 1, 0)];
    let mut kids = Vec::new();
    let mut values = vec![0i64; layout.len() + 1];
    let mut mv = Vec::with_capacity(12);
    while let Some((i, level)) = stack.pop() {
        let rec = &body[i * stride + 16..(i + 1) * stride];
        for (v, &(off, size)) in values.iter_mut().zip(&layout) {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(&rec[off..off + size]);
            let shift = 64 - 8 * size as u32;
            *v = (i64::from_le_bytes(b) << shift) >> shift;
        }
        values[layout.len()] = i64::from(u32_at(i, 0));
        mv.clear();
        {
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
            let ci = index
                .get(c)
                .filter(|&ci| ci < i && kids.len() <= n)
                .ok_or_else(|| {
                    bad(format!(
                        "node {} has a bad child or sibling link {c}",
                        u32_at(i, 0)
                    ))
                })?;
            kids.push(ci);
            c = u32_at(ci, 2);
        }
        for &k in &kids {
            stack.push((k, level + 1));
        }
    }
    if emitted != n as u64 {
        return Err(bad(format!(
            "{} of {n} records are not in the tree of the last record (node {}): one tree per file",
            n as u64 - emitted,
            u32_at(n - 1, 0)
        )));
    }
    if let Some(e) = shrunk() {
        return Err(e);
    }
    Ok((schema, emitted))
}

/// `gameVersion dataVersion recSize numAliases numFields`: the first is the engine's name for
/// itself (`fruit-2.1`), the others integers. Returns the record size and the numbers of
/// aliases and fields.
fn parse_first_line(first: &str) -> std::result::Result<(usize, usize, usize), String> {
    let words: Vec<&str> = first.split_whitespace().collect();
    let [_name, data, rec, aliases, fields] = words[..] else {
        return Err(format!(
            "header line '{first}' should be 'gameVersion dataVersion recSize numAliases numFields'"
        ));
    };
    let num = |w: &str, what: &str| {
        w.parse::<usize>()
            .map_err(|_| format!("header line '{first}': {what} '{w}' is not a number"))
    };
    num(data, "dataVersion")?;
    let rec = num(rec, "recSize")?;
    let aliases = num(aliases, "numAliases")?;
    let fields = num(fields, "numFields")?;
    if rec > 1 << 20 || aliases > 1 << 20 || fields > 1 << 16 {
        return Err(format!("header line '{first}': sizes out of range"));
    }
    Ok((rec, aliases, fields))
}

/// Record index (0-based) of each node id. The GT-log library numbers records from 1 in the
/// order it writes them, so the id is almost always the record number plus one; other ids are
/// looked up in a map.
enum RecordIndex {
    Sequential(usize),
    Map(rustc_hash::FxHashMap<u32, usize>),
}

impl RecordIndex {
    fn new(n: usize, id: impl Fn(usize) -> u32) -> std::result::Result<Self, String> {
        if (0..n).all(|i| id(i) as usize == i + 1) {
            return Ok(Self::Sequential(n));
        }
        let mut map = rustc_hash::FxHashMap::default();
        for i in 0..n {
            if id(i) == 0 {
                return Err(format!("record {} has node id 0", i + 1));
            }
            if map.insert(id(i), i).is_some() {
                return Err(format!("node id {} is used twice", id(i)));
            }
        }
        Ok(Self::Map(map))
    }

    fn get(&self, id: u32) -> Option<usize> {
        match self {
            Self::Sequential(n) => (id as usize).checked_sub(1).filter(|i| i < n),
            Self::Map(m) => m.get(&id).copied(),
        }
    }
}
