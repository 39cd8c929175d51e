//! CQL's transforms (`flipcolor`, `flip`, `rotate90`, `shift`, ...), evaluated at run time.
//!
//! A transform `T F` stands for its images: `F` rewritten by each of `T`'s basic transforms
//! ([`Step`]s, the identity included for all but `reversecolor`). A rewrite changes the literals
//! of `F` and nothing else — square designators, piece colours, directions, the sides named by
//! `white`/`black`/`wtm`/`btm`, results, `light`/`dark` — never numbers, strings or the values of
//! variables. Images in which a square designator became empty (a square shifted off the board)
//! are dropped, and equal images count once.
//!
//! Nothing is copied: the evaluator carries the stack of steps of the transforms it is inside
//! (outermost first) and reads each literal through it ([`map_piece_set`], [`map_direction`],
//! [`colours_swapped`], ...), so nested transforms cost the product of their sizes in time,
//! never in memory or parse time. [`images`] works out which steps give valid, distinct images
//! of a filter (the evaluator caches it); [`rewrite`] writes an image out as a tree, for the
//! planner, which plans a transform as the union of its images' bounds.

use crate::ast::{Direction, Expr, Node, PieceSet, TagField, TransformKind};

/// One of the seven symmetries of the board other than the identity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Symmetry {
    /// Quarter turn counter-clockwise (a1 to h1).
    Rot90,
    /// Half turn.
    Rot180,
    /// Quarter turn clockwise.
    Rot270,
    /// Ranks mirrored (1 and 8 exchanged): `fliphorizontal`.
    MirrorRanks,
    /// Files mirrored (a and h exchanged): `flipvertical`.
    MirrorFiles,
    /// Reflection in the a1-h8 diagonal.
    MainDiagonal,
    /// Reflection in the h1-a8 diagonal.
    OffDiagonal,
}

impl Symmetry {
    /// All seven.
    pub const ALL: [Symmetry; 7] = [
        Symmetry::Rot90,
        Symmetry::Rot180,
        Symmetry::Rot270,
        Symmetry::MirrorRanks,
        Symmetry::MirrorFiles,
        Symmetry::MainDiagonal,
        Symmetry::OffDiagonal,
    ];

    /// Where the square at (file, rank) goes (0..8 each).
    fn square(self, f: i8, r: i8) -> (i8, i8) {
        match self {
            Symmetry::Rot90 => (7 - r, f),
            Symmetry::Rot180 => (7 - f, 7 - r),
            Symmetry::Rot270 => (r, 7 - f),
            Symmetry::MirrorRanks => (f, 7 - r),
            Symmetry::MirrorFiles => (7 - f, r),
            Symmetry::MainDiagonal => (r, f),
            Symmetry::OffDiagonal => (7 - r, 7 - f),
        }
    }

    /// Where a step (file, rank) of a direction goes.
    fn vector(self, dx: i8, dy: i8) -> (i8, i8) {
        match self {
            Symmetry::Rot90 => (-dy, dx),
            Symmetry::Rot180 => (-dx, -dy),
            Symmetry::Rot270 => (dy, -dx),
            Symmetry::MirrorRanks => (dx, -dy),
            Symmetry::MirrorFiles => (-dx, dy),
            Symmetry::MainDiagonal => (dy, dx),
            Symmetry::OffDiagonal => (-dy, -dx),
        }
    }

    /// Whether it exchanges light and dark squares.
    fn swaps_shade(self) -> bool {
        matches!(
            self,
            Symmetry::Rot90 | Symmetry::Rot270 | Symmetry::MirrorRanks | Symmetry::MirrorFiles
        )
    }
}

/// A basic transform: one rewrite of a filter's literals.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Colours exchanged and ranks mirrored (`flipcolor`, `reversecolor`).
    Colour,
    /// A symmetry of the board (`flip`, `flipvertical`, `fliphorizontal`, `rotate90`).
    Board(Symmetry),
    /// A translation by (files, ranks), each in -7..=7 (`shift`, `shifthorizontal`,
    /// `shiftvertical`). A designator's squares on a rank it holds whole do not move
    /// sideways, those on a file it holds whole do not move up or down; squares moved off the
    /// board are dropped.
    Shift(i8, i8),
    /// Directions turned by 45° counter-clockwise this many times (`rotate45`, whose filter
    /// may only name whole-board square sets).
    Turn(u8),
}

