//! CQL tokens and the lexer that produces them.
//!
//! Hand-written rather than generated: CQL's piece designators (`Ra-h7`, `[RQ]a-h1-8`,
//! `N[a1-8,h1-8]`, `♔g1`) decide between "designator", "square" and "variable name" only after
//! looking at a whole word, and the dash (`e2--e4`, `p[x]a-h4(enpassant)`) depends on whether
//! its neighbours touch it. Both need a lookahead no lexer generator gives for free.

use crate::ast::{PieceSet, Span};
use crate::error::ParseError;

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A word that is not a piece designator: keyword, variable or function name.
    Word(String),
    /// An integer literal.
    Number(i64),
    /// A string literal (quotes removed, escapes resolved).
    Str(String),
    /// A piece designator or square set (`K`, `e4`, `[Aa]a-h1-8`, `.`, `_`).
    Designator(PieceSet),
    /// `--` (or `――`), or with `capture` `[x]` (or `×`).
    Dash {
        /// `[x]`.
        capture: bool,
    },
    /// A game result literal after `result`: `1-0`, `0-1`, `1/2-1/2`, `*`.
    Result(String),
    /// `\1` .. `\9`: a regex capture group.
    Group(u32),
    /// Punctuation and operators, in their ASCII spelling.
    Sym(&'static str),
    /// End of input.
    Eof,
}

/// A token with its byte span and whether whitespace or a comment came before it.
#[derive(Clone, Debug)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Where it is.
    pub span: Span,
    /// No whitespace between this token and the previous one.
    pub attached: bool,
}

/// Multi-character symbols, longest first so that `<=` wins over `<`.
const SYMBOLS: [&str; 34] = [
    "[forall]",
    "[element]",
    "[<=]",
    "[>=]",
    "[<]",
    "[>]",
    "<--",
    "-->",
    "=?",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "==",
    "!=",
    "<=",
    ">=",
    "~~",
    "->",
    "<-",
    "(",
    ")",
    "{",
    "}",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "%",
];
const SINGLE: [&str; 9] = ["&", "|", "~", "#", ":", "=", ",", "]", "?"];

/// Unicode spellings and their ASCII equivalents (designators are handled separately).
const UNICODE_SYMBOLS: [(&str, &str); 13] = [
    ("≤", "<="),
    ("≥", ">="),
    ("≠", "!="),
    ("∩", "&"),
    ("∪", "|"),
    ("→", "->"),
    ("←", "<-"),
    ("∀", "[forall]"),
    ("∊", "[element]"),
    ("≺", "[<]"),
    ("≼", "[<=]"),
    ("≻", "[>]"),
    ("≽", "[>=]"),
];

/// Unicode words that stand for keywords.
const UNICODE_WORDS: [(&str, &str); 5] = [
    ("⬓", "flipcolor"),
    ("✵", "flip"),
    ("∙", "currentposition"),
    ("⊢", "path"),
    ("◎", "focus"),
];

/// The most tokens a query may have. Parsing costs memory in proportion to the tokens (about
/// 250 bytes each, tokens and tree), so a query of megabytes of filters fails here, cleanly,
/// instead of exhausting memory; real queries have a few thousand.
pub const MAX_TOKENS: usize = 1_000_000;

