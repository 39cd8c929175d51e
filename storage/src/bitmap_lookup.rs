//! Membership tests on a bitmap as stored, without decoding it.
//!
//! Why this is not left to the `roaring` crate: it decodes a stored bitmap whole
//! (`deserialize_from`) or container by container (`intersection_with_serialized_unchecked`);
//! neither pays when a handful of positions are tested against a bitmap of millions. An exact
//! `fen` that the board index does not hold intersects some thirty piece bitmaps: after the
//! first few the running set has a few positions, spread over every container, and decoding
//! each further bitmap to test them cost most of the query. Here each position costs two binary
//! searches in the stored bytes (the container, then the value in it). The format is roaring's
//! portable serialization (its published specification); [`serialized_len`] reads the same
//! header for a bitmap's size.

use roaring::RoaringBitmap;

const COOKIE_NO_RUNS: u32 = 12346;
const COOKIE_RUNS: u32 = 12347;
/// With runs, a bitmap of fewer containers than this stores no offsets.
const NO_OFFSET_THRESHOLD: usize = 4;
/// A container of more values than this is a bitset (unless it holds runs).
const ARRAY_LIMIT: u64 = 4096;

/// The number of members of a bitmap in roaring's portable serialization, read from its header
/// alone (each container's cardinality is there), or `None` if `blob` does not start like one.
/// An estimate for ordering scans: the blob is not checked against its checksum here.
pub fn serialized_len(blob: &[u8]) -> Option<u64> {
    let h = Header::read(blob)?;
    // Each container: its key, then its cardinality minus one (two little-endian u16s).
    let end = h.descriptions.checked_add(h.containers.checked_mul(4)?)?;
    let header = blob.get(h.descriptions..end)?;
    Some(
        header
            .chunks_exact(4)
            .map(|c| u64::from(u16::from_le_bytes([c[2], c[3]])) + 1)
            .sum(),
    )
}

/// The start of a stored bitmap: its cookie says how many containers it has and whether a bit
/// per container says it holds runs.
struct Header {
    containers: usize,
    /// Where the run flags are, if the format has them.
    run_flags: Option<usize>,
    /// Where the containers' (key, cardinality - 1) pairs start.
    descriptions: usize,
}

impl Header {
    fn read(blob: &[u8]) -> Option<Self> {
        let cookie = u32_at(blob, 0)?;
        if cookie & 0xFFFF == COOKIE_RUNS {
            let n = (cookie >> 16) as usize + 1;
            Some(Self {
                containers: n,
                run_flags: Some(4),
                descriptions: 4 + n.div_ceil(8),
            })
        } else if cookie == COOKIE_NO_RUNS {
            Some(Self {
                containers: u32_at(blob, 4)? as usize,
                run_flags: None,
                descriptions: 8,
            })
        } else {
            None
        }
    }
}

/// One container: its key (the values' high 16 bits) and where its data is.
struct Container {
    key: u16,
    kind: Kind,
    data: usize,
}

#[derive(Copy, Clone)]
enum Kind {
    /// `n` sorted u16s.
    Array(usize),
    /// 1024 u64 words.
    Bitset,
    /// A u16 count, then (start, length - 1) u16 pairs.
    Runs,
}

/// One container's stored contents (little-endian throughout).
#[derive(Clone, Copy)]
pub(crate) enum ContainerBytes<'a> {
    /// Sorted u16 values.
    Array(&'a [u8]),
    /// 1024 u64 words, bit `i` of the container in word `i / 64`.
    Bitset(&'a [u8]),
    /// (start, length - 1) u16 pairs.
    Runs(&'a [u8]),
}

/// Where an ascending search through a stored bitmap is: the container of the last value
/// searched for (`key`, its index) and the place within it.
#[derive(Default)]
struct Cursor {
    key: Option<u16>,
    container: usize,
    within: usize,
}

/// The first `i` in `lo..hi` for which `at_or_after(i)` holds (it holds from some point on), or
/// `hi` (also when `lo..hi` is empty): galloping from `lo`, since the next value is usually near
/// the last. Also the search of other sorted sequences read by index (a segment's bitmap keys,
/// its material signatures).
///
/// Never past `hi`: callers index with the answer less one (a run container of no runs, an
/// empty bitmap directory), and the galloping below would give `lo + 1` for an empty range.
#[inline]
pub fn first(lo: usize, hi: usize, at_or_after: impl Fn(usize) -> bool) -> usize {
    if lo >= hi {
        return hi;
    }
    // Most searches of a run list land in the run they are in: one test then.
    if at_or_after(lo) {
        return lo;
    }
    let mut step = 1usize;
    let mut below = lo;
    // `below` never holds: `lo` was tested, and the loop moves only onto indices that fail.
    while below + step < hi && !at_or_after(below + step) {
        below += step;
        step *= 2;
    }
    let (mut a, mut z) = (below + 1, (below + step).min(hi));
    while a < z {
        let mid = (a + z) / 2;
        if at_or_after(mid) {
            z = mid;
        } else {
            a = mid + 1;
        }
    }
    a
}

/// A stored bitmap's header, parsed.
pub struct StoredBitmap<'a> {
    blob: &'a [u8],
    containers: Vec<Container>,
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?]))
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    b.get(i..i.checked_add(4)?)
        .and_then(|x| x.try_into().ok())
        .map(u32::from_le_bytes)
}

