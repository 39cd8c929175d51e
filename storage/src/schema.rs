//! The row types the index is made of: one [`PositionRecord`] per position of every game tree, one
//! [`GameMeta`] per game, plus the small value types they use ([`PositionFlags`], [`MoveCode`],
//! [`MaterialSignature`], [`Bitboards`]).
//!
//! These are the *logical* rows. On disk they are stored column by column (see `columns.rs`), and
//! a position's piece bitboards are encoded as the move from its parent (see `replay.rs`).

use shakmaty::{Bitboard, Board, ByColor, ByRole, CastlingSide, Color, Move, Piece, Role, Square};

/// Version of the on-disk layout. Bump on any change to a stored structure.
///
/// 4: each segment file's header records the segment's id, first game and first position (so
/// a lost catalog is rebuilt from the segments). A version-3 database reads the same; its
/// first writer (`index`, `repair`) stamps its segments and moves it to 4 (`migrate.rs`).
///
/// 5: new segments end with a version-2 table of parts (`segment/parts.rs`: the bitmap
/// directory checked by chunks, the segment's layout recorded). Segments of version 4 read as
/// before, and a version-4 database moves to 5 with its first writer, with no file changed:
/// the number is there so that an older build refuses the new segments by name instead of
/// calling them damaged.
///
/// 6: new segments store bitmaps packed (`bitmap_pack.rs`: varint runs, zstd when it pays),
/// told apart from roaring's format by their first byte. Older segments read as before, and a
/// version-5 database moves to 6 with its first writer, no file changed (as 4 → 5).
///
/// 7: packed bitmaps of more than 1,024 runs carry marks every 1,024 runs (`bitmap_pack.rs`,
/// two new tags), so that a reader of a few values decodes only the windows around them. Older
/// segments read as before, and a version-6 database moves to 7 with its first writer, no file
/// changed (as 5 → 6).
pub const SCHEMA_VERSION: u64 = 7;

/// The oldest layout this build reads (and migrates when it writes).
pub const OLDEST_READABLE_SCHEMA: u64 = 3;

/// Whether this build reads a database of layout `version`.
pub fn readable_schema(version: u64) -> bool {
    (OLDEST_READABLE_SCHEMA..=SCHEMA_VERSION).contains(&version)
}

/// Marker for "no parent" (the initial position of a game).
pub const NO_PARENT: u32 = u32::MAX;

/// Per-position boolean attributes, packed in 16 bits.
///
/// ```
/// use cqldb_storage::PositionFlags;
/// let f = PositionFlags::MAINLINE | PositionFlags::CHECK;
/// assert!(f.contains(PositionFlags::CHECK) && !f.contains(PositionFlags::MATE));
/// ```
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct PositionFlags(pub u16);

impl PositionFlags {
    /// White is to move.
    pub const WHITE_TO_MOVE: Self = Self(1);
    /// The root of the game tree.
    pub const INITIAL: Self = Self(1 << 1);
    /// No move follows.
    pub const TERMINAL: Self = Self(1 << 2);
    /// Depth 0: reached by primary moves only.
    pub const MAINLINE: Self = Self(1 << 3);
    /// Depth > 0.
    pub const VARIATION: Self = Self(1 << 4);
    /// On the virtual main line (see the reference page on game trees).
    pub const VIRTUAL_MAINLINE: Self = Self(1 << 5);
    /// The side to move is in check.
    pub const CHECK: Self = Self(1 << 6);
    /// Checkmate.
    pub const MATE: Self = Self(1 << 7);
    /// Stalemate.
    pub const STALEMATE: Self = Self(1 << 8);
    /// The line through this position was cut here by a malformed or illegal move.
    pub const TRUNCATED: Self = Self(1 << 9);