/// Splits CQL source into tokens; the last one is [`Tok::Eof`].
pub fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut lx = Lexer {
        src,
        pos: 0,
        out: Vec::new(),
        attached: false,
        over_budget: None,
    };
    lx.run()?;
    if let Some(span) = lx.over_budget {
        return Err(ParseError::new(
            format!("the query is too long: more than {MAX_TOKENS} tokens"),
            span,
        ));
    }
    Ok(lx.out)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    out: Vec<Token>,
    attached: bool,
    /// The span of the first token past [`MAX_TOKENS`].
    over_budget: Option<Span>,
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn push(&mut self, tok: Tok, start: usize) {
        if self.out.len() == MAX_TOKENS {
            // Remembered and reported by `run` at this token's span.
            self.over_budget.get_or_insert(start..self.pos);
            return;
        }
        self.out.push(Token {
            tok,
            span: start..self.pos,
            attached: self.attached,
        });
        self.attached = true;
    }

    fn last_is_word(&self, w: &str) -> bool {
        matches!(self.out.last(), Some(Token { tok: Tok::Word(x), .. }) if x == w)
    }

    fn run(&mut self) -> Result<(), ParseError> {
        self.attached = true;
        loop {
            if self.over_budget.is_some() {
                return Ok(());
            }
            self.skip_space()?;
            let start = self.pos;
            let Some(c) = self.rest().chars().next() else {
                self.push(Tok::Eof, start);
                return Ok(());
            };
            if self.last_is_word("result")
                && let Some(lit) = ["1/2-1/2", "1-0", "0-1", "*"]
                    .into_iter()
                    .find(|l| self.rest().starts_with(l))
            {
                self.pos += lit.len();
                self.push(Tok::Result(lit.to_owned()), start);
                continue;
            }
            if self.rest().starts_with("///") {
                // CQL 6.2's shorthand for `comment`: `///"text"`.
                self.pos += 3;
                self.push(Tok::Word("comment".to_owned()), start);
            } else if c == '"' {
                let s = self.string()?;
                self.push(Tok::Str(s), start);
            } else if c.is_ascii_digit() {
                let len = self.rest().bytes().take_while(u8::is_ascii_digit).count();
                let text = &self.rest()[..len];
                let n = text
                    .parse::<i64>()
                    .map_err(|_| ParseError::new("number too large", start..start + len))?;
                self.pos += len;
                self.push(Tok::Number(n), start);
            } else if c == '\\' {
                let d = self.rest()[1..].chars().next().and_then(|d| d.to_digit(10));
                let Some(d) = d else {
                    return Err(ParseError::new(
                        "expected a digit after '\\'",
                        start..start + 1,
                    ));
                };
                self.pos += 2;
                self.push(Tok::Group(d), start);
            } else if self.rest().starts_with("[x]") || c == '×' {
                self.pos += if c == '×' { c.len_utf8() } else { 3 };
                self.push(Tok::Dash { capture: true }, start);
            } else if self.rest().starts_with("--") && !self.rest().starts_with("-->") {
                self.pos += 2;
                self.push(Tok::Dash { capture: false }, start);
            } else if self.rest().starts_with("――") {
                self.pos += "――".len();
                self.push(Tok::Dash { capture: false }, start);
            } else if let Some(d) = designator(self.rest()) {
                self.pos += d.1;
                self.push(Tok::Designator(d.0), start);
            } else if c == '◭' {
                // `◭x∊S`: a piece loop's mark before its variable (a designator otherwise).
                self.pos += c.len_utf8();
                self.push(Tok::Sym("◭"), start);
            } else if c.is_alphabetic() || c == '_' {
                let len = self
                    .rest()
                    .char_indices()
                    .find(|&(_, ch)| !(ch.is_alphanumeric() || ch == '_'))
                    .map_or(self.rest().len(), |(i, _)| i);
                let w = self.rest()[..len].to_owned();
                self.pos += len;
                // `o-o` and `o-o-o` are words.
                let w = if w == "o" && self.rest().starts_with("-o") {
                    self.pos += 2;
                    if self.rest().starts_with("-o") {
                        self.pos += 2;
                        "o-o-o".to_owned()
                    } else {
                        "o-o".to_owned()
                    }
                } else {
                    w
                };
                self.push(Tok::Word(w), start);
            } else if let Some(&(u, w)) = UNICODE_WORDS
                .iter()
                .find(|(u, _)| self.rest().starts_with(u))
            {
                self.pos += u.len();
                self.push(Tok::Word(w.to_owned()), start);
            } else if let Some(&(u, a)) = UNICODE_SYMBOLS
                .iter()
                .find(|(u, _)| self.rest().starts_with(u))
            {
                self.pos += u.len();
                self.push(Tok::Sym(a), start);
            } else if let Some(s) = SYMBOLS.iter().find(|s| self.rest().starts_with(**s)) {
                self.pos += s.len();
                self.push(Tok::Sym(s), start);
            } else if let Some(s) = SINGLE.iter().find(|s| self.rest().starts_with(**s)) {
                self.pos += s.len();
                self.push(Tok::Sym(s), start);
            } else if c == '[' {
                self.pos += 1;
                self.push(Tok::Sym("["), start);
            } else {
                return Err(ParseError::new(
                    format!("unexpected character '{c}'"),
                    start..start + c.len_utf8(),
                ));
            }
        }
    }

    fn skip_space(&mut self) -> Result<(), ParseError> {
        loop {
            let r = self.rest();
            if let Some(c) = r.chars().next().filter(|c| c.is_whitespace()) {
                self.pos += c.len_utf8();
                self.attached = false;
            } else if r.starts_with("//") && !r.starts_with("///") {
                self.pos += r.find('\n').unwrap_or(r.len());
                self.attached = false;
            } else if let Some(body) = r.strip_prefix("/*") {
                let Some(end) = body.find("*/") else {
                    return Err(ParseError::new(
                        "comment is never closed",
                        self.pos..self.pos + 2,
                    ));
                };
                self.pos += end + 4;
                self.attached = false;
            } else {
                return Ok(());
            }
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        self.pos += 1;
        let mut s = String::new();
        loop {
            let Some(c) = self.rest().chars().next() else {
                return Err(ParseError::new("string is never closed", start..start + 1));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => return Ok(s),
                '\\' => {
                    let Some(e) = self.rest().chars().next() else {
                        continue;
                    };
                    self.pos += e.len_utf8();
                    match e {
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        '"' | '\\' => s.push(e),
                        other => {
                            s.push('\\');
                            s.push(other);
                        }
                    }
                }
                c => s.push(c),
            }
        }
    }
}

