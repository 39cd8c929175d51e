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
pub mod check;
pub mod cql;
pub mod demo;
pub mod errors;
pub mod gtql;
pub mod index;
pub mod info;
mod peak_rss;
pub mod positions;
pub mod show;
pub mod tags;
