//! Sorted output (`sort`, and the header's `sort matchcount`): every game must be known
//! before the first is written, so each selected game's output waits in a temporary file
//! beside only its keys in memory (a million matching games cost their keys, not their text),
//! and the games are copied out in key order at the end.
//!
//! Order: key by key in the order the query wrote them; a `max` key (the default) largest
//! first, a `min` key smallest first; a game without a value for a key after every game with
//! one; ties in input order.

use std::io::{Read, Seek, SeekFrom, Write};

use anyhow::Result;
use cqldb_planner::Query;
use cqldb_planner::eval::context::SortValue;

/// The games waiting to be written in order.
pub(crate) struct Sorted {
    /// Per key: whether it sorts smallest first.
    min: Vec<bool>,
    /// (keys, game number, where its text is in the spill file, its length).
    entries: Vec<(Vec<Option<SortValue>>, u64, u64, u64)>,
    spill: Option<std::fs::File>,
    spilled: u64,
}

impl Sorted {
    /// The sorted output of `query`, if it sorts.
    pub(crate) fn of(query: &Query) -> Option<Self> {
        let mut min = Vec::new();
        if query.header.sort_matchcount {
            min.push(false);
        }
        min.extend(query.sorts.iter().map(|k| k.min));
        (!min.is_empty()).then(|| Self {
            min,
            entries: Vec::new(),
            spill: None,
            spilled: 0,
        })
    }

    /// A game's keys, in the order they compare.
    pub(crate) fn keys(
        query: &Query,
        matched: usize,
        values: &[Option<SortValue>],
    ) -> Vec<Option<SortValue>> {
        let mut keys = Vec::new();
        if query.header.sort_matchcount {
            keys.push(Some(SortValue::Num(matched as i64)));
        }
        keys.extend(values.iter().cloned());
        keys
    }

    /// Keeps a selected game until the end.
    pub(crate) fn push(
        &mut self,
        keys: Vec<Option<SortValue>>,
        number: u64,
        text: &[u8],
    ) -> Result<()> {
        if !text.is_empty() && self.spill.is_none() {
            self.spill = Some(tempfile::tempfile()?);
        }
        if let Some(f) = self.spill.as_mut() {
            f.write_all(text)?;
        }
        self.entries
            .push((keys, number, self.spilled, text.len() as u64));
        self.spilled += text.len() as u64;
        Ok(())
    }

    /// The games in order: their numbers, each written to `out` (if any) as it comes.
    pub(crate) fn finish(mut self, mut out: Option<&mut dyn Write>) -> Result<Vec<u64>> {
        let min = std::mem::take(&mut self.min);
        self.entries.sort_by(|a, b| {
            for (k, &smallest_first) in min.iter().enumerate() {
                let ord = match (a.0.get(k).cloned().flatten(), b.0.get(k).cloned().flatten()) {
                    (None, None) => std::cmp::Ordering::Equal,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (Some(x), Some(y)) if smallest_first => x.cmp(&y),
                    (Some(x), Some(y)) => y.cmp(&x),
                };
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
            }
            a.1.cmp(&b.1)
        });
        let mut buf = Vec::new();
        for (_, _, offset, len) in &self.entries {
            if let (Some(w), Some(f)) = (out.as_mut(), self.spill.as_mut()) {
                f.seek(SeekFrom::Start(*offset))?;
                buf.resize(*len as usize, 0);
                f.read_exact(&mut buf)?;
                w.write_all(&buf)?;
            }
        }
        Ok(self.entries.iter().map(|e| e.1).collect())
    }
}
