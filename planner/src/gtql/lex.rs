//! GTQL tokens: numbers, names, quoted moves, `[^k]` and symbols, each with its span.

use crate::ast::Span;
use crate::error::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum T {
    Int(i64),
    /// `[^]` or `[^k]`.
    Ancestor(u32),
    Name(String),
    /// A quoted move, `"e2e4"` or `'Qh4'`.
    Str(String),
    Sym(&'static str),
    End,
}

pub(super) fn lex(src: &str) -> Result<Vec<(T, Span)>, ParseError> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    const SYMS: [&str; 15] = [
        "[]", "[<]", "<=", ">=", "!=", "<", ">", "=", "&", "(", ")", ";", ":", "*", ",",
    ];
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        // The same budget as CQL's (`crate::token::MAX_TOKENS`): memory in proportion to the
        // query, and a clean error past it.
        if out.len() == crate::token::MAX_TOKENS {
            return Err(ParseError::new(
                format!(
                    "the query is too long: more than {} tokens",
                    crate::token::MAX_TOKENS
                ),
                start..(start + 1).min(b.len()),
            ));
        }
        if c.is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let n = src[start..i]
                .parse::<i64>()
                .map_err(|_| ParseError::new("number too large", start..i))?;
            out.push((T::Int(n), start..i));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((T::Name(src[start..i].to_owned()), start..i));
        } else if c == b'"' || c == b'\'' {
            let len = src[i + 1..].find(c as char).ok_or_else(|| {
                ParseError::new("a quoted move needs its closing quote", i..b.len())
            })?;
            out.push((T::Str(src[i + 1..i + 1 + len].to_owned()), i..i + len + 2));
            i += len + 2;
        } else if c == b'-' {
            out.push((T::Sym("-"), i..i + 1));
            i += 1;
        } else if src[i..].starts_with("[^") {
            // `[^]` or `[^k]`: the parent or the k-th ancestor.
            let digits = src[i + 2..].bytes().take_while(u8::is_ascii_digit).count();
            let close = i + 2 + digits;
            if b.get(close) != Some(&b']') {
                return Err(ParseError::new(
                    "expected '[^]' or '[^k]' with k a number",
                    i..close.min(b.len()),
                ));
            }
            let k = match digits {
                0 => 1,
                _ => src[i + 2..close]
                    .parse::<u32>()
                    .ok()
                    .filter(|&k| k >= 1)
                    .ok_or_else(|| {
                        ParseError::new("an ancestor is [^1] (the parent) or further", i..close + 1)
                    })?,
            };
            i = close + 1;
            out.push((T::Ancestor(k), start..i));
        } else if let Some(s) = SYMS.iter().find(|s| src[i..].starts_with(**s)) {
            i += s.len();
            out.push((T::Sym(s), start..i));
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            let hint = match ch {
                '|' => " (flag bits are tested with '&', as in 'flags & QNode')",
                '!' => " (negation is 'not'; '!=' is 'not equal')",
                _ => "",
            };
            return Err(ParseError::new(
                format!("unexpected character '{ch}'{hint}"),
                i..i + ch.len_utf8(),
            ));
        }
    }
    out.push((T::End, b.len()..b.len()));
    Ok(out)
}
