//! Roaring-bitmap attribute indexes of a segment.
//!
//! Position bitmaps are over segment-local position numbers: one per (colour, role, square), per
//! flag and per material signature. Game bitmaps are over segment-local game numbers: per result,
//! year, ECO code and Elo band. Bitmaps are built from runs (positions in pre-order keep a piece on
//! a square for many consecutive ids; see `batch.rs`), then run-optimised and serialised one blob
//! a key.

use std::collections::HashMap;

use roaring::RoaringBitmap;
use shakmaty::{Color, Role, Square};

use crate::batch::Run;
use crate::schema::{ELO_BAND_WIDTH, GameMeta, GameResult, MaterialSignature, PositionFlags};

/// The name of one bitmap.
///
/// ```
/// use cqldb_storage::BitmapKey;
/// use shakmaty::{Color, Role, Square};
/// let k = BitmapKey::Piece(Color::Black, Role::Knight, Square::F6);
/// assert_eq!(BitmapKey::from_u64(k.to_u64()), Some(k));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BitmapKey {
    /// Positions with this piece on this square.
    Piece(Color, Role, Square),
    /// Positions with this flag (the flag's bit index in [`PositionFlags`]).
    Flag(u8),
    /// Positions with this material.
    Material(MaterialSignature),
    /// Games with this result.
    Result(GameResult),
    /// Games from this year.
    Year(u16),
    /// Games with this ECO code (packed as in [`GameMeta::eco`]).
    Eco(u16),
    /// Games whose player of this colour has an Elo in this band (`elo / 100`).
    EloBand(Color, u16),
}

impl BitmapKey {
    /// True for keys whose bitmap is over games rather than positions.
    pub fn is_game_key(&self) -> bool {
        matches!(
            self,
            Self::Result(_) | Self::Year(_) | Self::Eco(_) | Self::EloBand(..)
        )
    }

    /// The flag bitmap key of one flag.
    pub fn flag(flag: PositionFlags) -> Self {
        Self::Flag(flag.0.trailing_zeros() as u8)
    }

    /// A sortable 64-bit encoding: kind in the top byte.
    pub fn to_u64(self) -> u64 {
        let (kind, v): (u64, u64) = match self {
            Self::Piece(c, r, s) => (1, (c as u64) << 9 | (r as u64) << 6 | u64::from(s)),
            Self::Flag(b) => (2, u64::from(b)),
            Self::Material(m) => (3, m.0),
            Self::Result(r) => (4, r as u64),
            Self::Year(y) => (5, u64::from(y)),
            Self::Eco(e) => (6, u64::from(e)),
            Self::EloBand(c, b) => (7, (c as u64) << 16 | u64::from(b)),
        };
        kind << 56 | v
    }

    /// Inverse of [`BitmapKey::to_u64`].
    pub fn from_u64(x: u64) -> Option<Self> {
        let v = x & ((1 << 56) - 1);
        Some(match x >> 56 {
            1 => Self::Piece(
                Color::from_white(v >> 9 & 1 == 1),
                Role::try_from((v >> 6) & 7).ok()?,
                Square::new((v & 63) as u32),
            ),
            2 => Self::Flag(v as u8),
            3 => Self::Material(MaterialSignature(v)),
            4 => Self::Result(GameResult::from_u8(v as u8)),
            5 => Self::Year(v as u16),
            6 => Self::Eco(v as u16),
            7 => Self::EloBand(Color::from_white(v >> 16 & 1 == 1), v as u16),
            _ => return None,
        })
    }
}

/// Accumulates the bitmaps of one segment from per-batch runs and per-game attributes.
pub struct BitmapBuilder {
    /// Piece-square bitmaps, densely indexed (they take most of the runs).
    pieces: Vec<RoaringBitmap>,
    other: HashMap<u64, RoaringBitmap>,
}

impl Default for BitmapBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl BitmapBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self {
            pieces: vec![RoaringBitmap::new(); 768],
            other: HashMap::new(),
        }
    }

    fn map(&mut self, key: u64) -> &mut RoaringBitmap {
        if key >> 56 == 1 {
            // Piece keys: colour << 9 | role << 6 | square, role 1..=6.
            let v = (key & 0x3ff) as usize;
            let idx = (v >> 9) * 384 + (((v >> 6) & 7) - 1) * 64 + (v & 63);
            &mut self.pieces[idx]
        } else {
            self.other.entry(key).or_default()
        }
    }

    /// Adds a batch's runs, its position ids shifted by `base`.
    pub fn add_runs(&mut self, base: u32, runs: &[Run]) {
        for r in runs {
            if r.end > r.start {
                self.map(r.key).insert_range(base + r.start..base + r.end);
            }
        }
    }

    /// Adds a game (segment-local number `game`).
    pub fn push_game(&mut self, game: u32, meta: &GameMeta) {
        self.map(BitmapKey::Result(meta.result).to_u64())
            .insert(game);
        if meta.year > 0 {
            self.map(BitmapKey::Year(meta.year).to_u64()).insert(game);
        }
        if meta.eco > 0 {
            self.map(BitmapKey::Eco(meta.eco).to_u64()).insert(game);
        }
        for (color, elo) in [
            (Color::White, meta.white_elo),
            (Color::Black, meta.black_elo),
        ] {
            if elo > 0 {
                self.map(BitmapKey::EloBand(color, elo / ELO_BAND_WIDTH).to_u64())
                    .insert(game);
            }
        }
    }

    /// Serialises every non-empty bitmap, sorted by key.
    pub fn finish(self) -> (Vec<u64>, Vec<Vec<u8>>) {
        let mut entries: Vec<(u64, RoaringBitmap)> = self.other.into_iter().collect();
        for (idx, bm) in self.pieces.into_iter().enumerate() {
            let (color, role, sq) = (idx / 384, idx % 384 / 64 + 1, idx % 64);
            let key = 1u64 << 56 | (color as u64) << 9 | (role as u64) << 6 | sq as u64;
            entries.push((key, bm));
        }
        entries.retain(|(_, bm)| !bm.is_empty());
        entries.sort_unstable_by_key(|(k, _)| *k);
        let mut keys = Vec::with_capacity(entries.len());
        let mut blobs = Vec::with_capacity(entries.len());
        for (k, mut bm) in entries {
            bm.optimize();
            let mut blob = Vec::with_capacity(bm.serialized_size());
            // Writing into a Vec cannot fail.
            let _ = bm.serialize_into(&mut blob);
            keys.push(k);
            blobs.push(blob);
        }
        (keys, blobs)
    }
}
