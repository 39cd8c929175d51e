//! A CQL 3 list's next-move keywords (`:movefrom`, `:moveto`, `:promote`) as one CQL 6 dash,
//! so that they speak of the same move.

use super::words::{Designator, Placement, squares_text};

/// The next move's parts, written as one dash so they refer to the same move.
#[derive(Default)]
pub struct MoveParts {
    pub from: Option<Designator>,
    pub to: Option<Designator>,
    pub promote: Option<Designator>,
}

impl MoveParts {
    /// The dash at `place`. The destination is always written bare (`--D`): a parenthesised
    /// one, `--(X)`, would be read as a filter true after the move.
    /// `primary`: only the main line's move (the list does not look into variations while
    /// the query does).
    pub fn dash(&self, place: Placement, primary: bool) -> Option<String> {
        if self.from.is_none() && self.to.is_none() && self.promote.is_none() {
            return None;
        }
        // A tagged piece with squares: the piece stands there, and it moves (the dash's
        // origin is the bare piece variable; a parenthesised one would not be read as one).
        let mut standing = String::new();
        let from = match &self.from {
            None => String::new(),
            Some(d) if d.squares_at(place) == 0 => return Some("false".into()),
            Some(d) if d.tag && d.squares.is_some() => {
                standing = format!("{} ", d.cql6(place));
                d.piece.clone()
            }
            Some(d) => d.cql6(place),
        };
        // Where the move goes: the destination's squares, and the promotion's.
        let mut squares = self.to.as_ref().map_or(u64::MAX, |d| d.squares_at(place));
        if let Some(p) = &self.promote {
            squares &= p.squares_at(place);
        }
        if squares == 0 {
            return Some("false".into());
        }
        let to_piece = self.to.as_ref().map(|d| d.piece.clone());
        let to = match (to_piece, squares == u64::MAX) {
            // No promotion squares: the destination as written.
            (Some(_), _) if self.promote.is_none() => {
                self.to.as_ref().map_or(String::new(), |d| d.cql6(place))
            }
            (None, true) => String::new(),
            (Some(piece), true) => piece,
            (piece, false) => format!(
                "{}{}",
                piece.unwrap_or_else(|| "[Aa_]".into()),
                squares_text(squares)
            ),
        };
        let promotion = self
            .promote
            .as_ref()
            .map_or(String::new(), |p| format!("={}", p.piece));
        let after = if primary { "(primary)" } else { "" };
        let dash = format!("{standing}{from}--{to}{promotion}{after}");
        // A dash's promotion names a piece type: the colour is the side to move's.
        let colour = match &self.promote {
            Some(p) => {
                let white = p.piece.chars().any(|c| c.is_ascii_uppercase());
                let black = p.piece.chars().any(|c| c.is_ascii_lowercase());
                match (white, black) {
                    (true, false) => "wtm ",
                    (false, true) => "btm ",
                    _ => "",
                }
            }
            None => "",
        };
        Some(if colour.is_empty() && standing.is_empty() {
            dash
        } else {
            format!("{{{colour}{dash}}}")
        })
    }
}
