//! Every file of ../shared/data/edge (malformed and unusual PGN) ingests without a panic, and its
//! game and problem counts are pinned here, so a change in how bad input is read shows up as a
//! diff of this table. Regenerate the table with `CQLDB_PRINT_EDGE=1 cargo test --release -p
//! cqldb-indexer --test edge_data -- --nocapture` after checking the new counts are right.

use std::path::{Path, PathBuf};

use cqldb_indexer::{IngestOptions, Input, Progress, ingest};
use cqldb_storage::{Database, DbWriter, WriterOptions};

fn edge_dir() -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../shared/data/edge")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// (file relative to edge/, games, games with problems, problems)
const EXPECTED: &[(&str, u64, u64, u64)] = &[
    ("kokopu/doc_src/tutorials/chess960.pgn", 1, 0, 0),
    ("kokopu/doc_src/tutorials/example.pgn", 2, 0, 0),
    (
        "kokopu/test/resources/games/all-headers/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/all-headers-cleared/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/annotations-1/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/annotations-2/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/base/database-options.pgn",
        1,
        0,
        0,
    ),
    ("kokopu/test/resources/games/base/database.pgn", 1, 0, 0),
    (
        "kokopu/test/resources/games/blank-headers-1/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/blank-headers-2/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/cleared-variation/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/custom-initial-position-1/database-options.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/custom-initial-position-1/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/custom-initial-position-2/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/custom-initial-position-3/database.pgn",
        1,
        0,
        0,
    ),
    ("kokopu/test/resources/games/empty/database.pgn", 1, 0, 0),
    (
        "kokopu/test/resources/games/escaped-text/database.pgn",
        1,
        1,
        2,
    ),
    (
        "kokopu/test/resources/games/long-short-comments-variations-1/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/long-short-comments-variations-2/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/long-short-comments-variations-3/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/missing-headers-1/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/missing-headers-2/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/missing-headers-3/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/null-moves/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/promoted-variation/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/removed-variation/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/shortened-variation-at-end/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/shortened-variation-from-beginning-1/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/shortened-variation-from-beginning-2/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/sub-variations/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/swapped-variations/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/variant-antichess/database.pgn",
        1,
        1,
        1,
    ),
    (
        "kokopu/test/resources/games/variant-chess960/database.pgn",
        1,
        0,
        0,
    ),
    (
        "kokopu/test/resources/games/variant-horde/database.pgn",
        1,
        1,
        1,
    ),
    (
        "kokopu/test/resources/games/variant-no-king/database.pgn",
        1,
        1,
        1,
    ),
    ("kokopu/test/resources/pgns/antichess/database.pgn", 2, 2, 2),
    ("kokopu/test/resources/pgns/bom/database.pgn", 1, 0, 0),
    ("kokopu/test/resources/pgns/chess960/database.pgn", 4, 1, 1),
    ("kokopu/test/resources/pgns/empty/database.pgn", 0, 0, 0),
    ("kokopu/test/resources/pgns/headers/database.pgn", 16, 0, 0),
    ("kokopu/test/resources/pgns/horde/database.pgn", 1, 1, 1),
    (
        "kokopu/test/resources/pgns/linebreak-linux/database.pgn",
        1,
        1,
        1,
    ),
    (
        "kokopu/test/resources/pgns/linebreak-mac/database.pgn",
        1,
        1,
        1,
    ),
    (
        "kokopu/test/resources/pgns/linebreak-windows/database.pgn",
        1,
        1,
        1,
    ),
    ("kokopu/test/resources/pgns/mini1/database.pgn", 1, 0, 0),
    ("kokopu/test/resources/pgns/mini2/database.pgn", 2, 0, 0),
    ("kokopu/test/resources/pgns/misc/database.pgn", 15, 3, 8),
    (
        "kokopu/test/resources/pgns/missing-last-end-of-game/database.pgn",
        2,
        0,
        0,
    ),
    (
        "kokopu/test/resources/pgns/optional-kings/database.pgn",
        3,
        3,
        3,
    ),
    (
        "kokopu/test/resources/pgns/redos-comment/database.pgn",
        1,
        1,
        1,
    ),
    (
        "kokopu/test/resources/pgns/redos-header/database.pgn",
        1,
        1,
        1,
    ),
    (
        "kokopu/test/resources/pgns/semantic-error/database.pgn",
        7,
        6,
        6,
    ),
    (
        "kokopu/test/resources/pgns/syntactic-error-1/database.pgn",
        23,
        13,
        26,
    ),
    (
        "kokopu/test/resources/pgns/syntactic-error-2/database.pgn",
        1,
        1,
        5,
    ),
    (
        "kokopu/test/resources/pgns/syntactic-error-3/database.pgn",
        1,
        1,
        7,
    ),
    (
        "kokopu/test/resources/pgns/syntactic-error-4/database.pgn",
        2,
        1,
        1,
    ),
    (
        "kokopu/test/resources/pgns/syntactic-error-5/database.pgn",
        2,
        1,
        1,
    ),
    (
        "kokopu/test/resources/pgns/tag-name-token-collision/database.pgn",
        6,
        0,
        0,
    ),
    ("pgn-extract-tests/barnes-horton.pgn", 1, 0, 0),
    ("pgn-extract-tests/fischer.pgn", 34, 0, 0),
    ("pgn-extract-tests/fools-mate.pgn", 1, 0, 0),
    ("pgn-extract-tests/najdorf.pgn", 8, 0, 0),
    ("pgn-extract-tests/nested-comment.pgn", 1, 1, 10),
    ("pgn-extract-tests/petrosian.pgn", 35, 0, 0),
    ("pgn-extract-tests/test-7.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-C.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-F-text.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-F.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-L1.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-L2.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-N.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-P.pgn", 11, 0, 0),
    ("pgn-extract-tests/test-R.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-Ta.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-V.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-addhashcode.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-allownullmoves.pgn", 2, 0, 0),
    ("pgn-extract-tests/test-checkmate.pgn", 2, 0, 0),
    ("pgn-extract-tests/test-e.pgn", 6, 0, 0),
    ("pgn-extract-tests/test-evaluation.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-f1.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-f2.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-fencomments.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-fifty.pgn", 2, 0, 0),
    ("pgn-extract-tests/test-fixresulttags-in.pgn", 5, 0, 0),
    ("pgn-extract-tests/test-fuzzydepth.pgn", 4, 0, 0),
    ("pgn-extract-tests/test-hash.pgn", 35, 0, 0),
    ("pgn-extract-tests/test-long-line.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-matchplylimit.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-nagcomments.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-nobadresults.pgn", 9, 0, 0),
    ("pgn-extract-tests/test-nochecks.pgn", 2, 0, 0),
    ("pgn-extract-tests/test-nomovenumbers.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-noresults.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-notags.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-plycount.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-plylimit.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-promotion-in.pgn", 8, 0, 0),
    ("pgn-extract-tests/test-repetition.pgn", 12, 0, 0),
    ("pgn-extract-tests/test-s.pgn", 3, 0, 0),
    ("pgn-extract-tests/test-selectonly.pgn", 34, 0, 0),
    ("pgn-extract-tests/test-setup-in.pgn", 2, 0, 0),
    ("pgn-extract-tests/test-splitvariants.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-stalemate.pgn", 3, 0, 0),
    ("pgn-extract-tests/test-stopafter.pgn", 34, 0, 0),
    ("pgn-extract-tests/test-t.pgn", 6, 0, 0),
    ("pgn-extract-tests/test-ucE.pgn", 6, 0, 0),
    ("pgn-extract-tests/test-ucS.pgn", 3, 0, 0),
    ("pgn-extract-tests/test-ucW.pgn", 1, 0, 0),
    ("pgn-extract-tests/test-w.pgn", 1, 0, 0),
    ("pgn4people-tests/Black_alternatives_only.pgn", 1, 0, 0),
    ("pgn4people-tests/Excess_unmatched_open_brace.pgn", 1, 0, 0),
    (
        "pgn4people-tests/Initial_unmatched_closing_brace.pgn",
        1,
        1,
        1,
    ),
    (
        "pgn4people-tests/Mainline_only_end_on_Black_move.pgn",
        1,
        0,
        0,
    ),
    (
        "pgn4people-tests/Mainline_only_end_on_White_move.pgn",
        1,
        0,
        0,
    ),
    ("pgn4people-tests/No_move_text.pgn", 1, 1, 1),
    (
        "pgn4people-tests/Other_whitespace_after_first_game.pgn",
        3,
        0,
        0,
    ),
    (
        "pgn4people-tests/Other_whitespace_between_headers_and_movetext.pgn",
        1,
        0,
        0,
    ),
    ("pgn4people-tests/R0_25.pgn", 1, 0, 0),
    ("pgn4people-tests/Start_with_closing_paren.pgn", 1, 1, 1),
    ("pgn4people-tests/Start_with_open_paren.pgn", 1, 1, 2),
    ("pgn4people-tests/Three_games_one_file.pgn", 3, 0, 0),
    ("pgn4people-tests/Two_blank_lines_after_header.pgn", 1, 0, 0),
    ("pgn4people-tests/White_alternatives_only.pgn", 1, 0, 0),
    (
        "pgn4people-tests/Whitespace_on_line_after_movetext.pgn",
        1,
        0,
        0,
    ),
    (
        "pgn4people-tests/test_pgn_1_simple_one_variation.pgn",
        1,
        0,
        0,
    ),
    (
        "pgn4people-tests/test_pgn_2_simple_repeated_variations_and_depth_2_variation.pgn",
        1,
        0,
        0,
    ),
    (
        "pgn4people-tests/test_pgn_3_space_between_movenumber_and_movetext.pgn",
        1,
        0,
        0,
    ),
    ("pgn4people-tests/test_pgn_4.pgn", 1, 0, 0),
    ("pgn4people-tests/test_pgn_5.pgn", 1, 0, 0),
    ("pgn4people-tests/test_pgn_6.pgn", 1, 0, 0),
    ("pgn4people-tests/test_pgn_6a.pgn", 1, 0, 0),
    ("pychess/3fold.pgn", 2, 0, 0),
    ("pychess/50.pgn", 1, 0, 0),
    ("pychess/50halfmoves.pgn", 1, 0, 0),
    ("pychess/a.pgn", 1, 0, 0),
    ("pychess/annotated.pgn", 1, 0, 0),
    ("pychess/atomic.pgn", 10, 10, 10),
    ("pychess/b.pgn", 1, 0, 0),
    ("pychess/badpgn.pgn", 1, 1, 4),
    ("pychess/bilbao.pgn", 1, 0, 0),
    ("pychess/black.pgn", 1, 0, 0),
    ("pychess/c.pgn", 1, 0, 0),
    ("pychess/chess960rwch.pgn", 20, 0, 0),
    ("pychess/d.pgn", 1, 0, 0),
    ("pychess/draw.pgn", 1, 0, 0),
    ("pychess/e.pgn", 1, 0, 0),
    ("pychess/eco_da.pgn", 500, 0, 0),
    ("pychess/eco_de.pgn", 500, 2, 2),
    ("pychess/eco_en.pgn", 3404, 1, 1),
    ("pychess/eco_es.pgn", 500, 0, 0),
    ("pychess/eco_fr.pgn", 500, 0, 0),
    ("pychess/eco_hu.pgn", 569, 0, 0),
    ("pychess/f.pgn", 1, 0, 0),
    ("pychess/fenSetup.pgn", 1, 0, 0),
    ("pychess/insufficient_material.pgn", 1, 0, 0),
    ("pychess/mate.pgn", 1, 0, 0),
    ("pychess/mate_in_2.pgn", 166, 0, 0),
    ("pychess/mate_in_3.pgn", 375, 0, 0),
    ("pychess/mate_in_4.pgn", 373, 0, 0),
    ("pychess/material.pgn", 1, 0, 0),
    ("pychess/promotion.pgn", 1, 0, 0),
    ("pychess/schess.pgn", 504, 504, 504),
    ("pychess/sittuyin.pgn", 3, 3, 3),
    ("pychess/threefold.pgn", 1, 0, 0),
    ("pychess/zh.pgn", 83, 83, 83),
    ("python-chess/anastasian-lewis.pgn", 1, 0, 0),
    ("python-chess/antichess-programfox.pgn", 2, 2, 2),
    ("python-chess/chessbase-empty-line.pgn", 1, 0, 0),
    ("python-chess/cutechess-fischerrandom.pgn", 4, 0, 0),
    ("python-chess/kasparov-deep-blue-1997.pgn", 6, 0, 0),
    (
        "python-chess/knightvuillaume-jannlee-zh-lichess.pgn",
        1,
        1,
        1,
    ),
    ("python-chess/molinari-bordais-1979.pgn", 1, 0, 0),
    ("python-chess/nepomniachtchi-liren-game1.pgn", 1, 0, 0),
    ("python-chess/saturs-jannlee-zh-lichess.pgn", 1, 1, 1),
    ("python-chess/stockfish-learning.pgn", 1, 0, 0),
    ("python-chess/uci-moves.pgn", 1, 0, 0),
    ("python-chess/utf8-bom.pgn", 2, 0, 0),
    ("python-chess/variations-nags-and-comments.pgn", 1, 0, 0),
    ("scid-gtest/res_gameLatin1.pgn", 1, 0, 0),
    ("scid-gtest/res_gameLatin1expected.pgn", 1, 0, 0),
    ("scid-gtest/res_gameUTF8.pgn", 1, 0, 0),
    (
        "tcec_chess960/TCEC_Season_16_-_Frc_Cpu_League_1.pgn.zst",
        90,
        0,
        0,
    ),
    ("tcec_chess960/TCEC_Season_16_-_Frc_Sufi.pgn.zst", 20, 0, 0),
    (
        "tcec_chess960/TCEC_Season_19_-_Frc2_Final.pgn.zst",
        50,
        0,
        0,
    ),
    (
        "tcec_chess960/TCEC_Season_22_-_Bonus_Dfrc_1_Final.pgn.zst",
        50,
        0,
        0,
    ),
    (
        "tcec_chess960/TCEC_Season_26_-_Frc_No_Castling_Kibitzer_Bonus.pgn.zst",
        24,
        0,
        0,
    ),
    (
        "tcec_chess960/TCEC_Season_29_-_Frc_Decisive_Rapid_Bonus.pgn.zst",
        56,
        0,
        0,
    ),
    ("tcec_chess960/TCEC_Season_6_-_FRC.pgn.zst", 112, 0, 0),
];

