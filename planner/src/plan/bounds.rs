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

use crate::ast::{CmpOp, Expr, Node, PieceSet, TagField};

use super::move_bounds;
use super::rules::simplify::simplify;
use super::scan::{MaterialTest, MoveOf, MoveTraits, PositionFlag, Scan};

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

    fn and(a: Self, b: Self) -> Self {
        Self {
            upper: Scan::and(a.upper, b.upper),
            lower: Scan::and(a.lower, b.lower),
        }
    }

    fn or(a: Self, b: Self) -> Self {
        Self {
            upper: Scan::or(a.upper, b.upper),
            lower: Scan::or(a.lower, b.lower),
        }
    }

    fn not(a: Self) -> Self {
        Self {
            upper: Scan::complement(a.lower),
            lower: Scan::complement(a.upper),
        }
    }
}

/// The bounds of a query body (its filters must all match), for a query that visits
/// variations or only main lines (`variations`: move filters then see different moves).
pub fn body_bounds(body: &[Node], variations: bool) -> Bounds {
    body.iter()
        .map(|n| bounds(n, variations))
        .fold(Bounds::exact(Scan::All), Bounds::and)
}

/// The bounds of one filter, evaluated as a filter (does it match here?).
///
/// Recursion follows the query's nesting, which the parser limits.
pub fn bounds(n: &Node, variations: bool) -> Bounds {
    use Expr::*;
    let flag = |f| Bounds::exact(Scan::Flag(f));
    match &n.expr {
        True | Declaration => Bounds::exact(Scan::All),
        False => Bounds::exact(Scan::Empty),
        Check => flag(PositionFlag::Check),
        Mate => flag(PositionFlag::Mate),
        Stalemate => flag(PositionFlag::Stalemate),
        Initial => flag(PositionFlag::Initial),
        Terminal => flag(PositionFlag::Terminal),
        Mainline => flag(PositionFlag::Mainline),
        Variation => Bounds::exact(Scan::complement(Scan::Flag(PositionFlag::Mainline))),
        VirtualMainline => flag(PositionFlag::VirtualMainline),
        ToMove(true) => flag(PositionFlag::WhiteToMove),
        ToMove(false) => Bounds::exact(Scan::complement(Scan::Flag(PositionFlag::WhiteToMove))),
        Pieces(d) => pieces(d),
        Compound(items) => body_bounds(items, variations),
        And(a, b) => Bounds::and(bounds(a, variations), bounds(b, variations)),
        Or(a, b) => Bounds::or(bounds(a, variations), bounds(b, variations)),
        Not(a) => Bounds::not(bounds(a, variations)),
        // `flipcolor f` and the other transforms: the filter or one of its copies.
        // Simplified at once: a nested transform's copies repeat (`flipcolor flipcolor f` has
        // f and its flip twice each), and must not double at every level.
        Transform(kind, body) => {
            let b = bounds(body, variations);
            let all = kind
                .copies()
                .iter()
                .map(|&flip| {
                    if flip {
                        Bounds {
                            upper: b.upper.flip_colors(),
                            lower: b.lower.flip_colors(),
                        }
                    } else {
                        b.clone()
                    }
                })
                .fold(Bounds::exact(Scan::Empty), Bounds::or);
            Bounds {
                upper: simplify(&all.upper),
                lower: simplify(&all.lower),
            }
        }
        Compare(first, rest) => compare(first, rest),
        // A filter at another position of the game: the game must have a position where it
        // can match.
        Colon(_, f) => Bounds {
            upper: Scan::games_with(bounds(f, variations).upper),
            lower: Scan::Empty,
        },
        // Games whose Result tag is exactly `r`: a game bitmap.
        Result(r) => Bounds::exact(Scan::GameResult(r.clone())),
        Tag(field, Some(needle)) => tag(field, needle),
        Fen(cells) => fen(cells),
        Dash(d) => move_bounds::dash(d),
        Move(m) => move_bounds::legacy(m, variations),
        Castled(which) => move_bounds::castled(*which),
        EnPassant => move_bounds::last_move(MoveTraits::EN_PASSANT),
        NullMove => move_bounds::last_move(MoveTraits::NULL),
        // Values, and filters the index keeps nothing for.
        Number(_)
        | Str(_)
        | If(..)
        | Binary(..)
        | Neg(_)
        | Complement(_)
        | Count(_)
        | In(..)
        | Regex(..)
        | Group(_)
        | Attacks(..)
        | AttackedBy(..)
        | Direction(..)
        | Shade(..)
        | RankFile(..)
        | Power(_)
        | Between(..)
        | Ray(..)
        | Pin(..)
        | Pawns(_)
        | MakeSquare(..)
        | SideToMove
        | ColorConst(_)
        | Ply
        | MoveNumber
        | Depth
        | PositionId
        | GameNumber
        | CurrentPosition
        | Position(_)
        | Parent
        | Child(_)
        | Ancestor(..)
        | Descendant(..)
        | Distance(..)
        | Lca(..)
        | Find(_)
        | CountMoves(_)
        | From
        | To
        | Primary
        | Secondary
        | Tag(_, None)
        | Elo(_)
        | Year
        | Abs(_)
        | Sqrt(_)
        | MinMax(..)
        | Int(_)
        | ToStr(_)
        | Case(..)
        | Slice(..)
        | Var(_)
        | Assign(..)
        | DictGet(..)
        | DictSet(..)
        | Call(..)
        | SquareIter(..)
        | PieceIter(..)
        | While(..)
        | Comment(_)
        | Message(_)
        | Unbind(_) => Bounds::unknown(),
    }
}

