//! Answering a batch of GTQL queries end to end: the entry points the binary, the tests and the
//! benchmarks share, over a tree file ([`answer_tree`]) or over a database's game trees
//! ([`answer_games`], planned: only the games the index scans leave are fed).

use cqldb_planner::gtql::GtqlQuery;
use cqldb_planner::plan::{RunStats, Scan};
use cqldb_storage::Database;
use cqldb_storage::gtl::Chunk;

use super::{Answer, GtlSource, ParallelPass, games};

/// How a batch of queries is answered.
#[derive(Copy, Clone, Debug)]
pub struct GtqlOptions {
    /// Answer nodes kept per query for listing (0: counts only).
    pub limit: usize,
    /// Threads evaluating the queries.
    pub threads: usize,
    /// What becomes of each segment's mapped pages once its games are fed: released by a
    /// command that reads its database once (at 10 M games, a pass over every game held
    /// 2.7 GB of them), kept by a process that answers many queries.
    pub pages: cqldb_storage::Pages,
}

/// What a batch of queries found.
#[derive(Debug)]
pub struct GtqlOutcome {
    /// Per query, in order.
    pub answers: Vec<Answer>,
    /// Nodes fed to the pass.
    pub nodes: u64,
}

/// The candidate positions of the batch's answers over a database's game trees (see
/// [`games::candidates`]); `None` with `full_scan` or where some query needs every game.
pub fn plan_games(queries: &[GtqlQuery], full_scan: bool) -> Option<Scan> {
    if full_scan {
        None
    } else {
        games::candidates(queries)
    }
}

/// The answers of `queries` (parsed with [`games::game_names`]) over the game trees of `db`,
/// feeding only the games with a position in `scan` (`None`: every game); with `stats`, each
/// scan operator and the feed are measured (`EXPLAIN ANALYZE`).
pub fn answer_games(
    db: &Database,
    queries: &[GtqlQuery],
    scan: Option<&Scan>,
    opts: GtqlOptions,
    stats: Option<&mut RunStats>,
) -> cqldb_storage::Result<GtqlOutcome> {
    let started = std::time::Instant::now();
    let listing = opts.limit > 0;
    let names = games::game_names();
    let mut pass = ParallelPass::new(
        queries.to_vec(),
        names.columns(),
        listing,
        opts.limit,
        opts.threads,
    );
    let mut stats = stats;
    // A database file that shrinks under the pass is an error naming it, not an answer
    // (`cqldb_storage::mapped`).
    let before = cqldb_storage::mapped::faults();
    let fed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let feed = games::Feed {
            listing,
            scan,
            pages: opts.pages,
        };
        games::feed_games_measured(db, queries, &mut pass, feed, stats.as_deref_mut())
    }));
    db.check_shrink(before)?;
    let nodes = match fed {
        Ok(nodes) => nodes?,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let answers = pass.finish();
    if let Some(st) = stats {
        // The pass runs alongside the feed: the residual lasts until its last answer.
        st.residual.micros = started.elapsed().as_micros() as u64;
    }
    Ok(GtqlOutcome { answers, nodes })
}

/// The answers of `queries` (parsed with the source's names) over a tree file.
pub fn answer_tree(
    source: &mut GtlSource,
    queries: &[GtqlQuery],
    opts: GtqlOptions,
) -> cqldb_storage::Result<GtqlOutcome> {
    let listing = opts.limit > 0;
    source.prepare(queries, listing);
    let columns = source.names().columns();
    let mut pass = ParallelPass::new(queries.to_vec(), columns, listing, opts.limit, opts.threads);
    let mut nodes = 0u64;
    let mut chunk = Chunk::default();
    while source.next_chunk(&mut chunk)? {
        nodes += chunk.levels.len() as u64;
        chunk = pass.feed(chunk);
    }
    Ok(GtqlOutcome {
        answers: pass.finish(),
        nodes,
    })
}