    /// Every flag with its name, in bit order (used for display and for the flag bitmaps).
    pub const ALL: [(Self, &'static str); 10] = [
        (Self::WHITE_TO_MOVE, "wtm"),
        (Self::INITIAL, "initial"),
        (Self::TERMINAL, "terminal"),
        (Self::MAINLINE, "mainline"),
        (Self::VARIATION, "variation"),
        (Self::VIRTUAL_MAINLINE, "virtualmainline"),
        (Self::CHECK, "check"),
        (Self::MATE, "mate"),
        (Self::STALEMATE, "stalemate"),
        (Self::TRUNCATED, "truncated"),
    ];

    /// True if every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Sets or clears the bits of `other`.
    pub fn set(&mut self, other: Self, on: bool) {
        if on {
            self.0 |= other.0;
        } else {
            self.0 &= !other.0;
        }
    }
}

impl std::ops::BitOr for PositionFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for PositionFlags {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

impl std::fmt::Debug for PositionFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for PositionFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (flag, name) in Self::ALL {
            if self.contains(flag) {
                if !first {
                    f.write_str(",")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// How the move that reached a position was special.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// An ordinary move, capture or promotion.
    Normal,
    /// Castling; `from` is the king's square and `to` the castling rook's square.
    Castle,
    /// An en-passant capture; `to` is the destination, the captured pawn stands behind it.
    EnPassant,
    /// A null move (`--`, `Z0`): from and to are the moving side's king square.
    Null,
}

/// The move that led to a position, packed in 32 bits: from, to, moving piece, captured piece,
/// promotion, kind. The root's code is [`MoveCode::NONE`].
///
/// ```
/// use cqldb_storage::{MoveCode, MoveKind};
/// use shakmaty::{Move, Role, Square};
/// let m = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
/// let code = MoveCode::from_move(&m);
/// assert_eq!(code.to(), Some(Square::E4));
/// assert_eq!(code.kind(), Some(MoveKind::Normal));
/// ```
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct MoveCode(pub u32);

impl MoveCode {
    /// No move: the code of every initial position.
    pub const NONE: Self = Self(0);

    fn pack(
        from: Square,
        to: Square,
        role: Role,
        capture: Option<Role>,
        promotion: Option<Role>,
        kind: MoveKind,
    ) -> Self {
        let kind = match kind {
            MoveKind::Normal => 0,
            MoveKind::Castle => 1,
            MoveKind::EnPassant => 2,
            MoveKind::Null => 3,
        };
        Self(
            u32::from(from)
                | u32::from(to) << 6
                | (role as u32) << 12
                | capture.map_or(0, |r| r as u32) << 15
                | promotion.map_or(0, |r| r as u32) << 18
                | kind << 21,
        )
    }

    /// Encodes a shakmaty move.
    pub fn from_move(m: &Move) -> Self {
        match *m {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => Self::pack(from, to, role, capture, promotion, MoveKind::Normal),
            Move::EnPassant { from, to } => Self::pack(
                from,
                to,
                Role::Pawn,
                Some(Role::Pawn),
                None,
                MoveKind::EnPassant,
            ),
            Move::Castle { king, rook } => {
                Self::pack(king, rook, Role::King, None, None, MoveKind::Castle)
            }
            Move::Put { role, to } => Self::pack(to, to, role, None, None, MoveKind::Normal),
        }
    }

    /// A null move by the side whose king stands on `king`.
    pub fn null(king: Square) -> Self {
        Self::pack(king, king, Role::King, None, None, MoveKind::Null)
    }

    /// True for the code of an initial position.
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// Origin square (king square for castling and null moves).
    pub fn from(self) -> Option<Square> {
        (!self.is_none()).then(|| Square::new(self.0 & 63))
    }

    /// Destination square (rook square for castling).
    pub fn to(self) -> Option<Square> {
        (!self.is_none()).then(|| Square::new((self.0 >> 6) & 63))
    }

    /// The piece type that moved.
    pub fn role(self) -> Option<Role> {
        Role::try_from((self.0 >> 12) & 7).ok()
    }

    /// The piece type captured, if any.
    pub fn capture(self) -> Option<Role> {
        Role::try_from((self.0 >> 15) & 7).ok()
    }

    /// The piece type promoted to, if any.
    pub fn promotion(self) -> Option<Role> {
        Role::try_from((self.0 >> 18) & 7).ok()
    }

    /// The kind of move, `None` for the initial position.
    pub fn kind(self) -> Option<MoveKind> {
        if self.is_none() {
            return None;
        }
        Some(match (self.0 >> 21) & 3 {
            0 => MoveKind::Normal,
            1 => MoveKind::Castle,
            2 => MoveKind::EnPassant,
            _ => MoveKind::Null,
        })
    }

    /// Back to a shakmaty move (`None` for the root and for null moves).
    pub fn to_move(self) -> Option<Move> {
        let (from, to, role) = (self.from()?, self.to()?, self.role()?);
        Some(match self.kind()? {
            MoveKind::Normal => Move::Normal {
                role,
                from,
                capture: self.capture(),
                to,
                promotion: self.promotion(),
            },
            MoveKind::Castle => Move::Castle {
                king: from,
                rook: to,
            },
            MoveKind::EnPassant => Move::EnPassant { from, to },
            MoveKind::Null => return None,
        })
    }
}

impl std::fmt::Debug for MoveCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for MoveCode {
    /// Long algebraic with the piece letter: `Ng1-f3`, `Pe5xd6ep`, `Ke1-h1castle`, `--`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (Some(from), Some(to), Some(role), Some(kind)) =
            (self.from(), self.to(), self.role(), self.kind())
        else {
            return f.write_str("-");
        };
        if kind == MoveKind::Null {
            return f.write_str("--");
        }
        let sep = if self.capture().is_some() { 'x' } else { '-' };
        write!(f, "{}{from}{sep}{to}", role.upper_char())?;
        if let Some(p) = self.promotion() {
            write!(f, "={}", p.upper_char())?;
        }
        match kind {
            MoveKind::Castle => f.write_str("castle"),
            MoveKind::EnPassant => f.write_str("ep"),
            _ => Ok(()),
        }
    }
}

/// Material on the board, kings left out: 4 bits per (colour, role) for pawn..queen, so two
/// positions have the same signature iff they have the same material.
///
/// ```
/// use cqldb_storage::MaterialSignature;
/// use shakmaty::Board;
/// let sig = MaterialSignature::of(&Board::new());
/// assert_eq!(sig.to_string(), "KQRRBBNNPPPPPPPPvKQRRBBNNPPPPPPPP");
/// ```
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct MaterialSignature(pub u64);

const SIG_ROLES: [Role; 5] = [
    Role::Queen,
    Role::Rook,
    Role::Bishop,
    Role::Knight,
    Role::Pawn,
];

impl MaterialSignature {
    /// The signature of a board (counts above 15 saturate).
    pub fn of(board: &Board) -> Self {
        let mut sig = 0u64;
        for color in Color::ALL {
            for role in SIG_ROLES {
                let n = (board.by_piece(Piece { color, role }).count() as u64).min(15);
                sig |= n << Self::shift(color, role);
            }
        }
        Self(sig)
    }

