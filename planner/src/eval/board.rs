//! Static board geometry over a position row: designators, attacks, lines, pins, pawns.

use crate::ast::{Direction, PawnKind, PieceSet};
use cqldb_storage::PositionRecord;
use shakmaty::{Bitboard, Color, Role, Square, attacks};

/// Squares of piece index `i` (0..12: white P N B R Q K, black p n b r q k).
pub fn piece_squares(rec: &PositionRecord, i: usize) -> u64 {
    rec.board.0[i / 6] & rec.board.0[2 + i % 6]
}

/// The piece index on `sq`, if any.
pub fn piece_on(rec: &PositionRecord, sq: u32) -> Option<usize> {
    let bit = 1u64 << sq;
    let color = if rec.board.0[0] & bit != 0 {
        0
    } else if rec.board.0[1] & bit != 0 {
        1
    } else {
        return None;
    };
    (0..6)
        .find(|r| rec.board.0[2 + r] & bit != 0)
        .map(|r| color * 6 + r)
}

/// The squares a designator selects in a position.
pub fn designate(rec: &PositionRecord, d: &PieceSet) -> u64 {
    if d.pieces == PieceSet::ALL_CONTENTS {
        return d.squares;
    }
    // A whole colour is one bitboard (`A`, `a`, `[Aa]` are the common designators).
    let mut set = 0;
    for (colour, roles) in [(0, d.pieces & 0x3f), (1, d.pieces >> 6 & 0x3f)] {
        if roles == 0x3f {
            set |= rec.board.0[colour];
        } else if roles != 0 {
            for role in 0..6 {
                if roles >> role & 1 == 1 {
                    set |= rec.board.0[colour] & rec.board.0[2 + role];
                }
            }
        }
    }
    if d.pieces & PieceSet::EMPTY != 0 {
        set |= !(rec.board.0[0] | rec.board.0[1]);
    }
    set & d.squares
}

fn occupied(rec: &PositionRecord) -> Bitboard {
    Bitboard(rec.board.0[0] | rec.board.0[1])
}

/// Squares attacked by the piece standing on `sq` (empty if none).
pub fn attacks_from(rec: &PositionRecord, sq: u32) -> u64 {
    let Some(p) = piece_on(rec, sq) else {
        return 0;
    };
    let s = Square::new(sq);
    let occ = occupied(rec);
    let color = if p < 6 { Color::White } else { Color::Black };
    let bb = match Role::ALL[p % 6] {
        Role::Pawn => attacks::pawn_attacks(color, s),
        Role::Knight => attacks::knight_attacks(s),
        Role::Bishop => attacks::bishop_attacks(s, occ),
        Role::Rook => attacks::rook_attacks(s, occ),
        Role::Queen => attacks::queen_attacks(s, occ),
        Role::King => attacks::king_attacks(s),
    };
    bb.0
}

/// `X attacks Y`: the squares of X whose piece attacks some square of Y.
pub fn attackers(rec: &PositionRecord, x: u64, y: u64) -> u64 {
    let mut out = 0;
    for sq in bits(x) {
        if attacks_from(rec, sq) & y != 0 {
            out |= 1 << sq;
        }
    }
    out
}

/// `X attackedby Y`: the squares of X attacked by some piece on Y.
pub fn attacked_by(rec: &PositionRecord, x: u64, y: u64) -> u64 {
    let mut hit = 0;
    for sq in bits(y) {
        hit |= attacks_from(rec, sq);
    }
    x & hit
}

/// Lines of attack through `sets` in order (at least two): the squares of `sets[0]` whose
/// piece attacks along one line a square of `sets[1]`, then, were that square empty, a square
/// of `sets[2]` beyond it, and so on to the last set; and the squares of the last set such
/// lines reach. Only a bishop, rook or queen attacks along a line beyond its neighbour, so
/// chains of three or more start from those.
pub fn attack_chains(rec: &PositionRecord, sets: &[u64]) -> (u64, u64) {
    const ORTHOGONAL: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
    const DIAGONAL: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
    let Some((&first, rest)) = sets.split_first() else {
        return (0, 0);
    };
    if rest.len() == 1 {
        // Two sets: the ordinary attack, which also covers pawns, knights and kings.
        return (
            attackers(rec, first, rest[0]),
            attacked_by(rec, rest[0], first),
        );
    }
    let occ = occupied(rec).0;
    let (mut origins, mut ends) = (0, 0);
    for sq in bits(first) {
        let dirs: &[(i8, i8)] = match piece_on(rec, sq).map(|p| Role::ALL[p % 6]) {
            Some(Role::Rook) => &ORTHOGONAL,
            Some(Role::Bishop) => &DIAGONAL,
            Some(Role::Queen) => &[ORTHOGONAL, DIAGONAL].concat(),
            _ => continue,
        };
        for &(df, dr) in dirs {
            // Bit k: the first k+1 sets are matched by squares met so far along this line.
            let mut matched: u32 = 1;
            let (mut f, mut r) = ((sq % 8) as i8 + df, (sq / 8) as i8 + dr);
            while (0..8).contains(&f) && (0..8).contains(&r) && matched != 0 {
                let here = (r * 8 + f) as u32;
                let bit = 1u64 << here;
                let mut next = 0;
                for k in bits(u64::from(matched)) {
                    let k = k as usize;
                    if k + 1 < sets.len() && sets[k + 1] & bit != 0 {
                        next |= 1 << (k + 1);
                    }
                }
                if next & (1 << rest.len()) != 0 {
                    origins |= 1 << sq;
                    ends |= bit;
                }
                // An occupied square must be one of the chain's: the line stops at it otherwise.
                matched = if occ & bit != 0 { next } else { matched | next };
                matched &= !(1 << rest.len());
                f += df;
                r += dr;
            }
        }
    }
    (origins, ends)
}

