//! The `cqldb` command: a thin shell over the library crates (argument parsing, progress bars,
//! output formatting). Everything it does can be done with the crates alone.

mod commands;

// Parser threads allocate game rows that the writer thread frees; glibc's per-thread arenas keep
// growing under that pattern, mimalloc does not (and is faster at it).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::PathBuf;

/// Lets mimalloc keep freed memory for five seconds before returning it, and for ingest keep it
/// for good and use 2 MiB pages and transparent huge pages.
///
/// Ingest frees and reallocates the same few hundred MiB of batch buffers all the time; returning
/// them to the OS soon (mimalloc's 10 ms default, and still at one second) made the kernel zero
/// fresh pages for 7-9 % of all CPU (perf). Five seconds still purged about 470 MiB over a
/// 21 M-position build for the kernel to zero again; kept for good, the build takes about 2 %
/// less CPU and peaks about 70 MiB higher, still flat with input size (BENCHMARKS.md,
/// twenty-fourth session). A query lives for milliseconds and touches little of each page:
/// there 2 MiB pages only cost their zeroing (writing 1,215 games took 85 ms with them, 76 ms
/// without). Environment variables (`MIMALLOC_*`) still win.
fn tune_allocator(ingest: bool) {
    // Option numbers of mimalloc v3's `mi_option_e` (libmimalloc-sys does not name these two).
    const ALLOW_LARGE_OS_PAGES: libmimalloc_sys::mi_option_t = 6;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // The C libraries (zstd) allocate through glibc, whose default of up to eight arenas per
    // core reserves 64-128 MiB of address space each: 6 of them on two cores, and a build
    // under `ulimit -v 1000000` failed an allocation at 170 MB of real use. Their allocations
    // are few (contexts are reused), so two arenas cost nothing measurable.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: a plain setter of glibc's allocator, called before any other thread exists.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, 2) };
    }
    #[cfg(target_os = "linux")]
    if ingest {
        // SAFETY: as in `lazy_arenas`.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0);
        }
    }
    for (option, var, value) in [
        (
            ALLOW_LARGE_OS_PAGES,
            "MIMALLOC_ALLOW_LARGE_OS_PAGES",
            std::ffi::c_long::from(ingest),
        ),
        (
            PURGE_DELAY,
            "MIMALLOC_PURGE_DELAY",
            if ingest { -1 } else { 5000 },
        ),
    ] {
        if std::env::var_os(var).is_none() {
            // SAFETY: plain setters of process-wide options, called before any other thread exists.
            unsafe { libmimalloc_sys::mi_option_set(option, value) };
        }
    }
}

