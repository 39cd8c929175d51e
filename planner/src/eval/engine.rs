//! The engine: a game's positions walked in order, the body evaluated at each, and the core of the
//! language (logic, comparison, arithmetic, variables, functions, strings).

use std::sync::Arc;

use crate::Query;
use crate::ast::*;
use crate::transform;
use rustc_hash::FxHashMap;

use crate::eval::board;
use crate::eval::context::{Cx, Evaluate, matches};
use crate::eval::game::Game;
use crate::eval::value::Value;
use crate::filter;

/// Limits that keep a runaway query (endless `while`, deep recursion) from hanging a run.
const MAX_LOOP_STEPS: u64 = 10_000_000;
const MAX_CALL_DEPTH: usize = 16;

/// What a game produced.
#[derive(Clone, Debug, Default)]
pub struct GameMatch {
    /// Matched position ids, in visiting order.
    pub matched: Vec<u32>,
    /// `comment(...)` output per position id, in order.
    pub comments: Vec<(u32, String)>,
    /// `message(...)` lines.
    pub messages: Vec<String>,
    /// Why parts of the query could not be evaluated on this game (each once).
    pub warnings: Vec<String>,
    /// Sort values to show in the game comment (`matchcount: 22`).
    pub sort_notes: Vec<String>,
    /// Whether the game passes `matchcount` and the header filters.
    pub selected: bool,
}

/// Evaluates one query over games, keeping variables and dictionaries across games as CQL does.
pub struct Engine {
    query: Arc<Query>,
    pub(crate) vars: Vec<Option<Value>>,
    pub(crate) dicts: Vec<FxHashMap<String, Value>>,
    pub(crate) regexes: FxHashMap<String, Option<regex::Regex>>,
    /// Visit variation positions too.
    pub variations: bool,
}

impl Engine {
    /// An engine for `query`; `variations` forces variations on (`-variations`).
    pub fn new(query: Query, variations: bool) -> Self {
        let n = query.vars.len();
        let variations = variations || query.header.variations;
        Self {
            query: Arc::new(query),
            vars: vec![None; n],
            dicts: vec![FxHashMap::default(); n],
            regexes: FxHashMap::default(),
            variations,
        }
    }

    /// A fresh engine for the same query (shares the parsed query; own variables and caches).
    /// Only equivalent to this one for queries without state ([`Query::has_state`]).
    pub fn fork(&self) -> Self {
        let n = self.query.vars.len();
        Self {
            query: self.query.clone(),
            vars: vec![None; n],
            dicts: vec![FxHashMap::default(); n],
            regexes: FxHashMap::default(),
            variations: self.variations,
        }
    }

    /// The query.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// Evaluates the query at every visible position of `game`.
    pub fn run_game(&mut self, game: &Game) -> GameMatch {
        let q = self.query.clone();
        let mut out = GameMatch::default();
        let h = &q.header;
        if let Some((lo, hi)) = h.gamenumber {
            let n = game.number as i64;
            if n < lo || n > hi {
                return out;
            }
        }
        if let Some(r) = &h.result
            && game.tag("Result") != Some(r.as_str())
        {
            return out;
        }
        let mut cx = Cx {
            game,
            cur: 0,
            groups: Vec::new(),
            comments: Vec::new(),
            messages: Vec::new(),
            chess: FxHashMap::default(),
            warnings: Vec::new(),
            flip: false,
            call_depth: 0,
            steps: 0,
        };
        for id in 0..game.len() as u32 {
            if !game.visible(id) {
                continue;
            }
            cx.cur = id;
            let mark = cx.comments.len();
            let ok = q.body.iter().all(|f| {
                let v = self.eval(f, &mut cx);
                matches(&v)
            });
            if ok {
                out.matched.push(id);
            } else {
                cx.comments.truncate(mark);
            }
        }
        let (lo, hi) = h.matchcount.unwrap_or((1, i64::MAX));
        let n = out.matched.len() as i64;
        out.selected = n >= lo.max(1) && n <= hi;
        if h.sort_matchcount {
            out.sort_notes.push(format!("matchcount: {n}"));
        }
        out.comments = cx.comments;
        out.messages = cx.messages;
        out.warnings = cx.warnings;
        out
    }