impl<'a> StoredBitmap<'a> {
    /// Parses the header of `blob` (`None` if it is not a bitmap in the portable format).
    pub fn parse(blob: &'a [u8]) -> Option<Self> {
        let Header {
            containers: n,
            run_flags: runs_at,
            descriptions: mut at,
        } = Header::read(blob)?;
        let is_run = |i: usize| {
            runs_at.is_some_and(|r| blob.get(r + i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1))
        };
        let descriptions = at;
        at = at.checked_add(n.checked_mul(4)?)?;
        let offsets = (runs_at.is_none() || n >= NO_OFFSET_THRESHOLD).then_some(at);
        if offsets.is_some() {
            at = at.checked_add(n.checked_mul(4)?)?;
        }
        // A header must fit in the blob before its count sizes anything.
        if n > 1 << 16 || at > blob.len() {
            return None;
        }
        let mut containers = Vec::with_capacity(n);
        for i in 0..n {
            let key = u16_at(blob, descriptions + 4 * i)?;
            let card = u64::from(u16_at(blob, descriptions + 4 * i + 2)?) + 1;
            let kind = if is_run(i) {
                Kind::Runs
            } else if card <= ARRAY_LIMIT {
                Kind::Array(card as usize)
            } else {
                Kind::Bitset
            };
            let data = match offsets {
                Some(o) => u32_at(blob, o + 4 * i)? as usize,
                None => at,
            };
            // Without offsets the containers follow one another.
            at = data.checked_add(match kind {
                Kind::Array(n) => 2 * n,
                Kind::Bitset => 8192,
                Kind::Runs => 2 + 4 * usize::from(u16_at(blob, data)?),
            })?;
            if at > blob.len() {
                return None;
            }
            containers.push(Container { key, kind, data });
        }
        Some(Self { blob, containers })
    }

    /// Whether `v` is in the bitmap.
    pub fn contains(&self, v: u32) -> bool {
        self.find(v, &mut Cursor::default())
    }

    /// Whether `v` is in the bitmap, searched from `at`: the container and the place in it
    /// where the last, smaller value searched for was (values are searched in ascending
    /// order, so each search starts where the previous one ended).
    fn find(&self, v: u32, at: &mut Cursor) -> bool {
        let (key, low) = ((v >> 16) as u16, v as u16);
        if at.key != Some(key) {
            at.container += self.containers[at.container.min(self.containers.len())..]
                .partition_point(|c| c.key < key);
            *at = Cursor {
                key: Some(key),
                container: at.container,
                within: 0,
            };
        }
        let Some(c) = self.containers.get(at.container).filter(|c| c.key == key) else {
            return false;
        };
        let b = self.blob;
        match c.kind {
            Kind::Array(n) => {
                // The first value at or after `low`.
                at.within = first(at.within, n, |i| {
                    u16_at(b, c.data + 2 * i).is_some_and(|x| x >= low)
                });
                u16_at(b, c.data + 2 * at.within) == Some(low) && at.within < n
            }
            Kind::Bitset => {
                let byte = c.data + usize::from(low / 8);
                b.get(byte).is_some_and(|x| x >> (low % 8) & 1 == 1)
            }
            Kind::Runs => {
                let n = usize::from(u16_at(b, c.data).unwrap_or(0));
                // The first run starting after `low`; the one before it may hold `low`.
                let after = first(at.within, n, |i| {
                    u16_at(b, c.data + 2 + 4 * i).is_none_or(|start| start > low)
                });
                at.within = after.saturating_sub(1);
                after > 0
                    && match (
                        u16_at(b, c.data + 2 + 4 * (after - 1)),
                        u16_at(b, c.data + 4 * after),
                    ) {
                        (Some(start), Some(extra)) => {
                            u32::from(low) <= u32::from(start) + u32::from(extra)
                        }
                        _ => false,
                    }
            }
        }
    }