    fn shift(color: Color, role: Role) -> u32 {
        (color as u32) * 20 + (role as u32 - 1) * 4
    }

    /// Number of pieces of that colour and role (kings: always 1).
    pub fn count(self, color: Color, role: Role) -> u8 {
        if role == Role::King {
            return 1;
        }
        ((self.0 >> Self::shift(color, role)) & 15) as u8
    }

    /// The bits holding the count of that colour and role's pieces (none for kings, which
    /// are not counted): masks of several pieces are or-ed for [`Self::total`].
    pub fn count_bits(color: Color, role: Role) -> u64 {
        if role == Role::King {
            return 0;
        }
        15 << Self::shift(color, role)
    }

    /// The number of pieces counted in the bits of `mask` (see [`Self::count_bits`]), summed
    /// a word at a time: a material test reads every signature of a segment.
    pub fn total(self, mask: u64) -> u32 {
        let x = self.0 & mask;
        // Nibbles to bytes (each at most 15), then all bytes summed by one multiplication
        // (ten counts of at most 15 stay below 256).
        let bytes = (x & 0x0f0f_0f0f_0f0f_0f0f) + ((x >> 4) & 0x0f0f_0f0f_0f0f_0f0f);
        (bytes.wrapping_mul(0x0101_0101_0101_0101) >> 56) as u32
    }
}

impl std::fmt::Display for MaterialSignature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, color) in [Color::White, Color::Black].into_iter().enumerate() {
            if i == 1 {
                f.write_str("v")?;
            }
            f.write_str("K")?;
            for role in SIG_ROLES {
                for _ in 0..self.count(color, role) {
                    write!(f, "{}", role.upper_char())?;
                }
            }
        }
        Ok(())
    }
}

/// The piece placement as eight bitboards: by colour (white, black), then by role (pawn..king).
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, Debug)]
pub struct Bitboards(pub [u64; 8]);

impl Bitboards {
    /// Extracts the bitboards of a shakmaty board.
    pub fn of(board: &Board) -> Self {
        let mut out = [0u64; 8];
        out[0] = board.white().0;
        out[1] = board.black().0;
        for role in Role::ALL {
            out[1 + role as usize] = board.by_role(role).0;
        }
        Self(out)
    }

    /// The bitboards of a placement given piece by piece: white P N B R Q K, then black (the
    /// order of CQL's piece designators).
    pub fn from_pieces(pieces: &[u64; 12]) -> Self {
        let mut out = [0u64; 8];
        for (i, &squares) in pieces.iter().enumerate() {
            out[i / 6] |= squares;
            out[2 + i % 6] |= squares;
        }
        Self(out)
    }

