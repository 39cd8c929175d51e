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

use super::position::{Names, Within, elo_either, position_list, result};
use super::reader::Item;
use super::words::{Args, read_designator, unsupported};
use crate::error::ParseError;

/// Choices the documentation leaves to the implementation.
#[derive(Copy, Clone, Debug, Default)]
pub struct Options {
    /// Skip the start position as the CQL 3 standard did (Scidb, like CQL 6, examines it):
    /// no position list matches it.
    pub skip_initial: bool,
}

/// The CQL 6 text of the match list `root`.
pub fn match_list(root: &Item, options: Options) -> Result<String, ParseError> {
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
    let mut tags: Vec<super::tags::Tag> = Vec::new();
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
            // A case-insensitive part of either player's name (of the tag's text).
            ":player" => {
                let name = text_argument(&mut at, word)?;
                body.push(format!(
                    "{{{{\"{name}\" in lowercase player white}} or {{\"{name}\" in lowercase player black}}}}"
                ));
            }
            ":event" | ":site" => {
                let name = text_argument(&mut at, word)?;
                // Braced: `event` would take a following string as its own.
                body.push(format!("{{\"{name}\" in lowercase {}}}", &word[1..]));
            }
            ":elo" => body.push(elo_either(at.range(word)?)),
            ":forany" => {
                let name = at.word(word)?;
                if !super::tags::valid_name(&name) {
                    return Err(ParseError::new(
                        "a tag's name is letters, digits and '_'",
                        at.last_span(),
                    ));
                }
                let d = at.item(word)?;
                let designator = read_designator(d.atom().unwrap_or(""), d.span())?;
                if designator.tag {
                    return Err(ParseError::new(
                        ":forany takes piece types, not a tag",
                        d.span(),
                    ));
                }
                tags.push(super::tags::Tag {
                    name,
                    // Its squares do not matter: the piece's type, anywhere.
                    pieces: designator.piece,
                    span: item.span(),
                });
            }
            // The ECO code's first three characters within the range (Scidb).
            ":eco" => {
                let lo = at.word(word)?;
                let hi = if at.peek_atom().is_some_and(|w| eco_code(w).is_some()) {
                    at.word(word)?
                } else {
                    lo.clone()
                };
                let (Some(lo), Some(hi)) = (eco_code(&lo), eco_code(&hi)) else {
                    return Err(ParseError::new(
                        ":eco takes ECO codes such as B20 (and an upper one: B20 B99)",
                        at.last_span(),
                    ));
                };
                body.push(format!("eco[0:3] >= \"{lo}\" eco[0:3] <= \"{hi}\""));
            }
            ":date" => {
                return Err(ParseError::new(
                    ":date is a Scidb extension whose treatment of unknown parts (1990.??.??) is not documented: not supported yet",
                    item.span(),
                ));
            }
            _ => return Err(unsupported(word, item.span())),
        }
    }
    super::tags::check(root, &tags)?;
    let mut names = Names::default();
    let mut translated = Vec::new();
    for l in &lists {
        translated.push(position_list(l, Within::default(), &mut names)?);
    }
    // When the query visits variations (for some list or relation), the lists without their
    // own `:variations` are translated again so that their moves keep to the main line.
    if translated.iter().any(|p| p.variations) {
        let within = Within {
            main_line_moves: true,
            ..Within::default()
        };
        translated = lists
            .iter()
            .map(|l| position_list(l, within, &mut names))
            .collect::<Result<_, _>>()?;
    }
    if options.skip_initial {
        for p in &mut translated {
            p.text = format!("{{not initial {}}}", p.text);
        }
    }
    if translated.iter().any(|p| p.variations) {
        header.push("variations".into());
    }
    match translated.as_slice() {
        [] => {
            return Err(ParseError::new(
                "a match list needs a '(position ...)' list",
                root.span(),
            ));
        }
        [one] if tags.is_empty() && one.per_instance.is_none() => {
            // The number of positions the body matches is the list's.
            if let Some(((lo, hi), _)) = one.matchcount {
                header.push(format!("matchcount {lo} {hi}"));
            }
            body.push(one.text.clone());
        }
        several => {
            // Each list must match some position of the game: searched from the start
            // position, each on the lines it looks at (the main line unless `:variations`).
            body.push("initial".into());
            let mut finds = Vec::new();
            for p in several {
                let found = match p.variations {
                    true => p.text.clone(),
                    false => format!("{{mainline {}}}", p.text),
                };
                let on_lines = |text: &str| match p.variations {
                    true => text.to_owned(),
                    false => format!("{{mainline {text}}}"),
                };
                finds.push(match (&p.matchcount, &p.per_instance) {
                    (_, Some((range, instances))) => {
                        // Some placement of the list matches a number of positions in range.
                        let each: Vec<String> = instances
                            .iter()
                            .map(|i| {
                                let all = format!("find all {}", on_lines(i));
                                format!("{{{}}}", super::position::within_range(&all, *range))
                            })
                            .collect();
                        format!("{{{}}}", each.join(" or "))
                    }
                    (None, None) => format!("find {found}"),
                    (Some(((lo, hi), _)), None) => {
                        super::position::within_range(&format!("find all {found}"), (*lo, *hi))
                    }
                });
            }
            if tags.is_empty() {
                body.extend(finds);
            } else {
                body.push(super::tags::wrap(&tags, &finds));
            }
        }
    }
    Ok(format!("cql({})\n{}\n", header.join(" "), body.join("\n")))
}

