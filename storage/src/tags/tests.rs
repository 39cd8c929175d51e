//! The tag index's own tests: indexes with and without field norms, and damage refused at
//! open.

use super::*;

/// Writes the tags of a few hundred made-up games into `dir` and returns each value's games.
fn write(dir: &Path, norms: Norms) -> Vec<Vec<u32>> {
    let mut w = TagWriter::create_with(dir, norms).unwrap();
    let players = [
        "Carlsen, Magnus",
        "Kasparov, Garry",
        "Ljubojević, Ljubomir",
        "Polgar, J",
    ];
    let events = ["Olympiad 1990", "Wijk aan Zee", "Linares", "Olympiad 2000"];
    for g in 0..400u32 {
        let tags = vec![
            ("White".to_owned(), players[g as usize % 4].to_owned()),
            ("Black".to_owned(), players[(g as usize / 4) % 4].to_owned()),
            ("Event".to_owned(), events[(g as usize / 16) % 4].to_owned()),
            ("Round".to_owned(), format!("{}", g % 13)),
            (
                "Opening".to_owned(),
                ["Sicilian", "French"][g as usize % 2].to_owned(),
            ),
        ];
        w.add(g, &tags).unwrap();
    }
    w.finish().unwrap()
}

fn answers(dir: &Path, values: &[Vec<u32>], queries: &[&str]) -> Vec<Vec<u32>> {
    let reader = TagReader::open_checked(dir, dir_digest(dir).unwrap()).unwrap();
    let games_of = |v: u32| {
        Ok(values[v as usize]
            .iter()
            .copied()
            .collect::<RoaringBitmap>())
    };
    let all: RoaringBitmap = (0..400).collect();
    queries
        .iter()
        .map(|q| reader.search(q, &games_of, &all, &|_| None).unwrap())
        .collect()
}

/// Indexes written with field norms (before they were dropped) give the same games as
/// indexes without, for plain, phrase, prefix, tag-field and boolean queries; and the
/// new ones are smaller.
#[test]
fn indexes_with_and_without_field_norms_answer_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    let old_values = write(&old, Norms::Kept);
    let new_values = write(&new, Norms::Dropped);
    let queries = [
        "carlsen",
        "white:kasparov",
        "black:\"polgar, j\"",
        "white:ljubo*",
        "event:olympiad AND NOT white:carlsen",
        "tags.Opening:sicilian",
        "tags.Round:7 OR black:carlsen",
        "-event:linares",
    ];
    let (a, b) = (
        answers(&old, &old_values, &queries),
        answers(&new, &new_values, &queries),
    );
    assert_eq!(a, b);
    assert!(a.iter().all(|games| !games.is_empty()), "{a:?}");
    let size = |d: &Path| -> u64 {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    };
    assert!(size(&new) < size(&old), "{} >= {}", size(&new), size(&old));
}

/// The bytes a reader searches are the bytes its digest was taken over: a changed byte in
/// any file, or a digest that is not the committed one, is refused at open.
#[test]
fn a_changed_file_is_refused_at_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tags");
    write(&dir, Norms::Dropped);
    let digest = dir_digest(&dir).unwrap();
    assert!(TagReader::open_checked(&dir, digest).is_ok());
    assert!(TagReader::open_checked(&dir, digest ^ 1).is_err());
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        if bytes.is_empty() {
            continue;
        }
        let at = bytes.len() / 2;
        bytes[at] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
        let err = TagReader::open_checked(&dir, digest).err();
        assert!(
            err.is_some_and(|e| e.to_string().contains("differs from what was committed")),
            "{}",
            path.display()
        );
        bytes[at] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
    }
    assert!(TagReader::open_checked(&dir, digest).is_ok());
}