    /// Squares holding pieces of this colour.
    pub fn by_color(&self, color: Color) -> Bitboard {
        Bitboard(self.0[color as usize ^ 1])
    }

    /// Squares holding pieces of this role.
    pub fn by_role(&self, role: Role) -> Bitboard {
        Bitboard(self.0[1 + role as usize])
    }

    /// Squares holding this piece.
    pub fn by_piece(&self, piece: Piece) -> Bitboard {
        self.by_color(piece.color) & self.by_role(piece.role)
    }

    /// A 64-bit hash of the piece placement alone (not the side to move, castling rights or
    /// en-passant square, which a `fen` pattern does not name): the key of the board index
    /// ([`crate::BitmapKey::Board`]). Each word goes through its own 128-bit multiply, folded
    /// (independent lanes, so the eight run side by side), and the sum through a bijective
    /// mixer, so boards differing in one square get unrelated hashes.
    pub fn board_hash(&self) -> u64 {
        const SALT: [u64; 8] = [
            0x243f_6a88_85a3_08d3,
            0x1319_8a2e_0370_7344,
            0xa409_3822_299f_31d0,
            0x082e_fa98_ec4e_6c89,
            0x4528_21e6_38d0_1377,
            0xbe54_66cf_34e9_0c6c,
            0xc0ac_29b7_c97c_50dd,
            0x3f84_d5b5_b547_0917,
        ];
        const MUL: [u64; 8] = [
            0x9e37_79b9_7f4a_7c15,
            0xbf58_476d_1ce4_e5b9,
            0x94d0_49bb_1331_11eb,
            0xff51_afd7_ed55_8ccd,
            0xc4ce_b9fe_1a85_ec53,
            0xa076_1d64_78bd_642f,
            0xe703_7ed1_a0b4_28db,
            0x8ebc_6af0_9c88_c6e3,
        ];
        let mut sum = 0u64;
        for i in 0..8 {
            let p = u128::from(self.0[i] ^ SALT[i]) * u128::from(MUL[i]);
            sum = sum.wrapping_add(p as u64 ^ (p >> 64) as u64);
        }
        mix64(sum)
    }

    /// Back to a shakmaty board; `None` if the bitboards overlap inconsistently.
    pub fn to_board(&self) -> Option<Board> {
        let by_role = ByRole {
            pawn: self.by_role(Role::Pawn),
            knight: self.by_role(Role::Knight),
            bishop: self.by_role(Role::Bishop),
            rook: self.by_role(Role::Rook),
            queen: self.by_role(Role::Queen),
            king: self.by_role(Role::King),
        };
        let by_color = ByColor {
            white: self.by_color(Color::White),
            black: self.by_color(Color::Black),
        };
        Board::try_from_bitboards(by_role, by_color).ok()
    }
}

/// A bijective 64-bit mixer (the finaliser of MurmurHash3): every input bit affects every
/// output bit.
fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// One position of a game tree, everything the index knows about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionRecord {
    /// Position id of the parent within the game ([`NO_PARENT`] for the root).
    pub parent: u32,
    /// Index of the move that reached this position among its parent's moves (0 = primary).
    pub child_index: u32,
    /// Number of moves from this position.
    pub children: u32,
    /// 0 at the root, parent's ply + 1.
    pub ply: u32,
    /// Number of secondary moves on the path from the root.
    pub depth: u32,
    /// Full-move number as in a FEN (from the game's FEN if it has one).
    pub move_number: u32,
    /// Boolean attributes.
    pub flags: PositionFlags,
    /// The move that led here.
    pub mv: MoveCode,
    /// Rooks that still have castling rights (standard and Chess960 alike).
    pub castling: Bitboard,
    /// En-passant square, only if an en-passant capture is legal.
    pub ep_square: Option<Square>,
    /// Half-move clock for the fifty-move rule.
    pub halfmove_clock: u32,
    /// 64-bit Zobrist hash (shakmaty's keys, legal en-passant mode), derived when a block is decoded;
    /// 0 in rows fresh from the indexer (nothing stores it).
    pub zobrist: u64,
    /// Material signature.
    pub material: MaterialSignature,
    /// Piece placement.
    pub board: Bitboards,
}

impl PositionRecord {
    /// The side to move.
    pub fn turn(&self) -> Color {
        Color::from_white(self.flags.contains(PositionFlags::WHITE_TO_MOVE))
    }

