//! `cqldb cql`: run a CQL query over a PGN file or a database.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use cqldb::cql::{CqlRun, MatchFormat, Source, run as run_query};
use cqldb_indexer::Input;

/// Options of `cqldb cql` (the reference program's names are accepted too).
pub struct Args {
    pub file: Option<PathBuf>,
    pub cql: Option<String>,
    pub pgn: Option<String>,
    pub db: Option<PathBuf>,
    pub output: Option<PathBuf>,
    pub variations: bool,
    pub mainline: bool,
    pub virtualmainline: bool,
    pub gamenumber: Vec<i64>,
    pub matchcount: Vec<i64>,
    pub silent: bool,
    pub matchstring: Option<String>,
    /// Count only: no output file.
    pub count: bool,
    pub format: MatchFormat,
    /// No index scans (`--full-scan`).
    pub full_scan: bool,
    /// Print the plan instead of the games (`cqldb explain`); with `analyze`, after running
    /// it with every operator measured.
    pub explain: bool,
    pub analyze: bool,
}

/// Whether `-cql` text opens with a `cql(...)` header.
fn is_whole_query(text: &str) -> bool {
    text.trim_start()
        .strip_prefix("cql")
        .is_some_and(|rest| rest.trim_start().starts_with('('))
}

fn range(v: &[i64]) -> Option<(i64, i64)> {
    match v {
        [] => None,
        [a] => Some((*a, *a)),
        [a, b, ..] => Some((*a, *b)),
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    let (mut query, name) = match &a.file {
        Some(f) => (
            std::fs::read_to_string(f)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", f.display()))?,
            f.display().to_string(),
        ),
        None => ("cql()".to_owned(), "-cql".to_owned()),
    };
    match &a.cql {
        // A whole query with its header (`-cql 'cql(gamenumber 1 9) mate'`) stands alone.
        Some(extra) if a.file.is_none() && is_whole_query(extra) => query = extra.clone(),
        Some(extra) => {
            query.push('\n');
            query.push_str(extra);
        }
        None => {}
    }
    if a.virtualmainline {
        query.push_str("\nvirtualmainline");
    }
    // A malformed query is reported first, at its span: its header's input and output cannot
    // be read either, and "no input" would hide the real fault.
    let parsed = match cqldb_planner::parse(&query) {
        Ok(q) => q,
        Err(e) => {
            errln!("{:?}", e.report(&name, &query));
            return Ok(ExitCode::from(1));
        }
    };
    let source = match (&a.pgn, &a.db) {
        (Some(p), None) => Source::Pgn(Input::parse(p)),
        (None, Some(d)) => Source::Db(d.clone()),
        (Some(_), Some(_)) => {
            return Err(cqldb::Usage("give either --pgn/-i or --db, not both".into()).into());
        }
        (None, None) => {
            // The header's `input` is the last resort, as in the reference program.
            match &parsed.header.input {
                Some(i) => Source::Pgn(Input::parse(i)),
                None => {
                    return Err(cqldb::Usage(
                        "no input: give --pgn FILE (or -i FILE) or --db DIR".into(),
                    )
                    .into());
                }
            }
        }
    };
    // `-o`, else the header's `output`, else (as the reference program does) `NAME-out.pgn`
    // in the current directory, NAME being the query file's name without its path and
    // extension; `--count` writes nothing.
    let output = if a.count || a.explain {
        None
    } else {
        Some(
            a.output
                .clone()
                .or_else(|| parsed.header.output.as_ref().map(PathBuf::from))
                .unwrap_or_else(|| default_output(a.file.as_deref(), a.format)),
        )
    };
    if let Some(out) = &output {
        refuse_unsafe_output(out, &source, a.file.as_deref())?;
    }
    let run = CqlRun {
        query,
        query_name: name,
        source,
        output: output.clone(),
        format: a.format,
        variations: a.variations || a.virtualmainline,
        mainline: a.mainline,
        gamenumber: range(&a.gamenumber),
        matchcount: range(&a.matchcount),
        silent: a.silent,
        matchstring: a.matchstring.clone(),
        full_scan: a.full_scan,
        analyze: a.analyze,
    };
    if a.explain && !a.analyze {
        return match cqldb::cql::plan(&run).and_then(|plan| cqldb::cql::explain(&run, &plan, None))
        {
            Ok(text) => {
                out!("{text}");
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                errln!("{e:#}");
                Ok(ExitCode::from(1))
            }
        };
    }
    let t = Instant::now();
    let summary = match run_query(&run) {
        Ok(s) => s,
        Err(e) => {
            errln!("{e:#}");
            return Ok(ExitCode::from(1));
        }
    };
    for m in &summary.messages {
        outln!("{m}");
    }
    for (game, why) in summary.warnings.iter().take(20) {
        errln!("warning: game {game}: {why}");
    }
    if summary.warnings.len() > 20 {
        errln!("warning: ... and {} more", summary.warnings.len() - 20);
    }
    let secs = t.elapsed().as_secs_f64();
    let written = match &output {
        Some(p) if p.as_os_str() != "-" => format!(", written to {}", p.display()),
        _ => String::new(),
    };
    errln!(
        "{} matches of {} games ({} positions) in {:.2} s: {:.0} games/s, {:.1} M positions/s{written}",
        summary.matched.len(),
        summary.games,
        summary.positions,
        secs,
        summary.games as f64 / secs.max(1e-9),
        summary.positions as f64 / secs.max(1e-9) / 1e6
    );
    if a.explain
        && let Some(plan) = &summary.plan
    {
        out!("{}", cqldb::cql::explain(&run, plan, Some(&summary.stats))?);
        outln!(
            "Total: {} matching games, {:.2} ms",
            summary.matched.len(),
            secs * 1e3
        );
    } else if a.count {
        outln!("{}", summary.matched.len());
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses an output that would destroy an input (the PGN read, the query file) or a
/// database, before anything is opened for writing.
fn refuse_unsafe_output(
    out: &std::path::Path,
    source: &Source,
    query_file: Option<&std::path::Path>,
) -> Result<()> {
    use cqldb_storage::output_file::{ReadSource, refuse_unsafe_target};
    let mut reads = Vec::new();
    match source {
        Source::Pgn(Input::Path(p)) => reads.push(ReadSource::Path(p)),
        Source::Pgn(Input::Stdin) => reads.push(ReadSource::Stdin),
        Source::Pgn(Input::Static { .. }) | Source::Open(_) => {}
        Source::Db(d) => reads.push(ReadSource::Database(d)),
    }
    if let Some(q) = query_file {
        reads.push(ReadSource::Path(q));
    }
    refuse_unsafe_target(out, &reads).map_err(|r| cqldb::Usage(r.0).into())
}

/// `NAME-out.pgn` (or `.json`, `.csv`) for the query file `NAME.cql`; `cql-out.pgn` for a
/// query given only with `--cql`.
fn default_output(file: Option<&std::path::Path>, format: MatchFormat) -> PathBuf {
    let stem = file
        .and_then(|f| f.file_stem())
        .map_or_else(|| "cql".into(), |s| s.to_string_lossy().into_owned());
    let ext = match format {
        MatchFormat::Pgn => "pgn",
        MatchFormat::Json => "json",
        MatchFormat::Csv => "csv",
    };
    PathBuf::from(format!("{stem}-out.{ext}"))
}
