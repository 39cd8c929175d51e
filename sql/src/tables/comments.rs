//! `comments`: `game`, `position`, `text` — every comment of the game text, at the position it
//! belongs to (the position the commented move reached; a comment opening a variation belongs
//! to the variation's first position), with `before` true for such an opening comment.

use cqldb_storage::CommentPlacement;
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;

use super::{bools, ints, texts};
use crate::decode::Decoded;

pub const COLUMNS: &[(&str, DataType)] = &[
    ("game", DataType::Int64),
    ("position", DataType::Int64),
    ("text", DataType::Utf8),
    ("before", DataType::Boolean),
];

pub fn arrays(games: &[Decoded], columns: &[usize]) -> Vec<ArrayRef> {
    let rows: Vec<(u64, &(u32, CommentPlacement, String))> = games
        .iter()
        .flat_map(|d| d.game.comments.iter().map(move |c| (d.game.number, c)))
        .collect();
    columns
        .iter()
        .map(|&c| match COLUMNS[c].0 {
            "game" => ints(rows.iter().map(|(g, _)| Some(*g as i64))),
            "position" => ints(rows.iter().map(|(_, c)| Some(i64::from(c.0)))),
            "text" => texts(rows.iter().map(|(_, c)| Some(c.2.as_str()))),
            _ => bools(
                rows.iter()
                    .map(|(_, c)| Some(c.1 == CommentPlacement::Before)),
            ),
        })
        .collect()
}
