//! `purestalemate` and `modelstalemate`. A stalemate is pure when each empty square next to
//! the stalemated king is attacked exactly once by the other side, each of the other side's
//! pieces next to it is attacked (protected) exactly once, and none of the stalemated side's
//! pieces next to it is attacked. The value is the participants: the stalemating side's
//! pieces that attack a square next to the king, are pinned, or pin a piece, and every piece
//! of the stalemated side; the empty set (no match) when the stalemate is not pure. A model
//! stalemate is a pure one in which every queen, rook, bishop and knight of the stalemating
//! side participates. Squares next to the king count as attacked through the king (a line
//! through the king's square still holds it there), so attacks are taken with the king off
//! the board.

use cqldb_storage::PositionFlags;
use shakmaty::{Bitboard, Color, Role, Square, attacks};

use crate::ast::Expr;
use crate::eval::value::Value;
use crate::eval::{Cx, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{PositionFlag, Scan};
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["purestalemate", "modelstalemate"];

/// Reads it (no arguments).
pub fn parse(word: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::PureStalemate {
        model: word == "modelstalemate",
    })
}

/// A set of squares.
pub const TYPE: Ty = Ty::Set;

/// The participants of a pure (model) stalemate, or the empty set.
pub fn eval(model: bool, cx: &Cx) -> Option<Value> {
    let rec = cx.position();
    if !rec.flags.contains(PositionFlags::STALEMATE) {
        return Some(Value::Set(0));
    }
    let stalemated = if rec.turn() == Color::White { 0 } else { 1 };
    let other = 1 - stalemated;
    let (own, theirs) = (rec.board.0[stalemated], rec.board.0[other]);
    let Some(king) = board::bits(board::piece_squares(rec, stalemated * 6 + 5)).next() else {
        return Some(Value::Set(0));
    };
    let occ = Bitboard((own | theirs) & !(1u64 << king));
    // What each of the stalemating side's pieces attacks, with the king off the board.
    let reach: Vec<(u32, u64)> = board::bits(theirs)
        .filter_map(|sq| {
            let p = board::piece_on(rec, sq)?;
            let color = if p < 6 { Color::White } else { Color::Black };
            let piece = Role::ALL[p % 6].of(color);
            Some((sq, attacks::attacks(Square::new(sq), piece, occ).0))
        })
        .collect();
    let field = attacks::king_attacks(Square::new(king)).0;
    let mut guards = 0u64;
    for x in board::bits(field) {
        let bit = 1u64 << x;
        let count = reach.iter().filter(|(_, r)| r & bit != 0).count();
        let pure = if own & bit != 0 {
            count == 0
        } else {
            count == 1
        };
        if !pure {
            return Some(Value::Set(0));
        }
        for (sq, r) in &reach {
            if r & bit != 0 {
                guards |= 1 << sq;
            }
        }
    }
    let (_, pinners) = board::pins(rec, theirs, own, None);
    let (pinned, _) = board::pins(rec, own, theirs, None);
    let participants = guards | pinners | pinned | own;
    if model {
        let officers = (0..4)
            .map(|r| board::piece_squares(rec, other * 6 + 1 + r))
            .fold(0, |a, b| a | b);
        if officers & !participants != 0 {
            return Some(Value::Set(0));
        }
    }
    Some(Value::Set(participants))
}

/// Index rule: stalemates only (a superset).
pub fn bounds() -> Bounds {
    Bounds {
        upper: Scan::Flag(PositionFlag::Stalemate),
        lower: Scan::Empty,
    }
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::matching;

    fn at(fen: &str) -> String {
        format!("[Event \"t\"]\n[SetUp \"1\"]\n[FEN \"{fen}\"]\n[Result \"*\"]\n\n*\n")
    }

    #[test]
    fn pure_and_model_stalemates() {
        // Black Ka8; White Qb6 guards a7 and b7 once each... and b8 too: pure, model.
        let pure = at("k7/8/1Q6/8/8/8/8/7K b - - 0 1");
        assert_eq!(matching("purestalemate", &pure), vec![0]);
        assert_eq!(matching("modelstalemate", &pure), vec![0]);
        assert_eq!(
            matching("#purestalemate == 2", &pure),
            vec![0],
            "the king and the queen"
        );
        // A knight on d6 guards b7 a second time: stalemate, not pure.
        let doubled = at("k7/8/1Q1N4/8/8/8/8/7K b - - 0 1");
        assert_eq!(matching("stalemate", &doubled), vec![0]);
        assert_eq!(matching("purestalemate", &doubled), Vec::<u32>::new());
        // A white rook that takes no part: pure, not model.
        let idle = at("k7/8/1Q6/8/8/8/8/R6K b - - 0 1");
        assert_eq!(
            matching("stalemate", &idle),
            Vec::<u32>::new(),
            "Ra1 checks"
        );
        let idle = at("k7/8/1Q6/8/8/8/8/6RK b - - 0 1");
        assert_eq!(matching("purestalemate", &idle), vec![0]);
        assert_eq!(matching("modelstalemate", &idle), Vec::<u32>::new());
        // Not a stalemate at all.
        assert_eq!(
            matching("purestalemate", &at("k7/8/8/8/8/8/8/7K b - - 0 1")),
            Vec::<u32>::new()
        );
    }
}
