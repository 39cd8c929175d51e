//! A CQL 3 match list as the CQL 6 query that means the same, as text (which `cqldb explain`
//! shows a user migrating, and which the CQL 6 parser then checks like any query).
//!
//! What is translated so far: the match list's `:pgn`, `:output`, `:result`, `:year` and
//! `:gamenumber`; position lists (several: each must match some position) with piece designators (CQL 3's `.`, `?`, `U`, `M`/`m`,
//! `I`/`i` and `?` squares mapped to CQL 6), the simple flags, `:variations` and
//! `:variationsonly`, `:piececount`, `:and`/`:or` over nested lists, `:not`, and the transforms
//! that mean in CQL 6 what they meant in CQL 3 (`:flipcolor`, `:flip`/`:flipdihedral`,
//! `:fliphorizontal`, `:flipvertical`), and `:relation` (`relation.rs`). Every other keyword is
//! refused with its place — shifts
//! too: a CQL 3 shift keeps the squares on the edge it moves away from, where CQL 6 drops the
//! shifted filter, so the two differ.

use super::reader::Item;
use super::words::{Args, designator, unsupported};
use crate::error::ParseError;

/// The CQL 6 text of the match list `root`.
pub fn match_list(root: &Item) -> Result<String, ParseError> {
    let (items, head) = root
        .list()
        .ok_or_else(|| ParseError::new("expected '(match ...)'", root.span()))?;
    if head != Some("match") {
        return Err(ParseError::new(
            "a CQL 3 query is a match list: '(match ...)'",
            root.span(),
        ));
    }
    let mut header: Vec<String> = Vec::new();
    let mut body: Vec<String> = Vec::new();
    let mut lists = Vec::new();
    let mut at = Args::new(&items[1..], root.span());
    while let Some(item) = at.next() {
        if let Some((_, Some("position"))) = item.list() {
            lists.push(item);
            continue;
        }
        let Some(word) = item.atom() else {
            return Err(ParseError::new(
                "expected a match-list keyword or '(position ...)'",
                item.span(),
            ));
        };
        match word {
            ":pgn" => header.push(format!("input {}", at.word(word)?)),
            ":output" => header.push(format!("output {}", at.word(word)?)),
            ":result" => body.push(format!("result {}", result(&at.word(word)?, &at)?)),
            ":year" => {
                let (lo, hi) = at.range(word)?;
                body.push(format!("year >= {lo} year <= {hi}"));
            }
            ":gamenumber" => {
                let (lo, hi) = at.range(word)?;
                header.push(format!("gamenumber {lo} {hi}"));
            }
            _ => return Err(unsupported(word, item.span())),
        }
    }
    match lists.as_slice() {
        [] => {
            return Err(ParseError::new(
                "a match list needs a '(position ...)' list",
                root.span(),
            ));
        }
        [one] => {
            let p = position_list(one)?;
            if p.variations {
                header.push("variations".into());
            }
            body.push(p.text);
        }
        several => {
            // Each list must match some position of the game: searched from the start
            // position, each on the lines it looks at (the main line unless `:variations`).
            let lists = several
                .iter()
                .map(|l| position_list(l))
                .collect::<Result<Vec<_>, _>>()?;
            if lists.iter().any(|p| p.variations) {
                header.push("variations".into());
            }
            body.push("initial".into());
            for p in lists {
                body.push(match p.variations {
                    true => format!("find {}", p.text),
                    false => format!("find {{mainline {}}}", p.text),
                });
            }
        }
    }
    Ok(format!("cql({})\n{}\n", header.join(" "), body.join("\n")))
}

/// A translated position list.
struct Position {
    text: String,
    /// `:variations` or `:variationsonly`: positions in variations are tried too.
    variations: bool,
}

