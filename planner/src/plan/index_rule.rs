//! The index rule of every CQL expression (see [`super::bounds`] for what bounds are): the
//! filters with a file of their own give theirs (`crate::filter`); the language's core —
//! `and`, `or`, `not`, transforms, comparisons of piece counts, piece designators, filters at
//! another position — composes them here.

use crate::ast::{CmpOp, Expr, Node, PieceSet};
use crate::filter;

use super::bounds::{Bounds, mirror};
use super::rules::simplify::simplify;
use super::scan::{MaterialTest, Scan};

/// The most images of a transform planned as the union of their bounds.
const MAX_PLANNED_IMAGES: usize = 64;

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
    match &n.expr {
        True | Declaration => Bounds::exact(Scan::All),
        False => Bounds::exact(Scan::Empty),
        // The filters with a file of their own.
        Ancestor(..) | Descendant(..) => filter::ancestry::bounds(),
        Attacks(..) | AttackedBy(..) | AttackChain(..) => filter::attack::bounds(),
        Between(..) => filter::between::bounds(),
        Castled(which) => filter::castle::bounds(*which),
        Child(_) => filter::child::bounds(),
        CurrentPosition => filter::current_position::bounds(),
        Distance(..) => filter::distance::bounds(),
        Lca(..) => filter::lca::bounds(),
        Parent => filter::parent::bounds(),
        Position(_) => filter::position::bounds(),
        Check => filter::check::bounds(),
        ColorConst(_) => filter::color::bounds(),
        Depth => filter::depth::bounds(),
        Direction(..) => filter::direction::bounds(),
        Elo(_) => filter::elo::bounds(),
        EnPassant => filter::en_passant::bounds(),
        Fen(cells) => filter::fen::bounds(cells),
        FenText => Bounds::exact(Scan::All),
        Find(_) => filter::find::bounds(),
        Path(f) => filter::path::bounds(f, &|n| bounds(n, variations)),
        Echo(_) => filter::echo::bounds(),
        Sort(s) => filter::sort::bounds(&s.target, &|n| bounds(n, variations)),
        SetTag(..) => filter::settag::bounds(),
        PathStatus(_) => filter::path::status_bounds(),
        From | To => filter::from_to::bounds(),
        GameNumber => filter::game_number::bounds(),
        Initial => filter::initial::bounds(),
        Mainline => filter::mainline::bounds(),
        MakeSquare(..) | MakeSquareOf(_) => filter::make_square::bounds(),
        PieceInfo(..) => filter::piece_info::bounds(),
        Ascii(_) => filter::ascii::bounds(),
        IndexOf(..) => filter::index_of::bounds(),
        Assert(_) => filter::assert::bounds(),
        PureStalemate { .. } => filter::pure_stalemate::bounds(),
        ReadFile(_) | WriteFile(..) => filter::files::bounds(),
        ConsecutiveMoves(_) => filter::consecutive_moves::bounds(),
        OriginalComment(_) => filter::original_comment::bounds(),
        // Its filter as written: bounded as written, in every image of an enclosing transform.
        NoTransform(a) => bounds(a, variations),
        Mate => filter::mate::bounds(),
        MoveNumber => filter::move_number::bounds(),
        NullMove => filter::null_move::bounds(),
        Pawns(_) => filter::pawns::bounds(),
        Pin(..) => filter::pin::bounds(),
        Ply => filter::ply::bounds(),
        PositionId => filter::position_id::bounds(),
        Primary | Secondary => filter::primary::bounds(),
        Power(_) => filter::power::bounds(),
        RankFile(..) => filter::rank_file::bounds(),
        Ray(..) => filter::ray::bounds(),
        Result(r) => filter::result::bounds(r),
        Shade(..) => filter::shade::bounds(),
        SideToMove => filter::side_to_move::bounds(),
        Stalemate => filter::stalemate::bounds(),
        Tag(field, search) => filter::tag_search::bounds(field, search.as_deref()),
        Terminal => filter::terminal::bounds(),
        ToMove(white) => filter::to_move::bounds(*white),
        Variation => filter::variation::bounds(),
        VirtualMainline => filter::virtual_mainline::bounds(),
        Year => filter::year::bounds(),
        // The language's core.
        Pieces(d) => pieces(d),
        Compound(items) => body_bounds(items, variations),
        And(a, b) => Bounds::and(bounds(a, variations), bounds(b, variations)),
        Or(a, b) => Bounds::or(bounds(a, variations), bounds(b, variations)),
        Not(a) => Bounds::negate(bounds(a, variations)),
        // `flipcolor f` and the other transforms: one of the filter's images, each written out
        // with its literals rewritten (`crate::transform::rewrite`), so its bounds are the
        // rewritten filter's own. Simplified at once: nested transforms' images repeat and
        // must not double at every level. A transform of many images (a `shift` of a square)
        // is left to the residual rather than planned as a union of hundreds of scans.
        Transform(t) => {
            let (kinds, body) = crate::transform::chain(t);
            let images = crate::transform::images_of_chain(&kinds, body, &[]);
            if images.len() > MAX_PLANNED_IMAGES {
                return Bounds::unknown();
            }
            let all = images
                .iter()
                .map(|steps| bounds(&crate::transform::rewrite_all(body, steps), variations))
                .fold(Bounds::exact(Scan::Empty), Bounds::or);
            let all = if t.count {
                // `count` always matches.
                Bounds::exact(Scan::All)
            } else {
                all
            };
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
        Dash(d) => filter::dash::bounds(d),
        Move(m) => filter::legacy_move::bounds(m, variations),
        // Values, and filters the index keeps nothing for.
        Number(_) | Str(_) | If(..) | Binary(..) | Neg(_) | Complement(_) | Count(_) | In(..)
        | Regex(..) | Group(_) | CountMoves(_) | Abs(_) | Sqrt(_) | MinMax(..) | Int(_)
        | ToStr(_) | Case(..) | Slice(..) | Var(_) | Assign(..) | DictGet(..) | DictSet(..)
        | Call(..) | SquareIter(..) | PieceIter(..) | While(..) | Loop(_) | Comment(_)
        | Message(..) | IsBound(..) | Unbind(..) => Bounds::unknown(),
    }
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
    if let Some(b) = compare_number(first, *op, second) {
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

/// `ply op N`, `depth op N`, `movenumber op N`, `year op N`, `elo white op N` (either way
/// round): the filter's own rule for comparisons with a number.
fn compare_number(first: &Node, op: CmpOp, second: &Node) -> Option<Bounds> {
    // `x != n` is `not x == n`: it holds in a game without a year or a rating too.
    if op == CmpOp::Ne {
        return compare_number(first, CmpOp::Eq, second).map(Bounds::negate);
    }
    let rule = |e: &Expr, op: CmpOp, n: i64| match e {
        Expr::Ply => filter::ply::compare_bounds(op, n),
        Expr::Depth => filter::depth::compare_bounds(op, n),
        Expr::MoveNumber => filter::move_number::compare_bounds(op, n),
        Expr::Year => Some(filter::year::compare_bounds(op, n)),
        Expr::Elo(white) => Some(filter::elo::compare_bounds(*white, op, n)),
        _ => None,
    };
    match (&first.expr, &second.expr) {
        (a, Expr::Number(n)) => rule(a, op, *n),
        (Expr::Number(n), b) => rule(b, mirror(op), *n),
        _ => None,
    }
}
