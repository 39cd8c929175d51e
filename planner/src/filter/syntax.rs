//! What a filter's parser may read after its keyword: the parser seen through a narrow
//! interface, so a filter's file depends on this and not on the parser (which dispatches to
//! the filters).

use crate::ast::{Direction, Node, PieceSet, Span};
use crate::error::ParseError;

/// A parse step's result.
pub type PResult<T> = Result<T, ParseError>;

/// The parser as a filter's syntax uses it.
pub trait Syntax {
    /// The set argument after `word` (`power`, `light`): a prefix-level expression.
    fn set_arg(&mut self, word: &str) -> PResult<Node>;
    /// One operand: a prefix-level expression (what `position` takes).
    fn operand(&mut self) -> PResult<Node>;
    /// Whether a `(` follows with no space before it (`child(1)` rather than `child (1)`).
    fn paren_attached(&self) -> bool;
    /// A number literal, if one is next.
    fn number(&mut self) -> Option<i64>;
    /// A direction word (`up`, `diagonal`, ...), if one is next.
    fn direction(&mut self) -> Option<Direction>;
    /// Any number of arguments in parentheses: `(a b c)`.
    fn any_args(&mut self) -> PResult<Vec<Node>>;
    /// Where the next token starts (for spans of what a filter adds itself).
    fn here(&self) -> usize;
    /// Exactly `n` arguments in parentheses after `word`: `(a b)` or `(a, b)`.
    fn paren_args(&mut self, n: usize, word: &str) -> PResult<Vec<Node>>;
    /// Exactly two arguments in parentheses after `word`: `(a b)` or `(a, b)`.
    fn pair(&mut self, word: &str) -> PResult<(Box<Node>, Box<Node>)> {
        let mut args = self.paren_args(2, word)?.into_iter();
        match (args.next(), args.next()) {
            (Some(a), Some(b)) => Ok((Box::new(a), Box::new(b))),
            _ => unreachable!("paren_args(2) gives two arguments"),
        }
    }
    /// A string literal next, with its span; otherwise an error saying `expected`.
    fn string(&mut self, expected: &str) -> PResult<(String, Span)>;
    /// Reads the symbol `sym` (`<--`) if it is next.
    fn eat_sym(&mut self, sym: &str) -> bool;
    /// A filter as the body of `find`: everything up to a comparison, so that
    /// `find all check >= 40` compares the count.
    fn body(&mut self) -> PResult<Node>;
    /// A value up to a comparison, arithmetic and concatenation included (`makesquare "a" +
    /// "3"`).
    fn value_operand(&mut self) -> PResult<Node>;
    /// One whole filter, comparisons and `and`/`or` included (what `assert` checks).
    fn whole_filter(&mut self) -> PResult<Node>;
    /// Reads `word` if it is next.
    fn eat_word(&mut self, word: &str) -> bool;
    /// A string literal, if one is next.
    fn optional_string(&mut self) -> Option<String>;
    /// An error at the next token saying what was `expected` there.
    fn error(&self, expected: &str) -> ParseError;
    /// The span of the token read last (at a filter's start: its keyword).
    fn previous_span(&self) -> Span;
    /// A piece designator (`N`, `[Qq]`), if one is next.
    fn designator(&mut self) -> Option<PieceSet>;
    /// A game result next (`1-0`, `0-1`, `1/2-1/2`, `*`); otherwise an error saying `expected`.
    fn result(&mut self, expected: &str) -> PResult<String>;
    /// Whether the symbol `sym` is the `k`-th token from here (0: the next).
    fn sym_at(&self, k: usize, sym: &str) -> bool;
    /// The number that is the `k`-th token from here, if it is one.
    fn number_at(&self, k: usize) -> Option<i64>;
    /// Whether a filter can start at the next token.
    fn starts_filter(&self) -> bool;
    /// Whether the next token is `(` and the parentheses it opens hold a move (`--`, `[x]`)
    /// or a `line` arrow: then they group constituents of a `path` or `line`.
    fn group_of_moves(&self) -> bool;
    /// One `line` constituent: a filter with its comparisons and `not`, where `+` and `*`
    /// followed by nothing they could add or multiply are the line's repetition marks.
    fn line_constituent(&mut self) -> PResult<Node>;
    /// Whether a dash (`--`, `[x]`) is the next token.
    fn at_dash(&self) -> bool;
    /// Whether a square set written against a dash comes next (`N[x]f7`, `P--=Q`).
    fn designator_then_dash(&self) -> bool;
}
