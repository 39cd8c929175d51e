//! Move filters: the dash (`--`, `[x]`) with promotions and targets, `legal`/`pseudolegal`,
//! `countmoves`, `currentmove` and the deprecated `move`.

use crate::ast::{Castle, Dash, Expr, MoveFilter, MoveSource};
use cqldb_storage::{MoveCode, MoveKind, PositionRecord};
use shakmaty::{Chess, Move, Position};

use crate::eval::board;
use crate::eval::candidate::{Cand, from_code};
use crate::eval::context::{Cx, matches};
use crate::eval::engine::Engine;
use crate::eval::value::Value;

fn from_move(m: &Move) -> Option<Cand> {
    from_code(MoveCode::from_move(m), None)
}

impl Engine {
    pub(crate) fn eval_move(&mut self, e: &Expr, cx: &mut Cx) -> Option<Value> {
        match e {
            Expr::Dash(d) => {
                let (set, _) = self.dash(d, cx)?;
                Some(Value::Set(set))
            }
            Expr::CountMoves(d) => {
                let (_, n) = self.dash(d, cx)?;
                Some(Value::Num(n))
            }
            Expr::Move(m) => self.legacy_move(m, cx),
            _ => None,
        }
    }

    /// The candidate moves of a source at the current position, and the position they start
    /// from.
    fn candidates(&mut self, source: MoveSource, cx: &mut Cx) -> Option<(u32, Vec<Cand>)> {
        let g = cx.game;
        match source {
            MoveSource::Pgn => Some((
                cx.cur,
                g.children(cx.cur)
                    .iter()
                    .filter_map(|&c| from_code(g.positions[c as usize].mv, Some(c)))
                    .collect(),
            )),
            MoveSource::Current => {
                let parent = g.parent(cx.cur)?;
                let c = from_code(g.positions[cx.cur as usize].mv, Some(cx.cur))?;
                Some((parent, vec![c]))
            }
            MoveSource::Legal => {
                let pos = chess_at(cx)?;
                Some((
                    cx.cur,
                    pos.legal_moves().iter().filter_map(from_move).collect(),
                ))
            }
            MoveSource::PseudoLegal => {
                let rec = &g.positions[cx.cur as usize];
                let mut out = pseudo_legal(rec);
                if let Some(pos) = chess_at(cx) {
                    out.extend(
                        pos.legal_moves()
                            .iter()
                            .filter(|m| m.is_castle())
                            .filter_map(from_move),
                    );
                }
                Some((cx.cur, out))
            }
        }
    }

    /// Evaluates a dash: the set of origin squares of the matching moves, and their number.
    fn dash(&mut self, d: &Dash, cx: &mut Cx) -> Option<(u64, i64)> {
        let (at, cands) = self.candidates(d.source, cx)?;
        let saved = cx.cur;
        cx.cur = at;
        let from = match &d.from {
            Some(f) => self.set_of(f, cx),
            None => Some(u64::MAX),
        };
        let to = match &d.to {
            Some(t) => self.set_of(t, cx),
            None => Some(u64::MAX),
        };
        let (Some(from), Some(to)) = (from, to) else {
            cx.cur = saved;
            return None;
        };
        let mut set = 0u64;
        let mut count = 0i64;
        for c in cands {
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
                        let v = self.eval(t, cx);
                        cx.cur = at;
                        matches(&v)
                    }
                    // Generated moves: only move-kind targets (checked by the parser).
                    None => match &t.expr {
                        Expr::Castled(which) => {
                            c.kind == MoveKind::Castle
                                && match which {
                                    Castle::King => c.king_side,
                                    Castle::Queen => !c.king_side,
                                    Castle::Any => true,
                                }
                        }
                        Expr::EnPassant => c.kind == MoveKind::EnPassant,
                        _ => false,
                    },
                };
                if !ok {
                    continue;
                }
            }
            set |= 1 << c.from;
            count += 1;
        }
        cx.cur = saved;
        Some((set, count))
    }

    fn legacy_move(&mut self, m: &MoveFilter, cx: &mut Cx) -> Option<Value> {
        let source = if m.previous {
            MoveSource::Current
        } else if m.legal {
            MoveSource::Legal
        } else if m.pseudolegal {
            MoveSource::PseudoLegal
        } else {
            MoveSource::Pgn
        };
        let (at, cands) = self.candidates(source, cx)?;
        let saved = cx.cur;
        cx.cur = at;
        let mut sets = [u64::MAX; 3];
        for (i, n) in [&m.from, &m.to, &m.capture].into_iter().enumerate() {
            if let Some(n) = n {
                match self.set_of(n, cx) {
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
        let mut set = 0u64;
        let mut count = 0i64;
        for c in cands {
            let child_index = c.child.map(|ch| g.positions[ch as usize].child_index);
            let ok = sets[0] >> c.from & 1 == 1
                && sets[1] >> c.dest & 1 == 1
                && (m.capture.is_none() || c.captured.is_some_and(|s| sets[2] >> s & 1 == 1))
                && m.promote
                    .is_none_or(|mask| c.promo.is_some_and(|p| mask >> p & 1 == 1))
                && m.castle.is_none_or(|w| {
                    c.kind == MoveKind::Castle
                        && match w {
                            Castle::King => c.king_side,
                            Castle::Queen => !c.king_side,
                            Castle::Any => true,
                        }
                })
                && (!m.enpassant || c.kind == MoveKind::EnPassant)
                && (!m.null || c.kind == MoveKind::Null)
                && (!m.primary || child_index == Some(0))
                && (!m.secondary || child_index.is_some_and(|i| i > 0));
            if ok {
                set |= 1 << c.from;
                count += 1;
            }
        }
        if m.count {
            Some(Value::Num(count))
        } else {
            Some(Value::Set(set))
        }
    }
}

/// The shakmaty position at the current position (built once per position).
fn chess_at(cx: &mut Cx) -> Option<Chess> {
    if let Some(p) = cx.chess.get(&cx.cur) {
        return Some(p.clone());
    }
    let Some(pos) = board::to_chess(&cx.game.positions[cx.cur as usize]) else {
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
fn pseudo_legal(rec: &PositionRecord) -> Vec<Cand> {
    let white = rec.turn() == shakmaty::Color::White;
    let (own, enemy) = if white {
        (rec.board.0[0], rec.board.0[1])
    } else {
        (rec.board.0[1], rec.board.0[0])
    };
    let empty = !(own | enemy);
    let mut out = Vec::new();
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
    out
}
