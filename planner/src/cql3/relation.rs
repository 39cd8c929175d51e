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
//!   non-empty squares equal in both (P2 as it stands);
//! - `:pattern`: every comparison restricted to the squares of the list's top-level
//!   designators at the placement that matched (supported when each names one square);
//! - `:shift`, `:flip` (with `:pattern`, designators of one piece on one square each, and
//!   no missing or new pieces): P2 holds the pattern under some shift or flip (CQL 6
//!   `shift`/`flip` around the pattern, evaluated at P2).
//!
//! Refused at their place: `:shift`/`:flip` on whole boards (what a board shifted off its
//! edge compares is not settled by the documentation) or with missing and new pieces.

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

/// What the relation may compare: the enclosing list's designators at one placement.
pub struct Pattern {
    /// The squares of the top-level designators (`None`: some designator names several,
    /// which `:pattern` leaves unsettled).
    pub squares: Option<u64>,
    /// The top-level designators when each is one piece type (or empty) on one square, as
    /// CQL 6 writes them: P1's contents on the pattern's squares are then known.
    pub exact: Option<Vec<String>>,
    /// The list's own colour flip (`:pattern` squares would be flipped with the list).
    pub colour_flip: bool,
}

/// A translated relation.
pub struct Relation {
    /// The `echo` filter.
    pub text: String,
    /// P2 may be in a variation: the query must visit variations (and the list's own
    /// positions keep to the main line unless it has `:variations` itself).
    pub variations: bool,
    /// It compares the squares of the list's placement (`:pattern`): it goes with each
    /// placement of the list rather than beside the list.
    pub per_placement: bool,
}

/// Reads `:pattern`, `:shift` and `:flip` ahead (they change how everything is compared).
fn flags(items: &[Item]) -> (bool, Vec<&'static str>, Option<crate::ast::Span>) {
    let mut pattern = false;
    let mut moves = Vec::new();
    let mut span = None;
    for item in items {
        match item.atom() {
            Some(":pattern") => pattern = true,
            Some(":flip") => {
                moves.push("flip");
                span.get_or_insert(item.span());
            }
            Some(":shift") => {
                moves.push("shift");
                span.get_or_insert(item.span());
            }
            _ => {}
        }
    }
    // `flip` outside `shift`, as CQL 6 writes compositions.
    moves.sort_unstable();
    moves.dedup();
    (pattern, moves, span)
}

/// The CQL 6 filter of the relation list `arg` in a list whose designators are `pattern`.
pub fn relation(arg: &Item, pattern: &Pattern) -> Result<Relation, ParseError> {
    let Some((items, _)) = arg.list() else {
        return Err(ParseError::new(
            ":relation takes a list of relation keywords: :relation (:missingpiececount A 1)",
            arg.span(),
        ));
    };
    let (use_pattern, moves, moves_span) = flags(items);
    // The allowable squares, as a CQL 6 square set to intersect with (none: all 64).
    let allowable = if use_pattern {
        if pattern.colour_flip {
            return Err(ParseError::new(
                ":pattern in a list with :flipcolor is not supported yet",
                arg.span(),
            ));
        }
        let Some(squares) = pattern.squares else {
            return Err(ParseError::new(
                ":pattern with a designator of several squares is not supported yet (which squares it names is not settled)",
                arg.span(),
            ));
        };
        Some(if squares == 0 {
            "(~.)".to_owned()
        } else {
            super::words::squares_text(squares)
        })
    } else {
        None
    };
    let within_x = |set: &str| match &allowable {
        Some(x) => format!("{set} & {x}"),
        None => set.to_owned(),
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
            ":pattern" | ":shift" | ":flip" => {}
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
            // Both counts compare P1 with P2 as it stands (not shifted or flipped).
            ":originaldifferentcount" => {
                let (lo, hi) = at.range(word)?;
                counts.push(within(&format!("#({})", within_x("~(s & t)")), lo, hi));
            }
            ":originalsamecount" => {
                let (lo, hi) = at.range(word)?;
                counts.push(within(
                    &format!("#({})", within_x("(s & t) & [Aa]")),
                    lo,
                    hi,
                ));
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
    if moves.is_empty() {
        body.extend(comparison(missing, new, &within_x));
    } else {
        let span = moves_span.unwrap_or(arg.span());
        if !use_pattern {
            return Err(ParseError::new(
                ":shift or :flip in a relation without :pattern is not supported yet (what a whole board shifted off its edge compares is not settled)",
                span,
            ));
        }
        if missing.is_some() || new.is_some() {
            return Err(ParseError::new(
                ":shift or :flip with :missingpiececount or :newpiececount is not supported yet",
                span,
            ));
        }
        let Some(exact) = &pattern.exact else {
            return Err(ParseError::new(
                ":shift or :flip in a relation needs the list's designators to be one piece (or an empty square) on one square each",
                span,
            ));
        };
        // Some transform of P2 holds P1's pieces on the pattern's squares, and nothing
        // else there: P2 holds the pattern moved by the inverse, which is a transform too.
        body.push(format!("{} {{{}}}", moves.join(" "), exact.join(" ")));
    }
    body.extend(counts);
    Ok(Relation {
        text: format!("echo quiet (s t) {{{}}}", body.join(" ")),
        variations: lines != Lines::Main,
        per_placement: use_pattern,
    })
}

/// The square-by-square comparison of P1 and P2 (no shift or flip): each allowable square
/// equal, or missing (a P1 piece, empty in P2), or new (empty in P1, a P2 piece), with the
/// missing and new pieces' designators and counts. The most selective tests first (they run
/// in this order on every pair): no new piece and no missing piece by default, then the
/// no-different-piece rule.
fn comparison(
    missing: Option<(String, (i64, i64))>,
    new: Option<(String, (i64, i64))>,
    within_x: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let mut body = Vec::new();
    // `s:D` does not match where P1 has no D piece (and then neither does a count of it), so
    // each count is taken of `D | _`, never empty (a board has empty squares), less the empty
    // squares' share.
    // New: a piece now (in P2) on a square empty in P1.
    match new {
        None => body.push(format!("#({}) == 0", within_x("s:_ & [Aa]"))),
        Some((d, (lo, hi))) => {
            let new_d = format!(
                "(#({}) - #({}))",
                within_x(&format!("s:_ & ({d} | _)")),
                within_x("s:_ & _")
            );
            body.push(format!("#({}) == {new_d}", within_x("s:_ & [Aa]")));
            body.push(within(&new_d, lo, hi));
        }
    }
    // Missing: a piece in P1 (s), its square empty now (in P2).
    match missing {
        None => body.push(format!("#({}) == 0", within_x("s:[Aa] & _"))),
        Some((d, (lo, hi))) => {
            let missing_d = format!(
                "(#({}) - #({}))",
                within_x(&format!("s:({d} | _) & _")),
                within_x("s:_ & _")
            );
            body.push(format!("#({}) == {missing_d}", within_x("s:[Aa] & _")));
            body.push(within(&missing_d, lo, hi));
        }
    }
    body.push(format!("#({}) == 0", within_x("~(s & t) & s:[Aa] & [Aa]")));
    body
}

fn within(count: &str, lo: i64, hi: i64) -> String {
    if lo == hi {
        format!("{count} == {lo}")
    } else {
        format!("{count} >= {lo} {count} <= {hi}")
    }
}