/// Piece letters in designators; index = piece bit (white P N B R Q K, black p n b r q k).
const PIECE_CHARS: &str = "PNBRQKpnbrqk";
const FIGURINES: [char; 12] = ['♙', '♘', '♗', '♖', '♕', '♔', '♟', '♞', '♝', '♜', '♛', '♚'];

fn piece_char(c: char) -> Option<u16> {
    if let Some(i) = PIECE_CHARS.find(c) {
        return Some(1 << i);
    }
    if let Some(i) = FIGURINES.iter().position(|&f| f == c) {
        return Some(1 << i);
    }
    match c {
        'A' | '△' => Some(PieceSet::WHITE),
        'a' | '▲' => Some(PieceSet::BLACK),
        '_' | '□' => Some(PieceSet::EMPTY),
        '◭' => Some(PieceSet::WHITE | PieceSet::BLACK),
        _ => None,
    }
}

/// Reads a designator at the start of `s`: returns it and its byte length, or `None` when the
/// word there is not one (then it is a keyword or a name).
fn designator(s: &str) -> Option<(PieceSet, usize)> {
    if s.starts_with('.') {
        return Some((
            PieceSet {
                pieces: PieceSet::ALL_CONTENTS,
                squares: u64::MAX,
            },
            1,
        ));
    }
    if s.starts_with('▦') {
        return Some((
            PieceSet {
                pieces: PieceSet::ALL_CONTENTS,
                squares: u64::MAX,
            },
            '▦'.len_utf8(),
        ));
    }
    // A bare square set first (`e4`, `a-h1-8`, `[d4,e4]`).
    if let Some((squares, len)) = square_spec(s)
        && boundary(&s[len..])
    {
        return Some((
            PieceSet {
                pieces: PieceSet::ALL_CONTENTS,
                squares,
            },
            len,
        ));
    }
    let (pieces, plen) = piece_spec(s)?;
    let rest = &s[plen..];
    if let Some((squares, slen)) = square_spec(rest)
        && boundary(&rest[slen..])
    {
        return Some((PieceSet { pieces, squares }, plen + slen));
    }
    if boundary(rest) {
        return Some((
            PieceSet {
                pieces,
                squares: u64::MAX,
            },
            plen,
        ));
    }
    None
}

