//! The engine: a game's positions walked in order, the body evaluated at each. [`Engine::eval`]
//! routes each expression: the filters to their files (`crate::filter`), the language's core
//! to the files here (logic, comparison and arithmetic, strings, variables and functions,
//! notes, transforms).

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

mod arith;
mod logic;
mod notes;
mod strings;
mod transforms;
mod variables;

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
    /// Sort values to show in the game comment (`matchcount: 22`, `Checks: 12`).
    pub sort_notes: Vec<String>,
    /// The game's best value of each sort key of the query (`None`: never had one).
    pub sort_values: Vec<Option<crate::eval::context::SortValue>>,
    /// Comments made inside `sort` targets by their best evaluations: written after the
    /// match string.
    pub late_comments: Vec<(u32, String)>,
    /// Tags `settag` gives the game when it is written.
    pub settags: Vec<(String, String)>,
    /// Whether the game passes `matchcount` and the header filters.
    pub selected: bool,
    /// Why the run stops at this game (a failed `assert`, a file that could not be used).
    pub halt: Option<String>,
}

/// Evaluates one query over games, keeping variables and dictionaries across games as CQL does.
pub struct Engine {
    query: Arc<Query>,
    pub(crate) vars: Vec<Option<Value>>,
    pub(crate) dicts: Vec<FxHashMap<String, Value>>,
    pub(crate) regexes: FxHashMap<String, Option<regex::Regex>>,
    /// Visit variation positions too.
    pub variations: bool,
    /// The images each transform evaluates (see `transforms.rs`).
    images: transforms::ImageCache,
    /// Whether `comment(...)` text is wanted (games are written). A count reads none, so its
    /// text is not built (a megabyte literal at every position cost seconds).
    pub comments: bool,
    /// The files `writefile` has started in this run (later writes add to them).
    written: rustc_hash::FxHashSet<std::path::PathBuf>,
    /// Whether an `echo` whose body is a pure pair test runs compiled (`filter/echo`); off,
    /// every body is interpreted (the differential tests compare the two).
    pub compiled_echo: bool,
    /// Each `echo`'s compiled body and its columns over the current game, by node.
    echo_pairs: FxHashMap<usize, filter::echo::pair_plan::Cached>,
    /// Games started (`run_game` calls): what per-game caches are tagged with.
    games_started: u64,
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
            comments: true,
            images: transforms::ImageCache::default(),
            written: Default::default(),
            compiled_echo: true,
            echo_pairs: Default::default(),
            games_started: 0,
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
            comments: self.comments,
            images: transforms::ImageCache::default(),
            written: Default::default(),
            compiled_echo: self.compiled_echo,
            echo_pairs: Default::default(),
            games_started: 0,
        }
    }

    /// The query.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// The closing report of the `persistent` variables (not the `quiet` ones): `Name: value`
    /// each, after the last game.
    pub fn persistent_report(&self) -> Vec<String> {
        self.query
            .vars
            .iter()
            .zip(&self.vars)
            .filter_map(|((name, kind), v)| match kind {
                VarKind::Persistent { quiet: false } => Some(format!(
                    "{name}: {}",
                    v.as_ref()
                        .map_or_else(|| "<unbound>".to_owned(), Value::render)
                )),
                _ => None,
            })
            .collect()
    }

    /// Evaluates the query at every visible position of `game`.
    pub fn run_game(&mut self, game: &Game) -> GameMatch {
        self.games_started += 1;
        let q = self.query.clone();
        // A game starts with its variables unbound; persistent ones and dictionaries carry on.
        for (v, (_, kind)) in self.vars.iter_mut().zip(&q.vars) {
            if matches!(kind, VarKind::Plain | VarKind::Piece) {
                *v = None;
            }
        }
        for (slot, text) in &q.header.assign {
            if let Some(v) = self.vars.get_mut(*slot) {
                *v = Some(match text.trim().parse::<i64>() {
                    Ok(n) => Value::Num(n),
                    Err(_) => Value::Str(text.clone()),
                });
            }
        }
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
            halt: None,
            work: 0,
            transforms: Vec::new(),
            call_depth: 0,
            steps: 0,
            quiet: h.quiet,
            last_path: None,
            path_banned: FxHashMap::default(),
            sorts: Vec::new(),
            move_buffer: Vec::new(),
        };
        for id in 0..game.len() as u32 {
            if !game.visible(id) {
                continue;
            }
            // The run stops at this game: the rest of it is not worth evaluating.
            if cx.halt.is_some() {
                break;
            }
            cx.cur = id;
            let mark = cx.comments.len();
            let ok = q.body.iter().all(|f| {
                let v = self.eval(f, &mut cx);
                matches(&v)
            });
            if ok {
                out.matched.push(id);
            } else if !h.always_comment {
                cx.comments.truncate(mark);
            }
        }
        let (lo, hi) = h.matchcount.unwrap_or((1, i64::MAX));
        let n = out.matched.len() as i64;
        out.selected = n >= lo.max(1) && n <= hi;
        if h.sort_matchcount {
            out.sort_notes.push(format!("matchcount: {n}"));
        }
        for (k, key) in q.sorts.iter().enumerate() {
            let best = cx.sorts.get_mut(k).and_then(Option::take);
            if let Some((v, comments)) = best {
                if !key.quiet {
                    out.sort_notes.push(format!("{}: {v}", key.title));
                }
                out.late_comments.extend(comments);
                out.sort_values.push(Some(v));
            } else {
                // A game can match without its sort ever being reached: it sorts last, and
                // says so.
                if !key.quiet {
                    out.sort_notes.push(format!("{}: none", key.title));
                }
                out.sort_values.push(None);
            }
        }
        let (comments, settags) = finish_notes(cx.comments);
        out.comments = comments;
        if !h.no_settag {
            out.settags = settags;
        }
        out.messages = cx.messages;
        out.warnings = cx.warnings;
        out.halt = cx.halt;
        out
    }

    /// The squares a piece designator names at `cx.cur`, under the current transforms.
    pub(crate) fn designated(d: &PieceSet, cx: &Cx) -> u64 {
        let rec = &cx.game.positions[cx.cur as usize];
        if cx.transforms.is_empty() {
            board::designate(rec, d)
        } else {
            board::designate(rec, &transform::map_piece_set(&cx.transforms, *d))
        }
    }

    /// Evaluates `n` at `cx.cur`: `None` if it does not match.
    pub(crate) fn eval(&mut self, n: &Node, cx: &mut Cx) -> Option<Value> {
        use Expr::*;
        match &n.expr {
            Number(v) => Some(Value::Num(*v)),
            Str(s) => Some(Value::Str(s.clone())),
            True | Declaration => Some(Value::Matched),
            False => None,
            Pieces(d) => Some(Value::Set(Self::designated(d, cx))),
            Compound(items) => self.compound(items, cx),
            And(a, b) => self.and(a, b, cx),
            Or(a, b) => self.or(a, b, cx),
            Not(a) => self.not(a, cx),
            If(c, t, e) => self.if_then_else(c, t, e, cx),
            Compare(first, rest) => self.compare_chain(first, rest, cx),
            Binary(op, a, b) => self.arithmetic(op, a, b, cx),
            Neg(a) => self.neg(a, cx),
            Complement(a) => self.complement(a, cx),
            Count(a) => self.count(a, cx),
            In(a, b) => self.within(a, b, cx),
            Regex(a, b) => self.regex(a, b, cx),
            Group(g) => self.group(g, cx),
            Colon(p, f) => self.at_position(p, f, cx),
            Abs(a) => self.abs(a, cx),
            Sqrt(a) => self.sqrt(a, cx),
            MinMax(max, args) => self.min_max(max, args, cx),
            Int(a) => self.int(a, cx),
            ToStr(args) => self.str_of(args, cx),
            Case(lower, a) => self.case(lower, a, cx),
            Slice(base, from, to, range) => self.slice(base, from, to, range, cx),
            Var(slot) => self.vars[*slot].clone(),
            Assign(slot, op, value) => self.assign(slot, op, value, cx),
            DictGet(slot, key) => self.dict_get(slot, key, cx),
            DictSet(slot, key, value) => self.dict_set(slot, key, value, cx),
            Unbind(slot, key) => self.unbind(*slot, key.as_deref(), cx),
            Call(f, args) => self.call(*f, args, cx),
            SquareIter(slot, all, set, body) => self.square_iter(slot, all, set, body, cx),
            PieceIter(slot, all, set, body) => self.piece_iter(slot, all, set, body, cx),
            While(c, body) => self.while_loop(c, body, cx),
            Loop(body) => self.body_loop(body, cx),
            Comment(args) => self.comment(args, cx),
            Message(quiet, args) => self.message(*quiet, args, cx),
            IsBound(slot, bound) => (self.vars.get(*slot).is_some_and(Option::is_some) == *bound)
                .then_some(Value::Matched),
            Transform(t) => self.transform(t, cx),
            // The filters with a file of their own.
            Ancestor(a, b) => filter::ancestry::eval(a, b, self, cx),
            AttackedBy(a, b) => filter::attack::eval(false, a, b, self, cx),
            Attacks(a, b) => filter::attack::eval(true, a, b, self, cx),
            AttackChain(arrow, xs) => filter::attack::eval_chain(*arrow, xs, self, cx),
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
            FenText => filter::fen::text(cx),
            Find(f) => filter::find::eval(f, self, cx),
            Echo(e) => filter::echo::eval(e, self, cx),
            Sort(s) => {
                let q = self.query.clone();
                filter::sort::eval(s, &q.sorts, self, cx)
            }
            SetTag(name, value) => filter::settag::eval(name, value, self, cx),
            Path(f) => filter::path::eval(f, self, cx),
            PathStatus(s) => filter::path::status(*s, cx),
            From => filter::from_to::eval(true, cx),
            GameNumber => filter::game_number::eval(cx),
            Initial => filter::initial::eval(cx),
            Mainline => filter::mainline::eval(cx),
            MakeSquare(f, r) => filter::make_square::eval(f, r, self, cx),
            MakeSquareOf(name) => filter::make_square::eval_name(name, self, cx),
            PieceInfo(what, s) => filter::piece_info::eval(*what, s, self, cx),
            Ascii(x) => filter::ascii::eval(x, self, cx),
            IndexOf(x, y) => filter::index_of::eval(x, y, self, cx),
            NoTransform(f) => filter::no_transform::eval(f, self, cx),
            Assert(f) => filter::assert::eval(f, self, cx),
            PureStalemate { model } => filter::pure_stalemate::eval(*model, cx),
            ReadFile(name) => self.read_file(name, cx),
            WriteFile(name, text) => self.write_file(name, text, cx),
            ConsecutiveMoves(c) => filter::consecutive_moves::eval(c, self, cx),
            OriginalComment(l) => filter::original_comment::eval(l, cx),
            Mate => filter::mate::eval(cx),
            MoveNumber => filter::move_number::eval(cx),
            NullMove => filter::null_move::eval(cx),
            Pawns(kind) => filter::pawns::eval(*kind, cx),
            Pin(from, through, to, set) => filter::pin::eval(
                [from.as_deref(), through.as_deref(), to.as_deref()],
                *set,
                self,
                cx,
            ),
            Ply => filter::ply::eval(cx),
            PositionId => filter::position_id::eval(cx),
            Primary => filter::primary::eval(true, cx),
            Power(a) => filter::power::eval(a, self, cx),
            RankFile(rank, a) => filter::rank_file::eval(*rank, a, self, cx),
            Ray(dir, sets, xray) => filter::ray::eval(*dir, sets, *xray, self, cx),
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
            Dash(d) => filter::dash::eval(d, self, cx),
            CountMoves(d) => filter::count_moves::eval(d, self, cx),
            Move(m) => filter::legacy_move::eval(m, self, cx),
        }
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
}

