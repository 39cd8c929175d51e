//! Values a CQL filter can produce when it matches.

/// The value of a matching filter.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Matched, no value (`check`, `and`, ...).
    Matched,
    /// A number.
    Num(i64),
    /// A set of squares.
    Set(u64),
    /// A position (its id in the current game).
    Pos(u32),
    /// A string.
    Str(String),
    /// A piece identity (piece variables).
    Piece(u8),
}

impl Value {
    /// Text form, as `comment` and `str` print it.
    pub fn render(&self) -> String {
        match self {
            Value::Matched => "<true>".to_owned(),
            Value::Num(n) => n.to_string(),
            Value::Str(s) => s.clone(),
            Value::Pos(p) => format!("<position {p}>"),
            Value::Piece(p) => format!("<piece {p}>"),
            Value::Set(s) => squares_text(*s),
        }
    }

    /// Key form for dictionaries.
    pub fn key(&self) -> String {
        match self {
            Value::Str(s) => format!("s{s}"),
            Value::Num(n) => format!("n{n}"),
            Value::Set(s) => format!("q{s}"),
            Value::Pos(p) => format!("p{p}"),
            Value::Piece(p) => format!("i{p}"),
            Value::Matched => "m".to_owned(),
        }
    }
}

/// Squares as CQL writes them: `e4` or `[a1,h8]`.
pub fn squares_text(s: u64) -> String {
    let names: Vec<String> = (0..64u32)
        .filter(|sq| s >> sq & 1 == 1)
        .map(|sq| format!("{}{}", (b'a' + (sq % 8) as u8) as char, sq / 8 + 1))
        .collect();
    match names.len() {
        1 => names[0].clone(),
        _ => format!("[{}]", names.join(",")),
    }
}
