//! Writing an answer: a table fitted to the terminal, CSV (RFC 4180, a header row), JSON
//! (one object per row and line), or Parquet (zstd-compressed columns, for DuckDB, pandas or
//! Spark).

use std::io::Write;

use anyhow::Result;
use datafusion::arrow::util::pretty::pretty_format_batches;

use crate::session::Answer;

/// How an answer is written.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SqlFormat {
    /// A box table, as a terminal shows it.
    #[default]
    Table,
    /// RFC 4180 CSV with a header row.
    Csv,
    /// One JSON object per row, a row a line.
    Json,
    /// Apache Parquet, columns compressed with zstd.
    Parquet,
}

impl SqlFormat {
    pub const NAMES: [&'static str; 4] = ["table", "csv", "json", "parquet"];
}

impl std::str::FromStr for SqlFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "table" => Ok(Self::Table),
            "csv" => Ok(Self::Csv),
            "json" => Ok(Self::Json),
            "parquet" => Ok(Self::Parquet),
            other => Err(format!(
                "unknown format '{other}' (one of {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// Writes `answer` to `out` in `format`.
pub fn write(out: &mut dyn Write, answer: &Answer, format: SqlFormat) -> Result<()> {
    match format {
        SqlFormat::Table => {
            if answer.batches.is_empty() {
                let empty =
                    datafusion::arrow::record_batch::RecordBatch::new_empty(answer.schema.clone());
                writeln!(out, "{}", pretty_format_batches(&[empty])?)?;
            } else {
                writeln!(out, "{}", pretty_format_batches(&answer.batches)?)?;
            }
            let n = answer.rows();
            writeln!(out, "{n} row{}", if n == 1 { "" } else { "s" })?;
        }
        SqlFormat::Csv => {
            let mut w = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut *out);
            if answer.batches.is_empty() {
                w.write(&datafusion::arrow::record_batch::RecordBatch::new_empty(
                    answer.schema.clone(),
                ))?;
            }
            for b in &answer.batches {
                w.write(b)?;
            }
        }
        SqlFormat::Json => {
            let mut w = datafusion::arrow::json::LineDelimitedWriter::new(&mut *out);
            for b in &answer.batches {
                w.write(b)?;
            }
            w.finish()?;
        }
        SqlFormat::Parquet => out.write_all(&parquet_bytes(answer)?)?,
    }
    Ok(())
}

/// The answer as a Parquet file's bytes.
pub fn parquet_bytes(answer: &Answer) -> Result<Vec<u8>> {
    use parquet::arrow::ArrowWriter;
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::WriterProperties;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, answer.schema.clone(), Some(props))?;
    for b in &answer.batches {
        w.write(b)?;
    }
    w.close()?;
    Ok(buf)
}
