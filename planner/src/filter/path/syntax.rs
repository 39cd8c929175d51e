//! How `path` and `line` read: their parameters, then their constituents.
//!
//! `path`: a dash constituent (`--`, `N[x]f7`, `P--=Q`) is one move; the filters written right
//! after it test the position the move reaches and belong to it, so a repetition mark after
//! them applies to the whole unit (`P--=Q check?` makes the promotion-with-check optional, as
//! the reference reads it). Filters before the first move test the starting position. A
//! parenthesised group of constituents (one that holds a move) takes a repetition mark as a
//! unit. The path ends at the first filter that follows a repetition mark or a group: that
//! filter is the next one of the query (`Run = path (-- check --){3,}  Run >= 10`).
//!
//! `line --> C --> C ...` (or `<--`): each constituent is one position, the next one a move
//! away; a constituent or a group (`(check --> not check){5,}`) takes a repetition mark.
//!
//! Repetition marks: `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`. `|` is not one (CQL 6.2 has no
//! alternation: `(N[x]f7 | B[x]f7)` is an error).

use crate::ast::{Expr, MoveSource, PathFilter, PathKind, PathParams, Pattern};
use crate::error::ParseError;
use crate::filter::syntax::{PResult, Syntax};

/// The most times a repetition mark may ask for (`{n,m}` is written out as copies).
const MAX_REPEAT: i64 = 1000;

/// Reads the parameters of `path` or `line`, stopping at the first token that is none.
fn params(p: &mut dyn Syntax, line: bool) -> PResult<PathParams> {
    let mut out = PathParams::default();
    loop {
        if p.eat_word("primary") {
            out.primary = true;
        } else if p.eat_word("quiet") {
            out.quiet = true;
        } else if p.eat_word("nestban") {
            out.nestban = true;
        } else if p.eat_word("firstmatch") {
            out.firstmatch = true;
        } else if p.eat_word("lastposition") {
            out.lastposition = true;
        } else if p.eat_word("keepallbest") {
            out.keepallbest = true;
        } else if p.eat_word("verbose") || p.eat_word("piecepath") {
            out.verbose = true;
        } else if line && p.eat_word("secondary") {
            out.secondary = true;
        } else if line && p.eat_word("singlecolor") {
            out.singlecolor = true;
        } else if !line && p.eat_word("title") {
            out.title = Some(p.string("expected the title's string after 'title'")?.0);
        } else if !line && p.eat_word("max") {
            out.max = Some(p.operand()?);
        } else if !line && p.eat_word("focus") {
            let capture = p.eat_word("capture");
            out.focus = Some((capture, p.set_arg("focus")?));
        } else {
            return Ok(out);
        }
    }
}

/// A repetition mark after a constituent, if one is next.
fn repetition(p: &mut dyn Syntax) -> PResult<Option<(u32, Option<u32>)>> {
    let clamp = |n: i64| n.clamp(0, MAX_REPEAT) as u32;
    if p.eat_sym("*") {
        return Ok(Some((0, None)));
    }
    if p.eat_sym("+") {
        return Ok(Some((1, None)));
    }
    if p.eat_sym("?") {
        return Ok(Some((0, Some(1))));
    }
    // `{n}`, `{n,}`, `{n,m}` (a `{` followed by anything else is a compound filter).
    if p.sym_at(0, "{")
        && let Some(n) = p.number_at(1)
        && (p.sym_at(2, "}") || p.sym_at(2, ","))
    {
        let here = p.here();
        p.eat_sym("{");
        p.number();
        let max = if p.eat_sym(",") {
            p.number().map(clamp)
        } else {
            Some(clamp(n))
        };
        if !p.eat_sym("}") {
            return Err(p.error("expected '}' to end the repetition count"));
        }
        if max.is_some_and(|m| m < clamp(n)) {
            return Err(ParseError::new(
                "a repetition's largest count is below its smallest",
                here..p.here(),
            ));
        }
        return Ok(Some((clamp(n), max)));
    }
    Ok(None)
}

fn repeated(pattern: Pattern, rep: Option<(u32, Option<u32>)>) -> Pattern {
    match rep {
        Some((min, max)) => Pattern::Repeat(Box::new(pattern), min, max),
        None => pattern,
    }
}

