//! `cqldb errors`: every problem found while reading, as `file:line:col: game N: kind: message`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_storage::Database;

/// Lists the problems (of one game, or all).
pub fn run(db: &Path, game: Option<u64>) -> Result<ExitCode> {
    let database = Database::open(db)?;
    let mut n = 0;
    for (g, file, issue) in database.issues()? {
        if game.is_some_and(|want| want != g) {
            continue;
        }
        n += 1;
        outln!(
            "{}:{}:{}: game {g}: {}: {}",
            one_line(&file),
            issue.line,
            issue.column,
            issue.kind,
            one_line(&issue.message)
        );
    }
    if n == 0 {
        errln!("no errors");
    }
    Ok(ExitCode::SUCCESS)
}

/// `text` with its control characters escaped (`\n`, `\t`, `\u{1b}`), so every problem stays
/// one line of `file:line:col: ...` whatever a file name holds.
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into()
    } else {
        text.into()
    }
}