impl TransformKind {
    /// The transform a keyword names.
    pub fn of_keyword(w: &str) -> Option<Self> {
        Some(match w {
            "flipcolor" => Self::FlipColor,
            "reversecolor" => Self::ReverseColor,
            "flip" | "flipdihedral" => Self::Flip,
            "flipvertical" => Self::FlipVertical,
            "fliphorizontal" => Self::FlipHorizontal,
            "rotate90" => Self::Rotate90,
            "rotate45" => Self::Rotate45,
            "shift" => Self::Shift,
            "shifthorizontal" => Self::ShiftHorizontal,
            "shiftvertical" => Self::ShiftVertical,
            _ => return None,
        })
    }

    /// Its keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Self::FlipColor => "flipcolor",
            Self::ReverseColor => "reversecolor",
            Self::Flip => "flip",
            Self::FlipVertical => "flipvertical",
            Self::FlipHorizontal => "fliphorizontal",
            Self::Rotate90 => "rotate90",
            Self::Rotate45 => "rotate45",
            Self::Shift => "shift",
            Self::ShiftHorizontal => "shifthorizontal",
            Self::ShiftVertical => "shiftvertical",
        }
    }

    /// Its basic transforms in evaluation order, `None` standing for the identity.
    pub fn steps(self) -> Vec<Option<Step>> {
        let shifts = |xs: std::ops::RangeInclusive<i8>, ys: std::ops::RangeInclusive<i8>| {
            let mut out = vec![None];
            for dy in ys {
                for dx in xs.clone() {
                    if (dx, dy) != (0, 0) {
                        out.push(Some(Step::Shift(dx, dy)));
                    }
                }
            }
            out
        };
        match self {
            Self::FlipColor => vec![None, Some(Step::Colour)],
            Self::ReverseColor => vec![Some(Step::Colour)],
            Self::Flip => std::iter::once(None)
                .chain(Symmetry::ALL.iter().map(|&s| Some(Step::Board(s))))
                .collect(),
            Self::FlipVertical => vec![None, Some(Step::Board(Symmetry::MirrorFiles))],
            Self::FlipHorizontal => vec![None, Some(Step::Board(Symmetry::MirrorRanks))],
            Self::Rotate90 => vec![
                None,
                Some(Step::Board(Symmetry::Rot90)),
                Some(Step::Board(Symmetry::Rot180)),
                Some(Step::Board(Symmetry::Rot270)),
            ],
            Self::Rotate45 => std::iter::once(None)
                .chain((1..8).map(|k| Some(Step::Turn(k))))
                .collect(),
            Self::Shift => shifts(-7..=7, -7..=7),
            Self::ShiftHorizontal => shifts(-7..=7, 0..=0),
            Self::ShiftVertical => shifts(0..=0, -7..=7),
        }
    }
}

const FILE_A: u64 = 0x0101_0101_0101_0101;
const RANK_1: u64 = 0xff;

fn each_square(s: u64, mut f: impl FnMut(i8, i8)) {
    let mut x = s;
    while x != 0 {
        let sq = x.trailing_zeros() as i8;
        x &= x - 1;
        f(sq % 8, sq / 8);
    }
}

/// Squares moved by (dx, dy) along files and ranks, those leaving the board dropped, with
/// the whole-rank and whole-file rule of [`Step::Shift`].
fn shift_squares(s: u64, dx: i8, dy: i8) -> u64 {
    let mut full_ranks = 0;
    for r in 0..8 {
        let m = RANK_1 << (8 * r);
        if s & m == m {
            full_ranks |= m;
        }
    }
    let mut out = s & full_ranks;
    each_square(s & !full_ranks, |f, r| {
        let nf = f + dx;
        if (0..8).contains(&nf) {
            out |= 1 << (r * 8 + nf);
        }
    });
    let s = out;
    let mut full_files = 0;
    for f in 0..8 {
        let m = FILE_A << f;
        if s & m == m {
            full_files |= m;
        }
    }
    let mut out = s & full_files;
    each_square(s & !full_files, |f, r| {
        let nr = r + dy;
        if (0..8).contains(&nr) {
            out |= 1 << (nr * 8 + f);
        }
    });
    out
}