    /// Evaluates `n` at `cx.cur`: `None` if it does not match.
    pub(crate) fn eval(&mut self, n: &Node, cx: &mut Cx) -> Option<Value> {
        use Expr::*;
        let rec = &cx.game.positions[cx.cur as usize];
        match &n.expr {
            Number(v) => Some(Value::Num(*v)),
            Str(s) => Some(Value::Str(s.clone())),
            True | Declaration => Some(Value::Matched),
            False => None,
            Pieces(d) => Some(Value::Set(if cx.flip {
                board::designate(rec, &transform::flip_piece_set(*d))
            } else {
                board::designate(rec, d)
            })),
            Compound(items) => {
                let mut last = Value::Matched;
                for it in items {
                    let v = self.eval(it, cx);
                    if !matches(&v) {
                        return None;
                    }
                    last = v?;
                }
                Some(last)
            }
            And(a, b) => {
                let va = self.eval(a, cx);
                if !matches(&va) {
                    return None;
                }
                let vb = self.eval(b, cx);
                matches(&vb).then_some(Value::Matched)
            }
            Or(a, b) => {
                let va = self.eval(a, cx);
                if matches(&va) {
                    return Some(Value::Matched);
                }
                let vb = self.eval(b, cx);
                matches(&vb).then_some(Value::Matched)
            }
            Not(a) => {
                let mark = cx.comments.len();
                let v = self.eval(a, cx);
                cx.comments.truncate(mark);
                (!matches(&v)).then_some(Value::Matched)
            }
            If(c, t, e) => {
                let mark = cx.comments.len();
                let vc = self.eval(c, cx);
                if matches(&vc) {
                    self.eval(t, cx)
                } else {
                    cx.comments.truncate(mark);
                    match e {
                        Some(e) => self.eval(e, cx),
                        None => Some(Value::Matched),
                    }
                }
            }
            Compare(first, rest) => {
                let mut values = Vec::with_capacity(rest.len() + 1);
                values.push(self.eval(first, cx)?);
                for (_, rhs) in rest {
                    values.push(self.eval(rhs, cx)?);
                }
                // In a chain with a number (`Q == q == 1`) every set stands for its size.
                if values.len() > 2 && values.iter().any(|v| matches!(v, Value::Num(_))) {
                    for v in &mut values {
                        if let Some(s) = self.as_set(v, cx) {
                            *v = Value::Num(i64::from(s.count_ones()));
                        }
                    }
                }
                for (i, (op, _)) in rest.iter().enumerate() {
                    if !self.compare(*op, &values[i], &values[i + 1], cx)? {
                        return None;
                    }
                }
                Some(Value::Matched)
            }
            Binary(op, a, b) => {
                let va = self.eval(a, cx)?;
                let vb = self.eval(b, cx)?;
                self.binary(*op, va, vb, cx)
            }
            Neg(a) => match self.eval(a, cx)? {
                Value::Num(v) => Some(Value::Num(-v)),
                _ => None,
            },
            Complement(a) => {
                let s = self.set_of(a, cx)?;
                Some(Value::Set(!s))
            }
            Count(a) => match self.eval(a, cx)? {
                Value::Str(s) => Some(Value::Num(s.chars().count() as i64)),
                v => Some(Value::Num(self.as_set(&v, cx)?.count_ones() as i64)),
            },
            In(a, b) => {
                let va = self.eval(a, cx)?;
                let vb = self.eval(b, cx)?;
                match (&va, &vb) {
                    (Value::Str(x), Value::Str(y)) => {
                        y.contains(x.as_str()).then_some(Value::Matched)
                    }
                    _ => {
                        let (x, y) = (self.as_set(&va, cx)?, self.as_set(&vb, cx)?);
                        (x & !y == 0).then_some(Value::Matched)
                    }
                }
            }
            Regex(a, b) => {
                let Value::Str(text) = self.eval(a, cx)? else {
                    return None;
                };
                let Value::Str(pattern) = self.eval(b, cx)? else {
                    return None;
                };
                let re = self
                    .regexes
                    .entry(pattern.clone())
                    .or_insert_with(|| regex::Regex::new(&pattern).ok())
                    .as_ref()?;
                let caps = re.captures(&text)?;
                cx.groups = caps
                    .iter()
                    .map(|m| m.map(|m| m.as_str().to_owned()))
                    .collect();
                Some(Value::Str(caps.get(0)?.as_str().to_owned()))
            }
            Group(g) => cx
                .groups
                .get(*g as usize)
                .cloned()
                .flatten()
                .map(Value::Str),
            Colon(p, f) => {
                let Value::Pos(target) = self.eval(p, cx)? else {
                    return None;
                };
                let saved = cx.cur;
                cx.cur = target;
                let v = self.eval(f, cx);
                cx.cur = saved;
                v.filter(|v| matches(&Some(v.clone())))
            }
            Abs(a) => match self.eval(a, cx)? {
                Value::Num(v) => Some(Value::Num(v.abs())),
                _ => None,
            },
            Sqrt(a) => match self.eval(a, cx)? {
                Value::Num(v) if v >= 0 => Some(Value::Num((v as f64).sqrt() as i64)),
                _ => None,
            },
            MinMax(max, args) => {
                let mut best: Option<i64> = None;
                for a in args {
                    let v = match self.eval(a, cx)? {
                        Value::Num(v) => v,
                        other => self.as_set(&other, cx)?.count_ones() as i64,
                    };
                    best = Some(match best {
                        None => v,
                        Some(b) if *max => b.max(v),
                        Some(b) => b.min(v),
                    });
                }
                best.map(Value::Num)
            }
            Int(a) => match self.eval(a, cx)? {
                Value::Str(s) => s.trim().parse::<i64>().ok().map(Value::Num),
                Value::Num(v) => Some(Value::Num(v)),
                _ => None,
            },
            ToStr(args) => {
                let mut s = String::new();
                for a in args {
                    let v = self.eval(a, cx)?;
                    s.push_str(&self.render(&v, cx));
                }
                Some(Value::Str(s))
            }
            Case(lower, a) => match self.eval(a, cx)? {
                Value::Str(s) => Some(Value::Str(if *lower {
                    s.to_lowercase()
                } else {
                    s.to_uppercase()
                })),
                _ => None,
            },
            Slice(base, from, to, range) => {
                let Value::Str(s) = self.eval(base, cx)? else {
                    return None;
                };
                let chars: Vec<char> = s.chars().collect();
                let len = chars.len() as i64;
                let idx = |e: &mut Self, x: &Option<Box<Node>>, cx: &mut Cx, default: i64| match x {
                    None => Some(default),
                    Some(n) => match e.eval(n, cx)? {
                        Value::Num(v) => Some(if v < 0 { len + v } else { v }),
                        _ => None,
                    },
                };
                let a = idx(self, from, cx, 0)?;
                if !*range {
                    let c = chars.get(usize::try_from(a).ok()?)?;
                    return Some(Value::Str(c.to_string()));
                }
                let b = idx(self, to, cx, len)?.min(len);
                let a = a.clamp(0, len);
                if a > b {
                    return Some(Value::Str(String::new()));
                }
                Some(Value::Str(chars[a as usize..b as usize].iter().collect()))
            }
            Var(slot) => self.vars[*slot].clone(),
            Assign(slot, op, value) => {
                let v = self.eval(value, cx)?;
                let v = match op {
                    AssignOp::Set => v,
                    AssignOp::Arith(bop) => {
                        let old = self.vars[*slot].clone()?;
                        self.binary(*bop, old, v, cx)?
                    }
                };
                self.vars[*slot] = Some(v);
                Some(Value::Matched)
            }
            DictGet(slot, key) => {
                let k = self.eval(key, cx)?.key();
                self.dicts[*slot].get(&k).cloned()
            }
            DictSet(slot, key, value) => {
                let k = self.eval(key, cx)?.key();
                let v = self.eval(value, cx)?;
                self.dicts[*slot].insert(k, v);
                Some(Value::Matched)
            }
            Unbind(slot) => {
                self.vars[*slot] = None;
                Some(Value::Matched)
            }
            Call(f, args) => self.call(*f, args, cx),
            SquareIter(slot, all, set, body) => {
                let s = self.set_of(set, cx)?;
                let saved = self.vars[*slot].take();
                let mut any = false;
                let mut every = true;
                for sq in board::bits(s) {
                    self.vars[*slot] = Some(Value::Set(1 << sq));
                    let v = self.eval(body, cx);
                    if matches(&v) {
                        any = true;
                    } else {
                        every = false;
                        if *all {
                            break;
                        }
                    }
                }
                self.vars[*slot] = saved;
                (if *all { every } else { any }).then_some(Value::Matched)
            }
            PieceIter(slot, all, set, body) => {
                let s = self.set_of(set, cx)?;
                let ids = cx.game.piece_ids()[cx.cur as usize];
                let mut any = false;
                let mut every = true;
                let mut last = None;
                for sq in board::bits(s) {
                    if ids[sq as usize] == 0 {
                        continue;
                    }
                    self.vars[*slot] = Some(Value::Piece(ids[sq as usize]));
                    let v = self.eval(body, cx);
                    if matches(&v) {
                        any = true;
                        last = self.vars[*slot].clone();
                    } else {
                        every = false;
                        if *all {
                            break;
                        }
                    }
                }
                // The variable keeps the last matching piece (later filters may use it).
                if last.is_some() {
                    self.vars[*slot] = last;
                }
                (if *all { every } else { any }).then_some(Value::Matched)
            }
            While(c, body) => {
                loop {
                    cx.steps += 1;
                    if cx.steps > MAX_LOOP_STEPS {
                        cx.warn(format!(
                            "a while loop ran more than {MAX_LOOP_STEPS} steps in this game; stopped it"
                        ));
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
            Comment(args) => {
                let text = self.render_args(args, cx);
                cx.comments.push((cx.cur, text));
                Some(Value::Matched)
            }
            Message(args) => {
                let text = self.render_args(args, cx);
                // The reference's format: `Game: 42 move 87(btm): text`.
                let rec = &cx.game.positions[cx.cur as usize];
                let number = cx.game.move_number(cx.cur);
                let side = if rec.turn() == shakmaty::Color::White {
                    "wtm"
                } else {
                    "btm"
                };
                cx.messages.push(format!(
                    "Game: {} move {number}({side}): {text}",
                    cx.game.number
                ));
                Some(Value::Matched)
            }
            Transform(kind, body) => {
                // Transforms directly inside one another (or inside a compound of one filter)
                // reach each colour state at most once: `flipcolor { flipcolor X }` evaluates
                // X twice, not four times.
                let mut states = vec![cx.flip];
                let mut inner: &Node = body;
                let mut kinds = vec![*kind];
                loop {
                    match &inner.expr {
                        Transform(k, b) => {
                            kinds.push(*k);
                            inner = b;
                        }
                        Compound(items) if items.len() == 1 => inner = &items[0],
                        _ => break,
                    }
                }
                for k in kinds {
                    let mut next = Vec::with_capacity(2);
                    for &s in &states {
                        for &swap in k.copies() {
                            if !next.contains(&(s != swap)) {
                                next.push(s != swap);
                            }
                        }
                    }
                    states = next;
                }
                let saved = cx.flip;
                for flip in states {
                    cx.flip = flip;
                    let v = self.eval(inner, cx);
                    if matches(&v) {
                        cx.flip = saved;
                        return v;
                    }
                }
                cx.flip = saved;
                None
            }
            // The filters with a file of their own.
            Ancestor(a, b) => filter::ancestry::eval(a, b, self, cx),
            AttackedBy(a, b) => filter::attack::eval(false, a, b, self, cx),
            Attacks(a, b) => filter::attack::eval(true, a, b, self, cx),
            Between(a, b) => filter::between::eval(a, b, self, cx),
            Castled(which) => filter::castle::eval(*which, cx),
            Child(i) => filter::child::eval(i.as_deref(), self, cx),
            CurrentPosition => filter::current_position::eval(cx),
            Descendant(a, b) => filter::ancestry::eval(b, a, self, cx),
            Distance(a, b) => filter::distance::eval(a, b, self, cx),
            Lca(a, b) => filter::lca::eval(a, b, self, cx),
            Parent => filter::parent::eval(cx),
            Position(id) => filter::position::eval(id, self, cx),
            Check => filter::check::eval(cx),
            ColorConst(c) => filter::color::eval(*c, cx),
            Depth => filter::depth::eval(cx),
            Direction(d, lo, hi, a) => filter::direction::eval(*d, *lo, *hi, a, self, cx),
            Elo(white) => filter::elo::eval(*white, cx),
            EnPassant => filter::en_passant::eval(cx),
            Fen(cells) => filter::fen::eval(cells, cx),
            Find(f) => filter::find::eval(f, self, cx),
            From => filter::from_to::eval(true, cx),
            GameNumber => filter::game_number::eval(cx),
            Initial => filter::initial::eval(cx),
            Mainline => filter::mainline::eval(cx),
            MakeSquare(f, r) => filter::make_square::eval(f, r, self, cx),
            Mate => filter::mate::eval(cx),
            MoveNumber => filter::move_number::eval(cx),
            NullMove => filter::null_move::eval(cx),
            Pawns(kind) => filter::pawns::eval(*kind, cx),
            Pin(from, through, to) => {
                filter::pin::eval(from.as_deref(), through.as_deref(), to.as_deref(), self, cx)
            }
            Ply => filter::ply::eval(cx),
            PositionId => filter::position_id::eval(cx),
            Primary => filter::primary::eval(true, cx),
            Power(a) => filter::power::eval(a, self, cx),
            RankFile(rank, a) => filter::rank_file::eval(*rank, a, self, cx),
            Ray(dir, sets, _) => filter::ray::eval(*dir, sets, self, cx),
            Result(r) => filter::result::eval(r, cx),
            Secondary => filter::primary::eval(false, cx),
            Shade(light, a) => filter::shade::eval(*light, a, self, cx),
            SideToMove => filter::side_to_move::eval(cx),
            Stalemate => filter::stalemate::eval(cx),
            Tag(field, search) => filter::tag_search::eval(field, search.as_deref(), cx),
            Terminal => filter::terminal::eval(cx),
            To => filter::from_to::eval(false, cx),
            ToMove(white) => filter::to_move::eval(*white, cx),
            Variation => filter::variation::eval(cx),
            VirtualMainline => filter::virtual_mainline::eval(cx),
            Year => filter::year::eval(cx),
            // Families still evaluated in their own module of `eval/`.
            Dash(_) | CountMoves(_) | Move(_) => self.eval_move(&n.expr, cx),
        }
    }

    /// The arguments of `comment`/`message` as text; a failing one prints `<false>`.
    fn render_args(&mut self, args: &[Node], cx: &mut Cx) -> String {
        let mut text = String::new();
        for a in args {
            match self.eval(a, cx) {
                Some(v) => text.push_str(&self.render(&v, cx)),
                None => text.push_str("<false>"),
            }
        }
        text
    }

    fn call(&mut self, f: usize, args: &[Node], cx: &mut Cx) -> Option<Value> {
        if cx.call_depth >= MAX_CALL_DEPTH {
            cx.warn(format!(
                "function calls nested deeper than {MAX_CALL_DEPTH}; the call fails"
            ));
            return None;
        }
        let q = self.query.clone();
        let func = &q.functions[f];
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.eval(a, cx)?);
        }
        let saved: Vec<Option<Value>> = func.params.iter().map(|&s| self.vars[s].clone()).collect();
        for (&s, v) in func.params.iter().zip(values) {
            self.vars[s] = Some(v);
        }
        // A transform around a call swaps the colours of its arguments, not of the function's
        // body (as when transforms copied the query).
        let flip = std::mem::replace(&mut cx.flip, false);
        cx.call_depth += 1;
        let r = self.eval(&func.body, cx);
        cx.call_depth -= 1;
        cx.flip = flip;
        for (&s, v) in func.params.iter().zip(saved) {
            self.vars[s] = v;
        }
        r
    }

    /// Evaluates `n` as a set of squares.
    pub(crate) fn set_of(&mut self, n: &Node, cx: &mut Cx) -> Option<u64> {
        let v = self.eval(n, cx)?;
        self.as_set(&v, cx)
    }

    pub(crate) fn as_set(&self, v: &Value, cx: &Cx) -> Option<u64> {
        match v {
            Value::Set(s) => Some(*s),
            Value::Piece(id) => {
                let ids = &cx.game.piece_ids()[cx.cur as usize];
                Some(
                    ids.iter()
                        .enumerate()
                        .filter(|&(_, &x)| x == *id)
                        .fold(0u64, |acc, (sq, _)| acc | 1 << sq),
                )
            }
            _ => None,
        }
    }

    fn render(&self, v: &Value, cx: &Cx) -> String {
        match v {
            Value::Piece(_) => self
                .as_set(v, cx)
                .map_or_else(String::new, crate::eval::value::squares_text),
            Value::Set(s) => {
                // A single occupied square prints with its piece: `Kg1`.
                let rec = &cx.game.positions[cx.cur as usize];
                if s.count_ones() == 1
                    && let Some(p) = board::piece_on(rec, s.trailing_zeros())
                {
                    let c = "PNBRQKpnbrqk".as_bytes()[p] as char;
                    return format!("{c}{}", crate::eval::value::squares_text(*s));
                }
                crate::eval::value::squares_text(*s)
            }
            other => other.render(),
        }
    }

    fn binary(&mut self, op: BinOp, a: Value, b: Value, cx: &Cx) -> Option<Value> {
        match op {
            BinOp::Inter | BinOp::Union => {
                let (x, y) = (self.as_set(&a, cx)?, self.as_set(&b, cx)?);
                Some(Value::Set(if op == BinOp::Inter { x & y } else { x | y }))
            }
            _ => match (a, b) {
                (Value::Str(x), Value::Str(y)) if op == BinOp::Add => Some(Value::Str(x + &y)),
                (Value::Num(x), Value::Num(y)) => Some(Value::Num(match op {
                    BinOp::Add => x.checked_add(y)?,
                    BinOp::Sub => x.checked_sub(y)?,
                    BinOp::Mul => x.checked_mul(y)?,
                    BinOp::Div => x.checked_div(y)?,
                    BinOp::Mod => x.checked_rem(y)?,
                    _ => return None,
                })),
                _ => None,
            },
        }
    }

    fn compare(&self, op: CmpOp, a: &Value, b: &Value, cx: &Cx) -> Option<bool> {
        use std::cmp::Ordering;
        let ord: Ordering = match (a, b) {
            (Value::Num(x), Value::Num(y)) => x.cmp(y),
            (Value::Str(x), Value::Str(y)) => x.cmp(y),
            (Value::Pos(x), Value::Pos(y)) => x.cmp(y),
            (Value::Num(x), other) => x.cmp(&(self.as_set(other, cx)?.count_ones() as i64)),
            (other, Value::Num(y)) => (self.as_set(other, cx)?.count_ones() as i64).cmp(y),
            (x, y) => {
                let (x, y) = (self.as_set(x, cx)?, self.as_set(y, cx)?);
                return match op {
                    CmpOp::Eq => Some(x == y),
                    CmpOp::Ne => Some(x != y),
                    _ => Some(op_holds(op, x.count_ones().cmp(&y.count_ones()))),
                };
            }
        };
        Some(op_holds(op, ord))
    }
}

fn op_holds(op: CmpOp, ord: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CmpOp::Lt => ord == Less,
        CmpOp::Le => ord != Greater,
        CmpOp::Gt => ord == Greater,
        CmpOp::Ge => ord != Less,
        CmpOp::Eq => ord == Equal,
        CmpOp::Ne => ord != Equal,
    }
}

impl Evaluate for Engine {
    fn value(&mut self, n: &Node, cx: &mut Cx) -> Option<Value> {
        self.eval(n, cx)
    }

    fn set(&mut self, n: &Node, cx: &mut Cx) -> Option<u64> {
        self.set_of(n, cx)
    }
}
