//! The name of one bitmap of a segment ([`BitmapKey`]) and its number in the segment's table.

use shakmaty::{Color, Role, Square};

use crate::move_features::{MoveFeature, MoveSide};
use crate::schema::{Bitboards, GameResult, MaterialSignature, PositionFlags};

/// The groups of bitmaps a segment's size is reported by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// Pieces on squares.
    Pieces,
    /// Position flags.
    Flags,
    /// Material signatures.
    Material,
    /// Features of the move that reached a position.
    LastMove,
    /// Features of the moves leaving a position.
    NextMoves,
    /// Sets of games (results, years, ECO, ratings, tag values).
    Games,
    /// Repeated placements.
    Boards,
    /// The board index's parts.
    BoardIndex,
}

impl KeyKind {
    /// Every kind, in report order.
    pub const ALL: [Self; 8] = [
        Self::Pieces,
        Self::Flags,
        Self::Material,
        Self::LastMove,
        Self::NextMoves,
        Self::Games,
        Self::Boards,
        Self::BoardIndex,
    ];
}

/// The name of one bitmap.
///
/// ```
/// use cqldb_storage::BitmapKey;
/// use shakmaty::{Color, Role, Square};
/// let k = BitmapKey::Piece(Color::Black, Role::Knight, Square::F6);
/// assert_eq!(BitmapKey::from_u64(k.to_u64()), Some(k));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BitmapKey {
    /// Positions with this piece on this square.
    Piece(Color, Role, Square),
    /// Positions with this flag (the flag's bit index in [`PositionFlags`]).
    Flag(u8),
    /// Positions with this material.
    Material(MaterialSignature),
    /// Games with this result: from the `Result` tag, or from the termination marker of a
    /// game whose tag is missing or not a result.
    Result(GameResult),
    /// Games whose first `Result` tag is exactly this result's PGN spelling (`*` for
    /// [`GameResult::Unknown`]): what CQL's `result` tests. A segment written since these
    /// exist has all four, empty ones included: a segment without them predates them.
    ResultTag(GameResult),
    /// Games whose year, as a query reads it ([`date_year`](crate::schema::date_year) of the
    /// first `Date` tag), is this one.
    Year(u16),
    /// Games whose year as a query reads it is outside 0..=65535 (`"-500.??.??"`): no
    /// [`BitmapKey::Year`] holds them. A segment written since these exist has one, maybe
    /// empty; a segment without one has year bitmaps from `Date`, else `EventDate`, which a
    /// query cannot use.
    YearOutside,
    /// Games with this ECO code (packed as in [`GameMeta::eco`]).
    Eco(u16),
    /// Games whose rating of this colour, as a query reads it ([`rating`](crate::schema::rating)
    /// of the first `WhiteElo` or `BlackElo` tag), is in this band (`elo / 100`).
    EloBand(Color, u16),
    /// Games whose rating of this colour as a query reads it is outside 0..=65535: no
    /// [`BitmapKey::EloBand`] holds them. A segment written since these exist has both, maybe
    /// empty.
    EloOutside(Color),
    /// Games with this tag value (its number in the segment's tag index, see `tags/`).
    TagValue(u32),
    /// Positions whose reaching move (`bit < 32`) or some leaving move (`bit - 32`) has a move
    /// feature (see [`MoveFeature`]); bit [`MoveFeature::MARKER`] is the empty marker of a
    /// segment that has these bitmaps.
    Move(u8),
    /// Positions with one piece placement: the top 56 bits of its
    /// [`Bitboards::board_hash`](crate::schema::Bitboards::board_hash). Only placements that
    /// occur at least [`MIN_BOARD_REPEATS`] times in a segment get one; a rarer one is found
    /// from its pieces' bitmaps. Two different placements share a key with probability 2⁻⁵⁶.
    Board(u64),
    /// Games with a position carrying this flag (its bit index in [`PositionFlags`]) on
    /// `line`, with `side` to move there (`None`: either): what a query that needs only games
    /// (a count, a game's candidacy) reads instead of every such position and the game of
    /// each. Kept for [`GAME_FLAGS`] only; a segment written since these exist has every one
    /// of them, empty ones included (the sided ones came later: a segment may have the others
    /// alone).
    FlagGames(u8, GameLine, Option<Color>),
    /// Not a bitmap: a part of the board index of the positions whose placement has no board
    /// bitmap (see `board_index.rs`). Parts are kept in the bitmap table, checksummed like the
    /// bitmaps, so that a segment written before the index reads as before: without one.
    BoardIndex(u32),
}

