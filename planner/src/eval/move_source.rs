//! The moves a move filter looks at from the current position, as [`Cand`]s: the game's
//! moves from it (`--`, `[x]`, `move`), the move that reached it (`currentmove`,
//! `move previous`), or moves generated there (`legal`, `pseudolegal`).

use cqldb_storage::{MoveCode, MoveKind, PositionRecord};
use shakmaty::{Chess, Move, Position};

use crate::ast::MoveSource;
use crate::eval::board;
use crate::eval::candidate::{Cand, from_code};
use crate::eval::context::Cx;

/// Runs `f` on the moves of `source` at the current position and the position they start
/// from (the parent for the move that reached it); `None` where there are no such moves (no
/// move reached the root; a position move generation cannot set up).
///
/// The list lives in a buffer the context keeps: move filters run at every position of a full
/// scan, and a fresh list each time was a fifth of a scan's time. A nested move filter finds
/// the buffer taken and uses a list of its own.
pub fn with_candidates<R>(
    source: MoveSource,
    cx: &mut Cx,
    f: impl FnOnce(u32, &[Cand], &mut Cx) -> Option<R>,
) -> Option<R> {
    let mut buf = std::mem::take(&mut cx.move_buffer);
    buf.clear();
    let r = fill(source, cx, &mut buf).and_then(|at| f(at, &buf, cx));
    cx.move_buffer = buf;
    r
}

fn fill(source: MoveSource, cx: &mut Cx, out: &mut Vec<Cand>) -> Option<u32> {
    let g = cx.game;
    match source {
        MoveSource::Pgn => {
            out.extend(
                g.children(cx.cur)
                    .iter()
                    .filter_map(|&c| from_code(g.positions[c as usize].mv, Some(c))),
            );
            Some(cx.cur)
        }
        MoveSource::Current => {
            let parent = g.parent(cx.cur)?;
            out.push(from_code(g.positions[cx.cur as usize].mv, Some(cx.cur))?);
            Some(parent)
        }
        MoveSource::Legal => {
            let pos = chess_at(cx)?;
            out.extend(pos.legal_moves().iter().filter_map(from_move));
            Some(cx.cur)
        }
        MoveSource::PseudoLegal => {
            pseudo_legal(&g.positions[cx.cur as usize], out);
            if let Some(pos) = chess_at(cx) {
                out.extend(
                    pos.legal_moves()
                        .iter()
                        .filter(|m| m.is_castle())
                        .filter_map(from_move),
                );
            }
            Some(cx.cur)
        }
    }
}

fn from_move(m: &Move) -> Option<Cand> {
    from_code(MoveCode::from_move(m), None)
}

/// The shakmaty position at the current position (built once per position).
fn chess_at(cx: &mut Cx) -> Option<Chess> {
    if let Some(p) = cx.chess.get(&cx.cur) {
        return Some(p.clone());
    }
    let Some(pos) = cx.game.positions[cx.cur as usize].to_chess() else {
        cx.warn(format!(
            "position {} cannot be set up for move generation; legal/pseudolegal fail there",
            cx.cur
        ));
        return None;
    };
    cx.chess.insert(cx.cur, pos.clone());
    Some(pos)
}

/// Pseudo-legal moves without castling: each piece of the side to move to every square it
/// attacks that does not hold its own piece, pawn pushes, and en passant.
fn pseudo_legal(rec: &PositionRecord, out: &mut Vec<Cand>) {
    let white = rec.turn() == shakmaty::Color::White;
    let (own, enemy) = if white {
        (rec.board.0[0], rec.board.0[1])
    } else {
        (rec.board.0[1], rec.board.0[0])
    };
    let empty = !(own | enemy);
    let mut push = |from: u32, dest: u32, captured: Option<u32>, kind, promo: bool| {
        let promos: &[Option<usize>] = if promo {
            &[Some(1), Some(2), Some(3), Some(4)]
        } else {
            &[None]
        };
        for &p in promos {
            out.push(Cand {
                from,
                dest,
                captured,
                promo: p,
                kind,
                king_side: false,
                child: None,
            });
        }
    };
    for from in board::bits(own) {
        let Some(p) = board::piece_on(rec, from) else {
            continue;
        };
        if p % 6 == 0 {
            let dir: i32 = if white { 8 } else { -8 };
            let last_rank = |s: u32| if white { s / 8 == 7 } else { s / 8 == 0 };
            let one = from as i32 + dir;
            if (0..64).contains(&one) && empty >> one & 1 == 1 {
                push(
                    from,
                    one as u32,
                    None,
                    MoveKind::Normal,
                    last_rank(one as u32),
                );
                let start = if white { from / 8 == 1 } else { from / 8 == 6 };
                let two = one + dir;
                if start && (0..64).contains(&two) && empty >> two & 1 == 1 {
                    push(from, two as u32, None, MoveKind::Normal, false);
                }
            }
            for dest in board::bits(board::attacks_from(rec, from)) {
                if enemy >> dest & 1 == 1 {
                    push(from, dest, Some(dest), MoveKind::Normal, last_rank(dest));
                } else if rec.ep_square.is_some_and(|e| e as u32 == dest) {
                    let captured = from / 8 * 8 + dest % 8;
                    push(from, dest, Some(captured), MoveKind::EnPassant, false);
                }
            }
        } else {
            for dest in board::bits(board::attacks_from(rec, from) & !own) {
                let cap = (enemy >> dest & 1 == 1).then_some(dest);
                push(from, dest, cap, MoveKind::Normal, false);
            }
        }
    }
}
