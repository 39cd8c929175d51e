//! A CQL 3 position list as the CQL 6 filter meaning the same.
//!
//! Translated: piece designators; the simple flags (`:wtm :btm :mate :stalemate :check
//! :nocheck :enpassant :noenpassant :initial :variations :variationsonly`); `:not`;
//! `:and`/`:or` over nested lists, `:xor` over two;
//! counting and material (`:piececount`, `:power`, `:powerdifference` with one designator or
//! two, `:attackcount` as a count of attacker–target pairs); rays (`:ray`, `:rayattack`,
//! `:rayorthogonal`, `:raydiagonal`, `:rayhorizontal`, `:rayvertical`, with no range or 0);
//! the next move (`:movefrom`, `:moveto`, `:promote` as one dash, `:movenumber`); sequences
//! (`:sequence`, `:gappedsequence` as a `line`); game information (`:elo` everywhere,
//! `:result`, `:whiteelo`, `:blackelo` outside a colour flip); `:relation` (`relation.rs`);
//! `:pretransformmatchcount` (top-level lists, each placement counted alone); `:markall` and
//! `:noannotate` (they only change annotations, which follow CQL 6 here); the
//! transforms. `:flipcolor`, `:flip`/`:flipdihedral`, `:fliphorizontal` and `:flipvertical`
//! mean in CQL 6 what they meant; the shifts (`:shift`, `:shifthorizontal`,
//! `:shiftvertical`) and `:flipdiagonal` are expanded here, one instance per placement of the
//! designators, because a CQL 3 shift keeps the squares on the edge it moves away from where
//! CQL 6 drops the shifted filter.
//!
//! Refused with their place: what the documentation leaves open (diagonal shifts, counting
//! rays, `:xor` over more than two lists, tags), Scidb's extensions, and the rest listed in
//! docs/cql3.md.

use std::collections::HashSet;

use super::reader::Item;
use super::relation::{self, Relation};
use super::words::{Args, Designator, Placement, read_designator, unsupported};
use crate::error::ParseError;

/// A translated position list.
pub struct Position {
    pub text: String,
    /// `:variations` or `:variationsonly` somewhere: positions in variations are tried too.
    pub variations: bool,
    /// `:matchcount` (top-level lists only).
    pub matchcount: Option<((i64, i64), crate::ast::Span)>,
    /// `:pretransformmatchcount`: the range, and the list's instances (one per placement),
    /// each of which is counted alone.
    pub per_instance: Option<((i64, i64), Vec<String>)>,
}

/// What the lists being translated share.
#[derive(Default)]
pub struct Names {
    /// Variables made so far (`:attackcount` counts into one).
    made: usize,
}

impl Names {
    fn fresh(&mut self, what: &str) -> String {
        self.made += 1;
        format!("cql3_{what}_{}", self.made)
    }
}

/// How a list is nested.
#[derive(Copy, Clone, Default)]
pub struct Within {
    /// Where the enclosing list puts its designators.
    pub place: Placement,
    /// Inside a colour flip (`:flipcolor` here or around).
    pub colour_flip: bool,
    /// Nested in another list (no `:matchcount`).
    pub nested: bool,
    /// Under a transform of an enclosing list (a nested `:relation` would be transformed).
    pub transformed: bool,
    /// The query visits variations: the moves and sequences of a list without its own
    /// `:variations` keep to the main line (primary moves).
    pub main_line_moves: bool,
}

/// The transform keywords of one list.
#[derive(Default)]
struct Transforms {
    colour: bool,
    /// `:flip`/`:flipdihedral`: the eight reflections and rotations.
    dihedral: bool,
    /// `:fliphorizontal` (ranks mirrored), `:flipvertical` (files mirrored).
    mirror_ranks: bool,
    mirror_files: bool,
    diagonal: bool,
    horizontal: bool,
    vertical: bool,
    /// The list's relation compares the squares of each placement (`:pattern`), or its
    /// matches are counted per placement (`:pretransformmatchcount`): the flips are expanded
    /// here with the shifts instead of being written as CQL 6 transforms.
    expand_flips: bool,
}

