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
        match column.first(addr.doc_id) {
            Some(v) if v & super::INLINE_GAME != 0 => {
                games.insert((v & u64::from(u32::MAX)) as u32);
            }
            Some(v) => games |= games_of(v as u32)?,
            None => {}
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
        // `result:*` names the PGN result `*` (an unfinished game), not "any result".
        if let UserInputLeaf::Exists { field } = &leaf
            && field.eq_ignore_ascii_case("result")
        {
            let unfinished = GameResult::from_pgn("*") as i64;
            return self.games_where(Attribute::Result, &|x| x == unfinished);
        }
        // `player:` is either player: the White and the Black fields.
        if let Some(field) = field_of(&leaf)
            && field.eq_ignore_ascii_case("player")
        {
            let mut games = RoaringBitmap::new();
            for colour in ["white", "black"] {
                games |= self.leaf(UserInputAst::Leaf(Box::new(with_field(
                    leaf.clone(),
                    colour,
                ))))?;
            }
            return Ok(games);
        }
        unsupported(&leaf)?;
        if let Some(games) = self.date_leaf(&leaf)? {
            return Ok(games);
        }
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
                // `eco:B2*`: every code the prefix begins (B20 to B29).
                if let (Attribute::Eco, Some(prefix)) = (kind, l.phrase.trim().strip_suffix('*')) {
                    let (lo, hi) = eco_prefix_range(prefix)?;
                    (f, Box::new(move |x| (lo..=hi).contains(&x)))
                } else {
                    let v = kind.parse(&l.phrase)?;
                    (f, Box::new(move |x| x == v))
                }
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
        self.games_where(kind, &test).map(Some)
    }

    /// The games whose attribute `kind` is known and passes `test`.
    fn games_where(&self, kind: Attribute, test: &dyn Fn(i64) -> bool) -> Result<RoaringBitmap> {
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
        Ok(games)
    }

    /// `date:[1990.01.01 TO 1990.12.31]` (any bound may be `*`, `{}` excludes it): the games
    /// whose Date lies in the range; a date partly unknown (`1990.??.??`) is in it when some
    /// day it could be is. `None` for other leaves. The values are found through their
    /// year's word, then compared whole as stored.
    fn date_leaf(&self, leaf: &UserInputLeaf) -> Result<Option<RoaringBitmap>> {
        use tantivy::query::{BooleanQuery, Occur as O, Query, TermQuery};
        let UserInputLeaf::Range {
            field: Some(field),
            lower,
            upper,
        } = leaf
        else {
            return Ok(None);
        };
        let bare = field.strip_prefix("tags.").unwrap_or(field);
        if !bare.eq_ignore_ascii_case("date") {
            return Ok(None);
        }
        let bound = |b: &UserInputBound, is_lower: bool| -> Result<Option<(String, bool)>> {
            let (v, inclusive) = match b {
                UserInputBound::Inclusive(v) => (v, true),
                UserInputBound::Exclusive(v) => (v, false),
                UserInputBound::Unbounded => return Ok(None),
            };
            // A bound's unknown parts reach as far as they can: `[1990 TO 1991]` is
            // 1990.00.00 to 1991.99.99.
            match DateKey::parse(v).map(|d| d.span()) {
                Some((earliest, latest)) => {
                    Ok(Some((if is_lower { earliest } else { latest }, inclusive)))
                }
                None => Err(tags_error(format!(
                    "'{v}' is not a date: write YYYY.MM.DD, YYYY.MM or YYYY"
                ))),
            }
        };
        let (lo, hi) = (bound(lower, true)?, bound(upper, false)?);
        let year_of = |d: &Option<(String, bool)>, default: u32| {
            d.as_ref()
                .and_then(|(s, _)| s[..4].parse::<u32>().ok())
                .unwrap_or(default)
        };
        let (first_year, last_year) = (year_of(&lo, 0), year_of(&hi, 9999));
        let schema = self.searcher.schema();
        let all = schema.get_field("tags")?;
        let mut years: Vec<(O, Box<dyn Query>)> = Vec::new();
        for word in json_words(self.searcher, all, "date")? {
            let in_years = word.len() == 4
                && word
                    .parse::<u32>()
                    .is_ok_and(|y| (first_year..=last_year).contains(&y));
            if !in_years {
                continue;
            }
            let mut term = tantivy::Term::from_field_json_path(all, "date", false);
            term.append_type_and_str(&word);
            years.push((
                O::Should,
                Box::new(TermQuery::new(
                    term,
                    tantivy::schema::IndexRecordOption::Basic,
                )),
            ));
        }
        let raw = schema.get_field("raw")?;
        let in_range = |value: &str| {
            let Some(d) = DateKey::parse(value) else {
                return false;
            };
            let (earliest, latest) = d.span();
            lo.as_ref().is_none_or(|(l, inc)| {
                if *inc {
                    latest.as_str() >= l.as_str()
                } else {
                    latest.as_str() > l.as_str()
                }
            }) && hi.as_ref().is_none_or(|(h, inc)| {
                if *inc {
                    earliest.as_str() <= h.as_str()
                } else {
                    earliest.as_str() < h.as_str()
                }
            })
        };
        let keep = |addr: tantivy::DocAddress| -> Result<bool> {
            let doc: tantivy::TantivyDocument = self.searcher.doc(addr)?;
            use tantivy::schema::Value;
            let stored = doc.get_first(raw).and_then(|v| v.as_str()).unwrap_or("");
            let Some((name, value)) = stored.split_once('\0') else {
                return Ok(false);
            };
            Ok(name.eq_ignore_ascii_case("date") && in_range(value))
        };
        games_of_values(
            self.searcher,
            &BooleanQuery::new(years),
            self.games_of,
            &keep,
        )
        .map(Some)
    }
}

