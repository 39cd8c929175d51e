//! The game-tree rules of ../shared/reference/game-tree-and-sort.md and the conformance README,
//! pinned on their own examples, plus the malformed-input rules of the foundation issue.

use cqldb_indexer::flatten::index_game;
use cqldb_indexer::split::RawGame;
use cqldb_storage::{MoveKind, NewGame, PositionFlags as F, PositionRecord};
use shakmaty::Square;

fn game(pgn: &str) -> NewGame {
    index_game(
        RawGame {
            text: pgn.as_bytes().to_vec(),
            line: 1,
            ..RawGame::default()
        },
        0,
    )
}

/// The position reached by a sequence of SAN moves (following children by move text).
fn find<'a>(g: &'a NewGame, path: &[&str]) -> &'a PositionRecord {
    let mut at = 0usize;
    for san in path {
        let board = shakmaty::Chess::default();
        let _ = board;
        let next = g
            .positions
            .iter()
            .enumerate()
            .filter(|(_, p)| p.parent == at as u32)
            .find(|(i, _)| san_of(g, *i) == *san)
            .unwrap_or_else(|| panic!("no move {san} after {path:?}"));
        at = next.0;
    }
    &g.positions[at]
}

/// SAN of the move leading to position `i`, recomputed from the parent's FEN.
fn san_of(g: &NewGame, i: usize) -> String {
    use shakmaty::{CastlingMode, Chess, fen::Fen, san::San};
    let p = &g.positions[i];
    let parent = &g.positions[p.parent as usize];
    let pos: Chess = Fen::from_ascii(parent.fen().as_bytes())
        .unwrap()
        .into_position(CastlingMode::Chess960)
        .unwrap();
    match p.mv.to_move() {
        Some(m) => San::from_move(&pos, m).to_string(),
        None => "--".into(),
    }
}

#[test]
fn depth_and_move_indexes() {
    let g = game("1. e4 (1. d4 Nf6 (1...d5 2. c4)) (1. Nf3 d5) 1...e5 2. d4 *");
    assert!(g.issues.is_empty(), "{:?}", g.issues);
    assert_eq!(find(&g, &["d4"]).depth, 1);
    assert_eq!(find(&g, &["e4", "e5", "d4"]).depth, 0);
    assert_eq!(find(&g, &["e4"]).child_index, 0, "1.e4 is the primary move");
    assert_eq!(find(&g, &["d4"]).child_index, 1);
    assert_eq!(find(&g, &["Nf3"]).child_index, 2);
    assert_eq!(find(&g, &["d4", "Nf6"]).child_index, 0);
    assert_eq!(find(&g, &["d4", "d5"]).child_index, 1);
    assert_eq!(find(&g, &["d4", "d5"]).depth, 2);
    assert_eq!(find(&g, &["d4", "d5", "c4"]).depth, 2);
    assert_eq!(g.positions[0].children, 3);
    assert!(find(&g, &["e4", "e5", "d4"]).flags.contains(F::MAINLINE));
    assert!(find(&g, &["d4", "Nf6"]).flags.contains(F::VARIATION));
}

#[test]
fn virtual_mainline() {
    let g = game("1.e4 (1.d4 d5) c5 (1...e5 2.Nf3 (2.f4 d6) d6) *");
    let vml = |path: &[&str]| find(&g, path).flags.contains(F::VIRTUAL_MAINLINE);
    assert!(vml(&[]));
    assert!(vml(&["e4"]));
    assert!(vml(&["e4", "c5"]));
    assert!(vml(&["e4", "e5"]));
    assert!(vml(&["e4", "e5", "Nf3"]));
    assert!(vml(&["e4", "e5", "Nf3", "d6"]));
    assert!(!vml(&["d4"]));
    assert!(!vml(&["d4", "d5"]));
    assert!(!vml(&["e4", "e5", "f4"]));
    assert!(!vml(&["e4", "e5", "f4", "d6"]));
    let count = g
        .positions
        .iter()
        .filter(|p| p.flags.contains(F::VIRTUAL_MAINLINE))
        .count();
    assert_eq!(count, 6, "exactly the initial position and five others");
}