/// Iterates the squares of a set.
pub fn bits(mut s: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if s == 0 {
            return None;
        }
        let sq = s.trailing_zeros();
        s &= s - 1;
        Some(sq)
    })
}

/// Squares at distance `lo..=hi` from X in direction `d`, ignoring occupancy.
pub fn direction(d: Direction, lo: i8, hi: i8, x: u64) -> u64 {
    let mut out = 0;
    for sq in bits(x) {
        let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
        for &(df, dr) in d.steps() {
            // A negative distance steps the other way; 0 is the square itself.
            for k in lo.max(-7)..=hi.min(7) {
                let (nf, nr) = (f + df * k, r + dr * k);
                if (0..8).contains(&nf) && (0..8).contains(&nr) {
                    out |= 1 << (nr * 8 + nf);
                }
            }
        }
    }
    out
}

/// `between(X Y)`: squares strictly between a square of X and one of Y on a common line.
pub fn between(x: u64, y: u64) -> u64 {
    let mut out = 0;
    for a in bits(x) {
        for b in bits(y) {
            out |= attacks::between(Square::new(a), Square::new(b)).0;
        }
    }
    out
}

/// The step from `a` towards `b` if they share a line in one of `dirs`.
fn step_between(a: u32, b: u32, dirs: &[(i8, i8)]) -> Option<(i8, i8)> {
    let (fa, ra, fb, rb) = ((a % 8) as i8, (a / 8) as i8, (b % 8) as i8, (b / 8) as i8);
    let (df, dr) = (fb - fa, rb - ra);
    if (df, dr) == (0, 0) {
        return None;
    }
    let n = df.abs().max(dr.abs());
    if df.abs() != 0 && dr.abs() != 0 && df.abs() != dr.abs() {
        return None;
    }
    let step = (df / n, dr / n);
    dirs.contains(&step).then_some(step)
}

/// `ray [dir] (S1 .. Sn)`: squares of S1 that start a line through pieces of S2..Sn in order,
/// with only empty squares between consecutive ones.
/// `xray (x rest...)`, which CQL defines as `ray orthogonal ({x&[RrQq]} rest...) | ray
/// diagonal ({x&[BbQq]} rest...)`: a ray along the lines the first set's pieces move on.
pub fn xray(rec: &PositionRecord, sets: &[u64]) -> u64 {
    let Some((&first, rest)) = sets.split_first() else {
        return 0;
    };
    let role = |r: Role| rec.board.0[1 + r as usize];
    let queens = role(Role::Queen);
    let along = |pieces: u64, d: Direction| {
        let mut s = Vec::with_capacity(sets.len());
        s.push(first & pieces);
        s.extend_from_slice(rest);
        ray(rec, Some(d), &s)
    };
    along(role(Role::Rook) | queens, Direction::Orthogonal)
        | along(role(Role::Bishop) | queens, Direction::Diagonal)
}

