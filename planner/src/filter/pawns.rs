//! `passedpawns`, `doubledpawns`, `isolatedpawns`, `connectedpawns`: the squares of the pawns
//! (of both colours) that are passed, doubled, isolated or connected.

use crate::ast::{Expr, PawnKind};
use crate::eval::value::Value;
use crate::eval::{Cx, board};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &[
    "passedpawns",
    "doubledpawns",
    "isolatedpawns",
    "connectedpawns",
];

/// Reads it (it has no arguments).
pub fn parse(word: &str, _: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Pawns(match word {
        "passedpawns" => PawnKind::Passed,
        "doubledpawns" => PawnKind::Doubled,
        "isolatedpawns" => PawnKind::Isolated,
        _ => PawnKind::Connected,
    }))
}

/// A square set.
pub const TYPE: Ty = Ty::Set;

/// The pawns of the kind.
pub fn eval(kind: PawnKind, cx: &Cx) -> Option<Value> {
    Some(Value::Set(board::pawns(cx.position(), kind)))
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{bounds as bounds_of, matching};

    #[test]
    fn each_kind() {
        // Black's b7 pawn stops a2, b2 and c5; a2 and c5 stop b7; nothing stops h2.
        let pgn = "[FEN \"4k3/1p6/8/2P5/8/8/PP5P/4K3 w - - 0 1\"]\n\n1. Kd2 *\n";
        assert_eq!(matching("passedpawns == h2", pgn), vec![0, 1]);
        assert_eq!(matching("isolatedpawns == (h2 | b7)", pgn), vec![0, 1]);
        let doubled = "[FEN \"4k3/8/8/8/8/P7/P7/4K3 w - - 0 1\"]\n\n1. Kd2 *\n";
        assert_eq!(matching("doubledpawns == a2-3", doubled), vec![0, 1]);
        assert_eq!(matching("isolatedpawns == a2-3", doubled), vec![0, 1]);
        assert_eq!(bounds_of("passedpawns"), bounds());
    }
}
