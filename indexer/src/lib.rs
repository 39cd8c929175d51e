//! The cqldb indexer: reads PGN (variations included) and produces the rows the storage crate
//! keeps.
//!
//! Owns everything about PGN: opening compressed inputs ([`source`], [`zstd_input`]), splitting a
//! stream into games ([`split`]), tokens with positions
//! ([`lexer`]), resolving SAN quickly ([`san`]), building each game tree by playing its moves ([`tree`]), numbering positions and
//! computing their columns ([`flatten`]), and the parallel pipeline ([`pipeline`]), held to the
//! cores it is given ([`cores`]).
//!
//! It must not know how rows are laid out on disk (that is `cqldb-storage`) nor anything about
//! queries.
//!
//! ```
//! use cqldb_indexer::flatten::{index_game};
//! use cqldb_indexer::split::RawGame;
//! let raw = RawGame { text: b"1. e4 (1. d4) e5 *".to_vec(), line: 1, ..Default::default() };
//! let game = index_game(raw, 0);
//! assert_eq!(game.positions.len(), 4);
//! assert_eq!(game.positions[3].depth, 1); // 1.d4, numbered after the main line
//! ```

pub mod cores;
pub mod flatten;
pub mod lexer;
pub mod merge;
pub mod pipeline;
pub mod repair;
pub mod san;
pub mod source;
pub mod split;
pub mod tags;
pub mod tree;
pub mod zstd_input;

pub use pipeline::{IngestOptions, IngestReport, Progress, ingest};
pub use source::Input;
