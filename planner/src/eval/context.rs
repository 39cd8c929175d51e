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
}

impl Cx<'_> {
    /// Whether the transforms being evaluated exchange the colours.
    pub fn colours_swapped(&self) -> bool {
        crate::transform::colours_swapped(&self.transforms)
    }

    /// The current position's row.
    pub fn position(&self) -> &cqldb_storage::PositionRecord {
        &self.game.positions[self.cur as usize]
    }

    /// Records an evaluation problem once per game.
    pub fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }
}
