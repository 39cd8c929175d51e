//! `factor_conjuncts`: an operand that every branch of an `or` intersects with is read once.

use super::simplify::simplify;
use super::{Draft, Rule};
use crate::plan::Scan;

/// Rewrites `(a and b) or (a and c)` as `a and (b or c)`, at every `or` of the scans. A
/// colour-symmetric filter under `flipcolor` (`flipcolor { Pa-h7 check }`) gives each colour's
/// branch the same operand: without this, its bitmap is read and intersected once per branch.
/// The two forms select the same positions (intersection distributes over union).
pub struct FactorConjuncts;

impl Rule for FactorConjuncts {
    fn name(&self) -> &'static str {
        "factor_conjuncts"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        let (u, l) = (simplify(&factor(&d.upper)), simplify(&factor(&d.lower)));
        let changed = u != d.upper || l != d.lower;
        d.upper = u;
        d.lower = l;
        changed.then(|| "operands common to every branch of an or read once".to_owned())
    }
}

/// The scan with the common operands of each `or` factored out (recursion follows the query's
/// nesting, which the parser limits).
pub fn factor(s: &Scan) -> Scan {
    let s = s.map_children(factor);
    let Scan::Or(branches) = &s else {
        return s;
    };
    let conjuncts = |x: &Scan| -> Vec<Scan> {
        match x {
            Scan::And(ys) => ys.clone(),
            y => vec![y.clone()],
        }
    };
    let Some(first) = branches.first() else {
        return s;
    };
    let common: Vec<Scan> = conjuncts(first)
        .into_iter()
        .filter(|c| branches[1..].iter().all(|b| conjuncts(b).contains(c)))
        .collect();
    if common.is_empty() || branches.len() < 2 {
        return s;
    }
    let rest = branches
        .iter()
        .map(|b| {
            Scan::And(
                conjuncts(b)
                    .into_iter()
                    .filter(|c| !common.contains(c))
                    .collect(),
            )
        })
        .collect();
    let mut parts = common;
    parts.push(Scan::Or(rest));
    simplify(&Scan::And(parts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PositionFlag::*;

    fn pieces(squares: u64) -> Scan {
        Scan::Pieces { pieces: 1, squares }
    }

    #[test]
    fn a_shared_operand_moves_out_of_the_or() {
        let s = Scan::Or(vec![
            Scan::And(vec![Scan::Flag(Check), pieces(1)]),
            Scan::And(vec![pieces(2), Scan::Flag(Check)]),
        ]);
        assert_eq!(
            factor(&s),
            Scan::And(vec![
                Scan::Flag(Check),
                Scan::Or(vec![pieces(1), pieces(2)])
            ])
        );
    }

    #[test]
    fn a_branch_that_is_only_the_shared_operand_absorbs_the_rest() {
        // (a) or (a and b) is a.
        let s = Scan::Or(vec![
            Scan::Flag(Mate),
            Scan::And(vec![Scan::Flag(Mate), pieces(4)]),
        ]);
        assert_eq!(factor(&s), Scan::Flag(Mate));
    }

    #[test]
    fn nothing_shared_nothing_changed() {
        let s = Scan::Or(vec![
            Scan::And(vec![Scan::Flag(Check), pieces(1)]),
            Scan::And(vec![Scan::Flag(Mate), pieces(2)]),
        ]);
        assert_eq!(factor(&s), s);
        // Nested: the inner `or` is factored, the outer one is left.
        let inner = Scan::Or(vec![
            Scan::And(vec![Scan::Flag(Stalemate), pieces(1)]),
            Scan::And(vec![Scan::Flag(Stalemate), pieces(2)]),
        ]);
        let s = Scan::And(vec![Scan::Flag(Mainline), inner]);
        assert_eq!(
            factor(&s),
            Scan::And(vec![
                Scan::Flag(Mainline),
                Scan::And(vec![
                    Scan::Flag(Stalemate),
                    Scan::Or(vec![pieces(1), pieces(2)])
                ])
            ])
        );
    }

    #[test]
    fn flipcolor_of_a_symmetric_filter_reads_it_once() {
        let mut d = super::super::tests::draft("flipcolor { Pa-h7 check }");
        for r in [
            &super::super::IndexBounds as &dyn Rule,
            &super::super::Simplify,
            &FactorConjuncts,
        ] {
            r.apply(&mut d);
        }
        let mut checks = 0;
        d.upper
            .visit(&mut |s| checks += usize::from(*s == Scan::Flag(Check)));
        assert_eq!(checks, 1, "{:?}", d.upper);
    }
}
