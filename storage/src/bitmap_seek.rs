//! One window of an intersection found by seeking from run to run instead of writing every
//! operand's window out as words.
//!
//! Why: the operands of a sparse intersection hold a few runs each per window (`Qd4`, `Kg1`),
//! but one of them is usually broad and made of many short runs (the main line: one run per
//! game). Written out as words, every operand costs its whole window (1,024 words) and every
//! run; and a caller looking for games then passed over 1,024 words again. Seeking visits only
//! the runs near a candidate position, and hands the caller the few runs found.

use crate::bitmap_dense::{CONTAINER, WORDS};
use crate::bitmap_lookup::{ContainerBytes, first};

/// One operand's members within one window, read in ascending order; positions are relative
/// to the window's first one.
pub(crate) enum View<'a> {
    /// A roaring run container: (start, length - 1) u16 pairs.
    Runs { pairs: &'a [u8] },
    /// A roaring array container: sorted u16 values.
    Array { values: &'a [u8] },
    /// A roaring bitset container: 1,024 words.
    Bitset { bytes: &'a [u8] },
    /// A packed bitmap's runs that meet the window (global positions, half-open).
    Packed { runs: &'a [(u32, u32)], base: u32 },
}

impl<'a> View<'a> {
    pub(crate) fn of_container(c: ContainerBytes<'a>) -> Self {
        match c {
            ContainerBytes::Runs(pairs) => View::Runs { pairs },
            ContainerBytes::Array(values) => View::Array { values },
            ContainerBytes::Bitset(bytes) => View::Bitset { bytes },
        }
    }

    /// Appends to `out` the view's runs below `limit`, relative to the window.
    fn list(&self, limit: u32, out: &mut Vec<(u32, u32)>) {
        let mut push = |s: u32, e: u32| {
            if s < limit {
                match out.last_mut() {
                    // Adjacent members (an array's) make one run.
                    Some(last) if last.1 == s => last.1 = e.min(limit),
                    _ => out.push((s, e.min(limit))),
                }
            }
        };
        match self {
            View::Runs { pairs, .. } => {
                for i in 0..pairs.len() / 4 {
                    let s = u32::from(u16_at(pairs, 4 * i));
                    push(s, s + u32::from(u16_at(pairs, 4 * i + 2)) + 1);
                }
            }
            View::Array { values, .. } => {
                for i in 0..values.len() / 2 {
                    let v = u32::from(u16_at(values, 2 * i));
                    push(v, v + 1);
                }
            }
            View::Packed { runs, base, .. } => {
                let local = local_of(*base);
                for &(s, e) in runs.iter() {
                    push(local(s), local(e));
                }
            }
            View::Bitset { bytes } => {
                let mut p = 0u32;
                while let Some((s, e)) = bitset_run(bytes, p) {
                    push(s, e);
                    p = e;
                }
            }
        }
    }

    /// Appends to `out` the parts of the runs of `acc` (relative to the window, ascending,
    /// disjoint) that the view holds.
    fn narrow(&self, acc: &[(u32, u32)], out: &mut Vec<(u32, u32)>) {
        match self {
            View::Runs { pairs, .. } => {
                let run = |i: usize| {
                    let s = u32::from(u16_at(pairs, 4 * i));
                    (s, s + u32::from(u16_at(pairs, 4 * i + 2)) + 1)
                };
                narrow_sorted(pairs.len() / 4, run, acc, out);
            }
            View::Array { values, .. } => {
                let run = |i: usize| {
                    let v = u32::from(u16_at(values, 2 * i));
                    (v, v + 1)
                };
                narrow_sorted(values.len() / 2, run, acc, out);
            }
            View::Packed { runs, base, .. } => {
                let local = local_of(*base);
                narrow_sorted(
                    runs.len(),
                    |i| (local(runs[i].0), local(runs[i].1)),
                    acc,
                    out,
                );
            }
            View::Bitset { bytes } => {
                'runs: for &(s, e) in acc {
                    let mut p = s;
                    while p < e {
                        // Nothing at or after `p`: nothing for the runs after this one either.
                        let Some((vs, ve)) = bitset_run(bytes, p) else {
                            break 'runs;
                        };
                        if vs >= e {
                            break;
                        }
                        let (a, z) = (vs.max(p), ve.min(e));
                        out.push((a, z));
                        p = z;
                    }
                }
            }
        }
    }
}

/// Global position `x` relative to the window starting at `base`, clipped to the window.
fn local_of(base: u32) -> impl Fn(u32) -> u32 {
    move |x| (x.max(base) - base).min(CONTAINER as u32)
}

/// The first run of set bits of a bitset container ending after `p`, clipped to the window
/// (`start` may be before `p`); `None` when no bit at or after `p` is set.
fn bitset_run(bytes: &[u8], p: u32) -> Option<(u32, u32)> {
    let start = next_bit(bytes, p, true)?;
    let end = next_bit(bytes, start, false).unwrap_or(CONTAINER as u32);
    Some((start, end))
}

/// Appends to `out` the parts of the runs of `acc` held by the `n` runs `run(0)`, `run(1)`,
/// ... (ascending, disjoint): a merge of the two, galloping over the runs between.
#[inline(always)]
fn narrow_sorted(
    n: usize,
    run: impl Fn(usize) -> (u32, u32),
    acc: &[(u32, u32)],
    out: &mut Vec<(u32, u32)>,
) {
    let mut i = 0usize;
    for &(s, e) in acc {
        i = first(i, n, |k| run(k).1 > s);
        while i < n {
            let (vs, ve) = run(i);
            if vs >= e {
                break;
            }
            out.push((vs.max(s), ve.min(e)));
            if ve > e {
                // The next run of `acc` may meet this one too.
                break;
            }
            i += 1;
        }
        if i >= n {
            return;
        }
    }
}

/// The u16 at byte `i` of `b` (little-endian); 0 past its end, which callers never read.
#[inline(always)]
fn u16_at(b: &[u8], i: usize) -> u16 {
    match b.get(i..i + 2) {
        Some(x) => u16::from_le_bytes([x[0], x[1]]),
        None => 0,
    }
}

/// The first bit at or after `p` of a bitset container that is set (`set`) or clear (`!set`).
fn next_bit(bytes: &[u8], p: u32, set: bool) -> Option<u32> {
    let word = |j: usize| {
        let mut w = [0u8; 8];
        if let Some(x) = bytes.get(8 * j..8 * j + 8) {
            w.copy_from_slice(x);
        }
        let w = u64::from_le_bytes(w);
        if set { w } else { !w }
    };
    let mut j = p as usize / 64;
    if j >= WORDS {
        return None;
    }
    let mut w = word(j) & (u64::MAX << (p % 64));
    loop {
        if w != 0 {
            return Some(64 * j as u32 + w.trailing_zeros());
        }
        j += 1;
        if j >= WORDS {
            return None;
        }
        w = word(j);
    }
}

/// Sets `out` to the runs of positions below `limit` (relative to the window, at most its
/// size) held by every view, as global half-open runs from `base`, ascending and disjoint.
/// The first view's runs are listed, then narrowed by each other view in turn, seeking in it
/// from each run left: with the sparsest view first (the caller's order) the set is small
/// at once, and the broad views are only touched where it still is. With no view, nothing is
/// held.
pub(crate) fn intersect_by_seeking(
    views: &[View<'_>],
    base: u32,
    limit: u32,
    out: &mut Vec<(u32, u32)>,
    scratch: &mut Vec<(u32, u32)>,
) {
    out.clear();
    let Some((lead, rest)) = views.split_first() else {
        return;
    };
    lead.list(limit, out);
    for view in rest {
        if out.is_empty() {
            return;
        }
        scratch.clear();
        view.narrow(out, scratch);
        std::mem::swap(out, scratch);
    }
    for r in out.iter_mut() {
        *r = (base + r.0, base + r.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Runs = Vec<(u32, u32)>;

    fn runs_bytes(runs: &[(u16, u16)]) -> Vec<u8> {
        runs.iter()
            .flat_map(|&(s, x)| [s.to_le_bytes(), x.to_le_bytes()].concat())
            .collect()
    }

    /// Disjoint, ascending, non-touching runs within one window from arbitrary starts/lengths.
    fn normalize(mut raw: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
        raw.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::new();
        for (s, len) in raw {
            let e = (s + len.max(1)).min(CONTAINER as u32);
            match out.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        out
    }

    fn members(runs: &[(u32, u32)]) -> Vec<u32> {
        runs.iter().flat_map(|&(s, e)| s..e).collect()
    }

    proptest! {
        /// Every form of view, mixed, intersects to the members every operand holds.
        #[test]
        fn seeking_keeps_what_every_view_holds(
            sets in proptest::collection::vec(
                (proptest::collection::vec((0u32..65_536, 0u32..3_000), 0..40), 0u8..4),
                1..5,
            ),
            limit in 0u32..=65_536,
            base_window in 0u32..4,
        ) {
            let base = base_window << 16;
            let sets: Vec<(Vec<(u32, u32)>, u8)> =
                sets.into_iter().map(|(r, form)| (normalize(r), form)).collect();
            // Each set's stored bytes and its runs as a packed bitmap's (global positions).
            let mut storage: Vec<(Vec<u8>, Runs)> = Vec::new();
            for (runs, form) in &sets {
                let bytes = match form {
                    0 => runs_bytes(
                        &runs.iter().map(|&(s, e)| (s as u16, (e - s - 1) as u16)).collect::<Vec<_>>(),
                    ),
                    1 => members(runs).iter().flat_map(|&v| (v as u16).to_le_bytes()).collect(),
                    _ => {
                        let mut words = vec![0u64; WORDS];
                        for v in members(runs) {
                            words[v as usize / 64] |= 1 << (v % 64);
                        }
                        words.iter().flat_map(|w| w.to_le_bytes()).collect()
                    }
                };
                // Packed runs may begin before the window and end after it.
                let global: Vec<(u32, u32)> = runs
                    .iter()
                    .map(|&(s, e)| {
                        let s = if s == 0 { base.saturating_sub(5) } else { base + s };
                        let e = if e == CONTAINER as u32 { base + e + 7 } else { base + e };
                        (s, e)
                    })
                    .collect();
                storage.push((bytes, global));
            }
            let views: Vec<View<'_>> = sets
                .iter()
                .zip(&storage)
                .map(|((_, form), (bytes, global))| match form {
                    0 => View::Runs { pairs: bytes },
                    1 => View::Array { values: bytes },
                    2 => View::Bitset { bytes },
                    _ => View::Packed { runs: global, base },
                })
                .collect();
            let mut out = Vec::new();
            intersect_by_seeking(&views, base, limit, &mut out, &mut Vec::new());
            let mut want: Vec<u32> = (0..limit).collect();
            for (runs, _) in &sets {
                let m: std::collections::HashSet<u32> = members(runs).into_iter().collect();
                want.retain(|v| m.contains(v));
            }
            let want: Vec<u32> = want.into_iter().map(|v| base + v).collect();
            prop_assert!(out.windows(2).all(|w| w[0].1 <= w[1].0), "ascending, disjoint");
            prop_assert!(out.iter().all(|&(s, e)| s < e), "no empty run");
            prop_assert_eq!(members(&out), want);
        }
    }
}