impl Transforms {
    fn read(items: &[Item]) -> Transforms {
        let mut t = Transforms::default();
        let mut items_iter = items.iter().peekable();
        while let Some(item) = items_iter.next() {
            match item.atom() {
                Some(":flipcolor") => t.colour = true,
                Some(":flip" | ":flipdihedral") => t.dihedral = true,
                Some(":fliphorizontal") => t.mirror_ranks = true,
                Some(":flipvertical") => t.mirror_files = true,
                Some(":flipdiagonal") => t.diagonal = true,
                Some(":shift") => {
                    t.horizontal = true;
                    t.vertical = true;
                }
                Some(":shifthorizontal") => t.horizontal = true,
                Some(":shiftvertical") => t.vertical = true,
                Some(":pretransformmatchcount") => t.expand_flips = true,
                Some(":relation") => {
                    if let Some((rel, _)) = items_iter.peek().and_then(|i| i.list()) {
                        t.expand_flips |= rel.iter().any(|r| r.atom() == Some(":pattern"));
                    }
                }
                _ => {}
            }
        }
        t
    }

    fn expanded(&self) -> bool {
        self.horizontal
            || self.vertical
            || self.diagonal
            || (self.expand_flips && (self.dihedral || self.mirror_files || self.mirror_ranks))
    }

    /// The CQL 6 transforms written around the list, outermost first.
    fn wrap(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.colour {
            out.push("flipcolor");
        }
        if !self.expand_flips {
            if self.dihedral {
                out.push("flip");
            }
            if self.mirror_ranks {
                out.push("fliphorizontal");
            }
            if self.mirror_files {
                out.push("flipvertical");
            }
        }
        out
    }