/// Squares under one step.
pub fn step_squares(step: Step, s: u64) -> u64 {
    match step {
        Step::Colour => s.swap_bytes(),
        Step::Board(sym) => {
            let mut out = 0;
            each_square(s, |f, r| {
                let (nf, nr) = sym.square(f, r);
                out |= 1 << (nr * 8 + nf);
            });
            out
        }
        Step::Shift(dx, dy) => shift_squares(s, dx, dy),
        Step::Turn(_) => s,
    }
}

/// Piece bits with white and black exchanged (the empty-square bit stays).
pub fn swap_colors(p: u16) -> u16 {
    (p & 0x1000) | ((p & 0x3f) << 6) | ((p >> 6) & 0x3f)
}

/// Squares with rank 1 and rank 8 exchanged (and so on): the colour swap's squares.
pub fn mirror_ranks(s: u64) -> u64 {
    s.swap_bytes()
}

/// Whether the steps exchange the colours (an odd number of colour swaps).
pub fn colours_swapped(stack: &[Step]) -> bool {
    stack.iter().filter(|s| **s == Step::Colour).count() % 2 == 1
}

/// Whether the steps exchange light and dark squares.
pub fn shades_swapped(stack: &[Step]) -> bool {
    stack
        .iter()
        .filter(|s| match s {
            Step::Colour => true,
            Step::Board(sym) => sym.swaps_shade(),
            Step::Shift(dx, dy) => (dx + dy) % 2 != 0,
            Step::Turn(_) => false,
        })
        .count()
        % 2
        == 1
}

/// A designator read through the steps (applied in order: the outermost transform's first,
/// as each transform rewrites the text its inner ones then rewrite again).
pub fn map_piece_set(stack: &[Step], d: PieceSet) -> PieceSet {
    let mut out = d;
    for &step in stack {
        if step == Step::Colour {
            out.pieces = swap_colors(out.pieces);
        }
        out.squares = step_squares(step, out.squares);
    }
    out
}

/// A square set literal read through the steps.
pub fn map_squares(stack: &[Step], s: u64) -> u64 {
    stack.iter().fold(s, |s, &step| step_squares(step, s))
}

fn direction_of(steps: &[(i8, i8)]) -> Direction {
    use Direction::*;
    const ALL: [Direction; 15] = [
        Up,
        Down,
        Left,
        Right,
        NorthEast,
        NorthWest,
        SouthEast,
        SouthWest,
        Vertical,
        Horizontal,
        Diagonal,
        Orthogonal,
        AnyDirection,
        MainDiagonal,
        OffDiagonal,
    ];
    ALL.into_iter()
        .find(|d| {
            let own = d.steps();
            own.len() == steps.len() && own.iter().all(|s| steps.contains(s))
        })
        .unwrap_or(AnyDirection)
}

fn turn45((dx, dy): (i8, i8)) -> (i8, i8) {
    ((dx - dy).signum(), (dx + dy).signum())
}

/// A direction read through the steps (shifts leave directions alone).
pub fn map_direction(stack: &[Step], d: Direction) -> Direction {
    let mut steps: Vec<(i8, i8)> = d.steps().to_vec();
    let mut changed = false;
    for &step in stack {
        match step {
            Step::Colour => {
                steps = steps.iter().map(|&(x, y)| (x, -y)).collect();
                changed = true;
            }
            Step::Board(sym) => {
                steps = steps.iter().map(|&(x, y)| sym.vector(x, y)).collect();
                changed = true;
            }
            Step::Turn(k) => {
                for _ in 0..k {
                    steps = steps.iter().map(|&v| turn45(v)).collect();
                }
                changed = true;
            }
            Step::Shift(..) => {}
        }
    }
    if changed { direction_of(&steps) } else { d }
}

