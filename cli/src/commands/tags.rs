//! `cqldb tags`: games whose tags match a full-text query, listed with their roster tags.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_storage::Database;

/// Prints the matching games, one per line: number, White, Black, Date, Result, ECO
/// (tab-separated, after a header line); with `count`, only their number.
pub fn run(db: &Path, query: &str, count: bool) -> Result<ExitCode> {
    let database = Database::open(db)?;
    let games = match database.search_tags_once(query) {
        Ok(g) => g,
        Err(e) => {
            errln!("cqldb: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if count {
        writeln!(out, "{}", games.len())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "game\tWhite\tBlack\tDate\tResult\tECO")?;
    for &g in &games {
        let tags = cqldb_indexer::tags::scan_tags(&database.game_text(g)?);
        let tag = |name: &str| {
            tags.iter()
                .find(|(n, _)| n == name)
                .map_or("", |(_, v)| v.as_str())
                .replace(['\t', '\n'], " ")
        };
        writeln!(
            out,
            "{g}\t{}\t{}\t{}\t{}\t{}",
            tag("White"),
            tag("Black"),
            tag("Date"),
            tag("Result"),
            tag("ECO")
        )?;
    }
    out.flush()?;
    errln!("{}", super::count_of(games.len() as u64, "game"));
    Ok(ExitCode::SUCCESS)
}
