//! A tag index's saved word lists give the same answers as its term dictionaries: searches
//! inside words find the same games with the file and, for an index written before it, without.

use cqldb_storage::tag_words::WORDS_FILE;
use cqldb_storage::tags::{TagReader, TagWriter};
use proptest::prelude::*;
use roaring::RoaringBitmap;

const NAMES: &[&str] = &[
    "Carlsen, Magnus",
    "Ljubojević, Ljubomir",
    "O'Kelly de Galway",
    "Kasparov, Garry",
    "Anand",
    "van Wely, Loek",
    "Ab",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn saved_words_answer_as_the_dictionaries(
        games in proptest::collection::vec((0usize..7, 0usize..7, 0u8..4), 1..40),
        needles in proptest::collection::vec("[a-zA-Zć ,']{1,6}", 1..12),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("tags");
        let mut w = TagWriter::create(&dir).unwrap();
        for (g, &(white, black, event)) in games.iter().enumerate() {
            let tags = vec![
                ("White".to_owned(), NAMES[white].to_owned()),
                ("Black".to_owned(), NAMES[black].to_owned()),
                ("Event".to_owned(), format!("Open {event}")),
            ];
            w.add(g as u32, &tags).unwrap();
        }
        let games = w.finish().unwrap();
        prop_assert!(dir.join(WORDS_FILE).exists());
        // Each value's games, as the segment's bitmaps give them.
        let games_of = |v: u32| {
            Ok(games.get(v as usize).map(|g| g.iter().copied().collect()).unwrap_or_default())
        };
        let values = |reader: &TagReader, needle: &str, tag: &str| {
            reader.games_containing(tag, needle, &games_of).unwrap()
        };
        let fixed = ["arl", "ević", "Kel", "ov, G", "nan", "Wely", "Ab"].map(str::to_owned);
        let all = |reader: &TagReader| -> Vec<Option<RoaringBitmap>> {
            needles
                .iter()
                .chain(&fixed)
                .flat_map(|n| ["White", "Black", "Event"].map(|t| (n, t)))
                .map(|(n, t)| values(reader, n, t))
                .collect()
        };
        let with_file = all(&TagReader::open(&dir).unwrap());
        std::fs::remove_file(dir.join(WORDS_FILE)).unwrap();
        let without = all(&TagReader::open(&dir).unwrap());
        // The fixed needles find games (the first game's White holds one of them whole).
        prop_assert!(with_file.iter().flatten().any(|g| g.contains(0)));
        prop_assert_eq!(with_file, without);
    }
}
