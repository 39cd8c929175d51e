//! `indexof (x y)`: where the string `x` first occurs in the string `y`, counted from 0; no
//! match when it does not occur (plain text, no regular expression).

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["indexof"];

/// Reads `(x y)`.
pub fn parse(word: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    let (x, y) = p.pair(word)?;
    Ok(Expr::IndexOf(x, y))
}

/// A number.
pub const TYPE: Ty = Ty::Number;

/// The byte index of the first occurrence.
pub fn eval(x: &Node, y: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    let (Value::Str(needle), Value::Str(hay)) = (ev.value(x, cx)?, ev.value(y, cx)?) else {
        return None;
    };
    hay.find(&needle).map(|i| Value::Num(i as i64))
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, matching};

    #[test]
    fn first_occurrence() {
        let always = |q: &str| matching(q, SCHOLAR).len() == 9;
        assert!(always("indexof (\"e\" \"hello\") == 1"));
        assert!(always("x = \"pin\" y = \"mate\" indexof (y x + y) == 3"));
        assert!(!always("x = \"pin\" y = \"mate\" indexof (y x)"));
    }
}
