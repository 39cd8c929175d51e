//! Tag searches: `player`, `player white`, `player black`, `event`, `site`, `date`,
//! `eventdate`, `eco` and `tag "Name"`.
//!
//! With a string after it, the filter matches in a game where some value of the tag (of
//! either player's tag, for `player`) contains the string; without one, its value is the tag's
//! first value (a string), and it matches where the game has the tag.

use crate::ast::{Expr, TagField};
use crate::error::ParseError;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::plan::scan::Scan;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["player", "event", "site", "date", "eventdate", "eco", "tag"];

/// Reads the tag it names, then the string searched for, if there is one.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let field = match word {
        "player" if p.eat_word("white") => TagField::Player(Some(true)),
        "player" if p.eat_word("black") => TagField::Player(Some(false)),
        "player" => TagField::Player(None),
        "event" => TagField::Event,
        "site" => TagField::Site,
        "date" => TagField::Date,
        "eventdate" => TagField::EventDate,
        "eco" => TagField::Eco,
        _ => TagField::Named(p.string("expected a tag name string after 'tag'")?.0),
    };
    let search = p.optional_string();
    if let Some(s) = &search
        && implicit_search(&field)
        && let Some(why) = reads_as_regex(s)
    {
        let filter = match field {
            TagField::Player(Some(true)) => "player white",
            TagField::Player(Some(false)) => "player black",
            _ => word,
        };
        return Err(ParseError::new(
            format!(
                "the string after '{filter}' {why}, which CQL refuses there since 6.1 (it would \
                 read as a regular expression): write \"{s}\" in {filter} to search for the text, \
                 or use '~~' for a regular expression"
            ),
            p.previous_span(),
        ));
    }
    Ok(Expr::Tag(field, search))
}

/// CQL's implicit search filters: the tag filters whose string is searched for as literal
/// text (`player "Tal"` is `"Tal" in player`). `eco` and `tag "Name"` are not among them.
fn implicit_search(field: &TagField) -> bool {
    match field {
        TagField::Player(_)
        | TagField::Event
        | TagField::Site
        | TagField::Date
        | TagField::EventDate => true,
        TagField::Eco | TagField::Named(_) => false,
    }
}

/// Whether `s` may follow `player`, `event`, `site`, `date` or `eventdate` as the text searched
/// for (CQL 6.1 refuses strings that would read as regular expressions): callers that build
/// queries from user text write `"s" in player` instead when it may not.
pub fn implicit_search_allowed(s: &str) -> bool {
    reads_as_regex(s).is_none()
}

/// Why CQL 6.1 refuses `s` as an implicit search string, if it does: a `+`, `*` or `?` after
/// the first character, or a `[` before a `]`.
fn reads_as_regex(s: &str) -> Option<String> {
    if let Some(c) = s.chars().skip(1).find(|c| matches!(c, '+' | '*' | '?')) {
        return Some(format!("has '{c}' after its first character"));
    }
    let open = s.find('[')?;
    s[open..]
        .contains(']')
        .then(|| "has a '[' before a ']'".to_owned())
}

/// A search matches or not; a tag without one is a string.
pub fn ty(search: Option<&str>) -> Ty {
    match search {
        Some(_) => Ty::Logical,
        None => Ty::String,
    }
}

/// The tag names a field reads: one, or two for `player` (no allocation: it runs at every
/// position a tag filter is evaluated at).
fn names(field: &TagField, swapped: bool) -> impl Iterator<Item = &str> {
    let (first, second) = match field {
        TagField::Player(Some(white)) if *white != swapped => ("White", None),
        TagField::Player(Some(_)) => ("Black", None),
        TagField::Player(None) => ("White", Some("Black")),
        TagField::Event => ("Event", None),
        TagField::Site => ("Site", None),
        TagField::Date => ("Date", None),
        TagField::EventDate => ("EventDate", None),
        TagField::Eco => ("ECO", None),
        TagField::Named(n) => (n.as_str(), None),
    };
    std::iter::once(first).chain(second)
}

