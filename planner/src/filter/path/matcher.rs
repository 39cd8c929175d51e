//! The best match of a `path` or `line` pattern from one position: the pattern compiled to a
//! small automaton (a Thompson NFA), run over the game tree.
//!
//! A state of the search is (automaton state, position). Moving on (a dash constituent, a
//! line's step) goes to a child (or, for `line <--`, to the parent), so positions only grow
//! (or only shrink) along a run: the states form a directed acyclic graph, and the longest run
//! to an accepting state is found by one depth-first pass with each state's answer kept,
//! iteratively (a line of a million moves needs no deep stack). Repetitions of constituents
//! that cannot move (`(check)*`) are bounded so that the automaton has no loop without a move.

use rustc_hash::FxHashMap;

/// A search state one step on: (NFA state, position, moves counted, positions walked).
type Successor = (usize, u32, u32, u32);

use crate::ast::{Dash, Node, PathFilter, PathKind, Pattern};
use crate::eval::{Cx, Evaluate, matches};

/// The most search states one match may visit before it gives up (with a warning).
const MAX_STATES: usize = 4_000_000;

/// The position before a line's first constituent (its first step enters the start).
const BEFORE: u32 = u32::MAX;

enum St<'q> {
    Eps(Vec<usize>),
    Test(&'q Node, usize),
    Move(&'q Dash, &'q [Node], usize),
    Step(usize),
    Accept,
}

/// A compiled pattern.
pub(super) struct Nfa<'q> {
    states: Vec<St<'q>>,
    start: usize,
}

/// Whether `p` can match without a move.
fn nullable(p: &Pattern) -> bool {
    match p {
        Pattern::Seq(items) => items.iter().all(nullable),
        Pattern::Repeat(inner, min, _) => *min == 0 || nullable(inner),
        Pattern::Test(_) => true,
        Pattern::Move(..) | Pattern::Step => false,
    }
}

impl<'q> Nfa<'q> {
    /// The automaton of `p`.
    pub(super) fn of(p: &'q Pattern) -> Self {
        let mut nfa = Nfa {
            states: vec![St::Accept],
            start: 0,
        };
        nfa.start = nfa.build(p, 0);
        nfa
    }

    fn push(&mut self, s: St<'q>) -> usize {
        self.states.push(s);
        self.states.len() - 1
    }

    /// The start of `p`'s fragment, which continues at `next`.
    fn build(&mut self, p: &'q Pattern, next: usize) -> usize {
        match p {
            Pattern::Seq(items) => items.iter().rev().fold(next, |n, i| self.build(i, n)),
            Pattern::Test(n) => self.push(St::Test(n, next)),
            Pattern::Move(d, then) => self.push(St::Move(d, then, next)),
            Pattern::Step => self.push(St::Step(next)),
            Pattern::Repeat(inner, min, max) => {
                // A part that cannot move gains nothing by repeating: once is enough.
                let (min, max) = if nullable(inner) {
                    ((*min).min(1), Some(1))
                } else {
                    (*min, *max)
                };
                let mut after = next;
                match max {
                    Some(max) => {
                        for _ in min..max {
                            let body = self.build(inner, after);
                            after = self.push(St::Eps(vec![body, after]));
                        }
                    }
                    None => {
                        // loop: either the part again (back here), or on.
                        let entry = self.push(St::Eps(Vec::new()));
                        let body = self.build(inner, entry);
                        self.states[entry] = St::Eps(vec![body, after]);
                        after = entry;
                    }
                }
                for _ in 0..min {
                    after = self.build(inner, after);
                }
                after
            }
        }
    }
}

/// One run's best end: how it compares, how many moves it counted and walked, where it ends,
/// and the next search state along it.
#[derive(Clone, Copy, Debug)]
struct Best {
    key: i64,
    len: u32,
    walked: u32,
    end: u32,
    via: Option<(u32, u32)>,
}

