//! A segment's bitmaps: reading one whole, partially ([`Segment::bitmap_and`]), by looking
//! positions up in its stored bytes ([`Segment::bitmap_filter`]), several at once a window at a
//! time ([`Segment::bitmaps_and`]) or into a dense set
//! ([`Segment::bitmap_or_dense`], [`Segment::bitmap_and_dense`],
//! [`Segment::bitmap_and_not_dense`]), its size from its header, and
//! which keys the segment has. Each bitmap's checksum is checked on its first read.

use std::ops::Range;
use std::sync::atomic::Ordering;

use fixedbitset::FixedBitSet;
use roaring::RoaringBitmap;

use super::Segment;
use super::parts::Half;
use super::view::{self, BlobLen};
use crate::bitmap::BitmapKey;
use crate::bitmap_lookup::StoredBitmap;
use crate::bitmap_pack;
use crate::bitmap_parity;
use crate::bitmap_window::{Operand, WindowSet};
use crate::board_index::{self, BoardIndexPart};
use crate::error::Result;
use crate::roaring_runs::{RunScratch, serialize_runs_with};
use crate::schema::MaterialSignature;

impl Segment {
    /// The bitmap for a key (empty if no position or game has it).
    pub fn bitmap(&self, key: BitmapKey) -> Result<RoaringBitmap> {
        match self.read(key, None)? {
            Some(Read::Roaring(blob)) => RoaringBitmap::deserialize_from(&blob[..])
                .map_err(|e| self.corrupt(&format!("bitmap {key:?}: {e}"))),
            Some(Read::Runs(runs)) => Ok(from_runs(&runs)),
            None => Ok(RoaringBitmap::new()),
        }
    }

    /// The stored bytes of `key`'s bitmap, checked against their checksum (`None` without one):
    /// packed or in roaring's format (see [`crate::bitmap_pack`]).
    pub fn bitmap_blob(&self, key: BitmapKey) -> Result<Option<&[u8]>> {
        Ok(self.stored_blob(key)?.map(|(_, blob)| blob))
    }

