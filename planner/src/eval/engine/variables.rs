//! Variables: assignment (`x = ...`, `x += ...`), dictionaries, `square`/`piece` iteration,
//! `while`, and function calls.

use crate::ast::*;
use crate::eval::context::{Cx, matches};
use crate::eval::value::Value;

use super::Engine;
use crate::eval::board;

/// Limits that keep a runaway query (endless `while`, deep recursion) from hanging a run.
const MAX_LOOP_STEPS: u64 = 10_000_000;
const MAX_CALL_DEPTH: usize = 16;

impl Engine {
    pub(super) fn assign(
        &mut self,
        slot: &usize,
        op: &AssignOp,
        value: &Node,
        cx: &mut Cx,
    ) -> Option<Value> {
        let v = self.eval(value, cx)?;
        let v = match op {
            AssignOp::Set => v,
            AssignOp::IfNonEmpty => match v {
                Value::Set(s) if s != 0 => v,
                _ => return None,
            },
            AssignOp::Piece => {
                let Value::Set(s) = v else { return None };
                let ids = cx.game.piece_ids()[cx.cur as usize];
                let mut occupied = board::bits(s).filter(|&sq| ids[sq as usize] != 0);
                match (occupied.next(), occupied.next()) {
                    (Some(sq), None) => Value::Piece(ids[sq as usize]),
                    _ => return None,
                }
            }
            AssignOp::Arith(bop) => {
                let old = match self.vars[*slot].clone() {
                    Some(old) => old,
                    // A persistent variable starts as the empty value of its type.
                    None if matches!(
                        self.query().vars.get(*slot).map(|v| v.1),
                        Some(VarKind::Persistent { .. })
                    ) =>
                    {
                        match &v {
                            Value::Str(_) => Value::Str(String::new()),
                            Value::Set(_) => Value::Set(0),
                            _ => Value::Num(0),
                        }
                    }
                    None => return None,
                };
                self.binary(*bop, old, v, cx)?
            }
        };
        self.vars[*slot] = Some(v);
        Some(Value::Matched)
    }

    /// `unbind x`, `unbind D`, `unbind D[k]`: always matches.
    pub(super) fn unbind(&mut self, slot: usize, key: Option<&Node>, cx: &mut Cx) -> Option<Value> {
        match key {
            Some(key) => {
                if let Some(k) = self.eval(key, cx) {
                    self.dicts[slot].remove(&k.key());
                }
            }
            None if self.query().vars.get(slot).map(|v| v.1) == Some(VarKind::Dictionary) => {
                self.dicts[slot].clear();
            }
            None => self.vars[slot] = None,
        }
        Some(Value::Matched)
    }

    pub(super) fn dict_get(&mut self, slot: &usize, key: &Node, cx: &mut Cx) -> Option<Value> {
        let k = self.eval(key, cx)?.key();
        self.dicts[*slot].get(&k).cloned()
    }

    pub(super) fn dict_set(
        &mut self,
        slot: &usize,
        key: &Node,
        value: &Node,
        cx: &mut Cx,
    ) -> Option<Value> {
        let k = self.eval(key, cx)?.key();
        let v = self.eval(value, cx)?;
        self.dicts[*slot].insert(k, v);
        Some(Value::Matched)
    }

    pub(super) fn square_iter(
        &mut self,
        slot: &usize,
        all: &bool,
        set: &Node,
        body: &Node,
        cx: &mut Cx,
    ) -> Option<Value> {
        let s = self.set_of(set, cx)?;
        let saved = self.vars[*slot].take();
        let squares = board::bits(s).map(|sq| (sq, Value::Set(1 << sq)));
        let (holds, _, found) = self.quantify(*slot, *all, squares, body, cx);
        self.vars[*slot] = saved;
        iteration_value(*all, holds, found)
    }

    pub(super) fn piece_iter(
        &mut self,
        slot: &usize,
        all: &bool,
        set: &Node,
        body: &Node,
        cx: &mut Cx,
    ) -> Option<Value> {
        let s = self.set_of(set, cx)?;
        let ids = cx.game.piece_ids()[cx.cur as usize];
        let pieces = board::bits(s)
            .filter(|&sq| ids[sq as usize] != 0)
            .map(|sq| (sq, Value::Piece(ids[sq as usize])));
        let (holds, last, found) = self.quantify(*slot, *all, pieces, body, cx);
        // The variable keeps the last matching piece (later filters may use it).
        if last.is_some() {
            self.vars[*slot] = last;
        }
        iteration_value(*all, holds, found)
    }

