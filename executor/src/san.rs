//! A move's SAN for PGN output, as shakmaty's `San::from_move` writes it, at a fraction of the
//! cost for most moves.
//!
//! `San::from_move` asks the position for every legal move of the mover's piece type to the
//! target square, to learn whether the origin must be written (`Nbd2`). That happens only when
//! another piece of the same kind and colour reaches the square; when none does — most moves
//! of a game — the answer is known from one attack lookup, and the move needs no origin.
//! Pawns (whose captures always name their file) and the rest go to shakmaty as they are.

use shakmaty::san::San;
use shakmaty::{Chess, Move, Position, Role, attacks};

/// The SAN of the legal move `m` at `pos` (without a check or mate suffix).
pub fn san(pos: &Chess, m: Move) -> San {
    if let Move::Normal {
        role,
        from,
        capture,
        to,
        promotion,
    } = m
        && role != Role::Pawn
    {
        let piece = role.of(pos.turn());
        let board = pos.board();
        // The squares a piece of this kind reaches `to` from are the squares it attacks from
        // `to` (true of every kind but the pawn).
        let rivals = attacks::attacks(to, piece, board.occupied()) & board.by_piece(piece);
        if rivals.without(from).is_empty() {
            return San::Normal {
                role,
                file: None,
                rank: None,
                capture: capture.is_some(),
                to,
                promotion,
            };
        }
    }
    San::from_move(pos, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    /// Every legal move of `pos` gets shakmaty's SAN.
    fn agrees(pos: &Chess) -> Result<(), TestCaseError> {
        for m in pos.legal_moves() {
            prop_assert_eq!(san(pos, m), San::from_move(pos, m), "{}", m);
        }
        Ok(())
    }

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn origins_where_needed_and_not_where_a_rival_is_pinned() {
        for fen in [
            // Two knights reach d2: Nbd2 / Nfd2.
            "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1",
            // Three queens reach the same squares: file, rank or both.
            "2k5/8/8/8/Q6Q/8/8/Q3K3 w - - 0 1",
            // The e4 knight is pinned: the other one needs no origin.
            "4k3/4r3/8/8/4N3/8/8/2N1K3 w - - 0 1",
            // Rooks on one file; a promotion beside a queen.
            "3k4/1P6/8/R7/8/R7/8/4K2Q w - - 0 1",
        ] {
            agrees(&position(fen)).unwrap();
        }
        let nbd2 = position("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1");
        let m = nbd2
            .legal_moves()
            .into_iter()
            .find(|m| m.from() == Some(shakmaty::Square::B1) && m.to() == shakmaty::Square::D2)
            .unwrap();
        assert_eq!(san(&nbd2, m).to_string(), "Nbd2");
    }

    proptest! {
        /// Along random games, at every position every legal move's SAN is shakmaty's (random
        /// games keep several knights, rooks and, after promotions, queens long enough to need
        /// origins).
        #[test]
        fn random_games_agree(choices in proptest::collection::vec(any::<u16>(), 0..160)) {
            let mut pos = Chess::default();
            for c in choices {
                agrees(&pos)?;
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves[usize::from(c) % moves.len()];
                pos.play_unchecked(m);
            }
        }
    }
}
