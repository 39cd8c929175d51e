//! Index scans: the position sets an index can produce, as a tree of set operations.
//!
//! Every scan names a set of positions of the database: a flag's bitmap, the positions with
//! some designated piece on some designated square, those whose material satisfies a count,
//! the positions of games with a number, result or a position in another set. The executor
//! evaluates a scan over each segment's bitmaps; the planner only builds and rewrites them, so
//! this file knows no storage.

use std::fmt;

use shakmaty::Color;

use crate::ast::CmpOp;

/// A position flag with its own bitmap.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PositionFlag {
    /// `check`
    Check,
    /// `mate`
    Mate,
    /// `stalemate`
    Stalemate,
    /// `initial`: the game's first position.
    Initial,
    /// `terminal`: no move follows.
    Terminal,
    /// `mainline`: on the main line (depth 0).
    Mainline,
    /// `virtualmainline`
    VirtualMainline,
    /// White to move (`wtm`).
    WhiteToMove,
}

impl PositionFlag {
    /// The filter's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Check => "check",
            Self::Mate => "mate",
            Self::Stalemate => "stalemate",
            Self::Initial => "initial",
            Self::Terminal => "terminal",
            Self::Mainline => "mainline",
            Self::VirtualMainline => "virtualmainline",
            Self::WhiteToMove => "wtm",
        }
    }
}

impl PositionFlag {
    /// Whether the index keeps the games with this flag, per line: the flags few games carry
    /// (every game has an initial, a terminal, a main-line position, one with White to move).
    pub fn has_game_bitmaps(self) -> bool {
        match self {
            Self::Check | Self::Mate | Self::Stalemate => true,
            Self::Initial
            | Self::Terminal
            | Self::Mainline
            | Self::VirtualMainline
            | Self::WhiteToMove => false,
        }
    }
}

/// Which positions of a game a [`Scan::FlagGames`] looks at.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameLine {
    /// The main line.
    Main,
    /// The whole game tree.
    Anywhere,
}

/// A test of the material on the board: the number of designated pieces compared with a
/// number (`R == 1`, `[Aa] <= 5`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MaterialTest {
    /// Designated pieces (12 bits: white P N B R Q K, then black).
    pub pieces: u16,
    /// Comparison (`count(pieces) op count`).
    pub op: CmpOp,
    /// The number compared with.
    pub count: i64,
}

impl MaterialTest {
    /// Whether a count passes.
    pub fn holds(&self, n: i64) -> bool {
        match self.op {
            CmpOp::Lt => n < self.count,
            CmpOp::Le => n <= self.count,
            CmpOp::Gt => n > self.count,
            CmpOp::Ge => n >= self.count,
            CmpOp::Eq => n == self.count,
            CmpOp::Ne => n != self.count,
        }
    }
}

impl fmt::Display for MaterialTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#{} {} {}",
            piece_names(self.pieces),
            op_text(self.op),
            self.count
        )
    }
}

/// A set of colourless move facts, one bit each (the layout the storage's move-feature
/// bitmaps use): bits 0–5 the piece type that moved (P N B R Q K; the king for castling and null
/// moves), 6–11 the piece type captured (a pawn for en passant), 12–17 the promotion piece, then
/// castling on the king's side, on the queen's side, en passant, the null move. The piece type
/// that moved is indexed for the moves leaving a position only.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct MoveTraits(pub u32);

impl MoveTraits {
    /// Moves of these piece types (a mask of P N B R Q K bits).
    pub fn moved(roles: u8) -> Self {
        Self(u32::from(roles & 63))
    }
    /// Captures of these piece types.
    pub fn captured(roles: u8) -> Self {
        Self(u32::from(roles & 63) << 6)
    }
    /// Promotions to these piece types.
    pub fn promoted(roles: u8) -> Self {
        Self(u32::from(roles & 63) << 12)
    }
    /// Castling on the king's side.
    pub const CASTLE_KING_SIDE: Self = Self(1 << 18);
    /// Castling on the queen's side.
    pub const CASTLE_QUEEN_SIDE: Self = Self(1 << 19);
    /// En passant.
    pub const EN_PASSANT: Self = Self(1 << 20);
    /// The null move.
    pub const NULL: Self = Self(1 << 21);
    /// Any capture.
    pub const CAPTURE: Self = Self(0o77 << 6);

