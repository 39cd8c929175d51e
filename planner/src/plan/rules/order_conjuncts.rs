//! `order_conjuncts`: the cheapest and most selective operands of an `and` first.

use super::{Draft, Rule};
use crate::plan::{PositionFlag, Scan};

/// Sorts the operands of every `and` by a static cost: game ranges, then rare flags (mate,
/// stalemate, initial, terminal), then pieces on few squares, then material counts, then broad
/// sets. An intersection that becomes empty stops early in the executor, so the order decides
/// how much is read; it never changes the result.
pub struct OrderConjuncts;

impl Rule for OrderConjuncts {
    fn name(&self) -> &'static str {
        "order_conjuncts"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        // Both bounds, so that an exact plan stays visibly exact.
        let (u, l) = (order(&d.upper), order(&d.lower));
        let changed = u != d.upper;
        d.upper = u;
        d.lower = l;
        changed.then(|| "cheapest operands first".to_owned())
    }
}

/// A rough cost of reading a scan (lower first).
pub fn cost(s: &Scan) -> u32 {
    match s {
        Scan::Empty => 0,
        Scan::GameNumbers(..) => 1,
        Scan::Flag(PositionFlag::Mate | PositionFlag::Stalemate | PositionFlag::Initial) => 2,
        Scan::Flag(PositionFlag::Terminal) => 3,
        Scan::Flag(PositionFlag::Check) => 4,
        Scan::GameResult(_) | Scan::GameRange { .. } | Scan::FlagGames { .. } => 5,
        Scan::GameTag { .. } => 7,
        // Promotions, castling, en passant and null moves are rare; piece types moved or
        // captured are broad.
        Scan::Moves { traits, .. } if traits.0 & 0xfff == 0 => 3,
        Scan::Moves { traits, .. } if traits.0 & 0x3f == 0 => 10,
        Scan::Moves { .. } => 55,
        Scan::Pieces { pieces, squares } => {
            6 + (pieces.count_ones() * squares.count_ones()).min(90)
        }
        Scan::Material(_) => 50,
        // One board bitmap, or its pieces where the board is rare.
        Scan::Board { .. } => 6,
        Scan::Ply(..) => 45,
        Scan::Flag(_) => 60,
        Scan::And(xs) => xs.iter().map(cost).min().unwrap_or(0),
        Scan::Or(xs) => xs.iter().map(cost).sum::<u32>().min(200),
        Scan::Not(x) => 100 + cost(x),
        Scan::GamesWith(x) => 20 + cost(x),
        Scan::All => 300,
    }
}

fn order(s: &Scan) -> Scan {
    match s.map_children(order) {
        Scan::And(mut xs) => {
            xs.sort_by_key(cost);
            Scan::And(xs)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::tests::draft;

    #[test]
    fn rare_flags_first() {
        let mut d = draft("mate");
        d.upper = Scan::And(vec![
            Scan::Flag(PositionFlag::Mainline),
            Scan::Flag(PositionFlag::Mate),
        ]);
        assert!(OrderConjuncts.apply(&mut d).is_some());
        assert_eq!(
            d.upper,
            Scan::And(vec![
                Scan::Flag(PositionFlag::Mate),
                Scan::Flag(PositionFlag::Mainline)
            ])
        );
        assert!(OrderConjuncts.apply(&mut d).is_none());
    }
}
