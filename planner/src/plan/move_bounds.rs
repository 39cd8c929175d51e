//! Index bounds of the move filters: what the move-feature bitmaps (the piece type that moved,
//! the one captured, the promotion piece, castling side, en passant, null move — of the move
//! that reached a position and of the moves leaving it) say about `--`, `[x]`, `move ...`,
//! `o-o`, `enpassant` and `nullmove`.
//!
//! Upper bounds, but for `move promote T` alone, which the bitmaps answer exactly. Each
//! condition of a move filter is necessary for one and the same move, so their scans are
//! intersected (the intersection may keep a position where different moves meet different
//! conditions; the residual decides). A segment written before these bitmaps existed cannot
//! answer a move scan: it is then evaluated whole (`SegmentScan::inexact`).

use crate::ast::{Castle, Dash, Expr, MoveFilter, MoveSource, Node, PieceSet};

use super::bounds::Bounds;
use super::scan::{MoveOf, MoveTraits, Scan};

/// Which move a filter looks at: the one that reached the position, the PGN moves from it, or
/// (`None`) generated moves, which no index keeps.
fn side(source: MoveSource) -> Option<MoveOf> {
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
struct MoveConditions {
    of: MoveOf,
    scan: Scan,
}

impl MoveConditions {
    fn new(of: MoveOf) -> Self {
        Self {
            of,
            scan: Scan::All,
        }
    }

    fn need(&mut self, traits: MoveTraits) {
        let s = Scan::Moves {
            of: self.of,
            traits,
        };
        self.scan = Scan::and(std::mem::replace(&mut self.scan, Scan::All), s);
    }

    /// The origin is a square of `from`: the moving piece is of a designated type (indexed for
    /// the moves leaving a position only).
    fn from(&mut self, from: Option<&Node>) {
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
    fn to(&mut self, to: Option<&Node>) {
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
    fn capture(&mut self, captured: Option<&Node>) {
        match captured.and_then(designated_roles) {
            Some(roles) => self.need(MoveTraits::captured(roles)),
            None => self.need(MoveTraits::CAPTURE),
        }
    }

    fn castle(&mut self, which: Castle) {
        self.need(castle_traits(which));
    }

    fn finish(self) -> Bounds {
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

/// `F--G`, `F[x]G`, with `=P` and a target.
pub(super) fn dash(d: &Dash) -> Bounds {
    let Some(of) = side(d.source) else {
        return Bounds::unknown();
    };
    let mut c = MoveConditions::new(of);
    c.from(d.from.as_ref());
    if d.capture {
        c.capture(d.to.as_ref());
    } else {
        c.to(d.to.as_ref());
    }
    if let Some(mask) = d.promotion {
        c.need(MoveTraits::promoted(mask));
    }
    // The target is evaluated after the move, where the move is the one that reached it.
    if let Some(traits) = d.target.as_ref().and_then(target_traits) {
        c.need(traits);
    }
    c.finish()
}

/// What a dash target says of the move it follows: `--(o-o-o)`, `--(enpassant)`, or such a
/// word among the filters of a compound target.
fn target_traits(t: &Node) -> Option<MoveTraits> {
    match &t.expr {
        Expr::Castled(which) => Some(castle_traits(*which)),
        Expr::EnPassant => Some(MoveTraits::EN_PASSANT),
        Expr::NullMove => Some(MoveTraits::NULL),
        Expr::Compound(items) => items.iter().find_map(target_traits),
        _ => None,
    }
}

/// The deprecated `move from .. to .. capture .. promote ..` as a filter.
pub(super) fn legacy(m: &MoveFilter, variations: bool) -> Bounds {
    if m.count || m.legal || m.pseudolegal {
        return Bounds::unknown();
    }
    let mut c = MoveConditions::new(if m.previous {
        MoveOf::Reached
    } else {
        MoveOf::Leaving
    });
    c.from(m.from.as_ref());
    c.to(m.to.as_ref());
    if let Some(captured) = &m.capture {
        c.capture(Some(captured));
    }
    if let Some(mask) = m.promote {
        c.need(MoveTraits::promoted(mask));
    }
    if let Some(w) = m.castle {
        c.castle(w);
    }
    if m.enpassant {
        c.need(MoveTraits::EN_PASSANT);
    }
    if m.null {
        c.need(MoveTraits::NULL);
    }
    // `move promote T` and nothing else: "a move from here promotes to a piece of type T",
    // which the bitmaps answer exactly: among every move leaving the position when variations
    // are visited, else of the main-line move (all the query sees there).
    let nothing_else = m.from.is_none()
        && m.to.is_none()
        && m.capture.is_none()
        && m.castle.is_none()
        && !(m.previous || m.enpassant || m.null || m.primary || m.secondary);
    if let Some(mask) = m.promote
        && nothing_else
    {
        let of = if variations {
            MoveOf::Leaving
        } else {
            MoveOf::MainLineNext
        };
        return Bounds::exact(Scan::Moves {
            of,
            traits: MoveTraits::promoted(mask),
        });
    }
    c.finish()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Span;

    fn node(expr: Expr) -> Node {
        Node {
            expr,
            span: Span::default(),
        }
    }

    fn pieces(pieces: u16) -> Node {
        node(Expr::Pieces(PieceSet {
            pieces,
            squares: u64::MAX,
        }))
    }

    fn moves(of: MoveOf, traits: MoveTraits) -> Scan {
        Scan::Moves { of, traits }
    }

    #[test]
    fn a_capture_dash_needs_a_capture_of_the_designated_type() {
        let d = Dash {
            from: Some(pieces(1 << 1)),
            to: Some(pieces(1 << 10)),
            capture: true,
            promotion: None,
            target: None,
            source: MoveSource::Pgn,
        };
        let b = dash(&d);
        assert_eq!(
            b.upper,
            Scan::And(vec![
                moves(MoveOf::Leaving, MoveTraits::moved(1 << 1)),
                moves(MoveOf::Leaving, MoveTraits::captured(1 << 4)),
            ])
        );
        assert_eq!(b.lower, Scan::Empty, "upper bounds only");
    }

    #[test]
    fn generated_moves_and_counts_have_no_bound() {
        let d = Dash {
            from: None,
            to: None,
            capture: true,
            promotion: None,
            target: None,
            source: MoveSource::Legal,
        };
        assert_eq!(dash(&d), Bounds::unknown());
        let m = MoveFilter {
            count: true,
            promote: Some(1 << 1),
            ..MoveFilter::default()
        };
        assert_eq!(legacy(&m, true), Bounds::unknown());
    }

    #[test]
    fn squares_and_empty_squares_do_not_restrict() {
        let d = Dash {
            from: Some(node(Expr::Pieces(PieceSet {
                pieces: PieceSet::ALL_CONTENTS,
                squares: 1,
            }))),
            to: Some(pieces(PieceSet::EMPTY | 1)),
            capture: false,
            promotion: Some(1 << 4),
            target: None,
            source: MoveSource::Current,
        };
        assert_eq!(
            dash(&d).upper,
            moves(MoveOf::Reached, MoveTraits::promoted(1 << 4))
        );
    }

    #[test]
    fn a_castling_target_names_the_move() {
        let d = Dash {
            from: None,
            to: None,
            capture: false,
            promotion: None,
            target: Some(node(Expr::Compound(vec![
                node(Expr::Check),
                node(Expr::Castled(Castle::Queen)),
            ]))),
            source: MoveSource::Pgn,
        };
        assert_eq!(
            dash(&d).upper,
            moves(MoveOf::Leaving, MoveTraits::CASTLE_QUEEN_SIDE)
        );
    }

    #[test]
    fn a_lone_promotion_is_exact() {
        let m = MoveFilter {
            promote: Some(1 << 1),
            ..MoveFilter::default()
        };
        assert_eq!(
            legacy(&m, true),
            Bounds::exact(moves(MoveOf::Leaving, MoveTraits::promoted(1 << 1)))
        );
        // Without variations, what the main-line move does.
        assert_eq!(
            legacy(&m, false),
            Bounds::exact(Scan::Moves {
                of: MoveOf::MainLineNext,
                traits: MoveTraits::promoted(1 << 1)
            })
        );
        for m in [
            MoveFilter {
                previous: true,
                ..m.clone()
            },
            MoveFilter {
                primary: true,
                ..m.clone()
            },
            MoveFilter {
                to: Some(pieces(1)),
                ..m.clone()
            },
        ] {
            assert_eq!(legacy(&m, true).lower, Scan::Empty, "{m:?}");
        }
    }

    #[test]
    fn legacy_previous_looks_at_the_last_move() {
        let m = MoveFilter {
            previous: true,
            castle: Some(Castle::Queen),
            ..MoveFilter::default()
        };
        assert_eq!(
            legacy(&m, true).upper,
            moves(MoveOf::Reached, MoveTraits::CASTLE_QUEEN_SIDE)
        );
    }
}
