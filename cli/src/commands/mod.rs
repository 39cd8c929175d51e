//! One module per subcommand (and `peak_rss.rs`, which the benchmarks share).

pub mod bench;
pub mod bench_query;
pub mod check;
pub mod cql;
pub mod demo;
pub mod errors;
pub mod gtql;
pub mod index;
pub mod info;
mod peak_rss;
pub mod positions;
pub mod show;
pub mod tags;