    /// A shakmaty setup for this position (for FEN output and re-validation).
    pub fn to_setup(&self) -> Option<shakmaty::Setup> {
        let mut setup = shakmaty::Setup::empty();
        setup.board = self.board.to_board()?;
        setup.turn = self.turn();
        setup.castling_rights = self.castling;
        setup.ep_square = self.ep_square;
        setup.halfmoves = self.halfmove_clock;
        setup.fullmoves = std::num::NonZeroU32::new(self.move_number.max(1))?;
        Some(setup)
    }

    /// The position, for move generation: its castling rights read as standard chess when
    /// they can be, else as Chess960.
    pub fn to_chess(&self) -> Option<shakmaty::Chess> {
        let setup = self.to_setup()?;
        [
            shakmaty::CastlingMode::Standard,
            shakmaty::CastlingMode::Chess960,
        ]
        .into_iter()
        .find_map(|mode| lenient_position(setup.clone(), mode).ok())
    }

    /// The position as FEN (castling in X-FEN/Shredder style only when needed).
    pub fn fen(&self) -> String {
        match self.to_setup().map(shakmaty::fen::Fen::try_from_setup) {
            Some(Ok(fen)) => fen.to_string(),
            Some(Err(lossy)) => lossy.ignore().to_string(),
            None => "<invalid board>".to_owned(),
        }
    }
}

/// Sets up a position as a composed study may need it: a stale en-passant square or castling
/// right is dropped, and more material than a game can reach or a check no last move could
/// give are accepted (move generation is sound on such boards). A missing king, pawns on
/// the back rank or the side not to move in check remain errors, described.
pub fn lenient_position(
    setup: shakmaty::Setup,
    mode: shakmaty::CastlingMode,
) -> std::result::Result<shakmaty::Chess, String> {
    // Each `ignore_*` takes its kind out of the error and keeps the rest, so they add up
    // (the error carries the position: large, but built only for a game's setup).
    #[allow(clippy::result_large_err)]
    setup
        .position::<shakmaty::Chess>(mode)
        .or_else(|e| e.ignore_invalid_ep_square())
        .or_else(|e| e.ignore_invalid_castling_rights())
        .or_else(|e| e.ignore_too_much_material())
        .or_else(|e| e.ignore_impossible_check())
        .map_err(|e| e.to_string())
}

/// Where a comment stands relative to its position's move.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CommentPlacement {
    /// After the move that reached the position (or, at the root, before the first move).
    After,
    /// Before the move that reached the position (a comment opening a variation).
    Before,
}

/// A comment, stored as a byte range of the game's original text (never copied twice).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CommentRef {
    /// Position id within the game.
    pub position: u32,
    /// Before or after the move.
    pub placement: CommentPlacement,
    /// Byte offset of the comment body (inside the braces) in the game text.
    pub start: u32,
    /// Length in bytes.
    pub len: u32,
}

/// A numeric annotation glyph on the move that reached a position.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NagRef {
    /// Position id within the game.
    pub position: u32,
    /// The NAG number (`$1` = 1; `!` is read as 1, `?` as 2, ...).
    pub nag: u8,
}

/// The result of a game from its `Result` tag (or termination marker).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum GameResult {
    /// `*` or missing.
    Unknown = 0,
    /// `1-0`.
    WhiteWins = 1,
    /// `0-1`.
    BlackWins = 2,
    /// `1/2-1/2`.
    Draw = 3,
}

impl GameResult {
    /// From the stored byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            1 => Self::WhiteWins,
            2 => Self::BlackWins,
            3 => Self::Draw,
            _ => Self::Unknown,
        }
    }

    /// From PGN text (`1-0`, `0-1`, `1/2-1/2`, anything else unknown).
    pub fn from_pgn(s: &str) -> Self {
        match s.trim() {
            "1-0" => Self::WhiteWins,
            "0-1" => Self::BlackWins,
            "1/2-1/2" | "½-½" => Self::Draw,
            _ => Self::Unknown,
        }
    }

    /// PGN spelling.
    pub fn as_pgn(self) -> &'static str {
        match self {
            Self::Unknown => "*",
            Self::WhiteWins => "1-0",
            Self::BlackWins => "0-1",
            Self::Draw => "1/2-1/2",
        }
    }
}

