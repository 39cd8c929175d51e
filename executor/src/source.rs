//! Where games come from: a PGN input read on the fly (parsed by the indexer's tree builder,
//! never stored) or a database's segments, as [`Game`]s for the engine.

use anyhow::{Context, Result};

use crate::Game;
use cqldb_indexer::Input;
use cqldb_indexer::flatten::index_game;
use cqldb_indexer::split::Splitter;
use cqldb_storage::Database;

/// Reads every game of a PGN input in order and hands it to `f` (numbers start at 1).
/// Memory holds one game at a time.
pub fn pgn_games(
    input: &Input,
    variations: bool,
    mut f: impl FnMut(Game) -> Result<()>,
) -> Result<u64> {
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let reader = input
        .open(counter)
        .with_context(|| format!("cannot open {}", input.name()))?;
    let mut split = Splitter::new(reader);
    let mut n = 0u64;
    while let Some(raw) = split
        .next_game()
        .with_context(|| format!("reading {}", input.name()))?
    {
        n += 1;
        f(game_from_pgn(n, raw, variations))?;
    }
    Ok(n)
}

/// Reads every game of a database in order (numbers start at 1). Tags are read from the stored
/// text only when `with_tags` is set.
pub fn db_games(
    db: &Database,
    variations: bool,
    with_tags: bool,
    mut f: impl FnMut(Game) -> Result<()>,
) -> Result<u64> {
    let mut n = 0u64;
    let mut failure = None;
    for (_, seg) in db.segments() {
        seg.for_each_game(with_tags, |_, rows| {
            if failure.is_some() {
                return Ok(());
            }
            n += 1;
            if let Err(e) = f(game_from_rows(n, rows, with_tags, variations)) {
                failure = Some(e);
            }
            Ok(())
        })?;
        if let Some(e) = failure.take() {
            return Err(e);
        }
    }
    Ok(n)
}

/// A game read from PGN text, with its comments and NAGs.
pub fn game_from_pgn(number: u64, raw: cqldb_indexer::split::RawGame, variations: bool) -> Game {
    let g = index_game(raw, 0);
    let termination = cqldb_indexer::tags::termination(&g.text);
    let result = g
        .meta
        .map(|m| m.result)
        .filter(|r| *r != cqldb_storage::GameResult::Unknown)
        .map(|r| r.as_pgn().to_owned());
    let comments = g
        .comments
        .iter()
        .map(|c| {
            (
                c.position,
                c.placement,
                comment_text(&g.text, c.start, c.len),
            )
        })
        .collect();
    let nags = g.nags.iter().map(|n| (n.position, n.nag)).collect();
    Game::new(number, g.positions, g.tags, variations)
        .with_notes(comments, nags)
        .with_result(result)
        .with_termination(termination)
}

/// A game from index rows; tags, comments and NAGs only with `with_text`.
pub fn game_from_rows(
    number: u64,
    rows: cqldb_storage::GameRows<'_>,
    with_text: bool,
    variations: bool,
) -> Game {
    let game_tags = if with_text {
        cqldb_indexer::tags::scan_tags(rows.text)
    } else {
        Vec::new()
    };
    let result = (rows.result != cqldb_storage::GameResult::Unknown)
        .then(|| rows.result.as_pgn().to_owned());
    let game = Game::new(number, rows.positions, game_tags, variations).with_result(result);
    if !with_text {
        return game;
    }
    let game = game.with_termination(cqldb_indexer::tags::termination(rows.text));
    let comments = rows
        .comments
        .iter()
        .map(|c| {
            (
                c.position - rows.first,
                c.placement,
                comment_text(rows.text, c.start, c.len),
            )
        })
        .collect();
    let nags = rows
        .nags
        .iter()
        .map(|n| (n.position - rows.first, n.nag))
        .collect();
    game.with_notes(comments, nags)
}

fn comment_text(text: &[u8], start: u32, len: u32) -> String {
    let (s, e) = (start as usize, start as usize + len as usize);
    text.get(s..e)
        .map(cqldb_indexer::tags::decode_text)
        .unwrap_or_default()
}
