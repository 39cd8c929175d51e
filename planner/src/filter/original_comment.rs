//! `originalcomment` (and its old name `hascomment`): the comment the input file has at the
//! position, after the move that reached it (before the first move at the start), several
//! joined by a space; no match where there is none. With a string after it, it matches when
//! that string is a NAG on the move (`"$6"`, or a symbol such as `"?!"`), or else occurs in
//! the comment. Comments CQL adds are never seen: it reads the input.

use crate::ast::Expr;
use crate::eval::Cx;
use crate::eval::value::Value;
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;
use cqldb_storage::CommentPlacement;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["originalcomment", "hascomment"];

/// Reads an optional string.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::OriginalComment(p.optional_string()))
}

/// The comment, a string (with a literal: a match only).
pub fn type_of(literal: &Option<String>) -> Ty {
    match literal {
        None => Ty::String,
        Some(_) => Ty::Logical,
    }
}

/// The NAG a literal names: `$N`, or one of the usual symbols.
fn nag_of(literal: &str) -> Option<u8> {
    if let Some(n) = literal.strip_prefix('$') {
        return n.parse().ok();
    }
    Some(match literal {
        "!" => 1,
        "?" => 2,
        "!!" => 3,
        "??" => 4,
        "!?" => 5,
        "?!" => 6,
        "=" => 10,
        "+/=" => 14,
        "=/+" => 15,
        "+/-" => 16,
        "-/+" => 17,
        "+-" => 18,
        "-+" => 19,
        _ => return None,
    })
}

/// The comment at the position, or whether the literal is there.
pub fn eval(literal: &Option<String>, cx: &Cx) -> Option<Value> {
    let g = cx.game;
    if let Some(nag) = literal.as_deref().and_then(nag_of) {
        return g
            .nags
            .iter()
            .any(|&(p, n)| p == cx.cur && n == nag)
            .then_some(Value::Matched);
    }
    let mut texts = g
        .comments
        .iter()
        .filter(|(p, placement, _)| *p == cx.cur && *placement == CommentPlacement::After)
        .map(|(_, _, t)| t.trim());
    let first = texts.next()?;
    let comment = texts.fold(first.to_owned(), |mut all, t| {
        all.push(' ');
        all.push_str(t);
        all
    });
    match literal {
        None => Some(Value::Str(comment)),
        Some(needle) => comment.contains(needle.as_str()).then_some(Value::Matched),
    }
}

/// Index rule: none (comments are not indexed).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::matching;

    const ANNOTATED: &str = "[Event \"t\"]\n[Result \"*\"]\n\n{A start} 1. e4 {weakening f2} $6 e5 \
                             2. Nf3 {develops} {and attacks} Nc6 *\n";

    #[test]
    fn the_input_comments_and_nags() {
        // Positions: 0 start, 1 e4, 2 e5, 3 Nf3, 4 Nc6.
        assert_eq!(matching("originalcomment \"kenin\"", ANNOTATED), vec![1]);
        assert_eq!(matching("originalcomment \"$6\"", ANNOTATED), vec![1]);
        assert_eq!(matching("originalcomment \"?!\"", ANNOTATED), vec![1]);
        assert_eq!(matching("hascomment \"?\"", ANNOTATED), Vec::<u32>::new());
        assert_eq!(
            matching("\"kening\" in originalcomment", ANNOTATED),
            vec![1]
        );
        assert_eq!(
            matching("originalcomment ~~ \"f\\\\d\"", ANNOTATED),
            vec![1]
        );
        assert_eq!(
            matching("originalcomment == \"develops and attacks\"", ANNOTATED),
            vec![3]
        );
        assert_eq!(
            matching("originalcomment == \"A start\"", ANNOTATED),
            vec![0]
        );
        assert_eq!(matching("originalcomment", ANNOTATED), vec![0, 1, 3]);
    }
}
