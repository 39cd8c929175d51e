//! The cqldb executor: runs a planner's physical plan over game trees and hands the matching
//! games to a sink.
//!
//! Owns the operators: [`execute`] (the one entry point of the binary, the tests and the
//! benchmarks), index scans over a segment's bitmaps ([`scan`]), game sources ([`source`]: PGN
//! read on the fly, or a database's segments), sinks ([`sink`]: PGN, JSON, CSV, count), and
//! evaluation — GTQL's single-pass evaluator ([`gtql`]), and for CQL the engine and its
//! logical/arithmetic core ([`eval`]), board geometry ([`board`]), move filters (`moves.rs`),
//! game-tree navigation (`tree.rs`), tag filters (`tags.rs`), values ([`value`]) and PGN output
//! ([`output`]). The engine sees a game as position rows ([`game::Game`]), whether they were
//! just read from PGN or decoded from an index. It does not parse queries or plan them (the
//! planner does), nor know the command line.

pub mod board;
pub mod eval;
pub mod execute;
pub mod found;
pub mod game;
pub mod gtql;
mod moves;
pub mod output;
pub mod rows;
pub mod scan;
pub mod sink;
pub mod source;
mod tags;
mod tree;
pub mod value;

pub use eval::{Engine, GameMatch};
pub use game::Game;
