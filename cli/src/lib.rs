//! The glue behind the `cqldb` command that the integration tests use too: a CQL query as the
//! command line states it, planned and run through the executor ([`cql`]). Everything else
//! lives in the library crates.

pub mod cql;

/// A command line that asks for something impossible (the wrong combination of options, a
/// missing argument): the `cqldb` binary exits with 2 for it, as for the argument parser's own
/// errors, and with 1 for a query or data error.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}
