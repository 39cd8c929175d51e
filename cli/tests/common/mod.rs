//! Helpers the `cqldb` binary's integration tests share.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `cqldb` with `args`.
pub fn cqldb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(args)
        .output()
        .expect("run cqldb")
}

/// Runs `cqldb` with `args`, which must succeed; its standard output.
#[allow(dead_code)] // not every test binary uses it
pub fn ok(args: &[&str]) -> String {
    let out = cqldb(args);
    assert!(
        out.status.success(),
        "cqldb {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// A path as an argument.
#[allow(dead_code)] // not every test binary uses it
pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// A small PGN file of `n` games, numbered from `from` (players and events vary, some games
/// end in mate, odd ones have a variation).
#[allow(dead_code)] // not every test binary uses it
pub fn games(n: usize, from: usize) -> String {
    let mut t = String::new();
    for i in from..from + n {
        t.push_str(&format!(
            "[Event \"Open {e}\"]\n[White \"Player{w}\"]\n[Black \"Kasparov{b}\"]\n[Result \"1-0\"]\n\n",
            e = i % 7,
            w = i % 5,
            b = i % 3
        ));
        if i % 2 == 0 {
            t.push_str("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n");
        } else {
            t.push_str("1. d4 d5 2. c4 (2. Nf3 Nf6) dxc4 3. e4 1-0\n\n");
        }
    }
    t
}
