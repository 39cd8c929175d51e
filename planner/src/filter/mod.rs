//! CQL's filters, one file each: how it reads (its keywords and arguments), its type, how it
//! is evaluated at a position, and what the index can say about it (its index rule), with its
//! tests.
//!
//! A filter's data is its variant of [`crate::ast::Expr`]; its meaning is its file here. The
//! places that route a variant to its file are exhaustive matches, so the compiler names each
//! one a new filter must be added to: the keyword table below, `ty_of` (`type_of.rs`), the
//! engine's `eval` (`eval/engine/mod.rs`), the index rules (`plan/index_rule.rs`) and
//! [`crate::ast::Node::children`].
//!
//! A filter's file sees the parser through [`syntax::Syntax`], the engine through
//! [`crate::eval::Evaluate`], and the plan through [`crate::plan::bounds::Bounds`]: none of
//! them depends on it, so no file depends on itself through a filter.
//!
//! The language's core (logic, comparison, arithmetic, variables, functions, strings,
//! transforms, piece designators) stays with the parser and the engine. Two filters are
//! operators rather than keywords, so they have no entry in the table below: `attacks` (the
//! parser's operator skeleton reads it through `attack::infix`) and the dash `--`/`[x]`
//! (read by the parser's token skeleton, where a square set may stand attached before it;
//! `dash.rs` holds the rest, and the keywords that put a dash to other moves read theirs
//! through `dash::after_keyword`).

pub mod syntax;

pub mod ancestry;
pub mod ascii;
pub mod assert;
pub mod attack;
pub mod between;
pub mod castle;
pub mod check;
pub mod child;
pub mod color;
pub mod consecutive_moves;
pub mod count_moves;
pub mod current_move;
pub mod current_position;
pub mod dash;
pub mod depth;
pub mod direction;
pub mod distance;
pub mod echo;
pub mod elo;
pub mod en_passant;
pub mod fen;
pub mod files;
pub mod find;
pub mod from_to;
pub mod game_number;
pub mod index_of;
pub mod initial;
pub mod lca;
pub mod legacy_move;
pub mod legal;
pub mod mainline;
pub mod make_square;
pub mod mate;
pub mod move_number;
pub mod no_transform;
pub mod null_move;
pub mod original_comment;
pub mod parent;
pub mod path;
pub mod pawns;
pub mod piece_info;
pub mod pin;
pub mod ply;
pub mod position;
pub mod position_id;
pub mod power;
pub mod primary;
pub mod pure_stalemate;
pub mod rank_file;
pub mod ray;
pub mod result;
pub mod settag;
pub mod shade;
pub mod side_to_move;
pub mod sort;
pub mod stalemate;
pub mod tag_search;
pub mod terminal;
pub mod to_move;
pub mod variation;
pub mod virtual_mainline;
pub mod year;

#[cfg(test)]
pub(crate) mod testing;

use crate::ast::Expr;
use syntax::{PResult, Syntax};

/// How a filter reads after its keyword (already consumed), given that keyword.
type Parse = fn(&str, &mut dyn Syntax) -> PResult<Expr>;

/// The keywords of the filters in this folder, each with its parser.
const TABLE: &[(&[&str], Parse)] = &[
    (ancestry::KEYWORDS, ancestry::parse),
    (between::KEYWORDS, between::parse),
    (castle::KEYWORDS, castle::parse),
    (check::KEYWORDS, check::parse),
    (child::KEYWORDS, child::parse),
    (color::KEYWORDS, color::parse),
    (count_moves::KEYWORDS, count_moves::parse),
    (current_move::KEYWORDS, current_move::parse),
    (current_position::KEYWORDS, current_position::parse),
    (depth::KEYWORDS, depth::parse),
    (direction::KEYWORDS, direction::parse),
    (distance::KEYWORDS, distance::parse),
    (elo::KEYWORDS, elo::parse),
    (en_passant::KEYWORDS, en_passant::parse),
    (fen::KEYWORDS, fen::parse),
    (find::KEYWORDS, find::parse),
    (from_to::KEYWORDS, from_to::parse),
    (game_number::KEYWORDS, game_number::parse),
    (initial::KEYWORDS, initial::parse),
    (legacy_move::KEYWORDS, legacy_move::parse),
    (legal::KEYWORDS, legal::parse),
    (lca::KEYWORDS, lca::parse),
    (mainline::KEYWORDS, mainline::parse),
    (make_square::KEYWORDS, make_square::parse),
    (ascii::KEYWORDS, ascii::parse),
    (files::KEYWORDS, files::parse),
    (assert::KEYWORDS, assert::parse),
    (index_of::KEYWORDS, index_of::parse),
    (no_transform::KEYWORDS, no_transform::parse),
    (consecutive_moves::KEYWORDS, consecutive_moves::parse),
    (original_comment::KEYWORDS, original_comment::parse),
    (piece_info::KEYWORDS, piece_info::parse),
    (pure_stalemate::KEYWORDS, pure_stalemate::parse),
    (mate::KEYWORDS, mate::parse),
    (move_number::KEYWORDS, move_number::parse),
    (null_move::KEYWORDS, null_move::parse),
    (parent::KEYWORDS, parent::parse),
    (path::KEYWORDS, path::parse),
    (pawns::KEYWORDS, pawns::parse),
    (pin::KEYWORDS, pin::parse),
    (ply::KEYWORDS, ply::parse),
    (position::KEYWORDS, position::parse),
    (position_id::KEYWORDS, position_id::parse),
    (power::KEYWORDS, power::parse),
    (primary::KEYWORDS, primary::parse),
    (rank_file::KEYWORDS, rank_file::parse),
    (ray::KEYWORDS, ray::parse),
    (result::KEYWORDS, result::parse),
    (settag::KEYWORDS, settag::parse),
    (shade::KEYWORDS, shade::parse),
    (side_to_move::KEYWORDS, side_to_move::parse),
    (stalemate::KEYWORDS, stalemate::parse),
    (tag_search::KEYWORDS, tag_search::parse),
    (terminal::KEYWORDS, terminal::parse),
    (to_move::KEYWORDS, to_move::parse),
    (variation::KEYWORDS, variation::parse),
    (virtual_mainline::KEYWORDS, virtual_mainline::parse),
    (year::KEYWORDS, year::parse),
];

/// The filter that `word` starts, read by its file's parser; `None` if no filter here has
/// that keyword.
pub(crate) fn parse(word: &str, p: &mut dyn Syntax) -> Option<PResult<Expr>> {
    TABLE
        .iter()
        .find(|(keywords, _)| keywords.contains(&word))
        .map(|(_, parse)| parse(word, p))
}

#[cfg(test)]
mod tests {
    use super::TABLE;

    #[test]
    fn every_keyword_belongs_to_one_filter_and_is_reserved() {
        let mut seen = std::collections::HashSet::new();
        for (keywords, _) in TABLE {
            for k in *keywords {
                assert!(seen.insert(*k), "'{k}' is claimed twice");
                assert!(crate::keywords::is_reserved(k), "'{k}' is not reserved");
            }
        }
    }
}
