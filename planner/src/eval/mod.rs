//! Evaluating a CQL query over one game: the engine walks the game's positions and evaluates
//! the body at each.
//!
//! The engine and the language's core (logic, comparison, arithmetic, variables, functions,
//! strings) are in `engine/`; position geometry in [`board`]; the moves the move filters
//! read in `move_source.rs` (the filters are evaluated in their own files, `crate::filter`);
//! what a filter produces in [`value`]. A game is seen as position rows ([`game::Game`]), whether just read from PGN or
//! decoded from an index; which games and positions are evaluated is the executor's business.

pub mod board;
pub(crate) mod candidate;
pub mod context;
mod engine;
pub mod game;
pub(crate) mod move_source;
pub mod value;

pub use context::{Cx, Evaluate, matches};
pub use engine::{Engine, GameMatch};
pub use game::Game;