fn boundary(rest: &str) -> bool {
    !rest
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

fn piece_spec(s: &str) -> Option<(u16, usize)> {
    let c = s.chars().next()?;
    if c == '[' {
        let close = s.find(']')?;
        let inner = &s[1..close];
        if inner.is_empty() {
            return None;
        }
        let mut mask = 0;
        for c in inner.chars() {
            mask |= piece_char(c)?;
        }
        return Some((mask, close + 1));
    }
    if c.is_ascii() {
        return Some((piece_char(c)?, 1));
    }
    // Figurines written side by side are one set of piece types: `♔♚` is `[Kk]`.
    let mut mask = 0;
    let mut len = 0;
    for ch in s.chars() {
        match piece_char(ch) {
            Some(m) if !ch.is_ascii() => {
                mask |= m;
                len += ch.len_utf8();
            }
            _ => break,
        }
    }
    (len > 0).then_some((mask, len))
}

/// A square spec: `e4`, `a-h1-8`, `c-f3`, or a bracketed comma list of those.
fn square_spec(s: &str) -> Option<(u64, usize)> {
    if let Some(inner) = s.strip_prefix('[') {
        let close = inner.find(']')?;
        let mut set = 0;
        for part in inner[..close].split(',') {
            let part = part.trim();
            let (sq, len) = simple_squares(part)?;
            if len != part.len() {
                return None;
            }
            set |= sq;
        }
        return Some((set, close + 2));
    }
    simple_squares(s)
}

fn simple_squares(s: &str) -> Option<(u64, usize)> {
    let b = s.as_bytes();
    let file = |c: u8| (b'a'..=b'h').contains(&c).then(|| u32::from(c - b'a'));
    let rank = |c: u8| (b'1'..=b'8').contains(&c).then(|| u32::from(c - b'1'));
    let mut i = 0;
    let f0 = file(*b.first()?)?;
    i += 1;
    let mut f1 = f0;
    if b.get(i) == Some(&b'-')
        && let Some(f) = b.get(i + 1).copied().and_then(file)
    {
        f1 = f;
        i += 2;
    }
    let r0 = rank(*b.get(i)?)?;
    i += 1;
    let mut r1 = r0;
    if b.get(i) == Some(&b'-')
        && let Some(r) = b.get(i + 1).copied().and_then(rank)
    {
        r1 = r;
        i += 2;
    }
    let mut set = 0u64;
    for f in f0.min(f1)..=f0.max(f1) {
        for r in r0.min(r1)..=r0.max(r1) {
            set |= 1 << (r * 8 + f);
        }
    }
    Some((set, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn designators_and_names() {
        let t = toks("Ra-h7 Kn r1 a e4 [Aa] N[a1-8,h1-8] ♔g1 Pc");
        assert!(matches!(&t[0], Tok::Designator(d) if d.squares == 0xff << 48));
        assert_eq!(t[1], Tok::Word("Kn".into()));
        assert_eq!(t[2], Tok::Word("r1".into()));
        assert!(matches!(&t[3], Tok::Designator(d) if d.pieces == PieceSet::BLACK));
        assert!(matches!(&t[4], Tok::Designator(d) if d.squares == 1 << 28));
        assert!(matches!(&t[6], Tok::Designator(d) if d.squares.count_ones() == 16));
        assert!(matches!(&t[7], Tok::Designator(d) if d.squares == 1 << 6 && d.pieces == 1 << 5));
        assert_eq!(t[8], Tok::Word("Pc".into()));
    }

    #[test]
    fn dashes() {
        let t = toks("e2--e4 p[x]a-h4(enpassant) --=Q o-o-o result 1/2-1/2");
        assert_eq!(t[1], Tok::Dash { capture: false });
        assert_eq!(t[4], Tok::Dash { capture: true });
        assert_eq!(t[12], Tok::Word("o-o-o".into()));
        assert_eq!(t[14], Tok::Result("1/2-1/2".into()));
    }
}
