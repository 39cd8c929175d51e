//! `cqldb positions`: a game's position table.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use cqldb_storage::{CommentPlacement, Database, NO_PARENT};

/// Prints the position table of game `game`.
pub fn run(db: &Path, game: u64) -> Result<ExitCode> {
    let database = Database::open(db)?;
    out!("{}", render(&database, game)?);
    Ok(ExitCode::SUCCESS)
}

/// The table as text: one row per position in position-id order.
pub fn render(db: &Database, game: u64) -> Result<String> {
    let info = db.game_info(game)?;
    let table = db.game_positions(game)?;
    let text = db.game_text(game)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "game {game}: {} positions, from {}:{}",
        info.positions, info.file, info.line
    );
    let _ = writeln!(
        out,
        "{:>5} {:>4} {:>5} {:>6} {:>5} {:>4} {:>5} {:<14} {:<40} {:<18} {:<16} nags comments",
        "id",
        "ply",
        "depth",
        "parent",
        "child",
        "kids",
        "moveno",
        "move",
        "flags",
        "material",
        "zobrist"
    );
    for (id, p) in table.positions.iter().enumerate() {
        let parent = if p.parent == NO_PARENT {
            "-".to_owned()
        } else {
            p.parent.to_string()
        };
        let nags: Vec<String> = table
            .nags
            .iter()
            .filter(|n| n.position as usize == id)
            .map(|n| format!("${}", n.nag))
            .collect();
        let comments: Vec<String> = table
            .comments
            .iter()
            .filter(|c| c.position as usize == id)
            .map(|c| {
                let body = text
                    .get(c.start as usize..(c.start + c.len) as usize)
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default();
                let body: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
                let body: String = body.chars().take(60).collect();
                match c.placement {
                    CommentPlacement::Before => format!("before:{{{body}}}"),
                    CommentPlacement::After => format!("{{{body}}}"),
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "{id:>5} {:>4} {:>5} {parent:>6} {:>5} {:>4} {:>5} {:<14} {:<40} {:<18} {:016x} {} {}",
            p.ply,
            p.depth,
            p.child_index,
            p.children,
            p.move_number,
            p.mv.to_string(),
            p.flags.to_string(),
            p.material.to_string(),
            p.zobrist,
            nags.join(","),
            comments.join(" ")
        );
        let _ = writeln!(out, "      {}", p.fen());
    }
    Ok(out)
}
