//! `cqldb repair`: rebuilds what can be rebuilt from the rest of a database.
//!
//! The catalog exists twice (`catalog.redb` and the manifest), so either is rebuilt from the
//! other. A segment's tag index is derived data: the segment keeps every game's original text,
//! so the index is written again from the tags read from that text, and accepted only if it
//! gives every tag value exactly the games the segment's own bitmaps give it. A damaged segment
//! file cannot be rebuilt (it holds the text itself) and is reported.
//!
//! A database that lost both catalog copies gets its catalog from the segment files, each of
//! which records its place (`cqldb_storage::recover`); their tag indexes are then written again
//! from the games' text, as no catalog vouches for them any more.

use std::path::Path;

use cqldb_storage::catalog::{CatalogWriter, FileChecks, SegmentEntry};
use cqldb_storage::tags::{TagReader, TagWriter, dir_digest, match_permissions};
use cqldb_storage::{BitmapKey, Result, Segment, StorageError};
use roaring::RoaringBitmap;

use crate::tags::scan_tags;

/// What a repair did and what it could not do.
#[derive(Debug, Default)]
pub struct RepairReport {
    /// One line per thing repaired.
    pub repaired: Vec<String>,
    /// One line per damage left (files that cannot be rebuilt).
    pub left: Vec<String>,
}

/// Repairs the database in `dir` (taking its writer lock, so no append runs meanwhile).
pub fn repair(dir: &Path) -> Result<RepairReport> {
    let mut report = RepairReport::default();
    let (catalog, rebuilt) = match CatalogWriter::open_repairing(dir) {
        Err(StorageError::LostCatalog(_)) => return recover_catalog(dir),
        other => other?,
    };
    if rebuilt {
        report
            .repaired
            .push("catalog.redb: rebuilt from the manifest (the damaged file is kept beside it as catalog.redb.damaged-TIME)".into());
    }
    let (_, entries) = catalog.state()?;
    for e in entries {
        let seg_path = dir.join(SegmentEntry::segment_file(e.id));
        let seg = match Segment::open(&seg_path).and_then(|s| s.verify().map(|()| s)) {
            Ok(s) => s,
            Err(err) => {
                report
                    .left
                    .push(format!("{err} (cannot be rebuilt: it holds the games)"));
                continue;
            }
        };
        let tags = dir.join(SegmentEntry::tags_dir(e.id));
        let intact = e
            .checks
            .is_some_and(|c| dir_digest(&tags).ok() == Some(c.tags))
            && TagReader::open(&tags).is_ok();
        if intact {
            continue;
        }
        let digest = match rebuild_tags(&seg, &seg_path, &tags) {
            Ok(d) => d,
            Err(err) => {
                report.left.push(err.to_string());
                continue;
            }
        };
        catalog.commit(
            &[SegmentEntry {
                checks: Some(FileChecks {
                    segment: seg.recorded_crc(),
                    tags: digest,
                }),
                ..e
            }],
            &[],
        )?;
        report.repaired.push(format!(
            "{}: tag index rebuilt from the games' text ({} games)",
            tags.display(),
            seg.games()
        ));
    }
    catalog.publish()?;
    Ok(report)
}

/// Rebuilds a lost catalog from the segment files, and their tag indexes from the games' text.
fn recover_catalog(dir: &Path) -> Result<RepairReport> {
    let found = cqldb_storage::recover::catalog_from_segments(dir, |seg, seg_path, tags| {
        rebuild_tags(seg, seg_path, tags)
    })?;
    let mut report = RepairReport {
        left: found.left,
        ..RepairReport::default()
    };
    report.repaired.push(format!(
        "catalog.redb and catalog.manifest: rebuilt from {} segment files ({} games); their tag indexes rebuilt from the games' text",
        found.entries.len(),
        found.entries.iter().map(|e| e.games).sum::<u64>()
    ));
    report.repaired.extend(found.notes);
    Ok(report)
}

/// Writes the tag index of `seg` again next to `tags`, checks it against the segment's tag
/// bitmaps, and puts it in place; returns its digest.
fn rebuild_tags(seg: &Segment, seg_path: &Path, tags: &Path) -> Result<u32> {
    let name = tags
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fresh = tags.with_file_name(format!("{name}.rebuild"));
    if fresh.exists() {
        std::fs::remove_dir_all(&fresh).map_err(StorageError::io(&fresh))?;
    }
    let mut w = TagWriter::create(&fresh)?;
    for local in 0..seg.games() {
        w.add(local, &scan_tags(&seg.game_text(local)?))?;
    }
    let values = w.finish()?;
    // Every bitmap the segment has for a value must be the games the text gives it; a value
    // without one must be of one game (its document keeps it; older segments have a bitmap
    // for those too).
    let keys = seg.bitmap_keys()?;
    let indexed = keys
        .iter()
        .filter(|(k, _)| matches!(k, BitmapKey::TagValue(v) if (*v as usize) < values.len()))
        .count();
    let with_bitmap = values
        .iter()
        .filter(|g| !cqldb_storage::tags::inlined(g))
        .count();
    let all_keys = keys
        .iter()
        .filter(|(k, _)| matches!(k, BitmapKey::TagValue(_)))
        .count();
    if all_keys != indexed || indexed < with_bitmap {
        let _ = std::fs::remove_dir_all(&fresh);
        return Err(StorageError::Corrupt {
            path: tags.to_owned(),
            reason: format!(
                "the games' text gives {} tag values ({with_bitmap} of several games), the segment indexes {all_keys}; not replaced",
                values.len()
            ),
        });
    }
    for (v, games) in values.iter().enumerate() {
        let key = BitmapKey::TagValue(v as u32);
        if !seg.has_bitmap(key)? && cqldb_storage::tags::inlined(games) {
            continue;
        }
        let want = seg.bitmap(key)?;
        let got = RoaringBitmap::from_sorted_iter(games.iter().copied()).unwrap_or_default();
        if want != got {
            let _ = std::fs::remove_dir_all(&fresh);
            return Err(StorageError::Corrupt {
                path: tags.to_owned(),
                reason: format!(
                    "the games' text gives tag value {v} other games than the segment's index; not replaced"
                ),
            });
        }
    }
    match_permissions(&fresh, seg_path)?;
    let digest = dir_digest(&fresh)?;
    // The old index is kept for inspection under a name no other repair used (never removed).
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut damaged = tags.with_file_name(format!("{name}.damaged-{stamp}"));
    let mut k = 1;
    while damaged.symlink_metadata().is_ok() {
        damaged = tags.with_file_name(format!("{name}.damaged-{stamp}-{k}"));
        k += 1;
    }
    if tags.exists() {
        std::fs::rename(tags, &damaged).map_err(StorageError::io(tags))?;
    }
    std::fs::rename(&fresh, tags).map_err(StorageError::io(tags))?;
    Ok(digest)
}
