//! A small but honest alpha-beta searcher on shakmaty that logs its search trees for GTQL:
//! iterative deepening, principal-variation search with re-searches, null-move pruning,
//! quiescence search of captures, and a transposition table.
//!
//! Every node is logged (through [`gtlog`]) with the fields `type` (PVNode, CUTNode, ALLNode:
//! the expected node type), `flags` (QRootNode, QNode, NullMove, Research), `depth`, `ply`,
//! `alpha`, `beta`, `value` and `best_move` (index in the searched order, -1 for none).

use std::io::Write;

use gtlog::Logger;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, Color, EnPassantMode, Move, Position, Role};

/// Node types.
pub const PV: i64 = 0;
/// Expected cut node.
pub const CUT: i64 = 1;
/// Expected all node.
pub const ALL: i64 = 2;
/// Flag bits.
pub const QROOT: i64 = 1;
/// Inside a quiescence search.
pub const QNODE: i64 = 2;
/// The null-move search.
pub const NULLMOVE: i64 = 4;
/// A PVS re-search.
pub const RESEARCH: i64 = 8;

const MATE: i32 = 30_000;
const INF: i32 = 32_000;

/// The searcher's name for itself in the logs' header (`gtlog::Logger::new`).
pub const ENGINE: &str = "cqldb-gtsearch-1";

/// The aliases and fields of the logs, as `gtlog::Logger::new` takes them.
pub const ALIASES: [(&str, i64); 7] = [
    ("PVNode", PV),
    ("CUTNode", CUT),
    ("ALLNode", ALL),
    ("QRootNode", QROOT),
    ("QNode", QNODE),
    ("NullMove", NULLMOVE),
    ("Research", RESEARCH),
];
/// Field names and byte sizes.
pub const FIELDS: [(&str, usize); 8] = [
    ("type", 1),
    ("flags", 1),
    ("depth", 1),
    ("ply", 1),
    ("alpha", 2),
    ("beta", 2),
    ("value", 2),
    ("best_move", 1),
];

#[derive(Clone, Copy, Default)]
struct Tt {
    key: u64,
    depth: i8,
    value: i32,
    bound: u8, // 0 exact, 1 lower, 2 upper
    best: Option<(u8, u8)>,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// Best move at the root.
    pub best: Option<Move>,
    /// Its value (centipawns, side to move).
    pub value: i32,
    /// Nodes logged in the last iteration.
    pub nodes: u64,
}

/// The searcher; logging goes to `log` (use [`Logger::disabled`] for none).
pub struct Searcher<W: Write> {
    log: Logger<W>,
    tt: Vec<Tt>,
    nodes: u64,
    error: Option<std::io::Error>,
}

fn value_of(r: Role) -> i32 {
    match r {
        Role::Pawn => 100,
        Role::Knight => 320,
        Role::Bishop => 330,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 0,
    }
}

/// Material plus a small centralisation bonus, from the side to move's view.
pub fn evaluate(pos: &Chess) -> i32 {
    let board = pos.board();
    let mut score = 0;
    for (sq, piece) in board.iter() {
        let f = i32::from(u8::from(sq.file()));
        let r = i32::from(u8::from(sq.rank()));
        let centre = 6 - ((2 * f - 7).abs() + (2 * r - 7).abs()) / 2;
        let bonus = match piece.role {
            Role::Knight | Role::Bishop => 4 * centre,
            Role::Pawn => 2 * centre,
            _ => 0,
        };
        let v = value_of(piece.role) + bonus;
        score += if piece.color == Color::White { v } else { -v };
    }
    if pos.turn() == Color::White {
        score
    } else {
        -score
    }
}

fn encode(m: &Move) -> u32 {
    let from = m.from().map_or(64, |s| s as u32);
    (from << 6) | m.to() as u32
}

impl<W: Write> Searcher<W> {
    /// A searcher with a 2^`tt_bits`-entry transposition table.
    pub fn new(log: Logger<W>, tt_bits: u32) -> Self {
        Self {
            log,
            tt: vec![Tt::default(); 1 << tt_bits],
            nodes: 0,
            error: None,
        }
    }

    /// Hands back the logger (to finish the file) and the nodes searched.
    pub fn into_log(self) -> (Logger<W>, u64) {
        (self.log, self.nodes)
    }

