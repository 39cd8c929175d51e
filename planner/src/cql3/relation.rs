//! `:relation (...)`: the position P1 matches when some later position P2 of the same game
//! relates to it as the list says. Written as a CQL 6 `echo` whose source is P1 and whose
//! target is P2:
//!
//! - later: P2 is a descendant of P1 (`ancestor(s t)`), on the main line (`mainline`) unless
//!   `:variations` (`:variationsonly`: in a variation, `variation`);
//! - no square holds a different piece in P1 and P2 (`~(s & t) & s:[Aa] & [Aa]` is empty): each
//!   square is equal, or missing (a P1 piece, empty in P2), or new (empty in P1, a P2 piece);
//! - `:missingpiececount D R` (default `U 0`): the missing pieces are all D pieces and their
//!   number is in R; `:newpiececount D R` the same for new ones; at most one of each;
//! - `:samesidetomove` (default), `:changesidetomove`, `:ignoresidetomove`;
//! - `:originaldifferentcount R`: squares whose contents differ; `:originalsamecount R`:
//!   non-empty squares equal in both.
//!
//! Not translated yet (refused at their place): `:pattern` (which squares a designator
//! "names" is not settled by the documentation), `:shift` and `:flip`.

use super::reader::Item;
use super::words::{Args, designator, unsupported};
use crate::error::ParseError;

/// Where P2 is looked for.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Lines {
    /// The main line (the default).
    Main,
    /// Anywhere below P1 (`:variations`).
    All,
    /// In a variation (`:variationsonly`).
    VariationsOnly,
}

impl Lines {
    /// The CQL 6 filter P2 must pass (none for `All`).
    fn filter(self) -> &'static str {
        match self {
            Lines::Main => "mainline",
            Lines::All => "",
            Lines::VariationsOnly => "variation",
        }
    }
}

/// A translated relation.
pub struct Relation {
    /// The `echo` filter.
    pub text: String,
    /// P2 may be in a variation: the query must visit variations (and the list's own
    /// positions keep to the main line unless it has `:variations` itself).
    pub variations: bool,
}

/// The CQL 6 filter of the relation list `arg`.
pub fn relation(arg: &Item) -> Result<Relation, ParseError> {
    let Some((items, _)) = arg.list() else {
        return Err(ParseError::new(
            ":relation takes a list of relation keywords: :relation (:missingpiececount A 1)",
            arg.span(),
        ));
    };
    let mut missing: Option<(String, (i64, i64))> = None;
    let mut new: Option<(String, (i64, i64))> = None;
    let mut side = "sidetomove == s:sidetomove";
    let mut lines = Lines::Main;
    let mut counts: Vec<String> = Vec::new();
    let mut at = Args::new(items, arg.span());
    while let Some(item) = at.next() {
        let word = item.atom().unwrap_or("");
        match word {
            ":missingpiececount" | ":newpiececount" => {
                let slot = if word == ":missingpiececount" {
                    &mut missing
                } else {
                    &mut new
                };
                if slot.is_some() {
                    return Err(ParseError::new(
                        format!("at most one {word} in a relation"),
                        item.span(),
                    ));
                }
                let d = at.item(word)?;
                let set = designator(d.atom().unwrap_or(""), d.span())?;
                *slot = Some((set, at.range(word)?));
            }
            ":samesidetomove" => side = "sidetomove == s:sidetomove",
            ":changesidetomove" => side = "sidetomove != s:sidetomove",
            ":ignoresidetomove" => side = "",
            ":variations" => lines = Lines::All,
            ":variationsonly" => lines = Lines::VariationsOnly,
            ":originaldifferentcount" => {
                let (lo, hi) = at.range(word)?;
                counts.push(within("#(~(s & t))", lo, hi));
            }
            ":originalsamecount" => {
                let (lo, hi) = at.range(word)?;
                counts.push(within("#((s & t) & [Aa])", lo, hi));
            }
            _ => return Err(unsupported(word, item.span())),
        }
    }
    let mut body = vec!["ancestor(s t)".to_owned()];
    for part in [lines.filter(), side] {
        if !part.is_empty() {
            body.push(part.to_owned());
        }
    }
    // The most selective tests first (they run in this order on every pair): no new piece
    // and no missing piece by default, then the no-different-piece rule.
    // `s:D` does not match where P1 has no D piece (and then neither does a count of it), so
    // each count is taken of `D | _`, never empty (a board has empty squares), less the empty
    // squares' share.
    // New: a piece now (in P2) on a square empty in P1.
    let new_test = match new {
        None => vec!["#(s:_ & [Aa]) == 0".to_owned()],
        Some((d, (lo, hi))) => {
            let new_d = format!("(#(s:_ & ({d} | _)) - #(s:_ & _))");
            vec![format!("#(s:_ & [Aa]) == {new_d}"), within(&new_d, lo, hi)]
        }
    };
    // Missing: a piece in P1 (s), its square empty now (in P2).
    let missing_test = match missing {
        None => vec!["#(s:[Aa] & _) == 0".to_owned()],
        Some((d, (lo, hi))) => {
            let missing_d = format!("(#(s:({d} | _) & _) - #(s:_ & _))");
            vec![
                format!("#(s:[Aa] & _) == {missing_d}"),
                within(&missing_d, lo, hi),
            ]
        }
    };
    body.extend(new_test);
    body.extend(missing_test);
    body.push("#(~(s & t) & s:[Aa] & [Aa]) == 0".into());
    body.extend(counts);
    Ok(Relation {
        text: format!("echo quiet (s t) {{{}}}", body.join(" ")),
        variations: lines != Lines::Main,
    })
}

fn within(count: &str, lo: i64, hi: i64) -> String {
    if lo == hi {
        format!("{count} == {lo}")
    } else {
        format!("{count} >= {lo} {count} <= {hi}")
    }
}
