//! Tag searches: `player`, `player white`, `player black`, `event`, `site`, `date`,
//! `eventdate`, `eco` and `tag "Name"`.
//!
//! With a string after it, the filter matches in a game where some value of the tag (of
//! either player's tag, for `player`) contains the string; without one, its value is the tag's
//! first value (a string), and it matches where the game has the tag.

use crate::ast::{Expr, TagField};
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
    Ok(Expr::Tag(field, p.optional_string()))
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
