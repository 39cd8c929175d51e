//! The glue behind the `cqldb` command that the integration tests use too: a CQL query as the
//! command line states it, planned and run through the executor ([`cql`]). Everything else
//! lives in the library crates.

pub mod cql;
