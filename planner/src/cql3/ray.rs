//! A CQL 3 ray list (`:ray`, `:rayattack`, `:rayorthogonal`, `:raydiagonal`,
//! `:rayhorizontal`, `:rayvertical`) as a CQL 6 `ray`: without a range, at least one ray; with
//! the range `0`, none (counting rays is refused).

use super::words::{Args, Placement, read_designator};
use crate::error::ParseError;

pub fn ray(word: &str, at: &mut Args<'_>, place: Placement) -> Result<String, ParseError> {
    let arg = at.item(word)?;
    let Some((members, _)) = arg.list() else {
        return Err(ParseError::new(
            format!("{word} takes a list of piece designators: {word} (R k)"),
            arg.span(),
        ));
    };
    let mut sets = Vec::new();
    for m in members {
        sets.push(read_designator(m.atom().unwrap_or(""), m.span())?.cql6(place));
    }
    if sets.len() < 2 {
        return Err(ParseError::new(
            format!("{word} needs at least two designators"),
            arg.span(),
        ));
    }
    let negate = if at.peek_number() {
        let span = at.peek_span();
        match at.range(word)? {
            (0, 0) => true,
            _ => {
                return Err(ParseError::new(
                    "counting rays is not supported yet: without a range a ray list means at least one ray, and 0 means none",
                    span,
                ));
            }
        }
    } else {
        false
    };
    let text = match word {
        ":ray" => format!("ray ({})", sets.join(" ")),
        ":rayorthogonal" => format!("ray orthogonal ({})", sets.join(" ")),
        ":raydiagonal" => format!("ray diagonal ({})", sets.join(" ")),
        ":rayhorizontal" => format!("ray horizontal ({})", sets.join(" ")),
        ":rayvertical" => format!("ray vertical ({})", sets.join(" ")),
        // Orthogonal rays from a rook or queen, diagonal ones from a bishop or queen.
        _ => {
            let rest = sets[1..].join(" ");
            format!(
                "{{ray orthogonal (([RQrq] & {}) {rest}) or ray diagonal (([BQbq] & {}) {rest})}}",
                sets[0], sets[0]
            )
        }
    };
    Ok(if negate { format!("not {text}") } else { text })
}
