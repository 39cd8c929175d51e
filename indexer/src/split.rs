//! Cuts a PGN byte stream into games without parsing them, so games can be parsed in parallel
//! and their exact text kept.
//!
//! A game ends where the next one's tag section begins (a `[` at the start of a line once the
//! current game has movetext), or, for games without tags, at the first movetext after a
//! termination marker at variation level 0. Braces, `;` comments and `%` escape lines are tracked
//! so a `[` inside a comment does not split; but a line starting with `[Event "` always starts a
//! new game, so one unterminated comment cannot swallow the rest of a file.

use std::io::{self, Read};

/// Games larger than this are cut (and the cut reported) so memory stays bounded: a few games
/// of this size are in flight per parser thread (16 MiB holds the longest annotated games seen,
/// comments of several megabytes included).
pub const MAX_GAME_BYTES: usize = 16 << 20;
/// An input whose first this many bytes hold no tag pair and no move is not PGN: it is
/// reported and not read further (a NUL flood or a binary file given by mistake).
pub const PGN_PREFIX_BYTES: usize = 1 << 20;
const READ_CHUNK: usize = 1 << 20;
const LOOKAHEAD: usize = 16;

/// The text of one game and where it came from.
#[derive(Clone, Debug, Default)]
pub struct RawGame {
    /// The bytes, exactly as in the input.
    pub text: Vec<u8>,
    /// 1-based line of the first byte.
    pub line: u32,
    /// Byte offset of the first byte in the decompressed input.
    pub offset: u64,
    /// True if the text was cut at [`MAX_GAME_BYTES`].
    pub oversized: bool,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Mode {
    Normal,
    Brace,
    LineComment,
    /// Inside `[Name "value"]`; `in_value` is true between the quotes.
    Tag {
        in_value: bool,
        escaped: bool,
    },
}

/// Streaming game splitter.
pub struct Splitter<R> {
    input: R,
    buf: Vec<u8>,
    /// Start of the current game in `buf` (bytes before it are consumed; compacted on refill).
    start: usize,
    /// Index in `buf` up to which the current game has been scanned.
    scanned: usize,
    eof: bool,
    line: u32,
    offset: u64,
    mode: Mode,
    line_start: bool,
    token_start: bool,
    depth: u32,
    seen_moves: bool,
    after_result: bool,
    max_game: usize,
    /// Whether something in the input looked like PGN; `None` until decided.
    pgn: Option<bool>,
    /// Bytes of the input already handed out as games, while `pgn` is undecided.
    undecided: usize,
}

impl<R: Read> Splitter<R> {
    /// A splitter that cuts games at `max` bytes instead of [`MAX_GAME_BYTES`] (for tests).
    pub fn with_max_game_bytes(input: R, max: usize) -> Self {
        Self {
            max_game: max.max(1),
            ..Self::new(input)
        }
    }

