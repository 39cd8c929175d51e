//! `header_scans`: the header's game filters as game scans.

use super::{Draft, Rule};
use crate::plan::Scan;

/// `gamenumber N M` (header or command line) becomes a scan of those games' positions, and
/// `result R` a scan of the games whose Result tag is `R`; both exact.
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
        if let Some(r) = h.result.as_deref() {
            let games = Scan::GameResult(r.to_owned());
            d.upper = Scan::and(games.clone(), std::mem::replace(&mut d.upper, Scan::All));
            d.lower = Scan::and(games, std::mem::replace(&mut d.lower, Scan::All));
            notes.push(format!("result {r}"));
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
        // As the body's bounds leave them for an exact body.
        d.lower = Scan::All;
        assert!(HeaderScans.apply(&mut d).is_some());
        assert_eq!(
            d.upper,
            Scan::And(vec![
                Scan::GameResult("1-0".into()),
                Scan::GameNumbers(3, 9)
            ])
        );
        assert_eq!(d.lower, d.upper);
        let mut d = draft_src("cql(result *) mate");
        d.lower = Scan::All;
        assert!(HeaderScans.apply(&mut d).is_some());
        assert_eq!(d.upper, Scan::GameResult("*".into()));
        assert_eq!(d.lower, d.upper);
        let mut d = draft_src("cql() mate");
        assert!(HeaderScans.apply(&mut d).is_none());
    }
}