    /// Binds `slot` to each of `values` (each with its square) in turn and evaluates `body`:
    /// whether it matched for every value (`all`, stopping at the first miss) or for some, the
    /// variable's value after the last match, and the squares of the values it matched for.
    fn quantify(
        &mut self,
        slot: usize,
        all: bool,
        values: impl Iterator<Item = (u32, Value)>,
        body: &Node,
        cx: &mut Cx,
    ) -> (bool, Option<Value>, u64) {
        let mut any = false;
        let mut every = true;
        let mut last = None;
        let mut found = 0u64;
        for (sq, v) in values {
            self.vars[slot] = Some(v);
            let r = self.eval(body, cx);
            if matches(&r) {
                any = true;
                found |= 1 << sq;
                last = self.vars[slot].clone();
            } else {
                every = false;
                if all {
                    break;
                }
            }
        }
        (if all { every } else { any }, last, found)
    }

    pub(super) fn while_loop(&mut self, c: &Node, body: &Node, cx: &mut Cx) -> Option<Value> {
        loop {
            if !one_more_step(cx, "while") {
                return None;
            }
            let vc = self.eval(c, cx);
            if !matches(&vc) {
                break;
            }
            let _ = self.eval(body, cx);
        }
        Some(Value::Matched)
    }

    /// `readfile NAME`: the file's text; a file that cannot be read stops the run.
    pub(super) fn read_file(&mut self, name: &Node, cx: &mut Cx) -> Option<Value> {
        let Value::Str(n) = self.eval(name, cx)? else {
            return None;
        };
        let dir = self.query().header.file_dir.clone();
        let read = crate::filter::files::resolve(dir.as_deref(), &n, false).and_then(|p| {
            use std::io::Read;
            let mut bytes = Vec::new();
            std::fs::File::open(&p)
                .and_then(|f| {
                    f.take(crate::filter::files::MAX_READ + 1)
                        .read_to_end(&mut bytes)
                })
                .map_err(|e| format!("readfile '{n}': {e}"))?;
            if bytes.len() as u64 > crate::filter::files::MAX_READ {
                return Err(format!(
                    "readfile '{n}': larger than {} MiB",
                    crate::filter::files::MAX_READ >> 20
                ));
            }
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        });
        match read {
            Ok(text) => Some(Value::Str(text)),
            Err(why) => {
                cx.halt.get_or_insert(why);
                None
            }
        }
    }

    /// `writefile (NAME TEXT)`: the text added to the file (started afresh by the run's first
    /// write to it); a file that cannot be written stops the run.
    pub(super) fn write_file(&mut self, name: &Node, text: &Node, cx: &mut Cx) -> Option<Value> {
        use std::io::Write;
        let Value::Str(n) = self.eval(name, cx)? else {
            return None;
        };
        let text = match self.eval(text, cx)? {
            Value::Str(s) => s,
            other => self.render(&other, cx),
        };
        let dir = self.query().header.file_dir.clone();
        let wrote = crate::filter::files::resolve(dir.as_deref(), &n, true).and_then(|p| {
            let first = self.written.insert(p.clone());
            std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(!first)
                .truncate(first)
                .open(&p)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(|e| format!("writefile '{n}': {e}"))
        });
        match wrote {
            Ok(()) => Some(Value::Matched),
            Err(why) => {
                cx.halt.get_or_insert(why);
                None
            }
        }
    }

    /// `loop body`: matches if the body matched at least once.
    pub(super) fn body_loop(&mut self, body: &Node, cx: &mut Cx) -> Option<Value> {
        let mut matched = false;
        loop {
            if !one_more_step(cx, "loop") {
                return None;
            }
            let v = self.eval(body, cx);
            if !matches(&v) {
                break;
            }
            matched = true;
        }
        matched.then_some(Value::Matched)
    }

