//! `cqldb show`: a game's original text, byte for byte.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_storage::Database;

/// Writes game `game` to stdout exactly as it was read.
pub fn run(db: &Path, game: u64) -> Result<ExitCode> {
    let database = Database::open(db)?;
    let text = database.game_text(game)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&text)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