/// A PGN date (`1990.05.17`, `1990.??.??`, `1990`) as `YYYY.MM.DD` text that sorts as the
/// date does, unknown parts kept as `?`.
struct DateKey(String);

impl DateKey {
    fn parse(v: &str) -> Option<Self> {
        let mut parts = v.trim().split(['.', '-', '/']);
        let year = parts.next()?;
        let fixed = |p: Option<&str>, width: usize| -> Option<String> {
            match p {
                None | Some("") => Some("?".repeat(width)),
                Some(p)
                    if p.len() == width && p.bytes().all(|b| b.is_ascii_digit() || b == b'?') =>
                {
                    Some(p.to_owned())
                }
                Some(p) if p.len() < width && p.bytes().all(|b| b.is_ascii_digit()) => {
                    Some(format!("{p:0>width$}"))
                }
                Some(_) => None,
            }
        };
        let (y, m, d) = (
            fixed(Some(year), 4)?,
            fixed(parts.next(), 2)?,
            fixed(parts.next(), 2)?,
        );
        let within = |p: &str, most: u32| {
            p.contains('?') || p.parse::<u32>().is_ok_and(|n| (1..=most).contains(&n))
        };
        if parts.next().is_some()
            || !y.bytes().all(|b| b.is_ascii_digit())
            || !within(&m, 12)
            || !within(&d, 31)
        {
            return None;
        }
        Some(Self(format!("{y}.{m}.{d}")))
    }

    /// The earliest and the latest day the date may be.
    fn span(&self) -> (String, String) {
        (self.0.replace('?', "0"), self.0.replace('?', "9"))
    }
}

/// The byte ending a JSON path in a term of tantivy's JSON fields (and `1` separating its
/// segments), as tantivy writes them.
const JSON_END_OF_PATH: u8 = 0;