    /// `key`'s bitmap as the cheapest form to read: roaring's bytes as stored or as kept
    /// unpacked in the process's cache (`bitmap_cache.rs`), else the runs of its packed form.
    /// With `near`, a packed bitmap cut into chunks is read only in the chunks whose range
    /// holds one of `near`'s members: what a caller testing only those members needs.
    fn read(&self, key: BitmapKey, near: Option<&RoaringBitmap>) -> Result<Option<Read<'_>>> {
        match self.bitmap_index(key)? {
            Some(i) => self.read_at(key, i, near).map(Some),
            None => Ok(None),
        }
    }

    /// [`Self::read`] of the bitmap at directory index `i` (which holds `key`).
    fn read_at(&self, key: BitmapKey, i: usize, near: Option<&RoaringBitmap>) -> Result<Read<'_>> {
        let blob = self.stored_blob_at(i)?;
        if !bitmap_pack::is_packed(blob) {
            return Ok(Read::Roaring(RoaringBytes::Stored(blob)));
        }
        let damaged = || self.corrupt(&format!("bitmap {key:?}: packed form unreadable"));
        let cache_key = (self.uid, i as u32);
        if blob.first() == Some(&bitmap_pack::PARITY) {
            // Rebuilt a word at a time, in roaring's format: its runs would be one per
            // white-to-move position.
            if let Some(b) = crate::bitmap_cache::lookup(cache_key) {
                return Ok(Read::Roaring(RoaringBytes::Unpacked(b)));
            }
            // Asked again: rebuilt whole and kept, so that later lookups read the kept bytes
            // (a word of roaring's bitsets per 64 positions, about).
            let hint = usize::try_from(self.positions() / 8).unwrap_or(usize::MAX);
            let keep = crate::bitmap_cache::admit(cache_key, hint);
            if let (Some(c), None) = (near, keep) {
                // What a caller testing only `near`'s members needs: those of them in the set.
                return bitmap_parity::members_of(blob, c)
                    .map(Read::Runs)
                    .ok_or_else(damaged);
            }
            let bytes =
                std::sync::Arc::new(bitmap_parity::roaring_bytes(blob).ok_or_else(damaged)?);
            if let Some(admitted) = keep {
                crate::bitmap_cache::keep_shared(cache_key, &bytes, admitted);
            }
            return Ok(Read::Roaring(RoaringBytes::Unpacked(bytes)));
        }
        if !bitmap_pack::is_costly(blob) {
            return bitmap_pack::runs(blob).map(Read::Runs).ok_or_else(damaged);
        }
        if let Some(b) = crate::bitmap_cache::lookup(cache_key) {
            return Ok(Read::Roaring(RoaringBytes::Unpacked(b)));
        }
        // Read whole when it is to be kept: a bitmap read again is read whole from the cache.
        // Roaring's four bytes a run against the packed form's one to two.
        let keep = crate::bitmap_cache::admit(cache_key, blob.len().saturating_mul(3));
        let runs = match (near, keep) {
            (Some(c), None) => bitmap_pack::runs_near(blob, c),
            _ => bitmap_pack::runs(blob),
        }
        .ok_or_else(damaged)?;
        if let Some(admitted) = keep {
            let bytes = serialize_runs_with(&runs, &mut RunScratch::default());
            crate::bitmap_cache::keep(cache_key, bytes, admitted);
        }
        Ok(Read::Runs(runs))
    }

    /// The directory index and checked stored bytes of `key`'s bitmap.
    fn stored_blob(&self, key: BitmapKey) -> Result<Option<(usize, &[u8])>> {
        match self.bitmap_index(key)? {
            Some(i) => Ok(Some((i, self.stored_blob_at(i)?))),
            None => Ok(None),
        }
    }

    /// The checked stored bytes of the bitmap at directory index `i`.
    fn stored_blob_at(&self, i: usize) -> Result<&[u8]> {
        self.directory(i..i + 1, Half::Entries)?;
        let d = self.data();
        let header = d
            .bitmap_blobs
            .get(i)
            .ok_or_else(|| self.corrupt("bitmap blob missing"))?;
        let blob = self.blob(header, "bitmap")?;
        // A large bitmap is read whole (its checksum, or decoding it): ahead, not page by page.
        if blob.len() >= 1 << 15 {
            self.file.will_need(blob);
        }
        let (word, bit) = (self.verified_bitmaps.get(i / 64), 1u64 << (i % 64));
        if word.is_none_or(|w| w.load(Ordering::Relaxed) & bit == 0) {
            self.check_blob(blob, d.bitmap_crcs.get(i), "bitmap")?;
            if let Some(w) = word {
                w.fetch_or(bit, Ordering::Relaxed);
            }
        }
        Ok(blob)
    }

    /// The positions of `with` that are in `key`'s bitmap, read from the stored bitmap without
    /// decoding the parts of it that `with` has nothing in (a small set against a dense
    /// bitmap reads a few of its containers).
    pub fn bitmap_and(&self, key: BitmapKey, with: &RoaringBitmap) -> Result<RoaringBitmap> {
        match self.read(key, Some(with))? {
            Some(Read::Roaring(blob)) => with
                .intersection_with_serialized_unchecked(std::io::Cursor::new(&blob[..]))
                .map_err(|e| self.corrupt(&format!("bitmap {key:?}: {e}"))),
            Some(Read::Runs(runs)) => Ok(intersect_runs(&runs, with)),
            None => Ok(RoaringBitmap::new()),
        }
    }

    /// The members of `candidates` in `key`'s bitmap, each looked up in the stored bytes
    /// ([`StoredBitmap`](crate::bitmap_lookup::StoredBitmap)): for a few candidates against a
    /// large bitmap, far cheaper than decoding it.
    pub fn bitmap_filter(
        &self,
        key: BitmapKey,
        candidates: &RoaringBitmap,
    ) -> Result<RoaringBitmap> {
        match self.read(key, Some(candidates))? {
            Some(Read::Roaring(blob)) => Ok(self.parsed(key, &blob)?.filter(candidates)),
            Some(Read::Runs(runs)) => Ok(intersect_runs(&runs, candidates)),
            None => Ok(RoaringBitmap::new()),
        }
    }

    /// Adds the members of `key`'s bitmap to `dense`, a set over the segment's positions (or
    /// games), read from the stored bytes (see [`bitmap_dense`](crate::bitmap_dense)).
    pub fn bitmap_or_dense(&self, key: BitmapKey, dense: &mut FixedBitSet) -> Result<()> {
        self.bitmaps_or_dense(std::slice::from_ref(&key), dense)
    }

    /// Adds the members of every bitmap of `keys` to `dense` ([`Self::bitmap_or_dense`] is this
    /// for one key), with the keys found by one walk through the directory when they ascend (a broad
    /// material test unions thousands of signatures' bitmaps, and a search for each from
    /// scratch cost as much as reading them).
    pub fn bitmaps_or_dense(&self, keys: &[BitmapKey], dense: &mut FixedBitSet) -> Result<()> {
        for (key, i) in self.bitmap_indices(keys)? {
            match self.read_at(key, i, None)? {
                Read::Roaring(blob) => {
                    crate::bitmap_dense::or_into(&self.parsed(key, &blob)?, dense)
                }
                Read::Runs(runs) => crate::bitmap_dense::or_runs(&runs, dense),
            }
        }
        Ok(())
    }

    /// The summed sizes of the bitmaps of `keys` ([`Self::bitmap_len`] of each), the keys
    /// found as in [`Self::bitmaps_or_dense`].
    pub fn bitmaps_len(&self, keys: &[BitmapKey]) -> u64 {
        self.bitmap_indices(keys).map_or(0, |found| {
            found.into_iter().map(|(_, i)| self.len_at(i)).sum()
        })
    }

    /// Where each key of `keys` that the segment has is among its bitmaps. Ascending keys are
    /// found by galloping on from the last one found; each place is then proved as
    /// [`Self::key_range`] proves one (its directory chunk checked, its neighbours bracketing
    /// it), a key out of order or a place not proved falls back to that search.
    fn bitmap_indices(&self, keys: &[BitmapKey]) -> Result<Vec<(BitmapKey, usize)>> {
        let all = &self.data().bitmap_keys;
        let n = all.len();
        let at = |i: usize| all[i].to_native();
        let mut out = Vec::with_capacity(keys.len());
        let mut from = 0usize;
        let mut last: Option<u64> = None;
        for &key in keys {
            let k = key.to_u64();
            let ascending = last.is_none_or(|l| l < k);
            last = Some(k);
            // The first index at or after `from` whose key is not below `k`.
            let i = ascending.then(|| crate::bitmap_lookup::first(from, n, |i| at(i) >= k));
            let proved = match i {
                Some(i) => {
                    self.directory(i.saturating_sub(1)..(i + 1).min(n), Half::Keys)?;
                    ((i == 0 || at(i - 1) < k) && (i == n || at(i) >= k)).then_some(i)
                }
                None => None,
            };
            let found = match proved {
                Some(i) => (i < n && at(i) == k).then_some(i),
                None => self.bitmap_index(key)?,
            };
            if let Some(i) = found {
                out.push((key, i));
                from = i;
            }
        }
        Ok(out)
    }

    /// Keeps in `dense` only the members of `key`'s bitmap, read from the stored bytes; returns
    /// how many it keeps.
    pub fn bitmap_and_dense(&self, key: BitmapKey, dense: &mut FixedBitSet) -> Result<u64> {
        Ok(match self.read(key, None)? {
            Some(Read::Roaring(blob)) => {
                crate::bitmap_dense::and_into(&self.parsed(key, &blob)?, dense)
            }
            Some(Read::Runs(runs)) => crate::bitmap_dense::and_runs(&runs, dense),
            None => {
                dense.clear();
                0
            }
        })
    }

    /// Hands `sink` the positions below `universe` in every bitmap of `keys` (none if one is
    /// missing), a window of 65,536 positions at a time, as [`crate::bitmap_window`] intersects
    /// them: what an `and` of broad bitmaps costs without a bitset of the whole segment.
    pub fn bitmaps_and(
        &self,
        keys: &[BitmapKey],
        universe: u32,
        sink: &mut dyn FnMut(u32, WindowSet<'_>),
    ) -> Result<()> {
        let mut reads = Vec::with_capacity(keys.len());
        for &key in keys {
            match self.read(key, None)? {
                Some(r) => reads.push((key, r)),
                None => return Ok(()),
            }
        }
        let mut operands = Vec::with_capacity(reads.len());
        for (key, r) in &reads {
            operands.push(match r {
                Read::Roaring(blob) => Operand::Roaring(self.parsed(*key, blob)?),
                Read::Runs(runs) => Operand::Runs(runs),
            });
        }
        crate::bitmap_window::intersect(&operands, universe, sink);
        Ok(())
    }

    /// Removes from `dense` the members of `key`'s bitmap, read from the stored bytes.
    pub fn bitmap_and_not_dense(&self, key: BitmapKey, dense: &mut FixedBitSet) -> Result<()> {
        match self.read(key, None)? {
            Some(Read::Roaring(blob)) => {
                crate::bitmap_dense::and_not_into(&self.parsed(key, &blob)?, dense)
            }
            Some(Read::Runs(runs)) => crate::bitmap_dense::and_not_runs(&runs, dense),
            None => {}
        }
        Ok(())
    }

    fn parsed<'b>(&self, key: BitmapKey, blob: &'b [u8]) -> Result<StoredBitmap<'b>> {
        StoredBitmap::parse(blob)
            .ok_or_else(|| self.corrupt(&format!("bitmap {key:?}: unreadable header")))
    }

    /// The positions that may hold the placement whose board key is `key` (a
    /// [`BitmapKey::Board`]) where the segment keeps no board bitmap for it: a few stretches of
    /// the segment, from its board index (see `board_index.rs`). `None` for a segment written
    /// before the index.
    pub fn board_candidates(&self, key: BitmapKey) -> Result<Option<RoaringBitmap>> {
        let k = key.to_u64();
        // Every part records the segment's number of buckets: the first says which part to read.
        let Some(first) = self.bitmap_blob(BitmapKey::BoardIndex(0))? else {
            return Ok(None);
        };
        let damaged = || self.corrupt("board index: unreadable part");
        let part = board_index::part_of(first, k).ok_or_else(damaged)?;
        let blob = match part {
            0 => first,
            _ => self
                .bitmap_blob(BitmapKey::BoardIndex(part))?
                .ok_or_else(damaged)?,
        };
        let universe = u32::try_from(self.positions()).map_err(|_| damaged())?;
        BoardIndexPart::parse(blob)
            .and_then(|idx| idx.candidates(k, universe))
            .map(Some)
            .ok_or_else(damaged)
    }

    /// Whether reading `key`'s bitmap costs about nothing: stored in roaring's format, packed
    /// small, or kept unpacked in the process's cache (`bitmap_cache.rs`). A bitmap the segment
    /// does not have is cheap too: nothing is read. An estimate: a damaged directory entry
    /// reads as costly here and fails where it is read.
    pub fn bitmap_is_cheap(&self, key: BitmapKey) -> Result<bool> {
        let Some(i) = self.bitmap_index(key)? else {
            return Ok(true);
        };
        // An estimate from the stored bytes, unchecked (a read checks them): checking a large
        // bitmap's bytes here would cost what reading it does.
        let Some(blob) = self.unchecked_blob_at(i) else {
            return Ok(false);
        };
        Ok(!bitmap_pack::is_packed(blob)
            || !bitmap_pack::is_costly(blob)
            || crate::bitmap_cache::lookup((self.uid, i as u32)).is_some())
    }

    /// The stored size of `key`'s bitmap in bytes (0 without one): what decoding it costs.
    pub fn bitmap_bytes(&self, key: BitmapKey) -> usize {
        // An estimate: a damaged directory reads as no bitmap here and fails where it is read.
        let d = self.data();
        self.bitmap_index(key)
            .ok()
            .flatten()
            .and_then(|i| d.bitmap_blobs.get(i))
            .map_or(0, |b| b.blob_len() as usize)
    }

    /// How many positions (or games) `key`'s bitmap holds, from its header (0 without one): a
    /// selectivity estimate, not checked against the bitmap's checksum.
    pub fn bitmap_len(&self, key: BitmapKey) -> u64 {
        self.bitmap_index(key)
            .ok()
            .flatten()
            .map_or(0, |i| self.len_at(i))
    }

    /// The stored bytes of the bitmap at directory index `i`, not checked against their
    /// checksum: for estimates, which a damaged entry may make wrong but not unsafe.
    fn unchecked_blob_at(&self, i: usize) -> Option<&[u8]> {
        self.data()
            .bitmap_blobs
            .get(i)
            .and_then(|h| view::blob_at(self.archive(), h))
    }

    /// [`Self::bitmap_len`] of the bitmap at directory index `i`.
    fn len_at(&self, i: usize) -> u64 {
        self.unchecked_blob_at(i)
            .and_then(|b| {
                bitmap_pack::packed_len(b).or_else(|| crate::bitmap_lookup::serialized_len(b))
            })
            .unwrap_or(0)
    }

    /// Where `key`'s bitmap is among the segment's (keys are sorted).
    fn bitmap_index(&self, key: BitmapKey) -> Result<Option<usize>> {
        let k = key.to_u64();
        let range = self.key_range(k, k)?;
        Ok((!range.is_empty()).then_some(range.start))
    }

    /// The directory entries whose keys are in `first..=last`, found by two searches and proved
    /// by the checked directory chunks around them: the keys outside those chunks are not read
    /// as trusted, so a damaged key elsewhere can only make this fail, never answer wrongly.
    fn key_range(&self, first: u64, last: u64) -> Result<Range<usize>> {
        let keys = &self.data().bitmap_keys;
        let n = keys.len();
        let from = keys.partition_point(|k| k.to_native() < first);
        let to = keys.partition_point(|k| k.to_native() <= last).max(from);
        self.directory(from.saturating_sub(1)..(to + 1).min(n), Half::Keys)?;
        let key = |i: usize| keys[i].to_native();
        // The written keys ascend: checked neighbours that bracket the range prove it whole.
        // (One damaged key can only mislead a search to itself or beside it, inside the chunks
        // just checked; this catches several.)
        let sound = (from == 0 || key(from - 1) < first)
            && (from == n || key(from) >= first)
            && (to == 0 || to == from || key(to - 1) <= last)
            && (to == n || key(to) > last);
        if !sound {
            // The searches were misled by a key outside the checked chunks: check them all,
            // which names the damage.
            self.directory(0..n, Half::Keys)?;
            return Err(self.corrupt("bitmap keys out of order"));
        }
        Ok(from..to)
    }

    /// Whether the segment stores a bitmap under `key` (an absent key reads as empty).
    pub fn has_bitmap(&self, key: BitmapKey) -> Result<bool> {
        Ok(self.bitmap_index(key)?.is_some())
    }

    /// The material signatures that have a bitmap, read from the bitmap keys on each call
    /// (nothing kept: a database of many segments would otherwise hold every segment's list,
    /// and walking one segment's keys costs microseconds).
    pub fn materials(&self) -> Result<impl Iterator<Item = MaterialSignature> + '_> {
        let sigs = self.signatures()?;
        Ok((0..sigs.len()).map(move |i| sigs.get(i)))
    }

    /// The material signatures that have a bitmap, ascending, as a view of the bitmap keys
    /// (for searches that skip most of them, see [`Signatures`]).
    pub fn signatures(&self) -> Result<Signatures<'_>> {
        // Keys sort by kind first: the material keys are one run.
        let first = BitmapKey::Material(MaterialSignature(0)).to_u64();
        let last = first | SIGNATURE_BITS;
        let keys = &self.data().bitmap_keys;
        Ok(Signatures {
            keys: &keys[self.key_range(first, last)?],
        })
    }

    /// The keys the segment has from `first` to `last` (both included), in key order: the
    /// values of one attribute with bitmaps (`Year(1990)..=Year(1999)`), found by two searches.
    pub fn keys_between(&self, first: BitmapKey, last: BitmapKey) -> Result<Vec<BitmapKey>> {
        let keys = &self.data().bitmap_keys;
        Ok(keys[self.key_range(first.to_u64(), last.to_u64())?]
            .iter()
            .filter_map(|k| BitmapKey::from_u64(k.to_native()))
            .collect())
    }

    /// Every bitmap's key and byte size (the whole directory is checked).
    pub fn bitmap_keys(&self) -> Result<Vec<(BitmapKey, usize)>> {
        let d = self.data();
        self.directory(0..d.bitmap_keys.len(), Half::Keys)?;
        self.directory(0..d.bitmap_keys.len(), Half::Entries)?;
        Ok(d.bitmap_keys
            .iter()
            .zip(d.bitmap_blobs.iter())
            .filter_map(|(k, b)| Some((BitmapKey::from_u64(k.to_native())?, b.blob_len() as usize)))
            .collect())
    }
}

