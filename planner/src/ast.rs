//! The checked syntax tree of a CQL query: what the executor evaluates.

/// Byte range in the query source.
pub type Span = std::ops::Range<usize>;

/// A piece designator: which square contents (12 pieces and "empty") on which squares.
///
/// ```
/// use cqldb_planner::ast::PieceSet;
/// let any_white = PieceSet { pieces: PieceSet::WHITE, squares: u64::MAX };
/// assert!(any_white.has_piece(0)); // white pawn
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PieceSet {
    /// Bit i for i < 12: piece `i` (white P N B R Q K, then black p n b r q k); bit 12: empty.
    pub pieces: u16,
    /// Squares (bit = rank * 8 + file, a1 = 0).
    pub squares: u64,
}

impl PieceSet {
    /// Every white piece.
    pub const WHITE: u16 = 0x3f;
    /// Every black piece.
    pub const BLACK: u16 = 0xfc0;
    /// The empty square.
    pub const EMPTY: u16 = 1 << 12;
    /// Anything (a bare square set such as `e4` or `.`).
    pub const ALL_CONTENTS: u16 = 0x1fff;

    /// Whether piece index `i` (0..12) is designated.
    pub fn has_piece(self, i: usize) -> bool {
        self.pieces >> i & 1 == 1
    }
}

/// A node with its source span.
#[derive(Clone, Debug)]
pub struct Node {
    /// What it is.
    pub expr: Expr,
    /// Where it came from (for diagnostics).
    pub span: Span,
}

/// Comparison operators.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl CmpOp {
    /// Whether the comparison holds when the left side is `ord` to the right.
    pub fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Lt => ord == Less,
            CmpOp::Le => ord != Greater,
            CmpOp::Gt => ord == Greater,
            CmpOp::Ge => ord != Less,
            CmpOp::Eq => ord == Equal,
            CmpOp::Ne => ord != Equal,
        }
    }
}

/// Binary arithmetic and set operators.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+` (numbers, or string concatenation)
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `&`
    Inter,
    /// `|`
    Union,
}

/// Board directions of the direction filters and `ray`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Towards rank 8.
    Up,
    /// Towards rank 1.
    Down,
    /// Towards the a-file.
    Left,
    /// Towards the h-file.
    Right,
    /// Up and right.
    NorthEast,
    /// Up and left.
    NorthWest,
    /// Down and right.
    SouthEast,
    /// Down and left.
    SouthWest,
    /// Up or down.
    Vertical,
    /// Left or right.
    Horizontal,
    /// The four diagonal directions.
    Diagonal,
    /// The four orthogonal directions.
    Orthogonal,
    /// All eight.
    AnyDirection,
    /// Along the a1-h8 diagonal: north-east or south-west (a 45° turn of `horizontal`).
    MainDiagonal,
    /// Along the h1-a8 diagonal: north-west or south-east (a 45° turn of `vertical`).
    OffDiagonal,
}

impl Direction {
    /// The (file, rank) steps this direction covers.
    pub fn steps(self) -> &'static [(i8, i8)] {
        use Direction::*;
        match self {
            Up => &[(0, 1)],
            Down => &[(0, -1)],
            Left => &[(-1, 0)],
            Right => &[(1, 0)],
            NorthEast => &[(1, 1)],
            NorthWest => &[(-1, 1)],
            SouthEast => &[(1, -1)],
            SouthWest => &[(-1, -1)],
            Vertical => &[(0, 1), (0, -1)],
            Horizontal => &[(1, 0), (-1, 0)],
            Diagonal => &[(1, 1), (-1, 1), (1, -1), (-1, -1)],
            Orthogonal => &[(0, 1), (0, -1), (1, 0), (-1, 0)],
            MainDiagonal => &[(1, 1), (-1, -1)],
            OffDiagonal => &[(-1, 1), (1, -1)],
            AnyDirection => &[
                (0, 1),
                (0, -1),
                (1, 0),
                (-1, 0),
                (1, 1),
                (-1, 1),
                (1, -1),
                (-1, -1),
            ],
        }
    }
}

/// The squares a `pin` filter stands for, which CQL decides by the part written first.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PinSet {
    /// `from` first: the pinning pieces.
    Pinning,
    /// Anything else first, or nothing: the pinned pieces.
    Pinned,
}

/// Pawn-structure sets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PawnKind {
    /// `passedpawns`
    Passed,
    /// `doubledpawns`
    Doubled,
    /// `isolatedpawns`
    Isolated,
    /// `connectedpawns`
    Connected,
}

