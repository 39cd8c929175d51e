//! Tags: `:forany name D` in the match list binds `name` to a piece of the start position
//! (every piece there carries a mark, kept through promotion) whose type is, or later
//! becomes, one of D's (D's squares do not matter), and the match runs once per binding; two
//! tags bind different pieces. `$name` (with or without squares) designates the tagged piece,
//! `:tagmatch name D` says it stands on a D square as a D piece.
//!
//! In CQL 6 a tag is a piece variable bound at the start position: `initial piece x in [Aa]
//! {find {x & D} ...}` around the lists, each searched from there (`find`). CQL 6 piece
//! identity is kept through moves and promotion as the mark was. The documentation allows at
//! most two tags and no `:relation` beside them; both are refused.

use super::reader::Item;
use crate::error::ParseError;

/// The CQL 6 piece variable of tag `name`.
pub fn variable(name: &str) -> String {
    format!("cql3_tag_{name}")
}

/// Whether `name` can be a tag's name (letters, digits, `_`).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A `:forany` binding.
pub struct Tag {
    pub name: String,
    /// D's piece part as a CQL 6 designator over the whole board.
    pub pieces: String,
    pub span: crate::ast::Span,
}

/// `body` (the lists' `find` filters, evaluated at the start position) inside one piece loop
/// per tag.
pub fn wrap(tags: &[Tag], body: &[String]) -> String {
    let mut text = body.join(" ");
    // Distinct tags stand on distinct squares at the start.
    if let [a, b] = tags {
        text = format!(
            "#({} | {}) == 2 {text}",
            variable(&a.name),
            variable(&b.name)
        );
    }
    for t in tags.iter().rev() {
        let v = variable(&t.name);
        text = format!("piece {v} in [Aa] {{find {{{v} & {}}} {text}}}", t.pieces);
    }
    text
}

/// Checks the tags of the file rooted at `root`: every `$name` and `:tagmatch name` names a
/// `:forany` tag, at most two tags, none beside a `:relation`. Walked with an explicit stack.
pub fn check(root: &Item, tags: &[Tag]) -> Result<(), ParseError> {
    if tags.len() > 2 {
        return Err(ParseError::new(
            "at most two tags (:forany) in a match list",
            tags[2].span.clone(),
        ));
    }
    let known = |name: &str| tags.iter().any(|t| t.name == name);
    let mut stack = vec![root];
    let mut after_tagmatch = false;
    while let Some(item) = stack.pop() {
        match item {
            Item::List { items, .. } => {
                after_tagmatch = false;
                stack.extend(items.iter().rev());
            }
            Item::Atom { text, span } => {
                if after_tagmatch && !known(text) {
                    return Err(ParseError::new(
                        format!("no :forany tag is named '{text}'"),
                        span.clone(),
                    ));
                }
                after_tagmatch = text == ":tagmatch";
                if let Some(rest) = text.strip_prefix('$') {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !known(&name) {
                        return Err(ParseError::new(
                            format!("no :forany tag is named '{name}'"),
                            span.clone(),
                        ));
                    }
                }
                if text == ":relation" && !tags.is_empty() {
                    return Err(ParseError::new(
                        ":relation cannot stand in a match list with tags (:forany)",
                        span.clone(),
                    ));
                }
            }
        }
    }
    Ok(())
}
