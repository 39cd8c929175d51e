//! `keep_full_scan`: some queries must see every game, whatever the index says.

use super::{Draft, Rule};
use crate::ast::{Expr, Node};

/// Turns pruning off for `--full-scan`, for queries whose `persistent` variables or
/// dictionaries carry state from game to game (other variables start each game unbound) (skipping a game would change what later games see), and for
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
            "the query keeps persistent variables or dictionaries from game to game"
        } else if q.body.iter().any(prints) || q.functions.iter().any(|f| prints(&f.body)) {
            "the query prints messages at every position"
        } else if q.body.iter().any(asserts) || q.functions.iter().any(|f| asserts(&f.body)) {
            "an assert must see every position the query visits"
        } else {
            return None;
        };
        d.no_pruning = Some(why.to_owned());
        Some(format!("every game is read ({why})"))
    }
}

/// Whether an `assert` is somewhere in the filter.
fn asserts(n: &Node) -> bool {
    let mut found = false;
    n.walk(&mut |x| found |= matches!(x.expr, Expr::Assert(_)));
    found
}

/// Whether a `message` is somewhere in the filter.
fn prints(n: &Node) -> bool {
    let mut found = false;
    n.walk(&mut |x| found |= matches!(x.expr, Expr::Message(..)));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::tests::draft;

    #[test]
    fn state_messages_and_the_flag_keep_the_full_scan() {
        for q in [
            "persistent x = 1 mate",
            "dictionary D mate",
            "mate message(\"hi\")",
            "function f() { message(1) } mate f()",
        ] {
            let mut d = draft(q);
            assert!(KeepFullScan.apply(&mut d).is_some(), "{q}");
            assert!(d.no_pruning.is_some());
        }
        let mut d = draft("mate");
        assert!(KeepFullScan.apply(&mut d).is_none());
        // A variable of one game's own does not stop pruning.
        assert!(KeepFullScan.apply(&mut draft("x = 1 mate")).is_none());
        d.logical.full_scan = true;
        assert!(KeepFullScan.apply(&mut d).is_some());
    }
}
