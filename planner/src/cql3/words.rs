//! Reading a list's items: keyword arguments (words, ranges), piece designators as CQL 6
//! writes them, and the error for a keyword not translated yet — shared by the match and
//! position lists (`desugar.rs`) and the relation list (`relation.rs`).

use super::reader::Item;
use crate::ast::Span;
use crate::error::ParseError;

/// A CQL 3 piece designator read: its piece part as CQL 6 writes it, its squares.
#[derive(Clone, Debug)]
pub struct Designator {
    /// The piece part in CQL 6 (`R`, `[QR]`, `_`, `[Aa_]`).
    pub piece: String,
    /// The squares (bit = rank * 8 + file); `None`: the whole board (no square part).
    pub squares: Option<u64>,
    /// The square part as CQL 6 writes it, untransformed (`a-c1-2`, `[a1,h8]`).
    squares_text: String,
    /// A tagged piece (`$name`): `piece` is its piece variable.
    pub tag: bool,
}

/// Where a list's designators are moved to: one CQL 3 shift with its edge rule, then
/// reflections (files mirrored, ranks mirrored, then the a1–h8 diagonal).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Placement {
    /// a↔h (`:flipvertical`, about the vertical bisector).
    pub mirror_files: bool,
    /// 1↔8 (`:fliphorizontal`).
    pub mirror_ranks: bool,
    /// Files right (negative: left).
    pub dx: i8,
    /// Ranks up (negative: down).
    pub dy: i8,
    /// Reflected in the a1–h8 diagonal first.
    pub diagonal: bool,
}

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = FILE_A << 7;
const RANK_1: u64 = 0xff;
const RANK_8: u64 = RANK_1 << 56;

impl Placement {
    pub fn is_identity(self) -> bool {
        self == Placement::default()
    }

    fn reflect(self, sq: u32) -> u32 {
        let (mut file, mut rank) = (sq % 8, sq / 8);
        if self.mirror_files {
            file = 7 - file;
        }
        if self.mirror_ranks {
            rank = 7 - rank;
        }
        if self.diagonal {
            std::mem::swap(&mut file, &mut rank);
        }
        rank * 8 + file
    }

    /// `squares` moved. A CQL 3 unit shift moves every square one step, drops those that
    /// leave the board, and keeps those on the edge it moves away from (`Q[a2,c2,h2]` shifted
    /// right is `Q[a2,b2,d2]`); a shift by k is k unit shifts.
    pub fn apply(self, mut squares: u64) -> u64 {
        for _ in 0..self.dx.unsigned_abs() {
            squares = if self.dx > 0 {
                ((squares & !FILE_H) << 1) | (squares & FILE_A)
            } else {
                ((squares & !FILE_A) >> 1) | (squares & FILE_H)
            };
        }
        for _ in 0..self.dy.unsigned_abs() {
            squares = if self.dy > 0 {
                (squares << 8) | (squares & RANK_1)
            } else {
                (squares >> 8) | (squares & RANK_8)
            };
        }
        // Reflections after the shift, as a CQL 6 flip written around the shifted instances
        // applies them (one order for both ways a list's flips are written).
        if self.mirror_files || self.mirror_ranks || self.diagonal {
            squares = (0..64u32)
                .filter(|sq| squares >> sq & 1 == 1)
                .fold(0, |acc, sq| acc | 1 << self.reflect(sq));
        }
        squares
    }
}

impl Designator {
    /// As CQL 6 writes it at `place`. A designator whose squares all left the board matches
    /// nothing: `~.` (no square).
    pub fn cql6(&self, place: Placement) -> String {
        let Some(squares) = self.squares else {
            return self.piece.clone();
        };
        let text = if place.is_identity() {
            self.squares_text.clone()
        } else {
            let moved = place.apply(squares);
            if moved == 0 {
                return "(~.)".into();
            }
            squares_text(moved)
        };
        if self.tag {
            // The tagged piece where it stands, on these squares.
            return format!("({} & {text})", self.piece);
        }
        format!("{}{text}", self.piece)
    }

    /// Its squares at `place` (the whole board when it has no square part).
    pub fn squares_at(&self, place: Placement) -> u64 {
        self.squares.map_or(u64::MAX, |s| place.apply(s))
    }
}

