//! `readfile NAME` (the whole file as a string) and `writefile (NAME TEXT)` (TEXT added to
//! the file; the first write of a run starts it afresh). Only inside the directory the user
//! names for the run (`cqldb cql --files DIR`): a query file from elsewhere must not read or
//! write anything else. NAME is relative, without `..`, and ends in `.pgn`, `.cqo` or `.cql`
//! to be read, in `.cqo` to be written (as the reference program's restriction). A file that
//! cannot be used stops the run, as in the reference program. Queries using either run
//! their games in order on one thread.

use std::path::{Component, Path, PathBuf};

use crate::ast::Expr;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["readfile", "writefile"];

/// The largest file `readfile` reads (its text is held in memory).
pub const MAX_READ: u64 = 64 << 20;

/// Reads `readfile NAME` or `writefile (NAME TEXT)`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    if word == "readfile" {
        return Ok(Expr::ReadFile(Box::new(p.operand()?)));
    }
    let (name, text) = p.pair(word)?;
    Ok(Expr::WriteFile(name, text))
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

/// The file `name` stands for inside `dir`, or why it may not be used.
pub fn resolve(dir: Option<&Path>, name: &str, write: bool) -> Result<PathBuf, String> {
    let Some(dir) = dir else {
        return Err(format!(
            "'{name}': readfile and writefile work only inside a directory named with --files DIR"
        ));
    };
    let rel = Path::new(name);
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain || name.is_empty() {
        return Err(format!(
            "'{name}': give a file name inside the --files directory (no absolute path, no '..')"
        ));
    }
    let ext = rel
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let allowed: &[&str] = if write {
        &["cqo"]
    } else {
        &["pgn", "cqo", "cql"]
    };
    if !ext.as_deref().is_some_and(|e| allowed.contains(&e)) {
        return Err(format!(
            "'{name}': {} only files ending in {}",
            if write {
                "writefile writes"
            } else {
                "readfile reads"
            },
            allowed
                .iter()
                .map(|e| format!(".{e}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let path = dir.join(rel);
    // A symbolic link inside the directory may not lead out of it.
    let root = dir
        .canonicalize()
        .map_err(|e| format!("--files {}: {e}", dir.display()))?;
    let parent = path.parent().unwrap_or(dir);
    let real_parent = parent
        .canonicalize()
        .map_err(|e| format!("'{name}': {e}"))?;
    let inside = match path.canonicalize() {
        Ok(real) => real.starts_with(&root),
        Err(_) => real_parent.starts_with(&root),
    };
    if !inside {
        return Err(format!("'{name}' leads out of the --files directory"));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_inside_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.cqo"), "x").unwrap();
        assert!(resolve(Some(dir.path()), "a.cqo", false).is_ok());
        assert!(resolve(Some(dir.path()), "b.cqo", true).is_ok());
        assert!(resolve(None, "a.cqo", false).is_err());
        assert!(resolve(Some(dir.path()), "../a.cqo", false).is_err());
        assert!(resolve(Some(dir.path()), "/etc/passwd.cqo", false).is_err());
        assert!(resolve(Some(dir.path()), "a.txt", false).is_err());
        assert!(
            resolve(Some(dir.path()), "a.pgn", true).is_err(),
            "writes .cqo only"
        );
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::fs::write(outside.path().join("s.cqo"), "secret").unwrap();
            std::os::unix::fs::symlink(outside.path().join("s.cqo"), dir.path().join("l.cqo"))
                .unwrap();
            assert!(resolve(Some(dir.path()), "l.cqo", false).is_err());
        }
    }
}
