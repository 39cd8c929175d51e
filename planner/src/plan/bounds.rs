//! What an index can say about a CQL filter: for every filter, two position sets, an *upper*
//! bound (every position where the filter can match is in it) and a *lower* bound (the filter
//! matches at every position in it). A filter the index knows exactly has equal bounds; one it
//! knows nothing of has `All` above and `Empty` below.
//!
//! The bounds compose: `and`/`or` of bounds bound `and`/`or`, and `not` swaps them
//! (`upper(not f) = not lower(f)`), so a candidate set built from upper bounds never loses a
//! match, and the residual filter decides the rest. Filters that look at another position
//! (`parent : f`, `position 0 : f`) give game-level bounds: the game must have a position
//! where `f` can match.

use crate::ast::CmpOp;

use super::scan::{GameAttr, MoveOf, MoveTraits, PositionFlag, Scan};

/// The bounds of a filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Every position where the filter can match is in this set.
    pub upper: Scan,
    /// The filter matches at every position of this set.
    pub lower: Scan,
}

impl Bounds {
    /// A filter the index answers exactly.
    pub fn exact(s: Scan) -> Self {
        Self {
            upper: s.clone(),
            lower: s,
        }
    }

    /// A filter the index knows nothing of.
    pub fn unknown() -> Self {
        Self {
            upper: Scan::All,
            lower: Scan::Empty,
        }
    }

    /// Whether the index answers the filter exactly.
    pub fn is_exact(&self) -> bool {
        self.upper == self.lower
    }

    /// Both filters.
    pub fn and(a: Self, b: Self) -> Self {
        Self {
            upper: Scan::and(a.upper, b.upper),
            lower: Scan::and(a.lower, b.lower),
        }
    }

    /// Either filter.
    pub fn or(a: Self, b: Self) -> Self {
        Self {
            upper: Scan::or(a.upper, b.upper),
            lower: Scan::or(a.lower, b.lower),
        }
    }

    /// The filter's negation.
    pub fn negate(a: Self) -> Self {
        Self {
            upper: Scan::complement(a.lower),
            lower: Scan::complement(a.upper),
        }
    }
}

/// A position's place in its game tree that the index can range over.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TreeAttr {
    /// Half-moves from the game's first position.
    Ply,
    /// Secondary moves on the way from the game's first position (0 on the main line).
    Depth,
    /// The full-move number.
    MoveNumber,
}

/// The bounds of `attr op n` (CQL's `ply > 30`, GTQL's `node: depth = 0`): ply ranges come
/// from where positions lie in their game (an upper bound, see [`Scan::Ply`]); depth 0 is the
/// main line; a highest move number is a highest ply (below). `None` for `!=`.
pub fn range_bounds(attr: TreeAttr, op: CmpOp, n: i64) -> Option<Bounds> {
    // The values `v` with `v op n`, as an inclusive range of non-negative numbers.
    let (lo, hi) = match op {
        CmpOp::Eq => (n, n),
        CmpOp::Lt => (0, n.saturating_sub(1)),
        CmpOp::Le => (0, n),
        CmpOp::Gt => (n.saturating_add(1), i64::MAX),
        CmpOp::Ge => (n, i64::MAX),
        CmpOp::Ne => return None,
    };
    let lo = lo.max(0);
    if hi < lo {
        return Some(Bounds::exact(Scan::Empty));
    }
    if attr == TreeAttr::MoveNumber && hi == i64::MAX {
        return Some(Bounds::unknown());
    }
    let clamp = |v: i64| u32::try_from(v.max(0)).unwrap_or(u32::MAX);
    Some(match attr {
        TreeAttr::Ply => Bounds {
            upper: Scan::Ply(clamp(lo), clamp(hi)),
            lower: Scan::Empty,
        },
        // A game starts at move 1 or later and each move by Black adds one, except a null
        // move: so without a null move, move number m is at most ply 2m - 1. A game with a null
        // move is kept whole. Nothing bounds the ply from below (a game may start at move 40).
        TreeAttr::MoveNumber => Bounds {
            upper: Scan::or(
                Scan::Ply(0, clamp(hi.saturating_mul(2).saturating_sub(1))),
                Scan::games_with(Scan::Moves {
                    of: MoveOf::Reached,
                    traits: MoveTraits::NULL,
                }),
            ),
            lower: Scan::Empty,
        },
        TreeAttr::Depth => {
            let main = Scan::Flag(PositionFlag::Mainline);
            match (lo, hi) {
                (0, 0) => Bounds::exact(main),
                (0, i64::MAX) => Bounds::exact(Scan::All),
                // `depth <= 2`: the main line surely, a variation maybe.
                (0, _) => Bounds {
                    upper: Scan::All,
                    lower: main,
                },
                (1, i64::MAX) => Bounds::exact(Scan::complement(main)),
                _ => Bounds {
                    upper: Scan::complement(main),
                    lower: Scan::Empty,
                },
            }
        }
    })
}

