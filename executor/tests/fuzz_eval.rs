//! Random queries evaluated over a game with variations, a null move and castling never
//! panic, and a runaway loop stops.

use cqldb_executor::{Engine, Game};
use cqldb_indexer::flatten::index_game;
use cqldb_indexer::split::RawGame;
use proptest::prelude::*;

const PGN: &str = "[Event \"fuzz\"]\n[White \"A, B\"]\n[Black \"C\"]\n[Result \"1-0\"]\n\n\
1. e4 (1. d4 d5 (1... Nf6 2. c4) 2. c4) e5 2. Nf3 Nc6 3. Bb5 -- 4. O-O a6 5. Bxc6 dxc6 \
6. d4 exd4 7. Qxd4 Qxd4 8. Nxd4 Bd7 9. Nc3 O-O-O 10. Be3 c5 11. Nf3 b6 12. e5 f6 13. e6 Bxe6 \
14. Ng5 fxg5 15. Bxg5 Rd2 16. Rad1 Rxd1 17. Rxd1 c4 18. Rd8+ Kb7 19. h4 Nh6 20. h5 a5 \
21. b3 a4 1-0";

const VOCAB: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    ":",
    "#",
    "~",
    "&",
    "|",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "<",
    ">=",
    "->",
    "<-",
    "--",
    "[x]",
    "=Q",
    "not",
    "and",
    "or",
    "if",
    "then",
    "else",
    "check",
    "mate",
    "K",
    "q",
    "A",
    "a",
    "_",
    ".",
    "e4",
    "[Aa]",
    "Ra-h7",
    "attacks",
    "attackedby",
    "up",
    "1",
    "0",
    "7",
    "power",
    "light",
    "rank",
    "between",
    "ray",
    "xray",
    "pin",
    "from",
    "through",
    "to",
    "legal",
    "pseudolegal",
    "countmoves",
    "currentmove",
    "move",
    "child",
    "parent",
    "position",
    "ancestor",
    "descendant",
    "lca",
    "distance",
    "find",
    "<--",
    "all",
    "quiet",
    "square",
    "piece",
    "in",
    "X",
    "=",
    "+=",
    "comment",
    "str",
    "player",
    "white",
    "result",
    "1-0",
    "tag",
    "\"x\"",
    "flipcolor",
    "o-o",
    "castle",
    "enpassant",
    "nullmove",
    "makesquare",
    "max",
    "min",
    "ply",
    "depth",
    "positionid",
    "terminal",
    "initial",
    "variation",
    "virtualmainline",
    "passedpawns",
    "doubledpawns",
    "sidetomove",
    "movenumber",
    "primary",
    "~~",
    "\"^A\"",
    "\\1",
    "lowercase",
    "fen",
    "\"8/8/8/8/8/8/8/8\"",
    "stalemate",
    "wtm",
    "btm",
    "dictionary",
    "D",
    "[",
    "]",
];

fn game(variations: bool) -> Game {
    let raw = RawGame {
        text: PGN.as_bytes().to_vec(),
        line: 1,
        ..Default::default()
    };
    let g = index_game(raw, 0);
    assert!(g.issues.is_empty(), "{:?}", g.issues);
    Game::new(1, g.positions, g.tags, variations)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_queries_evaluate_without_panic(words in prop::collection::vec(0..VOCAB.len(), 1..25), v in any::<bool>()) {
        let mut src = String::from(if v { "cql(variations) " } else { "cql() " });
        for w in &words {
            src.push_str(VOCAB[*w]);
            src.push(' ');
        }
        if let Ok(q) = cqldb_planner::parse(&src) {
            let mut e = Engine::new(q, false);
            let g = game(e.variations);
            let m = e.run_game(&g);
            prop_assert!(m.matched.iter().all(|&p| (p as usize) < g.len()));
        }
    }
}

#[test]
fn endless_loop_and_recursion_stop() {
    let g = game(true);
    for src in [
        "cql() X = 0 while (true) { X += 1 } X > 5",
        "cql() function F(Y) { F(Y) } F(1)",
    ] {
        let q = cqldb_planner::parse(src).expect(src);
        let mut e = Engine::new(q, false);
        let _ = e.run_game(&g);
    }
}

/// Transforms run at evaluation time: 30 nested `flipcolor`s parse into a small tree and
/// evaluate each colour state once, in bounded time and memory.
#[test]
fn nested_flipcolors_are_bounded() {
    let q = format!(
        "cql() {}Ke1 ka8{}",
        "flipcolor {".repeat(30),
        "}".repeat(30)
    );
    let query = cqldb_planner::parse(&q).expect("parses");
    let mut engine = cqldb_executor::Engine::new(query, false);
    let pgn = b"[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n".to_vec();
    let raw = cqldb_indexer::split::Splitter::new(std::io::Cursor::new(pgn))
        .next_game()
        .unwrap()
        .unwrap();
    let g = cqldb_indexer::flatten::index_game(raw, 0);
    let game = cqldb_executor::Game::new(1, g.positions, g.tags, false);
    let t = std::time::Instant::now();
    let m = engine.run_game(&game);
    assert!(m.matched.is_empty());
    assert!(
        t.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        t.elapsed()
    );
}
