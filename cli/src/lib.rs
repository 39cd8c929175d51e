//! The glue behind the `cqldb` command that the integration tests use too. Running a query is
//! the executor's API (`cqldb_executor::query`), re-exported here as [`cql`] for the tests and
//! the benchmarks; everything else lives in the library crates.

pub use cqldb_executor::Usage;
pub use cqldb_executor::query as cql;
