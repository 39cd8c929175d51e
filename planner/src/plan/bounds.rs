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

use super::scan::{MoveOf, MoveTraits, PositionFlag, Scan};

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
