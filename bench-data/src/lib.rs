//! Data for exercising cqldb: the bundled sample of real games ([`sample`]), a generator of
//! synthetic games with variations at any scale ([`synth`]), and the bare pgn-reader + shakmaty
//! replay used as the ingest baseline ([`baseline`]), and synthetic search-tree logs for GTQL
//! ([`search_tree`]).
//!
//! It must not depend on the other cqldb crates, so it can serve as an independent oracle in
//! their tests and benchmarks.

pub mod baseline;
pub mod sample;
pub mod search;
pub mod search_tree;
pub mod synth;
