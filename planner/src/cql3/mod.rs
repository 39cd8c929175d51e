//! The CQL 3 list syntax (`(match :pgn f.pgn (position Ka1 :mate))`, 2003–2016): a separate
//! front end that reads a list file (`reader.rs`) and writes the CQL 6 query meaning the same
//! (the match list in `desugar.rs`, position lists in `position.rs` with their next-move
//! dash in `dash.rs` and rays in `ray.rs`, the relation list in
//! `relation.rs`, tags in `tags.rs`, designators, placements and keyword arguments in
//! `words.rs`), which
//! the CQL 6 parser then reads — so checking, planning, EXPLAIN and output
//! are the CQL 6 ones. It knows CQL 3's syntax and nothing of evaluation.

mod dash;
mod desugar;
mod position;
mod ray;
mod reader;
mod relation;
mod tags;
mod words;

pub use desugar::Options;
pub use reader::is_list_syntax;

use crate::error::ParseError;

/// The CQL 6 text of a query in the list syntax; `None` for a query that is not one (it starts
/// with anything but `(`). Errors point into `src`.
pub fn to_cql6(src: &str, options: Options) -> Result<Option<String>, ParseError> {
    if !is_list_syntax(src) {
        return Ok(None);
    }
    desugar::match_list(&reader::read(src)?, options).map(Some)
}