    pub(super) fn call(&mut self, f: usize, args: &[Node], cx: &mut Cx) -> Option<Value> {
        if cx.call_depth >= MAX_CALL_DEPTH {
            cx.warn(format!(
                "function calls nested deeper than {MAX_CALL_DEPTH}; the call fails"
            ));
            return None;
        }
        let q = self.query.clone();
        let func = &q.functions[f];
        // CQL renames each parameter to the variable passed for it, so a variable argument is
        // passed by name: the body reads it bound or not, and what the body assigns to the
        // parameter is the caller's variable afterwards. Any other argument is evaluated into
        // a fresh variable first (the call fails when it has no value). Here that is done by
        // copying a variable argument in before the body and back out after it. Every value
        // is read before any parameter is bound, since a parameter may share its slot with
        // another argument's variable (`f(y x)` for `function f(x y)`).
        let mut incoming = Vec::with_capacity(args.len());
        for (&param, a) in func.params.iter().zip(args) {
            incoming.push(match a.expr {
                Expr::Var(var) if var == param => Incoming::Same,
                Expr::Var(var) => Incoming::Name(var, self.vars[var].clone()),
                _ => Incoming::Value(Some(self.eval(a, cx)?)),
            });
        }
        let saved: Vec<Option<Value>> = func.params.iter().map(|&s| self.vars[s].clone()).collect();
        for (&s, arg) in func.params.iter().zip(&mut incoming) {
            match arg {
                Incoming::Same => {}
                Incoming::Name(_, v) | Incoming::Value(v) => self.vars[s] = v.take(),
            }
        }
        // CQL transforms a call, not a function's definition: the arguments (evaluated above)
        // are read through the transforms around the call, the body is not.
        let outer = std::mem::take(&mut cx.transforms);
        cx.call_depth += 1;
        let r = self.eval(&func.body, cx);
        cx.call_depth -= 1;
        cx.transforms = outer;
        let finals: Vec<Option<Value>> =
            func.params.iter().map(|&s| self.vars[s].clone()).collect();
        for ((&s, v), arg) in func.params.iter().zip(saved).zip(&incoming) {
            if !matches!(arg, Incoming::Same) {
                self.vars[s] = v;
            }
        }
        for (arg, v) in incoming.iter().zip(finals) {
            if let Incoming::Name(var, _) = arg {
                self.vars[*var] = v;
            }
        }
        r
    }
}

/// The value of `square` and `piece` iterations: without `all` the set of squares the body
/// held for (CQL's set filter; empty, it does not match), with `all` whether it held for every
/// one.
fn iteration_value(all: bool, holds: bool, found: u64) -> Option<Value> {
    if all {
        holds.then_some(Value::Matched)
    } else {
        Some(Value::Set(found))
    }
}

/// What a function's parameter is bound to for one call.
enum Incoming {
    /// The argument is the parameter's own variable (same name): nothing to bind or restore.
    Same,
    /// A variable passed by name: its value on entry, written back on exit.
    Name(usize, Option<Value>),
    /// Any other argument's value (taken when the parameter is bound).
    Value(Option<Value>),
}

/// Counts one more turn of a `while` or `loop` in this game; false (with a warning) past
/// [`MAX_LOOP_STEPS`].
fn one_more_step(cx: &mut Cx, what: &str) -> bool {
    cx.steps += 1;
    if cx.steps > MAX_LOOP_STEPS {
        cx.warn(format!(
            "a {what} ran more than {MAX_LOOP_STEPS} steps in this game; stopped it"
        ));
        return false;
    }
    true
}

#[cfg(test)]
mod assignment_tests {
    use crate::filter::testing::{SCHOLAR, matching};