/// Which moves a dash or `move` filter looks at.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MoveSource {
    /// The moves in the PGN from the current position.
    Pgn,
    /// Generated legal moves.
    Legal,
    /// Generated pseudo-legal moves.
    PseudoLegal,
    /// The move that led to the current position.
    Current,
}

/// Kinds of castling.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Castle {
    /// `o-o`
    King,
    /// `o-o-o`
    Queen,
    /// `castle`
    Any,
}

/// A dash filter `F--G`, `F[x]G`, with promotion and target.
#[derive(Clone, Debug)]
pub struct Dash {
    /// Origin squares (`None` = any).
    pub from: Option<Node>,
    /// Destination squares, or the captured piece's square for captures (`None` = any).
    pub to: Option<Node>,
    /// `[x]`: captures only.
    pub capture: bool,
    /// Promotion piece types (colourless mask of P N B R Q K bits), if `=` was given.
    pub promotion: Option<u8>,
    /// Filter evaluated at the position after the move, with `from`/`to` bound.
    pub target: Option<Node>,
    /// Which moves.
    pub source: MoveSource,
}

/// The deprecated `move` filter's parameters.
#[derive(Clone, Debug, Default)]
pub struct MoveFilter {
    /// `from S`
    pub from: Option<Node>,
    /// `to S`
    pub to: Option<Node>,
    /// `capture S`
    pub capture: Option<Node>,
    /// `promote T` (colourless role mask)
    pub promote: Option<u8>,
    /// `previous`
    pub previous: bool,
    /// `legal`
    pub legal: bool,
    /// `pseudolegal`
    pub pseudolegal: bool,
    /// `count`
    pub count: bool,
    /// `castle`, `o-o`, `o-o-o`
    pub castle: Option<Castle>,
    /// `enpassant`
    pub enpassant: bool,
    /// `null`
    pub null: bool,
    /// `primary`
    pub primary: bool,
    /// `secondary`
    pub secondary: bool,
}

/// Tag fields that the tag filters read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagField {
    /// `player white` / `player black` / `player` (either).
    Player(Option<bool>),
    /// `event`
    Event,
    /// `site`
    Site,
    /// `date`
    Date,
    /// `eventdate`
    EventDate,
    /// `eco`
    Eco,
    /// `tag "Name"`
    Named(String),
}

/// `find` options.
#[derive(Clone, Debug)]
pub struct Find {
    /// `<--`: search the ancestors instead of the descendants.
    pub backward: bool,
    /// `quiet`
    pub quiet: bool,
    /// `all` or a count range: the value is the count.
    pub count: Option<(i64, i64)>,
    /// The filter searched for.
    pub body: Node,
}

/// `path` (⊢) and the deprecated `line`: a regular expression over the moves of the game tree
/// from the current position (see `crate::filter::path`).
#[derive(Clone, Debug)]
pub struct PathFilter {
    /// Which of the two, and which way a `line` goes.
    pub kind: PathKind,
    /// The parameters written before the pattern.
    pub params: PathParams,
    /// What it matches.
    pub pattern: Pattern,
}

/// `path` or `line`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// `path`: moves are dash constituents; other filters test the position reached.
    Path,
    /// `line -->` (forward) or `line <--` (`backward`): each constituent is one position.
    Line {
        /// `<--`: from the current position towards the game's first.
        backward: bool,
    },
}

/// A `path`'s or `line`'s parameters.
#[derive(Clone, Debug, Default)]
pub struct PathParams {
    /// `primary`: only main continuations (each position's first move).
    pub primary: bool,
    /// `secondary` (`line`): only moves that are not main continuations.
    pub secondary: bool,
    /// `quiet`: no Start/End notes.
    pub quiet: bool,
    /// `nestban`: no match starts inside an earlier match of the same filter.
    pub nestban: bool,
    /// `firstmatch`: the first complete match found, not the longest.
    pub firstmatch: bool,
    /// `lastposition`: the value is the position the match ends at.
    pub lastposition: bool,
    /// `keepallbest`: notes for every match as long as the best one.
    pub keepallbest: bool,
    /// `singlecolor` (`line`): constituents match positions of one side to move (two moves
    /// per step).
    pub singlecolor: bool,
    /// `verbose`, `piecepath`: accepted, as the reference does; they change only the wording
    /// of notes it writes for debugging.
    pub verbose: bool,
    /// `title "..."`: the notes' name instead of `path`.
    pub title: Option<String>,
    /// `max F`: the best match is the one where `F`, at its end, is largest.
    pub max: Option<Node>,
    /// `focus [capture] S` (◎): the pieces on `S` at the start; only their moves count (and
    /// with `capture`, captures of them), others are walked over.
    pub focus: Option<(bool, Node)>,
}

