//! Tag values: text decoding and the indexed game attributes derived from them.

use cqldb_storage::{GameMeta, GameResult};

use crate::lexer::Token;

/// Decodes PGN text: UTF-8 when valid, else Latin-1 (what non-UTF-8 PGN files almost always are).
pub fn decode_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// At most the first 60 characters of `bytes` for a message, with a note of the whole length
/// when cut: a 64 MiB junk token must not become a 64 MiB error message.
pub fn excerpt(bytes: &[u8]) -> String {
    const SHOWN: usize = 60;
    if bytes.len() <= SHOWN {
        return decode_text(bytes).escape_debug().to_string();
    }
    let mut cut = SHOWN;
    // Not inside a UTF-8 sequence.
    while cut > 0 && bytes[cut] & 0xc0 == 0x80 {
        cut -= 1;
    }
    format!(
        "{}... ({} bytes)",
        decode_text(&bytes[..cut]).escape_debug(),
        bytes.len()
    )
}

/// The game's termination marker (`1-0`, `0-1`, `1/2-1/2`, `*`) as written after its main
/// line, if it has one: what the reference program writes as the game's result.
pub fn termination(text: &[u8]) -> Option<String> {
    let mut depth = 0usize;
    for (tok, _) in crate::lexer::Lexer::new(text) {
        match tok {
            Token::Open => depth += 1,
            Token::Close => depth = depth.saturating_sub(1),
            Token::Result(r) if depth == 0 => return Some(decode_text(r)),
            _ => {}
        }
    }
    None
}

/// The value of a tag (first occurrence, case-sensitive name as PGN requires).
pub fn tag<'a>(tags: &'a [(String, String)], name: &str) -> Option<&'a str> {
    tags.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Result, year, ECO and Elos from the tags (`termination` is the movetext's marker, if any).
pub fn game_meta(tags: &[(String, String)], termination: Option<&str>) -> GameMeta {
    let result = tag(tags, "Result")
        .map(GameResult::from_pgn)
        .filter(|r| *r != GameResult::Unknown)
        .or_else(|| termination.map(GameResult::from_pgn))
        .unwrap_or(GameResult::Unknown);
    let year = tag(tags, "Date")
        .or_else(|| tag(tags, "EventDate"))
        .and_then(|d| d.get(..4))
        .and_then(|y| y.parse::<u16>().ok())
        .unwrap_or(0);
    let elo = |name| {
        tag(tags, name)
            .and_then(|e| e.trim().parse::<u16>().ok())
            .unwrap_or(0)
    };
    GameMeta {
        result,
        year,
        eco: tag(tags, "ECO").and_then(GameMeta::parse_eco).unwrap_or(0),
        white_elo: elo("WhiteElo"),
        black_elo: elo("BlackElo"),
    }
}

/// The tag pairs at the start of a game's text, without reading its moves (for readers that
/// already have the positions, such as queries over an index).
///
/// ```
/// let t = cqldb_indexer::tags::scan_tags(b"[White \"A \\\"B\\\"\"]\n[Black \"C\"]\n1. e4 *");
/// assert_eq!(t, vec![("White".into(), "A \"B\"".into()), ("Black".into(), "C".into())]);
/// ```
pub fn scan_tags(text: &[u8]) -> Vec<(String, String)> {
    use crate::lexer::{Lexer, Token};
    let mut out = Vec::new();
    // The same tokens the tree builder reads, so both agree on every odd tag line.
    for (tok, _) in Lexer::new(text) {
        match tok {
            Token::Tag { name, value } => out.push((decode_text(name), decode_text(&value))),
            Token::BadTag => {}
            // As the tree builder reads a game: comments may come before the first tag; one
            // after a tag ends the tag section.
            Token::Comment { .. } if out.is_empty() => {}
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_fallback() {
        assert_eq!(decode_text(b"Tal"), "Tal");
        assert_eq!(excerpt(b"e4\0"), "e4\\0");
        let long = excerpt(&[0u8; 1 << 20]);
        assert!(
            long.len() < 400 && long.ends_with("(1048576 bytes)"),
            "{long}"
        );
        assert_eq!(decode_text(b"Ljubojevi\xe6"), "Ljubojeviæ");
        assert_eq!(decode_text("Réti".as_bytes()), "Réti");
    }

    #[test]
    fn meta() {
        let tags: Vec<(String, String)> = [
            ("Date", "1997.05.11"),
            ("Result", "1-0"),
            ("ECO", "B33"),
            ("WhiteElo", "2785"),
            ("BlackElo", "?"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let m = game_meta(&tags, None);
        assert_eq!(m.result, GameResult::WhiteWins);
        assert_eq!(m.year, 1997);
        assert_eq!(m.eco_string().as_deref(), Some("B33"));
        assert_eq!((m.white_elo, m.black_elo), (2785, 0));
    }
}
