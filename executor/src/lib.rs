//! The cqldb executor: runs a planner's physical plan over game trees and hands the matching
//! games to a sink.
//!
//! Owns running a query ([`query`]: the request every interface states — the binary, SQL,
//! the tests and the benchmarks — parsed once, planned and run) and the operators: [`execute`], index scans over a segment's bitmaps ([`scan`]) and their estimates from the bitmaps'
//! headers ([`estimate`]), game sources ([`source`]: PGN
//! read on the fly, or a database's segments), the residual walk (each candidate game through
//! the CQL engine, units of games on every core, handed over in order: [`ordered`]), sinks ([`sink`]: PGN, JSON, CSV, count; the selected games' numbers in [`matched`], kept as the index's game sets where it answered alone) with PGN output
//! ([`output`], moves in SAN: [`san`]), and GTQL's single-pass evaluator ([`gtql`]). What a CQL filter means at a
//! position (its evaluation) belongs to the filter, in the planner crate (`cqldb_planner::eval`
//! and `cqldb_planner::filter`); this crate decides which games and positions it runs on. It
//! does not parse queries or plan them, nor know the command line or SQL.

pub mod estimate;
pub mod execute;
pub mod found;
pub mod gtql;
mod listed;
pub mod match_output;
pub mod matched;
pub mod ordered;
pub mod output;
pub mod positions;
pub mod query;
pub mod rows;
pub mod san;
pub mod scan;
pub mod sink;
pub(crate) mod sorted;
pub mod source;

pub use cqldb_planner::eval::{Engine, GameMatch, board, game, value};
pub use game::Game;
pub use query::Usage;