#[test]
fn position_ids_follow_the_reference_preorder() {
    // The conformance README's examples.
    let g = game("1.e4 (1.d4 d5) e5 2.Nf3 *");
    let ids: Vec<String> = (1..g.positions.len()).map(|i| san_of(&g, i)).collect();
    assert_eq!(ids, ["e4", "e5", "Nf3", "d4", "d5"]);
    let g = game(
        "1.e4 (1.d4 d5 (1...Nf6 2.c4 (2.Nf3)) 2.c4 (2.Nf3 Nf6)) e5 (1...c5 2.Nf3 (2.c3)) 2.Nf3 *",
    );
    let ids: Vec<String> = (1..g.positions.len()).map(|i| san_of(&g, i)).collect();
    assert_eq!(
        ids,
        [
            "e4", "e5", "Nf3", "c5", "Nf3", "c3", "d4", "d5", "c4", "Nf3", "Nf6", "Nf6", "c4",
            "Nf3"
        ]
    );
    // Without variations positionid == ply.
    let g = game("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *");
    assert!(
        g.positions
            .iter()
            .enumerate()
            .all(|(i, p)| p.ply == i as u32)
    );
}

#[test]
fn variation_after_first_move_of_a_variation_is_detached() {
    let g = game("1.e4 e5 (1...c5 (1...e6 2.d4) 2.Nf3) 2.Nf3 *");
    assert_eq!(g.detached_variations, 1);
    assert!(g.issues.is_empty());
    // e4 e5 Nf3 | c5 Nf3: the e6/d4 line has no positions.
    assert_eq!(g.positions.len(), 6);
    assert!(g.positions.iter().all(|p| p.depth <= 1));
}

#[test]
fn flags_check_mate_stalemate() {
    let g = game("1. f3 e5 2. g4 Qh4# 0-1");
    let last = g.positions.last().unwrap();
    assert!(last.flags.contains(F::CHECK) && last.flags.contains(F::MATE));
    assert!(last.flags.contains(F::TERMINAL));
    assert_eq!(g.meta.unwrap().result, cqldb_storage::GameResult::BlackWins);
    let g = game("[SetUp \"1\"]\n[FEN \"7k/8/6K1/8/8/8/8/5Q2 w - - 0 1\"]\n\n1. Qf7 *");
    assert!(g.positions[1].flags.contains(F::STALEMATE));
    assert!(!g.positions[1].flags.contains(F::CHECK));
    assert!(
        !g.positions[0].flags.contains(F::STALEMATE),
        "only terminal positions"
    );
}

#[test]
fn fen_start_null_moves_and_move_numbers() {
    let g = game("[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 17\"]\n\n17... Kd7 18. -- Kc6 19. Z0 Kb5 *");
    assert!(g.issues.is_empty(), "{:?}", g.issues);
    assert_eq!(g.positions.len(), 6);
    assert_eq!(g.positions[0].move_number, 17);
    assert!(!g.positions[0].flags.contains(F::WHITE_TO_MOVE));
    let null = &g.positions[2];
    assert_eq!(null.mv.kind(), Some(MoveKind::Null));
    assert_eq!(
        null.mv.from(),
        Some(Square::E1),
        "null move = king from its square to itself"
    );
    assert_eq!(null.board, g.positions[1].board);
}

#[test]
fn castling_with_zeros_and_en_passant() {
    let g = game("1. e4 Nf6 2. e5 d5 3. exd6 e6 4. Nf3 Be7 5. Bc4 0-0 6. 0-0 *");
    assert!(g.issues.is_empty(), "{:?}", g.issues);
    let ep = &g.positions[5];
    assert_eq!(ep.mv.kind(), Some(MoveKind::EnPassant));
    assert_eq!(ep.mv.capture(), Some(shakmaty::Role::Pawn));
    assert_eq!(g.positions[10].mv.kind(), Some(MoveKind::Castle));
    assert_eq!(g.positions[11].mv.kind(), Some(MoveKind::Castle));
}

#[test]
fn illegal_move_keeps_the_legal_prefix_and_marks_it() {
    let g = game("[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 Nf3 4. d4 *");
    assert_eq!(g.positions.len(), 6, "the five legal moves are kept");
    assert_eq!(g.issues.len(), 1);
    let i = &g.issues[0];
    assert_eq!((i.kind.as_str(), i.line, i.column), ("illegal-move", 3, 28));
    assert!(g.positions[5].flags.contains(F::TRUNCATED));
    // An error inside a variation ends the game there, as in the reference CQL (conformance
    // game studies.pgn 1416): what was read before it stays, nothing after it is read.
    let g = game("1. e4 (1. d4 Ke3 2. c4) e5 2. Nf3 *");
    assert_eq!(g.positions.len(), 3, "root, 1.e4 and 1.d4");
    assert_eq!(g.issues.len(), 1);
    assert_eq!(g.issues[0].kind, "illegal-move");
    assert!(g.issues[0].message.contains("rest of the game"));
    assert!(find(&g, &["d4"]).flags.contains(F::TRUNCATED));
}

