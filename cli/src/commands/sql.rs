//! `cqldb sql`: one SQL statement over a database (see the `cqldb-sql` crate for the tables
//! and functions).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use cqldb_sql::{SqlFormat, SqlSession};
use cqldb_storage::Database;

/// `--format`.
pub fn parse_format(s: &str) -> Result<SqlFormat, String> {
    s.parse()
}

pub fn run(
    db: &Path,
    statement: &str,
    format: SqlFormat,
    output: Option<&PathBuf>,
) -> Result<ExitCode> {
    let database = Arc::new(Database::open(db)?);
    // One statement: each segment's pages are dropped once its scans are past it.
    let opts = cqldb_sql::SqlOptions {
        pages: cqldb_storage::Pages::Release,
        ..Default::default()
    };
    let session = SqlSession::with_options(database, opts)?;
    let answer = match session.query(statement) {
        Ok(a) => a,
        Err(e) => {
            errln!("{e:#}");
            return Ok(ExitCode::from(1));
        }
    };
    match output {
        Some(path) if path.as_os_str() != "-" => {
            cqldb_storage::output_file::refuse_unsafe_target(
                path,
                &[cqldb_storage::output_file::ReadSource::Database(db)],
            )
            .map_err(|r| cqldb::Usage(r.0))?;
            let mut w = cqldb_executor::sink::open_output(path)?;
            cqldb_sql::write(&mut w, &answer, format)?;
            w.close()?;
            errln!("{} rows written to {}", answer.rows(), path.display());
        }
        _ if format == SqlFormat::Parquet => {
            return Err(cqldb::Usage(
                "--format parquet writes a file: give -o FILE.parquet".into(),
            )
            .into());
        }
        _ => {
            let mut buf = Vec::new();
            cqldb_sql::write(&mut buf, &answer, format)?;
            let mut o = std::io::stdout().lock();
            o.write_all(&buf)
                .map_err(|e| anyhow::anyhow!("writing to the standard output: {e}"))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
