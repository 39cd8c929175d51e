//! GTQL, the Game-Tree Query Language: parser and checks.
//!
//! A query has up to three parts in this order, separated by `;`: `node:`, `child:`,
//! `subtree:`, and beyond the paper a fourth, `sibling:`, whose aggregates range over the node's
//! siblings (`[]` the sibling, a bare attribute the node itself). Precedence, highest first: the prefixes `[]` (the child being counted), `[<]` (the
//! child counted before it), `[^]` (the parent) and `[^k]` (the k-th ancestor; both beyond the
//! paper); `&`; relational operators;
//! `not`; `and`; `or`. Aggregates: `count(expr)` / `count(*)`, and beyond the paper `sum`, `min`,
//! `max`, `avg`. Names are resolved against the tree's attributes and constants.
//!
//! ```
//! use cqldb_planner::gtql::{GtqlNames, parse_gtql};
//! let names = GtqlNames {
//!     attrs: vec!["type".into()],
//!     consts: vec![("PVNode".into(), 0)],
//!     ..Default::default()
//! };
//! let q = parse_gtql("node: type = PVNode; child: count([]type = type) >= 5", &names).unwrap();
//! assert_eq!(q.child_aggs.len(), 1);
//! assert!(parse_gtql("node: []type = 1", &names).is_err());
//! ```

/// The names a query may use: the tree's attributes and constants, and the two attributes
/// every tree has, `last_move` and `node_id`.
///
/// A pass sees [`GtqlNames::columns`] attribute columns: the tree's attributes, then
/// `last_move` as integer codes ([`MoveLiterals`]); `node_id` is the column one past them.
#[derive(Clone, Debug, Default)]
pub struct GtqlNames {
    /// Attribute names in column order.
    pub attrs: Vec<String>,
    /// Named constants.
    pub consts: Vec<(String, i64)>,
    /// How a quoted move compared with `last_move` is read.
    pub moves: MoveLiterals,
}

impl GtqlNames {
    /// The column of `last_move`'s codes: one past the tree's attributes.
    pub fn last_move(&self) -> usize {
        self.attrs.len()
    }

    /// The attribute columns a pass sees (the tree's, then `last_move`); `node_id` is the
    /// column one past them.
    pub fn columns(&self) -> usize {
        self.attrs.len() + 1
    }
}

/// Whose value an attribute reference reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The node the part is about; inside a subtree aggregate, the descendant being counted.
    Bare,
    /// `[]`: the child being counted.
    Child,
    /// `[<]`: the child counted just before.
    Prev,
    /// `[^]` (1) and `[^k]`: the parent, or the k-th ancestor, of the node the part is about.
    Ancestor(u32),
}

/// Binary operators.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GOp {
    /// `&`
    BitAnd,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `and`
    And,
    /// `or`
    Or,
}

/// Aggregates.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Agg {
    /// `count`
    Count,
    /// `sum`
    Sum,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `avg` (integer division)
    Avg,
}

/// A GTQL expression.
#[derive(Clone, Debug, PartialEq)]
pub enum GExpr {
    /// Integer.
    Num(i64),
    /// Attribute `index` (see [`GtqlNames::columns`]: the tree's attributes, `last_move`, then
    /// `node_id`).
    Attr(Scope, usize),
    /// Binary operation.
    Bin(GOp, Box<GExpr>, Box<GExpr>),
    /// `not`
    Not(Box<GExpr>),
    /// Aggregate number `slot` of its part (see [`GtqlQuery::child_aggs`] / `subtree_aggs`).
    Agg(usize),
}

impl GExpr {
    /// Calls `f` with the scope and attribute of every attribute read in the expression (not
    /// inside its aggregates, which are slots: their arguments are in the [`AggDef`]s).
    ///
    /// ```
    /// use cqldb_planner::gtql::{GExpr, GOp, Scope};
    /// let e = GExpr::Bin(GOp::Eq, Box::new(GExpr::Attr(Scope::Bare, 0)), Box::new(GExpr::Num(1)));
    /// let mut seen = Vec::new();
    /// e.for_each_attr(&mut |s, a| seen.push((s, a)));
    /// assert_eq!(seen, vec![(Scope::Bare, 0)]);
    /// ```
    pub fn for_each_attr(&self, f: &mut impl FnMut(Scope, usize)) {
        match self {
            GExpr::Attr(scope, a) => f(*scope, *a),
            GExpr::Bin(_, a, b) => {
                a.for_each_attr(f);
                b.for_each_attr(f);
            }
            GExpr::Not(a) => a.for_each_attr(f),
            GExpr::Num(_) | GExpr::Agg(_) => {}
        }
    }

    /// Whether some attribute read satisfies `pred` (on its scope).
    pub fn reads(&self, pred: impl Fn(Scope) -> bool) -> bool {
        let mut found = false;
        self.for_each_attr(&mut |s, _| found |= pred(s));
        found
    }
}

/// An aggregate: what it computes and over which expression (`None` = `*`).
#[derive(Clone, Debug, PartialEq)]
pub struct AggDef {
    /// Which aggregate.
    pub agg: Agg,
    /// Its argument; `None` for `count(*)`.
    pub arg: Option<GExpr>,
}

/// A checked query.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct GtqlQuery {
    /// The node part (no aggregates).
    pub node: Option<GExpr>,
    /// The child part.
    pub child: Option<GExpr>,
    /// The subtree part.
    pub subtree: Option<GExpr>,
    /// Stand-alone `node: count(expr)`: the query answers a number.
    pub standalone: Option<AggDef>,
    /// Aggregates of the child part, by slot.
    pub child_aggs: Vec<AggDef>,
    /// Aggregates of the subtree part, by slot.
    pub subtree_aggs: Vec<AggDef>,
    /// The sibling part (beyond the paper): its aggregates range over the node's siblings.
    pub sibling: Option<GExpr>,
    /// Aggregates of the sibling part, by slot.
    pub sibling_aggs: Vec<AggDef>,
}

mod lex;
mod moves;
mod parse;

pub use moves::{MoveLiterals, text_move_code};
pub use parse::{MAX_NESTING, parse_gtql};
