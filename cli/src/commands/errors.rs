//! `cqldb errors`: every problem found while reading, as `file:line:col: game N: kind: message`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_storage::Database;

/// Lists the problems (of one game, or all).
pub fn run(db: &Path, game: Option<u64>) -> Result<ExitCode> {
    let database = Database::open(db)?;
    let mut n = 0;
    for (g, file, issue) in database.issues() {
        if game.is_some_and(|want| want != g) {
            continue;
        }
        n += 1;
        outln!(
            "{file}:{}:{}: game {g}: {}: {}",
            issue.line,
            issue.column,
            issue.kind,
            issue.message
        );
    }
    if n == 0 {
        errln!("no errors");
    }
    Ok(ExitCode::SUCCESS)
}
