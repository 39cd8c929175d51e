//! Evaluating a parsed tag query to a set of games: each leaf a tantivy search over the
//! distinct values, its games the union of their bitmaps; the boolean structure applied to
//! game sets; attribute ranges (`elo:[2600 TO *]`, `year:`, `eco:`, `result:`) answered from
//! the games' indexed attributes.

use roaring::RoaringBitmap;
use tantivy::Searcher;
use tantivy::collector::DocSetCollector;
use tantivy::query::QueryParser;
use tantivy::query_grammar::{Occur, UserInputAst, UserInputBound, UserInputLeaf};
use tantivy::schema::Field;

use super::{TEXT_TAGS, tags_error};
use crate::error::Result;
use crate::schema::{GameMeta, GameResult};

/// The games of every tag value (document) `query` finds and `keep` accepts: the union of their
/// bitmaps.
pub(super) fn games_of_values(
    searcher: &Searcher,
    query: &dyn tantivy::query::Query,
    games_of: &dyn Fn(u32) -> Result<RoaringBitmap>,
    keep: &dyn Fn(tantivy::DocAddress) -> Result<bool>,
) -> Result<RoaringBitmap> {
    let mut games = RoaringBitmap::new();
    for addr in searcher.search(query, &DocSetCollector)? {
        if !keep(addr)? {
            continue;
        }
        let column = searcher
            .segment_reader(addr.segment_ord)
            .fast_fields()
            .u64("value")?;
        if let Some(v) = column.first(addr.doc_id) {
            games |= games_of(v as u32)?;
        }
    }
    Ok(games)
}

/// Evaluates a parsed tag query to a set of games.
pub(super) struct Eval<'a> {
    pub(super) searcher: &'a Searcher,
    pub(super) parser: &'a QueryParser,
    pub(super) games_of: &'a dyn Fn(u32) -> Result<RoaringBitmap>,
    pub(super) all: &'a RoaringBitmap,
    pub(super) meta: &'a dyn Fn(u32) -> Option<GameMeta>,
}

