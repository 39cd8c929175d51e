//! Decoding of the piece-placement column.
//!
//! A position's bitboards are not stored as 64 bytes: they are the parent's bitboards with the
//! stored move applied ([`MoveCode`] is the delta encoding of the board column), and each game's
//! root placement is stored once. Applying a move to bitboards needs no legality check, so decoding
//! costs a handful of bit operations per position.
//!
//! The Zobrist column is derived the same way: it is a function of the decoded board, side to move,
//! castling rights and en-passant square, computed exactly as shakmaty does, so storing its eight
//! random (incompressible) bytes per position would only cost space.

use shakmaty::zobrist::{Zobrist64, ZobristValue};
use shakmaty::{Bitboard, CastlingSide, Color, Rank, Role, Square};

use crate::schema::{Bitboards, MoveCode, MoveKind, PositionRecord, castle_side};

/// Applies `mv`, made by `mover`, to `board` in place. The root code and null moves leave it as is.
///
/// ```
/// use cqldb_storage::{replay::apply_move, Bitboards, MoveCode};
/// use shakmaty::{Board, Color, Move, Role, Square};
/// let mut b = Bitboards::of(&Board::new());
/// let e4 = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
/// apply_move(&mut b, Color::White, MoveCode::from_move(&e4));
/// assert!(b.by_role(Role::Pawn).contains(Square::E4));
/// ```
pub fn apply_move(board: &mut Bitboards, mover: Color, mv: MoveCode) {
    let (Some(from), Some(to), Some(role), Some(kind)) = (mv.from(), mv.to(), mv.role(), mv.kind())
    else {
        return;
    };
    let us = mover as usize ^ 1;
    let them = us ^ 1;
    let b = &mut board.0;
    let from_bb = Bitboard::from_square(from).0;
    let to_bb = Bitboard::from_square(to).0;
    match kind {
        MoveKind::Null => {}
        MoveKind::Normal => {
            if let Some(cap) = mv.capture() {
                b[them] &= !to_bb;
                b[1 + cap as usize] &= !to_bb;
            }
            b[us] = (b[us] & !from_bb) | to_bb;
            b[1 + role as usize] &= !from_bb;
            let placed = mv.promotion().unwrap_or(role);
            b[1 + placed as usize] |= to_bb;
        }
        MoveKind::EnPassant => {
            let captured = Square::from_coords(to.file(), from.rank());
            let cap_bb = Bitboard::from_square(captured).0;
            b[them] &= !cap_bb;
            b[1 + Role::Pawn as usize] = (b[1 + Role::Pawn as usize] & !from_bb & !cap_bb) | to_bb;
            b[us] = (b[us] & !from_bb) | to_bb;
        }
        MoveKind::Castle => {
            let side = castle_side(from, to);
            let rank = from.rank();
            let king_to = Square::from_coords(side.king_to_file(), rank);
            let rook_to = Square::from_coords(side.rook_to_file(), rank);
            let clear = from_bb | to_bb;
            let (k, r) = (1 + Role::King as usize, 1 + Role::Rook as usize);
            b[us] &= !clear;
            b[k] &= !clear;
            b[r] &= !clear;
            b[us] |= Bitboard::from_square(king_to).0 | Bitboard::from_square(rook_to).0;
            b[k] |= Bitboard::from_square(king_to).0;
            b[r] |= Bitboard::from_square(rook_to).0;
        }
    }
}

/// The 64-bit Zobrist hash of a record's position, equal to shakmaty's
/// `zobrist_hash::<Zobrist64>(EnPassantMode::Legal)` for the same position (computed from scratch).
pub fn zobrist(rec: &PositionRecord) -> u64 {
    let mut z = Zobrist64::default();
    let b = &rec.board;
    for color in Color::ALL {
        for role in Role::ALL {
            for sq in b.by_piece(shakmaty::Piece { color, role }) {
                z ^= Zobrist64::zobrist_for_piece(sq, shakmaty::Piece { color, role });
            }
        }
    }
    if rec.turn() == Color::White {
        z ^= Zobrist64::zobrist_for_white_turn();
    }
    (z ^ castling_part(rec) ^ ep_part(rec)).0
}

/// The hash of a child from its parent's, updating only what the move changed (a few lookups).
/// `parent.zobrist` must be set; gives the same value as [`zobrist`] of the child.
pub fn zobrist_after(parent: &PositionRecord, child: &PositionRecord) -> u64 {
    let mut z = Zobrist64(parent.zobrist) ^ Zobrist64::zobrist_for_white_turn();
    if parent.castling != child.castling {
        z ^= castling_part(parent) ^ castling_part(child);
    }
    if parent.ep_square != child.ep_square {
        z ^= ep_part(parent) ^ ep_part(child);
    }
    let mv = child.mv;
    let (Some(from), Some(to), Some(role), Some(kind)) = (mv.from(), mv.to(), mv.role(), mv.kind())
    else {
        return z.0;
    };
    let us = parent.turn();
    let key = |sq, role, color| Zobrist64::zobrist_for_piece(sq, shakmaty::Piece { color, role });
    match kind {
        MoveKind::Null => {}
        MoveKind::Normal => {
            z ^= key(from, role, us) ^ key(to, mv.promotion().unwrap_or(role), us);
            if let Some(cap) = mv.capture() {
                z ^= key(to, cap, us.other());
            }
        }
        MoveKind::EnPassant => {
            let captured = Square::from_coords(to.file(), from.rank());
            z ^= key(from, Role::Pawn, us) ^ key(to, Role::Pawn, us);
            z ^= key(captured, Role::Pawn, us.other());
        }
        MoveKind::Castle => {
            let side = castle_side(from, to);
            let rank = from.rank();
            z ^= key(from, Role::King, us) ^ key(to, Role::Rook, us);
            z ^= key(
                Square::from_coords(side.king_to_file(), rank),
                Role::King,
                us,
            );
            z ^= key(
                Square::from_coords(side.rook_to_file(), rank),
                Role::Rook,
                us,
            );
        }
    }
    z.0
}

fn ep_part(rec: &PositionRecord) -> Zobrist64 {
    rec.ep_square.map_or(Zobrist64::default(), |sq| {
        Zobrist64::zobrist_for_en_passant_file(sq.file())
    })
}

fn castling_part(rec: &PositionRecord) -> Zobrist64 {
    let mut z = Zobrist64::default();
    if rec.castling.is_empty() {
        return z;
    }
    for color in Color::ALL {
        let back = Bitboard::from_rank(match color {
            Color::White => Rank::First,
            Color::Black => Rank::Eighth,
        });
        let ours = rec.board.by_color(color) & back;
        let Some(king) = (rec.board.by_role(Role::King) & ours).first() else {
            continue;
        };
        let rooks = rec.castling & ours;
        for side in CastlingSide::ALL {
            if rooks.into_iter().any(|r| castle_side(king, r) == side) {
                z ^= Zobrist64::zobrist_for_castling_right(color, side);
            }
        }
    }
    z
}