/// Tags set by `settag`: (name, value).
type Tags = Vec<(String, String)>;

/// The notes of a finished game: tags set by `settag` taken out (the last value of each name
/// kept), `echo`'s target notes merged into one per target and name (`tgt -->a -->b`), and a
/// text repeated at one position kept once, as the reference writes them.
fn finish_notes(raw: Vec<(u32, String)>) -> (Vec<(u32, String)>, Tags) {
    use crate::filter::echo::TARGET_NOTE;
    use crate::filter::settag::SETTAG;
    let mut settags: Vec<(String, String)> = Vec::new();
    let mut out: Vec<(u32, String)> = Vec::with_capacity(raw.len());
    // Per (position, echo name): where its merged note is in `out`.
    let mut targets: FxHashMap<(u32, String), usize> = FxHashMap::default();
    let mut seen: rustc_hash::FxHashSet<(u32, u64)> = rustc_hash::FxHashSet::default();
    let hash = |t: &str| {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        t.hash(&mut h);
        h.finish()
    };
    for (pos, text) in raw {
        if let Some(rest) = text.strip_prefix(SETTAG) {
            if let Some((name, value)) = rest.split_once(SETTAG) {
                settags.retain(|(n, _)| n != name);
                settags.push((name.to_owned(), value.to_owned()));
            }
            continue;
        }
        if let Some(rest) = text.strip_prefix(TARGET_NOTE)
            && let Some((name, arrow)) = rest.split_once(TARGET_NOTE)
        {
            match targets.get(&(pos, name.to_owned())) {
                Some(&i) => out[i].1.push_str(arrow),
                None => {
                    targets.insert((pos, name.to_owned()), out.len());
                    out.push((pos, format!("{name}{arrow}")));
                }
            }
            continue;
        }
        if seen.insert((pos, hash(&text))) || !out.iter().any(|(p, t)| *p == pos && *t == text) {
            out.push((pos, text));
        }
    }
    (out, settags)
}

