//! `move`, CQL's deprecated move filter: `move [from F] [to T] [capture C] [promote P]
//! [previous | legal | pseudolegal] [count] [castle | o-o | o-o-o] [enpassant] [null]
//! [primary | secondary]`, the options in any order. It matches where such a move leaves the
//! position (with `previous`: reached it), its value being the set of the moves' origins, or
//! with `count` (legal or pseudo-legal moves only) their number.

use crate::ast::{Castle, Expr, MoveFilter, MoveSource};
use crate::error::ParseError;
use crate::eval::move_source::with_candidates;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::move_bounds::MoveConditions;
use crate::plan::scan::{MoveOf, MoveTraits, Scan};
use crate::types::Ty;
use cqldb_storage::MoveKind;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["move"];

/// Reads its options, up to the first word that is not one.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let keyword = p.previous_span();
    let mut m = MoveFilter::default();
    let mut count_span = None;
    loop {
        if p.eat_word("from") {
            m.from = Some(p.operand()?);
        } else if p.eat_word("to") {
            m.to = Some(p.operand()?);
        } else if p.eat_word("capture") {
            m.capture = Some(p.operand()?);
        } else if p.eat_word("promote") {
            let Some(d) = p.designator() else {
                return Err(p.error("expected a piece after 'promote'"));
            };
            // Colourless: a white or a black piece of a type names the type.
            let mask = (0..12)
                .filter(|&i| d.has_piece(i))
                .fold(0u8, |m, i| m | 1 << (i % 6));
            m.promote = Some(mask);
        } else if p.eat_word("previous") {
            m.previous = true;
        } else if p.eat_word("legal") {
            m.legal = true;
        } else if p.eat_word("pseudolegal") {
            m.pseudolegal = true;
        } else if p.eat_word("count") {
            m.count = true;
            count_span = Some(p.previous_span());
        } else if p.eat_word("castle") {
            m.castle = Some(Castle::Any);
        } else if p.eat_word("o-o") {
            m.castle = Some(Castle::King);
        } else if p.eat_word("o-o-o") {
            m.castle = Some(Castle::Queen);
        } else if p.eat_word("enpassant") {
            m.enpassant = true;
        } else if p.eat_word("null") {
            m.null = true;
        } else if p.eat_word("primary") {
            m.primary = true;
        } else if p.eat_word("secondary") {
            m.secondary = true;
        } else {
            break;
        }
    }
    if m.count && !m.legal && !m.pseudolegal {
        return Err(ParseError::new(
            "'count' in 'move' can only be used together with 'legal' or 'pseudolegal'",
            count_span.unwrap_or(keyword),
        ));
    }
    Ok(Expr::Move(Box::new(m)))
}

/// A set of squares (the moves' origins); a number with `count`, which the type checker
/// has always let stand where a set may.
pub const TYPE: Ty = Ty::Set;

/// The origins of the matching moves, or with `count` their number.
pub fn eval(m: &MoveFilter, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let source = if m.previous {
        MoveSource::Current
    } else if m.legal {
        MoveSource::Legal
    } else if m.pseudolegal {
        MoveSource::PseudoLegal
    } else {
        MoveSource::Pgn
    };
    with_candidates(source, cx, |at, cands, cx| {
        let saved = cx.cur;
        // The squares are read where the moves start.
        cx.cur = at;
        let mut sets = [u64::MAX; 3];
        for (i, n) in [&m.from, &m.to, &m.capture].into_iter().enumerate() {
            if let Some(n) = n {
                match ev.set(n, cx) {
                    Some(s) => sets[i] = s,
                    None => {
                        cx.cur = saved;
                        return None;
                    }
                }
            }
        }
        cx.cur = saved;
        let g = cx.game;
        let mut origins = 0u64;
        let mut count = 0i64;
        for &c in cands {
            let child_index = c.child.map(|ch| g.positions[ch as usize].child_index);
            let ok = sets[0] >> c.from & 1 == 1
                && sets[1] >> c.dest & 1 == 1
                && (m.capture.is_none() || c.captured.is_some_and(|s| sets[2] >> s & 1 == 1))
                && m.promote
                    .is_none_or(|mask| c.promo.is_some_and(|p| mask >> p & 1 == 1))
                && m.castle.is_none_or(|w| c.castles(w))
                && (!m.enpassant || c.kind == MoveKind::EnPassant)
                && (!m.null || c.kind == MoveKind::Null)
                && (!m.primary || child_index == Some(0))
                && (!m.secondary || child_index.is_some_and(|i| i > 0));
            if ok {
                origins |= 1 << c.from;
                count += 1;
            }
        }
        Some(if m.count {
            Value::Num(count)
        } else {
            Value::Set(origins)
        })
    })
}