#[test]
fn ambiguous_move_is_reported() {
    let g = game("[FEN \"4k3/8/8/8/8/8/8/N1N1K3 w - - 0 1\"]\n\n1. Nb3 *");
    assert_eq!(g.issues[0].kind, "ambiguous-move");
    assert_eq!((g.issues[0].line, g.issues[0].column), (3, 4));
    assert_eq!(g.positions.len(), 1);
}

#[test]
fn malformed_games_are_reported_with_their_place() {
    let kinds = |pgn: &str| -> Vec<(String, u32, u32)> {
        game(pgn)
            .issues
            .iter()
            .map(|i| (i.kind.clone(), i.line, i.column))
            .collect()
    };
    assert_eq!(
        kinds("[Event \"x\"]\n1. e4 {never closed\n2. d4"),
        [("unterminated-comment".to_string(), 2, 7)]
    );
    assert_eq!(
        kinds("1. e4 (1. d4 d5 (1... c5\n2. c4"),
        [("unterminated-variation".to_string(), 1, 17)]
    );
    assert_eq!(
        kinds("1. e4 e5 2. Nf3 @@ Nc6 *"),
        [("unknown-token".to_string(), 1, 17)]
    );
    assert_eq!(
        kinds("[Event \"x\"]\n[FEN \"not a fen\"]\n\n1. e4 *"),
        [("bad-fen".to_string(), 2, 1)]
    );
    assert_eq!(
        kinds("[Event \"x\"]\n[White \"y\"]\n"),
        [("no-movetext".to_string(), 3, 1)]
    );
    assert_eq!(
        kinds("[Event \"x\"]\n\n) 1. e4 *"),
        [("unmatched-paren".to_string(), 3, 1)]
    );
    assert_eq!(
        kinds("[Variant \"crazyhouse\"]\n\n1. e4 *"),
        [("unsupported-variant".to_string(), 1, 1)]
    );
    // The unknown token is skipped, the rest of the game is kept.
    assert_eq!(game("1. e4 e5 2. Nf3 @@ Nc6 *").positions.len(), 5);
}

#[test]
fn line_ends_bom_and_latin1() {
    let crlf = game("\u{feff}[White \"Ljubojevi\u{e6}\"]\r\n\r\n1. e4 e5\r\n2. Nf3 Qh4 *\r\n");
    assert_eq!(crlf.tags[0].1, "Ljubojeviæ");
    assert_eq!(crlf.positions.len(), 5);
    let mut latin1 = b"[White \"Ljubojevi\xe6\"]\r1. e4 e5\r2. Nf3 Qxf3 *\r".to_vec();
    latin1.shrink_to_fit();
    let g = index_game(
        RawGame {
            text: latin1,
            line: 1,
            ..RawGame::default()
        },
        0,
    );
    assert_eq!(g.tags[0].1, "Ljubojeviæ", "Latin-1 decoded");
    assert_eq!(g.issues[0].kind, "illegal-move");
    assert_eq!(
        (g.issues[0].line, g.issues[0].column),
        (3, 8),
        "lone CR ends a line"
    );
}

#[test]
fn ten_thousand_nested_variations_and_huge_comments() {
    use shakmaty::{Chess, Position, san::San};
    // Level k is a two-move line whose first move is an alternative to the second move of level
    // k-1, so every level is a real variation one deeper than the last.
    let depth = 10_000;
    let mut pgn = String::new();
    let mut before_b = Chess::default(); // the position before the previous level's second move
    let first = before_b.legal_moves()[0];
    let mut b = first;
    for level in 0..depth {
        // Alternative to `b` from `before_b` (at level 0, `b` is the main-line move itself).
        let moves = before_b.legal_moves();
        let after = |pos: &Chess, m: shakmaty::Move| {
            let mut p = pos.clone();
            p.play_unchecked(m);
            p
        };
        let mobile = |pos: &Chess| pos.legal_moves().len() >= 2;
        let good = |pos: &Chess| {
            pos.legal_moves()
                .iter()
                .filter(|m| mobile(&after(pos, **m)))
                .count()
                >= 2
        };
        let a = if level == 0 {
            b
        } else {
            *moves
                .iter()
                .find(|m| **m != b && good(&after(&before_b, **m)))
                .expect("an alternative move")
        };
        if level > 0 {
            pgn.push_str("( ");
        }
        pgn.push_str(&San::from_move(&before_b, a).to_string());
        pgn.push(' ');
        let after_a = after(&before_b, a);
        let replies = after_a.legal_moves();
        let next_b = replies[level % replies.len()];
        pgn.push_str(&San::from_move(&after_a, next_b).to_string());
        pgn.push(' ');
        before_b = after_a;
        b = next_b;
    }
    pgn.push_str(&")".repeat(depth - 1));
    pgn.push_str(" {");
    pgn.push_str(&"x".repeat(5 << 20));
    pgn.push_str("} *");
    let g = game(&pgn);
    assert!(
        g.issues.is_empty(),
        "{:?}",
        &g.issues[..g.issues.len().min(3)]
    );
    assert_eq!(g.detached_variations, 0);
    let max_depth = g.positions.iter().map(|p| p.depth).max().unwrap();
    assert_eq!(max_depth as usize, depth - 1);
    assert_eq!(g.positions.len(), 1 + 2 * depth);
    assert_eq!(g.comments.len(), 1);
    assert_eq!(g.comments[0].len, 5 << 20);
    // The same text through storage: no recursion anywhere on the way.
    let dir = tempfile::tempdir().unwrap();
    let mut w = cqldb_storage::DbWriter::open(dir.path(), Default::default()).unwrap();
    w.push_game(g.clone()).unwrap();
    w.commit().unwrap();
    let db = cqldb_storage::Database::open(dir.path()).unwrap();
    let mut back = db.game_positions(1).unwrap().positions;
    back.iter_mut().for_each(|p| p.zobrist = 0); // derived on decode only
    assert_eq!(back, g.positions);
}