/// A pattern of `path`/`line` constituents.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// One after the other.
    Seq(Vec<Pattern>),
    /// `p*`, `p+`, `p?`, `p{n}`, `p{n,}`, `p{n,m}`: at least `min`, at most `max` times.
    Repeat(Box<Pattern>, u32, Option<u32>),
    /// A filter true at the position reached (not moving on).
    Test(Node),
    /// A dash constituent: one move of the game matching the dash, then the filters written
    /// right after it, true at the position the move reaches.
    Move(Box<Dash>, Vec<Node>),
    /// `line`'s step between constituents: one move (to a child, or back to the parent).
    Step,
}

impl Pattern {
    /// The filters inside, in source order.
    pub fn nodes(&self) -> Vec<&Node> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            match p {
                Pattern::Seq(items) => stack.extend(items.iter().rev()),
                Pattern::Repeat(inner, ..) => stack.push(inner),
                Pattern::Test(n) => out.push(n),
                Pattern::Move(d, then) => {
                    out.extend(d.from.as_ref());
                    out.extend(d.to.as_ref());
                    out.extend(d.target.as_ref());
                    out.extend(then);
                }
                Pattern::Step => {}
            }
        }
        out
    }

    /// The filters inside, mutable.
    pub fn nodes_mut(&mut self) -> Vec<&mut Node> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            match p {
                Pattern::Seq(items) => stack.extend(items.iter_mut().rev()),
                Pattern::Repeat(inner, ..) => stack.push(inner),
                Pattern::Test(n) => out.push(n),
                Pattern::Move(d, then) => {
                    let Dash {
                        from, to, target, ..
                    } = &mut **d;
                    out.extend(from.as_mut());
                    out.extend(to.as_mut());
                    out.extend(target.as_mut());
                    out.extend(then.iter_mut());
                }
                Pattern::Step => {}
            }
        }
        out
    }
}

impl PathFilter {
    /// Every filter inside: the parameters', then the pattern's.
    pub fn nodes(&self) -> Vec<&Node> {
        let mut out: Vec<&Node> = Vec::new();
        out.extend(self.params.max.as_ref());
        out.extend(self.params.focus.as_ref().map(|(_, s)| s));
        out.extend(self.pattern.nodes());
        out
    }

    /// The same, mutable.
    pub fn nodes_mut(&mut self) -> Vec<&mut Node> {
        let mut out: Vec<&mut Node> = Vec::new();
        out.extend(self.params.max.as_mut());
        out.extend(self.params.focus.as_mut().map(|(_, s)| s));
        out.extend(self.pattern.nodes_mut());
        out
    }
}

/// A path status filter: what the innermost (or last) matching `path` found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PathStatus {
    /// `pathstart`: the position it started at.
    Start,
    /// `pathlastposition`: the position its last move reached.
    LastPosition,
    /// `pathcount`: the moves it counted (focused ones).
    Count,
    /// `pathcountunfocused`: every move it walked.
    CountUnfocused,
}

/// `echo [quiet] (s t) [in all] body`.
#[derive(Clone, Debug)]
pub struct Echo {
    /// `quiet`: no notes.
    pub quiet: bool,
    /// The variable holding the source position (the current one).
    pub source: usize,
    /// The variable holding each target position in turn.
    pub target: usize,
    /// `in all`: the source is a target too.
    pub in_all: bool,
    /// What must hold at a target.
    pub body: Node,
}

/// `sort [quiet] [min|max] ["title"] target`.
#[derive(Clone, Debug)]
pub struct Sort {
    /// The key it sets (sorts with the same title share one: [`Query::sorts`]).
    pub key: usize,
    /// The value sorted by.
    pub target: Node,
}

/// One sort key of a query: the games are ordered by its best value per game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// The title written before the value in the game comment.
    pub title: String,
    /// `min`: smallest first (and the smallest value is a game's best).
    pub min: bool,
    /// `quiet`: no `title: value` in the game comment.
    pub quiet: bool,
}

/// Assignment operators.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`
    Set,
    /// `+=`, `-=`, `*=`, `/=`, `%=`
    Arith(BinOp),
    /// `=?`: assigns a set only when it is not empty (and fails otherwise).
    IfNonEmpty,
    /// `piece x = S`: binds the piece on S's one occupied square (fails otherwise).
    Piece,
}

