//! `cqldb cql`: run a CQL query over a PGN file or a database.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use cqldb::cql::{CqlRun, MatchFormat, Source, run as run_query};
use cqldb_indexer::Input;

/// The reference program's other options (`-player X`, `-flipcolor`, `-quiet`, ...): the
/// metadata ones add filters to the query's body, the transforms wrap it, the rest set what
/// its header would.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ReferenceOptions {
    /// Only games where either player's name contains NAME.
    #[arg(long)]
    pub player: Option<String>,
    /// Only games where White's name contains NAME.
    #[arg(long)]
    pub white: Option<String>,
    /// Only games where Black's name contains NAME.
    #[arg(long)]
    pub black: Option<String>,
    /// Only games whose Event contains TEXT.
    #[arg(long)]
    pub event: Option<String>,
    /// Only games whose Site contains TEXT.
    #[arg(long)]
    pub site: Option<String>,
    /// Only games of year N (to M).
    #[arg(long, num_args = 1..=2)]
    pub year: Vec<i64>,
    /// Only games with this result (1-0, 0-1, 1/2-1/2).
    #[arg(long)]
    pub result: Option<String>,
    /// Only positions whose board is this FEN board (CQL's wildcards allowed).
    #[arg(long)]
    pub fen: Option<String>,
    /// The query under `flip` (all eight symmetries of the board).
    #[arg(long)]
    pub flip: bool,
    /// The query under `flipcolor`.
    #[arg(long)]
    pub flipcolor: bool,
    /// The query under `flipvertical`.
    #[arg(long)]
    pub flipvertical: bool,
    /// The query under `fliphorizontal`.
    #[arg(long)]
    pub fliphorizontal: bool,
    /// The query under `rotate90`.
    #[arg(long)]
    pub rotate90: bool,
    /// The query under `rotate45`.
    #[arg(long)]
    pub rotate45: bool,
    /// The query under `shift`.
    #[arg(long)]
    pub shift: bool,
    /// The query under `shifthorizontal`.
    #[arg(long)]
    pub shifthorizontal: bool,
    /// The query under `shiftvertical`.
    #[arg(long)]
    pub shiftvertical: bool,
    /// The query under `reversecolor`.
    #[arg(long)]
    pub reversecolor: bool,
    /// No automatic comments (the header's `quiet`).
    #[arg(long)]
    pub quiet: bool,
    /// Keep the comments of filters that finally fail (no smart comments).
    #[arg(long)]
    pub alwayscomment: bool,
    /// No `Game number N` comment in the output.
    #[arg(long)]
    pub noheader: bool,
    /// `settag` filters set nothing.
    #[arg(long)]
    pub nosettag: bool,
    /// Bind variable X to V (a number if V reads as one) at each game's start.
    #[arg(long, num_args = 2, value_names = ["X", "V"])]
    pub assign: Vec<String>,
    /// One thread (`-s`).
    #[arg(long, short = 's')]
    pub singlethreaded: bool,
    /// Threads evaluating games (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// The directory `readfile` and `writefile` may use (they use no other).
    #[arg(long, value_name = "DIR")]
    pub files: Option<PathBuf>,
    /// In a CQL 3 list file, skip each game's start position as the CQL 3 standard did (by
    /// default it is examined, as Scidb and CQL 6 do).
    #[arg(long)]
    pub cql3_skip_initial: bool,
    /// Print the program's version and the CQL language version it reads, then stop.
    #[arg(long)]
    pub version: bool,
    /// The reference program's progress mark every N games: accepted for its scripts; the
    /// progress bar on the standard error shows how far a run is.
    #[arg(long, value_name = "N")]
    pub lineincrement: Option<u64>,
    /// Also list the matching games' numbers (on the standard output, or the standard error
    /// when the games go there).
    #[arg(long)]
    pub showmatches: bool,
}

