//! `cqldb info`: totals of a database.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_storage::{BitmapKey, Database, PositionFlags};

/// Prints the totals of the database in `db`.
pub fn run(db: &Path) -> Result<ExitCode> {
    let database = Database::open(db)?;
    out!("{}", render(&database)?);
    Ok(ExitCode::SUCCESS)
}

/// The `info` report as text.
pub fn render(db: &Database) -> Result<String> {
    let s = db.stats()?;
    let mut breakdown = [0u64; 4];
    let mut detached = 0u64;
    // Bitmap bytes by kind: pieces on squares, flags, materials, moves reached, moves leaving,
    // games, repeated boards, the board index.
    let mut kinds = [0u64; 8];
    // Keys by the same kinds: what opening a segment reads and checks per bitmap.
    let mut keys = [0u64; 8];
    for (_, seg) in db.segments() {
        for (key, bytes) in seg.bitmap_keys() {
            let kind = match key {
                BitmapKey::Piece(..) => 0,
                BitmapKey::Flag(_) => 1,
                BitmapKey::Material(_) => 2,
                BitmapKey::Move(b) if b < 32 => 3,
                BitmapKey::Move(_) => 4,
                BitmapKey::Result(_)
                | BitmapKey::ResultTag(_)
                | BitmapKey::Year(_)
                | BitmapKey::YearOutside
                | BitmapKey::Eco(_)
                | BitmapKey::EloBand(..)
                | BitmapKey::EloOutside(_)
                | BitmapKey::TagValue(_) => 5,
                BitmapKey::Board(_) => 6,
                BitmapKey::BoardIndex(_) => 7,
            };
            kinds[kind] += bytes as u64;
            keys[kind] += 1;
        }
        for (a, b) in breakdown.iter_mut().zip(seg.size_breakdown()) {
            *a += b;
        }
        detached += seg.stats()?.detached_variations;
    }
    let per = |b: u64| b as f64 / s.positions.max(1) as f64;
    let games_with_errors: u64 = db.segments().map(|(_, s)| s.games_with_issues()).sum();
    let mainline = db.bitmap_count(BitmapKey::flag(PositionFlags::MAINLINE))?;
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
