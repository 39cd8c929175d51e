//! Importing the paper's GT-log `.gtf` files (post-order records) as pre-order nodes.

use std::path::Path;

use super::schema::{AttrDef, AttrKind, TreeSchema};
use crate::error::{Result, StorageError};

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