    /// Either set of facts.
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    fn names(self) -> String {
        const ROLES: &[u8; 6] = b"PNBRQK";
        let roles = |shift: u32| -> String {
            (0..6)
                .filter(|i| self.0 >> (shift + i) & 1 == 1)
                .map(|i| char::from(ROLES[i as usize]))
                .collect()
        };
        let mut parts = Vec::new();
        for (shift, word) in [(0, "moved"), (6, "captured"), (12, "promoted")] {
            let r = roles(shift);
            if !r.is_empty() {
                parts.push(format!("{word} {r}"));
            }
        }
        for (bit, word) in [
            (18, "o-o"),
            (19, "o-o-o"),
            (20, "enpassant"),
            (21, "nullmove"),
        ] {
            if self.0 >> bit & 1 == 1 {
                parts.push(word.to_owned());
            }
        }
        parts.join(" or ")
    }
}

/// Which move of a position a move scan looks at.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MoveOf {
    /// The move that reached it.
    Reached,
    /// Some move leaving it in the game tree, variations included.
    Leaving,
    /// The main-line move leaving a main-line position: all a query that does not visit
    /// variations sees of the moves leaving it. Found from the move that reached the next
    /// main-line position, so it can ask only what is kept of that move
    /// (`MoveFeature::REACHED_KEPT`: not the piece type that moved).
    MainLineNext,
}

/// A game attribute with a bitmap per value, read from the tags as the query reads them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameAttr {
    /// The year of the `Date` tag (`year`).
    Year,
    /// White's rating (`elo white`).
    WhiteElo,
    /// Black's rating (`elo black`).
    BlackElo,
}

impl GameAttr {
    /// How it is written in CQL.
    pub fn name(self) -> &'static str {
        match self {
            Self::Year => "year",
            Self::WhiteElo => "elo white",
            Self::BlackElo => "elo black",
        }
    }

    /// The values one bitmap holds: a year each, ratings in bands of a hundred (the storage's
    /// band width, which the executor's tests check).
    pub fn band(self) -> u16 {
        match self {
            Self::Year => 1,
            Self::WhiteElo | Self::BlackElo => 100,
        }
    }
}

/// A set of positions an index can produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scan {
    /// Every position.
    All,
    /// No position.
    Empty,
    /// Positions with a flag.
    Flag(PositionFlag),
    /// Positions with some piece of `pieces` (bit i: white P N B R Q K, then black p n b r q
    /// k) on some square of `squares`.
    Pieces {
        /// Designated pieces (12 bits, no empty square).
        pieces: u16,
        /// Designated squares (a1 = bit 0).
        squares: u64,
    },
    /// Positions whose material passes every test (one material bitmap per distinct
    /// material, so several tests cost one pass over them).
    Material(Vec<MaterialTest>),
    /// The positions of games numbered `lo..=hi` (numbers from 1 across the database).
    GameNumbers(i64, i64),
    /// The positions of games whose (first) `Result` tag is exactly this (`1-0`, `0-1`,
    /// `1/2-1/2`, `*`), as CQL's `result` filter tests.
    GameResult(String),
    /// The positions of games whose attribute has a value in `lo..=hi` (for a banded
    /// attribute, whole bands: `lo` and `hi + 1` multiples of its band, or `hi` the last
    /// value; `1..=0` where no value within 0..=65535 passes). A value outside 0..=65535 has
    /// no bitmap: a segment holding a game with one answers no bound for this scan, and its
    /// games are all evaluated.
    GameRange {
        /// The attribute.
        attr: GameAttr,
        /// Lowest value.
        lo: u16,
        /// Highest value.
        hi: u16,
    },
    /// The positions of games whose tag `tag` may contain `needle` (the tag index's words;
    /// a superset), or of every game when the index keeps no words for that tag.
    GameTag {
        /// The tag's name (`White`).
        tag: String,
        /// The text searched for.
        needle: String,
    },
    /// Positions whose move (which one: `of`) has one of the facts.
    Moves {
        /// The move meant.
        of: MoveOf,
        /// The facts, any of which will do.
        traits: MoveTraits,
    },
    /// A superset of the positions whose ply is in `lo..=hi`: positions are numbered in
    /// pre-order from their game's first, so a position at ply `p` is at least `p` after it —
    /// exactly `p` in a game without variations.
    Ply(u32, u32),
    /// The positions with exactly this piece placement (an exact `fen`), read from the board
    /// index where a segment keeps the placement's own bitmap (it does for placements repeated
    /// in it), otherwise `otherwise`: the same set from pieces on squares and material.
    Board {
        /// Each piece's squares: white P N B R Q K, then black (a1 = bit 0).
        placement: Box<[u64; 12]>,
        /// The same positions without the board index.
        otherwise: Box<Scan>,
    },
    /// Every position of each game with a position carrying `flag` on `line` with `side` to
    /// move: the games of `flag` (and `mainline`, and `wtm` or `btm`), read from the index's
    /// game bitmaps where the segment has them. Only where just the games of a scan matter
    /// (see the `flag_games` rule).
    FlagGames {
        /// The flag (one with game bitmaps: [`PositionFlag::has_game_bitmaps`]).
        flag: PositionFlag,
        /// Where in the game.
        line: GameLine,
        /// The side to move in the flagged position; `None`: either.
        side: Option<Color>,
    },
    /// Positions in every set.
    And(Vec<Scan>),
    /// Positions in some set.
    Or(Vec<Scan>),
    /// Positions not in the set.
    Not(Box<Scan>),
    /// Every position of each game that has a position in the set.
    GamesWith(Box<Scan>),
}