pub fn ray(rec: &PositionRecord, dir: Option<Direction>, sets: &[u64]) -> u64 {
    let dirs = dir.unwrap_or(Direction::AnyDirection).steps();
    let occ = occupied(rec).0;
    let mut out = 0;
    for s0 in bits(sets[0]) {
        for &step in dirs {
            let mut cur = s0;
            let mut ok = true;
            for &next_set in &sets[1..] {
                let mut found = None;
                for t in bits(next_set) {
                    if step_between(cur, t, &[step]).is_some()
                        && attacks::between(Square::new(cur), Square::new(t)).0 & occ == 0
                    {
                        found = Some(t);
                        break;
                    }
                }
                match found {
                    Some(t) => cur = t,
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                out |= 1 << s0;
            }
        }
    }
    out
}

/// `pin`: pieces on `through` that stand between a line piece on `from` of the other colour and
/// a piece on `to` (default: their own king) of their own colour, with nothing else between.
/// Returns (pinned squares, pinner squares).
pub fn pins(rec: &PositionRecord, from: u64, through: u64, to: Option<u64>) -> (u64, u64) {
    let occ = occupied(rec).0;
    let (mut pinned, mut pinners) = (0, 0);
    for t in bits(through & occ) {
        let Some(tp) = piece_on(rec, t) else { continue };
        let own = if tp < 6 { 0 } else { 1 };
        let anchors = match to {
            Some(z) => z & rec.board.0[own],
            None => piece_squares(rec, own * 6 + 5),
        };
        for a in bits(anchors) {
            if a == t {
                continue;
            }
            let Some(step) = step_between(t, a, Direction::AnyDirection.steps()) else {
                continue;
            };
            if attacks::between(Square::new(t), Square::new(a)).0 & occ != 0 {
                continue;
            }
            // Walk from the pinned piece away from the anchor to the first piece.
            let (mut f, mut r) = ((t % 8) as i8, (t / 8) as i8);
            loop {
                f -= step.0;
                r -= step.1;
                if !(0..8).contains(&f) || !(0..8).contains(&r) {
                    break;
                }
                let sq = (r * 8 + f) as u32;
                if occ >> sq & 1 == 0 {
                    continue;
                }
                if let Some(pp) = piece_on(rec, sq) {
                    let diagonal = step.0 != 0 && step.1 != 0;
                    let role = pp % 6;
                    let slides = role == 4 || (diagonal && role == 2) || (!diagonal && role == 3);
                    if (pp < 6) != (tp < 6) && slides && from >> sq & 1 == 1 {
                        pinned |= 1 << t;
                        pinners |= 1 << sq;
                    }
                }
                break;
            }
        }
    }
    (pinned, pinners)
}

/// Pawn-structure sets (both colours).
pub fn pawns(rec: &PositionRecord, kind: PawnKind) -> u64 {
    let mut out = 0;
    for color in 0..2 {
        let own = piece_squares(rec, color * 6);
        let enemy = piece_squares(rec, (1 - color) * 6);
        for sq in bits(own) {
            let (f, r) = (sq % 8, sq / 8);
            let file_mask = |ff: i32| -> u64 {
                if (0..8).contains(&ff) {
                    0x0101_0101_0101_0101u64 << ff
                } else {
                    0
                }
            };
            let adj = file_mask(f as i32 - 1) | file_mask(f as i32 + 1);
            let hit = match kind {
                PawnKind::Doubled => own & file_mask(f as i32) & !(1 << sq) != 0,
                PawnKind::Isolated => own & adj == 0,
                PawnKind::Connected => own & adj != 0,
                PawnKind::Passed => {
                    let span = adj | file_mask(f as i32);
                    let ahead: u64 = if color == 0 {
                        if r == 7 { 0 } else { u64::MAX << ((r + 1) * 8) }
                    } else if r == 0 {
                        0
                    } else {
                        u64::MAX >> ((8 - r) * 8)
                    };
                    enemy & span & ahead == 0
                }
            };
            if hit {
                out |= 1 << sq;
            }
        }
    }
    out
}

/// Material value of the pieces on a set (P 1, N 3, B 3, R 5, Q 9, K 0).
pub fn power(rec: &PositionRecord, set: u64) -> i64 {
    const VALUE: [i64; 6] = [1, 3, 3, 5, 9, 0];
    // By role, a popcount each: square by square was most of a full scan's time.
    let occupied = set & (rec.board.0[0] | rec.board.0[1]);
    VALUE
        .iter()
        .zip(&rec.board.0[2..8])
        .map(|(v, role)| v * i64::from((occupied & role).count_ones()))
        .sum()
}

/// Light squares (a1 is dark).
pub const LIGHT: u64 = 0x55AA_55AA_55AA_55AA;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn light_squares() {
        assert_eq!(LIGHT & 1, 0); // a1 dark
        assert_eq!(LIGHT >> 7 & 1, 1); // h1 light
        assert_eq!(LIGHT.count_ones(), 32);
    }

    /// A record of `board` (nothing else about it matters to the board's geometry).
    fn record(board: &shakmaty::Board) -> PositionRecord {
        PositionRecord {
            parent: cqldb_storage::NO_PARENT,
            child_index: 0,
            children: 0,
            ply: 0,
            depth: 0,
            move_number: 1,
            flags: Default::default(),
            mv: Default::default(),
            castling: Bitboard::EMPTY,
            ep_square: None,
            halfmove_clock: 0,
            zobrist: 0,
            material: Default::default(),
            board: cqldb_storage::Bitboards::of(board),
        }
    }

    /// The chain rule written out over every sequence of squares: X1 attacks X2; for each
    /// later Xk, X(k-1) lies strictly between X1 and Xk, and X1's piece attacks Xk once
    /// X2..X(k-1) are emptied.
    fn chains_by_enumeration(board: &shakmaty::Board, sets: &[u64]) -> (u64, u64) {
        fn extend(
            board: &shakmaty::Board,
            sets: &[u64],
            chosen: &mut Vec<Square>,
            out: &mut (u64, u64),
        ) {
            let k = chosen.len();
            if k == sets.len() {
                out.0 |= 1 << u32::from(chosen[0]);
                out.1 |= 1 << u32::from(chosen[k - 1]);
                return;
            }
            for sq in bits(sets[k]).map(Square::new) {
                if chosen.contains(&sq) {
                    continue;
                }
                let from = chosen[0];
                let Some(piece) = board.piece_at(from) else {
                    return;
                };
                let mut occ = board.occupied();
                for &x in &chosen[1..] {
                    occ.discard(x);
                }
                let reach = attacks::attacks(from, piece, occ);
                let between_ok = k < 2 || attacks::between(from, sq).contains(chosen[k - 1]);
                if reach.contains(sq) && between_ok {
                    chosen.push(sq);
                    extend(board, sets, chosen, out);
                    chosen.pop();
                }
            }
        }
        let mut out = (0, 0);
        for sq in bits(sets[0]).map(Square::new) {
            if board.piece_at(sq).is_some() {
                extend(board, sets, &mut vec![sq], &mut out);
            }
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        #[test]
        fn attack_chains_follow_the_rule(
            pieces in proptest::collection::vec((0u32..64, 0usize..12), 2..14),
            masks in proptest::collection::vec(proptest::prelude::any::<u64>(), 4),
            len in 3usize..=4,
        ) {
            let mut board = shakmaty::Board::empty();
            for (sq, p) in pieces {
                let color = if p < 6 { Color::White } else { Color::Black };
                board.set_piece_at(Square::new(sq), Role::ALL[p % 6].of(color));
            }
            // Sparse sets, most squares of each holding a piece, as designators give.
            let occ = board.occupied().0;
            let sets: Vec<u64> = masks[..len]
                .iter()
                .map(|m| (m & m.rotate_left(17)) | (m & occ))
                .collect();
            let rec = record(&board);
            proptest::prop_assert_eq!(attack_chains(&rec, &sets), chains_by_enumeration(&board, &sets));
        }

        #[test]
        fn power_sums_the_pieces_square_by_square(
            pieces in proptest::collection::vec((0u32..64, 0usize..12), 0..32),
            set in proptest::prelude::any::<u64>(),
        ) {
            let mut board = shakmaty::Board::empty();
            for (sq, p) in pieces {
                let color = if p < 6 { Color::White } else { Color::Black };
                board.set_piece_at(Square::new(sq), Role::ALL[p % 6].of(color));
            }
            let value = |r: Role| [1, 3, 3, 5, 9, 0][r as usize - 1];
            let naive: i64 = bits(set)
                .filter_map(|sq| board.piece_at(Square::new(sq)))
                .map(|p| value(p.role))
                .sum();
            proptest::prop_assert_eq!(power(&record(&board), set), naive);
        }
    }

    #[test]
    fn chains_through_pieces() {
        // White queen d1, black knight d5, black king d8; a white rook a8 beside the king.
        let board: shakmaty::Board = "3k4/8/8/3n4/8/8/8/3Q4".parse().unwrap();
        let rec = record(&board);
        let (q, n, k) = (1 << 3, 1 << 35, 1 << 59);
        assert_eq!(
            attack_chains(&rec, &[q, n, k]),
            (q, k),
            "the knight is pinned"
        );
        assert_eq!(attack_chains(&rec, &[q, k, n]), (0, 0), "in order only");
        // The empty squares between may be links too, but never skipped pieces.
        assert_eq!(attack_chains(&rec, &[q, 1 << 19, n, k]), (q, k));
        assert_eq!(attack_chains(&rec, &[q, k, k]), (0, 0));
        assert_eq!(
            attack_chains(&rec, &[q, 1 << 19, k]),
            (0, 0),
            "d3, then the knight blocks"
        );
    }

    #[test]
    fn directions() {
        assert_eq!(direction(Direction::Up, 1, 1, 1 << 12), 1 << 20);
        assert_eq!(direction(Direction::AnyDirection, 1, 1, 1).count_ones(), 3);
    }
}