/// A square set as CQL 6 writes it: runs of files on each rank.
pub fn squares_text(set: u64) -> String {
    let mut parts = Vec::new();
    for rank in 0..8u32 {
        let mut file = 0u32;
        while file < 8 {
            if set >> (rank * 8 + file) & 1 == 0 {
                file += 1;
                continue;
            }
            let start = file;
            while file < 8 && set >> (rank * 8 + file) & 1 == 1 {
                file += 1;
            }
            let f = |x: u32| char::from(b'a' + x as u8);
            let r = char::from(b'1' + rank as u8);
            parts.push(if file - 1 == start {
                format!("{}{r}", f(start))
            } else {
                format!("{}-{}{r}", f(start), f(file - 1))
            });
        }
    }
    match parts.as_slice() {
        [one] => one.clone(),
        _ => format!("[{}]", parts.join(",")),
    }
}

/// A CQL 3 piece designator as CQL 6 writes it: the piece part (one letter, a bracketed set)
/// with `.` (empty), `?` (anything), `U`, `M`/`m`, `I`/`i` spelled out, then the squares with
/// `?` (any file, any rank) spelled out.
pub fn designator(word: &str, span: Span) -> Result<String, ParseError> {
    Ok(read_designator(word, span)?.cql6(Placement::default()))
}

/// A CQL 3 piece designator read (see [`designator`]).
pub fn read_designator(word: &str, span: Span) -> Result<Designator, ParseError> {
    let bad = |why: &str| {
        ParseError::new(
            format!("{why} in the piece designator '{word}'"),
            span.clone(),
        )
    };
    let (pieces, squares) = if let Some(rest) = word.strip_prefix('[') {
        let close = rest.find(']').ok_or_else(|| bad("an unclosed '['"))?;
        (&rest[..close], &rest[close + 1..])
    } else if let Some(rest) = word.strip_prefix('$') {
        // A tagged piece: the tag's piece variable (`tags.rs`), with squares or without.
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, squares) = rest.split_at(end);
        if !super::tags::valid_name(name) {
            return Err(bad("a tag name of letters, digits and '_' after '$'"));
        }
        let mut d = read_designator(&format!("?{squares}"), span.clone())?;
        d.piece = super::tags::variable(name);
        d.tag = true;
        return Ok(d);
    } else {
        let first = word.chars().next().ok_or_else(|| bad("nothing"))?;
        word.split_at(first.len_utf8())
    };
    let mut set = String::new();
    for c in pieces.chars() {
        let mapped = match c {
            'K' | 'Q' | 'R' | 'B' | 'N' | 'P' | 'k' | 'q' | 'r' | 'b' | 'n' | 'p' | 'A' | 'a' => {
                c.to_string()
            }
            'U' => "Aa".into(),
            'M' => "QR".into(),
            'm' => "qr".into(),
            'I' => "BN".into(),
            'i' => "bn".into(),
            '.' => "_".into(),
            '?' => "Aa_".into(),
            _ => return Err(bad(&format!("an unknown piece type '{c}'"))),
        };
        for m in mapped.chars() {
            if !set.contains(m) {
                set.push(m);
            }
        }
    }
    let piece = match set.chars().count() {
        0 => return Err(bad("no piece type")),
        1 => set,
        _ => format!("[{set}]"),
    };
    let square_items: Vec<&str> = match squares.strip_prefix('[') {
        Some(inner) => inner
            .strip_suffix(']')
            .ok_or_else(|| bad("an unclosed '['"))?
            .split(',')
            .collect(),
        None if squares.is_empty() => {
            return Ok(Designator {
                piece,
                squares: None,
                squares_text: String::new(),
                tag: false,
            });
        }
        None => vec![squares],
    };
    let mut out = Vec::new();
    let mut bits = 0u64;
    for s in square_items {
        let (text, set) = square(s).ok_or_else(|| bad(&format!("the squares '{s}'")))?;
        out.push(text);
        bits |= set;
    }
    let squares_text = match out.as_slice() {
        [one] => one.clone(),
        _ => format!("[{}]", out.join(",")),
    };
    Ok(Designator {
        piece,
        squares: Some(bits),
        squares_text,
        tag: false,
    })
}