/// An expression (every CQL filter is one).
#[derive(Clone, Debug)]
pub enum Expr {
    /// Integer literal.
    Number(i64),
    /// String literal.
    Str(String),
    /// `true`
    True,
    /// `false`
    False,
    /// Piece designator / square set.
    Pieces(PieceSet),
    /// `{ f1 f2 ... }` and the query body: all must match; value of the last.
    Compound(Vec<Node>),
    /// `and`
    And(Box<Node>, Box<Node>),
    /// `or`
    Or(Box<Node>, Box<Node>),
    /// `not`
    Not(Box<Node>),
    /// `if c then x [else y]`
    If(Box<Node>, Box<Node>, Option<Box<Node>>),
    /// Chained comparison `a < b <= c`.
    Compare(Box<Node>, Vec<(CmpOp, Node)>),
    /// Arithmetic and set operators.
    Binary(BinOp, Box<Node>, Box<Node>),
    /// Unary minus.
    Neg(Box<Node>),
    /// `~X`
    Complement(Box<Node>),
    /// `#X`: number of squares, or length of a string.
    Count(Box<Node>),
    /// `X in Y`: subset, or substring.
    In(Box<Node>, Box<Node>),
    /// `X ~~ "re"`
    Regex(Box<Node>, Box<Node>),
    /// `\n`
    Group(u32),
    /// `pos : filter`
    Colon(Box<Node>, Box<Node>),
    /// `X attacks Y` / `X -> Y`: squares of X attacking some square of Y.
    Attacks(Box<Node>, Box<Node>),
    /// `X attackedby Y` / `X <- Y`: squares of X attacked from Y.
    AttackedBy(Box<Node>, Box<Node>),
    /// `type S`, `typename S`, ...: what stands on one square.
    PieceInfo(PieceInfo, Box<Node>),
    /// `ascii X`
    Ascii(Box<Node>),
    /// `indexof (x y)`
    IndexOf(Box<Node>, Box<Node>),
    /// `notransform F`
    NoTransform(Box<Node>),
    /// `assert F`
    Assert(Box<Node>),
    /// `makesquare "b3"`
    MakeSquareOf(Box<Node>),
    /// `purestalemate` / `modelstalemate` (`model`).
    PureStalemate {
        /// `modelstalemate`
        model: bool,
    },
    /// `readfile NAME`
    ReadFile(Box<Node>),
    /// `writefile (NAME TEXT)`
    WriteFile(Box<Node>, Box<Node>),
    /// `originalcomment ["literal"]`
    OriginalComment(Option<String>),
    /// `consecutivemoves (X Y)`
    ConsecutiveMoves(Box<ConsecutiveMoves>),
    /// Three or more operands joined by arrows pointing one way (`x -> y -> z`, `z <- y <- x`).
    AttackChain(Arrow, Vec<Node>),
    /// Direction filters: `up 1 Q`, `anydirection k`.
    Direction(Direction, i8, i8, Box<Node>),
    /// `light X` (true) / `dark X` (false).
    Shade(bool, Box<Node>),
    /// `rank X` (true) / `file X` (false).
    RankFile(bool, Box<Node>),
    /// `power X`
    Power(Box<Node>),
    /// `between(X Y)`
    Between(Box<Node>, Box<Node>),
    /// `ray [dir] (S1 ... Sn)`; xray when the flag is set.
    Ray(Option<Direction>, Vec<Node>, bool),
    /// `pin [from X] [through Y] [to Z]`, and which squares it stands for.
    Pin(
        Option<Box<Node>>,
        Option<Box<Node>>,
        Option<Box<Node>>,
        PinSet,
    ),
    /// Pawn-structure sets.
    Pawns(PawnKind),
    /// `fen "..."`: board pattern (64 entries: piece index, 12 = empty, 13 = any).
    Fen(Vec<u8>),
    /// Bare `fen`: the position's FEN string.
    FenText,
    /// `makesquare(f r)`
    MakeSquare(Box<Node>, Box<Node>),
    /// `check`
    Check,
    /// `mate`
    Mate,
    /// `stalemate`
    Stalemate,
    /// `wtm` (true) / `btm` (false)
    ToMove(bool),
    /// `sidetomove`: 1 white, -1 black.
    SideToMove,
    /// `white` (1) / `black` (-1) as values.
    ColorConst(i64),
    /// `initial`
    Initial,
    /// `terminal`
    Terminal,
    /// `mainline`
    Mainline,
    /// `variation`
    Variation,
    /// `virtualmainline`
    VirtualMainline,
    /// `ply`
    Ply,
    /// `movenumber`
    MoveNumber,
    /// `depth`
    Depth,
    /// `positionid`
    PositionId,
    /// `gamenumber`
    GameNumber,
    /// `currentposition`
    CurrentPosition,
    /// `position N`
    Position(Box<Node>),
    /// `parent`
    Parent,
    /// `child` / `child(i)`
    Child(Option<Box<Node>>),
    /// `ancestor(x y)`: x is an ancestor of y.
    Ancestor(Box<Node>, Box<Node>),
    /// `descendant(x y)`: x is a descendant of y.
    Descendant(Box<Node>, Box<Node>),
    /// `distance(x y)`
    Distance(Box<Node>, Box<Node>),
    /// `lca(x y)`
    Lca(Box<Node>, Box<Node>),
    /// `find ...`
    Find(Box<Find>),
    /// `path ...` / `line ...`
    Path(Box<PathFilter>),
    /// `echo ...`
    Echo(Box<Echo>),
    /// `sort ...`
    Sort(Box<Sort>),
    /// `settag("Name" value)`
    SetTag(String, Box<Node>),
    /// `pathstart`, `pathlastposition`, `pathcount`, `pathcountunfocused`
    PathStatus(PathStatus),
    /// A dash filter.
    Dash(Box<Dash>),
    /// `countmoves <dash>`
    CountMoves(Box<Dash>),
    /// `move ...` (deprecated form).
    Move(Box<MoveFilter>),
    /// `from` inside a dash target.
    From,
    /// `to` inside a dash target.
    To,
    /// `o-o`, `o-o-o`, `castle`: the move that led here.
    Castled(Castle),
    /// `enpassant`: the move that led here.
    EnPassant,
    /// `nullmove`: the move that led here.
    NullMove,
    /// `primary`: the move that led here is the first of its parent.
    Primary,
    /// `secondary`
    Secondary,
    /// Tag text, or with a search string an implicit (substring) search.
    Tag(TagField, Option<String>),
    /// `result 1-0`
    Result(String),
    /// `elo white` (true) / `elo black`
    Elo(bool),
    /// `year`
    Year,
    /// `abs`
    Abs(Box<Node>),
    /// `sqrt`
    Sqrt(Box<Node>),
    /// `max(...)` (true) / `min(...)`
    MinMax(bool, Vec<Node>),
    /// `int X`
    Int(Box<Node>),
    /// `str(...)`
    ToStr(Vec<Node>),
    /// `lowercase` (true) / `uppercase`
    Case(bool, Box<Node>),
    /// `X[i]` / `X[i:j]` on strings.
    Slice(Box<Node>, Option<Box<Node>>, Option<Box<Node>>, bool),
    /// A variable (slot index).
    Var(usize),
    /// Assignment to a variable.
    Assign(usize, AssignOp, Box<Node>),
    /// `D[k]`
    DictGet(usize, Box<Node>),
    /// `D[k] = v`
    DictSet(usize, Box<Node>, Box<Node>),
    /// Function call (function index, argument nodes).
    Call(usize, Vec<Node>),
    /// `square [all] x in S body`
    SquareIter(usize, bool, Box<Node>, Box<Node>),
    /// `piece [all] x in S body`
    PieceIter(usize, bool, Box<Node>, Box<Node>),
    /// `while (c) body`
    While(Box<Node>, Box<Node>),
    /// `loop body`: the body again and again until it fails; matches if it ever matched.
    Loop(Box<Node>),
    /// `comment(...)`
    Comment(Vec<Node>),
    /// `message(...)`; with `quiet` (the flag) the text alone.
    Message(bool, Vec<Node>),
    /// A transform such as `flipcolor f`: the filter evaluated under each of its basic
    /// transforms at run time (no copy of the tree); matches if any image does.
    Transform(Box<Transformed>),
    /// `dictionary D` and other declarations: always matches.
    Declaration,
    /// `unbind x`, `unbind D` (every entry), `unbind D[k]` (one entry).
    Unbind(usize, Option<Box<Node>>),
    /// `isbound x` (true) / `isunbound x` (false)
    IsBound(usize, bool),
}