/// A search looks at every value of the tag (a malformed game may repeat one, and the tag
/// index keeps them all); a value is the first.
pub fn eval(field: &TagField, search: Option<&str>, cx: &Cx) -> Option<Value> {
    // `player white` reads Black's name in a colour-swapped image.
    let mut values = names(field, cx.colours_swapped()).flat_map(|n| cx.game.tags_named(n));
    match search {
        Some(s) => values.any(|v| v.contains(s)).then_some(Value::Matched),
        None => values.next().map(|v| Value::Str(v.to_owned())),
    }
}

/// Index rule of a search: the games whose tag has a value containing the text, from the tag
/// index, exactly. (Its words find the values, which are then checked as stored; where a
/// segment cannot answer — a tag without a field of its own, a needle without letters or
/// digits, an index of an older version — the executor evaluates every game of that segment
/// instead.) A tag's value without a search matches wherever the tag exists: no rule.
pub fn bounds(field: &TagField, search: Option<&str>) -> Bounds {
    let Some(needle) = search else {
        return Bounds::unknown();
    };
    let scan = |t: &str| Scan::GameTag {
        tag: t.to_owned(),
        needle: needle.to_owned(),
    };
    Bounds::exact(
        names(field, false)
            .map(scan)
            .reduce(Scan::or)
            .unwrap_or(Scan::Empty),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{bounds as bounds_of, matching};

    /// CQL 6.1 refuses an implicit search string that would read as a regular expression;
    /// the same text is still searched for with `in`, or as a pattern with `~~`.
    #[test]
    fn search_strings_that_read_as_patterns_are_refused() {
        for q in [
            "player \"Ca*\"",
            "player white \"Ta+l\"",
            "event \"Ch?\"",
            "site \"[ab]c\"",
            "date \"19[5-9]\"",
            "eventdate \"x?\"",
        ] {
            let e = crate::parse(&format!("cql() {q}")).expect_err(q);
            assert!(
                e.message.contains("regular expression"),
                "{q}: {}",
                e.message
            );
        }
        for q in [
            "player \"*Tal\"",
            "event \"] [\"",
            "\"Ca*\" in player",
            "player ~~ \"Ca*\"",
            "tag \"Opening\" \"Sicilian*\"",
            "eco \"B2*\"",
        ] {
            assert!(crate::parse(&format!("cql() {q}")).is_ok(), "{q}");
        }
    }

    const GAME: &str = "[Event \"Casual game\"]\n[White \"Anderssen, Adolf\"]\n[Black \"Kieseritzky, Lionel\"]\n[ECO \"C33\"]\n[Annotator \"Steinitz\"]\n\n1. e4 *\n";

    #[test]
    fn searches_and_values() {
        assert_eq!(matching("player \"Kieseritzky\"", GAME), vec![0, 1]);
        assert_eq!(
            matching("player white \"Kieseritzky\"", GAME),
            Vec::<u32>::new()
        );
        assert_eq!(matching("player black \"Lionel\"", GAME), vec![0, 1]);
        assert_eq!(matching("event \"Casual\"", GAME), vec![0, 1]);
        assert_eq!(matching("eco \"C3\"", GAME), vec![0, 1]);
        assert_eq!(matching("site \"London\"", GAME), Vec::<u32>::new());
        assert_eq!(matching("tag \"Annotator\" \"Stein\"", GAME), vec![0, 1]);
        assert_eq!(
            matching("tag \"Annotator\" == \"Steinitz\"", GAME),
            vec![0, 1]
        );
        // Without a search: the value, a string; no match without the tag.
        assert_eq!(matching("event == \"Casual game\"", GAME), vec![0, 1]);
        assert_eq!(matching("date", GAME), Vec::<u32>::new());
        assert!(crate::parse("cql() tag Annotator").is_err());
    }

    #[test]
    fn index_rules() {
        let b = bounds_of("player \"Carlsen\"");
        assert!(b.is_exact());
        assert_eq!(
            b.upper,
            Scan::or(
                Scan::GameTag {
                    tag: "White".into(),
                    needle: "Carlsen".into()
                },
                Scan::GameTag {
                    tag: "Black".into(),
                    needle: "Carlsen".into()
                }
            )
        );
        assert_eq!(bounds_of("event"), Bounds::unknown());
    }
}
