//! `cqldb tags`: games whose tags match a full-text query.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_storage::Database;

/// Prints the matching game numbers with White, Black and Date.
pub fn run(db: &Path, query: &str) -> Result<ExitCode> {
    let database = Database::open(db)?;
    let games = database.search_tags(query)?;
    for g in &games {
        let info = database.game_info(*g)?;
        println!("{g}\t{}:{}", info.file, info.line);
    }
    eprintln!("{} games", games.len());
    Ok(ExitCode::SUCCESS)
}
