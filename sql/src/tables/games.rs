//! `games`: one row per game.
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `game` | BIGINT | 1-based number, as everywhere in cqldb |
//! | `event`, `site`, `date`, `round`, `white`, `black` | TEXT | the tags as written (NULL when absent) |
//! | `result` | TEXT | the `Result` tag as written (`1-0`, `0-1`, `1/2-1/2`, `*`; NULL when absent) |
//! | `white_elo`, `black_elo` | BIGINT | the ratings (NULL when absent or not a number) |
//! | `eco` | TEXT | the ECO code the `ECO` tag starts with (`B33`; `B33a` gives `B33`), NULL when it is none (the tag as written is in `tags`) |
//! | `year` | BIGINT | the year of the `Date` tag (NULL when unknown) |
//! | `plies` | BIGINT | moves of the main line |
//! | `positions` | BIGINT | positions of the whole tree, variations included |
//! | `variations` | BIGINT | variations (moves that are not a position's first move) |
//! | `source_file`, `source_line` | TEXT, BIGINT | where the game was read |
//! | `errors` | BIGINT | problems recorded while reading it |
//!
//! `result`, `year` and the Elos are read exactly as CQL's `result`, `year` and `elo` read them,
//! so the filters pushed down to CQL give the same games.

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;

pub use cqldb_storage::schema::eco_text;

use super::{ints, texts};
use crate::decode::Decoded;

pub const COLUMNS: &[(&str, DataType)] = &[
    ("game", DataType::Int64),
    ("event", DataType::Utf8),
    ("site", DataType::Utf8),
    ("date", DataType::Utf8),
    ("round", DataType::Utf8),
    ("white", DataType::Utf8),
    ("black", DataType::Utf8),
    ("result", DataType::Utf8),
    ("white_elo", DataType::Int64),
    ("black_elo", DataType::Int64),
    ("eco", DataType::Utf8),
    ("year", DataType::Int64),
    ("plies", DataType::Int64),
    ("positions", DataType::Int64),
    ("variations", DataType::Int64),
    ("source_file", DataType::Utf8),
    ("source_line", DataType::Int64),
    ("errors", DataType::Int64),
];

/// The tag a text column shows.
fn tag_of(column: usize) -> Option<&'static str> {
    Some(match COLUMNS[column].0 {
        "event" => "Event",
        "site" => "Site",
        "date" => "Date",
        "round" => "Round",
        "white" => "White",
        "black" => "Black",
        "result" => "Result",
        "eco" => "ECO",
        "white_elo" => "WhiteElo",
        "black_elo" => "BlackElo",
        "year" => "Date",
        _ => return None,
    })
}

pub fn needs_text(column: usize) -> bool {
    tag_of(column).is_some()
}

/// Whether a column is computed from the game's tree (the rest come from the game's columns
/// and text).
pub fn needs_positions(column: usize) -> bool {
    matches!(COLUMNS[column].0, "plies" | "variations")
}

pub fn arrays(games: &[Decoded], columns: &[usize]) -> Vec<ArrayRef> {
    columns.iter().map(|&c| column(games, c)).collect()
}

fn column(games: &[Decoded], c: usize) -> ArrayRef {
    let g = games.iter();
    let name = tag_of(c);
    let tag = move |d: &Decoded| -> Option<String> { d.game.tag(name?).map(str::to_owned) };
    match COLUMNS[c].0 {
        "game" => ints(g.map(|d| Some(d.game.number as i64))),
        "white_elo" | "black_elo" => {
            ints(g.map(|d| tag(d).as_deref().and_then(cqldb_storage::schema::rating)))
        }
        "year" => ints(g.map(|d| tag(d).as_deref().and_then(cqldb_storage::schema::date_year))),
        "eco" => texts(g.map(|d| {
            tag(d)
                .as_deref()
                .and_then(cqldb_storage::GameMeta::parse_eco)
                .and_then(eco_text)
        })),
        "plies" => ints(g.map(|d| Some(main_line_plies(d)))),
        "positions" => ints(g.map(|d| Some(i64::from(d.info.positions)))),
        "variations" => ints(g.map(|d| {
            Some(
                d.game
                    .positions
                    .iter()
                    .filter(|p| p.child_index > 0)
                    .count() as i64,
            )
        })),
        "source_file" => texts(g.map(|d| Some(d.info.file.as_str()))),
        "source_line" => ints(g.map(|d| Some(i64::from(d.info.line)))),
        "errors" => ints(g.map(|d| Some(i64::from(d.info.issues)))),
        // The rest are tags as written.
        _ => texts(g.map(tag)),
    }
}

fn main_line_plies(d: &Decoded) -> i64 {
    let main = d.game.positions.iter().filter(|p| p.depth == 0).count() as i64;
    (main - 1).max(0)
}
