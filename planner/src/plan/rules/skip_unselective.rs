//! `skip_unselective`: no index scan when it would not narrow the games.

use super::{Draft, Residual, Rule};
use crate::plan::{GameAttr, MoveTraits, PositionFlag, Scan};

/// When the candidates would be nearly every game, the scan only adds its own cost to a full
/// scan, so pruning is dropped. The estimate is static (rough shares measured on a large real
/// database; see [`position_share`]); a count the index answers alone is always kept, being
/// cheaper than any scan of the games.
pub struct SkipUnselective;

/// The estimated share of games a scan touches above which it is dropped.
pub const MAX_GAME_SHARE: f64 = 0.9;

/// Positions a game contributes, as independent samples: a game's positions are alike, so a
/// position share `p` touches about `p × GAME_SPREAD` of the games.
const GAME_SPREAD: f64 = 20.0;

impl Rule for SkipUnselective {
    fn name(&self) -> &'static str {
        "skip_unselective"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        if d.no_pruning.is_some() || d.residual == Residual::None || d.upper == Scan::All {
            return None;
        }
        let share = game_share(&d.upper);
        if share <= MAX_GAME_SHARE {
            return None;
        }
        d.no_pruning = Some("the index would not narrow the games".into());
        Some(format!(
            "every game is read (about {:.0} % of the games would be candidates)",
            share.min(1.0) * 100.0
        ))
    }
}

/// The estimated share of games with a position in the scan.
pub fn game_share(s: &Scan) -> f64 {
    (position_share(s) * GAME_SPREAD).min(1.0)
}

/// The estimated share of positions in the scan (shares measured on 21 M positions of real
/// games: mate 0.015 %, check 5 %, a given piece on a given square about 0.4 %).
pub fn position_share(s: &Scan) -> f64 {
    match s {
        Scan::All => 1.0,
        Scan::Empty => 0.0,
        Scan::Flag(PositionFlag::Mate) => 0.000_15,
        Scan::Flag(PositionFlag::Stalemate) => 0.000_02,
        Scan::Flag(PositionFlag::Check) => 0.05,
        Scan::Flag(PositionFlag::Initial | PositionFlag::Terminal) => 0.012,
        Scan::Flag(PositionFlag::Mainline) => 0.95,
        Scan::Flag(PositionFlag::VirtualMainline) => 0.97,
        Scan::Flag(PositionFlag::WhiteToMove) => 0.5,
        Scan::Pieces { pieces, squares } => {
            (0.004 * f64::from(pieces.count_ones() * squares.count_ones())).min(1.0)
        }
        Scan::Material(tests) => 0.02f64.powi(tests.len().min(3) as i32),
        Scan::GameTag { .. } => 0.000_5,
        Scan::Moves { traits, .. } => move_share(*traits),
        // Games are about 80 plies long.
        Scan::Ply(lo, hi) => {
            let width = f64::from(hi.saturating_sub(*lo)) + 1.0;
            let above = (80.0 - f64::from(*lo)).max(1.0);
            (width.min(above) / 80.0).min(1.0)
        }
        Scan::GameResult(_) => 0.4,
        Scan::GameRange { attr, lo, hi } => value_share(*attr, *lo, *hi),
        Scan::GameNumbers(lo, hi) => (0.000_1 * (hi - lo + 1).max(0) as f64).min(1.0),
        Scan::And(xs) => xs.iter().map(position_share).product(),
        Scan::Or(xs) => xs.iter().map(position_share).sum::<f64>().min(1.0),
        Scan::Not(x) => 1.0 - position_share(x),
        Scan::GamesWith(x) => game_share(x),
        Scan::FlagGames { flag, .. } => game_share(&Scan::Flag(*flag)),
        Scan::Board { otherwise, .. } => position_share(otherwise),
    }
}

/// The estimated share of games whose year or rating is in `lo..=hi`: most games have a
/// year from 1850 to 2030 and ratings from 1000 to 3000, spread evenly (a rough guess), and
/// some have none.
fn value_share(attr: GameAttr, lo: u16, hi: u16) -> f64 {
    let (from, to) = match attr {
        GameAttr::Year => (1850.0, 2030.0),
        GameAttr::WhiteElo | GameAttr::BlackElo => (1000.0, 3000.0),
    };
    let covered = (f64::from(hi).min(to) - f64::from(lo).max(from) + 1.0).max(0.0);
    (0.7 * covered / (to - from + 1.0)).clamp(0.001, 1.0)
}

/// The estimated share of positions whose move has one of the facts (per move in real games:
/// pawn moves about 30 %, captures 20 %, castling 2 %, promotions 0.1 %).
fn move_share(traits: MoveTraits) -> f64 {
    const MOVED: [f64; 6] = [0.3, 0.15, 0.15, 0.15, 0.12, 0.13];
    const CAPTURED: [f64; 6] = [0.09, 0.035, 0.035, 0.025, 0.015, 0.0];
    const OTHER: [f64; 10] = [
        0.000_1, 0.000_3, 0.000_3, 0.000_3, 0.000_5, 0.0, 0.015, 0.004, 0.000_3, 0.000_01,
    ];
    (0..22)
        .filter(|b| traits.0 >> b & 1 == 1)
        .map(|b: usize| match b {
            0..6 => MOVED[b],
            6..12 => CAPTURED[b - 6],
            _ => OTHER[b - 12],
        })
        .sum::<f64>()
        .min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::tests::draft;

    #[test]
    fn broad_scans_are_dropped_rare_ones_kept() {
        let mut d = draft("check");
        d.upper = Scan::complement(Scan::Flag(PositionFlag::Check));
        assert!(SkipUnselective.apply(&mut d).is_some());
        assert!(d.no_pruning.is_some());
        let mut d = draft("mate");
        d.upper = Scan::Flag(PositionFlag::Mate);
        assert!(SkipUnselective.apply(&mut d).is_none());
        // A count answered by the index is always kept.
        let mut d = draft("not check");
        d.upper = Scan::complement(Scan::Flag(PositionFlag::Check));
        d.residual = Residual::None;
        assert!(SkipUnselective.apply(&mut d).is_none());
    }
}
