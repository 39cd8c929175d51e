//! Evaluating a CQL query over one game: the engine walks the game's positions and evaluates
//! the body at each.
//!
//! The engine and the language's core (logic, comparison, arithmetic, variables, functions,
//! strings) are in `engine.rs`; position geometry in [`board`]; move filters in `moves.rs`,
//! game-tree navigation in `tree.rs`, tag filters in `tags.rs`; what a filter produces in
//! [`value`]. A game is seen as position rows ([`game::Game`]), whether just read from PGN or
//! decoded from an index; which games and positions are evaluated is the executor's business.

pub mod board;
mod engine;
pub mod game;
mod moves;
mod tags;
mod tree;
pub mod value;

pub use engine::{Cx, Engine, GameMatch, matches};
pub use game::Game;
