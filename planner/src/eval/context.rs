//! What a filter sees while it is evaluated: the game and position ([`Cx`]), and the engine
//! behind it, through [`Evaluate`], to evaluate the filters and values inside it.
//!
//! A filter's file (`crate::filter`) depends on this, never on the engine itself: the engine
//! dispatches to the filters, the filters call back through the trait.

use rustc_hash::FxHashMap;

use crate::ast::Node;
use crate::eval::game::Game;
use crate::eval::value::Value;

/// Evaluates the nodes inside a filter.
pub trait Evaluate {
    /// The value of `n` at `cx`'s position (`None`: it does not match).
    fn value(&mut self, n: &Node, cx: &mut Cx) -> Option<Value>;
    /// The square set of `n` (a set, or a piece variable's square), `None` if it has none.
    fn set(&mut self, n: &Node, cx: &mut Cx) -> Option<u64>;
    /// The position `n` stands for, `None` if it is not a position.
    fn position(&mut self, n: &Node, cx: &mut Cx) -> Option<u32> {
        match self.value(n, cx)? {
            Value::Pos(p) => Some(p),
            _ => None,
        }
    }
}

/// Whether a value counts as a match: anything but an empty square set.
pub fn matches(v: &Option<Value>) -> bool {
    match v {
        None => false,
        Some(Value::Set(s)) => *s != 0,
        Some(_) => true,
    }
}

/// The most positions the filters that look at other positions may visit in one game: an
/// `echo` over a study of 4,000 positions fits; a `find` at every position of a game of a
/// million plies stops after some seconds (a visit costs about a microsecond).
pub const MAX_GAME_WORK: u64 = 20_000_000;

/// Evaluation state of one game at one position.
pub struct Cx<'g> {
    /// The game.
    pub game: &'g Game,
    /// Current position id.
    pub cur: u32,
    /// Regex capture groups of the last `~~`.
    pub groups: Vec<Option<String>>,
    /// Comments made so far at the position being matched.
    pub comments: Vec<(u32, String)>,
    /// Messages.
    pub messages: Vec<String>,
    /// Legal-move positions built so far.
    pub chess: FxHashMap<u32, shakmaty::Chess>,
    /// Evaluation problems (see [`GameMatch::warnings`]).
    pub warnings: Vec<String>,
    /// The basic transforms of the transforms being evaluated, outermost first: literals
    /// (designators, directions, sides, shades) are read through them (`crate::transform`).
    pub transforms: Vec<crate::transform::Step>,
    pub(crate) call_depth: usize,
    pub(crate) steps: u64,
    /// The header's `quiet`: no automatic notes (path and find notes, the match string).
    pub quiet: bool,
    /// What the last matching `path` or `line` found (for `pathstart` and the like).
    pub last_path: Option<PathRun>,
    /// Per `path`/`line` filter with `nestban` (by address): positions inside its earlier
    /// matches, where it may not start again.
    pub path_banned: FxHashMap<usize, rustc_hash::FxHashSet<u32>>,
    /// Per sort key (`sort`), the game's best value so far.
    pub sorts: Vec<SortBest>,
    /// Positions visited by the filters that look at other positions (`echo`, `find`,
    /// `consecutivemoves`) in this game: see [`Cx::charge`].
    pub work: u64,
    /// Why the run must stop (a failed `assert`, a file `readfile`/`writefile` could not
    /// use): the first such reason.
    pub halt: Option<String>,
    /// The move list move filters reuse (see `move_source::with_candidates`).
    pub(crate) move_buffer: Vec<crate::eval::candidate::Cand>,
}

/// A value games are sorted by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SortValue {
    /// A number (a set sorts by its size).
    Num(i64),
    /// A string.
    Str(String),
}

impl std::fmt::Display for SortValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SortValue::Num(n) => write!(f, "{n}"),
            SortValue::Str(s) => f.write_str(s),
        }
    }
}

/// A game's best value of one sort key so far, with the comments of the evaluation that
/// gave it.
pub type SortBest = Option<(SortValue, Vec<(u32, String)>)>;

/// A match of a `path` or `line`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PathRun {
    /// Where it started.
    pub start: u32,
    /// Where its last move arrived.
    pub end: u32,
    /// The moves (positions, for `line`) it counted.
    pub count: u32,
    /// The moves it walked, unfocused ones included.
    pub walked: u32,
}

impl Cx<'_> {
    /// How CQL names position `p` in its notes: `move 12(btm)`, and for a position in a
    /// variation its id after it (`move 12(btm)[146]`), with the note `id:146` put at the
    /// position itself so a reader can find it.
    pub fn locate(&mut self, p: u32) -> String {
        let text = self.locate_text(p);
        if self.game.positions[p as usize].depth > 0 {
            let marker = format!("id:{p}");
            if !self.comments.iter().any(|(at, t)| *at == p && *t == marker) {
                self.comments.push((p, marker));
            }
        }
        text
    }

    /// How CQL names position `p` in a comment's text (`move 12(btm)`, `[146]` after a
    /// variation's), without the id note [`Cx::locate`] adds.
    pub fn locate_text(&self, p: u32) -> String {
        let g = self.game;
        let Some(rec) = g.positions.get(p as usize) else {
            return String::new();
        };
        let side = if rec.turn() == shakmaty::Color::White {
            "wtm"
        } else {
            "btm"
        };
        let mut text = format!("move {}({side})", g.move_number(p));
        if rec.depth > 0 {
            text.push_str(&format!("[{p}]"));
        }
        text
    }

    /// Whether the transforms being evaluated exchange the colours.
    pub fn colours_swapped(&self) -> bool {
        crate::transform::colours_swapped(&self.transforms)
    }

    /// The current position's row.
    pub fn position(&self) -> &cqldb_storage::PositionRecord {
        &self.game.positions[self.cur as usize]
    }

    /// Records an evaluation problem once per game.
    /// Counts `n` more positions visited by `what`; false once the game has cost more than
    /// [`MAX_GAME_WORK`], with the run then stopped and said (a filter that compares every
    /// position with every other is quadratic: on a game of a million plies it would not end).
    pub fn charge(&mut self, n: u64, what: &str) -> bool {
        if self.halt.is_some() {
            return false;
        }
        self.work = self.work.saturating_add(n);
        if self.work <= MAX_GAME_WORK {
            return true;
        }
        self.halt.get_or_insert(format!(
            "{what} would visit more than {MAX_GAME_WORK} positions in this game ({} plies long); stopped",
            self.game.len()
        ));
        false
    }

    pub fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }
}