fn position_list(list: &Item) -> Result<Position, ParseError> {
    let items = list.list().map_or(&[][..], |(items, _)| items);
    let mut parts: Vec<String> = Vec::new();
    let mut transforms: Vec<&'static str> = Vec::new();
    let mut negated = false;
    let mut variations = false;
    let mut relation: Option<super::relation::Relation> = None;
    let mut at = Args::new(items.get(1..).unwrap_or(&[]), list.span());
    while let Some(item) = at.next() {
        let Some(word) = item.atom() else {
            return Err(ParseError::new(
                "expected a piece designator or a position-list keyword",
                item.span(),
            ));
        };
        if !word.starts_with(':') {
            parts.push(designator(word, item.span())?);
            continue;
        }
        match word {
            ":wtm" => parts.push("wtm".into()),
            ":btm" => parts.push("btm".into()),
            ":mate" => parts.push("mate".into()),
            ":stalemate" => parts.push("stalemate".into()),
            ":check" => parts.push("check".into()),
            ":nocheck" => parts.push("not check".into()),
            ":initial" => parts.push("initial".into()),
            ":variations" => variations = true,
            ":variationsonly" => {
                variations = true;
                parts.push("variation".into());
            }
            ":not" => negated = true,
            ":relation" => {
                if relation.is_some() {
                    return Err(ParseError::new(
                        "a position list has at most one :relation",
                        item.span(),
                    ));
                }
                relation = Some(super::relation::relation(at.item(word)?)?);
            }
            ":piececount" => {
                let d = at.item(word)?;
                let set = designator(d.atom().unwrap_or(""), d.span())?;
                let (lo, hi) = at.range(word)?;
                parts.push(if lo == hi {
                    format!("#{set} == {lo}")
                } else {
                    format!("#{set} >= {lo} #{set} <= {hi}")
                });
            }
            ":and" | ":or" => {
                let arg = at.item(word)?;
                let Some((nested, _)) = arg.list() else {
                    return Err(ParseError::new(
                        format!("{word} takes a list of position lists"),
                        arg.span(),
                    ));
                };
                let mut inner = Vec::new();
                for n in nested {
                    if !matches!(n.list(), Some((_, Some("position")))) {
                        return Err(ParseError::new("expected '(position ...)'", n.span()));
                    }
                    let p = position_list(n)?;
                    variations |= p.variations;
                    inner.push(p.text);
                }
                if inner.is_empty() {
                    return Err(ParseError::new(
                        format!("{word} needs at least one position list"),
                        arg.span(),
                    ));
                }
                let joint = if word == ":and" { " " } else { " or " };
                parts.push(format!("{{{}}}", inner.join(joint)));
            }
            ":flipcolor" => transforms.push("flipcolor"),
            ":flip" | ":flipdihedral" => transforms.push("flip"),
            ":fliphorizontal" => transforms.push("fliphorizontal"),
            ":flipvertical" => transforms.push("flipvertical"),
            _ => return Err(unsupported(word, item.span())),
        }
    }
    // An empty list matches every position.
    let mut text = format!("{{{}}}", parts.join(" "));
    for t in transforms {
        text = format!("{t} {text}");
    }
    // The relation's designators are not transformed with the list: it stands beside them.
    if let Some(r) = relation {
        text = match (r.variations, variations) {
            // The query visits variations for P2; P1 stays on the main line.
            (true, false) => format!("{{mainline {text} {}}}", r.text),
            _ => format!("{{{text} {}}}", r.text),
        };
        variations |= r.variations;
    }
    if negated {
        text = format!("not {text}");
    }
    Ok(Position { text, variations })
}

fn result(word: &str, at: &Args<'_>) -> Result<&'static str, ParseError> {
    Ok(match word {
        "1-0" => "1-0",
        "0-1" => "0-1",
        "1/2-1/2" | "1/2" => "1/2-1/2",
        _ => {
            return Err(ParseError::new(
                "expected 1-0, 0-1 or 1/2-1/2 after :result",
                at.last_span(),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cql6(src: &str) -> String {
        match_list(&super::super::reader::read(src).unwrap()).unwrap()
    }

    fn error(src: &str) -> (String, String) {
        let e = match_list(&super::super::reader::read(src).unwrap()).unwrap_err();
        (e.message, src[e.span].to_owned())
    }

    #[test]
    fn designators_as_cql6_writes_them() {
        let d = |w: &str| designator(w, 0..0).unwrap();
        assert_eq!(d("Ra3"), "Ra3");
        assert_eq!(d(".d4"), "_d4");
        assert_eq!(d("U"), "[Aa]");
        assert_eq!(d("?e4"), "[Aa_]e4");
        assert_eq!(d("M[a1,h8]"), "[QR][a1,h8]");
        assert_eq!(d("[Ii]?8"), "[BNbn]a-h8");
        assert_eq!(d("[RQ][a-c1-2]"), "[RQ]a-c1-2");
        assert_eq!(d("ka?"), "ka1-8");
        assert!(designator("Xa1", 0..0).is_err());
        assert!(designator("Ri9", 0..0).is_err());
        assert!(designator("$x[a1]", 0..0).is_err());
    }

    #[test]
    fn match_lists_as_cql6_queries() {
        assert_eq!(
            cql6("(match :pgn in.pgn :result 1/2 :year 1990 2000 (position Ka1 :btm :mate))"),
            "cql(input in.pgn)\nresult 1/2-1/2\nyear >= 1990 year <= 2000\n{Ka1 btm mate}\n"
        );
        assert_eq!(
            cql6("(match :gamenumber 5 (position :not Pa-h7 :flipcolor :variations))"),
            "cql(gamenumber 5 5 variations)\nnot flipcolor {Pa-h7}\n"
        );
        assert_eq!(
            cql6("(match (position :or ((position :check) (position .e4)) :piececount P 8))"),
            "cql()\n{{{check} or {_e4}} #P == 8}\n"
        );
    }

    #[test]
    fn several_lists_each_match_somewhere() {
        assert_eq!(
            cql6("(match (position :mate) (position Ka1 :variations))"),
            "cql(variations)\ninitial\nfind {mainline {mate}}\nfind {Ka1}\n"
        );
    }

    #[test]
    fn what_is_not_translated_is_refused_at_its_place() {
        assert_eq!(
            error("(match (position Ka1 :shifthorizontal))").1,
            ":shifthorizontal"
        );
        assert_eq!(
            error("(match (position :relation (:pattern)))").1,
            ":pattern"
        );
        assert_eq!(
            error("(match (position :relation (:newpiececount A 1 :newpiececount a 1)))").1,
            ":newpiececount"
        );
        assert_eq!(error("(match :player kasparov (position))").1, ":player");
        assert_eq!(error("(match :result 2-0 (position))").1, "2-0");
        assert_eq!(
            error("(position Ka1)").0,
            "a CQL 3 query is a match list: '(match ...)'"
        );
        assert_eq!(error("(match :year (position))").1, "(position)");
    }
}
