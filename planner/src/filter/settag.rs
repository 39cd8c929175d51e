//! `settag("Name" value)`: when the game is written, it carries the tag `Name` with the
//! string `value` (taken at the last matching position that set it). The roster tags and the
//! ones the reader relies on (`Event`, `Site`, `Date`, `Round`, `Result`, `ECO`, `FEN`,
//! `EventDate`, any `White...`/`Black...`) cannot be set. Always matches; `tag` still reads
//! the input's value.

use crate::ast::{Expr, Node};
use crate::error::ParseError;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["settag"];

const FORBIDDEN: [&str; 8] = [
    "Event",
    "Site",
    "Date",
    "Round",
    "Result",
    "ECO",
    "FEN",
    "EventDate",
];

/// Reads `settag("Name" value)`.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let start = p.here();
    let mut args = p.paren_args(2, "settag")?.into_iter();
    let (Some(name), Some(value)) = (args.next(), args.next()) else {
        unreachable!("two arguments")
    };
    let Expr::Str(n) = name.expr else {
        return Err(ParseError::new(
            "settag's first argument is the tag's name as a string",
            name.span,
        ));
    };
    if FORBIDDEN.contains(&n.as_str())
        || n.starts_with("White")
        || n.starts_with("Black")
        || n.is_empty()
        || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(ParseError::new(
            format!("the tag '{n}' cannot be set"),
            start..value.span.end,
        ));
    }
    Ok(Expr::SetTag(n, Box::new(value)))
}

/// It always matches, with no value of its own.
pub const TYPE: Ty = Ty::Logical;

/// Records the tag for the output (dropped with the position's other notes if the position
/// does not match in the end).
pub fn eval(name: &str, value: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let v = match ev.value(value, cx) {
        Some(Value::Str(s)) => s,
        Some(other) => other.render(),
        None => return Some(Value::Matched),
    };
    cx.comments
        .push((cx.cur, format!("{SETTAG}{name}{SETTAG}{v}")));
    Some(Value::Matched)
}

/// The marker of a tag set by `settag` in the comment list (taken out when the game ends).
pub const SETTAG: char = '\u{2}';

/// Index rule: it always matches.
pub fn bounds() -> Bounds {
    Bounds::exact(crate::plan::scan::Scan::All)
}
