//! The CQL 3 file as a tree of lists and atoms, each with its byte span in the source (so an
//! error points at the list element with its line and column). A file is one list; an item is
//! a nested list or an atom (a run of characters that are not whitespace or parentheses;
//! brackets and commas belong to atoms: `[RQ][a1-8]`); `;` starts a comment to the end of the
//! line; a double-quoted string (Scidb's extension) is one atom, without its quotes.
//!
//! Nesting is read with an explicit stack, not recursion: a deep input cannot overflow.

use crate::ast::Span;
use crate::error::ParseError;

/// One element of a list file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// `( ... )`.
    List { items: Vec<Item>, span: Span },
    /// A word, number, designator, keyword (`:mate`) or string.
    Atom { text: String, span: Span },
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::List { span, .. } | Item::Atom { span, .. } => span.clone(),
        }
    }

    /// The atom's text, if it is one.
    pub fn atom(&self) -> Option<&str> {
        match self {
            Item::Atom { text, .. } => Some(text),
            Item::List { .. } => None,
        }
    }

    /// The list's items and the word it starts with (`match`, `position`), if it is a list.
    pub fn list(&self) -> Option<(&[Item], Option<&str>)> {
        match self {
            Item::List { items, .. } => Some((items, items.first().and_then(Item::atom))),
            Item::Atom { .. } => None,
        }
    }
}

/// How deep lists may nest (a real query nests a handful of levels).
const MAX_DEPTH: usize = 200;

/// Reads the one list a CQL 3 file is.
pub fn read(src: &str) -> Result<Item, ParseError> {
    // Open lists: their start and items so far.
    let mut open: Vec<(usize, Vec<Item>)> = Vec::new();
    let mut done: Option<Item> = None;
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            c if c.is_ascii_whitespace() => {}
            b'(' => {
                if done.is_some() {
                    return Err(ParseError::new(
                        "a CQL 3 file is one list: nothing may follow its closing parenthesis",
                        i..i + 1,
                    ));
                }
                if open.len() >= MAX_DEPTH {
                    return Err(ParseError::new(
                        format!("lists nest deeper than {MAX_DEPTH} levels"),
                        i..i + 1,
                    ));
                }
                open.push((i, Vec::new()));
            }
            b')' => {
                let Some((start, items)) = open.pop() else {
                    return Err(ParseError::new("this ')' closes no list", i..i + 1));
                };
                let list = Item::List {
                    items,
                    span: start..i + 1,
                };
                match open.last_mut() {
                    Some((_, parent)) => parent.push(list),
                    None => done = Some(list),
                }
            }
            _ => {
                let (text, end) = if c == b'"' {
                    let close = src[i + 1..].find('"').ok_or_else(|| {
                        ParseError::new("this string is not closed", i..src.len())
                    })?;
                    (src[i + 1..i + 1 + close].to_owned(), i + close + 2)
                } else {
                    let end = src[i..]
                        .find(|ch: char| ch.is_whitespace() || ch == '(' || ch == ')' || ch == ';')
                        .map_or(src.len(), |n| i + n);
                    (src[i..end].to_owned(), end)
                };
                let atom = Item::Atom { text, span: i..end };
                match open.last_mut() {
                    Some((_, items)) => items.push(atom),
                    None => {
                        return Err(ParseError::new(
                            "a CQL 3 file is one list: expected '('",
                            i..end,
                        ));
                    }
                }
                i = end;
                continue;
            }
        }
        i += 1;
    }
    if let Some((start, _)) = open.last() {
        return Err(ParseError::new(
            "this list is not closed",
            *start..start + 1,
        ));
    }
    done.ok_or_else(|| ParseError::new("empty query: expected '(match ...)'", 0..0))
}

/// Whether `src` is written in the CQL 3 list syntax: its first token (after comments and
/// blank space) is `(`. A CQL 6 query starts with `cql`.
pub fn is_list_syntax(src: &str) -> bool {
    let mut rest = src;
    loop {
        rest = rest.trim_start();
        if let Some(comment) = rest.strip_prefix(';') {
            rest = comment.find('\n').map_or("", |n| &comment[n..]);
            continue;
        }
        return rest.starts_with('(');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(item: &Item) -> String {
        match item {
            Item::Atom { text, .. } => text.clone(),
            Item::List { items, .. } => {
                let inner: Vec<String> = items.iter().map(words).collect();
                format!("({})", inner.join(" "))
            }
        }
    }

    #[test]
    fn lists_atoms_comments_strings() {
        let src = "; a comment\n(match :pgn in.pgn ;; another\n (position [RQ][a1-8] :player \"van Wely\"))";
        let t = read(src).unwrap();
        assert_eq!(
            words(&t),
            "(match :pgn in.pgn (position [RQ][a1-8] :player van Wely))"
        );
        let Item::List { items, span } = &t else {
            panic!()
        };
        assert_eq!(&src[span.clone()], &src[12..]);
        assert_eq!(&src[items[2].span()], "in.pgn");
        assert!(is_list_syntax(src));
        assert!(!is_list_syntax("cql() mate"));
        assert!(!is_list_syntax("// (match)\ncql() mate"));
    }

    #[test]
    fn bad_files_point_at_the_place() {
        let err = |s: &str| read(s).unwrap_err();
        assert_eq!(err("(match (position Ka1)").span, 0..1);
        assert_eq!(err("(match))").span, 7..8);
        assert_eq!(err("(match) (match)").span, 8..9);
        assert_eq!(err("match").span, 0..5);
        assert_eq!(err("(match :player \"x)").span, 15..18);
        assert!(read(&"(".repeat(100_000)).is_err());
        assert!(read("").is_err());
    }
}