/// Reads `path` after its keyword.
pub fn path(p: &mut dyn Syntax) -> PResult<Expr> {
    let params = params(p, false)?;
    let start = p.here();
    let pattern = path_items(p, false)?;
    if matches!(&pattern, Pattern::Seq(items) if items.is_empty()) {
        return Err(ParseError::new(
            "expected the path's constituents (moves such as '--' or 'N[x]f7')",
            start..start + 1,
        ));
    }
    Ok(Expr::Path(Box::new(PathFilter {
        kind: PathKind::Path,
        params,
        pattern,
    })))
}

/// The constituents of a path, up to where it ends (`grouped`: inside parentheses, which
/// close it).
fn path_items(p: &mut dyn Syntax, grouped: bool) -> PResult<Pattern> {
    let mut items = Vec::new();
    // Filters may stand before the first move (they test the starting position), and after
    // a move without a repetition mark (they belong to it).
    let mut filters_allowed = true;
    loop {
        if grouped && p.sym_at(0, ")") {
            break;
        }
        if p.group_of_moves() {
            p.eat_sym("(");
            let inner = path_items(p, true)?;
            if !p.eat_sym(")") {
                return Err(p.error("expected ')' to close the group of path constituents"));
            }
            let rep = repetition(p)?;
            items.push(repeated(inner, rep));
            filters_allowed = false;
            continue;
        }
        if p.at_dash() || is_attached_dash(p) {
            let here = p.here();
            let n = p.operand()?;
            let Expr::Dash(mut dash) = n.expr else {
                return Err(ParseError::new(
                    "expected a move ('--' or '[x]') here",
                    here..n.span.end,
                ));
            };
            dash.source = MoveSource::Current;
            let mut then = Vec::new();
            let mut rep = repetition(p)?;
            while rep.is_none() && !p.at_dash() && !is_attached_dash(p) && !p.group_of_moves() {
                if !p.starts_filter() || (grouped && p.sym_at(0, ")")) {
                    break;
                }
                then.push(p.operand()?);
                rep = repetition(p)?;
            }
            filters_allowed = rep.is_none();
            items.push(repeated(Pattern::Move(dash, then), rep));
            continue;
        }
        if filters_allowed && items.iter().all(|i| matches!(i, Pattern::Test(_))) {
            if !p.starts_filter() {
                break;
            }
            let n = p.operand()?;
            let rep = repetition(p)?;
            items.push(repeated(Pattern::Test(n), rep));
            continue;
        }
        break;
    }
    Ok(Pattern::Seq(items))
}

/// Whether a square set written against a dash comes next (`N[x]f7`, `P--=Q`).
fn is_attached_dash(p: &mut dyn Syntax) -> bool {
    p.designator_then_dash()
}

/// Reads `line` after its keyword.
pub fn line(p: &mut dyn Syntax) -> PResult<Expr> {
    let params = params(p, true)?;
    let backward = if p.sym_at(0, "<--") {
        true
    } else if p.sym_at(0, "-->") {
        false
    } else {
        return Err(p.error("expected '-->' or '<--' after 'line'"));
    };
    let arrow = if backward { "<--" } else { "-->" };
    let mut items = Vec::new();
    while p.eat_sym(arrow) {
        items.push(line_item(p, arrow)?);
    }
    if p.sym_at(0, "-->") || p.sym_at(0, "<--") {
        return Err(p.error("a line goes one way: '-->' and '<--' cannot be mixed"));
    }
    Ok(Expr::Path(Box::new(PathFilter {
        kind: PathKind::Line { backward },
        params,
        pattern: Pattern::Seq(items),
    })))
}

/// One constituent of a line with its step before it, repeated as marked (every copy is a
/// position of its own, one move after the one before).
fn line_item(p: &mut dyn Syntax, arrow: &str) -> PResult<Pattern> {
    let unit = if p.group_of_moves() {
        p.eat_sym("(");
        let mut inner = vec![line_item(p, arrow)?];
        while p.eat_sym(arrow) {
            inner.push(line_item(p, arrow)?);
        }
        if !p.eat_sym(")") {
            return Err(p.error("expected ')' to close the group of line constituents"));
        }
        Pattern::Seq(inner)
    } else {
        Pattern::Seq(vec![Pattern::Step, Pattern::Test(p.line_constituent()?)])
    };
    let rep = repetition(p)?;
    Ok(repeated(unit, rep))
}
