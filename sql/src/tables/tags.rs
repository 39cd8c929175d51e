//! `tags`: `game`, `name`, `value` — every tag of every game, as written, in order.

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;

use super::{ints, texts};
use crate::decode::Decoded;

pub const COLUMNS: &[(&str, DataType)] = &[
    ("game", DataType::Int64),
    ("name", DataType::Utf8),
    ("value", DataType::Utf8),
];

pub fn arrays(games: &[Decoded], columns: &[usize]) -> Vec<ArrayRef> {
    let rows: Vec<(u64, &(String, String))> = games
        .iter()
        .flat_map(|d| d.game.tags.iter().map(move |t| (d.game.number, t)))
        .collect();
    columns
        .iter()
        .map(|&c| match c {
            0 => ints(rows.iter().map(|(g, _)| Some(*g as i64))),
            1 => texts(rows.iter().map(|(_, t)| Some(t.0.as_str()))),
            _ => texts(rows.iter().map(|(_, t)| Some(t.1.as_str()))),
        })
        .collect()
}