impl Scan {
    /// `a and b`, folding `All` and `Empty`.
    pub fn and(a: Scan, b: Scan) -> Scan {
        match (a, b) {
            (Scan::Empty, _) | (_, Scan::Empty) => Scan::Empty,
            (Scan::All, x) | (x, Scan::All) => x,
            (Scan::And(mut xs), Scan::And(ys)) => {
                xs.extend(ys);
                Scan::And(xs)
            }
            (Scan::And(mut xs), y) | (y, Scan::And(mut xs)) => {
                xs.push(y);
                Scan::And(xs)
            }
            (x, y) => Scan::And(vec![x, y]),
        }
    }

    /// `a or b`, folding `All` and `Empty`.
    pub fn or(a: Scan, b: Scan) -> Scan {
        match (a, b) {
            (Scan::All, _) | (_, Scan::All) => Scan::All,
            (Scan::Empty, x) | (x, Scan::Empty) => x,
            (Scan::Or(mut xs), Scan::Or(ys)) => {
                xs.extend(ys);
                Scan::Or(xs)
            }
            (Scan::Or(mut xs), y) | (y, Scan::Or(mut xs)) => {
                xs.push(y);
                Scan::Or(xs)
            }
            (x, y) => Scan::Or(vec![x, y]),
        }
    }

    /// `not a`, folding constants and double negation.
    pub fn complement(a: Scan) -> Scan {
        match a {
            Scan::All => Scan::Empty,
            Scan::Empty => Scan::All,
            Scan::Not(x) => *x,
            x => Scan::Not(Box::new(x)),
        }
    }

    /// The positions of games with a position in `a`.
    pub fn games_with(a: Scan) -> Scan {
        match a {
            Scan::Empty => Scan::Empty,
            Scan::All => Scan::All,
            // Whole-game sets are their own game closure.
            x if x.is_whole_games() => x,
            x => Scan::GamesWith(Box::new(x)),
        }
    }

    /// Whether the set is one of whole games: every position of each game it touches.
    pub fn is_whole_games(&self) -> bool {
        match self {
            Scan::GameNumbers(..)
            | Scan::GameResult(_)
            | Scan::GameRange { .. }
            | Scan::GameTag { .. }
            | Scan::FlagGames { .. }
            | Scan::GamesWith(_) => true,
            Scan::All
            | Scan::Empty
            | Scan::Flag(_)
            | Scan::Pieces { .. }
            | Scan::Material(_)
            | Scan::Moves { .. }
            | Scan::Ply(..)
            | Scan::Board { .. }
            | Scan::And(_)
            | Scan::Or(_)
            | Scan::Not(_) => false,
        }
    }

    /// Calls `f` on this scan and every scan inside it, parents first.
    pub fn visit(&self, f: &mut impl FnMut(&Scan)) {
        f(self);
        for c in self.children() {
            c.visit(f);
        }
    }

    /// The same operation over `f` of each child (a scan without children is copied).
    pub fn map_children(&self, f: impl Fn(&Scan) -> Scan) -> Scan {
        match self {
            Scan::And(xs) => Scan::And(xs.iter().map(f).collect()),
            Scan::Or(xs) => Scan::Or(xs.iter().map(f).collect()),
            Scan::Not(x) => Scan::Not(Box::new(f(x))),
            Scan::GamesWith(x) => Scan::GamesWith(Box::new(f(x))),
            Scan::Board {
                placement,
                otherwise,
            } => Scan::Board {
                placement: placement.clone(),
                otherwise: Box::new(f(otherwise)),
            },
            Scan::All
            | Scan::Empty
            | Scan::Flag(_)
            | Scan::Pieces { .. }
            | Scan::Material(_)
            | Scan::GameNumbers(..)
            | Scan::GameResult(_)
            | Scan::GameRange { .. }
            | Scan::GameTag { .. }
            | Scan::Moves { .. }
            | Scan::FlagGames { .. }
            | Scan::Ply(..) => self.clone(),
        }
    }