impl ReferenceOptions {
    /// The body filters the metadata options stand for.
    fn preamble(&self) -> anyhow::Result<String> {
        let quoted = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        // The text is searched for as it is: CQL refuses a string that reads as a pattern
        // after `player` (`C+`), so such a one is written with `in`; `in player` alone would
        // read White's name only, so either player's name is searched in turn.
        let search = |filter: &str, text: &str| {
            let t = quoted(text);
            if cqldb_planner::filter::tag_search::implicit_search_allowed(text) {
                format!("{filter} {t}")
            } else if filter == "player" {
                format!("{{{t} in player white or {t} in player black}}")
            } else {
                format!("{t} in {filter}")
            }
        };
        let mut out = Vec::new();
        if let Some(p) = &self.player {
            out.push(search("player", p));
        }
        if let Some(p) = &self.white {
            out.push(search("player white", p));
        }
        if let Some(p) = &self.black {
            out.push(search("player black", p));
        }
        if let Some(e) = &self.event {
            out.push(search("event", e));
        }
        if let Some(s) = &self.site {
            out.push(search("site", s));
        }
        match self.year[..] {
            [] => {}
            [y] => out.push(format!("year == {y}")),
            [lo, hi, ..] => out.push(format!("year >= {lo} year <= {hi}")),
        }
        if let Some(r) = &self.result {
            if !matches!(r.as_str(), "1-0" | "0-1" | "1/2-1/2") {
                return Err(
                    cqldb::Usage(format!("-result takes 1-0, 0-1 or 1/2-1/2, not '{r}'")).into(),
                );
            }
            out.push(format!("result {r}"));
        }
        if let Some(f) = &self.fen {
            out.push(format!("fen {}", quoted(f)));
        }
        Ok(out.join("\n"))
    }

    /// The transform the options wrap the query in, if any (one at most).
    fn transform(&self) -> anyhow::Result<Option<cqldb_planner::ast::TransformKind>> {
        use cqldb_planner::ast::TransformKind as T;
        let chosen: Vec<T> = [
            (self.flip, T::Flip),
            (self.flipcolor, T::FlipColor),
            (self.flipvertical, T::FlipVertical),
            (self.fliphorizontal, T::FlipHorizontal),
            (self.rotate90, T::Rotate90),
            (self.rotate45, T::Rotate45),
            (self.shift, T::Shift),
            (self.shifthorizontal, T::ShiftHorizontal),
            (self.shiftvertical, T::ShiftVertical),
            (self.reversecolor, T::ReverseColor),
        ]
        .into_iter()
        .filter_map(|(on, t)| on.then_some(t))
        .collect();
        match chosen[..] {
            [] => Ok(None),
            [t] => Ok(Some(t)),
            _ => Err(cqldb::Usage("give at most one transform option".into()).into()),
        }
    }
}

/// The query and how it runs, as `cql` and `explain` both take them (the reference program's
/// single-dash names are accepted too).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct QueryArgs {
    /// The .cql file (optional with --cql).
    pub file: Option<PathBuf>,
    /// Filters added to the query body (`-cql "..."`).
    #[arg(long)]
    pub cql: Option<String>,
    /// PGN input read on the fly (plain, .zst, .gz, .bz2, - for stdin).
    #[arg(long, short = 'i', alias = "input")]
    pub pgn: Option<String>,
    /// Database to query instead.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Evaluate every game, using no index scan (the baseline of planned runs).
    #[arg(long)]
    pub full_scan: bool,
    /// Visit variations too.
    #[arg(long)]
    pub variations: bool,
    /// Visit the main line only (overrides the header).
    #[arg(long)]
    pub mainline: bool,
    /// Only positions on the virtual main line (implies --variations).
    #[arg(long)]
    pub virtualmainline: bool,
    /// Only games numbered N (to M).
    #[arg(long, short = 'g', num_args = 1..=2)]
    pub gamenumber: Vec<i64>,
    /// Output a game only if N (to M) positions match.
    #[arg(long, num_args = 1..=2)]
    pub matchcount: Vec<i64>,
    /// No annotations in the output.
    #[arg(long)]
    pub silent: bool,
    /// Comment put after matched positions (default CQL).
    #[arg(long)]
    pub matchstring: Option<String>,
    #[command(flatten)]
    pub extra: ReferenceOptions,
}

