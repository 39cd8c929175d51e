//! `moves`: one row per move of every game tree, variations included, keyed by the position
//! the move leads to.
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `game`, `position`, `parent` | BIGINT | the game, the position the move reached, the position it was played from |
//! | `san`, `uci` | TEXT | the move (SAN with check marks; UCI, `0000` for a null move) |
//! | `from_square`, `to_square` | TEXT | as in UCI (castling: the king's squares) |
//! | `piece` | TEXT | the moving piece, upper case for White (`N`, `p`) |
//! | `capture` | BOOLEAN | the move captures |
//! | `captured` | TEXT | the captured piece (NULL if none) |
//! | `promotion` | TEXT | the piece promoted to (NULL if none) |
//! | `castling`, `en_passant`, `null_move` | BOOLEAN | the kind of move |
//! | `nags` | TEXT | the move's NAGs (`$1 $14`; NULL if none) |

use cqldb_storage::MoveKind;
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;
use shakmaty::{CastlingMode, Color};

use super::{bools, ints, piece_letter, texts};
use crate::decode::Decoded;
use crate::selection::Selection;
use cqldb_executor::Game;

pub const COLUMNS: &[(&str, DataType)] = &[
    ("game", DataType::Int64),
    ("position", DataType::Int64),
    ("parent", DataType::Int64),
    ("san", DataType::Utf8),
    ("uci", DataType::Utf8),
    ("from_square", DataType::Utf8),
    ("to_square", DataType::Utf8),
    ("piece", DataType::Utf8),
    ("capture", DataType::Boolean),
    ("captured", DataType::Utf8),
    ("promotion", DataType::Utf8),
    ("castling", DataType::Boolean),
    ("en_passant", DataType::Boolean),
    ("null_move", DataType::Boolean),
    ("nags", DataType::Utf8),
];

pub fn needs_text(column: usize) -> bool {
    COLUMNS[column].0 == "nags"
}

/// A move: its game, the position it reached and that position's parent.
struct Row<'g> {
    game: &'g Game,
    id: u32,
    parent: u32,
}

impl Row<'_> {
    fn code(&self) -> cqldb_storage::MoveCode {
        self.game.positions[self.id as usize].mv
    }

    fn mover(&self) -> Color {
        self.game.positions[self.parent as usize].turn()
    }

    fn uci(&self) -> Option<String> {
        let code = self.code();
        if code.kind() == Some(MoveKind::Null) {
            return Some("0000".into());
        }
        Some(code.to_move()?.to_uci(CastlingMode::Standard).to_string())
    }
}

pub fn arrays(
    games: &[Decoded],
    keep: &Selection,
    columns: &[usize],
) -> anyhow::Result<Vec<ArrayRef>> {
    let rows: Vec<Row<'_>> = games
        .iter()
        .flat_map(|d| {
            let g = &d.game;
            keep.positions(g).filter_map(move |id| {
                let parent = g.parent(id)?;
                Some(Row {
                    game: g,
                    id,
                    parent,
                })
            })
        })
        .collect();
    columns.iter().map(|&c| column(&rows, c)).collect()
}

fn column(rows: &[Row<'_>], c: usize) -> anyhow::Result<ArrayRef> {
    let r = rows.iter();
    Ok(match COLUMNS[c].0 {
        "game" => ints(r.map(|m| Some(m.game.number as i64))),
        "position" => ints(r.map(|m| Some(i64::from(m.id)))),
        "parent" => ints(r.map(|m| Some(i64::from(m.parent)))),
        "san" => texts(r.map(|m| cqldb_executor::rows::san_to(m.game, m.id))),
        "uci" => texts(r.map(Row::uci)),
        "from_square" => texts(r.map(|m| m.uci().map(|u| u.get(0..2).unwrap_or("").to_owned()))),
        "to_square" => texts(r.map(|m| m.uci().map(|u| u.get(2..4).unwrap_or("").to_owned()))),
        "piece" => texts(r.map(|m| {
            m.code()
                .role()
                .map(|role| piece_letter(role, m.mover()).to_string())
        })),
        "capture" => bools(r.map(|m| Some(m.code().capture().is_some()))),
        "captured" => texts(r.map(|m| {
            m.code()
                .capture()
                .map(|role| piece_letter(role, !m.mover()).to_string())
        })),
        "promotion" => texts(r.map(|m| {
            m.code()
                .promotion()
                .map(|role| piece_letter(role, m.mover()).to_string())
        })),
        "castling" => bools(r.map(|m| Some(m.code().kind() == Some(MoveKind::Castle)))),
        "en_passant" => bools(r.map(|m| Some(m.code().kind() == Some(MoveKind::EnPassant)))),
        "null_move" => bools(r.map(|m| Some(m.code().kind() == Some(MoveKind::Null)))),
        "nags" => texts(r.map(|m| {
            let nags: Vec<String> = m
                .game
                .nags
                .iter()
                .filter(|(p, _)| *p == m.id)
                .map(|(_, n)| format!("${n}"))
                .collect();
            (!nags.is_empty()).then(|| nags.join(" "))
        })),
        other => anyhow::bail!("moves: no column {other}"),
    })
}
