//! Running a CQL query over PGN or an index and writing the matching games.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use cqldb_executor::Engine;
use cqldb_executor::output::{OutputOptions, write_game};
use cqldb_indexer::Input;
use cqldb_storage::Database;

/// Where the games come from.
pub enum Source {
    /// A PGN input (file, compressed file or stdin), read on the fly.
    Pgn(Input),
    /// A cqldb database.
    Db(PathBuf),
}

/// A query run, with the reference program's options.
pub struct CqlRun {
    /// The query text (a whole `cql(...)` file).
    pub query: String,
    /// Name for diagnostics (file name or `-cql`).
    pub query_name: String,
    /// Games to read.
    pub source: Source,
    /// Output PGN (`None` = no output file).
    pub output: Option<PathBuf>,
    /// `-variations`
    pub variations: bool,
    /// `-mainline`
    pub mainline: bool,
    /// `-gamenumber N M`
    pub gamenumber: Option<(i64, i64)>,
    /// `-matchcount N M`
    pub matchcount: Option<(i64, i64)>,
    /// `-silent`
    pub silent: bool,
    /// `-matchstring S`
    pub matchstring: Option<String>,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct CqlSummary {
    /// Games read.
    pub games: u64,
    /// Numbers of the games written, in output order.
    pub matched: Vec<u64>,
    /// `message` output.
    pub messages: Vec<String>,
}

/// Parses the query (errors come back rendered with a caret) and runs it.
pub fn run(r: &CqlRun) -> Result<CqlSummary> {
    let mut query = cqldb_planner::parse(&r.query)
        .map_err(|e| anyhow!("{:?}", e.report(&r.query_name, &r.query)))?;
    if let Some(g) = r.gamenumber {
        query.header.gamenumber = Some(g);
    }
    if let Some(m) = r.matchcount {
        query.header.matchcount = Some(m);
    }
    if r.silent {
        query.header.silent = true;
    }
    if let Some(s) = &r.matchstring {
        query.header.matchstring = Some(s.clone());
    }
    if r.mainline {
        query.header.variations = false;
    }
    let opts = OutputOptions {
        matchstring: query
            .header
            .matchstring
            .clone()
            .unwrap_or_else(|| "CQL".to_owned()),
        silent: query.header.silent,
        quiet: query.header.quiet,
    };
    let mut engine = Engine::new(query, r.variations && !r.mainline);
    let variations = engine.variations;
    let mut out: Option<Box<dyn Write>> = match &r.output {
        None => None,
        Some(p) if p.as_os_str() == "-" => {
            Some(Box::new(std::io::BufWriter::new(std::io::stdout())))
        }
        Some(p) => Some(Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        ))),
    };
    let mut summary = CqlSummary::default();
    let mut visit = |game: cqldb_executor::Game| -> Result<()> {
        let m = engine.run_game(&game);
        summary.messages.extend(m.messages.iter().cloned());
        if m.selected {
            summary.matched.push(game.number);
            if let Some(w) = out.as_mut() {
                write_game(w.as_mut(), &game, &m, &opts)?;
            }
        }
        Ok(())
    };
    summary.games = match &r.source {
        Source::Pgn(input) => crate::games::pgn_games(input, variations, &mut visit)?,
        Source::Db(dir) => {
            let db = Database::open(dir)?;
            crate::games::db_games(&db, variations, true, &mut visit)?
        }
    };
    if let Some(w) = out.as_mut() {
        w.flush()?;
    }
    Ok(summary)
}