/// Game-level attributes that get bitmap indexes (parsed from the tags by the indexer).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GameMeta {
    /// Result.
    pub result: GameResult,
    /// Year from the `Date` tag, 0 if unknown.
    pub year: u16,
    /// ECO code as 1 + letter*100 + number (`A00` = 1, `E99` = 500), 0 if none.
    pub eco: u16,
    /// `WhiteElo`, 0 if none.
    pub white_elo: u16,
    /// `BlackElo`, 0 if none.
    pub black_elo: u16,
}

impl GameMeta {
    /// Packs the ECO code an ECO tag starts with, a letter A–E and two digits (`B33`, `B33a`;
    /// `None` if it does not start with one).
    pub fn parse_eco(s: &str) -> Option<u16> {
        match s.trim().as_bytes() {
            [l @ b'A'..=b'E', d1 @ b'0'..=b'9', d2 @ b'0'..=b'9', ..] => Some(
                1 + u16::from(l - b'A') * 100 + u16::from(d1 - b'0') * 10 + u16::from(d2 - b'0'),
            ),
            _ => None,
        }
    }

    /// The ECO code as text, if any.
    pub fn eco_string(&self) -> Option<String> {
        eco_text(self.eco)
    }
}

/// A packed ECO code (as in [`GameMeta::eco`]) as text: `B33`; `None` for 0 or past `E99`.
pub fn eco_text(code: u16) -> Option<String> {
    let v = code.checked_sub(1)?;
    (v < 500).then(|| format!("{}{:02}", char::from(b'A' + (v / 100) as u8), v % 100))
}

/// Width of an Elo band in the game bitmaps (`EloBand(c, 25)` = 2500..2599).
pub const ELO_BAND_WIDTH: u16 = 100;

/// The year a `Date` tag's value names, as queries read it: its first four characters as a
/// number (`"1851.06.21"` → 1851, `"-500.??.??"` → −500, `"????.??.??"` → none). The year
/// bitmaps hold it (not [`GameMeta::year`], which falls back to `EventDate`).
pub fn date_year(date: &str) -> Option<i64> {
    date.get(..4)?.parse().ok()
}

/// A rating tag's value (`WhiteElo`, `BlackElo`) as queries read it: the trimmed text as a
/// number. The rating bitmaps hold it (`"0"` too, which [`GameMeta::white_elo`] keeps as
/// none).
pub fn rating(value: &str) -> Option<i64> {
    value.trim().parse().ok()
}

/// Castling side helper used by the board replay.
pub(crate) fn castle_side(king: Square, rook: Square) -> CastlingSide {
    if rook.file() > king.file() {
        CastlingSide::KingSide
    } else {
        CastlingSide::QueenSide
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Summing counts a word at a time means summing them one by one.
        #[test]
        fn a_total_is_the_sum_of_its_counts(counts in proptest::collection::vec(0u64..16, 10), pick in 0u16..1024) {
            let sig = MaterialSignature(
                Color::ALL
                    .iter()
                    .flat_map(|&c| SIG_ROLES.iter().map(move |&r| (c, r)))
                    .zip(&counts)
                    .fold(0, |sig, ((c, r), &n)| sig | n << MaterialSignature::shift(c, r)),
            );
            let mut mask = 0;
            let mut sum = 0u32;
            for (i, (c, r)) in Color::ALL
                .iter()
                .flat_map(|&c| SIG_ROLES.iter().map(move |&r| (c, r)))
                .enumerate()
            {
                if pick >> i & 1 == 1 {
                    mask |= MaterialSignature::count_bits(c, r);
                    sum += u32::from(sig.count(c, r));
                }
            }
            proptest::prop_assert_eq!(sig.total(mask), sum);
            proptest::prop_assert_eq!(MaterialSignature::count_bits(Color::White, Role::King), 0);
        }
    }

    /// The board hash is part of the stored format: segments key their board bitmaps by it,
    /// so a changed function would silently leave every existing board bitmap unread (answers
    /// stay right through the fallback, but slow). Changing it needs a schema version.
    #[test]
    fn board_hash_is_pinned() {
        let start = Bitboards::of(&Board::new());
        assert_eq!(start.board_hash(), 12_930_055_283_092_196_085);
        assert_ne!(Bitboards::default().board_hash(), start.board_hash());
        let by_piece: [u64; 12] = std::array::from_fn(|i| {
            let color = Color::from_white(i < 6);
            start
                .by_piece(Piece {
                    color,
                    role: Role::ALL[i % 6],
                })
                .0
        });
        assert_eq!(Bitboards::from_pieces(&by_piece), start);
    }
}
