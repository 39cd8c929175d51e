//! `rank S`, `file S`: the rank (file) number, 1 to 8, of the one square of `S`; no match
//! unless `S` is exactly one square.

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keywords.
pub const KEYWORDS: &[&str] = &["rank", "file"];

/// Reads `rank S` or `file S`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::RankFile(word == "rank", Box::new(p.set_arg(word)?)))
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The rank (`rank`) or file of `set`'s single square.
pub fn eval(rank: bool, set: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let x = ev.set(set, cx)?;
    if x.count_ones() != 1 {
        return None;
    }
    let sq = i64::from(x.trailing_zeros());
    Some(Value::Num(if rank { sq / 8 + 1 } else { sq % 8 + 1 }))
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testing::{SCHOLAR, bounds as bounds_of, matching};

    #[test]
    fn one_square_only() {
        assert_eq!(matching("rank Q == 5", SCHOLAR), vec![3, 4, 5, 6, 8]);
        assert_eq!(matching("file K == 5", SCHOLAR).len(), 9);
        // Two rooks: no single square.
        assert_eq!(matching("rank R", SCHOLAR), Vec::<u32>::new());
        assert_eq!(bounds_of("file Q"), bounds());
    }
}
