//! Moving a database written by an older layout to the current one, done by its first writer.
//!
//! 3 → 4: the segment files' headers get their registration (id, first game, first position;
//! see `segment_entry.rs`), taken from the catalog. Only 32 header bytes of each file change,
//! outside the payload the catalog's checksums cover, so readers of the old state are not
//! disturbed. A segment that cannot be opened (damaged) is left for `check` and `repair`, and
//! the version stays at 3 until every segment is stamped, so a later writer finishes the work.
//!
//! 4 → 5 and 5 → 6: nothing to rewrite (segments written before read as they are); only new
//! segments have the new table of parts (5) and packed bitmaps (6).

use crate::catalog::{CatalogWriter, SegmentEntry};
use crate::error::{Result, StorageError};
use crate::schema::{SCHEMA_VERSION, readable_schema};
use crate::segment::Segment;

/// Brings the database `catalog` belongs to up to [`SCHEMA_VERSION`].
pub(crate) fn to_current(catalog: &CatalogWriter) -> Result<()> {
    let version = catalog.schema_version()?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    let path = catalog.dir().join(crate::catalog::CATALOG_FILE);
    if !readable_schema(version) {
        return Err(StorageError::SchemaMismatch {
            path,
            found: version,
            expected: SCHEMA_VERSION,
        });
    }
    let (_, entries) = catalog.state()?;
    let mut complete = true;
    for e in &entries {
        let file = catalog.dir().join(SegmentEntry::segment_file(e.id));
        let Ok(segment) = Segment::open(&file) else {
            complete = false;
            continue;
        };
        match segment.registration() {
            Some(r) if r == e.registration() => {}
            Some(r) => {
                return Err(StorageError::corrupt(
                    &file,
                    format!(
                        "its header places it as segment {} from game {}, the catalog as segment {} from game {}",
                        r.id, r.first_game, e.id, e.first_game
                    ),
                ));
            }
            None => {
                drop(segment);
                crate::file::stamp_identity(&file, &e.registration().to_bytes())?;
            }
        }
    }
    if complete {
        catalog.set_schema_version(SCHEMA_VERSION)?;
    }
    Ok(())
}
