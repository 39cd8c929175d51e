//! How a reader sees a segment's archive: [`SegmentView`], the writer's [`SegmentData`] with its
//! two largest tables of blobs (text chunks, bitmaps) left as raw headers.
//!
//! Why a second type for the same bytes: checking an archive with rkyv checks every nested
//! vector, so opening a segment read and checked the header of each of its text chunks and
//! bitmaps (some 40,000 per segment of a million games' worth, 8 bytes each, plus their
//! lengths and checksums in the head's digest): at 10 million games, most of a count's time
//! and memory went there before a single bitmap was read. Here those headers are plain bytes
//! to the archive check; a blob's header is resolved and bounds-checked when the blob is read
//! ([`blob_at`]), and the blob's own checksum is checked before its bytes are used.
//!
//! The archived layouts are the same (rkyv archives structs `repr(C)`, and a vector's header is
//! a relative pointer and a length whatever it holds): tests below write with one type and read
//! with the other.

use rkyv::Archive;

use super::{GameColumns, IssueRecord};

/// An archived `Vec<u8>`'s header as bytes: a little-endian `i32` offset from the header's own
/// address, then a little-endian `u32` length (rkyv's default 32-bit relative pointers).
pub type BlobHeader = [u8; 8];

/// A position block's entry as read: [`BlockEntry`](super::BlockEntry) with its data's header
/// as bytes (the block table is checked as a part, not entry by entry at open).
#[derive(Archive)]
pub(super) struct BlockEntryView {
    pub first_position: u32,
    pub positions: u32,
    pub first_game: u32,
    pub raw_len: u32,
    pub data: BlobHeader,
}

/// [`SegmentData`](super::SegmentData) as read: same fields, same order.
#[derive(Archive)]
#[expect(dead_code, reason = "only its archived form exists, read in place")]
pub(super) struct SegmentView {
    pub files: Vec<String>,
    pub games: GameColumns,
    pub blocks: Vec<BlockEntryView>,
    pub text_chunks: Vec<BlobHeader>,
    pub bitmap_keys: Vec<u64>,
    pub bitmap_blobs: Vec<BlobHeader>,
    pub issues: Vec<IssueRecord>,
    pub variations: u64,
    pub block_crcs: Vec<u32>,
    pub text_crcs: Vec<u32>,
    pub bitmap_crcs: Vec<u32>,
    pub meta_crc: u32,
}

/// The bytes a blob header points at inside `archive`, or `None` if they are not all inside it
/// (a damaged header): the header must itself lie inside `archive`.
pub fn blob_at<'a>(archive: &'a [u8], header: &BlobHeader) -> Option<&'a [u8]> {
    let len = blob_len(header) as usize;
    if len == 0 {
        return Some(&[]);
    }
    let at = (header.as_ptr() as usize).checked_sub(archive.as_ptr() as usize)?;
    if at >= archive.len() {
        return None;
    }
    let offset = i32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let start = at.checked_add_signed(offset as isize)?;
    archive.get(start..start.checked_add(len)?)
}

/// The length a blob header records.
pub fn blob_len(header: &BlobHeader) -> u64 {
    u64::from(u32::from_le_bytes([
        header[4], header[5], header[6], header[7],
    ]))
}

/// A blob's length, from the writer's bytes or the reader's header: what the digests feed for
/// each text chunk and bitmap, the same on both sides.
pub trait BlobLen {
    /// Bytes of the blob.
    fn blob_len(&self) -> u64;
}

impl BlobLen for Vec<u8> {
    fn blob_len(&self) -> u64 {
        self.len() as u64
    }
}

impl BlobLen for BlobHeader {
    fn blob_len(&self) -> u64 {
        blob_len(self)
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::super::{ArchivedBlockEntry, ArchivedSegmentData, BlockEntry, SegmentData};
    use super::*;

    #[test]
    fn the_view_has_the_writers_layout() {
        assert_eq!(
            size_of::<ArchivedSegmentView>(),
            size_of::<ArchivedSegmentData>()
        );
        macro_rules! same_offset {
            ($($f:ident),*) => {$(
                assert_eq!(
                    offset_of!(ArchivedSegmentView, $f),
                    offset_of!(ArchivedSegmentData, $f),
                    stringify!($f)
                );
            )*};
        }
        same_offset!(
            files,
            games,
            blocks,
            text_chunks,
            bitmap_keys,
            bitmap_blobs,
            issues,
            variations,
            block_crcs,
            text_crcs,
            bitmap_crcs,
            meta_crc
        );
        assert_eq!(
            size_of::<ArchivedBlockEntryView>(),
            size_of::<ArchivedBlockEntry>()
        );
        macro_rules! same_block_offset {
            ($($f:ident),*) => {$(
                assert_eq!(
                    offset_of!(ArchivedBlockEntryView, $f),
                    offset_of!(ArchivedBlockEntry, $f),
                    stringify!($f)
                );
            )*};
        }
        same_block_offset!(first_position, positions, first_game, raw_len, data);
    }

    #[test]
    fn written_blobs_read_back_through_their_headers() {
        let blobs: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; i as usize * 37 % 301]).collect();
        let data = SegmentData {
            files: vec!["a.pgn".into()],
            games: GameColumns::default(),
            blocks: blobs
                .iter()
                .map(|b| BlockEntry {
                    first_position: 1,
                    positions: 2,
                    first_game: 3,
                    raw_len: 4,
                    data: b.clone(),
                })
                .collect(),
            text_chunks: blobs.iter().rev().cloned().collect(),
            bitmap_keys: (0..40).collect(),
            bitmap_blobs: blobs.clone(),
            issues: Vec::new(),
            variations: 7,
            block_crcs: Vec::new(),
            text_crcs: Vec::new(),
            bitmap_crcs: vec![0; 40],
            meta_crc: 9,
        };
        let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&data).unwrap();
        let view = rkyv::access::<ArchivedSegmentView, rkyv::rancor::Error>(&bytes).unwrap();
        assert_eq!(view.variations.to_native(), 7);
        for (i, b) in blobs.iter().enumerate() {
            assert_eq!(blob_at(&bytes, &view.bitmap_blobs[i]), Some(b.as_slice()));
            assert_eq!(view.bitmap_blobs[i].blob_len(), b.len() as u64);
            let t = &view.text_chunks[blobs.len() - 1 - i];
            assert_eq!(blob_at(&bytes, t), Some(b.as_slice()));
            let block = &view.blocks[i];
            assert_eq!(blob_at(&bytes, &block.data), Some(b.as_slice()));
            assert_eq!(block.raw_len.to_native(), 4);
        }
        // A header outside the archive, or pointing past its end, resolves to nothing.
        let mut bad = [0u8; 8];
        bad[4] = 1;
        assert_eq!(blob_at(&bytes, &bad), None);
        let mut copy = bytes.to_vec();
        let view = rkyv::access::<ArchivedSegmentView, rkyv::rancor::Error>(&copy).unwrap();
        let at = view.bitmap_blobs[3].as_ptr() as usize - copy.as_ptr() as usize;
        copy[at + 4..at + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        let view = rkyv::access::<ArchivedSegmentView, rkyv::rancor::Error>(&copy).unwrap();
        assert_eq!(blob_at(&copy, &view.bitmap_blobs[3]), None);
    }
}
