//! `last_move` as a number: how a tree's moves become integer codes a pass compares, and how a
//! quoted move in a query (`last_move = "e2e4"`) becomes a test on those codes.
//!
//! A GT-log `.gtf` file stores the move as an integer (0 where there is none, as at the root),
//! and `last_move` compares as that integer. A text log's move is a word: an integer word is
//! that integer, `-` is 0, and any other word gets a code from a hash of its bytes below
//! −2⁶² (no log writes such integers), so it compares equal to the same quoted word and to
//! nothing else. A tree can read quoted moves its own way ([`MoveLiterals::Pattern`]): over
//! game trees, `"Qd8-h4"` and `"Qh4"` both match the queen's move to h4.

/// How a quoted move in a query is read.
#[derive(Clone, Copy, Debug, Default)]
pub enum MoveLiterals {
    /// Moves are words, coded by [`text_move_code`].
    #[default]
    Text,
    /// A tree's own reading: `(mask, value)` such that a node matches iff `code & mask ==
    /// value`, or `None` when the text is no move of the tree; with a description of the forms
    /// it reads, for errors.
    Pattern(fn(&str) -> Option<(i64, i64)>, &'static str),
}

impl MoveLiterals {
    /// The test a quoted move stands for: `code & mask == value`.
    pub fn pattern(&self, text: &str) -> Option<(i64, i64)> {
        match self {
            Self::Text => Some((-1, text_move_code(text.as_bytes()))),
            Self::Pattern(f, _) => f(text),
        }
    }

    /// The forms of quoted moves this reading accepts.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Text => "moves are compared as the log wrote them",
            Self::Pattern(_, d) => d,
        }
    }
}

/// The code of a move word of a log: its integer if it is one, 0 for `-` or nothing, and
/// otherwise a hash of its bytes below −2⁶².
///
/// ```
/// use cqldb_planner::gtql::text_move_code;
/// assert_eq!(text_move_code(b"12"), 12);
/// assert_eq!(text_move_code(b"-"), 0);
/// assert_eq!(text_move_code(b"e2e4"), text_move_code(b"e2e4"));
/// assert!(text_move_code(b"e2e4") < -(1 << 62));
/// ```
pub fn text_move_code(word: &[u8]) -> i64 {
    if word.is_empty() || word == b"-" {
        return 0;
    }
    if let Some(n) = std::str::from_utf8(word)
        .ok()
        .and_then(|w| w.parse::<i64>().ok())
    {
        return n;
    }
    // FNV-1a: stable across runs and builds, so codes could be stored.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in word {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    i64::MIN | (h >> 2) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_numbers() {
        assert_eq!(text_move_code(b""), 0);
        assert_eq!(text_move_code(b"-7"), -7);
        assert_ne!(text_move_code(b"e2e4"), text_move_code(b"e2e3"));
        for w in [&b"Nf3"[..], b"a", b"99999999999999999999"] {
            assert!(text_move_code(w) < -(1 << 62));
        }
        assert_eq!(
            MoveLiterals::Text.pattern("e2e4"),
            Some((-1, text_move_code(b"e2e4")))
        );
    }
}