/// A `fen` pattern (64 cells, a1 first: piece index, 12 empty, 13 any) read through the steps.
pub fn map_fen(stack: &[Step], cells: &[u8]) -> Vec<u8> {
    let mut out = cells.to_vec();
    for &step in stack {
        let mut next = vec![13u8; 64];
        for (sq, &c) in out.iter().enumerate() {
            let to = step_squares(step, 1 << sq);
            let c = if step == Step::Colour && c < 12 {
                (c + 6) % 12
            } else {
                c
            };
            if to != 0 {
                next[to.trailing_zeros() as usize] = c;
            }
        }
        out = next;
    }
    out
}

/// A result literal (`1-0`, `0-1`, `1/2-1/2`, `*`) read through the steps.
pub fn map_result<'a>(stack: &[Step], r: &'a str) -> &'a str {
    if !colours_swapped(stack) {
        return r;
    }
    match r {
        "1-0" => "0-1",
        "0-1" => "1-0",
        other => other,
    }
}

/// What a transform rewrites in one node (its children are visited on their own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    /// Nothing: numbers, strings, variables, flags, containers.
    None,
    /// A designator's pieces and squares.
    Pieces(PieceSet),
    /// A direction.
    Direction(Direction),
    /// A side: `white`, `black`, `wtm`, `btm`, `elo white`, `player white`, a result.
    Side,
    /// `light` or `dark`.
    Shade,
    /// A `fen` pattern.
    Fen,
}

/// The literal of `e` a transform rewrites. Every expression is listed: a new one must say
/// what a transform does to it.
pub fn literal(e: &Expr) -> Literal {
    use Expr::*;
    match e {
        Pieces(d) => Literal::Pieces(*d),
        Direction(d, ..) => Literal::Direction(*d),
        Ray(Some(d), ..) => Literal::Direction(*d),
        ToMove(_) | ColorConst(_) | Elo(_) | Result(_) | Tag(TagField::Player(Some(_)), _) => {
            Literal::Side
        }
        Shade(..) => Literal::Shade,
        Fen(_) => Literal::Fen,
        Ray(None, ..)
        | Tag(..)
        | Number(_)
        | Str(_)
        | True
        | False
        | Compound(_)
        | And(..)
        | Or(..)
        | Not(_)
        | If(..)
        | Compare(..)
        | Binary(..)
        | Neg(_)
        | Complement(_)
        | Count(_)
        | In(..)
        | Regex(..)
        | Group(_)
        | Colon(..)
        | Attacks(..)
        | AttackChain(..)
        | PieceInfo(..)
        | Ascii(_)
        | IndexOf(..)
        | NoTransform(_)
        | ConsecutiveMoves(_)
        | OriginalComment(_)
        | FenText
        | AttackedBy(..)
        | RankFile(..)
        | Power(_)
        | Between(..)
        | Pin(..)
        | Pawns(_)
        | MakeSquare(..)
        | Check
        | Mate
        | Stalemate
        | SideToMove
        | Initial
        | Terminal
        | Mainline
        | Variation
        | VirtualMainline
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
        | Path(_)
        | PathStatus(_)
        | Echo(_)
        | Sort(_)
        | SetTag(..)
        | Dash(_)
        | CountMoves(_)
        | Move(_)
        | From
        | To
        | Castled(_)
        | EnPassant
        | NullMove
        | Primary
        | Secondary
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
        | Loop(_)
        | Assert(_)
        | MakeSquareOf(_)
        | PureStalemate { .. }
        | ReadFile(_)
        | WriteFile(..)
        | Comment(_)
        | Message(..)
        | IsBound(..)
        | Transform(_)
        | Declaration
        | Unbind(..) => Literal::None,
    }
}

/// One literal as an image shows it (what tells two images apart).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Pieces(PieceSet),
    Direction(Direction),
    Side(bool),
    Shade(bool),
    Fen(Vec<u8>),
}

