//! The glue behind the `cqldb` command that the integration tests use too: reading games for
//! the query engine from PGN or from an index ([`games`]), and running a CQL query over them
//! ([`cql`]). Everything else lives in the library crates.

pub mod cql;
pub mod games;
