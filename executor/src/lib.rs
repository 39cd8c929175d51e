//! The cqldb executor: evaluates a parsed CQL query ([`cqldb_planner::Query`]) over game trees
//! and writes the matching games.
//!
//! Owns evaluation: GTQL's single-pass evaluator ([`gtql`]), and for CQL the engine and its logical/arithmetic core ([`eval`]), board geometry
//! ([`board`]), move filters (`moves.rs`), game-tree navigation (`tree.rs`), tag filters
//! (`tags.rs`), values ([`value`]) and PGN output ([`output`]). A game reaches it as position
//! rows ([`game::Game`]), whether they were just read from PGN or decoded from an index; it does
//! not know how they were produced or stored.

pub mod board;
pub mod eval;
pub mod game;
pub mod gtql;
mod moves;
pub mod output;
pub mod rows;
pub mod scan;
mod tags;
mod tree;
pub mod value;

pub use eval::{Engine, GameMatch};
pub use game::Game;
