//! The distinct words of one tag field of a segment's tag index, held in memory for searches
//! *inside* words.
//!
//! CQL's `player "arlse"` must find a value whose words merely contain the needle's words: a
//! word at the needle's start may end a longer word, one at its end may begin one. tantivy
//! answers such a pattern with an automaton walked over the field's whole term dictionary, which
//! cost about a millisecond per segment and field, every query. Here the words are read once per
//! open tag index and kept as one byte string; a pattern is a `memchr::memmem` search over it
//! (microseconds), and the words it finds become an exact term set for tantivy.

use std::path::Path;

use memchr::memmem;
use tantivy::schema::Field;
use tantivy::{Searcher, SegmentReader};

use crate::error::{Result, StorageError};

/// The file of a committed tag index that keeps its text fields' word lists, written once the
/// index is complete (see [`save`]): a query then reads them instead of walking the term
/// dictionaries, which took about a fourteenth of the time of writing a player's games as a
/// command. An index without the file (written before it) has its words read as before.
pub const WORDS_FILE: &str = "words.cqlw";

/// The file's first bytes (the format's version is the last).
const MAGIC: &[u8; 8] = b"CQLWORD1";

/// Where a word must sit in the words it is searched in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The whole word.
    Whole,
    /// At the end (`.*word`).
    End,
    /// At the start (`word.*`).
    Start,
    /// Anywhere (`.*word.*`).
    Anywhere,
}

impl Placement {
    /// The placement of a needle's word: open on a side where the needle begins or ends there
    /// (the word may continue past the needle on that side).
    pub fn of(open_left: bool, open_right: bool) -> Self {
        match (open_left, open_right) {
            (false, false) => Self::Whole,
            (true, false) => Self::End,
            (false, true) => Self::Start,
            (true, true) => Self::Anywhere,
        }
    }
}

/// The distinct words of a field, sorted, each followed by a `\0` (a byte no word holds: the
/// tokenizer keeps letters and digits), so a search never matches across two words.
#[derive(Debug, Default)]
pub struct WordList {
    text: Vec<u8>,
    /// Where each word starts in `text`.
    starts: Vec<u32>,
}

impl WordList {
    /// Bytes it holds.
    pub fn held_bytes(&self) -> usize {
        self.text.capacity() + 4 * self.starts.capacity()
    }

    /// Every word of `field` in every tantivy segment of `searcher`.
    pub fn read(searcher: &Searcher, field: Field) -> Result<Self> {
        let readers = searcher.segment_readers();
        if let [reader] = readers {
            // One term dictionary (an index as committed): its terms are already sorted and
            // distinct, and go straight into the list.
            let mut list = Self::default();
            each_term(reader, field, |w| list.push(w))?;
            return Ok(list);
        }
        let mut words: Vec<Vec<u8>> = Vec::new();
        for reader in readers {
            each_term(reader, field, |w| words.push(w.to_vec()))?;
        }
        words.sort_unstable();
        words.dedup();
        Ok(Self::from_words(words))
    }

    /// A list of the given words (sorted and distinct; none holds a `\0`).
    pub fn from_words<W: AsRef<[u8]>>(words: impl IntoIterator<Item = W>) -> Self {
        let mut list = Self::default();
        for w in words {
            list.push(w.as_ref());
        }
        list
    }

    /// The list whose stored text is `text` (each word followed by a `\0`), or `None` if it is
    /// not such a text.
    fn from_text(text: Vec<u8>) -> Option<Self> {
        if text.last().is_some_and(|&b| b != 0) {
            return None;
        }
        let mut starts = Vec::new();
        let mut at = 0usize;
        for end in memchr::memchr_iter(0, &text) {
            starts.push(u32::try_from(at).ok()?);
            at = end + 1;
        }
        Some(Self { text, starts })
    }

    /// Appends a word (greater than every word before it).
    fn push(&mut self, word: &[u8]) {
        self.starts.push(self.text.len() as u32);
        self.text.extend_from_slice(word);
        self.text.push(0);
    }

    /// The words that hold `word` where `placement` says, in order, each once.
    pub fn matching(&self, word: &str, placement: Placement) -> Vec<&str> {
        let needle = word.as_bytes();
        let mut out = Vec::new();
        if needle.is_empty() {
            return out;
        }
        let mut last = None;
        for hit in memmem::find_iter(&self.text, needle) {
            let i = self.starts.partition_point(|&s| s as usize <= hit) - 1;
            if last == Some(i) {
                continue;
            }
            last = Some(i);
            let start = self.starts[i] as usize;
            // The word's `\0` ends it.
            let end = self
                .starts
                .get(i + 1)
                .map_or(self.text.len(), |&s| s as usize)
                - 1;
            let w = &self.text[start..end];
            // Judged on the word, not the hit: hits do not overlap, so a later one could be
            // the one at its end.
            let fits = match placement {
                Placement::Whole => w == needle,
                Placement::End => w.ends_with(needle),
                Placement::Start => w.starts_with(needle),
                Placement::Anywhere => true,
            };
            if fits && let Ok(w) = std::str::from_utf8(w) {
                out.push(w);
            }
        }
        out
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.text.len() + 4 * self.starts.len()
    }
}

