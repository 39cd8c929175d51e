//! `fen "board"`: the position's board is the FEN's board field. Only the board is compared
//! (not the side to move, castling or en passant); `.` in the pattern stands for any square's
//! contents. Bare `fen` is the position's FEN as a string, its move counters 0 and 1.

use crate::ast::{CmpOp, Expr};
use crate::error::ParseError;
use crate::eval::value::Value;
use crate::eval::{Cx, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::{MaterialTest, Scan};
use crate::transform;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["fen"];

/// What a pattern square holds: a piece index 0..12 (white P N B R Q K, then black), this for
/// an empty square, or [`ANY`].
const EMPTY: u8 = 12;
/// A pattern square that matches anything (`.`).
const ANY: u8 = 13;

/// Reads `fen "..."`, or bare `fen`.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let Some(f) = p.optional_string() else {
        return Ok(Expr::FenText);
    };
    let span = p.previous_span();
    let cells = pattern(&f).ok_or_else(|| ParseError::new("not a valid FEN board", span))?;
    Ok(Expr::Fen(cells))
}

/// The current position's FEN, with the half-move clock 0 and the move number 1.
pub fn text(cx: &Cx) -> Option<Value> {
    let mut setup = cx.position().to_setup()?;
    setup.halfmoves = 0;
    setup.fullmoves = std::num::NonZeroU32::MIN;
    let fen = match shakmaty::fen::Fen::try_from_setup(setup) {
        Ok(f) => f.to_string(),
        Err(lossy) => lossy.ignore().to_string(),
    };
    Some(Value::Str(fen))
}

/// The board field of `fen` as 64 cells (a1 first), `None` if it is not a board.
fn pattern(fen: &str) -> Option<Vec<u8>> {
    let board = fen.split_whitespace().next()?;
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != 8 {
        return None;
    }
    let mut cells = vec![EMPTY; 64];
    for (ri, rank) in ranks.iter().enumerate() {
        let r = 7 - ri;
        let mut f = 0usize;
        for c in rank.chars() {
            if let Some(d) = c.to_digit(10) {
                f += d as usize;
            } else {
                let v = if c == '.' {
                    ANY
                } else {
                    "PNBRQKpnbrqk".find(c)? as u8
                };
                if f >= 8 {
                    return None;
                }
                cells[r * 8 + f] = v;
                f += 1;
            }
        }
        if f != 8 {
            return None;
        }
    }
    Some(cells)
}

/// It matches or not, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Matches where every square holds what the pattern says. With colours swapped, the
/// pattern's mirrored square holds the piece of the other colour.
pub fn eval(cells: &[u8], cx: &Cx) -> Option<Value> {
    let rec = cx.position();
    let mapped;
    let cells = if cx.transforms.is_empty() {
        cells
    } else {
        mapped = transform::map_fen(&cx.transforms, cells);
        &mapped[..]
    };
    let ok = (0..64u32).all(|sq| {
        let want = cells[sq as usize];
        want == ANY || board::piece_on(rec, sq).map_or(EMPTY, |p| p as u8) == want
    });
    ok.then_some(Value::Matched)
}

/// Index rule: every piece of the pattern on its square, one bitmap each, and — when the
/// pattern has no wildcard square and one king of each colour — exactly the pattern's count of
/// each other piece type, one material bitmap: with every piece on its square and no piece
/// more, the other squares are empty, so the bounds are exact. (Material signatures do not
/// count kings: a stored position has one of each.) That exact set is also one placement, so
/// it is a [`Scan::Board`]: the board index answers it with one bitmap where the placement is
/// repeated. Otherwise an upper bound.
pub fn bounds(cells: &[u8]) -> Bounds {
    let mut scan = Scan::All;
    let mut counts = [0i64; 12];
    let mut placement = [0u64; 12];
    let mut wildcard = false;
    for (sq, &c) in cells.iter().enumerate() {
        match c {
            0..EMPTY => {
                counts[usize::from(c)] += 1;
                placement[usize::from(c)] |= 1 << sq;
                let piece = Scan::Pieces {
                    pieces: 1 << c,
                    squares: 1 << sq,
                };
                scan = Scan::and(scan, piece);
            }
            EMPTY => {}
            _ => wildcard = true,
        }
    }
    const KINGS: [usize; 2] = [5, 11];
    if wildcard || KINGS.iter().any(|&k| counts[k] != 1) {
        return Bounds {
            upper: scan,
            lower: Scan::Empty,
        };
    }
    let material = Scan::Material(
        (0..12)
            .filter(|i| !KINGS.contains(i))
            .map(|i| MaterialTest {
                pieces: 1 << i,
                op: CmpOp::Eq,
                count: counts[i],
            })
            .collect(),
    );
    Bounds::exact(Scan::Board {
        placement: Box::new(placement),
        otherwise: Box::new(Scan::and(scan, material)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR";

    #[test]
    fn bare_fen_is_the_position_as_text() {
        use crate::filter::testing::{SCHOLAR, matching};
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(matching(&format!("fen == \"{start}\""), SCHOLAR), vec![0]);
        // The move counters are always 0 and 1.
        assert_eq!(matching("fen ~~ \" 0 1$\"", SCHOLAR).len(), 9);
    }

    #[test]
    fn matches_the_board_only() {
        assert_eq!(
            matching(&format!("fen \"{AFTER_E4} b KQkq - 0 1\""), SCHOLAR),
            vec![1]
        );
        // The board field alone, and its colour-swapped mirror under flipcolor.
        assert_eq!(matching(&format!("fen \"{AFTER_E4}\""), SCHOLAR), vec![1]);
        let mirrored = "rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR";
        assert_eq!(
            matching(&format!("flipcolor fen \"{mirrored}\""), SCHOLAR),
            vec![1]
        );
        // A wildcard rank.
        let any_e = "rnbqkbnr/pppp.ppp/8/4.3/4P3/8/PPPP1PPP/RNBQKBNR";
        assert_eq!(matching(&format!("fen \"{any_e}\""), SCHOLAR), vec![1, 2]);
    }

    #[test]
    fn exact_only_without_wildcards_and_with_both_kings() {
        assert!(bounds_of(&format!("fen \"{AFTER_E4}\"")).is_exact());
        let any_e = "rnbqkbnr/pppp.ppp/8/4.3/4P3/8/PPPP1PPP/RNBQKBNR";
        let b = bounds_of(&format!("fen \"{any_e}\""));
        assert!(!b.is_exact() && b.lower == Scan::Empty);
        let no_black_king = "8/8/8/8/8/8/8/4K3";
        assert!(!bounds_of(&format!("fen \"{no_black_king}\"")).is_exact());
    }

    #[test]
    fn malformed_boards_are_errors() {
        for bad in [
            "8/8/8",
            "9/8/8/8/8/8/8/8",
            "rnbqkbnr/ppppxppp/8/8/8/8/8/8",
            "ppppppppp/8/8/8/8/8/8/8",
        ] {
            assert!(
                crate::parse(&format!("cql() fen \"{bad}\"")).is_err(),
                "{bad}"
            );
        }
    }
}