/// The part of a game a [`BitmapKey::FlagGames`] bitmap looks at.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameLine {
    /// Main-line positions (what a query visits without `variations`).
    Main,
    /// Every position of the game tree.
    Anywhere,
}

impl GameLine {
    /// Both lines, in key order.
    pub const ALL: [Self; 2] = [Self::Main, Self::Anywhere];
}

/// The sides to move a [`BitmapKey::FlagGames`] bitmap can ask for, in key order: either side
/// (`check`), White (`wtm check`: White is in check) or Black.
pub const FLAG_SIDES: [Option<Color>; 3] = [None, Some(Color::White), Some(Color::Black)];

/// The flags with [`BitmapKey::FlagGames`] bitmaps: those few games have (every game has an
/// initial, a terminal and a main-line position).
pub const GAME_FLAGS: [PositionFlags; 3] = [
    PositionFlags::CHECK,
    PositionFlags::MATE,
    PositionFlags::STALEMATE,
];

/// A piece placement gets a board bitmap in a segment where it occurs this often: below it,
/// intersecting its pieces' bitmaps is cheap (the running set soon holds a few positions), and
/// one bitmap per rare placement would cost more space than the rest of the index.
pub const MIN_BOARD_REPEATS: usize = 8;

impl BitmapKey {
    /// True for keys whose bitmap is over games rather than positions.
    pub fn is_game_key(&self) -> bool {
        self.kind() == KeyKind::Games
    }

    /// The bitmap of the positions whose move on `side` has `feature`.
    pub fn move_feature(side: MoveSide, feature: MoveFeature) -> Self {
        Self::Move(move_bit(side, feature.bit()))
    }

    /// The marker of a segment with move-feature bitmaps.
    pub const MOVES_MARKER: Self = Self::Move(MoveFeature::MARKER);

    /// The board-index key of a piece placement.
    pub fn board(board: &Bitboards) -> Self {
        Self::Board(board.board_hash() >> 8)
    }

    /// The flag bitmap key of one flag.
    pub fn flag(flag: PositionFlags) -> Self {
        Self::Flag(flag.0.trailing_zeros() as u8)
    }

    /// The key of the games with a position carrying `flag` on `line`, with `side` to move
    /// there (`None`: either side).
    pub fn flag_games(flag: PositionFlags, line: GameLine, side: Option<Color>) -> Self {
        Self::FlagGames(flag.0.trailing_zeros() as u8, line, side)
    }

    /// Which group of bitmaps it belongs to, for reports of what each costs.
    pub fn kind(self) -> KeyKind {
        match self {
            Self::Piece(..) => KeyKind::Pieces,
            Self::Flag(_) => KeyKind::Flags,
            Self::Material(_) => KeyKind::Material,
            Self::Move(b) if b < 32 => KeyKind::LastMove,
            Self::Move(_) => KeyKind::NextMoves,
            Self::Result(_)
            | Self::ResultTag(_)
            | Self::Year(_)
            | Self::YearOutside
            | Self::Eco(_)
            | Self::EloBand(..)
            | Self::EloOutside(_)
            | Self::TagValue(_)
            | Self::FlagGames(..) => KeyKind::Games,
            Self::Board(_) => KeyKind::Boards,
            Self::BoardIndex(_) => KeyKind::BoardIndex,
        }
    }