/// No transparent huge pages for queries: mimalloc reserves (and, by default, commits) its
/// first arena before `main`, with huge pages advised, so each small allocation of a query's
/// threads brought a whole 2 MiB page in (a material count over 144 segments peaked at
/// 347 MB, 230 MB without). `tune_allocator` turns them back on for ingest.
fn lazy_arenas() {
    #[cfg(target_os = "linux")]
    // SAFETY: sets a flag of this process's memory map; no memory is touched.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

use clap::{Parser, Subcommand};

/// Index PGN game trees once, query them in milliseconds.
#[derive(Parser)]
#[command(name = "cqldb", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// One value, parsed once: the `cql` variant's many reference options cost nothing worth boxing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Build a database from PGN files (or append to an existing one).
    Index {
        /// PGN inputs: plain, .zst, .gz, .bz2, or - for stdin.
        #[arg(required = true)]
        inputs: Vec<String>,
        /// Database directory (created if missing).
        #[arg(long)]
        db: PathBuf,
        /// Cores the build runs on, and as many parser threads: the reader and the writer share
        /// them (default: all cores).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: Option<u64>,
        /// Positions per segment (bounds memory during the build).
        #[arg(long, default_value_t = 2_000_000, value_parser = clap::value_parser!(u64).range(1..))]
        segment_positions: u64,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Store the games of an input file this database already holds (same contents)
        /// again; by default such a file is said and left out.
        #[arg(long)]
        allow_duplicates: bool,
        /// Leave out files the database already holds (the default; kept for scripts).
        #[arg(long, hide = true, conflicts_with = "allow_duplicates")]
        skip_duplicates: bool,
        /// Do not merge segments after the append (by default, whenever four adjacent
        /// segments of one size tier exist they become one, up to a full segment's
        /// positions; `cqldb optimize` merges further).
        #[arg(long)]
        no_merge: bool,
    },
    /// Merge the database's segments into as few as the size cap allows (fewer segments:
    /// faster queries, less memory at open). Safe to stop at any point; readers keep working.
    Optimize {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// Encoder threads (default: all cores).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: Option<u64>,
        /// The largest merged segment, in positions (default 8,000,000): a merged segment
        /// is built in memory, about 90 bytes a position at its peak.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_positions: Option<u64>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run a CQL 6.2 query over a PGN file or a database; matching games are written as PGN.
    ///
    /// The reference program's single-dash options work too: -i, -o, -cql, -variations,
    /// -mainline, -virtualmainline, -gamenumber, -matchcount, -silent, -matchstring.
    Cql {
        #[command(flatten)]
        query: commands::cql::QueryArgs,
        /// Output file (- for stdout; .zst or .gz compress). Default: the header's `output`,
        /// else NAME-out.pgn for NAME.cql, as the reference program does.
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
        /// Write nothing; print the number of matching games.
        #[arg(long)]
        count: bool,
        /// Output format: pgn, or one json object / csv row per matching game.
        #[arg(long, default_value = "pgn", value_parser = commands::cql::parse_format)]
        format: cqldb::cql::MatchFormat,
    },
    /// Show how a CQL query runs: the logical plan, the rules that fired, the physical plan
    /// (index scans, the residual, the sink); `--analyze` runs it and adds what each operator
    /// produced and its time. Takes every option `cql` takes for the query.
    Explain {
        #[command(flatten)]
        query: commands::cql::QueryArgs,
        /// Run the query and show each operator's actual output and time.
        #[arg(long)]
        analyze: bool,
    },
    /// Run one SQL statement over a database: tables games, tags, positions, moves,
    /// comments; cql('QUERY') as a table of matched positions; fen(), san(), material(),
    /// on_square() (see docs/sql.md).
    #[command(after_help = cqldb_sql::tables::help_text())]
    Sql {
        /// The statement, e.g. "SELECT white, count(*) FROM games GROUP BY 1 ORDER BY 2 DESC".
        statement: String,
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// table (a box table), csv (RFC 4180, a header row), json (an object per line) or
        /// parquet (zstd; needs -o).
        #[arg(long, default_value = "table", value_parser = commands::sql::parse_format)]
        format: cqldb_sql::SqlFormat,
        /// Write to this file instead of the standard output (.zst, .gz, .bz2 compress).
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// An SQL shell over a database: line editing, history, multi-line statements ending
    /// with ';', .help for its dot commands.
    Shell {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
    },
    /// Write every SQL table as Parquet: DIR/<table>/seg-<id>.parquet, one file per table and
    /// segment (zstd), the layout DuckDB, Polars, Spark and DataFusion read as one table per
    /// folder. A second export to the same DIR writes only the segments added since.
    Export {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// The export folder (new, empty, or an earlier export of the same database).
        #[arg(long)]
        parquet: PathBuf,
        /// Include positions.fen (about three times the size and time).
        #[arg(long)]
        with_fen: bool,
        /// Rewrite every segment, not only those not yet exported.
        #[arg(long)]
        rewrite: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// GTQL over search-tree logs or indexed game trees.
    ///
    /// `cqldb gtql import LOG [--out TREE.gtl]`, `cqldb gtql 'QUERY' TREE.gtl`,
    /// `cqldb gtql -f QUERIES TREE.gtl` (all queries in one pass), `cqldb gtql 'QUERY' --db DIR`,
    /// `cqldb gtql stats TREE.gtl`.
    Gtql {
        /// `import LOG`, `stats TREE`, or a query and a tree file.
        args: Vec<String>,
        /// A file of queries, one per line.
        #[arg(short = 'f', long)]
        file: Option<PathBuf>,
        /// Query the game trees of this database instead of a tree file.
        #[arg(long)]
        db: Option<PathBuf>,
        /// Output file of `import`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Result format.
        #[arg(long, value_enum, default_value_t = commands::gtql::Format::Table)]
        format: commands::gtql::Format,
        /// Nodes listed per query, a number or `all` (0: counts only; every node is counted).
        /// Default: 50 in the table, all in csv and json.
        #[arg(long, value_parser = commands::gtql::parse_limit)]
        limit: Option<usize>,
        /// Threads evaluating queries (default: all cores); the tree is still read once.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: Option<u64>,
        /// With --db: print the plan (the games the index keeps for the pass) instead of
        /// answering.
        #[arg(long)]
        explain: bool,
        /// With --db: feed every game, using no index scan.
        #[arg(long)]
        full_scan: bool,
        /// With --explain: run the queries and add each operator's games, nodes and time.
        #[arg(long)]
        analyze: bool,
    },
    /// Reads every file of a database whole and says, for each, whether it is intact (exit 1
    /// if something is damaged).
    Check {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
    },
    /// Rebuilds what `check` finds damaged and can be rebuilt: either copy of the catalog from
    /// the other, a tag index from the games' text.
    Repair {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
    },
    /// Totals of a database: games, positions, variations, errors, size.
    Info {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
    },
    /// Every game that could not be fully read: file:line:col, reason.
    Errors {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// Only this game.
        #[arg(long)]
        game: Option<u64>,
    },
    /// Print a game exactly as it was read.
    Show {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// Game number (from 1).
        game: u64,
    },
    /// Print a game's position table.
    Positions {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// Game number (from 1).
        game: u64,
    },
    /// Games whose tags match a query, e.g. `white:kasparov` or `tags.Opening:sicilian`.
    Tags {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// Tantivy query; bare words search White, Black, Event, Site, Annotator
        /// (`white:kasp*`, `tags.Opening:sicilian`, `result:1-0`, `elo:[2600 TO *]`,
        /// `year:[1990 TO 1999]`, `eco:[B20 TO B99]`; accents are folded).
        query: String,
        /// Print only the number of matching games.
        #[arg(long)]
        count: bool,
    },
    /// Index the bundled sample of real games into ./cqldb-demo and print its info.
    Demo {
        /// Where to build the demo database.
        #[arg(long, default_value = "cqldb-demo")]
        db: PathBuf,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: commands::bench::BenchCommand,
    },
}

/// Rewrites the reference CQL program's single-dash options (`-cql`, `-variations`, ...) to
/// the double-dash form clap reads.
fn reference_style_args(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    const LONG: [&str; 38] = [
        "cql",
        "variations",
        "mainline",
        "virtualmainline",
        "gamenumber",
        "matchcount",
        "silent",
        "matchstring",
        "input",
        "output",
        "player",
        "white",
        "black",
        "event",
        "site",
        "year",
        "result",
        "fen",
        "flip",
        "flipcolor",
        "flipvertical",
        "fliphorizontal",
        "rotate90",
        "rotate45",
        "shift",
        "shifthorizontal",
        "shiftvertical",
        "reversecolor",
        "quiet",
        "alwayscomment",
        "noheader",
        "nosettag",
        "assign",
        "singlethreaded",
        "threads",
        "showmatches",
        "version",
        "lineincrement",
    ];
    args.map(|a| match a.to_str() {
        Some(s) if s.starts_with('-') && !s.starts_with("--") && LONG.contains(&&s[1..]) => {
            format!("-{s}").into()
        }
        _ => a,
    })
    .collect()
}

fn main() -> std::process::ExitCode {
    // Before the first allocation of `main` (the arguments' parsing): mimalloc sizes its first
    // arena's commitment when it is reserved (see `tune_allocator`).
    lazy_arenas();
    // `cqldb tags ... | head`: when the reader closes the pipe, end quietly as other command-line
    // tools do (killed by SIGPIPE) instead of panicking in `println!`.
    #[cfg(unix)]
    // SAFETY: sets a signal's disposition to its default before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A library's panic on a damaged file is caught and reported as an error naming the file
    // (see `cqldb_storage::guard`); its default message would read like a crash.
    let default_hook = std::panic::take_hook();
    // So is a panic on the zeros a shrunk database file reads as (`cqldb_storage::mapped`):
    // the run then ends with an error naming the file.
    std::panic::set_hook(Box::new(move |info| {
        if !cqldb_storage::guard::guarded() && cqldb_storage::mapped::faults() == 0 {
            default_hook(info);
        }
    }));
    let cli = match Cli::try_parse_from(reference_style_args(std::env::args_os())) {
        Ok(cli) => cli,
        // Help, the version, or a usage error; one that cannot be printed (a full device) fails.
        Err(e) => {
            let code = e.exit_code();
            return match e.print() {
                Ok(()) => std::process::ExitCode::from(code.clamp(0, 255) as u8),
                Err(_) => std::process::ExitCode::from(if code == 0 { 1 } else { code as u8 }),
            };
        }
    };
    tune_allocator(matches!(
        cli.command,
        Command::Index { .. }
            | Command::Optimize { .. }
            | Command::Demo { .. }
            | Command::Bench {
                what: commands::bench::BenchCommand::Ingest { .. }
            }
    ));
    let result = match cli.command {
        Command::Index {
            inputs,
            db,
            threads,
            segment_positions,
            quiet,
            allow_duplicates,
            skip_duplicates: _,
            no_merge,
        } => commands::index::run(
            &inputs,
            &db,
            commands::index::Settings {
                threads: threads.map(|t| t as usize),
                segment_positions,
                quiet,
                skip_duplicates: !allow_duplicates,
                merge: !no_merge,
            },
        ),
        Command::Optimize {
            db,
            threads,
            max_positions,
            quiet,
        } => commands::optimize::run(&db, threads.map(|t| t as usize), max_positions, quiet),
        Command::Info { db } => commands::info::run(&db),
        Command::Check { db } => commands::check::check(&db),
        Command::Repair { db } => commands::check::repair(&db),
        Command::Gtql {
            args,
            file,
            db,
            out,
            format,
            limit,
            threads,
            explain,
            full_scan,
            analyze,
        } => commands::gtql::run(commands::gtql::Args {
            args,
            file,
            db,
            out,
            format,
            limit,
            explain,
            full_scan,
            analyze,
            threads: threads.map_or_else(
                || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
                |t| t as usize,
            ),
        }),
        Command::Cql {
            query,
            output,
            count,
            format,
        } => commands::cql::run(commands::cql::Args {
            query,
            output,
            count,
            format,
            explain: false,
            analyze: false,
        }),
        Command::Explain { query, analyze } => commands::cql::run(commands::cql::Args {
            query,
            output: None,
            count: true,
            format: cqldb::cql::MatchFormat::Pgn,
            explain: true,
            analyze,
        }),
        Command::Sql {
            statement,
            db,
            format,
            output,
        } => commands::sql::run(&db, &statement, format, output.as_ref()),
        Command::Shell { db } => commands::shell::run(&db),
        Command::Export {
            db,
            parquet,
            with_fen,
            rewrite,
            quiet,
        } => commands::export::run(
            &db,
            &parquet,
            &cqldb_sql::export::ExportOptions { with_fen, rewrite },
            quiet,
        ),
        Command::Errors { db, game } => commands::errors::run(&db, game),
        Command::Show { db, game } => commands::show::run(&db, game),
        Command::Positions { db, game } => commands::positions::run(&db, game),
        Command::Tags { db, query, count } => commands::tags::run(&db, &query, count),
        Command::Demo { db } => commands::demo::run(&db),
        Command::Bench { what } => commands::bench::run(what),
    };
    // What is still buffered for the standard output is written now, and a failure to write
    // it (a full device) is the command's failure, not lost at exit.
    let result = result.and_then(|code| {
        use std::io::Write;
        std::io::stdout()
            .flush()
            .map(|()| code)
            .map_err(|e| anyhow::anyhow!("writing to the standard output: {e}"))
    });
    match result {
        Ok(code) => code,
        // Exit codes: 0 done, 1 a query or data error (this), 2 a usage error (the argument
        // parser's, or a command's own `Usage`).
        Err(e) => {
            // The error and its causes, each said once (a library's message often repeats its
            // cause's).
            let mut msg = e.to_string();
            for cause in e.chain().skip(1) {
                let c = cause.to_string();
                if !msg.contains(&c) {
                    msg.push_str(": ");
                    msg.push_str(&c);
                }
            }
            // A standard error that cannot be written to (full) leaves only the exit code.
            let _ = {
                use std::io::Write;
                writeln!(std::io::stderr(), "cqldb: {msg}")
            };
            let usage = e.downcast_ref::<cqldb::Usage>().is_some()
                || e.downcast_ref::<cqldb_storage::output_file::Refusal>()
                    .is_some()
                || matches!(
                    e.downcast_ref::<cqldb_storage::StorageError>(),
                    Some(cqldb_storage::StorageError::Refused { .. })
                );
            std::process::ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}
