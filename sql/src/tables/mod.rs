//! The five tables: their columns, and how a chunk of decoded games becomes one record batch
//! of a table with only the asked-for columns computed (a `fen` or a SAN is dear; a query that
//! does not select it does not pay for it).
//!
//! Each table's file names its columns with their types (the schema `cargo doc` shows) and
//! builds each column from its rows; the rows of a chunk are enumerated once per batch.

pub mod comments;
pub mod games;
pub mod indexed_games;
pub mod moves;
pub mod positions;
pub mod tags;

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, Int64Array, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::decode::Decoded;
use crate::selection::Selection;

/// One of the tables.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    Games,
    Tags,
    Positions,
    Moves,
    Comments,
}

impl Table {
    pub const ALL: [Table; 5] = [
        Table::Games,
        Table::Tags,
        Table::Positions,
        Table::Moves,
        Table::Comments,
    ];

    /// Its name in SQL.
    pub fn name(self) -> &'static str {
        match self {
            Table::Games => "games",
            Table::Tags => "tags",
            Table::Positions => "positions",
            Table::Moves => "moves",
            Table::Comments => "comments",
        }
    }

    /// Column names and types, in order.
    pub fn columns(self) -> &'static [(&'static str, DataType)] {
        match self {
            Table::Games => games::COLUMNS,
            Table::Tags => tags::COLUMNS,
            Table::Positions => positions::COLUMNS,
            Table::Moves => moves::COLUMNS,
            Table::Comments => comments::COLUMNS,
        }
    }

    /// Every column (all nullable: unknown Elos, years and parents are NULL).
    pub fn schema(self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns()
                .iter()
                .map(|(n, t)| Field::new(*n, t.clone(), true))
                .collect::<Vec<_>>(),
        ))
    }

    /// What of each game the columns `columns` need.
    pub fn reading(self, columns: &[usize]) -> crate::decode::Reading {
        use crate::decode::Reading;
        let text = match self {
            Table::Games => columns.iter().any(|&c| games::needs_text(c)),
            Table::Tags | Table::Comments => true,
            Table::Positions => false,
            Table::Moves => columns.iter().any(|&c| moves::needs_text(c)),
        };
        let positions = match self {
            Table::Games => columns.iter().any(|&c| games::needs_positions(c)),
            Table::Tags => false,
            Table::Positions | Table::Moves | Table::Comments => true,
        };
        match (positions, text) {
            (true, true) => Reading::PositionsAndText,
            (true, false) => Reading::Positions,
            // A `count(*)` of games still reads the text: it is the cheapest part.
            (false, _) => Reading::TextOnly,
        }
    }

    /// The columns `columns` of this table's rows of `games` that `keep` keeps.
    pub fn arrays(
        self,
        games: &[Decoded],
        keep: &Selection,
        columns: &[usize],
    ) -> anyhow::Result<Vec<ArrayRef>> {
        match self {
            Table::Games => Ok(games::arrays(games, columns)),
            Table::Tags => Ok(tags::arrays(games, columns)),
            Table::Positions => positions::arrays(games, keep, columns),
            Table::Moves => moves::arrays(games, keep, columns),
            Table::Comments => Ok(comments::arrays(games, columns)),
        }
    }
}

/// The tables with their columns, the table function and the chess functions, as `cqldb sql
/// --help` lists them.
pub fn help_text() -> String {
    let mut out = String::from("Tables (docs/sql.md says what each column holds):\n");
    for t in Table::ALL {
        let names: Vec<&str> = t.columns().iter().map(|(n, _)| *n).collect();
        out.push_str(&format!("  {}: {}\n", t.name(), names.join(", ")));
    }
    out.push_str(
        "Table function: cql('QUERY') -> game, position, ply (the positions a CQL query matches)\n\
         Functions: fen(game, position), san(game, position), material(game, position), \
         on_square(bitboard, 'e4')\n\
         Example: cqldb sql \"SELECT g.white, count(*) FROM cql('mate') m JOIN games g USING (game) \
         GROUP BY 1 ORDER BY 2 DESC LIMIT 10\" --db mydb",
    );
    out
}

pub(crate) fn ints(values: impl Iterator<Item = Option<i64>>) -> ArrayRef {
    Arc::new(values.collect::<Int64Array>())
}

pub(crate) fn u64s(values: impl Iterator<Item = Option<u64>>) -> ArrayRef {
    Arc::new(values.collect::<UInt64Array>())
}

pub(crate) fn bools(values: impl Iterator<Item = Option<bool>>) -> ArrayRef {
    Arc::new(values.collect::<BooleanArray>())
}

pub(crate) fn texts<S: AsRef<str>>(values: impl Iterator<Item = Option<S>>) -> ArrayRef {
    Arc::new(values.collect::<StringArray>())
}

/// A piece's letter, upper case for White (`N`, `p`).
pub(crate) fn piece_letter(role: shakmaty::Role, color: shakmaty::Color) -> char {
    let c = role.char();
    if color == shakmaty::Color::White {
        c.to_ascii_uppercase()
    } else {
        c
    }
}