/// The transform filters (see `crate::transform` for their basic transforms).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TransformKind {
    /// `flipcolor` (⬓): the filter and its colour-swapped image.
    FlipColor,
    /// `reversecolor`: only the colour-swapped image.
    ReverseColor,
    /// `flip` / `flipdihedral` (✵): the eight symmetries of the board.
    Flip,
    /// `flipvertical`: files mirrored.
    FlipVertical,
    /// `fliphorizontal`: ranks mirrored (colours kept).
    FlipHorizontal,
    /// `rotate90`: the four quarter turns.
    Rotate90,
    /// `rotate45`: directions turned by multiples of 45°.
    Rotate45,
    /// `shift`: every translation.
    Shift,
    /// `shifthorizontal`: translations along the ranks.
    ShiftHorizontal,
    /// `shiftvertical`: translations along the files.
    ShiftVertical,
}

/// How the values of a transform's matching images make its own value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Combine {
    /// A set filter: the union of the images' sets.
    Union,
    /// A numeric filter: the largest of the images' numbers.
    Max,
    /// Anything else: the first matching image's value.
    First,
}

/// `T F` or `T count F`.
#[derive(Clone, Debug)]
pub struct Transformed {
    /// Which transform.
    pub kind: TransformKind,
    /// `count`: the value is the number of (distinct, valid) images that match, and the
    /// filter always matches.
    pub count: bool,
    /// How the images' values combine (from the filter's type).
    pub combine: Combine,
    /// The filter transformed.
    pub body: Node,
}

