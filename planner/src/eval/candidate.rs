//! A move as the move filters test it ([`Cand`]): its squares, captured square, promotion,
//! kind and castling side; and the move that reached the current position ([`last_move`]),
//! which the filters about the last move read (`from`, `to`, castling, `enpassant`,
//! `nullmove`).

use cqldb_storage::{MoveCode, MoveKind};

use crate::ast::Castle;

/// One candidate move, with the squares the filters test.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Cand {
    /// Where the moving piece stood.
    pub(crate) from: u32,
    /// Where it went (for castling, the king's square).
    pub(crate) dest: u32,
    /// Square of the captured piece (differs from `dest` for en passant).
    pub(crate) captured: Option<u32>,
    /// Promotion role index (P N B R Q K = 0..6).
    pub(crate) promo: Option<usize>,
    /// What kind of move.
    pub(crate) kind: MoveKind,
    /// Rook on the king side of the king (for `o-o`).
    pub(crate) king_side: bool,
    /// The position the move leads to, when it is a PGN move.
    pub(crate) child: Option<u32>,
}

impl Cand {
    /// Whether it castles on the side `which` names.
    pub(crate) fn castles(&self, which: Castle) -> bool {
        self.kind == MoveKind::Castle
            && match which {
                Castle::King => self.king_side,
                Castle::Queen => !self.king_side,
                Castle::Any => true,
            }
    }
}

/// The move that reached `position`, as the move filters see it (`None` at a game's first
/// position).
pub(crate) fn last_move(position: &cqldb_storage::PositionRecord) -> Option<Cand> {
    from_code(position.mv, None)
}

fn role_index(r: shakmaty::Role) -> usize {
    r as usize - 1
}

/// A stored move as a candidate (`child`: the position it leads to, for a PGN move).
pub(crate) fn from_code(mv: MoveCode, child: Option<u32>) -> Option<Cand> {
    let (from, to, kind) = (mv.from()? as u32, mv.to()? as u32, mv.kind()?);
    Some(match kind {
        MoveKind::Castle => {
            let king_side = to > from;
            let rank = from / 8 * 8;
            Cand {
                from,
                dest: rank + if king_side { 6 } else { 2 },
                captured: None,
                promo: None,
                kind,
                king_side,
                child,
            }
        }
        MoveKind::EnPassant => Cand {
            from,
            dest: to,
            captured: Some(from / 8 * 8 + to % 8),
            promo: None,
            kind,
            king_side: false,
            child,
        },
        _ => Cand {
            from,
            dest: to,
            captured: mv.capture().map(|_| to),
            promo: mv.promotion().map(role_index),
            kind,
            king_side: false,
            child,
        },
    })
}
