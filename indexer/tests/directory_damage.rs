//! A segment's bitmap directory (keys, lengths, checksums) is checked by chunks, each when a
//! lookup first lands in it, and the keys a lookup's binary search passes through on the way
//! are not checked at all. A damaged key anywhere must therefore give, for every lookup, the
//! undamaged answer or an error: never a missing bitmap, a wrong one, or a wrong key range.

use std::path::Path;

mod common;

use cqldb_indexer::Input;
use cqldb_storage::{BitmapKey, MaterialSignature, Segment, WriterOptions};

fn build(dir: &Path) {
    let input = common::shared("data/variations/pychess_world_matches.pgn");
    common::build(
        dir,
        WriterOptions::default().segment_positions,
        &[Input::Path(input)],
    );
}

/// Everything a reader asks the directory, as answers to compare.
fn answers(seg: &Segment, probes: &[BitmapKey]) -> Vec<Result<String, String>> {
    let mut out: Vec<Result<String, String>> = probes
        .iter()
        .map(|&k| {
            seg.bitmap(k)
                .map(|b| format!("{k:?} {b:?}"))
                .map_err(|e| e.to_string())
        })
        .collect();
    out.push(
        seg.materials()
            .map(|m| format!("{:?}", m.collect::<Vec<_>>()))
            .map_err(|e| e.to_string()),
    );
    out.push(
        seg.keys_between(BitmapKey::Year(0), BitmapKey::Year(u16::MAX))
            .map(|k| format!("{k:?}"))
            .map_err(|e| e.to_string()),
    );
    // The batch read (one walk through the directory for ascending keys), over the probes in
    // order and out of order: the union of the bitmaps read one by one, or an error.
    let mut sorted = probes.to_vec();
    sorted.sort_by_key(|k| k.to_u64());
    let mut shuffled = sorted.clone();
    shuffled.reverse();
    shuffled.rotate_left(sorted.len() / 3);
    for keys in [sorted, shuffled] {
        let mut dense = fixedbitset::FixedBitSet::with_capacity(1 << 22);
        out.push(
            seg.bitmaps_or_dense(&keys, &mut dense)
                .map(|()| format!("{:?}", dense.ones().collect::<Vec<_>>()))
                .map_err(|e| e.to_string()),
        );
    }
    for &k in probes.iter().step_by(7) {
        out.push(
            seg.has_bitmap(k)
                .map(|h| format!("{k:?} {h}"))
                .map_err(|e| e.to_string()),
        );
    }
    out
}

#[test]
fn a_damaged_key_anywhere_gives_the_same_answers_or_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    build(&db);
    let file = db.join("seg-000001.cqs");
    let seg = Segment::open(&file).unwrap();
    let keys: Vec<BitmapKey> = seg
        .bitmap_keys()
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert!(keys.len() > 3 * 512, "{} keys: too few chunks", keys.len());
    // Present keys, and absent ones between and beside them.
    // (Board index parts are kept in the directory but are not bitmaps.)
    let mut probes: Vec<BitmapKey> = keys
        .iter()
        .copied()
        .filter(|k| !matches!(k, BitmapKey::BoardIndex(_)))
        .step_by(13)
        .collect();
    probes.extend([
        BitmapKey::Material(MaterialSignature(1)),
        BitmapKey::Year(1),
        BitmapKey::TagValue(u32::MAX - 1),
        BitmapKey::Board(1),
    ]);
    let want = answers(&seg, &probes);
    assert!(want.iter().all(Result::is_ok), "{want:?}");
    // Undamaged, the batch reads are the single reads summed.
    let mut sorted = probes.clone();
    sorted.sort_by_key(|k| k.to_u64());
    let position_keys: Vec<BitmapKey> = sorted
        .iter()
        .copied()
        .filter(|k| !matches!(k.kind(), cqldb_storage::KeyKind::Games))
        .collect();
    assert_eq!(
        seg.bitmaps_len(&sorted),
        sorted.iter().map(|&k| seg.bitmap_len(k)).sum::<u64>()
    );
    let mut dense = fixedbitset::FixedBitSet::with_capacity(1 << 22);
    seg.bitmaps_or_dense(&position_keys, &mut dense).unwrap();
    let mut each = roaring::RoaringBitmap::new();
    for &k in &position_keys {
        each |= seg.bitmap(k).unwrap();
    }
    assert_eq!(
        dense.ones().map(|i| i as u32).collect::<Vec<_>>(),
        each.iter().collect::<Vec<_>>()
    );
    assert!(!each.is_empty());
    drop(seg);

    // The keys column: the keys as little-endian numbers, found in the file.
    let original = std::fs::read(&file).unwrap();
    let column: Vec<u8> = keys.iter().flat_map(|k| k.to_u64().to_le_bytes()).collect();
    let at = original
        .windows(64)
        .position(|w| w == &column[..64])
        .expect("the keys column is in the file");
    assert_eq!(&original[at..at + column.len()], column.as_slice());

    let copy = dir.path().join("copy.cqs");
    let (mut same, mut errors) = (0, 0);
    // Some keys' top byte (the kind) and a low byte: keys that jump far (misleading the
    // binary searches that pass them), and that move a little.
    for i in (0..keys.len()).step_by(keys.len() / 150) {
        for byte in [7usize, 0] {
            let mut bytes = original.clone();
            bytes[at + i * 8 + byte] ^= 0x41;
            std::fs::write(&copy, &bytes).unwrap();
            let Ok(seg) = Segment::open(&copy) else {
                errors += 1;
                continue;
            };
            for (w, got) in want.iter().zip(answers(&seg, &probes)) {
                match got {
                    Ok(g) => {
                        assert_eq!(Ok(&g), w.as_ref(), "key {i} byte {byte} damaged");
                        same += 1;
                    }
                    Err(e) => {
                        assert!(e.contains("corrupt"), "unclear error: {e}");
                        errors += 1;
                    }
                }
            }
        }
    }
    eprintln!("{same} answers unchanged, {errors} errors");
    assert!(errors > 0 && same > 0);
}
