//! What a segment's bytes are spent on ([`SegmentLayout`]): recorded by the writer in the
//! segment's table of parts, so that `info` reports it without reading the segment's
//! directory (at 10 million games, reading every directory was most of `info`'s second).

use super::{Segment, SegmentData};
use crate::bitmap_key::{BitmapKey, KeyKind};
use crate::bitmap_lookup::serialized_len;
use crate::error::Result;
use crate::schema::PositionFlags;

/// Bytes by part and bitmaps by kind.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentLayout {
    /// Position blocks.
    pub columns: u64,
    /// Game text.
    pub text: u64,
    /// Bitmaps (board index included).
    pub bitmaps: u64,
    /// Everything else in the file (game columns, tables, names).
    pub other: u64,
    /// Bitmap bytes by [`KeyKind`] (in [`KeyKind::ALL`]'s order).
    pub bitmap_bytes: [u64; 8],
    /// Bitmaps by [`KeyKind`].
    pub bitmap_keys: [u64; 8],
    /// Positions on the main line (what `info` would otherwise decode a bitmap per segment
    /// for).
    pub mainline: u64,
}

/// Numbers a layout takes in a table (`other` is what the file's length leaves).
pub const ENCODED_VALUES: usize = 3 + 8 + 8 + 1;

fn kind_index(kind: KeyKind) -> usize {
    KeyKind::ALL.iter().position(|&k| k == kind).unwrap_or(0)
}

impl SegmentLayout {
    /// The layout of the writer's data (`other` left 0).
    pub(super) fn of_data(d: &SegmentData) -> Self {
        let mut out = Self {
            columns: d.blocks.iter().map(|b| b.data.len() as u64).sum(),
            text: d.text_chunks.iter().map(|c| c.len() as u64).sum(),
            bitmaps: d.bitmap_blobs.iter().map(|b| b.len() as u64).sum(),
            ..Self::default()
        };
        let mainline = BitmapKey::flag(PositionFlags::MAINLINE);
        for (&k, blob) in d.bitmap_keys.iter().zip(&d.bitmap_blobs) {
            if let Some(key) = BitmapKey::from_u64(k) {
                out.add(key, blob.len() as u64);
                if key == mainline {
                    out.mainline = serialized_len(blob).unwrap_or(0);
                }
            }
        }
        out
    }

    fn add(&mut self, key: BitmapKey, bytes: u64) {
        let i = kind_index(key.kind());
        self.bitmap_bytes[i] += bytes;
        self.bitmap_keys[i] += 1;
    }

    /// As little-endian numbers.
    pub(super) fn encode(&self) -> Vec<u8> {
        [self.columns, self.text, self.bitmaps]
            .iter()
            .chain(&self.bitmap_bytes)
            .chain(&self.bitmap_keys)
            .chain([&self.mainline])
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }

    /// From [`Self::encode`]'s bytes; `payload` is the file's payload length (for `other`).
    pub(super) fn decode(b: &[u8], payload: u64) -> Option<Self> {
        let v = |i: usize| -> Option<u64> {
            Some(u64::from_le_bytes(
                b.get(i * 8..i * 8 + 8)?.try_into().ok()?,
            ))
        };
        let mut out = Self {
            columns: v(0)?,
            text: v(1)?,
            bitmaps: v(2)?,
            ..Self::default()
        };
        for i in 0..8 {
            out.bitmap_bytes[i] = v(3 + i)?;
            out.bitmap_keys[i] = v(11 + i)?;
        }
        out.mainline = v(19)?;
        out.other = payload.saturating_sub(out.columns + out.text + out.bitmaps);
        Some(out)
    }

    /// Adds another segment's layout.
    pub fn merge(&mut self, o: &Self) {
        self.columns += o.columns;
        self.text += o.text;
        self.bitmaps += o.bitmaps;
        self.other += o.other;
        for i in 0..8 {
            self.bitmap_bytes[i] += o.bitmap_bytes[i];
            self.bitmap_keys[i] += o.bitmap_keys[i];
        }
        self.mainline += o.mainline;
    }
}

impl Segment {
    /// What the segment's bytes are spent on: from its table of parts, or, in a file written
    /// before the table recorded it, from its whole directory.
    pub fn layout(&self) -> Result<SegmentLayout> {
        if let Some(l) = self.table.as_ref().and_then(|t| t.layout) {
            return Ok(l);
        }
        let [columns, text, bitmaps, other] = self.size_breakdown();
        let mut out = SegmentLayout {
            columns,
            text,
            bitmaps,
            other,
            ..SegmentLayout::default()
        };
        for (key, bytes) in self.bitmap_keys()? {
            out.add(key, bytes as u64);
        }
        out.mainline = self.bitmap(BitmapKey::flag(PositionFlags::MAINLINE))?.len();
        Ok(out)
    }
}
