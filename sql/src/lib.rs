//! SQL over a cqldb database, on Apache DataFusion.
//!
//! Owns the mapping of a database onto SQL tables — `games`, `tags`, `positions`, `moves`,
//! `comments` ([`tables`], each file documenting its columns) — as DataFusion table providers
//! ([`provider`]) whose filter pushdown turns predicates the index answers into one CQL query
//! planned by the CQL planner ([`pushdown`]); the `cql('...')` table function
//! ([`cql_function`]); chess scalar functions ([`functions`]); a session that runs statements
//! ([`session`]), the output formats ([`format`]) and the Parquet export of every table
//! ([`export`]).
//!
//! It sits above the executor (it runs CQL through `cqldb_executor::query`, the same entry
//! point as the binary) and below the binary; it knows nothing of the command line. SQL
//! parsing, planning and execution are DataFusion's: nothing here parses SQL.

pub mod cql_function;
pub mod decode;
pub mod export;
pub mod format;
pub mod functions;
pub mod provider;
pub mod pushdown;
pub mod rules;
pub mod selection;
pub mod session;
pub mod tables;

pub use format::{SqlFormat, write};
pub use session::{Answer, SqlOptions, SqlSession};
