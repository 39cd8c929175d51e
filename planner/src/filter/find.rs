//! `find [quiet] [<--] [all | N [M]] F`: the first position from the current one onwards in
//! the game (its subtree, in order) where `F` matches, or with `<--` the nearest going back
//! towards the game's first position. With `all` or a count it is instead the number of such
//! positions, matching when it lies in the range (`N` alone: at least `N`; `all`: at least 1). It notes `Found`
//! at the position found, or `Found k of n` at each one counted; `quiet` drops those and the
//! comments `F` makes.

use crate::ast::{Expr, Find};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate, matches};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["find"];

/// Reads its options in any order, then the filter it looks for.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let mut quiet = false;
    let mut backward = false;
    let mut count = None;
    loop {
        if p.eat_word("quiet") {
            quiet = true;
        } else if p.eat_sym("<--") {
            backward = true;
        } else if p.eat_word("all") {
            // The count, matching only when it is not 0 (CQL's `find all`); a range may
            // include 0.
            count = Some((1, i64::MAX));
        } else if let Some(lo) = p.number() {
            count = Some((lo, p.number().unwrap_or(i64::MAX)));
        } else {
            break;
        }
    }
    let body = p.body()?;
    Ok(Expr::Find(Box::new(Find {
        backward,
        quiet,
        count,
        body,
    })))
}

/// A number with a count, a position without.
pub fn ty(f: &Find) -> Ty {
    if f.count.is_some() {
        Ty::Number
    } else {
        Ty::Position
    }
}

/// The position found, or the count.
pub fn eval(f: &Find, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let g = cx.game;
    let saved = cx.cur;
    let mut found = None;
    let mut count = 0i64;
    let mut hits: Vec<u32> = Vec::new();
    // Whether the search is over once `id` is tried.
    let mut visit = |ev: &mut _, cx: &mut Cx, id: u32| -> bool {
        cx.cur = id;
        let mark = cx.comments.len();
        let v = Evaluate::value(ev, &f.body, cx);
        if f.quiet {
            cx.comments.truncate(mark);
        }
        if matches(&v) {
            count += 1;
            found.get_or_insert(id);
            hits.push(id);
            return f.count.is_none();
        }
        false
    };
    if !cx.charge(0, "find") {
        return None;
    }
    let mut visited = 0u64;
    if f.backward {
        let mut id = Some(saved);
        while let Some(p) = id {
            visited += 1;
            if visit(ev, cx, p) {
                break;
            }
            id = g.parent(p);
        }
    } else {
        for id in saved..g.subtree_end(saved) {
            visited += 1;
            if g.visible(id) && visit(ev, cx, id) {
                break;
            }
        }
    }
    cx.cur = saved;
    if !cx.charge(visited, "find") {
        return None;
    }
    let value = match f.count {
        Some((lo, hi)) => (count >= lo && count <= hi).then_some(Value::Num(count)),
        None => found.map(Value::Pos),
    };
    // Notes where it found something: `Found`, or with a count `Found k of n` in search
    // order.
    if value.is_some() && !f.quiet && !cx.quiet {
        match f.count {
            Some(_) => {
                for (k, &h) in hits.iter().enumerate() {
                    cx.comments.push((h, format!("Found {} of {count}", k + 1)));
                }
            }
            None => {
                if let Some(&h) = hits.first() {
                    cx.comments.push((h, "Found".to_owned()));
                }
            }
        }
    }
    value
}

/// Index rule: none (the filter looks at other positions of the game).
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn forward_backward_and_counts() {
        // From each position, the mate ahead: only on the main line.
        assert_eq!(
            matching("find mate", SCHOLAR),
            (0..=7).collect::<Vec<u32>>()
        );
        assert_eq!(matching("(find mate) == position 7", SCHOLAR).len(), 8);
        assert_eq!(matching("find <-- initial", SCHOLAR).len(), 9);
        assert_eq!(matching("find <-- check", SCHOLAR), vec![7]);
        // Positions with two or more checks ahead: none; with at least one: the main line.
        assert_eq!(matching("find 2 check", SCHOLAR), Vec::<u32>::new());
        assert_eq!(
            matching("find 1 check", SCHOLAR),
            (0..=7).collect::<Vec<u32>>()
        );
        assert_eq!(
            matching("(find all check) == 1", SCHOLAR),
            (0..=7).collect::<Vec<u32>>()
        );
        // `find all` matches only where the count is not 0; a range may take 0.
        assert_eq!(
            matching("find all check", SCHOLAR),
            (0..=7).collect::<Vec<u32>>()
        );
        assert_eq!(matching("not find all check", SCHOLAR), vec![8]);
        assert_eq!(matching("find 0 5 check == 0", SCHOLAR), vec![8]);
        assert_eq!(bounds_of("find mate"), bounds());
    }
}
