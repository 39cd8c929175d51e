//! Transforms (CQL's `flipcolor`, `reversecolor`) are evaluated at run time: the evaluator
//! carries whether colours are swapped, and reads each colour- or direction-dependent literal
//! through these functions. Nothing is copied, so nested transforms cost nothing at parse time
//! and memory stays linear in the query (a copy per level made 25 nested `flipcolor`s take
//! gigabytes).

use crate::ast::{Direction, PieceSet};

/// Piece bits with white and black exchanged (the empty-square bit stays).
pub fn swap_colors(p: u16) -> u16 {
    (p & 0x1000) | ((p & 0x3f) << 6) | ((p >> 6) & 0x3f)
}

/// Squares with rank 1 and rank 8 exchanged (and so on).
pub fn mirror_ranks(s: u64) -> u64 {
    s.swap_bytes()
}

/// A designator with the colours swapped: its pieces' colours exchanged, its squares mirrored.
pub fn flip_piece_set(p: PieceSet) -> PieceSet {
    PieceSet {
        pieces: swap_colors(p.pieces),
        squares: mirror_ranks(p.squares),
    }
}

/// A `fen` cell (piece index, 12 empty, 13 any) with the colours swapped.
pub fn flip_cell(c: u8) -> u8 {
    if c < 12 { (c + 6) % 12 } else { c }
}

/// The square seen with the ranks mirrored.
pub fn mirror_square(sq: usize) -> usize {
    (7 - sq / 8) * 8 + sq % 8
}

/// A direction with the colours swapped (up and down exchanged).
pub fn flip_direction(d: Direction) -> Direction {
    d.mirrored()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_and_mirrors() {
        assert_eq!(swap_colors(1), 1 << 6);
        assert_eq!(swap_colors(1 << 11), 1 << 5);
        assert_eq!(mirror_ranks(1), 1 << 56);
        assert_eq!(mirror_square(4), 60);
        assert_eq!(flip_cell(0), 6);
        assert_eq!(flip_cell(13), 13);
        let p = flip_piece_set(PieceSet {
            pieces: 1 << 3,
            squares: 1,
        });
        assert_eq!((p.pieces, p.squares), (1 << 9, 1 << 56));
    }

    #[test]
    fn nested_transforms_stay_small() {
        // 30 nested flipcolors: parsed at once, the tree linear in the text.
        let q = format!("cql() {}Ke1{}", "flipcolor {".repeat(30), "}".repeat(30));
        let parsed = crate::parse(&q).expect("parses");
        let mut nodes = 0;
        parsed.body[0].walk(&mut |_| nodes += 1);
        assert!(nodes < 100, "{nodes} nodes");
        // Their index bounds stay small too: the piece and its colour-swapped copy.
        let b = crate::plan::index_rule::body_bounds(&parsed.body, false);
        let mut scans = 0;
        b.upper.visit(&mut |_| scans += 1);
        assert!(scans <= 3, "{scans} scans: {:?}", b.upper);
    }
}
