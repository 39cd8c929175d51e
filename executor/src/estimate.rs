//! `EXPLAIN`'s estimates: about how many positions and games each scan operator of a plan will
//! produce, from the statistics the database keeps for free — each stored bitmap's header says
//! its size — without decoding a bitmap or running a scan.
//!
//! A leaf's size is read from its bitmaps' headers in each segment (positions for a flag, a
//! piece on a square, a material, a board or a move fact; games for a game number range, a
//! result, a year or a rating). Composite operators combine their inputs as if the sets were
//! independent: an intersection keeps the product of the shares, a union the complement of the
//! product of the complements. Positions become games as if a game's positions were drawn at
//! random (a set holding a share `s` of the positions touches `1 - (1 - s)^n` of the games of
//! `n` positions), and a ply range assumes game lengths spread evenly up to twice the average.
//! What the headers cannot tell (a tag search) is unknown, and so is every operator over it:
//! an estimate is shown only where it stands on the data.

use cqldb_planner::plan::{Estimate, Scan};
use cqldb_storage::Database;

use crate::scan::{SegmentScan, StoredSize};

/// The estimates of every operator of `scan`, in pre-order ([`Scan::visit`]), summed over the
/// database's segments.
pub fn estimate(db: &Database, scan: &Scan) -> Vec<Estimate> {
    let mut totals: Vec<Option<Est>> = Vec::new();
    for (entry, seg) in db.segments() {
        // A damaged segment is the execution's error to report; estimates skip it.
        let Ok(mut ss) = SegmentScan::new(seg, entry.first_game) else {
            continue;
        };
        let mut ops = Vec::new();
        of(&mut ss, scan, &mut ops);
        if totals.is_empty() {
            totals = ops;
        } else {
            for (total, op) in totals.iter_mut().zip(ops) {
                *total = total.zip(op).map(|(a, b)| Est {
                    positions: a.positions + b.positions,
                    games: a.games + b.games,
                });
            }
        }
    }
    totals
        .into_iter()
        .map(|e| Estimate {
            positions: e.map(|e| e.positions.round() as u64),
            games: e.map(|e| e.games.round() as u64),
        })
        .collect()
}

/// An operator's expected output in one segment.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Est {
    positions: f64,
    games: f64,
}

/// The sizes of a segment that estimates are shares of.
#[derive(Copy, Clone)]
struct Universe {
    positions: f64,
    games: f64,
}

impl Universe {
    fn per_game(self) -> f64 {
        if self.games > 0.0 {
            self.positions / self.games
        } else {
            0.0
        }
    }

