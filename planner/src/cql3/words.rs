//! Reading a list's items: keyword arguments (words, ranges), piece designators as CQL 6
//! writes them, and the error for a keyword not translated yet — shared by the match and
//! position lists (`desugar.rs`) and the relation list (`relation.rs`).

use super::reader::Item;
use crate::ast::Span;
use crate::error::ParseError;

/// A CQL 3 piece designator as CQL 6 writes it: the piece part (one letter, a bracketed set)
/// with `.` (empty), `?` (anything), `U`, `M`/`m`, `I`/`i` spelled out, then the squares with
/// `?` (any file, any rank) spelled out.
pub fn designator(word: &str, span: Span) -> Result<String, ParseError> {
    let bad = |why: &str| {
        ParseError::new(
            format!("{why} in the piece designator '{word}'"),
            span.clone(),
        )
    };
    let (pieces, squares) = if let Some(rest) = word.strip_prefix('[') {
        let close = rest.find(']').ok_or_else(|| bad("an unclosed '['"))?;
        (&rest[..close], &rest[close + 1..])
    } else if word.starts_with('$') {
        return Err(ParseError::new(
            "tagged pieces ($name) are not supported yet",
            span,
        ));
    } else {
        let first = word.chars().next().ok_or_else(|| bad("nothing"))?;
        word.split_at(first.len_utf8())
    };
    let mut set = String::new();
    for c in pieces.chars() {
        let mapped = match c {
            'K' | 'Q' | 'R' | 'B' | 'N' | 'P' | 'k' | 'q' | 'r' | 'b' | 'n' | 'p' | 'A' | 'a' => {
                c.to_string()
            }
            'U' => "Aa".into(),
            'M' => "QR".into(),
            'm' => "qr".into(),
            'I' => "BN".into(),
            'i' => "bn".into(),
            '.' => "_".into(),
            '?' => "Aa_".into(),
            _ => return Err(bad(&format!("an unknown piece type '{c}'"))),
        };
        for m in mapped.chars() {
            if !set.contains(m) {
                set.push(m);
            }
        }
    }
    let piece = match set.chars().count() {
        0 => return Err(bad("no piece type")),
        1 => set,
        _ => format!("[{set}]"),
    };
    let square_items: Vec<&str> = match squares.strip_prefix('[') {
        Some(inner) => inner
            .strip_suffix(']')
            .ok_or_else(|| bad("an unclosed '['"))?
            .split(',')
            .collect(),
        None if squares.is_empty() => return Ok(piece),
        None => vec![squares],
    };
    let mut out = Vec::new();
    for s in square_items {
        out.push(square(s).ok_or_else(|| bad(&format!("the squares '{s}'")))?);
    }
    Ok(match out.as_slice() {
        [one] => format!("{piece}{one}"),
        _ => format!("{piece}[{}]", out.join(",")),
    })
}

/// A square or square range (`e4`, `a-c1`, `f-h6-8`, `?8`, `a?`) with `?` spelled out.
fn square(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let file = |c: u8| (b'a'..=b'h').contains(&c);
    let rank = |c: u8| (b'1'..=b'8').contains(&c);
    let (files, rest) = match b {
        [b'?', rest @ ..] => ("a-h".to_owned(), rest),
        [f, b'-', g, rest @ ..] if file(*f) && file(*g) => {
            (format!("{}-{}", *f as char, *g as char), rest)
        }
        [f, rest @ ..] if file(*f) => ((*f as char).to_string(), rest),
        _ => return None,
    };
    let ranks = match rest {
        [b'?'] => "1-8".to_owned(),
        [r, b'-', t] if rank(*r) && rank(*t) => format!("{}-{}", *r as char, *t as char),
        [r] if rank(*r) => (*r as char).to_string(),
        _ => return None,
    };
    Some(format!("{files}{ranks}"))
}

pub fn unsupported(word: &str, span: Span) -> ParseError {
    let what = if word.starts_with(':') {
        format!("the CQL 3 keyword {word} is not supported yet")
    } else {
        format!("unexpected '{word}'")
    };
    ParseError::new(what, span)
}

/// The items of a list read one by one, with their keyword arguments.
pub struct Args<'a> {
    items: &'a [Item],
    at: usize,
    list: Span,
}

impl<'a> Args<'a> {
    pub fn new(items: &'a [Item], list: Span) -> Self {
        Self { items, at: 0, list }
    }

    pub fn next(&mut self) -> Option<&'a Item> {
        let item = self.items.get(self.at)?;
        self.at += 1;
        Some(item)
    }

    pub fn last_span(&self) -> Span {
        self.items
            .get(self.at.saturating_sub(1))
            .map_or(self.list.clone(), Item::span)
    }

    /// The argument of `keyword`.
    pub fn item(&mut self, keyword: &str) -> Result<&'a Item, ParseError> {
        let span = self.last_span();
        self.next()
            .ok_or_else(|| ParseError::new(format!("{keyword} needs an argument"), span))
    }

    /// A word argument of `keyword`.
    pub fn word(&mut self, keyword: &str) -> Result<String, ParseError> {
        let item = self.item(keyword)?;
        match item.atom() {
            Some(w) if !w.starts_with(':') => Ok(w.to_owned()),
            _ => Err(ParseError::new(
                format!("{keyword} needs a word here"),
                item.span(),
            )),
        }
    }

    /// A range argument: `N` or `N M`.
    pub fn range(&mut self, keyword: &str) -> Result<(i64, i64), ParseError> {
        let first = self.item(keyword)?;
        let lo: i64 = first.atom().and_then(|w| w.parse().ok()).ok_or_else(|| {
            ParseError::new(
                format!("{keyword} needs a number or a range N M"),
                first.span(),
            )
        })?;
        let hi = match self
            .items
            .get(self.at)
            .and_then(Item::atom)
            .and_then(|w| w.parse().ok())
        {
            Some(hi) => {
                self.at += 1;
                hi
            }
            None => lo,
        };
        Ok((lo, hi))
    }
}