    /// The operator's one-line description in plans (`IndexScan: flag mate`).
    pub fn describe(&self) -> String {
        match self {
            Scan::All => "AllPositions".into(),
            Scan::Empty => "NoPositions".into(),
            Scan::Flag(f) => format!("IndexScan: flag {}", f.name()),
            Scan::Pieces { pieces, squares } => {
                format!(
                    "IndexScan: pieces {} on {}",
                    piece_names(*pieces),
                    square_names(*squares)
                )
            }
            Scan::Material(tests) => format!(
                "IndexScan: material {}",
                tests
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            Scan::GameNumbers(lo, hi) => format!("GameScan: gamenumber {lo}..={hi}"),
            Scan::GameResult(r) => format!("GameScan: result {r}"),
            Scan::GameRange { attr, lo, hi } if lo > hi => {
                format!("GameScan: {} outside 0..=65535", attr.name())
            }
            Scan::GameRange { attr, lo, hi } if *hi == u16::MAX => {
                format!("GameScan: {} >= {lo}", attr.name())
            }
            Scan::GameRange { attr, lo, hi } => format!("GameScan: {} {lo}..={hi}", attr.name()),
            Scan::GameTag { tag, needle } => format!("TagScan: {tag} contains {needle:?}"),
            Scan::Moves { of, traits } => format!(
                "IndexScan: {} move {}",
                match of {
                    MoveOf::Reached => "last",
                    MoveOf::Leaving => "next",
                    MoveOf::MainLineNext => "next main-line",
                },
                traits.names()
            ),
            Scan::FlagGames { flag, line, side } => format!(
                "GameScan: games with {}{} {}",
                match side {
                    None => "",
                    Some(Color::White) => "wtm ",
                    Some(Color::Black) => "btm ",
                },
                flag.name(),
                match line {
                    GameLine::Main => "on the main line",
                    GameLine::Anywhere => "anywhere",
                }
            ),
            Scan::Ply(lo, hi) if *hi == u32::MAX => format!("RangeScan: ply >= {lo}"),
            Scan::Ply(lo, hi) => format!("RangeScan: ply {lo}..={hi}"),
            Scan::Board { placement, .. } => {
                format!(
                    "IndexScan: board {} (else its pieces, in the board index's stretches)",
                    placement_fen(placement)
                )
            }
            Scan::And(_) => "BitmapAnd".into(),
            Scan::Or(_) => "BitmapOr".into(),
            Scan::Not(_) => "BitmapNot".into(),
            Scan::GamesWith(_) => "GamesWith".into(),
        }
    }

    /// Whether the scan reads the tag index.
    pub fn uses_tags(&self) -> bool {
        let mut found = false;
        self.visit(&mut |s| found |= matches!(s, Scan::GameTag { .. }));
        found
    }

    /// The children of a set operation.
    pub fn children(&self) -> Vec<&Scan> {
        match self {
            Scan::And(xs) | Scan::Or(xs) => xs.iter().collect(),
            Scan::Not(x) | Scan::GamesWith(x) => vec![x],
            Scan::Board { otherwise, .. } => vec![otherwise],
            Scan::All
            | Scan::Empty
            | Scan::Flag(_)
            | Scan::Pieces { .. }
            | Scan::Material(_)
            | Scan::GameNumbers(..)
            | Scan::GameResult(_)
            | Scan::GameRange { .. }
            | Scan::GameTag { .. }
            | Scan::Moves { .. }
            | Scan::FlagGames { .. }
            | Scan::Ply(..) => Vec::new(),
        }
    }
}

impl fmt::Display for Scan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// `CmpOp` as written.
pub fn op_text(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
    }
}

/// `[RQ]` for a piece mask.
pub fn piece_names(pieces: u16) -> String {
    const NAMES: &[u8; 12] = b"PNBRQKpnbrqk";
    let names: String = (0..12)
        .filter(|i| pieces >> i & 1 == 1)
        .map(|i| char::from(NAMES[i]))
        .collect();
    if names.len() == 1 {
        names
    } else {
        format!("[{names}]")
    }
}

/// The board field of a FEN for a placement given piece by piece.
pub fn placement_fen(placement: &[u64; 12]) -> String {
    const NAMES: &[u8; 12] = b"PNBRQKpnbrqk";
    let mut out = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            let sq = rank * 8 + file;
            match (0..12).find(|&i| placement[i] >> sq & 1 == 1) {
                Some(i) => {
                    if empty > 0 {
                        out.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    out.push(char::from(NAMES[i]));
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            out.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

/// `a1-h8`, `e4`, or a count of squares.
pub fn square_names(squares: u64) -> String {
    match squares.count_ones() {
        64 => "a-h1-8".into(),
        1 => {
            let s = squares.trailing_zeros();
            format!("{}{}", char::from(b'a' + (s % 8) as u8), s / 8 + 1)
        }
        n => format!("{n} squares"),
    }
}