    /// Every placement of the list's designators: compositions of the members of each set,
    /// the identity first.
    fn placements(&self) -> Vec<Placement> {
        let both: &[bool] = &[false, true];
        let one: &[bool] = &[false];
        let pick = |on: bool| if on { both } else { one };
        let expand = |on: bool| pick(self.expand_flips && (on || self.dihedral));
        let shifts = |on: bool| -> Vec<i8> { if on { (-7..=7).collect() } else { vec![0] } };
        let mut out = vec![Placement::default()];
        for &mirror_files in expand(self.mirror_files) {
            for &mirror_ranks in expand(self.mirror_ranks) {
                for &diagonal in pick(self.diagonal || (self.expand_flips && self.dihedral)) {
                    for dx in shifts(self.horizontal) {
                        for dy in shifts(self.vertical) {
                            let p = Placement {
                                mirror_files,
                                mirror_ranks,
                                diagonal,
                                dx,
                                dy,
                            };
                            if !p.is_identity() {
                                out.push(p);
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// The CQL 6 filter of the position list `list`.
pub fn position_list(
    list: &Item,
    within: Within,
    names: &mut Names,
) -> Result<Position, ParseError> {
    let items = list.list().map_or(&[][..], |(items, _)| items);
    let items = items.get(1..).unwrap_or(&[]);
    let transforms = Transforms::read(items);
    if transforms.expanded() && !within.place.is_identity() {
        return Err(ParseError::new(
            "a shift or :flipdiagonal inside a list that is itself shifted or flipped diagonally is not supported yet",
            list.span(),
        ));
    }
    let inner = Within {
        colour_flip: within.colour_flip || transforms.colour,
        transformed: within.transformed
            || transforms.colour
            || transforms.expanded()
            || !transforms.wrap().is_empty(),
        // A list with its own `:variations` follows every move.
        main_line_moves: within.main_line_moves
            && !items
                .iter()
                .any(|i| matches!(i.atom(), Some(":variations" | ":variationsonly"))),
        ..within
    };
    let mut instances: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut shared: Option<Body> = None;
    let placements = if transforms.expanded() {
        transforms.placements()
    } else {
        vec![within.place]
    };
    for place in placements {
        // `None`: the placement moves a designator of the list off the board.
        let Some(body) = body(items, list, Within { place, ..inner }, names)? else {
            continue;
        };
        let text = match &body.relation {
            // A `:pattern` relation compares the squares of this placement.
            Some(r) if r.per_placement => format!("{{{} {}}}", body.conjuncts, r.text),
            _ => body.conjuncts.clone(),
        };
        if seen.insert(text.clone()) {
            instances.push(text);
        }
        shared.get_or_insert(body);
    }
    let Some(first) = shared else {
        // Every placement moved a designator off the board: the list matches nothing.
        return Ok(Position {
            text: if items.iter().any(|i| i.atom() == Some(":not")) {
                "true".into()
            } else {
                "false".into()
            },
            variations: false,
            matchcount: None,
            per_instance: None,
        });
    };
    // P2 may be in a variation while P1 stays on the main line: the guard goes outside the
    // list (and outside its `:not`).
    let guard = |text: String| match &first.relation {
        Some(r) if r.variations && !first.variations => format!("{{mainline {text}}}"),
        _ => text,
    };
    let beside = match &first.relation {
        // The relation's designators are not transformed with the list: it stands beside it.
        Some(r) if !r.per_placement => format!(" {}", r.text),
        _ => String::new(),
    };
    let per_instance = match &first.pretransform {
        None => None,
        Some((range, span)) => {
            if transforms.colour || first.negated || within.nested {
                return Err(ParseError::new(
                    ":pretransformmatchcount with :flipcolor, :not or in a nested list is not supported yet",
                    span.clone(),
                ));
            }
            let each = instances
                .iter()
                .map(|i| guard(format!("{{{i}{beside}}}")))
                .collect();
            Some((*range, each))
        }
    };
    let mut text = match instances.as_slice() {
        [one] => one.clone(),
        many => format!("{{{}}}", many.join(" or ")),
    };
    for t in transforms.wrap().iter().rev() {
        text = format!("{t} {text}");
    }
    let mut variations = first.variations;
    if !beside.is_empty() {
        text = format!("{{{text}{beside}}}");
    }
    if first.negated {
        text = format!("not {text}");
    }
    text = guard(text);
    if let Some(r) = &first.relation {
        variations |= r.variations;
    }
    // Braced, so that a transform or `not` at its head never takes a following `or` with it.
    if !text.starts_with('{') {
        text = format!("{{{text}}}");
    }
    if let Some((_, span)) = &first.matchcount
        && within.nested
    {
        return Err(ParseError::new(
            ":matchcount belongs in a top-level position list",
            span.clone(),
        ));
    }
    Ok(Position {
        text,
        variations,
        matchcount: first.matchcount,
        per_instance,
    })
}

/// One placement of a list: its conjuncts, and what does not depend on the placement.
struct Body {
    conjuncts: String,
    negated: bool,
    variations: bool,
    relation: Option<Relation>,
    matchcount: Option<((i64, i64), crate::ast::Span)>,
    pretransform: Option<((i64, i64), crate::ast::Span)>,
}

/// The keywords that take no argument and add nothing here.
const FLAGS: &[&str] = &[
    ":flipcolor",
    ":flip",
    ":flipdihedral",
    ":fliphorizontal",
    ":flipvertical",
    ":flipdiagonal",
    ":shift",
    ":shifthorizontal",
    ":shiftvertical",
    // Annotation only: every matching position is marked, as CQL 6 does.
    ":markall",
    ":noannotate",
];

/// One placement of the list, or `None` when it moves one of the list's own designators off
/// the board (then it cannot match).
fn body(
    items: &[Item],
    list: &Item,
    within: Within,
    names: &mut Names,
) -> Result<Option<Body>, ParseError> {
    let place = within.place;
    let mut parts: Vec<String> = Vec::new();
    let mut out = Body {
        conjuncts: String::new(),
        negated: false,
        variations: false,
        relation: None,
        matchcount: None,
        pretransform: None,
    };
    let mut mv = super::dash::MoveParts::default();
    // The list's own designators (for `:pattern`), and its relation, translated once they
    // are all known.
    let mut designators: Vec<Designator> = Vec::new();
    let mut relation_arg: Option<&Item> = None;
    let mut at = Args::new(items, list.span());
    while let Some(item) = at.next() {
        let Some(word) = item.atom() else {
            return Err(ParseError::new(
                "expected a piece designator or a position-list keyword",
                item.span(),
            ));
        };
        if !word.starts_with(':') {
            let d = read_designator(word, item.span())?;
            parts.push(d.cql6(place));
            designators.push(d);
            continue;
        }
        if FLAGS.contains(&word) {
            continue;
        }
        let span = item.span();
        match word {
            ":wtm" => parts.push("wtm".into()),
            ":btm" => parts.push("btm".into()),
            ":mate" => parts.push("mate".into()),
            ":stalemate" => parts.push("stalemate".into()),
            ":check" => parts.push("check".into()),
            ":nocheck" => parts.push("not check".into()),
            // The next move is (is not) an en-passant capture.
            ":enpassant" | ":noenpassant" => {
                let after = if within.main_line_moves {
                    "{enpassant primary}"
                } else {
                    "enpassant"
                };
                let not = if word == ":noenpassant" { "not " } else { "" };
                parts.push(format!("{not}--({after})"));
            }
            ":initial" => parts.push("initial".into()),
            ":variations" => out.variations = true,
            ":variationsonly" => {
                out.variations = true;
                parts.push("variation".into());
            }
            ":not" => out.negated = true,
            ":relation" if within.nested && within.transformed => {
                return Err(ParseError::new(
                    ":relation in a list nested under a transform is not supported yet (its designators would be transformed)",
                    span,
                ));
            }
            ":relation" => {
                if relation_arg.is_some() {
                    return Err(ParseError::new(
                        "a position list has at most one :relation",
                        span,
                    ));
                }
                relation_arg = Some(at.item(word)?);
            }
            ":piececount" => {
                let d = designator_arg(&mut at, word, place)?;
                let r = at.range(word)?;
                parts.push(within_range(&format!("#{d}"), r));
            }
            ":power" => {
                let d = designator_arg(&mut at, word, place)?;
                let r = at.range(word)?;
                parts.push(within_range(&format!("power {d}"), r));
            }
            ":powerdifference" => {
                let d1 = designator_arg(&mut at, word, place)?;
                // One designator (CQL 3: its white pieces less its black ones) or two (the
                // first's less the second's).
                let value = if at.peek_number() {
                    format!("(power ({d1} & A) - power ({d1} & a))")
                } else {
                    let d2 = designator_arg(&mut at, word, place)?;
                    format!("(power {d1} - power {d2})")
                };
                let r = at.range(word)?;
                parts.push(within_range(&value, r));
            }
            ":attackcount" => {
                let d1 = designator_arg(&mut at, word, place)?;
                let target = at.item(word)?;
                let d2 = read_designator(target.atom().unwrap_or(""), target.span())?;
                let r = at.range(word)?;
                let d2_text = d2.cql6(place);
                parts.push(if d2.squares_at(place).count_ones() == 1 {
                    within_range(&format!("#({d1} attacks {d2_text})"), r)
                } else {
                    // Pairs of an attacker and an attacked square.
                    let (c, z) = (names.fresh("attacks"), names.fresh("square"));
                    format!(
                        "{{{c} = 0 {{square {z} in {d2_text} {{{c} += #({d1} attacks {z})}}}} or true {}}}",
                        within_range(&c, r)
                    )
                });
            }
            ":ray" | ":rayattack" | ":rayorthogonal" | ":raydiagonal" | ":rayhorizontal"
            | ":rayvertical" => parts.push(super::ray::ray(word, &mut at, place)?),
            ":movefrom" | ":moveto" => {
                let arg = at.item(word)?;
                let d = read_designator(arg.atom().unwrap_or(""), arg.span())?;
                let slot = if word == ":movefrom" {
                    &mv.from
                } else {
                    &mv.to
                };
                if slot.is_some() {
                    return Err(ParseError::new(
                        format!("a second {word} in one list is not supported yet"),
                        span,
                    ));
                }
                if word == ":movefrom" {
                    mv.from = Some(d);
                } else if d.tag {
                    // Where a tagged piece is taken is not a square set a dash can end on.
                    return Err(ParseError::new(
                        ":moveto with a tagged piece is not supported yet",
                        arg.span(),
                    ));
                } else {
                    mv.to = Some(d);
                }
            }
            ":promote" => {
                let arg = at.item(word)?;
                let w = arg.atom().unwrap_or("");
                if w == "[]" {
                    return Err(ParseError::new(
                        ":promote [] (not a promotion) is not supported yet",
                        arg.span(),
                    ));
                }
                let d = read_designator(w, arg.span())?;
                if d.tag {
                    return Err(ParseError::new(
                        ":promote takes piece types, not a tag",
                        arg.span(),
                    ));
                }
                if mv.promote.is_some() {
                    return Err(ParseError::new(
                        "a second :promote in one list is not supported yet",
                        span,
                    ));
                }
                mv.promote = Some(d);
            }
            ":movenumber" => {
                let r = at.range(word)?;
                parts.push(within_range("movenumber", r));
            }
            ":sequence" | ":gappedsequence" => {
                let arg = at.item(word)?;
                let lists = nested_lists(word, arg)?;
                // Without `:variations` the sequence follows the main line.
                let mut line = String::from(if within.main_line_moves {
                    "line primary"
                } else {
                    "line"
                });
                for l in lists {
                    let text = nested(l, within, names, &mut out)?;
                    // Gaps (any positions, or none) before and between the elements.
                    if word == ":gappedsequence" {
                        line.push_str(" --> .*");
                    }
                    line.push_str(&format!(" --> {text}"));
                }
                parts.push(line);
            }
            ":and" | ":or" => {
                let arg = at.item(word)?;
                let mut inner = Vec::new();
                for n in nested_lists(word, arg)? {
                    let text = nested(n, within, names, &mut out)?;
                    inner.push(text);
                }
                let joint = if word == ":and" { " " } else { " or " };
                parts.push(format!("{{{}}}", inner.join(joint)));
            }
            // Exactly one of two lists (with more, "exactly one" and "an odd number" differ,
            // and the documentation does not say which).
            ":xor" => {
                let arg = at.item(word)?;
                let lists = nested_lists(word, arg)?;
                let [a, b] = lists.as_slice() else {
                    return Err(ParseError::new(
                        ":xor of other than two position lists is not supported yet",
                        arg.span(),
                    ));
                };
                let mut texts = Vec::new();
                for l in [a, b] {
                    let text = nested(l, within, names, &mut out)?;
                    texts.push(text);
                }
                parts.push(format!(
                    "{{{{{a} not {b}}} or {{{b} not {a}}}}}",
                    a = texts[0],
                    b = texts[1]
                ));
            }
            // The tagged piece stands on a D square as a D piece.
            ":tagmatch" => {
                let name = at.word(word)?;
                let d = designator_arg(&mut at, word, place)?;
                parts.push(format!("({} & {d})", super::tags::variable(&name)));
            }
            ":elo" => {
                let r = at.range(word)?;
                parts.push(elo_either(r));
            }
            ":whiteelo" | ":blackelo" | ":result" => {
                if within.colour_flip {
                    return Err(ParseError::new(
                        format!(
                            "{word} under :flipcolor is not supported yet (CQL 3 swaps the colours in it)"
                        ),
                        span,
                    ));
                }
                parts.push(match word {
                    ":result" => format!("result {}", result(&at.word(word)?, &at)?),
                    ":whiteelo" => within_range("elo white", at.range(word)?),
                    _ => within_range("elo black", at.range(word)?),
                });
            }
            ":matchcount" | ":pretransformmatchcount" => {
                let (lo, hi) = at.range(word)?;
                if lo < 1 {
                    return Err(ParseError::new(
                        format!("{word} with a range that admits 0 is not supported yet"),
                        span,
                    ));
                }
                if word == ":matchcount" {
                    out.matchcount = Some(((lo, hi), span));
                } else {
                    out.pretransform = Some(((lo, hi), span));
                }
            }
            _ => return Err(unsupported(word, span)),
        }
    }
    if designators.iter().any(|d| d.squares_at(place) == 0) {
        return Ok(None);
    }
    if let Some(arg) = relation_arg {
        let (squares, exact) = pattern_of(&designators, place);
        let pattern = relation::Pattern {
            squares,
            exact,
            colour_flip: within.colour_flip,
        };
        out.relation = Some(relation::relation(arg, &pattern)?);
    }
    if let Some(dash) = mv.dash(place, within.main_line_moves) {
        parts.push(dash);
    }
    // An empty list matches every position.
    out.conjuncts = format!("{{{}}}", parts.join(" "));
    Ok(Some(out))
}

/// The list's top-level designators at `place` for `:pattern`: their squares when each names
/// at most one (which squares a designator of several names is not settled), and their CQL 6
/// text when each is one piece type (or the empty square) on one square.
fn pattern_of(designators: &[Designator], place: Placement) -> (Option<u64>, Option<Vec<String>>) {
    let mut squares = Some(0u64);
    let mut exact = Some(Vec::new());
    for d in designators {
        let s = d.squares_at(place);
        if s.count_ones() > 1 {
            squares = None;
        }
        if let Some(acc) = squares.as_mut() {
            *acc |= s;
        }
        let one_piece = !d.tag && d.piece.chars().count() == 1 && d.piece != "A" && d.piece != "a";
        match exact.as_mut() {
            Some(list) if one_piece && s.count_ones() == 1 => list.push(d.cql6(place)),
            _ => exact = None,
        }
    }
    (squares, exact)
}

/// A list nested in this one (in `:and`, `:or`, `:xor`, a sequence): translated with this
/// list's placement; its `:variations` carries over.
fn nested(
    list: &Item,
    within: Within,
    names: &mut Names,
    out: &mut Body,
) -> Result<String, ParseError> {
    let p = position_list(
        list,
        Within {
            nested: true,
            ..within
        },
        names,
    )?;
    out.variations |= p.variations;
    Ok(p.text)
}

fn nested_lists<'a>(word: &str, arg: &'a Item) -> Result<Vec<&'a Item>, ParseError> {
    let Some((nested, _)) = arg.list() else {
        return Err(ParseError::new(
            format!("{word} takes a list of position lists"),
            arg.span(),
        ));
    };
    for n in nested {
        if !matches!(n.list(), Some((_, Some("position")))) {
            return Err(ParseError::new("expected '(position ...)'", n.span()));
        }
    }
    if nested.is_empty() {
        return Err(ParseError::new(
            format!("{word} needs at least one position list"),
            arg.span(),
        ));
    }
    Ok(nested.iter().collect())
}

fn designator_arg(at: &mut Args<'_>, word: &str, place: Placement) -> Result<String, ParseError> {
    let d = at.item(word)?;
    Ok(read_designator(d.atom().unwrap_or(""), d.span())?.cql6(place))
}

/// `value` within the range.
pub fn within_range(value: &str, (lo, hi): (i64, i64)) -> String {
    if lo == hi {
        format!("{value} == {lo}")
    } else {
        format!("{value} >= {lo} {value} <= {hi}")
    }
}

/// Either player's rating in the range.
pub fn elo_either(r: (i64, i64)) -> String {
    format!(
        "{{{{{}}} or {{{}}}}}",
        within_range("elo white", r),
        within_range("elo black", r)
    )
}

pub fn result(word: &str, at: &Args<'_>) -> Result<&'static str, ParseError> {
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