/// The words of the JSON field `field` under `path` (the words of one tag's values).
pub(super) fn json_words(searcher: &Searcher, field: Field, path: &str) -> Result<Vec<String>> {
    let mut prefix = path.as_bytes().to_vec();
    prefix.push(JSON_END_OF_PATH);
    prefix.push(tantivy::schema::Type::Str.to_code());
    let mut end = prefix.clone();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    let mut words = std::collections::BTreeSet::new();
    for segment in searcher.segment_readers() {
        let index = segment.inverted_index(field)?;
        let mut stream = index
            .terms()
            .range()
            .ge(&prefix)
            .lt(&end)
            .into_stream()
            .map_err(tantivy::TantivyError::from)?;
        while stream.advance() {
            if let Ok(w) = std::str::from_utf8(&stream.key()[prefix.len()..]) {
                words.insert(w.to_owned());
            }
        }
    }
    Ok(words.into_iter().collect())
}

/// The names of the tags (other than those with their own field) some value of the index
/// has, lowercased: the paths of the JSON field, read by skipping from one to the next.
pub(super) fn json_paths(searcher: &Searcher, field: Field) -> Result<Vec<String>> {
    let mut names = std::collections::BTreeSet::new();
    for segment in searcher.segment_readers() {
        let index = segment.inverted_index(field)?;
        let mut from: Vec<u8> = Vec::new();
        loop {
            let mut stream = index
                .terms()
                .range()
                .ge(&from)
                .into_stream()
                .map_err(tantivy::TantivyError::from)?;
            if !stream.advance() {
                break;
            }
            let key = stream.key();
            let Some(end) = key.iter().position(|&b| b == JSON_END_OF_PATH) else {
                break;
            };
            let path = String::from_utf8_lossy(&key[..end]).replace('\u{1}', ".");
            names.insert(path);
            // The next path: past every key that starts with this one and its end mark.
            from = key[..end].to_vec();
            from.push(JSON_END_OF_PATH + 1);
        }
    }
    Ok(names.into_iter().collect())
}

/// The field a leaf names, if any.
fn field_of(leaf: &UserInputLeaf) -> Option<&str> {
    match leaf {
        UserInputLeaf::Literal(l) => l.field_name.as_deref(),
        UserInputLeaf::Range { field, .. } | UserInputLeaf::Set { field, .. } => field.as_deref(),
        UserInputLeaf::Exists { field }
        | UserInputLeaf::Regex {
            field: Some(field), ..
        } => Some(field),
        UserInputLeaf::Regex { field: None, .. } | UserInputLeaf::All => None,
    }
}

/// `leaf` asking `field` instead.
fn with_field(leaf: UserInputLeaf, field: &str) -> UserInputLeaf {
    let f = Some(field.to_owned());
    match leaf {
        UserInputLeaf::Literal(mut l) => {
            l.field_name = f;
            UserInputLeaf::Literal(l)
        }
        UserInputLeaf::Range { lower, upper, .. } => UserInputLeaf::Range {
            field: f,
            lower,
            upper,
        },
        UserInputLeaf::Set { elements, .. } => UserInputLeaf::Set { field: f, elements },
        UserInputLeaf::Exists { .. } => UserInputLeaf::Exists {
            field: field.to_owned(),
        },
        UserInputLeaf::Regex { pattern, .. } => UserInputLeaf::Regex { field: f, pattern },
        UserInputLeaf::All => UserInputLeaf::All,
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

/// The codes an ECO prefix begins: `B2` is B20..=B29, `B` B00..=B99, as attribute numbers.
fn eco_prefix_range(prefix: &str) -> Result<(i64, i64)> {
    let p = prefix.trim().to_ascii_uppercase();
    let bad = || tags_error(format!("'{prefix}*' is not an ECO prefix (A*, B2*, C45*)"));
    let (lo, hi) = match p.len() {
        1 => (format!("{p}00"), format!("{p}99")),
        2 => (format!("{p}0"), format!("{p}9")),
        3 => (p.clone(), p.clone()),
        _ => return Err(bad()),
    };
    match (GameMeta::parse_eco(&lo), GameMeta::parse_eco(&hi)) {
        (Some(l), Some(h)) => Ok((i64::from(l), i64::from(h))),
        _ => Err(bad()),
    }
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
            Self::Eco => GameMeta::parse_eco(&v.trim().to_ascii_uppercase())
                .map(i64::from)
                .ok_or_else(bad),
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
