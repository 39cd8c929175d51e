//! A catalog lost whole (both `catalog.redb` and `catalog.manifest` gone) rebuilt from the
//! segment files, each of which records its own place in the database (`Registration`).
//!
//! Only whole, intact segment files are registered: a damaged one holds games that cannot be
//! read anyway and is reported, as is a gap in the game numbers it leaves. Segments an append
//! created but never committed (named by its journal) are not the database's and are left
//! out. A segment file from before registrations (schema 3) is placed after the segment
//! before it, in id order, and the report says so.

use std::path::Path;

use crate::catalog::{CatalogWriter, FileChecks, SegmentEntry};
use crate::error::{Result, StorageError};
use crate::journal::{Leftover, segment_files};
use crate::segment::Segment;
use crate::segment_entry::{Registration, SegmentPart};

/// What a rebuild found.
#[derive(Debug, Default)]
pub struct Recovered {
    /// The entries now committed.
    pub entries: Vec<SegmentEntry>,
    /// What was done, one line each.
    pub notes: Vec<String>,
    /// What could not be recovered, one line each.
    pub left: Vec<String>,
}

/// Rebuilds the catalog of `dir` from its segment files. `tag_digest` returns the digest of a
/// segment's tag index once it is sound (rebuilding it from the games' text as needed). Takes
/// the writer lock; refuses when a catalog exists.
pub fn catalog_from_segments(
    dir: &Path,
    tag_digest: impl Fn(&Segment, &Path, &Path) -> Result<u32>,
) -> Result<Recovered> {
    let catalog = CatalogWriter::open_or_create(dir)?;
    let (_, existing) = catalog.state()?;
    if !existing.is_empty()
        || dir.join(crate::catalog::CATALOG_FILE).exists()
        || dir.join(crate::manifest::MANIFEST_FILE).exists()
    {
        return Err(StorageError::Refused {
            path: dir.to_owned(),
            reason: "has a catalog: it is repaired from its other copy, not from the segments"
                .into(),
        });
    }
    let uncommitted: Vec<u64> = match Leftover::read(dir)? {
        Some(l) if !l.committed => l.created,
        _ => Vec::new(),
    };
    let mut out = Recovered::default();
    let mut found: Vec<(u64, Segment, Option<Registration>)> = Vec::new();
    let mut max_id = 0;
    for (id, part, name) in segment_files(dir) {
        max_id = max_id.max(id);
        if part != SegmentPart::File {
            continue;
        }
        let path = dir.join(&name);
        if uncommitted.contains(&id) {
            out.notes.push(format!(
                "{}: left out (an append created it and never committed it)",
                path.display()
            ));
            continue;
        }
        match Segment::open(&path).and_then(|s| s.verify().map(|()| s)) {
            Ok(s) => {
                let r = s.registration();
                if let Some(r) = r
                    && r.id != id
                {
                    out.left.push(format!(
                        "{}: its header says it is segment {} (renamed?); left out",
                        path.display(),
                        r.id
                    ));
                    continue;
                }
                found.push((id, s, r));
            }
            Err(e) => out.left.push(format!(
                "{e} (its games are lost: the file is damaged and holds them)"
            )),
        }
    }
    found.sort_by_key(|(id, _, _)| *id);
    if found.iter().all(|(_, _, r)| r.is_some()) {
        // A merged segment holds the games of the segments it replaced, whose files may still
        // be here (removed once no reader used them): it comes first, and they overlap it.
        found.sort_by_key(|(id, s, r)| {
            (
                r.map_or(0, |r| r.first_game),
                std::cmp::Reverse(s.games()),
                *id,
            )
        });
    }
    let mut next_game = 1;
    let mut next_position = 0;
    for (id, segment, registration) in found {
        let path = dir.join(SegmentEntry::segment_file(id));
        let r = match registration {
            Some(r) => r,
            None => {
                out.notes.push(format!(
                    "{}: written before segments recorded their place; placed after the segment before it (games {next_game}..)",
                    path.display()
                ));
                Registration {
                    id,
                    first_game: next_game,
                    first_position: next_position,
                }
            }
        };
        if r.first_game < next_game {
            out.left.push(format!(
                "{}: its games {}.. overlap the segment before it (a merge's replaced segment?); left out",
                path.display(),
                r.first_game
            ));
            continue;
        }
        if r.first_game > next_game {
            out.left.push(format!(
                "games {next_game} to {} are missing (their segment file is gone)",
                r.first_game - 1
            ));
        }
        let stats = segment.stats()?;
        let tags = dir.join(SegmentEntry::tags_dir(id));
        let digest = match tag_digest(&segment, &path, &tags) {
            Ok(d) => d,
            Err(e) => {
                out.left.push(format!("{e}; segment {id} left out"));
                continue;
            }
        };
        if registration.is_none() {
            drop(segment);
            crate::file::stamp_identity(&path, &r.to_bytes())?;
        }
        let bytes = crate::db::file_bytes(&path)? + crate::db::file_bytes(&tags)?;
        out.entries.push(SegmentEntry {
            id,
            first_game: r.first_game,
            first_position: r.first_position,
            games: stats.games,
            positions: stats.positions,
            variations: stats.variations,
            issues: stats.issues,
            bytes,
            checks: Some(FileChecks {
                segment: stats.file_crc,
                tags: digest,
            }),
        });
        next_game = r.first_game + stats.games;
        next_position = r.first_position + stats.positions;
    }
    if out.entries.is_empty() {
        return Err(StorageError::Refused {
            path: dir.to_owned(),
            reason: format!(
                "no intact segment to rebuild a catalog from{}",
                out.left
                    .first()
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default()
            ),
        });
    }
    catalog.commit(&out.entries, &[])?;
    catalog.reserve_ids(max_id + 1)?;
    catalog.publish()?;
    if let Some(l) = Leftover::read(dir)? {
        l.clean(dir, &out.entries)?;
    }
    Ok(out)
}