/// The bounds of `attr op n` for a game attribute with a bitmap per value (`year > 1990`,
/// `elo white >= 2600`): the values passing within the 0..=65535 the bitmaps hold, as ranges of
/// whole bands, rounded outwards for the upper bound and inwards for the lower (a year is a
/// band of its own: exact). A game with a value outside 0..=65535 leaves its segment without a
/// bound (see [`Scan::GameRange`]), so no range needs to cover those values; but where none
/// within passes, the upper bound is still a scan (of no value) for the executor to see them.
pub fn game_range_bounds(attr: GameAttr, op: CmpOp, n: i64) -> Bounds {
    const TOP: i64 = u16::MAX as i64;
    let ranges = match op {
        CmpOp::Eq => vec![(n, n)],
        CmpOp::Lt => vec![(0, n.saturating_sub(1))],
        CmpOp::Le => vec![(0, n)],
        CmpOp::Gt => vec![(n.saturating_add(1), TOP)],
        CmpOp::Ge => vec![(n, TOP)],
        CmpOp::Ne => vec![(0, n.saturating_sub(1)), (n.saturating_add(1), TOP)],
    };
    let band = i64::from(attr.band());
    let range = |lo: i64, hi: i64| {
        let (lo, hi) = (lo.max(0), hi.min(TOP));
        match (u16::try_from(lo), u16::try_from(hi)) {
            (Ok(lo), Ok(hi)) if lo <= hi => Scan::GameRange { attr, lo, hi },
            _ => Scan::Empty,
        }
    };
    let none_within = Scan::GameRange { attr, lo: 1, hi: 0 };
    let first_of_band = |v: i64| v - v.rem_euclid(band);
    let last_of_band = |v: i64| first_of_band(v).saturating_add(band - 1);
    let (mut upper, mut lower) = (Scan::Empty, Scan::Empty);
    for (lo, hi) in ranges {
        let (lo, hi) = (lo.max(0), hi.min(TOP));
        if lo > hi {
            continue;
        }
        upper = Scan::or(upper, range(first_of_band(lo), last_of_band(hi)));
        let inner_lo = if first_of_band(lo) == lo {
            lo
        } else {
            first_of_band(lo) + band
        };
        let inner_hi = if hi == TOP || last_of_band(hi) == hi {
            hi
        } else {
            first_of_band(hi) - 1
        };
        lower = Scan::or(lower, range(inner_lo, inner_hi));
    }
    if upper == Scan::Empty {
        upper = none_within;
    }
    Bounds { upper, lower }
}

/// `a op b` as `b op' a`.
pub fn mirror(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::Ne => CmpOp::Ne,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The values a scan of game ranges selects, as the executor reads it: whole bands.
    fn selects(s: &Scan, v: u16) -> bool {
        match s {
            Scan::Empty => false,
            Scan::GameRange { lo, hi, .. } if lo > hi => false,
            Scan::GameRange { attr, lo, hi } => {
                let band = attr.band();
                (lo / band..=hi / band).contains(&(v / band))
            }
            Scan::Or(xs) => xs.iter().any(|x| selects(x, v)),
            other => panic!("not a game range: {other:?}"),
        }
    }

    fn aligned(s: &Scan) -> bool {
        match s {
            Scan::GameRange { lo, hi, .. } if lo > hi => (*lo, *hi) == (1, 0),
            Scan::GameRange { attr, lo, hi } => {
                let band = attr.band();
                lo % band == 0 && (*hi == u16::MAX || (hi + 1) % band == 0)
            }
            Scan::Or(xs) => xs.iter().all(aligned),
            _ => true,
        }
    }

    proptest! {
        /// Every value passing is in the upper bound, every value in the lower bound passes,
        /// and the ranges are whole bands, for years and ratings alike.
        #[test]
        fn game_ranges_bound_the_values_passing(
            op in prop::sample::select(vec![CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq, CmpOp::Ne]),
            n in -100i64..70_000,
            rating in any::<bool>(),
            values in prop::collection::vec(0u16..=u16::MAX, 1..50),
            near in 0u16..400,
        ) {
            let attr = if rating { GameAttr::BlackElo } else { GameAttr::Year };
            let b = game_range_bounds(attr, op, n);
            prop_assert!(aligned(&b.upper) && aligned(&b.lower));
            let mut vs = values;
            // Values near `n`, where the bands' edges are.
            vs.extend((n - 200..n + 200).step_by(1 + usize::from(near)).filter_map(|v| u16::try_from(v).ok()));
            for v in vs {
                let passes = match op {
                    CmpOp::Lt => i64::from(v) < n,
                    CmpOp::Le => i64::from(v) <= n,
                    CmpOp::Gt => i64::from(v) > n,
                    CmpOp::Ge => i64::from(v) >= n,
                    CmpOp::Eq => i64::from(v) == n,
                    CmpOp::Ne => i64::from(v) != n,
                };
                prop_assert!(!passes || selects(&b.upper, v), "{} {:?} {}: upper misses {}", attr.name(), op, n, v);
                prop_assert!(passes || !selects(&b.lower, v), "{} {:?} {}: lower holds {}", attr.name(), op, n, v);
            }
            let none_within = matches!(b.upper, Scan::GameRange { lo, hi, .. } if lo > hi);
            if !rating && !none_within {
                prop_assert!(b.is_exact());
            }
        }
    }
}