    /// Searches `pos` to `depth` plies (one iteration; call with growing depths for iterative
    /// deepening, a fresh logger per iteration gives one tree per iteration).
    pub fn search(&mut self, pos: &Chess, depth: i32) -> std::io::Result<SearchResult> {
        self.nodes = 0;
        let value = self.node(pos, depth, -INF, INF, 0, PV, 0, 0);
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let key = pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0;
        let e = self.tt[(key as usize) & (self.tt.len() - 1)];
        let best = (e.key == key)
            .then_some(e.best)
            .flatten()
            .and_then(|(f, t)| {
                pos.legal_moves()
                    .into_iter()
                    .find(|m| m.from().map(|s| s as u8) == Some(f) && m.to() as u8 == t)
            });
        Ok(SearchResult {
            best,
            value,
            nodes: self.nodes,
        })
    }

    fn exit(&mut self, mv: u32, vals: [i64; 8]) {
        self.nodes += 1;
        if let Err(e) = self.log.exit(mv, &vals) {
            self.error.get_or_insert(e);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        pos: &Chess,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: i32,
        ntype: i64,
        flags: i64,
        mv: u32,
    ) -> i32 {
        if depth <= 0 {
            return self.quiesce(pos, alpha, beta, ply, ntype, flags | QROOT, mv);
        }
        self.log.enter();
        let alpha0 = alpha;
        let key = pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0;
        let slot = (key as usize) & (self.tt.len() - 1);
        let entry = self.tt[slot];
        let hit = entry.key == key;
        if hit && ply > 0 && i32::from(entry.depth) >= depth {
            let cut = match entry.bound {
                0 => true,
                1 => entry.value >= beta,
                _ => entry.value <= alpha,
            };
            if cut {
                self.exit(
                    mv,
                    [
                        ntype,
                        flags,
                        depth.into(),
                        ply.into(),
                        alpha.into(),
                        beta.into(),
                        entry.value.into(),
                        -1,
                    ],
                );
                return entry.value;
            }
        }
        let in_check = pos.is_check();
        // Null move: give the opponent a free move; if we still beat beta, cut.
        let has_pieces = pos.board().by_color(pos.turn()).count()
            > pos
                .board()
                .by_piece(shakmaty::Piece {
                    color: pos.turn(),
                    role: Role::Pawn,
                })
                .count()
                + 1;
        if ntype != PV
            && !in_check
            && depth >= 3
            && has_pieces
            && flags & NULLMOVE == 0
            && let Ok(null) = pos.clone().swap_turn()
        {
            let v = -self.node(
                &null,
                depth - 3,
                -beta,
                -beta + 1,
                ply + 1,
                if ntype == CUT { ALL } else { CUT },
                NULLMOVE,
                0,
            );
            if v >= beta {
                self.exit(
                    mv,
                    [
                        ntype,
                        flags,
                        depth.into(),
                        ply.into(),
                        alpha0.into(),
                        beta.into(),
                        beta.into(),
                        -1,
                    ],
                );
                return beta;
            }
        }
        let mut moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        if moves.is_empty() {
            let v = if in_check { -MATE + ply } else { 0 };
            self.exit(
                mv,
                [
                    ntype,
                    flags,
                    depth.into(),
                    ply.into(),
                    alpha0.into(),
                    beta.into(),
                    v.into(),
                    -1,
                ],
            );
            return v;
        }
        let tt_move = if hit { entry.best } else { None };
        moves.sort_by_key(|m| {
            let is_tt = tt_move == Some((m.from().map_or(64, |s| s as u8), m.to() as u8));
            let cap = m.capture().map_or(0, value_of) * 10 - m.role() as i32;
            (!is_tt, -cap)
        });
        let mut best = -INF;
        let mut best_idx = -1i64;
        let mut best_move = None;
        for (i, m) in moves.iter().enumerate() {
            let mut child = pos.clone();
            child.play_unchecked(*m);
            let ctype = match (ntype, i) {
                (PV, 0) => PV,
                (PV, _) => CUT,
                (CUT, _) => ALL,
                _ => CUT,
            };
            let code = encode(m);
            let v = if i == 0 {
                -self.node(&child, depth - 1, -beta, -alpha, ply + 1, ctype, 0, code)
            } else {
                let mut v = -self.node(
                    &child,
                    depth - 1,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    ctype,
                    0,
                    code,
                );
                if v > alpha && v < beta {
                    v = -self.node(
                        &child,
                        depth - 1,
                        -beta,
                        -alpha,
                        ply + 1,
                        PV,
                        RESEARCH,
                        code,
                    );
                }
                v
            };
            if v > best {
                best = v;
                best_idx = i as i64;
                best_move = Some((m.from().map_or(64, |s| s as u8), m.to() as u8));
            }
            if v > alpha {
                alpha = v;
            }
            if alpha >= beta {
                break;
            }
        }
        let bound = if best <= alpha0 {
            2
        } else if best >= beta {
            1
        } else {
            0
        };
        self.tt[slot] = Tt {
            key,
            depth: depth.clamp(0, 127) as i8,
            value: best,
            bound,
            best: best_move,
        };
        self.exit(
            mv,
            [
                ntype,
                flags,
                depth.into(),
                ply.into(),
                alpha0.into(),
                beta.into(),
                best.into(),
                best_idx,
            ],
        );
        best
    }

    #[allow(clippy::too_many_arguments)]
    fn quiesce(
        &mut self,
        pos: &Chess,
        mut alpha: i32,
        beta: i32,
        ply: i32,
        ntype: i64,
        flags: i64,
        mv: u32,
    ) -> i32 {
        self.log.enter();
        let alpha0 = alpha;
        let stand = evaluate(pos);
        let flags = flags | QNODE;
        if stand >= beta || ply >= 60 {
            self.exit(
                mv,
                [
                    ntype,
                    flags,
                    0,
                    ply.into(),
                    alpha0.into(),
                    beta.into(),
                    stand.into(),
                    -1,
                ],
            );
            return stand;
        }
        alpha = alpha.max(stand);
        let mut caps: Vec<Move> = pos
            .legal_moves()
            .into_iter()
            .filter(|m| m.is_capture())
            .collect();
        caps.sort_by_key(|m| -(m.capture().map_or(0, value_of) * 10 - m.role() as i32));
        let mut best = stand;
        let mut best_idx = -1i64;
        for (i, m) in caps.iter().enumerate() {
            let mut child = pos.clone();
            child.play_unchecked(*m);
            let ctype = if ntype == CUT { ALL } else { CUT };
            let v = -self.quiesce(&child, -beta, -alpha, ply + 1, ctype, QNODE, encode(m));
            if v > best {
                best = v;
                best_idx = i as i64;
            }
            if v > alpha {
                alpha = v;
            }
            if alpha >= beta {
                break;
            }
        }
        self.exit(
            mv,
            [
                ntype,
                flags,
                0,
                ply.into(),
                alpha0.into(),
                beta.into(),
                best.into(),
                best_idx,
            ],
        );
        best
    }
}

/// Reads an EPD line's position (the first four fields) and its id.
pub fn epd_position(line: &str) -> Option<(Chess, String)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 4 {
        return None;
    }
    let fen = format!(
        "{} {} {} {} 0 1",
        fields[0], fields[1], fields[2], fields[3]
    );
    let setup: shakmaty::fen::Fen = fen.parse().ok()?;
    let pos: Chess = setup.into_position(shakmaty::CastlingMode::Standard).ok()?;
    let id = line
        .split("id \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("?")
        .to_owned();
    Some((pos, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_mate_in_one_and_logs_a_consistent_tree() {
        // White to move mates with Qh7# (king on h8 boxed in by its pawn... simple back rank).
        let (pos, _) = epd_position("6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id \"m1\";").unwrap();
        let mut out = Vec::new();
        let log = Logger::new(&mut out, ENGINE, &ALIASES, &FIELDS).unwrap();
        let mut s = Searcher::new(log, 12);
        let r = s.search(&pos, 2).unwrap();
        assert!(r.value >= MATE - 10, "value {}", r.value);
        assert_eq!(r.best.map(|m| m.to().to_string()), Some("a8".to_owned()));
        let (log, nodes) = s.into_log();
        assert_eq!(u64::from(log.nodes()), nodes);
        drop(log);
        assert!(out.len() > 100);
    }
}