/// The literals of `body` read through `stack`, in walk order; `None` if a non-empty square
/// designator became empty (the image is dropped).
fn seen(body: &Node, stack: &[Step]) -> Option<Vec<Seen>> {
    let mut out = Vec::new();
    let mut valid = true;
    body.walk(&mut |n| {
        let s = match literal(&n.expr) {
            Literal::None => return,
            Literal::Pieces(d) => {
                let m = map_piece_set(stack, d);
                if d.squares != 0 && m.squares == 0 {
                    valid = false;
                }
                Seen::Pieces(m)
            }
            Literal::Direction(d) => Seen::Direction(map_direction(stack, d)),
            Literal::Side => Seen::Side(colours_swapped(stack)),
            Literal::Shade => Seen::Shade(shades_swapped(stack)),
            Literal::Fen => match &n.expr {
                Expr::Fen(cells) => Seen::Fen(map_fen(stack, cells)),
                _ => return,
            },
        };
        out.push(s);
    });
    valid.then_some(out)
}

/// The steps of `kind` that give `body`, inside transforms whose steps are `outer`, a valid
/// image different from every earlier one (in `kind`'s order; `None` is the identity).
pub fn images(kind: TransformKind, body: &Node, outer: &[Step]) -> Vec<Option<Step>> {
    images_of_chain(&[kind], body, outer)
        .into_iter()
        .map(|steps| steps.first().copied())
        .collect()
}

/// The images of `body` under a chain of transforms written directly inside one another
/// (`flipcolor flip F`, outermost first): each image as the steps it takes (none for the
/// identity), valid and distinct, found level by level so that repeats collapse at once
/// (30 nested `flipcolor`s have two images, not 2^30).
pub fn images_of_chain(kinds: &[TransformKind], body: &Node, outer: &[Step]) -> Vec<Vec<Step>> {
    let mut level: Vec<Vec<Step>> = vec![Vec::new()];
    for kind in kinds {
        let mut seen_images: Vec<Vec<Seen>> = Vec::new();
        let mut next = Vec::new();
        let mut stack = outer.to_vec();
        for prefix in &level {
            for step in kind.steps() {
                stack.truncate(outer.len());
                stack.extend_from_slice(prefix);
                stack.extend(step);
                let Some(image) = seen(body, &stack) else {
                    continue;
                };
                // Equal images stay equal whatever inner transforms add: each level keeps one.
                if seen_images.contains(&image) {
                    continue;
                }
                seen_images.push(image);
                let mut composite = prefix.clone();
                composite.extend(step);
                next.push(composite);
            }
        }
        level = next;
    }
    level
}

/// `n` with its literals rewritten by `step` (the planner's image of a transform's filter).
pub fn rewrite(n: &Node, step: Step) -> Node {
    rewrite_all(n, &[step])
}

/// `n` with its literals rewritten by `steps`, in order.
pub fn rewrite_all(n: &Node, steps: &[Step]) -> Node {
    let mut out = n.clone();
    if !steps.is_empty() {
        rewrite_in_place(&mut out, steps);
    }
    out
}

/// The transforms written directly inside one another from `t` on, and the filter inside
/// the last: `flipcolor {flip F}` is one chain (values of nested images unite, or take the
/// largest, as one transform's do). A `count` transform ends the chain (its images are
/// counted, not combined).
pub fn chain(t: &crate::ast::Transformed) -> (Vec<TransformKind>, &Node) {
    let mut kinds = vec![t.kind];
    let mut body = &t.body;
    if t.count {
        return (kinds, body);
    }
    loop {
        let mut inner = body;
        while let Expr::Compound(items) = &inner.expr
            && items.len() == 1
        {
            inner = &items[0];
        }
        match &inner.expr {
            Expr::Transform(next) if !next.count => {
                kinds.push(next.kind);
                body = &next.body;
            }
            _ => return (kinds, body),
        }
    }
}

