//! `F--G` and `F[x]G`: the moves from the current position with an origin in `F` and a
//! destination in `G` (for `[x]`: a capture of a piece on `G`), with `=P` a promotion to a
//! piece of type `P` and `(T)` a filter `T` true after the move. Its value is the set of the
//! matching moves' origins.
//!
//! The dash is an operator rather than a keyword: the parser's token skeleton reads it
//! (`parser.rs`, where a square set may stand attached before it). The keyword filters that
//! apply a dash to other moves read theirs through [`after_keyword`]: `legal`,
//! `pseudolegal`, `currentmove` and `countmoves`; a dash's [`MoveSource`] says which moves.

use crate::ast::{Dash, Expr};
use crate::eval::context::matches;
use crate::eval::move_source::with_candidates;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::move_bounds::{MoveConditions, side, target_traits};
use crate::plan::scan::MoveTraits;
use crate::types::Ty;
use cqldb_storage::MoveKind;

/// The dash after a keyword (`currentmove --`): an error naming `word` if something else
/// follows.
pub fn after_keyword(word: &str, p: &mut dyn Syntax) -> PResult<Dash> {
    let start = p.here();
    let n = p.operand()?;
    match n.expr {
        Expr::Dash(d) => Ok(*d),
        _ => Err(crate::error::ParseError::new(
            format!("expected a '--' filter after '{word}'"),
            start..n.span.end,
        )),
    }
}

/// A set of squares (the matching moves' origins).
pub const TYPE: Ty = Ty::Set;

/// The origins of the matching moves.
pub fn eval(d: &Dash, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    matching(d, ev, cx).map(|(origins, _)| Value::Set(origins))
}

/// The origins of the moves `d` matches, and how many moves they are; `None` where the moves
/// cannot be had (no move reached the root; a position move generation cannot set up).
pub fn matching(d: &Dash, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<(u64, i64)> {
    with_candidates(d.source, cx, |at, cands, cx| {
        let saved = cx.cur;
        // The squares are read where the moves start.
        cx.cur = at;
        let from = match &d.from {
            Some(f) => ev.set(f, cx),
            None => Some(u64::MAX),
        };
        let to = match &d.to {
            Some(t) => ev.set(t, cx),
            None => Some(u64::MAX),
        };
        let (Some(from), Some(to)) = (from, to) else {
            cx.cur = saved;
            return None;
        };
        let mut origins = 0u64;
        let mut count = 0i64;
        for &c in cands {
            if from >> c.from & 1 == 0 {
                continue;
            }
            let hit = if d.capture {
                c.captured.is_some_and(|s| to >> s & 1 == 1)
            } else {
                to >> c.dest & 1 == 1
            };
            if !hit {
                continue;
            }
            if let Some(mask) = d.promotion
                && c.promo.is_none_or(|p| mask >> p & 1 != 1)
            {
                continue;
            }
            if let Some(t) = &d.target {
                let ok = match c.child {
                    Some(child) => {
                        cx.cur = child;
                        let v = ev.value(t, cx);
                        cx.cur = at;
                        matches(&v)
                    }
                    // Generated moves have no position after them: only the move-kind targets
                    // the parser lets through for them.
                    None => match &t.expr {
                        Expr::Castled(which) => c.castles(*which),
                        Expr::EnPassant => c.kind == MoveKind::EnPassant,
                        _ => false,
                    },
                };
                if !ok {
                    continue;
                }
            }
            origins |= 1 << c.from;
            count += 1;
        }
        cx.cur = saved;
        Some((origins, count))
    })
}

/// Index rule: the move-feature bitmaps of the moves leaving the position (of the move that
/// reached it, for `currentmove`): the moving piece's type when `F` designates pieces, a
/// capture (of the designated type), the promotion, and what the target says of the move
/// (`--(o-o-o)`). Upper bounds; generated moves have none.
pub fn bounds(d: &Dash) -> Bounds {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Castle, MoveSource, Node, PieceSet, Span};
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};
    use crate::plan::scan::{MoveOf, Scan};

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

    fn dash(from: Option<Node>, to: Option<Node>, capture: bool, source: MoveSource) -> Dash {
        Dash {
            from,
            to,
            capture,
            promotion: None,
            target: None,
            source,
        }
    }

    #[test]
    fn the_moves_from_the_position() {
        // Positions: 0 start, 1 e4, 2 e5, 3 Qh5, 4 Nc6, 5 Bc4, 6 Nf6, 7 Qxf7#, 8 g6.
        assert_eq!(matching("--", SCHOLAR), vec![0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(
            matching("Q--f7", SCHOLAR),
            vec![6],
            "a capture is a move too"
        );
        assert_eq!(matching("Q[x]f7", SCHOLAR), vec![6]);
        assert_eq!(matching("[x]", SCHOLAR), vec![6]);
        assert_eq!(matching("--(mate)", SCHOLAR), vec![6]);
        assert_eq!(matching("n--", SCHOLAR), vec![3, 5]);
        assert_eq!(matching("p--g6", SCHOLAR), vec![5], "the variation's move");
        assert_eq!(
            matching("Q--f7 == f7", SCHOLAR),
            Vec::<u32>::new(),
            "the origins"
        );
        assert_eq!(matching("Q--f7 == h5", SCHOLAR), vec![6]);
    }

    #[test]
    fn the_index_bounds_the_moving_and_captured_piece() {
        let d = dash(
            Some(pieces(1 << 1)),
            Some(pieces(1 << 10)),
            true,
            MoveSource::Pgn,
        );
        let b = bounds(&d);
        assert_eq!(
            b.upper,
            Scan::And(vec![
                moves(MoveOf::Leaving, MoveTraits::moved(1 << 1)),
                moves(MoveOf::Leaving, MoveTraits::captured(1 << 4)),
            ])
        );
        assert_eq!(b.lower, Scan::Empty, "upper bounds only");
        let Expr::Dash(parsed) = crate::filter::testing::node("N[x]q").expr else {
            panic!("a dash");
        };
        assert_eq!(bounds_of("N[x]q"), bounds(&parsed));
    }

    #[test]
    fn generated_moves_have_no_bound() {
        let d = dash(None, None, false, MoveSource::Legal);
        assert_eq!(bounds(&d), Bounds::unknown());
    }

    #[test]
    fn squares_and_empty_squares_do_not_restrict() {
        let mut d = dash(
            Some(node(Expr::Pieces(PieceSet {
                pieces: PieceSet::ALL_CONTENTS,
                squares: 1,
            }))),
            Some(pieces(PieceSet::EMPTY | 1)),
            false,
            MoveSource::Current,
        );
        d.promotion = Some(1 << 4);
        assert_eq!(
            bounds(&d).upper,
            moves(MoveOf::Reached, MoveTraits::promoted(1 << 4))
        );
    }

    #[test]
    fn a_castling_target_names_the_move() {
        let mut d = dash(None, None, false, MoveSource::Pgn);
        d.target = Some(node(Expr::Compound(vec![
            node(Expr::Check),
            node(Expr::Castled(Castle::Queen)),
        ])));
        assert_eq!(
            bounds(&d).upper,
            moves(MoveOf::Leaving, MoveTraits::CASTLE_QUEEN_SIDE)
        );
    }
}