impl crate::filter::echo::Bind for Engine {
    fn bind(&mut self, slot: usize, v: Option<Value>) {
        if let Some(s) = self.vars.get_mut(slot) {
            *s = v;
        }
    }

    fn pairs(
        &mut self,
        e: &Echo,
        g: &Game,
    ) -> Option<(
        Arc<filter::echo::pair_plan::PairPlan>,
        Arc<filter::echo::pair_plan::GameColumns>,
    )> {
        use filter::echo::pair_plan::{Cached, PairPlan};
        if !self.compiled_echo {
            return None;
        }
        let serial = self.games_started;
        let cached = self
            .echo_pairs
            .entry(std::ptr::from_ref(e) as usize)
            .or_insert_with(|| Cached {
                plan: PairPlan::new(&e.body, e.source, e.target).map(Arc::new),
                columns: None,
            });
        let plan = cached.plan.clone()?;
        let columns = match &cached.columns {
            Some((at, c)) if *at == serial => c.clone(),
            _ => {
                let c = Arc::new(plan.columns(g));
                cached.columns = Some((serial, c.clone()));
                c
            }
        };
        Some((plan, columns))
    }

    fn name(&self, slot: usize) -> String {
        self.query
            .vars
            .get(slot)
            .map_or_else(String::new, |(n, _)| n.clone())
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
