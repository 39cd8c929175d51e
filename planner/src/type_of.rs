//! The static type of a CQL expression: the core's rules here, each filter's own type from its
//! file (`crate::filter`).

use crate::ast::*;
use crate::filter;
use crate::types::Ty;

/// What typing needs to know of the query around an expression: its variables' types.
pub trait Scope {
    /// The type of the variable in `slot` (as far as known while parsing).
    fn var_ty(&self, slot: usize) -> Ty;
}

/// The static type of `n`.
pub fn ty_of(n: &Node, p: &impl Scope) -> Ty {
    use Expr::*;
    match &n.expr {
        // A transform's value is its images' (united sets, the largest number), or with
        // `count` their number.
        Transform(t) if t.count => Ty::Number,
        Transform(t) => ty_of(&t.body, p),
        // The filters with a file of their own.
        Ancestor(..) | Descendant(..) => filter::ancestry::TYPE,
        Attacks(..) | AttackedBy(..) | AttackChain(..) => filter::attack::TYPE,
        Between(..) => filter::between::TYPE,
        Castled(_) => filter::castle::TYPE,
        Child(_) => filter::child::TYPE,
        CurrentPosition => filter::current_position::TYPE,
        Distance(..) => filter::distance::TYPE,
        Lca(..) => filter::lca::TYPE,
        Parent => filter::parent::TYPE,
        Position(_) => filter::position::TYPE,
        Check => filter::check::TYPE,
        ColorConst(_) => filter::color::TYPE,
        Depth => filter::depth::TYPE,
        Direction(..) => filter::direction::TYPE,
        Elo(_) => filter::elo::TYPE,
        EnPassant => filter::en_passant::TYPE,
        Fen(_) => filter::fen::TYPE,
        FenText => Ty::String,
        Find(f) => filter::find::ty(f),
        Path(f) => filter::path::ty(f),
        Echo(e) => filter::echo::ty(ty_of(&e.body, p)),
        Sort(s) => ty_of(&s.target, p),
        SetTag(..) => filter::settag::TYPE,
        PathStatus(s) => filter::path::status_ty(*s),
        From | To => filter::from_to::TYPE,
        GameNumber => filter::game_number::TYPE,
        Initial => filter::initial::TYPE,
        Mainline => filter::mainline::TYPE,
        MakeSquare(..) | MakeSquareOf(_) => filter::make_square::TYPE,
        PieceInfo(what, _) => filter::piece_info::type_of(*what),
        Ascii(a) => filter::ascii::type_of(ty_of(a, p)),
        IndexOf(..) => filter::index_of::TYPE,
        PureStalemate { .. } => filter::pure_stalemate::TYPE,
        ReadFile(_) => Ty::String,
        ConsecutiveMoves(_) => filter::consecutive_moves::TYPE,
        OriginalComment(l) => filter::original_comment::type_of(l),
        NoTransform(a) => ty_of(a, p),
        Mate => filter::mate::TYPE,
        MoveNumber => filter::move_number::TYPE,
        NullMove => filter::null_move::TYPE,
        Pawns(_) => filter::pawns::TYPE,
        Pin(..) => filter::pin::TYPE,
        Ply => filter::ply::TYPE,
        PositionId => filter::position_id::TYPE,
        Primary | Secondary => filter::primary::TYPE,
        Power(_) => filter::power::TYPE,
        RankFile(..) => filter::rank_file::TYPE,
        Ray(..) => filter::ray::TYPE,
        Result(_) => filter::result::TYPE,
        Shade(..) => filter::shade::TYPE,
        SideToMove => filter::side_to_move::TYPE,
        Stalemate => filter::stalemate::TYPE,
        Tag(_, search) => filter::tag_search::ty(search.as_deref()),
        Terminal => filter::terminal::TYPE,
        ToMove(_) => filter::to_move::TYPE,
        Variation => filter::variation::TYPE,
        VirtualMainline => filter::virtual_mainline::TYPE,
        Year => filter::year::TYPE,
        // The language's core and the filters still evaluated in `eval/`.
        Number(_) | Count(_) | Abs(_) | Sqrt(_) | MinMax(..) | Int(_) => Ty::Number,
        CountMoves(_) => filter::count_moves::TYPE,
        Neg(_) => Ty::Number,
        Str(_) | Group(_) | ToStr(_) | Case(..) | Slice(..) => Ty::String,
        Pieces(_) | Complement(_) => Ty::Set,
        // `x ~~ y` is the text the expression matched (its value), as CQL documents it.
        Regex(..) => Ty::String,
        // Without `all` an iteration stands for the squares its body held for.
        SquareIter(_, false, ..) | PieceIter(_, false, ..) => Ty::Set,
        Dash(_) => filter::dash::TYPE,
        Move(_) => filter::legacy_move::TYPE,
        Binary(op, a, b) => match op {
            BinOp::Inter | BinOp::Union => Ty::Set,
            BinOp::Add => {
                let (ta, tb) = (ty_of(a, p), ty_of(b, p));
                if ta == Ty::String || tb == Ty::String {
                    Ty::String
                } else {
                    Ty::Number
                }
            }
            _ => Ty::Number,
        },
        Var(slot) => p.var_ty(*slot),
        Compound(items) => items.last().map_or(Ty::Logical, |l| ty_of(l, p)),
        Colon(_, f) => ty_of(f, p),
        If(_, a, Some(b)) => {
            let (ta, tb) = (ty_of(a, p), ty_of(b, p));
            if ta == tb { ta } else { Ty::Unknown }
        }
        Assign(..) | DictSet(..) | DictGet(..) | Call(..) => Ty::Unknown,
        // Filters that match or not, without a value of their own (listed, not caught by a
        // wildcard, so that a new filter must be given its type here).
        True
        | False
        | And(..)
        | Or(..)
        | Not(_)
        | If(_, _, None)
        | Compare(..)
        | In(..)
        | SquareIter(_, true, ..)
        | PieceIter(_, true, ..)
        | While(..)
        | Loop(_)
        | Assert(_)
        | WriteFile(..)
        | Comment(_)
        | Message(..)
        | IsBound(..)
        | Declaration
        | Unbind(..) => Ty::Logical,
    }
}