    /// The share of `n` in `of`, within 0..=1.
    fn share(n: f64, of: f64) -> f64 {
        if of > 0.0 {
            (n / of).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// A set of `positions` drawn at random: the games it touches.
    fn drawn(self, positions: f64) -> Est {
        let s = Self::share(positions, self.positions);
        Est {
            positions,
            games: self.games * (1.0 - (1.0 - s).powf(self.per_game())),
        }
    }

    /// A set of whole games: their positions.
    fn whole_games(self, games: f64) -> Est {
        Est {
            positions: games * self.per_game(),
            games,
        }
    }

    /// Plies `lo..=hi` of games whose lengths spread evenly over `0..2 × average`.
    fn plies(self, lo: u32, hi: u32) -> Est {
        let longest = 2.0 * self.per_game();
        let longer_than = |p: f64| (1.0 - p / longest).max(0.0);
        let (a, b) = (
            f64::from(lo).min(longest),
            (f64::from(hi) + 1.0).min(longest),
        );
        // The integral of `longer_than` over a..b: games reaching each ply of the range.
        let reaching = (b - a) - (b * b - a * a) / (2.0 * longest);
        Est {
            positions: self.games * reaching.max(0.0),
            games: self.games * longer_than(f64::from(lo)),
        }
    }
}

/// The estimate of `scan` in one segment, with every operator's pushed onto `ops` in pre-order.
fn of(ss: &mut SegmentScan<'_>, scan: &Scan, ops: &mut Vec<Option<Est>>) -> Option<Est> {
    let me = ops.len();
    ops.push(None);
    let children: Vec<Option<Est>> = scan
        .children()
        .into_iter()
        .map(|c| of(ss, c, ops))
        .collect();
    let (positions, games) = ss.size();
    let u = Universe {
        positions: positions as f64,
        games: games as f64,
    };
    let all_known = || children.iter().copied().collect::<Option<Vec<Est>>>();
    let stored = |size| match size {
        StoredSize::Positions(n) => u.drawn(n as f64),
        StoredSize::Games(n) => u.whole_games(n as f64),
    };
    let est = match scan {
        Scan::All => Some(Est {
            positions: u.positions,
            games: u.games,
        }),
        Scan::Empty => Some(Est {
            positions: 0.0,
            games: 0.0,
        }),
        Scan::Ply(lo, hi) => Some(u.plies(*lo, *hi)),
        Scan::And(_) => all_known().map(|xs| {
            let share: f64 = xs
                .iter()
                .map(|x| Universe::share(x.positions, u.positions))
                .product();
            let mut e = u.drawn(share * u.positions);
            // No more games than the most selective input has.
            e.games = xs.iter().map(|x| x.games).fold(e.games, f64::min);
            e
        }),
        Scan::Or(_) => all_known().map(|xs| {
            let none_of = |share: &dyn Fn(&Est) -> f64| -> f64 {
                xs.iter().map(|x| 1.0 - share(x)).product()
            };
            Est {
                positions: u.positions
                    * (1.0 - none_of(&|x| Universe::share(x.positions, u.positions))),
                games: u.games * (1.0 - none_of(&|x| Universe::share(x.games, u.games))),
            }
        }),
        Scan::Not(_) => all_known().map(|xs| u.drawn(u.positions - xs[0].positions)),
        Scan::GamesWith(_) => all_known().map(|xs| u.whole_games(xs[0].games)),
        // A board scan reads its own bitmap or, failing that, its input: the headers say which.
        Scan::Board { .. } => ss
            .stored_size(scan)
            .map(stored)
            .or_else(|| children.first().copied().flatten()),
        Scan::Flag(_)
        | Scan::Pieces { .. }
        | Scan::Material(_)
        | Scan::GameNumbers(..)
        | Scan::GameResult(_)
        | Scan::GameRange { .. }
        | Scan::GameTag { .. }
        | Scan::FlagGames { .. }
        | Scan::Moves { .. } => ss.stored_size(scan).map(stored),
    };
    ops[me] = est;
    est
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: Universe = Universe {
        positions: 8000.0,
        games: 100.0,
    };

    #[test]
    fn positions_become_games_as_if_drawn_at_random() {
        // One position in a hundred games of eighty: about one game.
        let e = U.drawn(1.0);
        assert!((e.games - 1.0).abs() < 0.01, "{e:?}");
        // Every position: every game.
        assert_eq!(U.drawn(8000.0).games, 100.0);
        assert_eq!(U.drawn(0.0).games, 0.0);
        assert_eq!(U.whole_games(10.0).positions, 800.0);
    }

    #[test]
    fn ply_ranges_follow_game_lengths() {
        // The initial position of every game.
        let first = U.plies(0, 0);
        assert_eq!(first.games, 100.0);
        assert!((first.positions - 100.0).abs() < 1.0, "{first:?}");
        // Every ply: every position.
        let all = U.plies(0, u32::MAX);
        assert!((all.positions - 8000.0).abs() < 1.0, "{all:?}");
        // Beyond the longest game: nothing.
        assert_eq!(U.plies(500, 600).positions, 0.0);
        assert_eq!(U.plies(500, 600).games, 0.0);
    }
}
