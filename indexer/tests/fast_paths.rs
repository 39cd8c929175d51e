//! Differential test of the SAN fast path: over every position of real games (variations
//! included), every legal move written the way PGN writers write it, and deliberately wrong
//! variants of it (no disambiguation, full disambiguation, flipped capture mark, other promotion),
//! `fast_move` either declines or returns exactly what shakmaty's `San::to_move` returns.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use cqldb_indexer::Input;
use cqldb_indexer::san::fast_move;
use cqldb_indexer::split::Splitter;
use cqldb_indexer::tree::build;
use shakmaty::san::San;
use shakmaty::{Chess, Position, Role, Square};

fn data(rel: &str) -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../shared/data")
    .join(rel)
}

fn pgn_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("data dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            pgn_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "pgn" || e == "zst") {
            out.push(p);
        }
    }
}

#[derive(Default)]
struct Tally {
    checked: u64,
    fast: u64,
    real_fast: u64,
    real: u64,
}

fn check(pos: &Chess, san: San, tally: &mut Tally) {
    tally.checked += 1;
    if let Some(m) = fast_move(&san, pos, pos.is_check()) {
        tally.fast += 1;
        assert_eq!(
            san.to_move(pos),
            Ok(m),
            "{san} in {}",
            shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
        );
    }
}

fn variants(pos: &Chess, tally: &mut Tally) {
    for m in pos.legal_moves() {
        let san = San::from_move(pos, m);
        tally.real += 1;
        if fast_move(&san, pos, pos.is_check()).is_some() {
            tally.real_fast += 1;
        }
        check(pos, san, tally);
        if let San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        } = san
        {
            let from = m.from().unwrap_or(Square::A1);
            let with = |file, rank, capture, promotion| San::Normal {
                role,
                file,
                rank,
                capture,
                to,
                promotion,
            };
            check(pos, with(None, None, capture, promotion), tally);
            check(
                pos,
                with(Some(from.file()), Some(from.rank()), capture, promotion),
                tally,
            );
            check(pos, with(file, rank, !capture, promotion), tally);
            check(pos, with(file, rank, capture, None), tally);
            check(pos, with(file, rank, capture, Some(Role::Knight)), tally);
            check(pos, with(file, rank, capture, Some(Role::King)), tally);
        }
    }
    // Every piece kind to every square, capture mark as the board says.
    for to in Square::ALL {
        for role in Role::ALL {
            let capture = pos.board().occupied().contains(to);
            let san = San::Normal {
                role,
                file: None,
                rank: None,
                capture,
                to,
                promotion: None,
            };
            check(pos, san, tally);
        }
    }
}

#[test]
fn fast_path_agrees_with_shakmaty_on_real_games() {
    let mut files = Vec::new();
    pgn_files(&data("variations"), &mut files);
    files.push(data("large/smallmaster_chessgames_step2.pgn.zst"));
    let mut tally = Tally::default();
    let mut positions = 0u64;
    for file in files {
        let input = Input::Path(file.clone());
        let source = input.open(Arc::new(AtomicU64::new(0))).expect("open");
        let mut splitter = Splitter::new(source);
        // Enough games of the big file to meet promotions, pins and checks; all of the others.
        let mut games = 0;
        while let Ok(Some(raw)) = splitter.next_game() {
            games += 1;
            if games > 1500 {
                break;
            }
            let tree = build(&raw.text);
            for node in &tree.nodes {
                positions += 1;
                variants(&node.pos, &mut tally);
            }
        }
    }
    assert!(positions > 100_000, "only {positions} positions read");
    // The point of the fast path: nearly every move as written in a game takes it.
    let share = tally.real_fast as f64 / tally.real as f64;
    assert!(
        share > 0.97,
        "fast path took {share:.3} of {} real moves",
        tally.real
    );
    eprintln!(
        "{positions} positions, {} SANs checked, {} answered fast; {:.3} of real moves fast",
        tally.checked, tally.fast, share
    );
}
