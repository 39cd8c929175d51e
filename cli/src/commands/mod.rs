//! One module per subcommand (and `peak_rss.rs`, which the benchmarks share), and the
//! writing of the standard output and error that every command uses.
//!
//! `println!` panics when its write fails (`> /dev/full`, a full disk behind a redirection);
//! every command writes through [`outln!`], [`out!`] and [`errln!`] instead, so a failed write
//! is an error of the command (exit 1, said on the standard error if it still can be).

use std::io::Write;

/// Writes to the standard output; a failed write is the command's error.
macro_rules! out {
    ($($t:tt)*) => { $crate::commands::write_out(format_args!($($t)*), false)? };
}

/// Writes a line to the standard output; a failed write is the command's error.
macro_rules! outln {
    ($($t:tt)*) => { $crate::commands::write_out(format_args!($($t)*), true)? };
}

/// Writes a line to the standard error; a failed write is the command's error.
macro_rules! errln {
    ($($t:tt)*) => { $crate::commands::write_err(format_args!($($t)*))? };
}

/// The standard output's write of `args` (and a newline).
pub fn write_out(args: std::fmt::Arguments<'_>, newline: bool) -> anyhow::Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_fmt(args)
        .and_then(|()| if newline { o.write_all(b"\n") } else { Ok(()) })
        .map_err(|e| anyhow::anyhow!("writing to the standard output: {e}"))
}

/// The standard error's write of `args` and a newline.
pub fn write_err(args: std::fmt::Arguments<'_>) -> anyhow::Result<()> {
    let mut o = std::io::stderr().lock();
    o.write_fmt(args)
        .and_then(|()| o.write_all(b"\n"))
        .map_err(|e| anyhow::anyhow!("writing to the standard error: {e}"))
}

pub mod bench;
pub mod bench_query;
pub mod bench_sql;
pub mod check;
pub mod cql;
pub mod demo;
pub mod errors;
pub mod export;
pub mod gtql;
pub mod index;
pub mod info;
pub mod optimize;
mod peak_rss;
pub mod positions;
pub mod shell;
pub mod show;
pub mod sql;
pub mod tags;

/// `n` with its noun, singular for one: `1 game`, `2 games`.
pub fn count_of(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else if let Some(stem) = noun.strip_suffix('y') {
        format!("{n} {stem}ies")
    } else if noun.ends_with('h') || noun.ends_with('s') {
        format!("{n} {noun}es")
    } else {
        format!("{n} {noun}s")
    }
}

/// `, RATE` for a throughput line, or nothing when there was too little work to measure (no
/// games, or a run too short for its rate to mean anything).
pub fn rate(done: u64, secs: f64, unit: &str) -> String {
    if done == 0 || secs < 0.001 {
        String::new()
    } else {
        format!(", {:.0} {unit}/s", done as f64 / secs)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_read_as_english() {
        assert_eq!(super::count_of(1, "game"), "1 game");
        assert_eq!(super::count_of(0, "game"), "0 games");
        assert_eq!(super::count_of(2, "match"), "2 matches");
        assert_eq!(super::count_of(3, "entry"), "3 entries");
        assert_eq!(super::rate(0, 1.0, "games"), "");
        assert_eq!(super::rate(10, 2.0, "games"), ", 5 games/s");
    }
}