/// A bitmap's bytes in roaring's portable format: borrowed from the file, or unpacked from its
/// packed form (shared with the cache).
enum RoaringBytes<'a> {
    Stored(&'a [u8]),
    Unpacked(std::sync::Arc<Vec<u8>>),
}

impl std::ops::Deref for RoaringBytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            RoaringBytes::Stored(b) => b,
            RoaringBytes::Unpacked(b) => b,
        }
    }
}

/// A bitmap as [`Segment::read`] hands it over.
enum Read<'a> {
    Roaring(RoaringBytes<'a>),
    /// Sorted, disjoint, half-open runs.
    Runs(Vec<(u32, u32)>),
}

/// The bitmap of `runs` (sorted, disjoint, half-open).
fn from_runs(runs: &[(u32, u32)]) -> RoaringBitmap {
    let mut b = RoaringBitmap::new();
    for &(s, e) in runs {
        if e - s == 1 {
            // Ascending: appended at the end without a search.
            let _ = b.try_push(s);
        } else {
            b.insert_range(s..e);
        }
    }
    b
}

/// The members of `set` in `runs` (sorted, disjoint, half-open): a set of up to a few members
/// a run is filtered member by member, a denser one (a board index's stretches, whole) is
/// intersected container by container.
///
/// Why the bound: building a bitmap costs a range insertion per run, some ten times what
/// filtering costs per member, and the candidates of a placement after its first operand are
/// a few thousand a segment against as many runs (building them was a fifth of a rare `fen`'s
/// time at 10 M games). Filtering each member of a board index's stretches, tens of thousands
/// over a few thousand runs, cost that `fen` 0.1 → 2.9 ms on the 256k games.
fn intersect_runs(runs: &[(u32, u32)], set: &RoaringBitmap) -> RoaringBitmap {
    if set.len() < (runs.len() as u64).saturating_mul(MEMBERS_PER_RUN) {
        filter_runs(runs, set)
    } else {
        from_runs(runs) & set
    }
}

