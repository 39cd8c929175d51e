//! Reading a block of whole node lines in one pass over its bytes.
//!
//! Finding each line, then each field, then each field's digits costs a function call and a
//! hard-to-predict loop end at every step; a single loop over the block's bytes that keeps
//! the field's value, the field's number and the line's state in registers reads the common
//! line (fields of digits, the move, single spaces) at about twice the speed. Any line it
//! does not fully understand (comments, blank lines, constants written by name, tabs,
//! carriage returns, mistakes) is handed back whole to the careful line reader, which parses
//! it or says what is wrong with it.

use crate::error::Result;

/// A line of a block, as [`scan_block`] hands it over.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line<'a> {
    /// A node line in the common shape.
    Node {
        /// Its level.
        level: u32,
        /// The move that led to it.
        last_move: &'a [u8],
        /// One value per attribute.
        values: &'a [i64],
        /// First byte of the line.
        start: usize,
        /// The line's `\n`.
        end: usize,
    },
    /// Any other line, `block[start..end]` (without its `\n`), for the careful reader.
    Other {
        /// First byte of the line.
        start: usize,
        /// The line's `\n`.
        end: usize,
    },
}

/// Calls `f` for every line of `block`, in order; `block` ends with `\n` (bytes after the last
/// `\n` are ignored). `values` has one slot per attribute and is reused for every line.
pub(super) fn scan_block(
    block: &[u8],
    values: &mut [i64],
    mut f: impl FnMut(Line<'_>) -> Result<()>,
) -> Result<()> {
    let fields = values.len() + 2;
    let mut line_start = 0usize;
    let mut field_start = 0usize;
    // Index of the field being read: 0 the level, 1 the move, then the attributes.
    let mut field = 0usize;
    let mut v = 0u64;
    let mut digits = 0usize;
    let mut neg = false;
    let mut odd = false;
    let mut level = 0i64;
    let mut last_move = (0usize, 0usize);
    for (i, &b) in block.iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d <= 9 {
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            digits += 1;
        } else if b == b' ' || b == b'\n' {
            if i > field_start {
                if field == 1 {
                    last_move = (field_start, i);
                } else {
                    // Only `-?[0-9]{1,18}` (a `-` anywhere but first already set `odd`).
                    odd |=
                        digits == 0 || digits > 18 || digits + usize::from(neg) != i - field_start;
                    let x = if neg {
                        (v as i64).wrapping_neg()
                    } else {
                        v as i64
                    };
                    if field == 0 {
                        level = x;
                    } else if let Some(slot) = values.get_mut(field - 2) {
                        *slot = x;
                    }
                }
                field += 1;
            }
            v = 0;
            digits = 0;
            neg = false;
            field_start = i + 1;
            if b == b'\n' {
                let line = match u32::try_from(level) {
                    Ok(level) if !odd && field == fields => Line::Node {
                        level,
                        last_move: &block[last_move.0..last_move.1],
                        values,
                        start: line_start,
                        end: i,
                    },
                    _ => Line::Other {
                        start: line_start,
                        end: i,
                    },
                };
                f(line)?;
                line_start = i + 1;
                field = 0;
                odd = false;
            }
        } else if field != 1 {
            // In a number only a leading `-` is allowed (names go to the careful reader).
            odd |= b != b'-' || i != field_start;
            neg = true;
        } else {
            // Moves are any run of visible bytes; other control bytes go to the careful reader.
            odd |= b < 0x21;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Line, scan_block};

    fn lines(block: &str, attrs: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut values = vec![0; attrs];
        scan_block(block.as_bytes(), &mut values, |l| {
            out.push(match l {
                Line::Node {
                    level,
                    last_move,
                    values,
                    ..
                } => format!("{level} {} {values:?}", String::from_utf8_lossy(last_move)),
                Line::Other { start, end } => format!("other {:?}", &block[start..end]),
            });
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn common_lines_are_read_and_the_rest_handed_back() {
        let block = "0 - 1 -2\n1 e2e4  30 0\n\n# note\n2 O-O 1 x\n2 a 1-2 3\n2 a - 3\n2 a 1\n\
                     2 a 1 2 3\n-1 a 1 2\n 3 Nf3 7 -0\n2 a\t1 2\n2 a 1 2\r\n4294967296 a 1 2\n\
                     2 a 1234567890123456789 2\n2 a 123456789012345678 2\ntrailing 1 2";
        assert_eq!(
            lines(block, 2),
            [
                "0 - [1, -2]",
                "1 e2e4 [30, 0]",
                "other \"\"",
                "other \"# note\"",
                "other \"2 O-O 1 x\"",
                "other \"2 a 1-2 3\"",
                "other \"2 a - 3\"",
                "other \"2 a 1\"",
                "other \"2 a 1 2 3\"",
                "other \"-1 a 1 2\"",
                "3 Nf3 [7, 0]",
                "other \"2 a\\t1 2\"",
                "other \"2 a 1 2\\r\"",
                "other \"4294967296 a 1 2\"",
                "other \"2 a 1234567890123456789 2\"",
                "2 a [123456789012345678, 2]",
            ]
        );
    }
}