    /// A splitter over a decompressed PGN stream.
    pub fn new(input: R) -> Self {
        Self {
            input,
            buf: Vec::with_capacity(READ_CHUNK * 2),
            start: 0,
            scanned: 0,
            eof: false,
            line: 1,
            offset: 0,
            mode: Mode::Normal,
            line_start: true,
            token_start: true,
            depth: 0,
            seen_moves: false,
            after_result: false,
            max_game: MAX_GAME_BYTES,
            pgn: None,
            undecided: 0,
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            // Compact once per read instead of once per game.
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        let old = self.buf.len();
        self.buf.resize(old + READ_CHUNK, 0);
        let n = loop {
            match self.input.read(&mut self.buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(old + n);
        if n == 0 {
            self.eof = true;
        }
        Ok(())
    }

    fn emit(&mut self, end: usize, oversized: bool) -> RawGame {
        if self.pgn.is_none() {
            if looks_like_pgn(&self.buf[self.start..end]) {
                self.pgn = Some(true);
            } else {
                self.undecided += end - self.start;
            }
        }
        let text = self.buf[self.start..end].to_vec();
        self.start = end;
        let game = RawGame {
            line: self.line,
            offset: self.offset,
            oversized,
            text,
        };
        self.line = self.line.saturating_add(count_lines(&game.text));
        self.offset += game.text.len() as u64;
        self.scanned = end;
        self.seen_moves = false;
        self.after_result = false;
        self.depth = 0;
        game
    }

    /// The next game, or `None` at the end of the input.
    pub fn next_game(&mut self) -> io::Result<Option<RawGame>> {
        if self.offset == 0 && self.scanned == 0 && self.start == 0 {
            while !self.eof && self.buf.len() < 3 {
                self.fill()?;
            }
            if self.buf.starts_with(b"\xef\xbb\xbf") {
                // A byte-order mark is not movetext: scan past it (it stays in the game's text).
                self.scanned = 3;
            }
        }
        loop {
            if !self.eof && self.buf.len() <= self.scanned + LOOKAHEAD {
                self.fill()?;
                continue;
            }
            if self.scanned >= self.buf.len() {
                // End of input: the rest is one game if it has any content.
                let rest = &self.buf[self.start..];
                let content = rest.strip_prefix(b"\xef\xbb\xbf").unwrap_or(rest);
                if content.iter().any(|b| !b.is_ascii_whitespace()) {
                    let n = self.buf.len();
                    return Ok(Some(self.emit(n, false)));
                }
                self.offset += rest.len() as u64;
                self.line = self.line.saturating_add(count_lines(rest));
                self.buf.clear();
                self.start = 0;
                self.scanned = 0;
                return Ok(None);
            }
            if self.pgn.is_none()
                && self.undecided + (self.scanned - self.start) >= PGN_PREFIX_BYTES
            {
                let upto = (self.start + PGN_PREFIX_BYTES).min(self.scanned);
                if looks_like_pgn(&self.buf[self.start..upto]) {
                    self.pgn = Some(true);
                } else {
                    self.pgn = Some(false);
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "not PGN: the first {} MiB hold no tag pair and no move",
                            PGN_PREFIX_BYTES >> 20
                        ),
                    ));
                }
            }
            if self.scanned - self.start >= self.max_game {
                // Cut after the last line break, so a CRLF or a UTF-8 sequence is not split.
                let n = memchr::memrchr(b'\n', &self.buf[self.start..self.scanned])
                    .map_or(self.scanned, |p| self.start + p + 1);
                self.scanned = n;
                return Ok(Some(self.emit(n, true)));
            }
            let limit = if self.eof {
                self.buf.len()
            } else {
                self.buf.len() - LOOKAHEAD
            };
            if let Some(cut) = self.scan(limit) {
                let text = &self.buf[self.start..cut];
                if text.iter().any(|b| !b.is_ascii_whitespace()) {
                    return Ok(Some(self.emit(cut, false)));
                }
                // Only whitespace before the cut: it is not a game; skip it.
                self.line = self.line.saturating_add(count_lines(text));
                self.offset += text.len() as u64;
                self.start = cut;
                self.scanned = cut;
                self.seen_moves = false;
                self.after_result = false;
                // Re-scan from the cut so the tag line starts in the right mode.
                self.step_boundary_reset();
            }
        }
    }

    fn step_boundary_reset(&mut self) {
        self.mode = Mode::Normal;
        self.line_start = true;
        self.token_start = true;
    }

