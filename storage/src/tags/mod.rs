//! Full-text search over tag values, one tantivy index per segment.
//!
//! The names people search by most (White, Black, Event, Site, Annotator) get their own text
//! fields (`white:carlsen`); every other tag goes into a JSON field, so `tags.Opening:sicilian`
//! finds any tag. A segment's tag index is written in its own directory next to the segment file and, like
//! the segment, becomes part of the database only when the catalog commits it.
//!
//! Tag values repeat a great deal (a player, an event, a date or a round is shared by many games),
//! so the tantivy index holds one document per *distinct* (tag, value) pair of the segment, with
//! that value's number; which games carry a value is a game bitmap of the segment
//! ([`crate::BitmapKey::TagValue`]). Indexing one document per game instead cost an eighth of all
//! ingest time. A query is parsed with tantivy's grammar and evaluated leaf by leaf: each leaf is a
//! tantivy search over the values, its games the union of their bitmaps, and the boolean structure
//! is applied to game sets, so a query means what it would mean over one document per game.
//!
//! Here: the schema, the writer and the reader; `query.rs` evaluates a parsed query to games,
//! `dir.rs` is the index's directory (read-only access, digest, permissions), and
//! `tag_words.rs` (beside this folder) searches inside words.

use std::path::Path;

use roaring::RoaringBitmap;
use rustc_hash::FxHashMap;
use tantivy::query::QueryParser;
use tantivy::schema::{FAST, Field, OwnedValue, Schema};
use tantivy::{Index, IndexWriter, Searcher, TantivyDocument};

use crate::error::{Result, StorageError};
use crate::schema::GameMeta;
use crate::tag_words::{Placement, WordList};

mod dir;
mod query;

use dir::{DirFiles, ReadOnlyDir};
pub use dir::{dir_digest, match_permissions};
use query::{Eval, games_of_values};

/// A value document's `value` field with this bit set holds its one game (the low 32 bits)
/// instead of a value number: most values of a large collection (a game's `Site` URL, its
/// exact date and round) belong to one game, and a bitmap each made half of all the keys a
/// segment holds, which every opening reads.
pub const INLINE_GAME: u64 = 1 << 32;

/// Whether a value held by `games` keeps them in its document rather than in a bitmap.
pub fn inlined(games: &[u32]) -> bool {
    games.len() == 1
}

/// How deep parentheses may nest in a tag query.
pub const MAX_NESTING: usize = 200;

/// Tags with a dedicated, default-searched field.
pub const TEXT_TAGS: [&str; 5] = ["White", "Black", "Event", "Site", "Annotator"];

/// tantivy's smallest indexing budget (15 MB): a segment has only its distinct tag values to index.
const WRITER_HEAP: usize = 15_000_000;

struct Fields {
    value: Field,
    /// 1 on a value with a word too long to be indexed ([`LONGEST_WORD`]).
    long: Field,
    text: Vec<Field>,
    all: Field,
    /// The value as read, `name \0 value` (stored, not indexed): substring searches check it,
    /// so that their answer is exact rather than the words' superset.
    raw: Field,
}

/// Words of this many bytes or more are not indexed; a value with such a word is marked
/// (`long`), so that substring searches, which need its words, do not miss it.
pub const LONGEST_WORD: usize = 255;

/// The tokenizer of every tag field: words of letters and digits, lowercased, accents folded
/// (`Ljubojević` is found as `ljubojevic`), words of [`LONGEST_WORD`] bytes or more left out.
pub const TOKENIZER: &str = "cqldb_tags";

/// Registers [`TOKENIZER`] with an index (a tag index is unreadable without it).
pub fn register_tokenizer(index: &Index) {
    use tantivy::tokenizer::{
        AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer,
    };
    let analyzer = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build();
    index.tokenizers().register(TOKENIZER, analyzer);
}

/// How tag text is indexed: [`TOKENIZER`]'s words with their positions (for phrases such as
/// `white:"kasparov, g"` and prefixes such as `white:kasp*`).
///
/// No field norms: they serve only scoring, and a tag search collects documents without
/// scores (tantivy reads a field without norms as all ones). They were a byte per value
/// document per field, 12-26 % of a segment's tag index, which every search reads through
/// to check the index's digest.
pub fn text_indexing() -> tantivy::schema::TextFieldIndexing {
    tantivy::schema::TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER)
        .set_index_option(tantivy::schema::IndexRecordOption::WithFreqsAndPositions)
        .set_fieldnorms(false)
}