/// Members a run that filtering them costs less than building the runs' bitmap.
const MEMBERS_PER_RUN: u64 = 4;

/// The members of `candidates` in `runs` (sorted, disjoint, half-open): one pass over both,
/// galloping over the runs between members.
fn filter_runs(runs: &[(u32, u32)], candidates: &RoaringBitmap) -> RoaringBitmap {
    let mut at = 0usize;
    let kept = candidates.iter().filter(|&v| {
        at = crate::bitmap_lookup::first(at, runs.len(), |i| runs[i].1 > v);
        runs.get(at).is_some_and(|&(s, _)| s <= v)
    });
    RoaringBitmap::from_sorted_iter(kept).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn runs_read_as_their_members(
            parts in proptest::collection::vec((1u32..3000, 1u32..3000), 0..200),
            candidates in proptest::collection::vec(0u32..700_000, 0..500),
        ) {
            let mut runs = Vec::new();
            let mut end = 0;
            for (gap, len) in parts {
                runs.push((end + gap, end + gap + len));
                end += gap + len;
            }
            let want: RoaringBitmap = runs.iter().flat_map(|&(s, e)| s..e).collect();
            prop_assert_eq!(&from_runs(&runs), &want);
            let candidates: RoaringBitmap = candidates.into_iter().collect();
            prop_assert_eq!(filter_runs(&runs, &candidates), &candidates & &want);
            prop_assert_eq!(intersect_runs(&runs, &candidates), &candidates & &want);
        }
    }
}

/// The bits of a material key below its kind.
const SIGNATURE_BITS: u64 = (1 << 56) - 1;

/// A segment's material signatures, ascending: its material bitmap keys read in place. The
/// keys share their kind byte, so they sort as their signatures do, and a search can find
/// where a run of signatures ends by bisection instead of testing each.
#[derive(Copy, Clone)]
pub struct Signatures<'a> {
    keys: &'a [rkyv::rend::u64_le],
}

impl Signatures<'_> {
    /// How many signatures there are.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The `i`-th signature in ascending order (`i < len()`).
    pub fn get(&self, i: usize) -> MaterialSignature {
        MaterialSignature(self.keys[i].to_native() & SIGNATURE_BITS)
    }
}
