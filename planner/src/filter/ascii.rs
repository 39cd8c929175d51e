//! `ascii X`: the code of a one-character string (`ascii "A"` is 65), or the one-character
//! string of a code from 1 to 255 (`ascii 65` is "A"); no match otherwise. Its argument is
//! one operand: `ascii 65 + "C"` is "AC".

use crate::ast::{Expr, Node};
use crate::eval::value::Value;
use crate::eval::{Cx, Evaluate};
use crate::filter::syntax::{PResult, Syntax};
use crate::plan::bounds::Bounds;
use crate::types::Ty;

/// Its keyword.
pub const KEYWORDS: &[&str] = &["ascii"];

/// Reads the operand.
pub fn parse(_: &str, p: &mut dyn Syntax) -> PResult<Expr> {
    Ok(Expr::Ascii(Box::new(p.operand()?)))
}

/// A number for a string argument, a string for a number.
pub fn type_of(argument: Ty) -> Ty {
    match argument {
        Ty::String => Ty::Number,
        Ty::Number => Ty::String,
        _ => Ty::Unknown,
    }
}

/// The code, or the character.
pub fn eval(x: &Node, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Value> {
    match ev.value(x, cx)? {
        Value::Str(s) => match s.as_bytes() {
            [b] => Some(Value::Num(i64::from(*b))),
            _ => None,
        },
        Value::Num(n) if (1..=255).contains(&n) => {
            Some(Value::Str(char::from(n as u8).to_string()))
        }
        _ => None,
    }
}

/// Index rule: none.
pub fn bounds() -> Bounds {
    Bounds::unknown()
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, matching};

    #[test]
    fn codes_and_characters() {
        let always = |q: &str| matching(q, SCHOLAR).len() == 9;
        assert!(always("ascii \"A\" == 65"));
        assert!(always("ascii \"a\" == 97"));
        assert!(always("ascii 65 == \"A\""));
        assert!(always("ascii 65 + \"C\" == \"AC\""));
        assert!(!always("ascii \"zug\""));
        assert!(!always("ascii 0 == \"\""));
        assert!(!always("ascii 256 == \"\""));
    }
}