#[test]
fn lenient_notations_are_read() {
    // UCI moves, a capture without `x` (as the reference CQL accepts), evaluation symbols.
    let g = game("1. e2e4 e7e5 2. g1f3 d7d5 3. ed5 Qd5 4. Nc3 Qe6 +- 5. Nb5 Qc6 -+ *");
    assert!(g.issues.is_empty(), "{:?}", g.issues);
    assert_eq!(g.positions.len(), 11);
    assert_eq!(g.positions[5].mv.capture(), Some(shakmaty::Role::Pawn));
    assert_eq!(g.nags.iter().map(|n| n.nag).collect::<Vec<_>>(), [18, 19]);
    // A BOM before the first tag does not split the game (through the splitter).
    let mut sp = cqldb_indexer::split::Splitter::new(
        &b"\xef\xbb\xbf[Event \"a\"]\n[Site \"b\"]\n\n1. e4 *\n"[..],
    );
    let first = sp.next_game().unwrap().unwrap();
    assert!(sp.next_game().unwrap().is_none());
    let g = index_game(first, 0);
    assert_eq!(g.tags.len(), 2);
    assert!(g.issues.is_empty());
}

#[test]
fn conformance_corpus_reads_like_the_reference() {
    // The reference CQL read every game of these files; game numbering must agree with it.
    let dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../shared/conformance/cql/corpus");
    if !dir.exists() {
        eprintln!("skipping: {} not present", dir.display());
        return;
    }
    // Games the reference reads without complaint but we cannot read fully: the reference
    // resolves ambiguous SAN, accepts castling through pieces, `1... Nxg5` with White to move,
    // stray `)`... Pinned so any change shows; to be settled by the CQL conformance work.
    let known_divergences: &[(&str, &[usize])] = &[(
        "studies.pgn",
        &[
            943, 951, 1321, 1368, 1381, 1388, 1405, 1416, 1418, 1425, 1505, 1579,
        ],
    )];
    for (file, games, positions) in [
        ("games.pgn", 2566, 236_233),
        ("studies.pgn", 1648, 0),
        ("setup.pgn", 961, 8515),
        ("nullmove.pgn", 4, 109),
    ] {
        let mut sp =
            cqldb_indexer::split::Splitter::new(std::fs::File::open(dir.join(file)).unwrap());
        let mut n = 0;
        let mut total = 0;
        let mut broken = Vec::new();
        while let Some(raw) = sp.next_game().unwrap() {
            n += 1;
            let g = index_game(raw, 0);
            total += g.positions.len();
            // A result inside a variation ends the game for us exactly as for the reference.
            if g.issues
                .iter()
                .any(|i| i.kind != "unknown-token" && i.kind != "result-in-variation")
            {
                broken.push((n, g.issues.clone()));
            }
        }
        assert_eq!(n, games, "{file}");
        if positions > 0 {
            assert_eq!(total, positions, "{file}");
        }
        let broken: Vec<usize> = broken.iter().map(|(n, _)| *n).collect();
        let expected = known_divergences
            .iter()
            .find(|(f, _)| *f == file)
            .map_or(&[][..], |(_, list)| *list);
        assert_eq!(broken, expected, "{file}");
    }
}