fn schema() -> (Schema, Fields) {
    schema_with(Norms::Dropped)
}

/// Whether an index's fields have norms: indexes written before they were dropped have them,
/// and must read the same.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Norms {
    Dropped,
    #[cfg(test)]
    Kept,
}

fn schema_with(norms: Norms) -> (Schema, Fields) {
    let kept = norms != Norms::Dropped;
    let mut b = Schema::builder();
    let value = b.add_u64_field("value", FAST);
    let mut long = tantivy::schema::NumericOptions::default().set_indexed();
    if kept {
        long = long.set_fieldnorm();
    }
    let long = b.add_u64_field("long", long);
    let indexing = text_indexing().set_fieldnorms(kept);
    let text_options =
        tantivy::schema::TextOptions::default().set_indexing_options(indexing.clone());
    let text = TEXT_TAGS
        .iter()
        .map(|t| b.add_text_field(&t.to_lowercase(), text_options.clone()))
        .collect();
    // Every other tag is a key of one JSON field (`tags.Opening:sicilian`).
    let json = tantivy::schema::JsonObjectOptions::default().set_indexing_options(indexing);
    let all = b.add_json_field("tags", json);
    let raw = b.add_text_field("raw", tantivy::schema::STORED);
    (
        b.build(),
        Fields {
            value,
            long,
            text,
            all,
            raw,
        },
    )
}

/// The fields a tag query may name besides the tags themselves.
pub const QUERY_FIELDS: [&str; 13] = [
    "white",
    "black",
    "player",
    "event",
    "site",
    "annotator",
    "date",
    "result",
    "eco",
    "year",
    "elo",
    "whiteelo",
    "blackelo",
];

/// The tag names a query's fields ask for that are not among [`QUERY_FIELDS`] (lowercased,
/// without a `tags.` prefix), to be checked against the tags the games have.
pub fn tag_fields(query: &str) -> Result<Vec<String>> {
    use tantivy::query_grammar::{UserInputAst, UserInputLeaf};
    check_nesting(query)?;
    let ast = tantivy::query_grammar::parse_query(query)
        .map_err(|_| tags_error(format!("cannot parse \"{query}\"")))?;
    let mut out = Vec::new();
    let mut stack = vec![ast];
    while let Some(node) = stack.pop() {
        let field = match node {
            UserInputAst::Clause(cs) => {
                stack.extend(cs.into_iter().map(|(_, c)| c));
                continue;
            }
            UserInputAst::Boost(inner, _) => {
                stack.push(*inner);
                continue;
            }
            UserInputAst::Leaf(leaf) => match *leaf {
                UserInputLeaf::Literal(l) => l.field_name,
                UserInputLeaf::Range { field, .. }
                | UserInputLeaf::Set { field, .. }
                | UserInputLeaf::Regex { field, .. } => field,
                UserInputLeaf::Exists { field } => Some(field),
                UserInputLeaf::All => None,
            },
        };
        let Some(field) = field else { continue };
        let bare = field.strip_prefix("tags.").unwrap_or(&field).to_lowercase();
        if !QUERY_FIELDS.contains(&bare.as_str()) && !out.contains(&bare) {
            out.push(bare);
        }
    }
    Ok(out)
}

/// tantivy's query grammar recurses on each parenthesis: a deep nesting would overflow the
/// stack, which no error can report; refused before the grammar sees it.
fn check_nesting(query: &str) -> Result<()> {
    let mut depth = 0usize;
    for c in query.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_NESTING {
            return Err(tags_error(format!(
                "parentheses nest more than {MAX_NESTING} deep"
            )));
        }
    }
    Ok(())
}

fn tags_error(message: String) -> StorageError {
    StorageError::TagQuery(message)
}

/// Writes the tag index of one segment.
pub struct TagWriter {
    /// The index's directory.
    dir: std::path::PathBuf,
    writer: IndexWriter,
    fields: Fields,
    /// Value number of each distinct `name \0 value`.
    ids: FxHashMap<Box<str>, u32>,
    /// Games (ascending) of each value number.
    games: Vec<Vec<u32>>,
    key: String,
}

impl TagWriter {
    /// Creates a new, empty tag index in `dir` (which must not exist).
    pub fn create(dir: &Path) -> Result<Self> {
        Self::create_with(dir, Norms::Dropped)
    }

