//! Helpers for the filters' tests: a game from PGN text and the positions a query matches.

use cqldb_indexer::flatten::index_game;
use cqldb_indexer::split::Splitter;

use crate::ast::Node;
use crate::eval::{Engine, Game};
use crate::plan::bounds::Bounds;

/// The first game of `pgn`, variations visited.
pub fn game(pgn: &str) -> Game {
    let mut split = Splitter::new(std::io::Cursor::new(pgn.as_bytes().to_vec()));
    let raw = split
        .next_game()
        .expect("test PGN reads")
        .expect("test PGN has a game");
    let g = index_game(raw, 0);
    let comments = g
        .comments
        .iter()
        .map(|c| {
            let (s, e) = (c.start as usize, (c.start + c.len) as usize);
            (
                c.position,
                c.placement,
                String::from_utf8_lossy(&g.text[s..e]).into_owned(),
            )
        })
        .collect();
    let nags = g.nags.iter().map(|n| (n.position, n.nag)).collect();
    Game::new(1, g.positions, g.tags, true).with_notes(comments, nags)
}

/// The ids of the positions of `pgn`'s first game (variations included) where the body
/// `query` matches.
pub fn matching(query: &str, pgn: &str) -> Vec<u32> {
    let q = crate::parse(&format!("cql(variations) {query}")).expect("test query parses");
    Engine::new(q, true).run_game(&game(pgn)).matched
}

/// The one body filter of `query`, parsed.
pub fn node(query: &str) -> Node {
    let mut q = crate::parse(&format!("cql() {query}")).expect("test query parses");
    assert_eq!(q.body.len(), 1, "one filter");
    q.body.remove(0)
}

/// The index rule's bounds of `query`'s one filter (main lines only).
pub fn bounds(query: &str) -> Bounds {
    crate::plan::index_rule::bounds(&node(query), false)
}

/// A short game: 1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# with a variation 3... g6.
pub const SCHOLAR: &str =
    "[Event \"t\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 (3... g6) 4. Qxf7# 1-0\n";