impl Eval<'_> {
    /// Games matching `ast`. Nested clauses are walked with an explicit stack of pending work,
    /// so a deeply parenthesised query cannot overflow the stack.
    pub(super) fn games(&self, ast: UserInputAst) -> Result<RoaringBitmap> {
        enum Work {
            Visit(UserInputAst),
            /// Combine the last `n` results with these occurrences.
            Combine(Vec<Option<Occur>>),
        }
        let mut work = vec![Work::Visit(ast)];
        let mut results: Vec<RoaringBitmap> = Vec::new();
        while let Some(item) = work.pop() {
            match item {
                Work::Visit(UserInputAst::Boost(inner, _)) => work.push(Work::Visit(*inner)),
                Work::Visit(UserInputAst::Leaf(leaf)) => {
                    results.push(self.leaf(UserInputAst::Leaf(leaf))?)
                }
                Work::Visit(UserInputAst::Clause(clauses)) => {
                    let occurs = clauses.iter().map(|(o, _)| *o).collect();
                    work.push(Work::Combine(occurs));
                    // Pushed in reverse so results come back in clause order.
                    for (_, sub) in clauses.into_iter().rev() {
                        work.push(Work::Visit(sub));
                    }
                }
                Work::Combine(occurs) => {
                    let parts = results.split_off(results.len() - occurs.len());
                    results.push(self.combine(&occurs, parts));
                }
            }
        }
        Ok(results.pop().unwrap_or_default())
    }

    /// As tantivy combines a boolean query with conjunction by default: every required (or
    /// unmarked) part must match; if there is none, any optional part must; excluded parts
    /// must not. A query that only excludes matches every other game.
    fn combine(&self, occurs: &[Option<Occur>], parts: Vec<RoaringBitmap>) -> RoaringBitmap {
        if occurs.is_empty() {
            return RoaringBitmap::new();
        }
        let mut must: Option<RoaringBitmap> = None;
        let mut should: Option<RoaringBitmap> = None;
        let mut not = RoaringBitmap::new();
        for (occur, part) in occurs.iter().zip(parts) {
            match occur {
                None | Some(Occur::Must) => {
                    must = Some(match must {
                        Some(m) => m & part,
                        None => part,
                    })
                }
                Some(Occur::Should) => {
                    should = Some(match should {
                        Some(s) => s | part,
                        None => part,
                    })
                }
                Some(Occur::MustNot) => not |= part,
            }
        }
        let base = must.or(should).unwrap_or_else(|| self.all.clone());
        base - not
    }

    /// Games of one leaf: a game attribute's test, or the union of the games of every value
    /// tantivy finds.
    fn leaf(&self, leaf: UserInputAst) -> Result<RoaringBitmap> {
        let leaf = match leaf {
            UserInputAst::Leaf(l) => *l,
            other => return self.tantivy_leaf(other),
        };
        unsupported(&leaf)?;
        if let Some(games) = self.attribute_leaf(&leaf)? {
            return Ok(games);
        }
        let leaf = normalize_fields(leaf);
        // The grammar marks `"a b*"` as a prefix and keeps the star of `carl*` in the word
        // (a JSON tag's words are matched whole, as tantivy does: `tags.Date:1985*`).
        let text_field =
            |f: Option<&str>| f.is_none_or(|f| TEXT_TAGS.iter().any(|t| t.to_lowercase() == f));
        if let UserInputLeaf::Literal(l) = &leaf
            && (l.prefix || l.phrase.ends_with('*'))
            && text_field(l.field_name.as_deref())
        {
            return self.prefix_leaf(l.field_name.as_deref(), l.phrase.trim_end_matches('*'));
        }
        self.tantivy_leaf(UserInputAst::Leaf(Box::new(leaf)))
    }

    /// `white:kasp*`, `carl*`, `white:"garry kasp*"`: the words before the last as terms, the
    /// last as a prefix (word order is not checked), in the tags with their own field.
    fn prefix_leaf(&self, field: Option<&str>, phrase: &str) -> Result<RoaringBitmap> {
        use tantivy::query::{BooleanQuery, Occur as O, Query, RegexQuery, TermQuery};
        use tantivy::tokenizer::TokenStream;
        let schema = self.searcher.schema();
        let fields: Vec<Field> = match field {
            Some(f) => vec![schema.get_field(f)?],
            None => TEXT_TAGS
                .iter()
                .filter_map(|t| schema.get_field(&t.to_lowercase()).ok())
                .collect(),
        };
        let mut any: Vec<(O, Box<dyn Query>)> = Vec::new();
        for field in fields {
            let mut analyzer = self.searcher.index().tokenizer_for_field(field)?;
            let mut stream = analyzer.token_stream(phrase);
            let mut words = Vec::new();
            while stream.advance() {
                words.push(stream.token().text.clone());
            }
            let Some(last) = words.pop() else { continue };
            let mut all: Vec<(O, Box<dyn Query>)> = words
                .iter()
                .map(|w| -> (O, Box<dyn Query>) {
                    let term = tantivy::Term::from_field_text(field, w);
                    (
                        O::Must,
                        Box::new(TermQuery::new(
                            term,
                            tantivy::schema::IndexRecordOption::Basic,
                        )),
                    )
                })
                .collect();
            let pattern = format!("{}.*", regex::escape(&last));
            all.push((
                O::Must,
                Box::new(RegexQuery::from_pattern(&pattern, field)?),
            ));
            any.push((O::Should, Box::new(BooleanQuery::new(all))));
        }
        games_of_values(
            self.searcher,
            &BooleanQuery::new(any),
            self.games_of,
            &|_| Ok(true),
        )
    }

    fn tantivy_leaf(&self, leaf: UserInputAst) -> Result<RoaringBitmap> {
        let query = self
            .parser
            .build_query_from_user_input_ast(leaf)
            .map_err(|e| tags_error(friendly(&e)))?;
        games_of_values(self.searcher, &query, self.games_of, &|_| Ok(true))
    }

    /// `result:`, `whiteelo:`, `blackelo:`, `elo:`, `year:`, `eco:`: the games whose indexed
    /// attribute equals the value or lies in the range; `None` for other fields.
    fn attribute_leaf(&self, leaf: &UserInputLeaf) -> Result<Option<RoaringBitmap>> {
        let (field, test): (&str, Box<dyn Fn(i64) -> bool>) = match leaf {
            UserInputLeaf::Literal(l) => {
                let Some(f) = l.field_name.as_deref() else {
                    return Ok(None);
                };
                let Some(kind) = Attribute::of(f) else {
                    return Ok(None);
                };
                let v = kind.parse(&l.phrase)?;
                (f, Box::new(move |x| x == v))
            }
            UserInputLeaf::Range {
                field,
                lower,
                upper,
            } => {
                let Some(f) = field.as_deref() else {
                    return Ok(None);
                };
                let Some(kind) = Attribute::of(f) else {
                    return Ok(None);
                };
                let bound = |b: &UserInputBound| -> Result<Option<(i64, bool)>> {
                    Ok(match b {
                        UserInputBound::Inclusive(v) => Some((kind.parse(v)?, true)),
                        UserInputBound::Exclusive(v) => Some((kind.parse(v)?, false)),
                        UserInputBound::Unbounded => None,
                    })
                };
                let (lo, hi) = (bound(lower)?, bound(upper)?);
                (
                    f,
                    Box::new(move |x| {
                        lo.is_none_or(|(l, inc)| if inc { x >= l } else { x > l })
                            && hi.is_none_or(|(h, inc)| if inc { x <= h } else { x < h })
                    }),
                )
            }
            _ => return Ok(None),
        };
        let Some(kind) = Attribute::of(field) else {
            return Ok(None);
        };
        let mut games = RoaringBitmap::new();
        for g in self.all {
            let Some(m) = (self.meta)(g) else { continue };
            let hit = match kind {
                Attribute::WhiteElo => m.white_elo > 0 && test(i64::from(m.white_elo)),
                Attribute::BlackElo => m.black_elo > 0 && test(i64::from(m.black_elo)),
                Attribute::Elo => {
                    (m.white_elo > 0 && test(i64::from(m.white_elo)))
                        || (m.black_elo > 0 && test(i64::from(m.black_elo)))
                }
                Attribute::Year => m.year > 0 && test(i64::from(m.year)),
                Attribute::Eco => m.eco > 0 && test(i64::from(m.eco)),
                Attribute::Result => test(m.result as i64),
            };
            if hit {
                games.insert(g);
            }
        }
        Ok(Some(games))
    }
}

