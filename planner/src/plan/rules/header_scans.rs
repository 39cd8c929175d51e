//! `header_scans`: the header's game filters as game scans.

use super::{Draft, Rule};
use crate::plan::Scan;

/// `gamenumber N M` (header or command line) becomes a scan of those games' positions, exact;
/// `result R` a scan of the games with that result, an upper bound only (the index counts a
/// game without a Result tag by its termination marker, the filter by the tag alone).
pub struct HeaderScans;

impl Rule for HeaderScans {
    fn name(&self) -> &'static str {
        "header_scans"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        if d.no_pruning.is_some() {
            return None;
        }
        let h = &d.logical.query.header;
        let mut notes = Vec::new();
        if let Some((lo, hi)) = h.gamenumber {
            let games = Scan::GameNumbers(lo, hi);
            d.upper = Scan::and(games.clone(), std::mem::replace(&mut d.upper, Scan::All));
            d.lower = Scan::and(games, std::mem::replace(&mut d.lower, Scan::All));
            notes.push(format!("gamenumber {lo}..={hi}"));
        }
        match h.result.as_deref() {
            // `*` has no sound scan (a game tagged `*` is indexed by its termination marker):
            // the residual decides, so the plan is not exact.
            Some("*") => {
                d.lower = Scan::Empty;
                notes.push("result * left to the residual".to_owned());
            }
            Some(r) => {
                let games = Scan::GameResult(r.to_owned());
                d.upper = Scan::and(games, std::mem::replace(&mut d.upper, Scan::All));
                d.lower = Scan::Empty;
                notes.push(format!("result {r}"));
            }
            None => {}
        }
        (!notes.is_empty()).then(|| format!("header filters: {}", notes.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::tests::draft_src;

    #[test]
    fn gamenumber_and_result() {
        let mut d = draft_src("cql(gamenumber 3 9 result 1-0) mate");
        assert!(HeaderScans.apply(&mut d).is_some());
        assert_eq!(
            d.upper,
            Scan::And(vec![
                Scan::GameResult("1-0".into()),
                Scan::GameNumbers(3, 9)
            ])
        );
        assert_eq!(d.lower, Scan::Empty);
        let mut d = draft_src("cql() mate");
        assert!(HeaderScans.apply(&mut d).is_none());
    }
}