/// `player white "Capa"`, `event "Olympiad"`: the game has a tag of that name whose value
/// contains the text. The tag index answers exactly (its words find the values, which are then
/// checked as stored); where it cannot (a tag without a field of its own, a needle without
/// letters or digits, an index of an older version), the executor evaluates every game of the
/// segment instead of using the scan.
fn tag(field: &TagField, needle: &str) -> Bounds {
    let scan = |t: &str| Scan::GameTag {
        tag: t.to_owned(),
        needle: needle.to_owned(),
    };
    Bounds::exact(match field {
        TagField::Player(Some(true)) => scan("White"),
        TagField::Player(Some(false)) => scan("Black"),
        TagField::Player(None) => Scan::or(scan("White"), scan("Black")),
        TagField::Event => scan("Event"),
        TagField::Site => scan("Site"),
        TagField::Date => scan("Date"),
        TagField::EventDate => scan("EventDate"),
        TagField::Eco => scan("ECO"),
        TagField::Named(n) => scan(n),
    })
}

/// `fen "..."`: every piece of the pattern on its square, one bitmap each, and — when the
/// pattern has no wildcard square and one king of each colour — exactly the pattern's count of
/// each other piece type, one material bitmap: with every piece on its square and no piece
/// more, the other squares are empty, so the bounds are exact. (Material signatures do not
/// count kings: a stored position has one of each.) That exact set is also one placement, so
/// it is a [`Scan::Board`]: the board index answers it with one bitmap where the placement is
/// repeated. Otherwise an upper bound.
fn fen(cells: &[u8]) -> Bounds {
    let mut scan = Scan::All;
    let mut counts = [0i64; 12];
    let mut placement = [0u64; 12];
    let mut wildcard = false;
    for (sq, &c) in cells.iter().enumerate() {
        match c {
            0..12 => {
                counts[usize::from(c)] += 1;
                placement[usize::from(c)] |= 1 << sq;
                let piece = Scan::Pieces {
                    pieces: 1 << c,
                    squares: 1 << sq,
                };
                scan = Scan::and(scan, piece);
            }
            12 => {}
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

/// A piece designator as a filter: it matches where its square set is not empty.
fn pieces(d: &PieceSet) -> Bounds {
    if d.squares == 0 {
        return Bounds::exact(Scan::Empty);
    }
    if d.pieces == PieceSet::ALL_CONTENTS {
        // A bare square set (`e4`, `.`) is its squares wherever it is evaluated.
        return Bounds::exact(Scan::All);
    }
    if d.pieces & PieceSet::EMPTY != 0 {
        // Empty squares have no bitmap of their own.
        return Bounds::unknown();
    }
    if d.squares == u64::MAX {
        // Anywhere on the board: a king always is; other pieces are counted by the material
        // signatures, one bitmap per distinct material instead of one per square.
        const KINGS: u16 = 1 << 5 | 1 << 11;
        return Bounds::exact(if d.pieces & KINGS != 0 {
            Scan::All
        } else {
            Scan::Material(vec![MaterialTest {
                pieces: d.pieces,
                op: CmpOp::Ge,
                count: 1,
            }])
        });
    }
    Bounds::exact(Scan::Pieces {
        pieces: d.pieces,
        squares: d.squares,
    })
}

/// `R == 1`, `[Aa] <= 5`, `2 < #N`: the number of designated pieces on the whole board
/// against a number, answered by material signatures. A comparison of anything else, or of a
/// chain of more than two operands, is left to the residual.
fn compare(first: &Node, rest: &[(CmpOp, Node)]) -> Bounds {
    let [(op, second)] = rest else {
        return Bounds::unknown();
    };
    if let Some(b) = tree_depth(first, *op, second) {
        return b;
    }
    let board_count = |n: &Node| -> Option<u16> {
        let d = match &n.expr {
            Expr::Pieces(d) => d,
            Expr::Count(inner) => match &inner.expr {
                Expr::Pieces(d) => d,
                _ => return None,
            },
            _ => return None,
        };
        (d.squares == u64::MAX && d.pieces & !0xfff == 0 && d.pieces != 0).then_some(d.pieces)
    };
    let number = |n: &Node| match n.expr {
        Expr::Number(v) => Some(v),
        _ => None,
    };
    let (pieces, op, count) = match (board_count(first), number(second)) {
        (Some(p), Some(c)) => (p, *op, c),
        _ => match (number(first), board_count(second)) {
            (Some(c), Some(p)) => (p, mirror(*op), c),
            _ => return Bounds::unknown(),
        },
    };
    Bounds::exact(Scan::Material(vec![MaterialTest { pieces, op, count }]))
}

/// `ply op N`, `depth op N` (either way round).
fn tree_depth(first: &Node, op: CmpOp, second: &Node) -> Option<Bounds> {
    let attr = |e: &Expr| match e {
        Expr::Ply => Some(TreeAttr::Ply),
        Expr::Depth => Some(TreeAttr::Depth),
        Expr::MoveNumber => Some(TreeAttr::MoveNumber),
        _ => None,
    };
    match (&first.expr, &second.expr) {
        (a, Expr::Number(n)) => attr(a).and_then(|a| range_bounds(a, op, *n)),
        (Expr::Number(n), b) => attr(b).and_then(|b| range_bounds(b, mirror(op), *n)),
        _ => None,
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
fn mirror(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::Ne => CmpOp::Ne,
    }
}
