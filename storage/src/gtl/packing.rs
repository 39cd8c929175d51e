//! Column packing shared by the `.gtl` writer and reader: frame of reference at the narrowest
//! width, and the per-chunk move table.

/// Frame-of-reference packing: base (i64), width (1, 2, 4 or 8 bytes), values - base. The
/// values are read twice (bounds, then bytes), so any cheap cloneable iterator will do: a
/// slice, or one attribute's values picked out of row-major node rows.
pub(super) fn pack_column<I>(out: &mut Vec<u8>, v: I)
where
    I: Iterator<Item = i64> + Clone + ExactSizeIterator,
{
    let (min, max) = v
        .clone()
        .fold((i64::MAX, i64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (min, max) = if v.len() == 0 { (0, 0) } else { (min, max) };
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
        1 => out.extend(v.map(|x| x.wrapping_sub(min) as u8)),
        2 => {
            for x in v {
                out.extend_from_slice(&(x.wrapping_sub(min) as u16).to_le_bytes());
            }
        }
        4 => {
            for x in v {
                out.extend_from_slice(&(x.wrapping_sub(min) as u32).to_le_bytes());
            }
        }
        _ => {
            for x in v {
                out.extend_from_slice(&(x.wrapping_sub(min) as u64).to_le_bytes());
            }
        }
    }
}

/// Reads a packed column of `n` values at `at` into `out`, advancing `at`; `want` = false
/// skips it (and leaves `out` empty).
pub(super) fn unpack_into(
    raw: &[u8],
    at: &mut usize,
    n: usize,
    want: bool,
    out: &mut Vec<i64>,
) -> Option<()> {
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

/// The move stream of a chunk: its move list, then an index per node.
pub(super) fn unpack_moves(
    raw: &[u8],
    n: usize,
    out: &mut Vec<String>,
    tmp: &mut Vec<i64>,
) -> Option<()> {
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
