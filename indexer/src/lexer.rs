//! Tokens of one game's text, each with its byte offset.
//!
//! Why not pgn-reader's `Reader` here: it reports no positions, skips unknown tokens silently and
//! drops a game with an unterminated comment, while the index must say *where* a game is broken
//! and keep everything it can. SAN itself is still parsed by shakmaty.

/// One token of PGN text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// `[Name "value"]` (value unescaped, raw bytes).
    Tag {
        /// Tag name.
        name: &'a [u8],
        /// Tag value, `\"` and `\\` unescaped.
        value: Vec<u8>,
    },
    /// A line in the tag section that is not a well-formed tag pair.
    BadTag,
    /// A move in SAN (or `--` / `Z0`), suffixes `+`/`#` included, annotation suffix excluded.
    San(&'a [u8]),
    /// `$n`, or `!`, `?`, `!!`, `??`, `!?`, `?!`.
    Nag(u8),
    /// `{...}` or `;...`: the body's byte range; `terminated` is false if `}` never came.
    Comment {
        /// Offset of the body.
        start: usize,
        /// Length of the body.
        len: usize,
        /// False for an unterminated `{`.
        terminated: bool,
    },
    /// `(`.
    Open,
    /// `)`.
    Close,
    /// `1-0`, `0-1`, `1/2-1/2`, `*`.
    Result(&'a [u8]),
    /// Anything else.
    Unknown(&'a [u8]),
}

/// Iterator over the tokens of a game (move numbers, dots and whitespace are skipped).
pub struct Lexer<'a> {
    text: &'a [u8],
    at: usize,
    in_tags: bool,
    line_start: bool,
}

impl<'a> Lexer<'a> {
    /// Lexes `text` (a BOM at the start is skipped).
    pub fn new(text: &'a [u8]) -> Self {
        let at = if text.starts_with(b"\xef\xbb\xbf") {
            3
        } else {
            0
        };
        Self {
            text,
            at,
            in_tags: true,
            line_start: true,
        }
    }
}

fn is_delim(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'{' | b'}' | b';' | b',' | b'$')
}

fn nag_of(s: &[u8]) -> Option<u8> {
    Some(match s {
        b"!" => 1,
        b"?" => 2,
        b"!!" => 3,
        b"??" => 4,
        b"!?" => 5,
        b"?!" => 6,
        b"=" => 10,
        b"+/=" | b"+=" | b"\xe2\xa9\xb2" => 14,
        b"=/+" | b"=+" | b"\xe2\xa9\xb1" => 15,
        b"+/-" | b"\xc2\xb1" => 16,
        b"-/+" | b"\xe2\x88\x93" => 17,
        b"+-" => 18,
        b"-+" => 19,
        _ => return None,
    })
}

impl<'a> Iterator for Lexer<'a> {
    type Item = (Token<'a>, usize);

    fn next(&mut self) -> Option<(Token<'a>, usize)> {
        let t = self.text;
        loop {
            let &b = t.get(self.at)?;
            let start = self.at;
            let at_line_start = self.line_start;
            self.line_start = false;
            match b {
                b'\n' | b'\r' => {
                    self.at += 1;
                    self.line_start = true;
                }
                b' ' | b'\t' | b'.' | 0x0b | 0x0c => self.at += 1,
                b'%' if at_line_start => {
                    self.at = find(t, start, |c| c == b'\n' || c == b'\r');
                }
                b'[' if self.in_tags => return Some((self.tag(), start)),
                b'{' => {
                    let body = start + 1;
                    return Some(match t[body..].iter().position(|&c| c == b'}') {
                        Some(n) => {
                            self.at = body + n + 1;
                            (
                                Token::Comment {
                                    start: body,
                                    len: n,
                                    terminated: true,
                                },
                                start,
                            )
                        }
                        None => {
                            self.at = t.len();
                            (
                                Token::Comment {
                                    start: body,
                                    len: t.len() - body,
                                    terminated: false,
                                },
                                start,
                            )
                        }
                    });
                }
                b';' => {
                    let end = find(t, start, |c| c == b'\n' || c == b'\r');
                    self.at = end;
                    return Some((
                        Token::Comment {
                            start: start + 1,
                            len: end - start - 1,
                            terminated: true,
                        },
                        start,
                    ));
                }
                b'(' => {
                    self.in_tags = false;
                    self.at += 1;
                    return Some((Token::Open, start));
                }
                b')' => {
                    self.in_tags = false;
                    self.at += 1;
                    return Some((Token::Close, start));
                }
                b'$' => {
                    let end = find(t, start + 1, |c| !c.is_ascii_digit());
                    self.at = end.max(start + 1);
                    self.in_tags = false;
                    let digits = &t[start + 1..end];
                    return Some(
                        match std::str::from_utf8(digits)
                            .ok()
                            .and_then(|d| d.parse().ok())
                        {
                            Some(n) => (Token::Nag(n), start),
                            None => (Token::Unknown(&t[start..self.at]), start),
                        },
                    );
                }
                b'!' | b'?' => {
                    let end = find(t, start, |c| c != b'!' && c != b'?');
                    self.at = end;
                    self.in_tags = false;
                    return Some(match nag_of(&t[start..end]) {
                        Some(n) => (Token::Nag(n), start),
                        None => (Token::Unknown(&t[start..end]), start),
                    });
                }
                b'*' => {
                    self.at += 1;
                    self.in_tags = false;
                    return Some((Token::Result(&t[start..start + 1]), start));
                }
                b',' | b'}' => {
                    self.at += 1;
                    self.in_tags = false;
                    return Some((Token::Unknown(&t[start..start + 1]), start));
                }
                _ => {
                    self.in_tags = false;
                    if let Some(tok) = self.word(start) {
                        return Some(tok);
                    }
                }
            }
        }
    }
}

fn find(t: &[u8], from: usize, stop: impl Fn(u8) -> bool) -> usize {
    t[from..]
        .iter()
        .position(|&c| stop(c))
        .map_or(t.len(), |n| from + n)
}

impl<'a> Lexer<'a> {
    fn tag(&mut self) -> Token<'a> {
        let t = self.text;
        let start = self.at;
        let eol = find(t, start, |c| c == b'\n' || c == b'\r');
        self.at = eol;
        let line = &t[start + 1..eol];
        let name_end = line
            .iter()
            .position(|&c| c.is_ascii_whitespace() || c == b'"')
            .unwrap_or(line.len());
        let name = &line[..name_end];
        let rest = &line[name_end..];
        let Some(q) = rest.iter().position(|&c| c == b'"') else {
            return Token::BadTag;
        };
        if name.is_empty() || rest[..q].iter().any(|c| !c.is_ascii_whitespace()) {
            return Token::BadTag;
        }
        let mut value = Vec::new();
        let mut i = q + 1;
        let mut closed = false;
        while i < rest.len() {
            match rest[i] {
                // Only `\"` and `\\` are escapes; any other backslash is kept as written.
                b'\\' if i + 1 < rest.len() && matches!(rest[i + 1], b'"' | b'\\') => {
                    value.push(rest[i + 1]);
                    i += 2;
                }
                // A quote closes the value only if `]` follows; otherwise it is part of the
                // value (`[White ""Mephisto""]`, read like the reference CQL reads it).
                b'"' if rest[i + 1..]
                    .iter()
                    .find(|c| !c.is_ascii_whitespace())
                    .is_none_or(|&c| c == b']' || c == b'\n') =>
                {
                    closed = true;
                    i += 1;
                    break;
                }
                c => {
                    value.push(c);
                    i += 1;
                }
            }
        }
        let tail = &rest[i.min(rest.len())..];
        if !closed || !tail.contains(&b']') {
            return Token::BadTag;
        }
        // Text after `]` on the same line (e.g. a second tag) is rare; re-lex it as tags.
        let after = tail.iter().position(|&c| c == b']').map_or(0, |p| p + 1);
        let consumed = start + 1 + name_end + i + after;
        if t[consumed..eol].iter().any(|c| !c.is_ascii_whitespace()) {
            self.at = consumed;
        }
        Token::Tag { name, value }
    }

