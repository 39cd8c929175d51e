//! `positions`: one row per position of every game tree, variations included.
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `game`, `position` | BIGINT | the game and the CQL position id (0 = the initial position) |
//! | `ply`, `depth` | BIGINT | half-moves from the start; secondary moves on the path from the root |
//! | `parent`, `child_index` | BIGINT | the position before (NULL at the root); which of its moves led here (0 = the main move) |
//! | `move_number` | BIGINT | the full-move number, as in a FEN |
//! | `wtm` | BOOLEAN | White to move |
//! | `mate`, `stalemate`, `in_check`, `initial`, `terminal`, `mainline`, `variation`, `virtualmainline` | BOOLEAN | CQL's filters of those names (`in_check` is CQL's `check`: `check` is an SQL keyword) |
//! | `material` | TEXT | the pieces, White's then Black's, each side `K Q R B N P` in that order, a letter per piece: `KQRRBBNNPPPPPPPPkqrrbbnnpppppppp` at the start |
//! | `zobrist` | UBIGINT | the position's 64-bit Zobrist hash (shakmaty's keys, en passant only when legal) |
//! | `fen` | TEXT | the FEN (computed only when selected) |
//! | `white_pawns` … `black_king` | UBIGINT | the twelve piece bitboards (bit 0 = a1, bit 63 = h8) |

use cqldb_storage::{PositionFlags, PositionRecord};
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;
use shakmaty::{Color, Role};

use super::{bools, ints, texts, u64s};
use crate::decode::Decoded;
use crate::selection::Selection;

pub const COLUMNS: &[(&str, DataType)] = &[
    ("game", DataType::Int64),
    ("position", DataType::Int64),
    ("ply", DataType::Int64),
    ("depth", DataType::Int64),
    ("parent", DataType::Int64),
    ("child_index", DataType::Int64),
    ("move_number", DataType::Int64),
    ("wtm", DataType::Boolean),
    ("mate", DataType::Boolean),
    ("stalemate", DataType::Boolean),
    ("in_check", DataType::Boolean),
    ("initial", DataType::Boolean),
    ("terminal", DataType::Boolean),
    ("mainline", DataType::Boolean),
    ("variation", DataType::Boolean),
    ("virtualmainline", DataType::Boolean),
    ("material", DataType::Utf8),
    ("zobrist", DataType::UInt64),
    ("fen", DataType::Utf8),
    ("white_pawns", DataType::UInt64),
    ("white_knights", DataType::UInt64),
    ("white_bishops", DataType::UInt64),
    ("white_rooks", DataType::UInt64),
    ("white_queens", DataType::UInt64),
    ("white_king", DataType::UInt64),
    ("black_pawns", DataType::UInt64),
    ("black_knights", DataType::UInt64),
    ("black_bishops", DataType::UInt64),
    ("black_rooks", DataType::UInt64),
    ("black_queens", DataType::UInt64),
    ("black_king", DataType::UInt64),
];

/// The flag a boolean column shows.
pub fn flag_of(name: &str) -> Option<PositionFlags> {
    Some(match name {
        "wtm" => PositionFlags::WHITE_TO_MOVE,
        "mate" => PositionFlags::MATE,
        "stalemate" => PositionFlags::STALEMATE,
        "in_check" => PositionFlags::CHECK,
        "initial" => PositionFlags::INITIAL,
        "terminal" => PositionFlags::TERMINAL,
        "mainline" => PositionFlags::MAINLINE,
        "variation" => PositionFlags::VARIATION,
        "virtualmainline" => PositionFlags::VIRTUAL_MAINLINE,
        _ => return None,
    })
}

/// The bitboard column `name` (`white_knights`): its colour and piece type.
pub fn bitboard_of(name: &str) -> Option<(Color, Role)> {
    let (color, role) = name.split_once('_')?;
    let color = match color {
        "white" => Color::White,
        "black" => Color::Black,
        _ => return None,
    };
    let role = match role {
        "pawns" => Role::Pawn,
        "knights" => Role::Knight,
        "bishops" => Role::Bishop,
        "rooks" => Role::Rook,
        "queens" => Role::Queen,
        "king" => Role::King,
        _ => return None,
    };
    Some((color, role))
}

pub fn arrays(
    games: &[Decoded],
    keep: &Selection,
    columns: &[usize],
) -> anyhow::Result<Vec<ArrayRef>> {
    let rows: Vec<(u64, &PositionRecord, u32)> = games
        .iter()
        .flat_map(|d| {
            let g = &d.game;
            keep.positions(g)
                .map(move |id| (g.number, &g.positions[id as usize], id))
        })
        .collect();
    columns.iter().map(|&c| column(&rows, c)).collect()
}

fn column(rows: &[(u64, &PositionRecord, u32)], c: usize) -> anyhow::Result<ArrayRef> {
    let r = rows.iter();
    let name = COLUMNS[c].0;
    if let Some(flag) = flag_of(name) {
        return Ok(bools(r.map(|(_, p, _)| Some(p.flags.contains(flag)))));
    }
    if let Some((color, role)) = bitboard_of(name) {
        return Ok(u64s(
            r.map(|(_, p, _)| Some(p.board.by_piece(role.of(color)).0)),
        ));
    }
    Ok(match name {
        "game" => ints(r.map(|(g, _, _)| Some(*g as i64))),
        "position" => ints(r.map(|(_, _, id)| Some(i64::from(*id)))),
        "ply" => ints(r.map(|(_, p, _)| Some(i64::from(p.ply)))),
        "depth" => ints(r.map(|(_, p, _)| Some(i64::from(p.depth)))),
        "parent" => ints(r.map(|(_, p, _)| {
            (p.parent != cqldb_storage::NO_PARENT).then_some(i64::from(p.parent))
        })),
        "child_index" => ints(r.map(|(_, p, _)| Some(i64::from(p.child_index)))),
        "move_number" => ints(r.map(|(_, p, _)| Some(i64::from(p.move_number)))),
        "material" => texts(r.map(|(_, p, _)| Some(material(p)))),
        "zobrist" => u64s(r.map(|(_, p, _)| zobrist(p))),
        "fen" => texts(r.map(|(_, p, _)| Some(p.fen()))),
        other => anyhow::bail!("positions: no column {other}"),
    })
}

/// The readable material signature: White's pieces then Black's, `K Q R B N P` order.
pub fn material(p: &PositionRecord) -> String {
    let mut s = String::with_capacity(32);
    for color in [Color::White, Color::Black] {
        for role in [
            Role::King,
            Role::Queen,
            Role::Rook,
            Role::Bishop,
            Role::Knight,
            Role::Pawn,
        ] {
            let n = p.board.by_piece(role.of(color)).count();
            let letter = super::piece_letter(role, color);
            s.extend(std::iter::repeat_n(letter, n));
        }
    }
    s
}

fn zobrist(p: &PositionRecord) -> Option<u64> {
    use shakmaty::Position;
    use shakmaty::zobrist::Zobrist64;
    let pos = p.to_chess()?;
    let z: Zobrist64 = pos.zobrist_hash(shakmaty::EnPassantMode::Legal);
    Some(z.0)
}
