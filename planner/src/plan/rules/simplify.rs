//! `simplify`: fewer and smaller set operations for the same sets.

use super::{Draft, Rule};
use crate::plan::Scan;

/// Flattens nested `and`s and `or`s, drops repeated operands, folds `All`/`Empty`, and turns
/// a set and its complement under one `and` into `Empty` (under one `or`: `All`).
pub struct Simplify;

impl Rule for Simplify {
    fn name(&self) -> &'static str {
        "simplify"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        let (u, l) = (simplify(&d.upper), simplify(&d.lower));
        let changed = u != d.upper || l != d.lower;
        d.upper = u;
        d.lower = l;
        changed.then(|| "set operations folded".to_owned())
    }
}

/// The simplified scan (recursion follows the query's nesting, which the parser limits).
pub fn simplify(s: &Scan) -> Scan {
    match s {
        Scan::And(xs) | Scan::Or(xs) => {
            let is_and = matches!(s, Scan::And(_));
            let mut out: Vec<Scan> = Vec::new();
            for x in xs.iter().map(simplify) {
                let parts = match x {
                    Scan::And(ys) if is_and => ys,
                    Scan::Or(ys) if !is_and => ys,
                    y => vec![y],
                };
                for p in parts {
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
            let (unit, zero) = if is_and {
                (Scan::All, Scan::Empty)
            } else {
                (Scan::Empty, Scan::All)
            };
            out.retain(|x| *x != unit);
            if is_and {
                merge_material(&mut out);
            } else {
                merge_moves(&mut out);
            }
            let complementary = out
                .iter()
                .any(|x| out.contains(&Scan::complement(x.clone())));
            if out.contains(&zero) || complementary {
                return zero;
            }
            match out.len() {
                0 => unit,
                1 => out.pop().unwrap_or(unit),
                _ if is_and => Scan::And(out),
                _ => Scan::Or(out),
            }
        }
        Scan::Not(x) => Scan::complement(simplify(x)),
        Scan::GamesWith(x) => Scan::games_with(simplify(x)),
        Scan::Board { .. } => s.map_children(simplify),
        Scan::All
        | Scan::Empty
        | Scan::Flag(_)
        | Scan::Pieces { .. }
        | Scan::Material(_)
        | Scan::GameNumbers(..)
        | Scan::GameResult(_)
        | Scan::GameRange { .. }
        | Scan::GameTag { .. }
        | Scan::FlagGames { .. }
        | Scan::Moves { .. }
        | Scan::Ply(..) => s.clone(),
    }
}

/// Move scans of one `or` about the same move, as one scan (a union of feature bitmaps).
fn merge_moves(out: &mut Vec<Scan>) {
    let mut i = 0;
    while i < out.len() {
        if let Scan::Moves { of, traits } = out[i] {
            let same = out[i + 1..]
                .iter()
                .position(|x| matches!(x, Scan::Moves { of: o, .. } if *o == of));
            if let Some(j) = same {
                if let Scan::Moves { traits: t, .. } = out.remove(i + 1 + j) {
                    out[i] = Scan::Moves {
                        of,
                        traits: traits.union(t),
                    };
                }
                continue;
            }
        }
        i += 1;
    }
}

/// The material tests of one `and`, as one scan: one pass over the material bitmaps instead
/// of one per test.
fn merge_material(out: &mut Vec<Scan>) {
    let mut tests = Vec::new();
    let mut first = None;
    let mut i = 0;
    while i < out.len() {
        if let Scan::Material(t) = &out[i] {
            tests.extend(t.iter().copied());
            first.get_or_insert(i);
            if first != Some(i) {
                out.remove(i);
                continue;
            }
        }
        i += 1;
    }
    if let Some(f) = first {
        out[f] = Scan::Material(tests);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PositionFlag::*;
    use crate::plan::{MoveOf, MoveTraits};

    #[test]
    fn move_scans_about_one_move_merge_under_or() {
        let m = |of, traits| Scan::Moves { of, traits };
        let s = Scan::Or(vec![
            m(MoveOf::Reached, MoveTraits::CASTLE_KING_SIDE),
            Scan::Flag(Mate),
            m(MoveOf::Leaving, MoveTraits::NULL),
            m(MoveOf::Reached, MoveTraits::CASTLE_QUEEN_SIDE),
        ]);
        assert_eq!(
            simplify(&s),
            Scan::Or(vec![
                m(
                    MoveOf::Reached,
                    MoveTraits::CASTLE_KING_SIDE.union(MoveTraits::CASTLE_QUEEN_SIDE)
                ),
                Scan::Flag(Mate),
                m(MoveOf::Leaving, MoveTraits::NULL),
            ])
        );
    }

    #[test]
    fn folds() {
        let c = Scan::Flag(Check);
        let m = Scan::Flag(Mate);
        let nested = Scan::And(vec![
            c.clone(),
            Scan::And(vec![m.clone(), c.clone(), Scan::All]),
        ]);
        assert_eq!(simplify(&nested), Scan::And(vec![c.clone(), m.clone()]));
        assert_eq!(
            simplify(&Scan::And(vec![c.clone(), Scan::complement(c.clone())])),
            Scan::Empty
        );
        assert_eq!(
            simplify(&Scan::Or(vec![m.clone(), Scan::complement(m.clone())])),
            Scan::All
        );
        assert_eq!(simplify(&Scan::Or(vec![Scan::Empty, m.clone()])), m);
        let t = |count| crate::plan::MaterialTest {
            pieces: 1 << 3,
            op: crate::ast::CmpOp::Eq,
            count,
        };
        assert_eq!(
            simplify(&Scan::And(vec![
                Scan::Material(vec![t(1)]),
                c.clone(),
                Scan::Material(vec![t(2)])
            ])),
            Scan::And(vec![Scan::Material(vec![t(1), t(2)]), c.clone()])
        );
    }
}
