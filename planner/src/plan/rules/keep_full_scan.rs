//! `keep_full_scan`: some queries must see every game, whatever the index says.

use super::{Draft, Rule};
use crate::ast::{Expr, Node};

/// Turns pruning off for `--full-scan`, for queries whose variables or dictionaries carry
/// state from game to game (skipping a game would change what later games see), and for
/// queries that print `message`s (a message is printed even at positions that do not match).
pub struct KeepFullScan;

impl Rule for KeepFullScan {
    fn name(&self) -> &'static str {
        "keep_full_scan"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        let q = &d.logical.query;
        let why = if d.logical.full_scan {
            "--full-scan"
        } else if q.has_state() {
            "the query keeps variables from game to game"
        } else if q.body.iter().any(prints) || q.functions.iter().any(|f| prints(&f.body)) {
            "the query prints messages at every position"
        } else {
            return None;
        };
        d.no_pruning = Some(why.to_owned());
        Some(format!("every game is read ({why})"))
    }
}

/// Whether a `message` is somewhere in the filter.
fn prints(n: &Node) -> bool {
    let mut found = false;
    n.walk(&mut |x| found |= matches!(x.expr, Expr::Message(_)));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::tests::draft;

    #[test]
    fn state_messages_and_the_flag_keep_the_full_scan() {
        for q in [
            "x = 1 mate",
            "mate message(\"hi\")",
            "function f() { message(1) } mate f()",
        ] {
            let mut d = draft(q);
            assert!(KeepFullScan.apply(&mut d).is_some(), "{q}");
            assert!(d.no_pruning.is_some());
        }
        let mut d = draft("mate");
        assert!(KeepFullScan.apply(&mut d).is_none());
        d.logical.full_scan = true;
        assert!(KeepFullScan.apply(&mut d).is_some());
    }
}