    fn create_with(dir: &Path, norms: Norms) -> Result<Self> {
        std::fs::create_dir(dir).map_err(StorageError::io(dir))?;
        let (schema, fields) = schema_with(norms);
        let index = Index::create_in_dir(dir, schema)?;
        register_tokenizer(&index);
        let writer = index.writer_with_num_threads(1, WRITER_HEAP)?;
        Ok(Self {
            dir: dir.to_owned(),
            writer,
            fields,
            ids: FxHashMap::default(),
            games: Vec::new(),
            key: String::new(),
        })
    }

    /// Adds one game's tags under its segment-local number (games in ascending order).
    pub fn add(&mut self, game: u32, tags: &[(String, String)]) -> Result<()> {
        for (name, value) in tags {
            self.key.clear();
            self.key.push_str(name);
            self.key.push('\0');
            self.key.push_str(value);
            let id = match self.ids.get(self.key.as_str()) {
                Some(&id) => id,
                None => {
                    // Its document is written at `finish`, once its games are known.
                    let id = self.games.len() as u32;
                    self.ids.insert(self.key.as_str().into(), id);
                    self.games.push(Vec::new());
                    id
                }
            };
            let games = &mut self.games[id as usize];
            if games.last() != Some(&game) {
                games.push(game);
            }
        }
        Ok(())
    }

    /// Writes the document of the value `key` (`name \0 value`): `value` is its number, or
    /// its one game with [`INLINE_GAME`].
    fn index_value(&mut self, value_field: u64, key: &str) -> Result<()> {
        let (name, value) = key.split_once('\0').unwrap_or((key, ""));
        let mut doc = TantivyDocument::new();
        doc.add_u64(self.fields.value, value_field);
        doc.add_text(self.fields.raw, key);
        let longest = value
            .split(|c: char| !c.is_alphanumeric())
            .map(str::len)
            .max()
            .unwrap_or(0);
        // The tokenizer drops words of LONGEST_WORD bytes and more.
        if longest >= LONGEST_WORD {
            doc.add_u64(self.fields.long, 1);
        }
        match TEXT_TAGS.iter().position(|t| t.eq_ignore_ascii_case(name)) {
            Some(i) => doc.add_text(self.fields.text[i], value),
            None => {
                // Keys lowercased, so that `tags.Opening`, `tags.opening` and `opening` agree.
                let object = [(name.to_lowercase(), OwnedValue::Str(value.to_owned()))];
                doc.add_object(self.fields.all, object.into_iter().collect());
            }
        }
        self.writer.add_document(doc)?;
        Ok(())
    }

    /// Commits and waits for merges (the directory is then complete on disk) and returns, for
    /// each value number, the games that carry it, for the segment's bitmaps.
    pub fn finish(mut self) -> Result<Vec<Vec<u32>>> {
        // In value-number order, as they were first seen.
        let mut keys: Vec<(u32, Box<str>)> = std::mem::take(&mut self.ids)
            .into_iter()
            .map(|(k, id)| (id, k))
            .collect();
        keys.sort_unstable_by_key(|(id, _)| *id);
        for (id, key) in &keys {
            let games = &self.games[*id as usize];
            let field = match games.as_slice() {
                [game] if inlined(games) => INLINE_GAME | u64::from(*game),
                _ => u64::from(*id),
            };
            self.index_value(field, key)?;
        }
        self.writer.commit()?;
        let index = self.writer.index().clone();
        self.writer.wait_merging_threads()?;
        // The text fields' words, for searches inside words (see `tag_words.rs`): written once
        // the index is complete, so no merge of tantivy's can remove the file.
        let searcher = index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .try_into()?
            .searcher();
        let lists = self
            .fields
            .text
            .iter()
            .map(|&field| WordList::read(&searcher, field))
            .collect::<Result<Vec<_>>>()?;
        crate::tag_words::save(&self.dir, &lists)?;
        Ok(self.games)
    }
}

/// Decompressed blocks of stored values a reader keeps (tantivy's default is 100 per index
/// segment, 16 KiB each): a search reads the stored values of its candidate documents once,
/// and a kept reader's cache must stay small and counted.
const DOC_STORE_BLOCKS: usize = 8;

/// What an open [`TagReader`] is taken to hold besides its files and word lists: tantivy's
/// searcher, segment readers and cached blocks of stored values (up to [`DOC_STORE_BLOCKS`]
/// per index segment, and an index has one to a few) (see [`TagReader::held_bytes`]).
pub const OPEN_READER_BYTES: usize = 512 << 10;