/// A square or square range (`e4`, `a-c1`, `f-h6-8`, `?8`, `a?`) with `?` spelled out, and
/// its squares.
fn square(s: &str) -> Option<(String, u64)> {
    let b = s.as_bytes();
    let file = |c: u8| (b'a'..=b'h').contains(&c);
    let rank = |c: u8| (b'1'..=b'8').contains(&c);
    let (files, (f0, f1), rest) = match b {
        [b'?', rest @ ..] => ("a-h".to_owned(), (0, 7), rest),
        [f, b'-', g, rest @ ..] if file(*f) && file(*g) => (
            format!("{}-{}", *f as char, *g as char),
            (f - b'a', g - b'a'),
            rest,
        ),
        [f, rest @ ..] if file(*f) => ((*f as char).to_string(), (f - b'a', f - b'a'), rest),
        _ => return None,
    };
    let (ranks, (r0, r1)) = match rest {
        [b'?'] => ("1-8".to_owned(), (0, 7)),
        [r, b'-', t] if rank(*r) && rank(*t) => (
            format!("{}-{}", *r as char, *t as char),
            (r - b'1', t - b'1'),
        ),
        [r] if rank(*r) => ((*r as char).to_string(), (r - b'1', r - b'1')),
        _ => return None,
    };
    let mut set = 0u64;
    for f in f0.min(f1)..=f0.max(f1) {
        for r in r0.min(r1)..=r0.max(r1) {
            set |= 1 << (r * 8 + f);
        }
    }
    Some((format!("{files}{ranks}"), set))
}

pub fn unsupported(word: &str, span: Span) -> ParseError {
    let what = if word.starts_with(':') {
        format!("the CQL 3 keyword {word} is not supported yet")
    } else {
        format!("unexpected '{word}'")
    };
    ParseError::new(what, span)
}

/// The items of a list read one by one, with their keyword arguments.
pub struct Args<'a> {
    items: &'a [Item],
    at: usize,
    list: Span,
}

impl<'a> Args<'a> {
    pub fn new(items: &'a [Item], list: Span) -> Self {
        Self { items, at: 0, list }
    }

    pub fn next(&mut self) -> Option<&'a Item> {
        let item = self.items.get(self.at)?;
        self.at += 1;
        Some(item)
    }

    pub fn last_span(&self) -> Span {
        self.items
            .get(self.at.saturating_sub(1))
            .map_or(self.list.clone(), Item::span)
    }

    /// The argument of `keyword`.
    pub fn item(&mut self, keyword: &str) -> Result<&'a Item, ParseError> {
        let span = self.last_span();
        self.next()
            .ok_or_else(|| ParseError::new(format!("{keyword} needs an argument"), span))
    }

    /// A word argument of `keyword`.
    pub fn word(&mut self, keyword: &str) -> Result<String, ParseError> {
        let item = self.item(keyword)?;
        match item.atom() {
            Some(w) if !w.starts_with(':') => Ok(w.to_owned()),
            _ => Err(ParseError::new(
                format!("{keyword} needs a word here"),
                item.span(),
            )),
        }
    }

    /// The next item's text, if it is an atom (not consumed).
    pub fn peek_atom(&self) -> Option<&'a str> {
        self.items.get(self.at).and_then(Item::atom)
    }

    /// Whether the next item is a number (a range follows).
    pub fn peek_number(&self) -> bool {
        self.items
            .get(self.at)
            .and_then(Item::atom)
            .is_some_and(|w| w.parse::<i64>().is_ok())
    }

    /// The next item's place (the list's end when there is none).
    pub fn peek_span(&self) -> Span {
        self.items
            .get(self.at)
            .map_or(self.list.clone(), Item::span)
    }

    /// A range argument: `N` or `N M`.
    pub fn range(&mut self, keyword: &str) -> Result<(i64, i64), ParseError> {
        let first = self.item(keyword)?;
        let lo: i64 = first.atom().and_then(|w| w.parse().ok()).ok_or_else(|| {
            ParseError::new(
                format!("{keyword} needs a number or a range N M"),
                first.span(),
            )
        })?;
        let hi = match self
            .items
            .get(self.at)
            .and_then(Item::atom)
            .and_then(|w| w.parse().ok())
        {
            Some(hi) => {
                self.at += 1;
                hi
            }
            None => lo,
        };
        Ok((lo, hi))
    }
}
