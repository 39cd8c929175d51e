//! What a run makes of each selected game, as a trait: PGN as the reference program writes it,
//! a JSON or CSV row, or — for SQL's `cql()` — no text, only the matched positions. The
//! [`crate::sink::Sink`] calls it on the worker thread that evaluated the game and writes the
//! bytes in input order, so the binary, SQL and the tests consume one stream of matches; a new
//! consumer is a new implementation, not a new branch in the sink.

use std::sync::Arc;

use anyhow::Result;

use crate::output::{OutputOptions, write_game};
use crate::{Game, GameMatch};

/// How matching games are written.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum MatchFormat {
    /// PGN, as the reference CQL program writes it.
    #[default]
    Pgn,
    /// One JSON object per matching game and line (number, roster tags, the matched
    /// positions with ply, FEN and SAN).
    Json,
    /// One CSV row per matching game, with a header line.
    Csv,
}

impl MatchFormat {
    /// The names the formats are asked for by.
    pub const NAMES: [&'static str; 3] = ["pgn", "json", "csv"];

    /// The output that writes this format.
    pub fn output(self) -> Arc<dyn MatchOutput> {
        match self {
            MatchFormat::Pgn => Arc::new(PgnGames),
            MatchFormat::Json => Arc::new(JsonRows),
            MatchFormat::Csv => Arc::new(CsvRows),
        }
    }
}

impl std::str::FromStr for MatchFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "pgn" => Ok(Self::Pgn),
            "json" => Ok(Self::Json),
            "csv" => Ok(Self::Csv),
            other => Err(format!(
                "unknown match format '{other}' (one of {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// How a selected game becomes output.
pub trait MatchOutput: Send + Sync {
    /// Written once before the first game (CSV's header row).
    fn header(&self) -> Option<&'static str> {
        None
    }

    /// Appends the bytes of one selected game to `out`.
    fn encode(
        &self,
        out: &mut Vec<u8>,
        game: &Game,
        m: &GameMatch,
        opts: &OutputOptions,
    ) -> Result<()>;

    /// Keep each selected game's matched positions in the run's summary.
    fn keeps_positions(&self) -> bool {
        false
    }
}

/// PGN, as the reference CQL program writes it.
pub struct PgnGames;

impl MatchOutput for PgnGames {
    fn encode(
        &self,
        out: &mut Vec<u8>,
        game: &Game,
        m: &GameMatch,
        opts: &OutputOptions,
    ) -> Result<()> {
        Ok(write_game(out, game, m, opts)?)
    }
}

/// One JSON object per game and line.
pub struct JsonRows;

impl MatchOutput for JsonRows {
    fn encode(
        &self,
        out: &mut Vec<u8>,
        game: &Game,
        m: &GameMatch,
        _opts: &OutputOptions,
    ) -> Result<()> {
        Ok(crate::rows::write_json_row(out, game, m)?)
    }
}

/// One CSV row per game, after a header row.
pub struct CsvRows;

impl MatchOutput for CsvRows {
    fn header(&self) -> Option<&'static str> {
        Some(crate::rows::CSV_HEADER)
    }

    fn encode(
        &self,
        out: &mut Vec<u8>,
        game: &Game,
        m: &GameMatch,
        _opts: &OutputOptions,
    ) -> Result<()> {
        Ok(crate::rows::write_csv_row(out, game, m)?)
    }
}

/// No text: the matched positions of each selected game, kept in the summary (SQL's `cql()`
/// table is built from them).
pub struct MatchedPositions;

impl MatchOutput for MatchedPositions {
    fn encode(
        &self,
        _out: &mut Vec<u8>,
        _game: &Game,
        _m: &GameMatch,
        _opts: &OutputOptions,
    ) -> Result<()> {
        Ok(())
    }

    fn keeps_positions(&self) -> bool {
        true
    }
}