/// A user function: parameter slots and body.
#[derive(Clone, Debug)]
pub struct Function {
    /// Name.
    pub name: String,
    /// Variable slots of the parameters.
    pub params: Vec<usize>,
    /// Body.
    pub body: Node,
}

/// The way a chain of attack arrows points.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arrow {
    /// `->` / `attacks`: from the first operand written to the last.
    Attacks,
    /// `<-` / `attackedby`: from the last operand written to the first.
    AttackedBy,
}

/// `consecutivemoves [quiet] [N [M]] (X Y)`.
#[derive(Clone, Debug)]
pub struct ConsecutiveMoves {
    /// `quiet`
    pub quiet: bool,
    /// The range the length must lie in.
    pub range: Option<(i64, i64)>,
    /// The first position.
    pub x: Node,
    /// The second position.
    pub y: Node,
}

/// What `type`, `colortype`, `typename`, `piecename` and `pieceid` tell of a square.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PieceInfo {
    /// `type`: 0 empty, 1 pawn .. 6 king.
    Type,
    /// `colortype`: `type`, negative for Black.
    ColorType,
    /// `typename`: `P N B R Q K` or `_`.
    TypeName,
    /// `piecename`: `PNBRQK`, `pnbrqk` or `_`.
    PieceName,
    /// `pieceid`: the piece's identity in the game.
    PieceId,
}

/// What kind of thing a variable slot holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// Any value.
    Plain,
    /// A piece identity (`piece x in S`).
    Piece,
    /// A dictionary (its entries last from game to game).
    Dictionary,
    /// `persistent`: keeps its value from game to game, and is printed after the last
    /// (`quiet`: not printed).
    Persistent {
        /// `persistent quiet`.
        quiet: bool,
    },
}

/// Header settings of `cql( ... )`.
#[derive(Clone, Debug, Default)]
pub struct Header {
    /// `input file`
    pub input: Option<String>,
    /// `output file`
    pub output: Option<String>,
    /// `variations`
    pub variations: bool,
    /// `matchcount N [M]`
    pub matchcount: Option<(i64, i64)>,
    /// `sort matchcount`
    pub sort_matchcount: bool,
    /// `matchstring "s"`
    pub matchstring: Option<String>,
    /// `silent`
    pub silent: bool,
    /// `quiet`
    pub quiet: bool,
    /// `result R`
    pub result: Option<String>,
    /// `gamenumber N [M]`
    pub gamenumber: Option<(i64, i64)>,
    /// `-alwayscomment`: comments of filters that finally fail are kept (no smart comments).
    pub always_comment: bool,
    /// `-noheader`: no `Game number N` comment in the output.
    pub no_game_header: bool,
    /// `-nosettag`: `settag` filters set nothing.
    pub no_settag: bool,
    /// `-assign X V`: variables bound at each game's start (slot, the text given: a number if
    /// it reads as one, else a string).
    pub assign: Vec<(usize, String)>,
    /// `--files DIR`: the directory `readfile` and `writefile` may use.
    pub file_dir: Option<std::path::PathBuf>,
}