    /// Each container's key (the values' high 16 bits) and stored contents, in key order.
    pub(crate) fn containers(&self) -> impl Iterator<Item = (u16, ContainerBytes<'a>)> + '_ {
        let b = self.blob;
        self.containers.iter().filter_map(move |c| {
            let bytes = match c.kind {
                Kind::Array(n) => ContainerBytes::Array(b.get(c.data..c.data + 2 * n)?),
                Kind::Bitset => ContainerBytes::Bitset(b.get(c.data..c.data + 8192)?),
                Kind::Runs => {
                    let n = usize::from(u16_at(b, c.data)?);
                    ContainerBytes::Runs(b.get(c.data + 2..c.data + 2 + 4 * n)?)
                }
            };
            Some((c.key, bytes))
        })
    }

    /// The members of `candidates` in the bitmap: each searched from where the last one was
    /// found, in the container it is in.
    pub fn filter(&self, candidates: &RoaringBitmap) -> RoaringBitmap {
        let mut at = Cursor::default();
        // Ascending and distinct, as `candidates` are.
        RoaringBitmap::from_sorted_iter(candidates.iter().filter(|&v| self.find(v, &mut at)))
            .unwrap_or_default()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The runs of `b` (sorted, disjoint, half-open), as a packed bitmap's reading gives them.
    pub(crate) fn runs_of(b: &RoaringBitmap) -> Vec<(u32, u32)> {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for x in b {
            match runs.last_mut() {
                Some((_, e)) if *e == x => *e = x + 1,
                _ => runs.push((x, x + 1)),
            }
        }
        runs
    }

    /// A bitmap of ranges and single values, optimised (runs) or not, and its stored bytes.
    pub(crate) fn stored(
        ranges: Vec<(u32, u32)>,
        singles: Vec<u32>,
        optimize: bool,
    ) -> (RoaringBitmap, Vec<u8>) {
        let mut b: RoaringBitmap = singles.into_iter().collect();
        for (start, len) in ranges {
            b.insert_range(start..start + len);
        }
        if optimize {
            b.optimize();
        }
        let mut blob = Vec::new();
        b.serialize_into(&mut blob).unwrap();
        (b, blob)
    }

    #[test]
    fn first_finds_where_a_condition_starts_holding() {
        for n in 1..70 {
            for k in 1..=n {
                assert_eq!(first(0, n, |i| i >= k), k, "n={n} k={k}");
                assert_eq!(first(3, n + 3, |i| i >= k + 3), k + 3);
                assert_eq!(first(n, n, |_| panic!("nothing to test")), n);
                assert_eq!(first(n + 2, n, |_| panic!("nothing to test")), n);
            }
        }
    }

    proptest! {
        #[test]
        fn lookups_agree_with_roaring(
            ranges in proptest::collection::vec((0u32..300_000, 0u32..70_000), 0..12),
            singles in proptest::collection::vec(0u32..400_000, 0..6000),
            probes in proptest::collection::vec(0u32..420_000, 0..400),
            optimize: bool,
        ) {
            let (b, blob) = stored(ranges, singles, optimize);
            prop_assert_eq!(serialized_len(&blob), Some(b.len()));
            prop_assert_eq!(serialized_len(&blob[..blob.len().min(3)]), None);
            let stored = StoredBitmap::parse(&blob).expect("parses");
            let mut probes: RoaringBitmap = probes.into_iter().collect();
            // Probe the edges of every run and container too.
            for v in b.iter().step_by(97) {
                probes.extend([v.saturating_sub(1), v, v + 1]);
            }
            prop_assert_eq!(stored.filter(&probes), &probes & &b);
        }

        #[test]
        fn damaged_headers_are_refused_or_harmless(
            values in proptest::collection::vec(0u32..200_000, 1..3000),
            cut in 0usize..64,
            flip in 0usize..64,
        ) {
            let b: RoaringBitmap = values.into_iter().collect();
            let mut blob = Vec::new();
            b.serialize_into(&mut blob).unwrap();
            blob.truncate(blob.len().saturating_sub(cut));
            if let Some(i) = blob.len().checked_sub(1).map(|l| flip.min(l)) {
                blob[i] ^= 0x5a;
            }
            // Never a panic; an answer (checksums catch damage before real reads).
            if let Some(s) = StoredBitmap::parse(&blob) {
                let _ = s.filter(&b);
            }
        }
    }
}
