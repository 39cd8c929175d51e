//! `cqldb info`: totals of a database.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_storage::{Database, SegmentLayout};

/// Prints the totals of the database in `db`.
pub fn run(db: &Path) -> Result<ExitCode> {
    let database = Database::open(db)?;
    out!("{}", render(&database)?);
    Ok(ExitCode::SUCCESS)
}

/// The `info` report as text.
pub fn render(db: &Database) -> Result<String> {
    let s = db.stats()?;
    // What each segment's bytes are spent on, as its table of parts records it (a segment
    // written before the table did is read whole).
    let mut layout = SegmentLayout::default();
    let mut detached = 0u64;
    for (_, seg) in db.segments() {
        layout.merge(&seg.layout()?);
        detached += seg.stats()?.detached_variations;
    }
    let (kinds, keys) = (layout.bitmap_bytes, layout.bitmap_keys);
    let breakdown = [layout.columns, layout.text, layout.bitmaps];
    let per = |b: u64| b as f64 / s.positions.max(1) as f64;
    let games_with_errors: u64 = db.segments().map(|(_, s)| s.games_with_issues()).sum();
    let mainline = layout.mainline;
    let mut out = String::new();
    use std::fmt::Write;
    let _ = writeln!(out, "games              {}", s.games);
    let _ = writeln!(out, "positions          {}", s.positions);
    let _ = writeln!(out, "  main line        {}", mainline);
    let _ = writeln!(out, "  in variations    {}", s.positions - mainline);
    let _ = writeln!(out, "variations         {}", s.variations);
    let _ = writeln!(
        out,
        "detached variations {detached} (kept in text, not in the tree, as in CQL)"
    );
    let _ = writeln!(
        out,
        "errors             {} in {}",
        s.issues,
        super::count_of(games_with_errors, "game")
    );
    let _ = writeln!(out, "segments           {}", s.segments);
    let _ = writeln!(
        out,
        "size on disk       {} bytes ({:.1} MiB)",
        s.bytes,
        s.bytes as f64 / (1 << 20) as f64
    );
    let _ = writeln!(out, "bytes/position     {:.2}", per(s.bytes));
    let _ = writeln!(
        out,
        "  columns {:.2}, game text {:.2}, bitmaps {:.2}, tag index + other {:.2}",
        per(breakdown[0]),
        per(breakdown[1]),
        per(breakdown[2]),
        per(s
            .bytes
            .saturating_sub(breakdown[0] + breakdown[1] + breakdown[2]))
    );
    let _ = writeln!(
        out,
        "  bitmaps: pieces {:.2}, flags {:.2}, material {:.2}, last move {:.2}, next moves {:.2}, games {:.2}, boards {:.2}, board index {:.2}",
        per(kinds[0]),
        per(kinds[1]),
        per(kinds[2]),
        per(kinds[3]),
        per(kinds[4]),
        per(kinds[5]),
        per(kinds[6]),
        per(kinds[7]),
    );
    let _ = writeln!(
        out,
        "  bitmap keys: {} (pieces {}, flags {}, material {}, moves {}, games {}, boards {}, board index {})",
        keys.iter().sum::<u64>(),
        keys[0],
        keys[1],
        keys[2],
        keys[3] + keys[4],
        keys[5],
        keys[6],
        keys[7],
    );
    Ok(out)
}