/// `--format`: the executor's names of its match formats.
pub fn parse_format(s: &str) -> Result<MatchFormat, String> {
    s.parse()
}

/// Options of `cqldb cql` and `cqldb explain`.
pub struct Args {
    pub query: QueryArgs,
    pub output: Option<PathBuf>,
    /// Count only: no output file.
    pub count: bool,
    pub format: MatchFormat,
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

pub fn run(args: Args) -> Result<ExitCode> {
    let a = &args.query;
    if a.extra.version {
        outln!("cqldb {} (reads CQL 6.2)", env!("CARGO_PKG_VERSION"));
        return Ok(ExitCode::SUCCESS);
    }
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
    let preamble = a.extra.preamble()?;
    if !preamble.is_empty() {
        query.push('\n');
        query.push_str(&preamble);
    }
    let threads = if a.extra.singlethreaded {
        Some(1)
    } else {
        a.extra.threads
    };
    if let Some(n) = threads {
        // The first use of the pool: it has not been built yet.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n as usize)
            .build_global();
    }
    // A malformed query is reported first, at its span: its header's input and output cannot
    // be read either, and "no input" would hide the real fault.
    let assign: Vec<(String, String)> = a
        .extra
        .assign
        .chunks(2)
        .map(|p| (p[0].clone(), p.get(1).cloned().unwrap_or_default()))
        .collect();
    let options = cqldb::cql::QueryOptions {
        transform: a.extra.transform()?,
        quiet: a.extra.quiet,
        always_comment: a.extra.alwayscomment,
        no_game_header: a.extra.noheader,
        no_settag: a.extra.nosettag,
        assign,
        file_dir: a.extra.files.clone(),
        cql3_skip_initial: a.extra.cql3_skip_initial,
    };
    let parsed = match cqldb::cql::parse_query(&query, &name, &options) {
        Ok(q) => q,
        Err(report) => {
            errln!("{report}");
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
    let output = if args.count || args.explain {
        None
    } else {
        Some(
            args.output
                .clone()
                .or_else(|| parsed.header.output.as_ref().map(PathBuf::from))
                .unwrap_or_else(|| default_output(a.file.as_deref(), args.format)),
        )
    };
    if let Some(out) = &output {
        refuse_unsafe_output(out, &source, a.file.as_deref())?;
    }
    let run = CqlRun {
        query,
        query_name: name,
        prepared: Some(parsed),
        pages: source.pages(),
        source,
        output: output.clone(),
        format: args.format,
        variations: a.variations || a.virtualmainline,
        mainline: a.mainline,
        gamenumber: range(&a.gamenumber),
        matchcount: range(&a.matchcount),
        silent: a.silent,
        matchstring: a.matchstring.clone(),
        full_scan: a.full_scan,
        analyze: args.analyze,
        positions: cqldb::cql::KeptPositions::None,
        options,
    };
    if args.explain && !args.analyze {
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
    let speed = if summary.positions == 0 || secs < 0.001 {
        String::new()
    } else {
        format!(
            ": {:.0} games/s, {:.1} M positions/s",
            summary.games as f64 / secs,
            summary.positions as f64 / secs / 1e6
        )
    };
    errln!(
        "{} of {} ({}) in {:.2} s{speed}{written}",
        super::count_of(summary.matched.len() as u64, "match"),
        super::count_of(summary.games, "game"),
        super::count_of(summary.positions, "position"),
        secs,
    );
    if args.explain
        && let Some(plan) = &summary.plan
    {
        out!("{}", cqldb::cql::explain(&run, plan, Some(&summary.stats))?);
        outln!(
            "Total: {} matching games, {:.2} ms",
            summary.matched.len(),
            secs * 1e3
        );
    } else if args.count {
        outln!("{}", summary.matched.len());
    }
    if a.extra.showmatches {
        let to_stdout = output.as_ref().is_none_or(|p| p.as_os_str() != "-");
        for n in summary.matched.iter() {
            if to_stdout {
                outln!("{n}");
            } else {
                errln!("{n}");
            }
        }
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
