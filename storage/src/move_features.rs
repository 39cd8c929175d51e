//! Move features: the colourless facts about a move that get a position bitmap of their own —
//! the piece type that moved, the piece type captured, the promotion piece, castling side, en
//! passant and the null move.
//!
//! Every position has one bit set per feature of the move that *reached* it, and one per feature
//! of *any* move that *leaves* it (a position with variations has several), so a move filter at
//! the current position (`--`, `[x]`, `move promote N`) and one about the move just played
//! (`o-o-o`, `enpassant`, `move previous`) both become bitmap scans. A segment written before
//! these bitmaps existed lacks the marker key ([`MoveFeature::MARKER`]); its scans must then
//! assume every position (a missing bitmap would otherwise read as empty).

use shakmaty::Role;

use crate::schema::{MoveCode, MoveKind};

/// One move feature (a bit number below [`MoveFeature::COUNT`]).
///
/// ```
/// use cqldb_storage::move_features::MoveFeature;
/// use shakmaty::Role;
/// assert_eq!(MoveFeature::from_bit(MoveFeature::Captured(Role::Queen).bit()), Some(MoveFeature::Captured(Role::Queen)));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MoveFeature {
    /// The piece type that moved (the king for castling and null moves).
    Moved(Role),
    /// The piece type captured (a pawn for en passant; never a king).
    Captured(Role),
    /// The promotion piece type.
    Promoted(Role),
    /// Castling with the rook on the king's side of the king.
    CastleKingSide,
    /// Castling with the rook on the other side.
    CastleQueenSide,
    /// An en-passant capture.
    EnPassant,
    /// A null move.
    Null,
}

impl MoveFeature {
    /// Number of feature bits (6 moved, 6 captured, 6 promoted, 2 castles, en passant, null).
    pub const COUNT: u8 = 22;

    /// The reserved bit whose (empty) bitmap marks a segment that has move bitmaps.
    pub const MARKER: u8 = 63;

    /// The features kept for the move that *reached* a position: all but the piece type that
    /// moved. That one changes at nearly every position, so its bitmaps cost a run per position
    /// at ingest and a bit per position on disk, and the move leaving a position (`N--`,
    /// `move from N`) is what queries ask of it.
    pub const REACHED_KEPT: u32 = !0x3f;

    /// The feature's bit number.
    pub fn bit(self) -> u8 {
        let role = |r: Role| r as u8 - 1;
        match self {
            Self::Moved(r) => role(r),
            Self::Captured(r) => 6 + role(r),
            Self::Promoted(r) => 12 + role(r),
            Self::CastleKingSide => 18,
            Self::CastleQueenSide => 19,
            Self::EnPassant => 20,
            Self::Null => 21,
        }
    }

    /// Inverse of [`MoveFeature::bit`].
    pub fn from_bit(bit: u8) -> Option<Self> {
        let role = |b: u8| Role::try_from(u32::from(b) + 1).ok();
        Some(match bit {
            0..6 => Self::Moved(role(bit)?),
            6..12 => Self::Captured(role(bit - 6)?),
            12..18 => Self::Promoted(role(bit - 12)?),
            18 => Self::CastleKingSide,
            19 => Self::CastleQueenSide,
            20 => Self::EnPassant,
            21 => Self::Null,
            _ => return None,
        })
    }

    /// The features of a move as a bit set (empty for an initial position's code).
    pub fn set_of(mv: MoveCode) -> u32 {
        let Some(kind) = mv.kind() else {
            return 0;
        };
        let mut bits = 0u32;
        let mut add = |f: Self| bits |= 1 << f.bit();
        if let Some(r) = mv.role() {
            add(Self::Moved(r));
        }
        if let Some(r) = mv.capture() {
            add(Self::Captured(r));
        }
        if let Some(r) = mv.promotion() {
            add(Self::Promoted(r));
        }
        match kind {
            MoveKind::Castle => match (mv.from(), mv.to()) {
                (Some(king), Some(rook)) if rook > king => add(Self::CastleKingSide),
                _ => add(Self::CastleQueenSide),
            },
            MoveKind::EnPassant => add(Self::EnPassant),
            MoveKind::Null => add(Self::Null),
            MoveKind::Normal => {}
        }
        bits
    }
}

/// Which move of a position a feature bitmap is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MoveSide {
    /// The move that reached the position.
    Reached,
    /// Some move played from the position (in the game or a variation).
    Leaving,
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Chess, Position, Square, fen::Fen};

    #[test]
    fn bits_round_trip_and_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for bit in 0..MoveFeature::COUNT {
            let f = MoveFeature::from_bit(bit).expect("every bit below COUNT names a feature");
            assert_eq!(f.bit(), bit);
            assert!(seen.insert(f));
        }
        assert_eq!(MoveFeature::from_bit(MoveFeature::COUNT), None);
        assert_eq!(MoveFeature::from_bit(MoveFeature::MARKER), None);
    }

    #[test]
    fn features_of_moves() {
        let pos: Chess = "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        let find = |from: Square, to: Square, promo: Option<Role>| {
            let m = pos
                .legal_moves()
                .into_iter()
                .find(|m| {
                    m.from() == Some(from) && m.to() == to && m.promotion() == promo
                        || m.is_castle() && m.from() == Some(from) && m.to() == to
                })
                .unwrap();
            MoveFeature::set_of(MoveCode::from_move(&m))
        };
        let has = |set: u32, f: MoveFeature| set >> f.bit() & 1 == 1;
        let ep = find(Square::E5, Square::D6, None);
        assert!(has(ep, MoveFeature::EnPassant) && has(ep, MoveFeature::Captured(Role::Pawn)));
        let promo = find(Square::B7, Square::A8, Some(Role::Knight));
        assert!(has(promo, MoveFeature::Promoted(Role::Knight)));
        assert!(has(promo, MoveFeature::Captured(Role::Rook)));
        assert!(has(promo, MoveFeature::Moved(Role::Pawn)));
        let long = find(Square::E1, Square::A1, None);
        assert!(
            has(long, MoveFeature::CastleQueenSide) && has(long, MoveFeature::Moved(Role::King))
        );
        let short = find(Square::E1, Square::H1, None);
        assert!(has(short, MoveFeature::CastleKingSide));
        assert_eq!(MoveFeature::set_of(MoveCode::NONE), 0);
        let null = MoveFeature::set_of(MoveCode::null(Square::E1));
        assert!(has(null, MoveFeature::Null) && has(null, MoveFeature::Moved(Role::King)));
    }
}