/// A parsed and checked query.
#[derive(Clone, Debug)]
pub struct Query {
    /// The header.
    pub header: Header,
    /// Body filters (an implicit `and`).
    pub body: Vec<Node>,
    /// Variable names and kinds, by slot.
    pub vars: Vec<(String, VarKind)>,
    /// User functions.
    pub functions: Vec<Function>,
    /// Whether any filter reads the game's tags (so readers must provide them).
    pub reads_tags: bool,
    /// The sort keys, in the order their first `sort` filter is written.
    pub sorts: Vec<SortKey>,
}

impl Query {
    /// Whether evaluation keeps state across games (`persistent` variables or dictionaries),
    /// so games must be evaluated one after another in input order.
    pub fn has_state(&self) -> bool {
        // Other variables are unbound at each game's start.
        self.vars
            .iter()
            .any(|(_, k)| matches!(k, VarKind::Dictionary | VarKind::Persistent { .. }))
            // Files are read and written in game order.
            || self
                .body
                .iter()
                .chain(self.functions.iter().map(|f| &f.body))
                .any(|n| {
                    let mut found = false;
                    n.walk(&mut |x| {
                        found |= matches!(x.expr, Expr::ReadFile(_) | Expr::WriteFile(..))
                    });
                    found
                })
    }
}

impl Node {
    /// The filters and values directly inside this one, in source order.
    pub fn children(&self) -> Vec<&Node> {
        use Expr::*;
        let mut out: Vec<&Node> = Vec::new();
        match &self.expr {
            Compound(xs)
            | Ray(_, xs, _)
            | MinMax(_, xs)
            | ToStr(xs)
            | Call(_, xs)
            | Comment(xs)
            | Message(_, xs)
            | AttackChain(_, xs) => out.extend(xs),
            And(a, b)
            | Or(a, b)
            | Binary(_, a, b)
            | In(a, b)
            | Regex(a, b)
            | Colon(a, b)
            | Attacks(a, b)
            | AttackedBy(a, b)
            | IndexOf(a, b)
            | WriteFile(a, b)
            | Between(a, b)
            | MakeSquare(a, b)
            | Ancestor(a, b)
            | Descendant(a, b)
            | Distance(a, b)
            | Lca(a, b)
            | DictSet(_, a, b)
            | SquareIter(_, _, a, b)
            | PieceIter(_, _, a, b)
            | While(a, b) => {
                out.push(a);
                out.push(b);
            }
            Not(a)
            | Neg(a)
            | Complement(a)
            | Count(a)
            | Direction(_, _, _, a)
            | Shade(_, a)
            | RankFile(_, a)
            | Power(a)
            | Position(a)
            | Abs(a)
            | Sqrt(a)
            | Int(a)
            | Case(_, a)
            | Assign(_, _, a)
            | Unbind(_, Some(a))
            | PieceInfo(_, a)
            | Loop(a)
            | MakeSquareOf(a)
            | Assert(a)
            | ReadFile(a)
            | Ascii(a)
            | NoTransform(a)
            | DictGet(_, a) => out.push(a),
            Transform(t) => out.push(&t.body),
            ConsecutiveMoves(c) => out.extend([&c.x, &c.y]),
            If(c, t, e) => {
                out.push(c);
                out.push(t);
                out.extend(e.as_deref());
            }
            Compare(a, rest) => {
                out.push(a);
                out.extend(rest.iter().map(|(_, x)| x));
            }
            Pin(a, b, c, _) => out.extend([a, b, c].into_iter().flatten().map(|x| &**x)),
            Child(a) => out.extend(a.as_deref()),
            Slice(a, b, c, _) => {
                out.push(a);
                out.extend(b.as_deref());
                out.extend(c.as_deref());
            }
            Find(f) => out.push(&f.body),
            Path(p) => out.extend(p.nodes()),
            Echo(e) => out.push(&e.body),
            Sort(s) => out.push(&s.target),
            SetTag(_, v) => out.push(v),
            Dash(d) | CountMoves(d) => {
                out.extend(d.from.as_ref());
                out.extend(d.to.as_ref());
                out.extend(d.target.as_ref());
            }
            Move(m) => {
                out.extend(m.from.as_ref());
                out.extend(m.to.as_ref());
                out.extend(m.capture.as_ref());
            }
            Number(_)
            | Str(_)
            | True
            | False
            | Pieces(_)
            | Group(_)
            | Pawns(_)
            | Fen(_)
            | Check
            | Mate
            | Stalemate
            | ToMove(_)
            | SideToMove
            | ColorConst(_)
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
            | Parent
            | From
            | To
            | Castled(_)
            | EnPassant
            | NullMove
            | Primary
            | Secondary
            | Tag(..)
            | Result(_)
            | Elo(_)
            | Year
            | Var(_)
            | Declaration
            | Unbind(_, None)
            | PathStatus(_)
            | OriginalComment(_)
            | FenText
            | PureStalemate { .. }
            | IsBound(..) => {}
        }
        out
    }