/// Refuses the query syntax tag searches do not run (rather than answer it wrongly): tantivy
/// would read `kasparov~1` as a phrase with a slop and `white:*` needs a column tags do not
/// keep.
fn unsupported(leaf: &UserInputLeaf) -> Result<()> {
    // The grammar keeps an unquoted `kasparov~1` as one word, `~1` included.
    let fuzzy_word = |l: &tantivy::query_grammar::UserInputLiteral| {
        l.delimiter == tantivy::query_grammar::Delimiter::None
            && l.phrase
                .rsplit_once('~')
                .is_some_and(|(w, n)| !w.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let why = match leaf {
        UserInputLeaf::Literal(l) if fuzzy_word(l) => format!(
            "'{}': fuzzy matching (~N) is not supported; use a prefix (kasp*) or a word of the name",
            l.phrase
        ),
        UserInputLeaf::Literal(l) if l.slop > 0 => format!(
            "'{}~{}': fuzzy and proximity matching (~N) are not supported; use a prefix (kasp*) or a word of the name",
            l.phrase, l.slop
        ),
        UserInputLeaf::Exists { field } => format!(
            "'{field}:*' (any value) is not supported; search for a word or a prefix of the value (white:a*)"
        ),
        UserInputLeaf::Regex { pattern, .. } => format!(
            "'/{pattern}/': regular expressions are not supported; use a prefix (kasp*) or words"
        ),
        UserInputLeaf::Literal(_)
        | UserInputLeaf::All
        | UserInputLeaf::Range { .. }
        | UserInputLeaf::Set { .. } => return Ok(()),
    };
    Err(tags_error(why))
}

/// Game attributes a tag query can test directly.
#[derive(Copy, Clone)]
enum Attribute {
    WhiteElo,
    BlackElo,
    Elo,
    Year,
    Eco,
    Result,
}

impl Attribute {
    fn of(field: &str) -> Option<Self> {
        Some(match field.to_ascii_lowercase().as_str() {
            "whiteelo" => Self::WhiteElo,
            "blackelo" => Self::BlackElo,
            "elo" => Self::Elo,
            "year" => Self::Year,
            "eco" => Self::Eco,
            "result" => Self::Result,
            _ => return None,
        })
    }

    /// A value of the attribute as the number compared.
    fn parse(self, v: &str) -> Result<i64> {
        let bad = || tags_error(format!("'{v}' is not a value of this field"));
        match self {
            Self::Eco => GameMeta::parse_eco(v).map(i64::from).ok_or_else(bad),
            Self::Result => match v.trim() {
                "1-0" | "0-1" | "1/2-1/2" | "*" => Ok(GameResult::from_pgn(v) as i64),
                _ => Err(tags_error(format!(
                    "'{v}' is not a result (1-0, 0-1, 1/2-1/2 or *)"
                ))),
            },
            _ => v.trim().parse().map_err(|_| bad()),
        }
    }
}

/// `White:`, `tags.White:` and `white:` name the White field; any other name not a field of
/// the schema is a tag (`opening:` is `tags.opening`).
fn normalize_fields(leaf: UserInputLeaf) -> UserInputLeaf {
    let fix = |f: Option<String>| -> Option<String> {
        let f = f?;
        let bare = f.strip_prefix("tags.").unwrap_or(&f);
        if let Some(t) = TEXT_TAGS.iter().find(|t| t.eq_ignore_ascii_case(bare)) {
            return Some(t.to_lowercase());
        }
        if f == "value" {
            return Some(f);
        }
        Some(format!("tags.{}", bare.to_lowercase()))
    };
    match leaf {
        UserInputLeaf::Literal(mut l) => {
            l.field_name = fix(l.field_name);
            UserInputLeaf::Literal(l)
        }
        UserInputLeaf::Range {
            field,
            lower,
            upper,
        } => UserInputLeaf::Range {
            field: fix(field),
            lower,
            upper,
        },
        UserInputLeaf::Set { field, elements } => UserInputLeaf::Set {
            field: fix(field),
            elements,
        },
        other => other,
    }
}

/// tantivy's query errors in the words of tag queries.
pub(super) fn friendly(e: &tantivy::query::QueryParserError) -> String {
    use tantivy::query::QueryParserError as E;
    match e {
        E::FieldDoesNotExist(f) => format!(
            "no field '{f}': use white, black, event, site, annotator, tags.NAME for any tag, \
             or result, whiteelo, blackelo, elo, year, eco"
        ),
        E::ExpectedInt(_) | E::ExpectedFloat(_) | E::ExpectedBool(_) => {
            format!("a value does not fit its field: {e}")
        }
        other => format!("cannot run this tag query: {other}"),
    }
}