fn rewrite_in_place(n: &mut Node, stack: &[Step]) {
    let swapped = colours_swapped(stack);
    match &mut n.expr {
        Expr::Pieces(d) => *d = map_piece_set(stack, *d),
        Expr::Direction(d, ..) => *d = map_direction(stack, *d),
        Expr::Ray(Some(d), ..) => *d = map_direction(stack, *d),
        Expr::ToMove(white) => *white ^= swapped,
        Expr::ColorConst(c) if swapped => *c = -*c,
        Expr::Elo(white) => *white ^= swapped,
        Expr::Result(r) => *r = map_result(stack, r).to_owned(),
        Expr::Tag(TagField::Player(Some(white)), _) => *white ^= swapped,
        Expr::Shade(light, _) => *light ^= shades_swapped(stack),
        Expr::Fen(cells) => *cells = map_fen(stack, cells),
        // As written, whatever encloses it.
        Expr::NoTransform(_) => return,
        _ => {}
    }
    crate::ast::for_each_child_mut(&mut n.expr, &mut |c| rewrite_in_place(c, stack));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> u64 {
        let b = name.as_bytes();
        1 << ((b[1] - b'1') * 8 + (b[0] - b'a'))
    }

    #[test]
    fn symmetries_move_squares_and_directions_as_the_board() {
        let rot = Step::Board(Symmetry::Rot90);
        assert_eq!(step_squares(rot, sq("a1")), sq("h1"));
        assert_eq!(map_direction(&[rot], Direction::Up), Direction::Left);
        assert_eq!(
            map_direction(&[rot], Direction::Vertical),
            Direction::Horizontal
        );
        let files = Step::Board(Symmetry::MirrorFiles);
        assert_eq!(step_squares(files, sq("a2")), sq("h2"));
        assert_eq!(
            map_direction(&[files], Direction::NorthEast),
            Direction::NorthWest
        );
        assert_eq!(
            map_direction(&[Step::Colour], Direction::Up),
            Direction::Down
        );
        assert_eq!(
            map_direction(&[Step::Turn(1)], Direction::Vertical),
            Direction::OffDiagonal
        );
        assert_eq!(
            map_direction(&[Step::Turn(2)], Direction::Up),
            Direction::Left
        );
        for s in Symmetry::ALL {
            let all: u64 = (0..64).map(|i| step_squares(Step::Board(s), 1 << i)).sum();
            assert_eq!(all, u64::MAX, "{s:?} is a permutation");
        }
    }

    #[test]
    fn shifts_keep_whole_ranks_and_files_and_drop_the_rest() {
        let rank2 = RANK_1 << 8;
        // [a-h2,c4] by two files right, three ranks up: [a-h5,e7].
        assert_eq!(
            shift_squares(rank2 | sq("c4"), 2, 3),
            (RANK_1 << 32) | sq("e7")
        );
        assert_eq!(shift_squares(rank2 | sq("c4"), 3, 0), rank2 | sq("f4"));
        assert_eq!(shift_squares(FILE_A | sq("c4"), 0, 3), FILE_A | sq("c7"));
        assert_eq!(shift_squares(u64::MAX, 5, -3), u64::MAX);
        assert_eq!(shift_squares(sq("h1"), 1, 0), 0);
    }

    #[test]
    fn images_drop_emptied_designators_and_repeats() {
        let q = |s: &str| crate::parse(&format!("cql() {s}")).expect("parses").body[0].clone();
        // flip {Ka1 kh8}: four distinct images of eight.
        assert_eq!(images(TransformKind::Flip, &q("{Ka1 kh8}"), &[]).len(), 4);
        // shift Ka1: all 64 squares; shift {Ka1 ka8}: eight; shift K: one.
        assert_eq!(images(TransformKind::Shift, &q("Ka1"), &[]).len(), 64);
        assert_eq!(images(TransformKind::Shift, &q("{Ka1 ka8}"), &[]).len(), 8);
        assert_eq!(images(TransformKind::Shift, &q("K"), &[]).len(), 1);
        // A direction tells images apart even on whole-board sets.
        assert_eq!(images(TransformKind::Flip, &q("up 1 Q"), &[]).len(), 4);
        // reversecolor has no identity.
        assert_eq!(
            images(TransformKind::ReverseColor, &q("K"), &[]),
            vec![Some(Step::Colour)]
        );
        // A colourless filter has one image under flipcolor.
        assert_eq!(images(TransformKind::FlipColor, &q("check"), &[]).len(), 1);
    }
}
