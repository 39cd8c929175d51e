//! Differential test of tag search: the database's index of distinct tag values (one tantivy
//! document per value, games from bitmaps) must answer every query exactly as a plain tantivy
//! index with one document per game would, over real games split into several segments (and
//! fail where it fails).

use std::collections::BTreeSet;

use cqldb_indexer::{IngestOptions, Input, Progress, ingest};
use cqldb_storage::tags::{TEXT_TAGS, register_tokenizer, text_indexing};
use cqldb_storage::{Database, DbWriter, WriterOptions};
use tantivy::collector::DocSetCollector;
use tantivy::query::QueryParser;
use tantivy::schema::{FAST, OwnedValue, Schema};
use tantivy::{Index, TantivyDocument};

/// The one-document-per-game index (what cqldb built before, kept here as the reference).
fn reference(db: &Database, games: u64) -> (Index, Vec<tantivy::schema::Field>) {
    let mut b = Schema::builder();
    let game = b.add_u64_field("game", FAST);
    // With field norms, as the database's indexes had them before they were dropped: the
    // reference does not share that choice.
    let indexing = text_indexing().set_fieldnorms(true);
    let text_options =
        tantivy::schema::TextOptions::default().set_indexing_options(indexing.clone());
    let text: Vec<_> = TEXT_TAGS
        .iter()
        .map(|t| b.add_text_field(&t.to_lowercase(), text_options.clone()))
        .collect();
    let json = tantivy::schema::JsonObjectOptions::default().set_indexing_options(indexing);
    let all = b.add_json_field("tags", json);
    let index = Index::create_in_ram(b.build());
    register_tokenizer(&index);
    let mut writer = index.writer_with_num_threads(1, 50 << 20).unwrap();
    for g in 1..=games {
        let tags = cqldb_indexer::tree::build(&db.game_text(g).unwrap()).tags;
        let mut doc = TantivyDocument::new();
        doc.add_u64(game, g);
        let mut other = std::collections::BTreeMap::new();
        for (name, value) in tags {
            match TEXT_TAGS.iter().position(|t| t.eq_ignore_ascii_case(&name)) {
                Some(i) => doc.add_text(text[i], &value),
                None => {
                    other.insert(name.to_lowercase(), OwnedValue::Str(value));
                }
            }
        }
        doc.add_object(all, other);
        writer.add_document(doc).unwrap();
    }
    writer.commit().unwrap();
    (index, text)
}

fn reference_search(
    index: &Index,
    fields: &[tantivy::schema::Field],
    q: &str,
) -> Option<BTreeSet<u64>> {
    let mut parser = QueryParser::for_index(index, fields.to_vec());
    parser.set_conjunction_by_default();
    let query = parser.parse_query(q).ok()?;
    let searcher = index.reader().unwrap().searcher();
    let games = searcher
        .search(&query, &DocSetCollector)
        .unwrap()
        .into_iter()
        .filter_map(|a| {
            searcher
                .segment_reader(a.segment_ord)
                .fast_fields()
                .u64("game")
                .unwrap()
                .first(a.doc_id)
        })
        .collect();
    Some(games)
}

/// `tags.PlyCount` as `tags.plycount`.
fn lowercase_paths(q: &str) -> String {
    let mut out = String::new();
    let mut rest = q;
    while let Some(i) = rest.find("tags.") {
        out.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let end = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        out.push_str(&rest[..end].to_lowercase());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn value_index_answers_like_a_per_game_index() {
    let file = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../shared/data/variations/pychess_world_matches.pgn");
    let tmp = tempfile::tempdir().unwrap();
    let options = WriterOptions {
        segment_positions: 10_000,
        ..WriterOptions::default()
    };
    let mut w = DbWriter::open(tmp.path(), options).unwrap();
    ingest(
        &[Input::Path(file)],
        &mut w,
        IngestOptions::default(),
        &Progress::default(),
    )
    .unwrap();
    w.commit().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    let stats = db.stats().unwrap();
    assert!(stats.segments > 2, "several segments: {}", stats.segments);
    let (index, fields) = reference(&db, stats.games);
    let queries = [
        "white:kasparov",
        "kasparov",
        "karpov kasparov",
        "white:karpov AND black:kasparov",
        "white:karpov OR black:karpov",
        "+white:karpov -black:kasparov",
        "(white:karpov OR black:karpov) AND tags.Result:\"1-0\"",
        "(white:karpov OR black:karpov) AND tags.PlyCount:80",
        "white:(",
        "",
        "white:\"kasparov, g\"",
        "tags.Round:1",
        "tags.ECO:B20 OR tags.ECO:C42",
        "tags.Date:1985*",
        "event:world -site:moscow",
        "event:championship AND (tags.Result:\"1/2-1/2\" OR tags.Result:\"0-1\")",
        "nosuchplayer",
        "white:botvinnik OR white:tal OR white:petrosian OR white:spassky",
    ];
    let mut nonempty = 0;
    for q in queries {
        // The reference keeps tag names lowercased as cqldb does; cqldb lowercases the
        // query's names itself.
        let expected = reference_search(&index, &fields, &lowercase_paths(q));
        let got = db
            .search_tags(q)
            .ok()
            .map(|g| g.into_iter().collect::<BTreeSet<u64>>());
        assert_eq!(got, expected, "{q}");
        nonempty += usize::from(got.is_some_and(|g| !g.is_empty()));
    }
    assert!(nonempty >= 10, "most queries find games: {nonempty}");
}
