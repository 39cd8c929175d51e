//! What the move-feature bitmaps (the piece type that moved, the one captured, the promotion
//! piece, castling side, en passant, null move — of the move that reached a position and of
//! the moves leaving it) can say about one move: the conditions the move filters (`dash.rs`,
//! `legacy_move.rs`, `castle.rs`, `en_passant.rs`, `null_move.rs`) build their index rules
//! from.
//!
//! Upper bounds. Each condition of a move filter is necessary for one and the same move, so
//! their scans are
//! intersected (the intersection may keep a position where different moves meet different
//! conditions; the residual decides). A segment written before these bitmaps existed cannot
//! answer a move scan: it is then evaluated whole (`SegmentScan::inexact`).

use crate::ast::{Castle, Expr, MoveSource, Node, PieceSet};

use super::bounds::Bounds;
use super::scan::{MoveOf, MoveTraits, Scan};

/// Which move a filter looks at: the one that reached the position, the PGN moves from it, or
/// (`None`) generated moves, which no index keeps.
pub(crate) fn side(source: MoveSource) -> Option<MoveOf> {
    match source {
        MoveSource::Pgn => Some(MoveOf::Leaving),
        MoveSource::Current => Some(MoveOf::Reached),
        MoveSource::Legal | MoveSource::PseudoLegal => None,
    }
}

fn upper(scan: Scan) -> Bounds {
    Bounds {
        upper: scan,
        lower: Scan::Empty,
    }
}

/// The piece types (P N B R Q K bits) a square-set filter can designate, when it is a piece
/// designator that names pieces only: every square in its set then holds one of them.
fn designated_roles(n: &Node) -> Option<u8> {
    let Expr::Pieces(d) = &n.expr else {
        return None;
    };
    if d.pieces & PieceSet::EMPTY != 0 || d.pieces & 0xfff == 0 {
        return None;
    }
    Some(((d.pieces | d.pieces >> 6) & 63) as u8)
}

/// Conditions on one move, gathered from a filter's parameters.
pub(crate) struct MoveConditions {
    of: MoveOf,
    scan: Scan,
}

impl MoveConditions {
    pub(crate) fn new(of: MoveOf) -> Self {
        Self {
            of,
            scan: Scan::All,
        }
    }

    pub(crate) fn need(&mut self, traits: MoveTraits) {
        let s = Scan::Moves {
            of: self.of,
            traits,
        };
        self.scan = Scan::and(std::mem::replace(&mut self.scan, Scan::All), s);
    }

    /// The origin is a square of `from`: the moving piece is of a designated type (indexed for
    /// the moves leaving a position only).
    pub(crate) fn from(&mut self, from: Option<&Node>) {
        if self.of != MoveOf::Leaving {
            return;
        }
        if let Some(roles) = from.and_then(designated_roles) {
            self.need(MoveTraits::moved(roles));
        }
    }

    /// The destination is a square of `to`, which holds a designated piece before the move:
    /// a capture of that type — or castling or a null move, whose destination can be the
    /// king's (or in Chess960 the rook's) own square.
    pub(crate) fn to(&mut self, to: Option<&Node>) {
        if let Some(roles) = to.and_then(designated_roles) {
            self.need(
                MoveTraits::captured(roles)
                    .union(MoveTraits::CASTLE_KING_SIDE)
                    .union(MoveTraits::CASTLE_QUEEN_SIDE)
                    .union(MoveTraits::NULL),
            );
        }
    }

    /// A capture, of a piece on a square of `captured` when given.
    pub(crate) fn capture(&mut self, captured: Option<&Node>) {
        match captured.and_then(designated_roles) {
            Some(roles) => self.need(MoveTraits::captured(roles)),
            None => self.need(MoveTraits::CAPTURE),
        }
    }

    pub(crate) fn castle(&mut self, which: Castle) {
        self.need(castle_traits(which));
    }

    pub(crate) fn finish(self) -> Bounds {
        upper(self.scan)
    }
}

fn castle_traits(which: Castle) -> MoveTraits {
    match which {
        Castle::King => MoveTraits::CASTLE_KING_SIDE,
        Castle::Queen => MoveTraits::CASTLE_QUEEN_SIDE,
        Castle::Any => MoveTraits::CASTLE_KING_SIDE.union(MoveTraits::CASTLE_QUEEN_SIDE),
    }
}

/// What a dash target says of the move it follows: `--(o-o-o)`, `--(enpassant)`, or such a
/// word among the filters of a compound target.
pub(crate) fn target_traits(t: &Node) -> Option<MoveTraits> {
    match &t.expr {
        Expr::Castled(which) => Some(castle_traits(*which)),
        Expr::EnPassant => Some(MoveTraits::EN_PASSANT),
        Expr::NullMove => Some(MoveTraits::NULL),
        Expr::Compound(items) => items.iter().find_map(target_traits),
        _ => None,
    }
}

/// `o-o`, `o-o-o`, `castle` about the move that reached the position.
pub(crate) fn castled(which: Castle) -> Bounds {
    last_move(castle_traits(which))
}

/// A fact about the move that reached the position (`enpassant`, `nullmove`).
pub(crate) fn last_move(traits: MoveTraits) -> Bounds {
    upper(Scan::Moves {
        of: MoveOf::Reached,
        traits,
    })
}
