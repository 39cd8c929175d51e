//! Games for the query engine, streamed from PGN (read on the fly) or from an index.

use anyhow::{Context, Result};
use cqldb_executor::Game;
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
        let g = index_game(raw, 0);
        f(Game::new(n, g.positions, g.tags, variations))?;
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
        seg.for_each_game(with_tags, |_, positions, text| {
            if failure.is_some() {
                return Ok(());
            }
            n += 1;
            let tags = if with_tags {
                cqldb_indexer::tags::scan_tags(text)
            } else {
                Vec::new()
            };
            if let Err(e) = f(Game::new(n, positions.to_vec(), tags, variations)) {
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
