//! `cqldb shell`: a warm process for repeated SQL statements, with line editing and history
//! (kept in `~/.cqldb_history`). A statement ends with `;` and may span lines; dot commands
//! (`.help`) change the output or describe the tables. Standard input that is not a terminal
//! is read the same way, so a file of statements can be piped in.

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
  .format table|csv|json  how answers are printed
  .timer on|off           print each statement's time
  .help                   this text
  .quit                   leave (also Ctrl-D)";

pub fn run(db: &Path) -> Result<ExitCode> {
    let database = Arc::new(Database::open(db)?);
    let session = SqlSession::open(database)?;
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
    match session.query(sql) {
        Ok(answer) => {
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
    let mut words = line.split_whitespace();
    let cmd = words.next().unwrap_or_default();
    let arg = words.next();
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
        (".format", Some(f)) => match f.parse::<SqlFormat>() {
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