/// Reads the tag index of one segment.
pub struct TagReader {
    dir: std::path::PathBuf,
    /// The index's files, read at open (tantivy's handles share them).
    files: std::sync::Arc<DirFiles>,
    index: Index,
    fields: Fields,
    /// One searcher for the reader's life: a segment's tag index never changes once written,
    /// and opening a reader per search (with its reload watcher) cost more than the search.
    searcher: Searcher,
    /// Each text field's words, read on the first search inside words: from the index's saved
    /// lists, or from its term dictionaries where it has none.
    words: [std::sync::OnceLock<WordList>; TEXT_TAGS.len()],
    /// The saved word lists ([`crate::tag_words::WORDS_FILE`]), read on the first search inside
    /// words (`None`: the index has none, or not of this format).
    saved: std::sync::OnceLock<Option<Vec<WordList>>>,
}

impl TagReader {
    /// Opens the tag index in `dir`, read-only: nothing is created or locked, so a user who
    /// may only read the database (or a read-only mount) can search it.
    pub fn open(dir: &Path) -> Result<Self> {
        crate::guard::catch(dir, || Self::open_unguarded(dir, None))
    }

    /// [`Self::open`], refusing an index whose files' digest ([`dir_digest`]) is not
    /// `expected` (what the catalog committed): the files are read once, and the bytes checked
    /// are the bytes searched.
    pub fn open_checked(dir: &Path, expected: u32) -> Result<Self> {
        crate::guard::catch(dir, || Self::open_unguarded(dir, Some(expected)))
    }

    fn open_unguarded(dir: &Path, expected: Option<u32>) -> Result<Self> {
        let files = DirFiles::read(dir)?;
        if expected.is_some_and(|want| files.digest() != want) {
            return Err(StorageError::corrupt(
                dir,
                "the tag index differs from what was committed (damaged); `cqldb repair` rebuilds it from the games' text",
            ));
        }
        let files = std::sync::Arc::new(files);
        let index = Index::open(ReadOnlyDir(files.clone()))?;
        register_tokenizer(&index);
        let (_, fields) = schema();
        let current = index
            .schema()
            .get_field_entry(fields.all)
            .field_type()
            .get_index_record_option()
            .is_some_and(|o| o.has_positions());
        let current = current
            && index.schema().get_field("long").ok() == Some(fields.long)
            && index.schema().get_field("raw").ok() == Some(fields.raw);
        if index.schema().get_field("value").ok() != Some(fields.value) || !current {
            return Err(StorageError::corrupt(
                dir,
                "tag index of an older cqldb version; index the games again into a new database",
            ));
        }
        let searcher = index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .doc_store_cache_num_blocks(DOC_STORE_BLOCKS)
            .try_into()?
            .searcher();
        Ok(Self {
            dir: dir.to_owned(),
            files,
            index,
            fields,
            searcher,
            words: Default::default(),
            saved: std::sync::OnceLock::new(),
        })
    }

    /// Segment-local numbers of the games matching a tantivy query such as `white:carlsen` or
    /// `tags.Opening:sicilian`; bare words search White, Black, Event, Site and Annotator, and
    /// words without `+`/`-`/`AND`/`OR` must all match. Sorted.
    ///
    /// Field names are forgiving: `White:`, `tags.White:` and `white:` are the same field, any
    /// other name is a tag, in any case (`opening:`, `tags.Opening:`).
    /// `result:1-0`, `whiteelo:`, `blackelo:`, `elo:` (either player), `year:` and `eco:` read
    /// the games' indexed attributes and take ranges (`elo:[2600 TO *]`, `year:{1990 TO
    /// 2000]`, `eco:[B20 TO B99]`).
    ///
    /// `games_of(v)` gives the games of value number `v` (the segment's bitmap); `all` is every
    /// game of the segment (for a query that only excludes); `meta(g)` a game's attributes.
    pub fn search(
        &self,
        query: &str,
        games_of: &dyn Fn(u32) -> Result<RoaringBitmap>,
        all: &RoaringBitmap,
        meta: &dyn Fn(u32) -> Option<GameMeta>,
    ) -> Result<Vec<u32>> {
        check_nesting(query)?;
        crate::guard::catch(&self.dir, || {
            self.search_unguarded(query, games_of, all, meta)
        })
    }

