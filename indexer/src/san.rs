//! Resolving a SAN move against a position without generating a move list.
//!
//! shakmaty's [`San::to_move`] builds the list of every legal candidate (a 256-entry array
//! returned by value) and then filters it. Nearly every move in real games is an ordinary
//! piece or pawn move with a single candidate, so [`fast_move`] answers those from attack tables
//! and one king-safety test per candidate. Whatever it is not certain about (castling, en passant, no or several candidates, a capture mark that does not fit the board) it leaves to
//! shakmaty by returning `None`, so errors and their wording stay shakmaty's.

use shakmaty::attacks;
use shakmaty::san::San;
use shakmaty::{Bitboard, Chess, Color, Move, Position, Rank, Role, Square};

/// The move `san` denotes in `pos`, when it is an ordinary move with exactly one legal reading;
/// `None` means "ask shakmaty" (it never means the move is illegal).
///
/// `in_check` must be `pos.is_check()` (the tree builder knows it already, and knowing it spares
/// most moves the king-safety test). Whenever this returns `Some(m)`, `san.to_move(pos)` returns
/// `Ok(m)` (a differential test checks it over real games).
///
/// ```
/// use cqldb_indexer::san::fast_move;
/// use shakmaty::{Chess, san::San};
/// let san: San = "Nf3".parse().unwrap();
/// let pos = Chess::default();
/// assert_eq!(fast_move(&san, &pos, false), san.to_move(&pos).ok());
/// ```
pub fn fast_move(san: &San, pos: &Chess, in_check: bool) -> Option<Move> {
    let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = *san
    else {
        return None;
    };
    let board = pos.board();
    let turn = pos.turn();
    let us = board.by_color(turn);
    if us.contains(to) {
        return None;
    }
    let captured = board.role_at(to);
    // A capture mark without a piece to take is en passant or a writing error; both go slow.
    if capture != captured.is_some() {
        return None;
    }
    let occupied = board.occupied();
    let ours = |r: Role| board.by_role(r) & us;
    let from_set = match role {
        Role::King => attacks::king_attacks(to) & ours(role),
        Role::Knight => attacks::knight_attacks(to) & ours(role),
        Role::Bishop => attacks::bishop_attacks(to, occupied) & ours(role),
        Role::Rook => attacks::rook_attacks(to, occupied) & ours(role),
        Role::Queen => attacks::queen_attacks(to, occupied) & ours(role),
        Role::Pawn => {
            let last = if turn == Color::White {
                Rank::Eighth
            } else {
                Rank::First
            };
            let promotes = to.rank() == last;
            let promotion_ok = match promotion {
                None => !promotes,
                Some(Role::Knight | Role::Bishop | Role::Rook | Role::Queen) => promotes,
                Some(_) => false,
            };
            if !promotion_ok {
                return None;
            }
            if capture {
                attacks::pawn_attacks(turn.other(), to) & ours(Role::Pawn)
            } else {
                pawn_push_origin(pos, to).map_or(Bitboard::EMPTY, Bitboard::from_square)
            }
        }
    };
    if role != Role::Pawn && promotion.is_some() {
        return None;
    }
    let king = board.king_of(turn)?;
    let them = board.by_color(turn.other());
    let sliders = them & (board.rooks_and_queens() | board.bishops_and_queens());
    let mut found = None;
    for from in from_set {
        if file.is_some_and(|f| f != from.file()) || rank.is_some_and(|r| r != from.rank()) {
            continue;
        }
        // Out of check, a piece off every line from its king to an enemy slider cannot expose
        // the king; the king itself and pieces that may be pinned get the full test: no enemy
        // piece (other than one captured on `to`) may attack the king once `from` is empty and
        // `to` is occupied.
        let may_expose =
            in_check || role == Role::King || attacks::ray(king, from).intersects(sliders);
        if may_expose {
            let after = (occupied ^ Bitboard::from_square(from)) | Bitboard::from_square(to);
            let king_after = if role == Role::King { to } else { king };
            let attackers =
                board.attacks_to(king_after, turn.other(), after) & them & !Bitboard::from(to);
            if attackers.any() {
                continue;
            }
        }
        if found.is_some() {
            return None;
        }
        found = Some(from);
    }
    found.map(|from| Move::Normal {
        role,
        from,
        capture: captured,
        to,
        promotion,
    })
}

