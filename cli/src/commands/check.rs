//! `cqldb check` and `cqldb repair`: verify every file of a database, and rebuild what can be
//! rebuilt.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

/// Prints one line per file, `ok` or what is damaged; exits 1 if anything is.
pub fn check(db: &Path) -> Result<ExitCode> {
    if !db.is_dir() {
        anyhow::bail!("{}: no such database directory", db.display());
    }
    let findings = cqldb_storage::check::check(db);
    let mut damaged = 0;
    let mut repairable = 0;
    for f in &findings {
        match &f.damage {
            None => outln!("ok       {} ({})", f.path.display(), f.what),
            Some(why) => {
                damaged += 1;
                repairable += usize::from(f.repairable);
                outln!("DAMAGED  {} ({}): {why}", f.path.display(), f.what);
            }
        }
    }
    if damaged == 0 {
        outln!("{} files checked, all intact", findings.len());
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} files checked, {damaged} damaged ({repairable} can be rebuilt with `cqldb repair --db {}`)",
        findings.len(),
        db.display()
    );
    Ok(ExitCode::from(1))
}

/// Rebuilds the damaged parts that can be rebuilt; exits 1 if damage is left.
pub fn repair(db: &Path) -> Result<ExitCode> {
    if !db.is_dir() {
        anyhow::bail!("{}: no such database directory", db.display());
    }
    let report = cqldb_indexer::repair::repair(db)?;
    for line in &report.repaired {
        outln!("repaired: {line}");
    }
    for line in &report.left {
        outln!("left:     {line}");
    }
    if report.repaired.is_empty() && report.left.is_empty() {
        outln!("nothing to repair");
    }
    Ok(if report.left.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
