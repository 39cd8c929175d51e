//! Static types of CQL filters (set, number, position, string, none) and the checks that use
//! them.

use crate::ast::{BinOp, CmpOp, PieceSet, Span};
use crate::error::ParseError;

/// The type of a filter's value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A set of squares.
    Set,
    /// An integer.
    Number,
    /// A position.
    Position,
    /// A string.
    String,
    /// Matches or not, no value.
    Logical,
    /// Not known until run time (variables, function results).
    Unknown,
}

impl Ty {
    /// The type in words, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Set => "a set of squares",
            Ty::Number => "a number",
            Ty::Position => "a position",
            Ty::String => "a string",
            Ty::Logical => "a filter without a value",
            Ty::Unknown => "a value",
        }
    }
}

/// `<`, `>` between two sets is an error; `==` between a set and a string too.
pub fn check_compare(op: CmpOp, a: Ty, b: Ty, span: Span) -> Result<(), ParseError> {
    let ordered = matches!(op, CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge);
    if ordered && a == Ty::Set && b == Ty::Set {
        return Err(ParseError::new(
            "'<' and '>' compare numbers, strings or positions, not two square sets (count them with #)",
            span,
        ));
    }
    let bad = |t: Ty| t == Ty::Logical;
    if bad(a) || bad(b) {
        return Err(ParseError::new(
            format!("cannot compare {} with {}", a.name(), b.name()),
            span,
        ));
    }
    let kinds = [a, b];
    if kinds.contains(&Ty::String)
        && kinds
            .iter()
            .any(|t| matches!(t, Ty::Number | Ty::Set | Ty::Position))
    {
        return Err(ParseError::new(
            format!("cannot compare {} with {}", a.name(), b.name()),
            span,
        ));
    }
    Ok(())
}

/// The type of `a op b` for operands of types `ta` and `tb`, or why they do not fit.
pub fn arith_type(op: BinOp, ta: Ty, tb: Ty, span: Span) -> Result<Ty, ParseError> {
    let num = |t: Ty| matches!(t, Ty::Number | Ty::Unknown);
    if op == BinOp::Add && (ta == Ty::String || tb == Ty::String) {
        if matches!(ta, Ty::String | Ty::Unknown) && matches!(tb, Ty::String | Ty::Unknown) {
            return Ok(Ty::String);
        }
        return Err(ParseError::new(
            format!(
                "'+' joins two strings or adds two numbers, not {} and {}",
                ta.name(),
                tb.name()
            ),
            span,
        ));
    }
    if num(ta) && num(tb) {
        return Ok(Ty::Number);
    }
    let hint = if ta == Ty::Set || tb == Ty::Set {
        " (count a set with #)"
    } else {
        ""
    };
    Err(ParseError::new(
        format!(
            "arithmetic needs numbers, not {} and {}{hint}",
            ta.name(),
            tb.name()
        ),
        span,
    ))
}

/// `&` and `|` need sets.
pub fn check_set_op(op: &str, a: Ty, b: Ty, span: Span) -> Result<(), ParseError> {
    // Two positions meet in the squares where they hold the same thing (`src & tgt`).
    if op == "&" && a == Ty::Position && b == Ty::Position {
        return Ok(());
    }
    for t in [a, b] {
        if !matches!(t, Ty::Set | Ty::Unknown) {
            return Err(ParseError::new(
                format!("'{op}' needs sets of squares, not {}", t.name()),
                span,
            ));
        }
    }
    Ok(())
}

/// A designator written back as text (for messages).
pub fn designator_text(d: &PieceSet) -> String {
    let mut s = String::new();
    if d.pieces == PieceSet::WHITE {
        s.push('A');
    } else if d.pieces == PieceSet::BLACK {
        s.push('a');
    } else if d.pieces != PieceSet::ALL_CONTENTS {
        for (i, c) in "PNBRQKpnbrqk_".chars().enumerate() {
            if d.pieces >> i & 1 == 1 {
                s.push(c);
            }
        }
    }
    if d.squares != u64::MAX {
        for sq in 0..64 {
            if d.squares >> sq & 1 == 1 {
                s.push((b'a' + (sq % 8) as u8) as char);
                s.push((b'1' + (sq / 8) as u8) as char);
            }
        }
    }
    s
}