/// A match found.
#[derive(Debug)]
pub(super) struct Found {
    /// Moves counted (`path`: focused moves; `line`: positions).
    pub len: u32,
    /// Moves walked, unfocused ones included.
    pub walked: u32,
    /// The position it ends at.
    pub end: u32,
    /// The positions it passes through after the start, in order.
    pub positions: Vec<u32>,
}

/// What a search knows of the filter and the game.
pub(super) struct Search<'q> {
    pub f: &'q PathFilter,
    pub nfa: Nfa<'q>,
    /// Piece identities (ids of `piece_ids`) in focus, if `focus` was given.
    pub focus: Option<Vec<u8>>,
    pub start: u32,
}

impl Search<'_> {
    /// The positions one move (or, for `singlecolor`, two) away from `pos` that the filter
    /// may walk to.
    fn steps(&self, pos: u32, cx: &Cx) -> Vec<u32> {
        let g = cx.game;
        let p = &self.f.params;
        let one = |id: u32| -> Vec<u32> {
            match self.f.kind {
                PathKind::Line { backward: true } => g.parent(id).into_iter().collect(),
                PathKind::Path | PathKind::Line { backward: false } => g
                    .children(id)
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| !(p.primary && i > 0 || p.secondary && i == 0))
                    .map(|(_, &c)| c)
                    .collect(),
            }
        };
        if p.singlecolor {
            one(pos).into_iter().flat_map(one).collect()
        } else {
            one(pos)
        }
    }

    /// The moves a dash may take from `pos`: the position it reaches and how many unfocused
    /// moves were walked over before it.
    fn move_targets(&self, pos: u32, cx: &Cx) -> Vec<(u32, u32)> {
        let Some(focus) = &self.focus else {
            return self.steps(pos, cx).into_iter().map(|c| (c, 0)).collect();
        };
        let g = cx.game;
        let ids = g.piece_ids();
        let capture = self.f.params.focus.as_ref().is_some_and(|(c, _)| *c);
        let in_focus = |parent: u32, child: u32| -> bool {
            let mv = g.positions[child as usize].mv;
            let Some(c) = crate::eval::candidate::from_code(mv, Some(child)) else {
                return false;
            };
            let before = &ids[parent as usize];
            focus.contains(&before[c.from as usize])
                || (capture
                    && c.captured.is_some_and(|s| {
                        before[s as usize] != 0 && focus.contains(&before[s as usize])
                    }))
        };
        let mut out = Vec::new();
        let mut frontier = vec![(pos, 0u32)];
        while let Some((at, skipped)) = frontier.pop() {
            for c in self.steps(at, cx) {
                if in_focus(at, c) {
                    out.push((c, skipped));
                } else {
                    frontier.push((c, skipped + 1));
                }
            }
        }
        out
    }

    /// The search states one step after (state, pos).
    fn successors(
        &self,
        state: usize,
        pos: u32,
        ev: &mut impl Evaluate,
        cx: &mut Cx,
    ) -> Vec<Successor> {
        match &self.nfa.states[state] {
            St::Accept => Vec::new(),
            St::Eps(next) => next.iter().map(|&n| (n, pos, 0, 0)).collect(),
            St::Test(n, next) => {
                if pos == BEFORE {
                    return Vec::new();
                }
                cx.cur = pos;
                let v = ev.value(n, cx);
                if matches(&v) {
                    vec![(*next, pos, 0, 0)]
                } else {
                    Vec::new()
                }
            }
            St::Step(next) => {
                if pos == BEFORE {
                    return vec![(*next, self.start, 1, 1)];
                }
                self.steps(pos, cx)
                    .into_iter()
                    .map(|c| (*next, c, 1, 1))
                    .collect()
            }
            St::Move(d, then, next) => {
                if pos == BEFORE {
                    return Vec::new();
                }
                let mut out = Vec::new();
                for (c, skipped) in self.move_targets(pos, cx) {
                    cx.cur = c;
                    let moved = crate::filter::dash::matching(d, ev, cx)
                        .is_some_and(|(_, count)| count > 0);
                    if !moved {
                        continue;
                    }
                    let holds = then.iter().all(|t| {
                        cx.cur = c;
                        let v = ev.value(t, cx);
                        matches(&v)
                    });
                    if holds {
                        out.push((*next, c, 1, 1 + skipped));
                    }
                }
                out
            }
        }
    }

    /// The best match from the start, if any (`None` also when the search was too large:
    /// then a warning says so).
    pub(super) fn run(&self, ev: &mut impl Evaluate, cx: &mut Cx) -> Option<Found> {
        let saved = cx.cur;
        let origin = match self.f.kind {
            PathKind::Path => self.start,
            PathKind::Line { .. } => BEFORE,
        };
        let mut memo: FxHashMap<(u32, u32), Option<Best>> = FxHashMap::default();
        let mut succ: FxHashMap<(u32, u32), Vec<Successor>> = FxHashMap::default();
        let mut keys: FxHashMap<u32, i64> = FxHashMap::default();
        let mut stack: Vec<(usize, u32)> = vec![(self.nfa.start, origin)];
        let mut too_large = false;
        while let Some(&(state, pos)) = stack.last() {
            let key = (state as u32, pos);
            if memo.contains_key(&key) {
                stack.pop();
                continue;
            }
            if let Some(next) = succ.get(&key) {
                // Every successor is done: combine.
                let mut best: Option<Best> = None;
                for &(s, p, counted, walked) in next {
                    let Some(Some(b)) = memo.get(&(s as u32, p)) else {
                        continue;
                    };
                    let cand = Best {
                        key: if self.f.params.max.is_some() {
                            b.key
                        } else {
                            b.key + i64::from(counted)
                        },
                        len: b.len + counted,
                        walked: b.walked + walked,
                        end: b.end,
                        via: Some((s as u32, p)),
                    };
                    let better = match best {
                        None => true,
                        Some(old) => !self.f.params.firstmatch && cand.key > old.key,
                    };
                    if better {
                        best = Some(cand);
                    }
                }
                memo.insert(key, best);
                stack.pop();
                continue;
            }
            if matches!(self.nfa.states[state], St::Accept) {
                let k = match &self.f.params.max {
                    Some(f) => *keys.entry(pos).or_insert_with(|| {
                        cx.cur = pos;
                        match ev.value(f, cx) {
                            Some(crate::eval::value::Value::Num(n)) => n,
                            _ => i64::MIN / 2,
                        }
                    }),
                    None => 0,
                };
                let valid = pos != BEFORE && !(self.f.params.max.is_some() && k == i64::MIN / 2);
                memo.insert(
                    key,
                    valid.then_some(Best {
                        key: k,
                        len: 0,
                        walked: 0,
                        end: pos,
                        via: None,
                    }),
                );
                stack.pop();
                continue;
            }
            if memo.len() + succ.len() > MAX_STATES {
                too_large = true;
                break;
            }
            let next = self.successors(state, pos, ev, cx);
            for &(s, p, _, _) in &next {
                if !memo.contains_key(&(s as u32, p)) && !succ.contains_key(&(s as u32, p)) {
                    stack.push((s, p));
                }
            }
            succ.insert(key, next);
        }
        cx.cur = saved;
        if too_large {
            cx.warn(format!(
                "a path or line search passed {MAX_STATES} states; it was stopped (no match there)"
            ));
            return None;
        }
        let best = memo
            .get(&(self.nfa.start as u32, origin))
            .copied()
            .flatten()?;
        let mut positions = Vec::new();
        let mut at = best.via;
        let mut last = origin;
        while let Some((s, p)) = at {
            if p != last && p != BEFORE {
                positions.push(p);
                last = p;
            }
            at = memo.get(&(s, p)).copied().flatten().and_then(|b| b.via);
        }
        Some(Found {
            len: best.len,
            walked: best.walked,
            end: best.end,
            positions,
        })
    }
}