    fn search_unguarded(
        &self,
        query: &str,
        games_of: &dyn Fn(u32) -> Result<RoaringBitmap>,
        all: &RoaringBitmap,
        meta: &dyn Fn(u32) -> Option<GameMeta>,
    ) -> Result<Vec<u32>> {
        let ast = tantivy::query_grammar::parse_query(query)
            .map_err(|_| tags_error(format!("cannot parse \"{query}\"")))?;
        let searcher = &self.searcher;
        let mut parser = QueryParser::for_index(&self.index, self.fields.text.clone());
        parser.set_conjunction_by_default();
        let _ = self.fields.all;
        let eval = Eval {
            searcher,
            parser: &parser,
            games_of,
            all,
            meta,
        };
        Ok(eval.games(ast)?.into_iter().collect())
    }
}

impl TagReader {
    /// The names (lowercased) of the tags without their own field that some game of the
    /// segment has.
    pub fn tag_names(&self) -> Result<Vec<String>> {
        crate::guard::catch(&self.dir, || {
            query::json_paths(&self.searcher, self.fields.all)
        })
    }

    /// Exactly the segment's games with a tag named `tag` (the name compared as written)
    /// whose value contains `needle` as a substring, or `None` when the index cannot tell (a
    /// needle without letters or digits).
    ///
    /// The field holds each value's words, lowercased. A value containing the needle holds
    /// every word the needle has whole (delimited inside the needle on both sides); a word at
    /// the needle's start may be the end of a longer word, one at its end the start of one, and
    /// a needle of one word may sit anywhere in a word: exact terms for the first kind, term
    /// sets of the words that fit for the others ([`WordList`]), all required in the same value; and every value with a word too
    /// long to be indexed. The values found are then checked as stored (name and substring).
    pub fn games_containing(
        &self,
        tag: &str,
        needle: &str,
        games_of: &dyn Fn(u32) -> Result<RoaringBitmap>,
    ) -> Result<Option<RoaringBitmap>> {
        crate::guard::catch(&self.dir, || {
            self.games_containing_unguarded(tag, needle, games_of)
        })
    }

    fn games_containing_unguarded(
        &self,
        tag: &str,
        needle: &str,
        games_of: &dyn Fn(u32) -> Result<RoaringBitmap>,
    ) -> Result<Option<RoaringBitmap>> {
        use tantivy::query::{BooleanQuery, Query, TermQuery};
        use tantivy::schema::IndexRecordOption;
        use tantivy::tokenizer::TokenStream;
        let Some(i) = TEXT_TAGS.iter().position(|t| *t == tag) else {
            return self.other_tag_containing(tag, needle, games_of);
        };
        let field = self.fields.text[i];
        let mut analyzer = self.index.tokenizer_for_field(field)?;
        let mut stream = analyzer.token_stream(needle);
        let mut parts: Vec<(tantivy::query::Occur, Box<dyn Query>)> = Vec::new();
        while stream.advance() {
            let t = stream.token();
            let q: Box<dyn Query> =
                match Placement::of(t.offset_from == 0, t.offset_to == needle.len()) {
                    Placement::Whole => Box::new(TermQuery::new(
                        tantivy::Term::from_field_text(field, &t.text),
                        IndexRecordOption::Basic,
                    )),
                    placement => {
                        let terms: Vec<tantivy::Term> = self
                            .words(i, field)?
                            .matching(&t.text, placement)
                            .into_iter()
                            .map(|w| tantivy::Term::from_field_text(field, w))
                            .collect();
                        any_term(terms)
                    }
                };
            parts.push((tantivy::query::Occur::Must, q));
        }
        if parts.is_empty() {
            return Ok(None);
        }
        // Values with a word too long to be indexed might hold the needle in it: kept.
        let long = TermQuery::new(
            tantivy::Term::from_field_u64(self.fields.long, 1),
            IndexRecordOption::Basic,
        );
        let query = BooleanQuery::new(vec![
            (
                tantivy::query::Occur::Should,
                Box::new(BooleanQuery::new(parts)) as Box<dyn Query>,
            ),
            (tantivy::query::Occur::Should, Box::new(long)),
        ]);
        self.checked_as_stored(&query, tag, needle, games_of)
            .map(Some)
    }