    /// Calls `f` on this node and every node inside it (without recursion: any depth).
    ///
    /// (See [`for_each_child_mut`] for the mutable children.)
    pub fn walk(&self, f: &mut impl FnMut(&Node)) {
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            f(n);
            stack.extend(n.children().into_iter().rev());
        }
    }
}

/// Calls `f` on each child of `e`, mutably, in the order of [`Node::children`].
pub fn for_each_child_mut(e: &mut Expr, f: &mut impl FnMut(&mut Node)) {
    use Expr::*;
    match e {
        Compound(xs)
        | Ray(_, xs, _)
        | MinMax(_, xs)
        | ToStr(xs)
        | Call(_, xs)
        | Comment(xs)
        | Message(_, xs)
        | AttackChain(_, xs) => xs.iter_mut().for_each(f),
        And(a, b)
        | Or(a, b)
        | Binary(_, a, b)
        | In(a, b)
        | Regex(a, b)
        | Colon(a, b)
        | Attacks(a, b)
        | AttackedBy(a, b)
        | IndexOf(a, b)
        | WriteFile(a, b)
        | Between(a, b)
        | MakeSquare(a, b)
        | Ancestor(a, b)
        | Descendant(a, b)
        | Distance(a, b)
        | Lca(a, b)
        | DictSet(_, a, b)
        | SquareIter(_, _, a, b)
        | PieceIter(_, _, a, b)
        | While(a, b) => {
            f(a);
            f(b);
        }
        Not(a)
        | Neg(a)
        | Complement(a)
        | Count(a)
        | Direction(_, _, _, a)
        | Shade(_, a)
        | RankFile(_, a)
        | Power(a)
        | Position(a)
        | Abs(a)
        | Sqrt(a)
        | Int(a)
        | Case(_, a)
        | Assign(_, _, a)
        | Unbind(_, Some(a))
        | PieceInfo(_, a)
        | Loop(a)
        | MakeSquareOf(a)
        | Assert(a)
        | ReadFile(a)
        | Ascii(a)
        | NoTransform(a)
        | DictGet(_, a) => f(a),
        Transform(t) => f(&mut t.body),
        ConsecutiveMoves(c) => {
            f(&mut c.x);
            f(&mut c.y);
        }
        If(c, t, e) => {
            f(c);
            f(t);
            if let Some(e) = e {
                f(e);
            }
        }
        Compare(a, rest) => {
            f(a);
            rest.iter_mut().for_each(|(_, x)| f(x));
        }
        Pin(a, b, c, _) => [a, b, c].into_iter().flatten().for_each(|x| f(x)),
        Child(a) => {
            if let Some(a) = a {
                f(a);
            }
        }
        Slice(a, b, c, _) => {
            f(a);
            if let Some(b) = b {
                f(b);
            }
            if let Some(c) = c {
                f(c);
            }
        }
        Find(x) => f(&mut x.body),
        Path(p) => p.nodes_mut().into_iter().for_each(f),
        Echo(e) => f(&mut e.body),
        Sort(s) => f(&mut s.target),
        SetTag(_, v) => f(v),
        Dash(d) | CountMoves(d) => {
            for x in [&mut d.from, &mut d.to, &mut d.target]
                .into_iter()
                .flatten()
            {
                f(x);
            }
        }
        Move(m) => {
            for x in [&mut m.from, &mut m.to, &mut m.capture]
                .into_iter()
                .flatten()
            {
                f(x);
            }
        }
        Number(_)
        | Str(_)
        | True
        | False
        | Pieces(_)
        | Group(_)
        | Pawns(_)
        | Fen(_)
        | Check
        | Mate
        | Stalemate
        | ToMove(_)
        | SideToMove
        | ColorConst(_)
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
        | Parent
        | From
        | To
        | Castled(_)
        | EnPassant
        | NullMove
        | Primary
        | Secondary
        | Tag(..)
        | Result(_)
        | Elo(_)
        | Year
        | Var(_)
        | Declaration
        | Unbind(_, None)
        | PathStatus(_)
        | OriginalComment(_)
        | FenText
        | PureStalemate { .. }
        | IsBound(..) => {}
    }
}