/// An ECO code (a letter A–E, two digits), upper-cased.
fn eco_code(w: &str) -> Option<String> {
    let b = w.as_bytes();
    match b {
        [l, d1, d2]
            if (b'A'..=b'E').contains(&l.to_ascii_uppercase())
                && d1.is_ascii_digit()
                && d2.is_ascii_digit() =>
        {
            Some(w.to_ascii_uppercase())
        }
        _ => None,
    }
}

/// A word argument for a case-insensitive search, lower-cased; quotes are refused (Scidb's
/// quoted glob patterns are not supported).
fn text_argument(at: &mut Args<'_>, word: &str) -> Result<String, ParseError> {
    let name = at.word(word)?;
    if name.contains('"') || name.contains('\\') || name.contains('*') {
        return Err(ParseError::new(
            format!("{word} takes a plain word here (quoted patterns are not supported yet)"),
            at.last_span(),
        ));
    }
    Ok(name.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::super::words::{Placement, designator, read_designator};
    use super::*;

    fn cql6(src: &str) -> String {
        match_list(
            &super::super::reader::read(src).unwrap(),
            Options::default(),
        )
        .unwrap()
    }

    fn error(src: &str) -> (String, String) {
        let e = match_list(
            &super::super::reader::read(src).unwrap(),
            Options::default(),
        )
        .unwrap_err();
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
        assert_eq!(d("$x[a1]"), "(cql3_tag_x & a1)");
        assert_eq!(d("$x"), "cql3_tag_x");
        assert!(designator("$x-y", 0..0).is_err());
    }

    #[test]
    fn shifts_keep_the_edge_they_move_away_from() {
        let at = |w: &str, p: Placement| read_designator(w, 0..0).unwrap().cql6(p);
        let right = |dx| Placement {
            dx,
            ..Placement::default()
        };
        // The documentation's examples.
        assert_eq!(at("Q[a2,c2,h2]", right(1)), "Q[a-b2,d2]");
        assert_eq!(at("Qa4", right(3)), "Qa-d4");
        assert_eq!(at("Qh4", right(1)), "(~.)");
        assert_eq!(at("Qh4", right(-2)), "Qf-h4");
        let up = Placement {
            dy: 2,
            ..Placement::default()
        };
        assert_eq!(at("Pb2-7", up), "P[b4,b5,b6,b7,b8]");
        assert_eq!(at("R", up), "R");
        let diagonal = Placement {
            diagonal: true,
            ..Placement::default()
        };
        assert_eq!(at("qg3", diagonal), "qc7");
        let mirrored = Placement {
            mirror_files: true,
            mirror_ranks: true,
            ..Placement::default()
        };
        assert_eq!(at("Ka1", mirrored), "Kh8");
    }

    #[test]
    fn match_lists_as_cql6_queries() {
        assert_eq!(
            cql6("(match :pgn in.pgn :result 1/2 :year 1990 2000 (position Ka1 :btm :mate))"),
            "cql(input in.pgn)\nresult 1/2-1/2\nyear >= 1990 year <= 2000\n{Ka1 btm mate}\n"
        );
        assert_eq!(
            cql6("(match :gamenumber 5 (position :not Pa-h7 :flipcolor :variations))"),
            "cql(gamenumber 5 5 variations)\n{not flipcolor {Pa-h7}}\n"
        );
        assert_eq!(
            cql6("(match (position :or ((position :check) (position .e4)) :piececount P 8))"),
            "cql()\n{{{check} or {_e4}} #P == 8}\n"
        );
        assert_eq!(
            cql6("(match :player Kasp (position :movefrom Pe7 :moveto .e8 :promote n))"),
            "cql()\n{{\"kasp\" in lowercase player white} or {\"kasp\" in lowercase player black}}\n{{btm Pe7--_e8=n}}\n"
        );
        assert_eq!(
            cql6("(match (position Ka1 :shifthorizontal :matchcount 2 3))"),
            "cql(matchcount 2 3)\n{{Ka1} or {Ka-b1} or {Ka-c1} or {Ka-d1} or {Ka-e1} or {Ka-f1} or {Ka-g1} or {Ka-h1}}\n"
        );
    }

    #[test]
    fn a_transformed_or_negated_list_keeps_to_itself() {
        // A transform's argument would take a following `or` with it.
        assert_eq!(
            cql6("(match (position :or ((position Ka1 :flipcolor) (position Qd1))))"),
            "cql()\n{{{flipcolor {Ka1}} or {Qd1}}}\n"
        );
        // The main-line guard of P1 stays outside the list's `:not`.
        assert_eq!(
            cql6("(match (position :not :relation (:changesidetomove :variations)))"),
            "cql(variations)\n{mainline not {{} echo quiet (s t) {ancestor(s t) sidetomove != s:sidetomove \
             #(s:_ & [Aa]) == 0 #(s:[Aa] & _) == 0 #(~(s & t) & s:[Aa] & [Aa]) == 0}}}\n"
        );
        assert_eq!(
            cql6("(match :event open :site london (position))"),
            "cql()\n{\"open\" in lowercase event}\n{\"london\" in lowercase site}\n{}\n"
        );
    }

    #[test]
    fn moves_keep_to_the_main_line_when_the_query_visits_variations() {
        assert_eq!(
            cql6("(match (position :movefrom Pe7 :promote N) (position :variationsonly :mate))"),
            "cql(variations)\ninitial\nfind {mainline {{wtm Pe7--=N(primary)}}}\nfind {variation mate}\n"
        );
        // A tagged piece with squares: it stands there, and it moves.
        assert_eq!(
            cql6("(match :forany r [Rr] (position :movefrom $r[g6,d2] :moveto ?g2))"),
            "cql()\ninitial\npiece cql3_tag_r in [Aa] {find {cql3_tag_r & [Rr]} \
             find {mainline {{(cql3_tag_r & [g6,d2]) cql3_tag_r--[Aa_]g2}}}}\n"
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
    fn the_start_position_may_be_skipped() {
        let q = match_list(
            &super::super::reader::read("(match (position :mate))").unwrap(),
            Options { skip_initial: true },
        )
        .unwrap();
        assert_eq!(q, "cql()\n{not initial {mate}}\n");
    }

    #[test]
    fn what_is_not_translated_is_refused_at_its_place() {
        assert_eq!(
            error("(match (position Ka1 :shiftmaindiagonal))").1,
            ":shiftmaindiagonal"
        );
        assert_eq!(
            error("(match (position U[a1-2] :relation (:pattern)))").1,
            "(:pattern)"
        );
        assert_eq!(error("(match (position :relation (:shift)))").1, ":shift");
        assert_eq!(
            error("(match (position :relation (:newpiececount A 1 :newpiececount a 1)))").1,
            ":newpiececount"
        );
        assert_eq!(
            error("(match :forany x [Rr] (position $y[a1]))").1,
            "$y[a1]"
        );
        assert_eq!(
            error("(match :forany x [Rr] (position :tagmatch z R))").1,
            "z"
        );
        assert_eq!(
            error("(match :forany x R :forany y r :forany z Q (position))").1,
            ":forany"
        );
        assert_eq!(
            error("(match :forany x R (position :relation (:changesidetomove)))").1,
            ":relation"
        );
        assert_eq!(error("(match (position :ray (R k) 2))").1, "2");
        assert_eq!(
            error("(match (position :result 1-0 :flipcolor))").1,
            ":result"
        );
        assert_eq!(error("(match :result 2-0 (position))").1, "2-0");
        assert_eq!(
            error("(position Ka1)").0,
            "a CQL 3 query is a match list: '(match ...)'"
        );
        assert_eq!(error("(match :year (position))").1, "(position)");
    }
}
