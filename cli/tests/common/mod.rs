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
pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}
