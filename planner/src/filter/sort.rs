//! `sort [quiet] [min|max] ["title"] target`: games are written in the order of their best
//! value of `target` (largest first, with `min` smallest first; strings by their bytes; a set
//! by its number of squares), several sorts one after the other in the order written, ties in
//! input order, games where the sort never had a value last. The best value is kept over every
//! evaluation of the sort in the game, at positions that do not match too; sorts with the same
//! title are one key. The game comment gets `title: value` (not with `quiet`), and the comments
//! made inside the target are kept only for the evaluation that gave the best value, after the
//! match string.
//!
//! Its value is the target's. Parsed with the language's core (`filters.rs`), which numbers
//! the keys by title.

use crate::ast::{Node, Sort, SortKey};
use crate::eval::context::SortValue;
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::plan::bounds::Bounds;

/// Evaluates the target, keeps it if it is the key's best so far, and gives its value.
pub fn eval(s: &Sort, keys: &[SortKey], ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let mark = cx.comments.len();
    let v = ev.value(&s.target, cx);
    let made: Vec<(u32, String)> = cx.comments.drain(mark..).collect();
    let value = v.clone()?;
    let key_value = match &value {
        Value::Num(n) => SortValue::Num(*n),
        Value::Str(t) => SortValue::Str(t.clone()),
        Value::Set(x) => SortValue::Num(i64::from(x.count_ones())),
        Value::Matched | Value::Pos(_) | Value::Piece(_) => return v,
    };
    let min = keys.get(s.key).is_some_and(|k| k.min);
    let best = &mut cx.sorts;
    if best.len() <= s.key {
        best.resize(s.key + 1, None);
    }
    let better = match &best[s.key] {
        None => true,
        Some((old, _)) => {
            if min {
                key_value < *old
            } else {
                key_value > *old
            }
        }
    };
    if better {
        best[s.key] = Some((key_value, made));
    }
    v
}

/// Index rule: the target's (a sort matches where its target does).
pub fn bounds(target: &Node, bound: &dyn Fn(&Node) -> Bounds) -> Bounds {
    bound(target)
}

#[cfg(test)]
mod tests {
    use crate::eval::Engine;
    use crate::filter::testing::{SCHOLAR, game};

    #[test]
    fn a_sort_never_reached_says_none() {
        let notes = |q: &str| {
            let q = crate::parse(&format!("cql() {q}")).unwrap();
            Engine::new(q, true).run_game(&game(SCHOLAR)).sort_notes
        };
        // The game matches (at the mate) but the sort is only reached past ply 100.
        assert_eq!(
            notes("mate if ply > 100 then sort \"Long\" ply"),
            vec!["Long: none"]
        );
        assert_eq!(notes("mate sort \"Ply\" ply"), vec!["Ply: 7"]);
        assert!(notes("mate if ply > 100 then sort quiet \"Long\" ply").is_empty());
    }
}
