//! `cqldb shell`: a warm process for repeated SQL statements, with line editing and history
//! (kept in `~/.cqldb_history`). A statement ends with `;` and may span lines; dot commands
//! (`.help`) change the output or describe the tables. Standard input that is not a terminal
//! is read the same way, so a file of statements can be piped in. Ctrl-C while a statement
//! runs stops that statement only (a SIGINT handler sets a flag the session polls); at the
//! prompt it clears the line, as in any shell.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use cqldb_sql::{SqlFormat, SqlSession};
use cqldb_storage::Database;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

const HELP: &str = "\
Statements end with ';' and may span lines. Tables: games, tags, positions, moves, comments;
cql('QUERY') is a table of the positions a CQL query matches; functions fen(), san(),
material(), on_square() (docs/sql.md).
  .tables                 the tables
  .schema [TABLE]         their columns
  .mode table|csv|json    how answers are printed (also .format)
  .timer on|off           print each statement's time
  .cql QUERY              the positions a CQL query matches (game, position, ply)
  .explain STATEMENT      how a statement runs, with what went to the index
Ctrl-C stops a running statement and keeps the shell.
  .help                   this text
  .quit                   leave (also Ctrl-D)";

pub fn run(db: &Path) -> Result<ExitCode> {
    let database = Arc::new(Database::open(db)?);
    let session = SqlSession::open(database)?;
    interrupt::install();
    let mut editor = DefaultEditor::new()?;
    let history = std::env::var_os("HOME").map(|h| Path::new(&h).join(".cqldb_history"));
    if let Some(h) = &history {
        // No history yet is the usual first run.
        let _ = editor.load_history(h);
    }
    errln!(
        "cqldb shell over {} — .help for help, .quit to leave",
        db.display()
    );
    let mut state = State {
        format: SqlFormat::Table,
        timer: false,
        failed: false,
    };
    let mut pending = String::new();
    loop {
        let prompt = if pending.is_empty() {
            "cqldb> "
        } else {
            "  ...> "
        };
        let line = match editor.readline(prompt) {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let trimmed = line.trim();
        if pending.is_empty() && trimmed.starts_with('.') {
            let _ = editor.add_history_entry(trimmed);
            if !dot_command(trimmed, &session, &mut state)? {
                break;
            }
            continue;
        }
        if trimmed.is_empty() {
            continue;
        }
        pending.push_str(&line);
        pending.push('\n');
        if !trimmed.ends_with(';') {
            continue;
        }
        let statement = std::mem::take(&mut pending);
        let _ = editor.add_history_entry(statement.trim());
        run_statement(statement.trim().trim_end_matches(';'), &session, &mut state)?;
    }
    if !pending.trim().is_empty() {
        run_statement(pending.trim(), &session, &mut state)?;
    }
    if let Some(h) = &history {
        // A history that cannot be saved (read-only home) loses nothing else.
        let _ = editor.save_history(h);
    }
    Ok(if state.failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

struct State {
    format: SqlFormat,
    timer: bool,
    /// A statement failed (the exit code of a piped session says so).
    failed: bool,
}

fn run_statement(sql: &str, session: &SqlSession, state: &mut State) -> Result<()> {
    let t = Instant::now();
    match interrupt::stoppable(|stop| session.query_until(sql, stop)) {
        Ok(None) => {
            state.failed = true;
            errln!("stopped");
        }
        Ok(Some(answer)) => {
            let mut buf = Vec::new();
            let format = if state.format == SqlFormat::Parquet {
                SqlFormat::Table
            } else {
                state.format
            };
            cqldb_sql::write(&mut buf, &answer, format)?;
            std::io::stdout()
                .lock()
                .write_all(&buf)
                .map_err(|e| anyhow::anyhow!("writing to the standard output: {e}"))?;
        }
        Err(e) => {
            state.failed = true;
            errln!("error: {e:#}");
        }
    }
    if state.timer {
        errln!("{:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(())
}

/// Runs a dot command; `false` to leave the shell.
fn dot_command(line: &str, session: &SqlSession, state: &mut State) -> Result<bool> {
    let (cmd, rest) = line
        .split_once(char::is_whitespace)
        .map_or((line, ""), |(c, r)| (c, r.trim()));
    let arg = rest.split_whitespace().next();
    match (cmd, arg) {
        (".quit" | ".exit", _) => return Ok(false),
        (".help", _) => outln!("{HELP}"),
        (".tables", _) => run_statement(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
            session,
            state,
        )?,
        (".schema", table) => {
            let filter = match table {
                Some(t) => format!(" AND table_name = '{}'", t.replace('\'', "''")),
                None => String::new(),
            };
            run_statement(
                &format!(
                    "SELECT table_name, column_name, data_type FROM information_schema.columns \
                     WHERE table_schema = 'public'{filter} ORDER BY table_name, ordinal_position"
                ),
                session,
                state,
            )?;
        }
        (".cql", Some(_)) => run_statement(
            &format!(
                "SELECT game, position, ply FROM cql('{}') ORDER BY game, position",
                rest.replace('\'', "''")
            ),
            session,
            state,
        )?,
        (".explain", Some(_)) => run_statement(
            &format!("EXPLAIN {}", rest.trim_end_matches(';')),
            session,
            state,
        )?,
        (".format" | ".mode", Some(f)) => match f.parse::<SqlFormat>() {
            Ok(SqlFormat::Parquet) => errln!("parquet needs a file: use cqldb sql -o"),
            Ok(f) => state.format = f,
            Err(e) => errln!("{e}"),
        },
        (".timer", Some("on")) => state.timer = true,
        (".timer", Some("off")) => state.timer = false,
        _ => errln!("unknown command {line} (.help lists them)"),
    }
    Ok(true)
}

/// Ctrl-C during a statement: a SIGINT handler that sets a flag while a statement runs (the
/// session polls it) and otherwise ends the process as the signal would have.
mod interrupt {
    use std::sync::atomic::{AtomicBool, Ordering};

    static RUNNING: AtomicBool = AtomicBool::new(false);
    static STOP: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_sigint(sig: libc::c_int) {
        if RUNNING.load(Ordering::SeqCst) {
            STOP.store(true, Ordering::SeqCst);
        } else {
            // SAFETY: signal and raise are async-signal-safe; the process dies of `sig` as
            // it would have without this handler.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
        }
    }

    pub fn install() {
        // SAFETY: sigaction with a zeroed struct and a handler that only touches atomics or
        // makes async-signal-safe calls; SA_RESTART keeps a read of a piped input going.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as usize;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(libc::SIGINT, &act, std::ptr::null_mut());
        }
    }

    /// Runs `f` with the stop flag armed.
    pub fn stoppable<T>(f: impl FnOnce(&AtomicBool) -> T) -> T {
        STOP.store(false, Ordering::SeqCst);
        RUNNING.store(true, Ordering::SeqCst);
        let out = f(&STOP);
        RUNNING.store(false, Ordering::SeqCst);
        out
    }
}