    /// A sortable 64-bit encoding: kind in the top byte.
    pub fn to_u64(self) -> u64 {
        let (kind, v): (u64, u64) = match self {
            Self::Piece(c, r, s) => (1, (c as u64) << 9 | (r as u64) << 6 | u64::from(s)),
            Self::Flag(b) => (2, u64::from(b)),
            Self::FlagGames(b, line, side) => (
                2,
                FLAG_GAMES | side_bits(side) << 10 | (line as u64) << 8 | u64::from(b),
            ),
            Self::Material(m) => (3, m.0),
            Self::Result(r) => (4, r as u64),
            Self::ResultTag(r) => (4, RESULT_TAG | r as u64),
            Self::Year(y) => (5, u64::from(y)),
            Self::YearOutside => (5, DIFFERS),
            Self::Eco(e) => (6, u64::from(e)),
            Self::EloBand(c, b) => (7, (c as u64) << 16 | u64::from(b)),
            Self::EloOutside(c) => (7, DIFFERS | (c as u64) << 16),
            Self::TagValue(v) => (8, u64::from(v)),
            Self::Move(b) => (9, u64::from(b)),
            Self::Board(h) => (10, h & ((1 << 56) - 1)),
            Self::BoardIndex(part) => (11, u64::from(part)),
        };
        kind << 56 | v
    }

    /// Inverse of [`BitmapKey::to_u64`].
    pub fn from_u64(x: u64) -> Option<Self> {
        let v = x & ((1 << 56) - 1);
        Some(match x >> 56 {
            1 => Self::Piece(
                Color::from_white(v >> 9 & 1 == 1),
                Role::try_from((v >> 6) & 7).ok()?,
                Square::new((v & 63) as u32),
            ),
            2 if v & FLAG_GAMES != 0 => Self::FlagGames(
                v as u8,
                match v >> 8 & 3 {
                    0 => GameLine::Main,
                    1 => GameLine::Anywhere,
                    _ => return None,
                },
                match v >> 10 & 0x3f {
                    0 => None,
                    1 => Some(Color::White),
                    2 => Some(Color::Black),
                    _ => return None,
                },
            ),
            2 => Self::Flag(v as u8),
            3 => Self::Material(MaterialSignature(v)),
            4 if v & RESULT_TAG != 0 => Self::ResultTag(GameResult::from_u8(v as u8)),
            4 => Self::Result(GameResult::from_u8(v as u8)),
            5 if v == DIFFERS => Self::YearOutside,
            5 => Self::Year(u16::try_from(v).ok()?),
            6 => Self::Eco(v as u16),
            7 if v & DIFFERS != 0 => Self::EloOutside(Color::from_white(v >> 16 & 1 == 1)),
            7 => Self::EloBand(Color::from_white(v >> 16 & 1 == 1), v as u16),
            8 => Self::TagValue(u32::try_from(v).ok()?),
            9 => Self::Move(u8::try_from(v).ok().filter(|&b| b < 64)?),
            10 => Self::Board(v),
            11 => Self::BoardIndex(u32::try_from(v).ok()?),
            _ => return None,
        })
    }
}

/// Marks a [`BitmapKey::FlagGames`] among the flag keys (after every position flag's).
const FLAG_GAMES: u64 = 0x1_0000;

/// A [`BitmapKey::FlagGames`]'s side in its key: 0 for either side, so that the keys written
/// before there were sided ones keep their meaning.
fn side_bits(side: Option<Color>) -> u64 {
    match side {
        None => 0,
        Some(Color::White) => 1,
        Some(Color::Black) => 2,
    }
}

/// Marks a [`BitmapKey::ResultTag`] among the result keys.
const RESULT_TAG: u64 = 0x100;

/// Marks [`BitmapKey::YearOutside`] and [`BitmapKey::EloOutside`] among the year and Elo keys:
/// past every value, so a range of values is a run of keys without them.
const DIFFERS: u64 = 1 << 17;

/// The bit of a move-feature bitmap key: reaching features first, leaving ones from 32.
pub fn move_bit(side: MoveSide, feature_bit: u8) -> u8 {
    match side {
        MoveSide::Reached => feature_bit,
        MoveSide::Leaving => 32 + feature_bit,
    }
}