/// Writes the word lists of a complete tag index into its directory ([`WORDS_FILE`]): the
/// magic, the number of lists, then each list's byte length (`u64`, little-endian) and text.
pub fn save(dir: &Path, lists: &[WordList]) -> Result<()> {
    let mut out = Vec::with_capacity(16 + lists.iter().map(|l| 8 + l.text.len()).sum::<usize>());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(lists.len() as u64).to_le_bytes());
    for l in lists {
        out.extend_from_slice(&(l.text.len() as u64).to_le_bytes());
        out.extend_from_slice(&l.text);
    }
    let path = dir.join(WORDS_FILE);
    std::fs::write(&path, out).map_err(StorageError::io(&path))
}

/// The word lists of a [`WORDS_FILE`]'s bytes, or `None` when they are not of this format (the
/// caller then reads the term dictionaries).
pub fn parse(bytes: &[u8]) -> Option<Vec<WordList>> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let number = |b: &[u8]| -> Option<usize> {
        usize::try_from(u64::from_le_bytes(b.get(..8)?.try_into().ok()?)).ok()
    };
    let count = number(rest)?;
    let mut rest = &rest[8..];
    let mut lists = Vec::new();
    for _ in 0..count {
        let len = number(rest)?;
        let text = rest.get(8..8usize.checked_add(len)?)?;
        lists.push(WordList::from_text(text.to_vec())?);
        rest = &rest[8 + len..];
    }
    rest.is_empty().then_some(lists)
}

/// Calls `f` with each term of `field` in one tantivy segment, in order.
fn each_term(reader: &SegmentReader, field: Field, mut f: impl FnMut(&[u8])) -> Result<()> {
    let index = reader.inverted_index(field)?;
    let mut stream = index
        .terms()
        .stream()
        .map_err(tantivy::TantivyError::from)?;
    while stream.advance() {
        f(stream.key());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn placements() {
        let l = WordList::from_words(["abcab", "carlsen", "ab", "xab"]);
        assert_eq!(l.matching("ab", Placement::Whole), ["ab"]);
        assert_eq!(l.matching("ab", Placement::Start), ["abcab", "ab"]);
        assert_eq!(l.matching("ab", Placement::End), ["abcab", "ab", "xab"]);
        assert_eq!(
            l.matching("ab", Placement::Anywhere),
            ["abcab", "ab", "xab"]
        );
        assert_eq!(l.matching("bc", Placement::Anywhere), ["abcab"]);
        // Never across two words.
        assert!(l.matching("bcarl", Placement::Anywhere).is_empty());
        assert!(l.matching("", Placement::Anywhere).is_empty());
    }

    /// Saved lists read back the same; a damaged file reads as none.
    #[test]
    fn saved_lists_load() {
        let load = |dir: &Path| parse(&std::fs::read(dir.join(WORDS_FILE)).ok()?);
        let dir = tempfile::tempdir().unwrap();
        let lists = vec![
            WordList::from_words(["ab", "carlsen", "xab"]),
            WordList::default(),
            WordList::from_words(["ljubojević"]),
        ];
        save(dir.path(), &lists).unwrap();
        let back = load(dir.path()).expect("saved");
        assert_eq!(back.len(), 3);
        for (a, b) in lists.iter().zip(&back) {
            assert_eq!((&a.text, &a.starts), (&b.text, &b.starts));
        }
        assert_eq!(back[0].matching("ab", Placement::End), ["ab", "xab"]);
        let path = dir.path().join(WORDS_FILE);
        let bytes = std::fs::read(&path).unwrap();
        for cut in [0, 7, 9, 20, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            assert!(load(dir.path()).is_none(), "cut at {cut}");
        }
        std::fs::remove_file(&path).unwrap();
        assert!(load(dir.path()).is_none());
    }

    proptest! {
        #[test]
        fn matching_is_what_the_placement_says(
            words in proptest::collection::btree_set("[a-c]{1,6}", 0..40),
            word in "[a-c]{1,3}",
            open_left: bool,
            open_right: bool,
        ) {
            let l = WordList::from_words(&words);
            let p = Placement::of(open_left, open_right);
            let want: Vec<&str> = words
                .iter()
                .map(String::as_str)
                .filter(|w| match p {
                    Placement::Whole => *w == word,
                    Placement::End => w.ends_with(&word),
                    Placement::Start => w.starts_with(&word),
                    Placement::Anywhere => w.contains(&word),
                })
                .collect();
            prop_assert_eq!(l.matching(&word, p), want);
        }
    }
}