    #[test]
    fn every_assignment_form() {
        // Positions: 0 start, 1 e4, 2 e5, 3 Qh5, 4 Nc6, 5 Bc4, 6 Nf6, 7 Qxf7#, 8 g6.
        // `=?` binds only a set with squares, and fails otherwise.
        assert_eq!(matching("X =? Qh5 isbound X", SCHOLAR), vec![3, 4, 5, 6, 8]);
        assert_eq!(
            matching("X = Qh5 isbound X", SCHOLAR),
            (0..=8).collect::<Vec<_>>()
        );
        assert!(crate::parse("cql() X =? 3").is_err());
        // `piece x = S`: one occupied square, followed as the piece moves.
        assert_eq!(
            matching("initial piece W = Qd1 find (W & f7)", SCHOLAR),
            vec![0]
        );
        assert_eq!(
            matching("piece W = N isbound W", SCHOLAR),
            Vec::<u32>::new()
        );
        assert_eq!(
            matching("piece W = Ng1 isbound W", SCHOLAR),
            (0..=8).collect::<Vec<_>>()
        );
        // unbind: a variable, a dictionary, one entry.
        assert_eq!(matching("X = 1 unbind X isunbound X", SCHOLAR).len(), 9);
        assert_eq!(
            matching(
                "dictionary D D[\"a\"] = 1 D[\"b\"] = 2 unbind D[\"a\"] not D[\"a\"] D[\"b\"] == 2",
                SCHOLAR
            )
            .len(),
            9
        );
        assert_eq!(
            matching("dictionary D D[\"a\"] = 1 unbind D not D[\"a\"]", SCHOLAR).len(),
            9
        );
        // Compound assignment: numbers, strings after `+=`; sets are refused.
        assert_eq!(
            matching("X = 3 X += 2 X -= 1 X *= 2 X /= 2 X %= 3 X == 1", SCHOLAR).len(),
            9
        );
        assert_eq!(
            matching("S = \"a\" S += \"b\" S == \"ab\"", SCHOLAR).len(),
            9
        );
        assert!(crate::parse("cql() S = Q S += q").is_err());
        assert!(
            crate::parse("cql() Y += 1").is_err(),
            "used before it is assigned"
        );
    }
    /// Without `all`, `square` and `piece` stand for the squares their body held for.
    #[test]
    fn iterations_are_the_squares_their_body_held_for() {
        let all: Vec<u32> = (0..=8).collect();
        // At the start the queen on d1 defends the pawns on c2, d2 and e2.
        assert_eq!(
            matching("initial (square x in P {Q attacks x}) == c-e2", SCHOLAR),
            vec![0]
        );
        assert_eq!(
            matching("initial (piece x in P {Q attacks x}) == c-e2", SCHOLAR),
            vec![0]
        );
        assert_eq!(matching("#(square x in . true) == 64", SCHOLAR), all);
        assert_eq!(
            matching("Z = square x in R {x attacks k} #Z == 0", SCHOLAR),
            all
        );
        // Empty, it does not match; `all` is still a test.
        assert_eq!(
            matching("square x in R {x attacks k}", SCHOLAR),
            Vec::<u32>::new()
        );
        assert_eq!(
            matching("initial square all x in P {Q attacks x}", SCHOLAR),
            Vec::<u32>::new()
        );
        assert_eq!(
            matching("initial square all x in c-e2 {Q attacks x}", SCHOLAR),
            vec![0]
        );
    }

    /// A variable argument is passed by name (the parameter is renamed to it); anything else,
    /// `{y}` included, is a value copied into the parameter.
    #[test]
    fn functions_take_variables_by_name() {
        let all: Vec<u32> = (0..=8).collect();
        let cube = "function Cube(x){x = x * x * x} ";
        assert_eq!(
            matching(&format!("{cube} y = 3 Cube(y) y == 27"), SCHOLAR),
            all
        );
        assert_eq!(
            matching(&format!("{cube} y = 3 Cube({{y}}) y == 3"), SCHOLAR),
            all
        );
        // The call's value is still the body's.
        assert_eq!(
            matching(
                "function Dbl(x){x = x * 2 x} y = 4 Dbl(y) == 8 y == 8",
                SCHOLAR
            ),
            all
        );
        // An unbound variable is passed unbound, and bound by the body.
        assert_eq!(
            matching(
                "function Set(v){v = 5} w = 1 unbind w Set(w) w == 5",
                SCHOLAR
            ),
            all
        );
        assert_eq!(
            matching(
                "function Bound(v){isbound v} w = 1 unbind w Bound(w)",
                SCHOLAR
            ),
            Vec::<u32>::new()
        );
        // Parameters named like the caller's variables, passed crosswise.
        assert_eq!(
            matching(
                "function Swap(One Two){T = One One = Two Two = T} One = 1 Two = 2 Swap(Two One) One == 2 Two == 1",
                SCHOLAR
            ),
            all
        );
        // The same name as the parameter; and a parameter that shadows an unrelated global
        // gets the global back after the call.
        assert_eq!(
            matching(
                "function Inc(Cnt){Cnt += 1} Cnt = 1 Inc(Cnt) Inc(Cnt) Cnt == 3",
                SCHOLAR
            ),
            all
        );
        assert_eq!(
            matching(
                "function Inc(Cnt){Cnt += 1} Cnt = 7 Other = 1 Inc(Other) Other == 2 Cnt == 7",
                SCHOLAR
            ),
            all
        );
        // Set variables, and a recursive call through a by-name parameter.
        assert_eq!(
            matching(
                "function Grow(Z){Z = Z | h5} S = f7 Grow(S) S == [f7,h5]",
                SCHOLAR
            ),
            all
        );
        assert_eq!(
            matching(
                "function Down(Dn){if Dn > 0 {Dn -= 1 Down(Dn)} else true} Ct = 4 Down(Ct) Ct == 0",
                SCHOLAR
            ),
            all
        );
    }
}