    /// A word starting at `start`; `None` for a move number (skipped).
    fn word(&mut self, start: usize) -> Option<(Token<'a>, usize)> {
        let t = self.text;
        let b = t[start];
        if b.is_ascii_digit() {
            let digits_end = find(t, start, |c| !c.is_ascii_digit());
            let end = find(t, start, is_delim);
            let word = &t[start..end];
            for r in [&b"1-0"[..], b"0-1", b"1/2-1/2"] {
                if word == r {
                    self.at = end;
                    return Some((Token::Result(word), start));
                }
            }
            if word.starts_with(b"0-0") || word.starts_with(b"O-O") {
                return Some(self.san_word(start));
            }
            // A move number: digits, then dots (or nothing before whitespace).
            let dots_end = find(t, digits_end, |c| c != b'.');
            let after = t.get(dots_end).copied();
            if dots_end > digits_end || after.is_none_or(is_delim) {
                self.at = dots_end;
                return None;
            }
            // `1.e4`-style is handled above (dots then the move); digits glued to letters are not.
            self.at = end;
            return Some((Token::Unknown(word), start));
        }
        Some(self.san_word(start))
    }

    fn san_word(&mut self, start: usize) -> (Token<'a>, usize) {
        let t = self.text;
        let end = find(t, start, |c| is_delim(c) || c == b'!' || c == b'?');
        self.at = end;
        // Evaluation symbols such as `+-` or `=/+` are NAGs, not moves.
        match nag_of(&t[start..end]) {
            Some(n) => (Token::Nag(n), start),
            None => (Token::San(&t[start..end]), start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Token<'_>> {
        Lexer::new(s.as_bytes()).map(|(t, _)| t).collect()
    }

    #[test]
    fn movetext() {
        let t =
            toks("[White \"A \\\"B\\\"\"]\n\n1.e4 e5!? 2. Nf3 $14 (2. f4 {gambit}) 0-0 1/2-1/2");
        assert_eq!(
            t,
            vec![
                Token::Tag {
                    name: b"White",
                    value: b"A \"B\"".to_vec()
                },
                Token::San(b"e4"),
                Token::San(b"e5"),
                Token::Nag(5),
                Token::San(b"Nf3"),
                Token::Nag(14),
                Token::Open,
                Token::San(b"f4"),
                Token::Comment {
                    start: 48,
                    len: 6,
                    terminated: true
                },
                Token::Close,
                Token::San(b"0-0"),
                Token::Result(b"1/2-1/2"),
            ]
        );
    }

    #[test]
    fn quirks() {
        assert_eq!(
            toks("4..Be7 8..Nf6xd5 9. Bxe7, Qxe7 4. ...e6 -- Z0"),
            vec![
                Token::San(b"Be7"),
                Token::San(b"Nf6xd5"),
                Token::San(b"Bxe7"),
                Token::Unknown(b","),
                Token::San(b"Qxe7"),
                Token::San(b"e6"),
                Token::San(b"--"),
                Token::San(b"Z0"),
            ]
        );
    }

    #[test]
    fn unterminated_comment_and_bad_tag() {
        let t = toks("[Event \"x]\n1. e4 {never closed");
        assert_eq!(t[0], Token::BadTag);
        assert_eq!(t[1], Token::San(b"e4"));
        assert!(matches!(
            t[2],
            Token::Comment {
                terminated: false,
                ..
            }
        ));
    }
}