/// Index rule: the move-feature bitmaps of the move its options describe (see
/// `plan/move_bounds.rs`); `move promote T` alone is exact. Generated moves have none.
pub fn bounds(m: &MoveFilter, variations: bool) -> Bounds {
    if m.count || m.legal || m.pseudolegal {
        return Bounds::unknown();
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
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Node, PieceSet, Span};
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    fn moves(of: MoveOf, traits: MoveTraits) -> Scan {
        Scan::Moves { of, traits }
    }

    #[test]
    fn the_moves_it_describes() {
        // Positions: 0 start, 1 e4, 2 e5, 3 Qh5, 4 Nc6, 5 Bc4, 6 Nf6, 7 Qxf7#, 8 g6.
        assert_eq!(matching("move from n", SCHOLAR), vec![3, 5]);
        assert_eq!(matching("move from Q", SCHOLAR), vec![2, 6]);
        assert_eq!(matching("move from Q capture p", SCHOLAR), vec![6]);
        assert_eq!(matching("move previous capture p", SCHOLAR), vec![7]);
        assert_eq!(matching("move secondary", SCHOLAR), vec![5], "g6");
        assert_eq!(matching("move primary to g6", SCHOLAR), Vec::<u32>::new());
        assert_eq!(matching("move legal count == 20", SCHOLAR), vec![0, 1]);
        assert!(crate::parse("cql() move count").is_err());
        assert!(crate::parse("cql() move promote 3").is_err());
    }

    #[test]
    fn a_lone_promotion_is_exact() {
        let m = MoveFilter {
            promote: Some(1 << 1),
            ..MoveFilter::default()
        };
        assert_eq!(
            bounds(&m, true),
            Bounds::exact(moves(MoveOf::Leaving, MoveTraits::promoted(1 << 1)))
        );
        // Without variations, what the main-line move does.
        assert_eq!(
            bounds(&m, false),
            Bounds::exact(moves(MoveOf::MainLineNext, MoveTraits::promoted(1 << 1)))
        );
        assert_eq!(bounds_of("move promote N"), bounds(&m, false));
        let to = Node {
            expr: Expr::Pieces(PieceSet {
                pieces: 1,
                squares: u64::MAX,
            }),
            span: Span::default(),
        };
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
                to: Some(to),
                ..m.clone()
            },
        ] {
            assert_eq!(bounds(&m, true).lower, Scan::Empty, "{m:?}");
        }
    }

    #[test]
    fn counts_and_generated_moves_have_no_bound() {
        let m = MoveFilter {
            count: true,
            promote: Some(1 << 1),
            ..MoveFilter::default()
        };
        assert_eq!(bounds(&m, true), Bounds::unknown());
    }

    #[test]
    fn previous_looks_at_the_last_move() {
        let m = MoveFilter {
            previous: true,
            castle: Some(Castle::Queen),
            ..MoveFilter::default()
        };
        assert_eq!(
            bounds(&m, true).upper,
            moves(MoveOf::Reached, MoveTraits::CASTLE_QUEEN_SIDE)
        );
    }
}