    /// Scans up to `limit`; returns the offset where the next game starts, if found.
    fn scan(&mut self, limit: usize) -> Option<usize> {
        let mut i = self.scanned;
        while i < limit {
            let b = self.buf[i];
            // Fast path: a run of bytes that can only be part of a move or move number.
            if self.mode == Mode::Normal
                && ORDINARY[b as usize]
                && !(self.token_start && matches!(b, b'0' | b'1' | b'*'))
            {
                if self.after_result {
                    // Movetext after a finished game without tags: a new game.
                    self.scanned = i;
                    self.after_result = false;
                    return Some(i);
                }
                let mut j = i + 1;
                while j < limit && ORDINARY[self.buf[j] as usize] {
                    j += 1;
                }
                self.seen_moves = true;
                self.token_start = false;
                self.line_start = false;
                i = j;
                continue;
            }
            let at_line_start = self.line_start;
            self.line_start = b == b'\n' || (b == b'\r' && self.buf.get(i + 1) != Some(&b'\n'));
            match self.mode {
                Mode::LineComment => {
                    if self.line_start {
                        self.mode = Mode::Normal;
                        self.token_start = true;
                    }
                }
                Mode::Tag { in_value, escaped } => {
                    // A tag ends at its `]` (movetext may follow on the same line) or, if
                    // malformed, at the end of the line.
                    if self.line_start {
                        self.mode = Mode::Normal;
                        self.token_start = true;
                    } else if in_value {
                        let still = escaped || b != b'"';
                        self.mode = Mode::Tag {
                            in_value: still,
                            escaped: !escaped && b == b'\\',
                        };
                        if still {
                            // Jump over the ordinary bytes of the value.
                            let mut j = i + 1;
                            while j < limit && !TAG_VALUE_SPECIAL[self.buf[j] as usize] {
                                j += 1;
                            }
                            if j > i + 1 {
                                self.mode = Mode::Tag {
                                    in_value: true,
                                    escaped: false,
                                };
                                i = j;
                                continue;
                            }
                        }
                    } else if b == b'"' {
                        self.mode = Mode::Tag {
                            in_value: true,
                            escaped: false,
                        };
                    } else if b == b']' {
                        self.mode = Mode::Normal;
                        self.token_start = true;
                    }
                }
                Mode::Brace => {
                    if b == b'}' {
                        self.mode = Mode::Normal;
                        self.token_start = true;
                    } else if at_line_start && self.buf[i..].starts_with(b"[Event \"") {
                        self.scanned = i;
                        self.mode = Mode::Normal;
                        self.line_start = true;
                        return Some(i);
                    } else if !self.line_start {
                        // Comments can be long: jump to the next byte that matters.
                        match memchr::memchr3(b'}', b'\n', b'\r', &self.buf[i + 1..limit]) {
                            Some(n) => i += n,
                            None => i = limit - 1,
                        }
                    }
                }
                Mode::Normal => {
                    if b.is_ascii_whitespace() {
                        self.token_start = true;
                        if self.line_start && b == b'\r' {
                            // A lone CR ends a line (old Mac files).
                        }
                    } else if at_line_start && b == b'[' {
                        if self.seen_moves {
                            self.scanned = i;
                            self.line_start = true;
                            return Some(i);
                        }
                        self.mode = Mode::Tag {
                            in_value: false,
                            escaped: false,
                        };
                    } else if at_line_start && b == b'%' {
                        self.mode = Mode::LineComment;
                    } else if b == b'{' {
                        self.mode = Mode::Brace;
                    } else if b == b';' {
                        self.mode = Mode::LineComment;
                    } else {
                        if self.after_result {
                            // Movetext after a finished game without tags: a new game.
                            self.scanned = i;
                            self.after_result = false;
                            return Some(i);
                        }
                        self.seen_moves = true;
                        match b {
                            b'(' => self.depth += 1,
                            b')' => self.depth = self.depth.saturating_sub(1),
                            _ => {}
                        }
                        if self.token_start && self.depth == 0 {
                            let n = result_len(&self.buf[i..]);
                            if let Some(n) = n {
                                self.after_result = true;
                                i += n;
                                self.token_start = true;
                                continue;
                            }
                        }
                        self.token_start = matches!(b, b'(' | b')' | b'}');
                    }
                }
            }
            i += 1;
        }
        self.scanned = i;
        None
    }
}

/// Bytes with no structural meaning in movetext (everything but white space and `[ % { } ; ( )`).
static ORDINARY: [bool; 256] = {
    let mut t = [true; 256];
    let special = b" \t\r\n\x0b\x0c[%{};()";
    let mut k = 0;
    while k < special.len() {
        t[special[k] as usize] = false;
        k += 1;
    }
    t
};

/// Bytes that matter inside a tag value: its closing quote, an escape, a line end.
static TAG_VALUE_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t
};

/// Length of a termination marker at the start of `s`, if one stands there as a whole token.
fn result_len(s: &[u8]) -> Option<usize> {
    for r in [&b"1/2-1/2"[..], b"1-0", b"0-1", b"*"] {
        if s.starts_with(r) {
            let next = s.get(r.len()).copied();
            if next
                .is_none_or(|c| c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'{' | b';'))
            {
                return Some(r.len());
            }
        }
    }
    None
}

/// Whether `text` holds something only PGN has: a tag pair's start (`[Name "`) or a move
/// number followed by a move (`1.e4`, `12... Nf6`). Junk may pass by chance; it is then read
/// as junk, within the same bounds as any game.
fn looks_like_pgn(text: &[u8]) -> bool {
    let tag = memchr::memchr_iter(b'[', text).any(|i| {
        let rest = &text[i + 1..];
        let name = rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let after = &rest[name..];
        let blanks = after
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        name > 0 && blanks > 0 && after.get(blanks) == Some(&b'"')
    });
    tag || memchr::memchr_iter(b'.', text).any(|i| {
        i > 0
            && text[i - 1].is_ascii_digit()
            && text[i + 1..]
                .iter()
                .find(|b| !matches!(b, b'.' | b' '))
                .is_some_and(|b| b"abcdefghKQRBNO".contains(b))
    })
}

