//! What stands on one square: `type S` (0 empty, 1 pawn .. 6 king), `colortype S` (the same,
//! negative for Black), `typename S` (`P N B R Q K`, `_` when empty), `piecename S` (`PNBRQK`
//! for White, `pnbrqk` for Black, `_`), `pieceid S` (the piece's identity in the game, kept
//! through moves and promotion; an empty square has none). Each fails unless S is exactly
//! one square.

use crate::ast::{Expr, Node, PieceInfo};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["type", "colortype", "typename", "piecename", "pieceid"];

/// Reads the keyword's set argument.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let what = match word {
        "type" => PieceInfo::Type,
        "colortype" => PieceInfo::ColorType,
        "typename" => PieceInfo::TypeName,
        "piecename" => PieceInfo::PieceName,
        _ => PieceInfo::PieceId,
    };
    Ok(Expr::PieceInfo(what, Box::new(p.set_arg(word)?)))
}

/// A number, or a one-letter string for the names.
pub fn type_of(what: PieceInfo) -> Ty {
    match what {
        PieceInfo::Type | PieceInfo::ColorType | PieceInfo::PieceId => Ty::Number,
        PieceInfo::TypeName | PieceInfo::PieceName => Ty::String,
    }
}

/// What stands on the set's one square.
pub fn eval(what: PieceInfo, set: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let s = ev.set(set, cx)?;
    if s.count_ones() != 1 {
        return None;
    }
    let sq = s.trailing_zeros();
    // 0..12: white P N B R Q K, black p n b r q k.
    let piece = board::piece_on(cx.position(), sq);
    let role = piece.map_or(0, |p| p % 6 + 1) as i64;
    let white = piece.is_some_and(|p| p < 6);
    Some(match what {
        PieceInfo::Type => Value::Num(role),
        PieceInfo::ColorType => Value::Num(if white { role } else { -role }),
        PieceInfo::TypeName => Value::Str(name(piece, true)),
        PieceInfo::PieceName => Value::Str(name(piece, false)),
        PieceInfo::PieceId => {
            let id = cx.game.piece_ids()[cx.cur as usize][sq as usize];
            if id == 0 {
                return None;
            }
            Value::Num(i64::from(id))
        }
    })
}

/// `_` for an empty square; the letter of the piece, upper case for White (always, with
/// `type_only`).
fn name(piece: Option<usize>, type_only: bool) -> String {
    let Some(p) = piece else {
        return "_".to_owned();
    };
    let letter = b"PNBRQK"[p % 6] as char;
    if p >= 6 && !type_only {
        letter.to_ascii_lowercase().to_string()
    } else {
        letter.to_string()
    }
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, matching};

    #[test]
    fn one_square_named_and_numbered() {
        // Position 0 is the start.
        let at_start = |q: &str| matching(q, SCHOLAR).contains(&0);
        assert!(at_start("type e1 == 6"));
        assert!(at_start("type e8 == 6"));
        assert!(at_start("colortype e8 == -6"));
        assert!(at_start("colortype d8 == -5"));
        assert!(at_start("colortype e4 == 0"));
        assert!(at_start("typename b8 == \"N\""));
        assert!(at_start("piecename b8 == \"n\""));
        assert!(at_start("piecename e4 == \"_\""));
        assert!(at_start("typename K == \"K\""));
        assert!(!at_start("type P"), "eight squares");
        assert!(!at_start("pieceid e4"), "an empty square has no id");
        // The queen keeps her id from d1 to f7.
        assert_eq!(
            matching("initial X = pieceid Qd1 find (pieceid f7 == X)", SCHOLAR),
            vec![0]
        );
    }
}