/// The square a pawn of the side to move would push from to reach the empty square `to` (one
/// step, or two from its home rank over an empty square).
fn pawn_push_origin(pos: &Chess, to: Square) -> Option<Square> {
    let board = pos.board();
    let turn = pos.turn();
    let pawns = board.by_role(Role::Pawn) & board.by_color(turn);
    let back = |sq: Square| -> Option<Square> {
        match turn {
            Color::White => sq.offset(-8),
            Color::Black => sq.offset(8),
        }
    };
    let one = back(to)?;
    if pawns.contains(one) {
        return Some(one);
    }
    let double_rank = match turn {
        Color::White => Rank::Fourth,
        Color::Black => Rank::Fifth,
    };
    if to.rank() != double_rank || board.occupied().contains(one) {
        return None;
    }
    let two = back(one)?;
    pawns.contains(two).then_some(two)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, File};

    fn pos(fen: &str) -> Chess {
        let fen: Fen = fen.parse().expect("test FEN");
        fen.into_position(CastlingMode::Standard)
            .expect("legal test FEN")
    }

    fn same(fen: &str, san: &str) -> Option<Move> {
        let p = pos(fen);
        let san: San = san.parse().expect("test SAN");
        let fast = fast_move(&san, &p, p.is_check());
        if let Some(m) = fast {
            assert_eq!(san.to_move(&p), Ok(m), "{fen} {san}");
        }
        fast
    }

    #[test]
    fn ordinary_moves_take_the_fast_path() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        for san in ["e4", "e3", "Nf3", "Nc3", "a4", "h3"] {
            assert!(same(start, san).is_some(), "{san}");
        }
        for san in ["e5", "Nd4", "Ke2", "O-O", "exd3", "e4=Q", "Bc4"] {
            assert!(same(start, san).is_none(), "{san}");
        }
    }

    #[test]
    fn pins_checks_and_ambiguity_go_slow_or_agree() {
        // The knight on d2 is pinned by the bishop on b4: only Ngf3 reaches f3.
        let fen = "rnbqk1nr/pppp1ppp/8/4p3/1b6/3P4/PPPNPPPP/R1BQKBNR w KQkq - 0 1";
        let m = same(fen, "Nf3").expect("one legal knight");
        assert_eq!(m.from(), Some(Square::G1));
        // Two knights reach d2 in this position: the SAN is ambiguous.
        let fen = "rnbqkbnr/pppppppp/8/8/8/5N2/PPP1PPPP/RNBQKB1R w KQkq - 0 1";
        assert!(same(fen, "Nd2").is_none());
        assert_eq!(same(fen, "Nbd2").and_then(|m| m.from()), Some(Square::B1));
        assert_eq!(same(fen, "Nfd2").and_then(|m| m.from()), Some(Square::F3));
        // In check from the queen on h4: taking it is the only rook move that helps.
        let fen = "4k3/8/8/8/7q/8/8/4K2R w - - 0 1";
        assert!(same(fen, "Rxh4").is_some());
        assert!(same(fen, "Rh2").is_none());
    }

    #[test]
    fn pawn_captures_promotions_and_en_passant() {
        let fen = "4k3/1P6/8/3pP3/8/8/8/4K3 w - d6 0 1";
        assert!(
            same(fen, "exd6").is_none(),
            "en passant is left to shakmaty"
        );
        assert!(same(fen, "b8=Q").is_some());
        assert!(same(fen, "b8").is_none());
        assert!(same(fen, "e6").is_some());
        let fen = "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1";
        let m = same(fen, "exd5").expect("a pawn capture");
        assert_eq!(m.from().map(|s| s.file()), Some(File::E));
        assert!(same(fen, "ed5").is_none(), "capture without x goes slow");
    }
}