/// Number of line breaks (`\n`, `\r\n` or a lone `\r`).
pub fn count_lines(text: &[u8]) -> u32 {
    // Vectorised counts: every game's text is counted once, so a byte loop showed in profiles.
    let newlines = memchr::memchr_iter(b'\n', text).count();
    let lone_crs = memchr::memchr_iter(b'\r', text)
        .filter(|&i| text.get(i + 1) != Some(&b'\n'))
        .count();
    u32::try_from(newlines + lone_crs).unwrap_or(u32::MAX)
}

/// 1-based (line, column) of byte `offset` in `text` whose first byte is on line `first_line`.
pub fn line_col(text: &[u8], first_line: u32, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = first_line + count_lines(before);
    let line_begin = before
        .iter()
        .rposition(|&b| b == b'\n' || b == b'\r')
        .map_or(0, |p| p + 1);
    (line, (offset - line_begin) as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<(String, u32)> {
        let mut sp = Splitter::new(s.as_bytes());
        let mut out = Vec::new();
        while let Some(g) = sp.next_game().unwrap() {
            out.push((String::from_utf8(g.text).unwrap(), g.line));
        }
        out
    }

    #[test]
    fn splits_at_tag_sections() {
        let g = split("[Event \"a\"]\n\n1. e4 e5 1-0\n\n[Event \"b\"]\n\n1. d4 *\n");
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].1, 1);
        assert_eq!(g[1].1, 5);
        assert!(g[1].0.starts_with("[Event \"b\"]"));
    }

    #[test]
    fn bracket_inside_comment_does_not_split() {
        let g = split("[Event \"a\"]\n1. e4 {see\n[this] line} e5 *\n[Event \"b\"]\n1. d4 *\n");
        assert_eq!(g.len(), 2);
        assert!(g[0].0.contains("[this]"));
    }

    #[test]
    fn unterminated_comment_stops_at_next_event() {
        let g = split("[Event \"a\"]\n1. e4 {oops\n1-0\n\n[Event \"b\"]\n1. d4 *\n");
        assert_eq!(g.len(), 2);
        assert!(g[1].0.starts_with("[Event \"b\"]"));
    }

    #[test]
    fn tagless_games_split_after_result() {
        let g = split("1. e4 e5 *\n\n1. d4 d5 1-0 {done}\n1. c4 *");
        assert_eq!(g.len(), 3, "{g:?}");
        assert!(g[1].0.contains("{done}"));
        assert_eq!(g[2].1, 4);
    }

    #[test]
    fn leading_comment_belongs_to_first_game() {
        let g = split("{ a file comment }\n[ECO \"A00\"]\n1. a3 *\n[ECO \"A01\"]\n1. b3 *\n");
        assert_eq!(g.len(), 2);
        assert!(g[0].0.starts_with("{ a file comment }"));
    }

    #[test]
    fn unterminated_comment_right_after_the_tags() {
        let g = split(
            "[Event \"a\"]\n{unterminated\n\n[Event \"b\"]\n1. d4 *\n[Event \"c\"]\n1. c4 *\n",
        );
        assert_eq!(g.len(), 3, "{g:?}");
    }

    #[test]
    fn movetext_on_the_tag_line() {
        let g = split("[Event \"a]b\"] 1. e4 e5 *\n[Event \"b\"] 1. d4 *\n");
        assert_eq!(g.len(), 2, "{g:?}");
        assert!(g[1].0.starts_with("[Event \"b\"]"));
    }

    #[test]
    fn oversized_games_are_cut_at_a_line_break() {
        let text = format!(
            "[Event \"a\"]\r\n{{{}\r\n{}}} *\r\n",
            "x".repeat(100),
            "y".repeat(100)
        );
        let mut sp = Splitter::with_max_game_bytes(text.as_bytes(), 64);
        let mut pieces = Vec::new();
        while let Some(g) = sp.next_game().unwrap() {
            pieces.push(g);
        }
        assert!(pieces.len() >= 2 && pieces[0].oversized);
        assert!(pieces[0].text.ends_with(b"\r\n"), "cut after a CRLF");
        let joined: Vec<u8> = pieces.iter().flat_map(|g| g.text.clone()).collect();
        assert_eq!(joined, text.as_bytes(), "nothing lost or duplicated");
        assert_eq!(pieces[1].line, 3);
    }

    #[test]
    fn a_bom_alone_is_not_a_game() {
        assert!(split("\u{feff}\n\n").is_empty());
    }

    #[test]
    fn line_and_column() {
        let t = b"ab\r\ncd\ref";
        assert_eq!(line_col(t, 10, 0), (10, 1));
        assert_eq!(line_col(t, 10, 5), (11, 2));
        assert_eq!(line_col(t, 10, 8), (12, 2));
    }
}
