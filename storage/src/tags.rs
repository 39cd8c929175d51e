//! Full-text search over tag values, one tantivy index per segment.
//!
//! The names people search by most (White, Black, Event, Site, Annotator) get their own text
//! fields (`white:carlsen`); every other tag goes into a JSON field, so `tags.Opening:sicilian`
//! finds any tag. A segment's tag index is written in its own directory next to the segment file and, like
//! the segment, becomes part of the database only when the catalog commits it.

use std::collections::BTreeMap;
use std::path::Path;

use tantivy::collector::DocSetCollector;
use tantivy::query::QueryParser;
use tantivy::schema::{FAST, Field, OwnedValue, Schema, TEXT};
use tantivy::{Index, IndexWriter, TantivyDocument};

use crate::error::{Result, StorageError};

/// Tags with a dedicated, default-searched field.
pub const TEXT_TAGS: [&str; 5] = ["White", "Black", "Event", "Site", "Annotator"];

const WRITER_HEAP: usize = 20 << 20;

struct Fields {
    game: Field,
    text: Vec<Field>,
    all: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let game = b.add_u64_field("game", FAST);
    let text = TEXT_TAGS
        .iter()
        .map(|t| b.add_text_field(&t.to_lowercase(), TEXT))
        .collect();
    // Other tags are searched by term (`tags.Opening:sicilian`); without frequencies and
    // positions their postings cost a third of the indexing time less.
    let basic = tantivy::schema::JsonObjectOptions::default().set_indexing_options(
        tantivy::schema::TextFieldIndexing::default()
            .set_tokenizer("default")
            .set_index_option(tantivy::schema::IndexRecordOption::Basic),
    );
    let all = b.add_json_field("tags", basic);
    (b.build(), Fields { game, text, all })
}

/// Writes the tag index of one segment.
pub struct TagWriter {
    writer: IndexWriter,
    fields: Fields,
}

impl TagWriter {
    /// Creates a new, empty tag index in `dir` (which must not exist).
    pub fn create(dir: &Path) -> Result<Self> {
        std::fs::create_dir(dir).map_err(StorageError::io(dir))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(dir, schema)?;
        let writer = index.writer_with_num_threads(1, WRITER_HEAP)?;
        Ok(Self { writer, fields })
    }

    /// Adds one game's tags under its segment-local number.
    pub fn add(&mut self, game: u32, tags: &[(String, String)]) -> Result<()> {
        let mut doc = TantivyDocument::new();
        doc.add_u64(self.fields.game, u64::from(game));
        let mut all = BTreeMap::new();
        for (name, value) in tags {
            // Tags with their own field are not indexed twice (that doubled the indexing work).
            match TEXT_TAGS.iter().position(|t| t.eq_ignore_ascii_case(name)) {
                Some(i) => doc.add_text(self.fields.text[i], value),
                None => {
                    all.insert(name.clone(), OwnedValue::Str(value.clone()));
                }
            }
        }
        doc.add_object(self.fields.all, all);
        self.writer.add_document(doc)?;
        Ok(())
    }

    /// Commits and waits for merges; the directory is then complete on disk.
    pub fn finish(mut self) -> Result<()> {
        self.writer.commit()?;
        self.writer.wait_merging_threads()?;
        Ok(())
    }
}

/// Reads the tag index of one segment.
pub struct TagReader {
    index: Index,
    fields: Fields,
}

impl TagReader {
    /// Opens the tag index in `dir`.
    pub fn open(dir: &Path) -> Result<Self> {
        let index = Index::open_in_dir(dir)?;
        let (_, fields) = schema();
        Ok(Self { index, fields })
    }

    /// Segment-local numbers of the games matching a tantivy query such as `white:carlsen` or
    /// `tags.Opening:sicilian`; bare words search White, Black, Event, Site and Annotator. Sorted.
    pub fn search(&self, query: &str) -> Result<Vec<u32>> {
        let reader = self.index.reader()?;
        let searcher = reader.searcher();
        let mut parser = QueryParser::for_index(&self.index, self.fields.text.clone());
        parser.set_conjunction_by_default();
        let _ = self.fields.all;
        let q = parser.parse_query(query).map_err(|e| {
            StorageError::Tags(tantivy::TantivyError::InvalidArgument(e.to_string()))
        })?;
        let hits = searcher.search(&q, &DocSetCollector)?;
        let mut games = Vec::with_capacity(hits.len());
        for addr in hits {
            let column = searcher
                .segment_reader(addr.segment_ord)
                .fast_fields()
                .u64("game")?;
            if let Some(g) = column.first(addr.doc_id) {
                games.push(g as u32);
            }
        }
        games.sort_unstable();
        Ok(games)
    }
}