#[test]
fn every_edge_file_ingests_with_pinned_counts() {
    let dir = edge_dir();
    if !dir.exists() {
        eprintln!("skipping: {} not present", dir.display());
        return;
    }
    let mut all = Vec::new();
    files(&dir, &mut all);
    let print = std::env::var_os("CQLDB_PRINT_EDGE").is_some();
    let mut got = Vec::new();
    for path in &all {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = DbWriter::open(tmp.path(), WriterOptions::default()).unwrap();
        let report = ingest(
            &[Input::Path(path.clone())],
            &mut w,
            IngestOptions::default(),
            &Progress::default(),
        )
        .unwrap();
        assert!(
            report.failures.is_empty(),
            "{}: {:?}",
            path.display(),
            report.failures
        );
        w.commit().unwrap();
        let db = Database::open(tmp.path()).unwrap();
        let stats = db.stats().unwrap();
        assert_eq!(stats.games, report.games);
        // Every stored game reads back exactly as it was indexed: re-indexing its stored text
        // gives the stored position table (board, Zobrist and flags included), real data from
        // Chess960 castling to null moves.
        for g in 1..=stats.games {
            let text = db.game_text(g).unwrap();
            let info = db.game_info(g).unwrap();
            let again = cqldb_indexer::flatten::index_game(
                cqldb_indexer::split::RawGame {
                    text,
                    line: info.line,
                    ..Default::default()
                },
                0,
            );
            let mut stored = db.game_positions(g).unwrap();
            // The indexer leaves Zobrist hashes to the decoder (checked against shakmaty in the
            // property tests).
            stored.positions.iter_mut().for_each(|p| p.zobrist = 0);
            assert_eq!(
                stored.positions,
                again.positions,
                "{} game {g}",
                path.display()
            );
            assert_eq!(stored.comments, again.comments);
            assert_eq!(u64::from(info.issues), again.issues.len() as u64);
        }
        let rel = path.strip_prefix(&dir).unwrap().display().to_string();
        got.push((rel, report.games, report.games_with_issues, stats.issues));
    }
    if print {
        for (f, g, gi, i) in &got {
            println!("    (\"{f}\", {g}, {gi}, {i}),");
        }
        return;
    }
    let expected: Vec<(String, u64, u64, u64)> = EXPECTED
        .iter()
        .map(|(f, g, gi, i)| (f.to_string(), *g, *gi, *i))
        .collect();
    let diff: Vec<String> = got
        .iter()
        .zip(&expected)
        .filter(|(g, e)| g != e)
        .map(|(g, e)| format!("got {g:?}, pinned {e:?}"))
        .collect();
    assert!(diff.is_empty(), "{}", diff.join("\n"));
    assert_eq!(got.len(), expected.len(), "number of edge files changed");
}