    /// [`Self::games_containing`] for a tag without its own field (`ECO`, `Round`, ...): the
    /// values under its name in the JSON field with a word holding the needle's first word
    /// (few: one tag's distinct values), checked as stored.
    fn other_tag_containing(
        &self,
        tag: &str,
        needle: &str,
        games_of: &dyn Fn(u32) -> Result<RoaringBitmap>,
    ) -> Result<Option<RoaringBitmap>> {
        use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
        use tantivy::schema::IndexRecordOption;
        use tantivy::tokenizer::TokenStream;
        let path = tag.to_lowercase();
        let mut analyzer = self.index.tokenizer_for_field(self.fields.all)?;
        let mut stream = analyzer.token_stream(needle);
        if !stream.advance() {
            return Ok(None);
        }
        let first = stream.token().text.clone();
        let mut parts: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for word in query::json_words(&self.searcher, self.fields.all, &path)? {
            if word.contains(first.as_str()) {
                let mut term = tantivy::Term::from_field_json_path(self.fields.all, &path, false);
                term.append_type_and_str(&word);
                parts.push((
                    Occur::Should,
                    Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                ));
            }
        }
        parts.push((
            Occur::Should,
            Box::new(TermQuery::new(
                tantivy::Term::from_field_u64(self.fields.long, 1),
                IndexRecordOption::Basic,
            )),
        ));
        self.checked_as_stored(&BooleanQuery::new(parts), tag, needle, games_of)
            .map(Some)
    }

    /// The games of the values `query` finds whose tag is `tag` and whose value, as stored,
    /// contains `needle`.
    fn checked_as_stored(
        &self,
        query: &dyn tantivy::query::Query,
        tag: &str,
        needle: &str,
        games_of: &dyn Fn(u32) -> Result<RoaringBitmap>,
    ) -> Result<RoaringBitmap> {
        let searcher = &self.searcher;
        let raw = self.fields.raw;
        let holds_needle = |addr: tantivy::DocAddress| -> Result<bool> {
            let doc: TantivyDocument = searcher.doc(addr)?;
            let text = doc
                .get_first(raw)
                .and_then(|v| tantivy::schema::Value::as_str(&v))
                .unwrap_or_default();
            Ok(text
                .split_once('\0')
                .is_some_and(|(name, value)| name == tag && value.contains(needle)))
        };
        games_of_values(searcher, query, games_of, &holds_needle)
    }

    /// About what the open reader holds in memory: its files, the word lists it has read, and
    /// tantivy's own structures, taken as [`OPEN_READER_BYTES`].
    pub fn held_bytes(&self) -> usize {
        let saved = self
            .saved
            .get()
            .and_then(Option::as_ref)
            .map_or(0, |lists| lists.iter().map(WordList::held_bytes).sum());
        let read: usize = self
            .words
            .iter()
            .filter_map(std::sync::OnceLock::get)
            .map(WordList::held_bytes)
            .sum();
        OPEN_READER_BYTES + self.files.len() + saved + read
    }

    /// The words of text field `i` (`field`), read on first use.
    fn words(&self, i: usize, field: Field) -> Result<&WordList> {
        let saved = self.saved.get_or_init(|| {
            crate::tag_words::parse(self.files.get(crate::tag_words::WORDS_FILE)?.as_slice())
        });
        if let Some(list) = saved
            .as_ref()
            .filter(|lists| lists.len() == TEXT_TAGS.len())
            .and_then(|lists| lists.get(i))
        {
            return Ok(list);
        }
        let cell = &self.words[i];
        if let Some(w) = cell.get() {
            return Ok(w);
        }
        let words = WordList::read(&self.searcher, field)?;
        Ok(cell.get_or_init(|| words))
    }
}

/// Documents with any of `terms`. A term set query builds a finite-state automaton of its
/// terms, and the builder's zeroed tables cost more than the search (about a twentieth of
/// writing a player's 1,141 games as a command); a handful of terms, what a needle's word
/// usually fits, is a disjunction of term queries instead.
fn any_term(terms: Vec<tantivy::Term>) -> Box<dyn tantivy::query::Query> {
    use tantivy::query::{BooleanQuery, EmptyQuery, Occur, Query, TermQuery, TermSetQuery};
    const FEW: usize = 16;
    match terms.len() {
        0 => Box::new(EmptyQuery),
        1..=FEW => Box::new(BooleanQuery::new(
            terms
                .into_iter()
                .map(|t| {
                    let q: Box<dyn Query> =
                        Box::new(TermQuery::new(t, tantivy::schema::IndexRecordOption::Basic));
                    (Occur::Should, q)
                })
                .collect(),
        )),
        _ => Box::new(TermSetQuery::new(terms)),
    }
}

#[cfg(test)]
mod tests;
