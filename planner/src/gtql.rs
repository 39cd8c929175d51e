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
//! let names = GtqlNames { attrs: vec!["type".into()], consts: vec![("PVNode".into(), 0)] };
//! let q = parse_gtql("node: type = PVNode; child: count([]type = type) >= 5", &names).unwrap();
//! assert_eq!(q.child_aggs.len(), 1);
//! assert!(parse_gtql("node: []type = 1", &names).is_err());
//! ```

use crate::ast::Span;
use crate::error::ParseError;

/// The names a query may use: the tree's attributes (then `node_id`) and constants.
#[derive(Clone, Debug, Default)]
pub struct GtqlNames {
    /// Attribute names in column order.
    pub attrs: Vec<String>,
    /// Named constants.
    pub consts: Vec<(String, i64)>,
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
    /// Attribute `index` (the attribute count is `node_id`).
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

#[derive(Clone, Debug, PartialEq)]
enum T {
    Int(i64),
    /// `[^]` or `[^k]`.
    Ancestor(u32),
    Name(String),
    Sym(&'static str),
    End,
}

fn lex(src: &str) -> Result<Vec<(T, Span)>, ParseError> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    const SYMS: [&str; 15] = [
        "[]", "[<]", "<=", ">=", "!=", "<", ">", "=", "&", "(", ")", ";", ":", "*", ",",
    ];
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let n = src[start..i]
                .parse::<i64>()
                .map_err(|_| ParseError::new("number too large", start..i))?;
            out.push((T::Int(n), start..i));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((T::Name(src[start..i].to_owned()), start..i));
        } else if c == b'-' {
            out.push((T::Sym("-"), i..i + 1));
            i += 1;
        } else if src[i..].starts_with("[^") {
            // `[^]` or `[^k]`: the parent or the k-th ancestor.
            let digits = src[i + 2..].bytes().take_while(u8::is_ascii_digit).count();
            let close = i + 2 + digits;
            if b.get(close) != Some(&b']') {
                return Err(ParseError::new(
                    "expected '[^]' or '[^k]' with k a number",
                    i..close.min(b.len()),
                ));
            }
            let k = match digits {
                0 => 1,
                _ => src[i + 2..close]
                    .parse::<u32>()
                    .ok()
                    .filter(|&k| k >= 1)
                    .ok_or_else(|| {
                        ParseError::new("an ancestor is [^1] (the parent) or further", i..close + 1)
                    })?,
            };
            i = close + 1;
            out.push((T::Ancestor(k), start..i));
        } else if let Some(s) = SYMS.iter().find(|s| src[i..].starts_with(**s)) {
            i += s.len();
            out.push((T::Sym(s), start..i));
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(ParseError::new(
                format!("unexpected character '{ch}'"),
                i..i + ch.len_utf8(),
            ));
        }
    }
    out.push((T::End, b.len()..b.len()));
    Ok(out)
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum PartKind {
    Node,
    Child,
    Subtree,
    Sibling,
}

struct P<'a> {
    toks: Vec<(T, Span)>,
    i: usize,
    names: &'a GtqlNames,
    part: PartKind,
    in_agg: bool,
    aggs: Vec<AggDef>,
}

impl P<'_> {
    fn peek(&self) -> &T {
        &self.toks[self.i].0
    }
    fn span(&self) -> Span {
        self.toks[self.i].1.clone()
    }
    fn next(&mut self) -> (T, Span) {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }
    fn err(&self, m: impl Into<String>) -> ParseError {
        ParseError::new(m, self.span())
    }
    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), T::Sym(x) if *x == s)
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), T::Name(x) if x == w)
    }

    fn or(&mut self) -> Result<GExpr, ParseError> {
        let mut l = self.and()?;
        while self.is_word("or") {
            self.next();
            let r = self.and()?;
            l = GExpr::Bin(GOp::Or, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<GExpr, ParseError> {
        let mut l = self.not()?;
        while self.is_word("and") {
            self.next();
            let r = self.not()?;
            l = GExpr::Bin(GOp::And, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn not(&mut self) -> Result<GExpr, ParseError> {
        if self.is_word("not") {
            self.next();
            return Ok(GExpr::Not(Box::new(self.not()?)));
        }
        self.rel()
    }
    fn rel(&mut self) -> Result<GExpr, ParseError> {
        let mut l = self.band()?;
        loop {
            let op = match self.peek() {
                T::Sym("<") => GOp::Lt,
                T::Sym(">") => GOp::Gt,
                T::Sym("<=") => GOp::Le,
                T::Sym(">=") => GOp::Ge,
                T::Sym("=") => GOp::Eq,
                T::Sym("!=") => GOp::Ne,
                _ => return Ok(l),
            };
            self.next();
            let r = self.band()?;
            l = GExpr::Bin(op, Box::new(l), Box::new(r));
        }
    }
    fn band(&mut self) -> Result<GExpr, ParseError> {
        let mut l = self.atom()?;
        while self.is_sym("&") {
            self.next();
            let r = self.atom()?;
            l = GExpr::Bin(GOp::BitAnd, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn atom(&mut self) -> Result<GExpr, ParseError> {
        let (t, span) = self.next();
        match t {
            T::Int(n) => Ok(GExpr::Num(n)),
            T::Sym("-") => match self.next() {
                (T::Int(n), _) => Ok(GExpr::Num(-n)),
                (_, s) => Err(ParseError::new("expected a number after '-'", s)),
            },
            T::Sym("(") => {
                let e = self.or()?;
                if !self.is_sym(")") {
                    return Err(self.err("expected ')'"));
                }
                self.next();
                Ok(e)
            }
            T::Ancestor(k) => {
                if self.in_agg {
                    return Err(ParseError::new(
                        "ancestors ('[^]', '[^k]') are not allowed inside an aggregate",
                        span,
                    ));
                }
                let (t, s) = self.next();
                match t {
                    T::Name(n) => self.attr(&n, s).map(|a| GExpr::Attr(Scope::Ancestor(k), a)),
                    _ => Err(ParseError::new("expected an attribute after '[^]'", s)),
                }
            }
            T::Sym(p @ ("[]" | "[<]")) => {
                let scope = match p {
                    "[]" => Scope::Child,
                    _ => Scope::Prev,
                };
                let allowed = match scope {
                    Scope::Child => matches!(self.part, PartKind::Child | PartKind::Sibling),
                    _ => self.part == PartKind::Child,
                };
                if !(allowed && self.in_agg) {
                    let parts = match scope {
                        Scope::Child => "a child: or sibling: part",
                        _ => "a child: part",
                    };
                    return Err(ParseError::new(
                        format!("'{p}' is only allowed inside an aggregate of {parts}"),
                        span,
                    ));
                }
                let (t, s) = self.next();
                match t {
                    T::Name(n) => self.attr(&n, s).map(|a| GExpr::Attr(scope, a)),
                    _ => Err(ParseError::new(
                        format!("expected an attribute after '{p}'"),
                        s,
                    )),
                }
            }
            T::Name(n) => {
                let agg = match n.as_str() {
                    "count" => Some(Agg::Count),
                    "sum" => Some(Agg::Sum),
                    "min" => Some(Agg::Min),
                    "max" => Some(Agg::Max),
                    "avg" => Some(Agg::Avg),
                    _ => None,
                };
                if let Some(agg) = agg
                    && self.is_sym("(")
                {
                    return self.aggregate(agg, span);
                }
                if let Some((_, v)) = self.names.consts.iter().find(|(c, _)| *c == n) {
                    return Ok(GExpr::Num(*v));
                }
                self.attr(&n, span).map(|a| GExpr::Attr(Scope::Bare, a))
            }
            T::End => Err(ParseError::new("expected an expression", span)),
            T::Sym(s) => Err(ParseError::new(
                format!("expected an expression, found '{s}'"),
                span,
            )),
        }
    }
    fn attr(&self, n: &str, span: Span) -> Result<usize, ParseError> {
        if n == "node_id" {
            return Ok(self.names.attrs.len());
        }
        if n == "last_move" {
            return Err(ParseError::new(
                "last_move is shown in results but cannot be compared",
                span,
            ));
        }
        self.names.attrs.iter().position(|a| a == n).ok_or_else(|| {
            ParseError::new(
                format!(
                    "unknown attribute or constant '{n}' (attributes: {})",
                    self.names.attrs.join(", ")
                ),
                span,
            )
        })
    }
    fn aggregate(&mut self, agg: Agg, span: Span) -> Result<GExpr, ParseError> {
        if self.in_agg {
            return Err(ParseError::new("aggregates cannot be nested", span));
        }
        if self.part == PartKind::Node {
            return Err(ParseError::new(
                "an aggregate in a node: part must stand alone (node: count(...))",
                span,
            ));
        }
        if self.part == PartKind::Subtree && matches!(agg, Agg::Min | Agg::Max) {
            return Err(ParseError::new(
                "min and max are available in child: and sibling: parts (subtree: has count, sum, avg)",
                span,
            ));
        }
        self.next();
        let arg = if self.is_sym("*") {
            if agg != Agg::Count {
                return Err(self.err("only count takes '*'"));
            }
            self.next();
            None
        } else {
            self.in_agg = true;
            let e = self.or();
            self.in_agg = false;
            Some(e?)
        };
        if !self.is_sym(")") {
            return Err(self.err("expected ')'"));
        }
        self.next();
        self.aggs.push(AggDef { agg, arg });
        Ok(GExpr::Agg(self.aggs.len() - 1))
    }
}

/// Whether every aggregate is an operand of a relational operator.
fn aggregates_compared(e: &GExpr, under_rel: bool) -> bool {
    match e {
        GExpr::Agg(_) => under_rel,
        GExpr::Bin(op, a, b) => {
            let rel = matches!(
                op,
                GOp::Lt | GOp::Gt | GOp::Le | GOp::Ge | GOp::Eq | GOp::Ne
            );
            aggregates_compared(a, rel) && aggregates_compared(b, rel)
        }
        GExpr::Not(a) => aggregates_compared(a, false),
        _ => true,
    }
}

/// Parses and checks one query.
pub fn parse_gtql(src: &str, names: &GtqlNames) -> Result<GtqlQuery, ParseError> {
    let toks = lex(src)?;
    let mut p = P {
        toks,
        i: 0,
        names,
        part: PartKind::Node,
        in_agg: false,
        aggs: Vec::new(),
    };
    let mut q = GtqlQuery::default();
    let mut last: Option<PartKind> = None;
    loop {
        if matches!(p.peek(), T::End) {
            break;
        }
        let (t, span) = p.next();
        let kind = match &t {
            T::Name(n) if n == "node" => PartKind::Node,
            T::Name(n) if n == "child" => PartKind::Child,
            T::Name(n) if n == "subtree" => PartKind::Subtree,
            T::Name(n) if n == "sibling" => PartKind::Sibling,
            _ => {
                return Err(ParseError::new(
                    "expected 'node:', 'child:', 'subtree:' or 'sibling:'",
                    span,
                ));
            }
        };
        if last.is_some_and(|l| (l as u8) >= (kind as u8)) {
            return Err(ParseError::new(
                "parts must come in the order node:, child:, subtree:, sibling:, each at most once",
                span,
            ));
        }
        last = Some(kind);
        if !p.is_sym(":") {
            return Err(p.err("expected ':'"));
        }
        p.next();
        p.part = kind;
        p.aggs.clear();
        let start = p.span().start;
        // A stand-alone `node: count(...)` answers a number.
        if kind == PartKind::Node && p.is_word("count") {
            let save = p.i;
            p.part = PartKind::Child;
            p.next();
            if p.is_sym("(") {
                let r = p.aggregate(Agg::Count, start..start + 5);
                if let Ok(GExpr::Agg(_)) = &r
                    && matches!(p.peek(), T::End | T::Sym(";"))
                {
                    let def = p.aggs.pop().unwrap_or(AggDef {
                        agg: Agg::Count,
                        arg: None,
                    });
                    if def.arg.as_ref().is_some_and(uses_child_scope) {
                        return Err(ParseError::new(
                            "'[]' and '[<]' are only allowed in child: parts",
                            start..p.span().start,
                        ));
                    }
                    q.standalone = Some(def);
                    if p.is_sym(";") {
                        p.next();
                    }
                    if !matches!(p.peek(), T::End) {
                        return Err(p.err("a stand-alone count answers a number; it cannot be combined with other parts"));
                    }
                    return Ok(q);
                }
                r?;
            }
            p.i = save;
            p.part = PartKind::Node;
            p.aggs.clear();
        }
        let e = p.or()?;
        let end = p.span().start;
        if !aggregates_compared(&e, false) {
            return Err(ParseError::new(
                "an aggregate must be compared (e.g. count(*) > 0)",
                start..end,
            ));
        }
        match kind {
            PartKind::Node => q.node = Some(e),
            PartKind::Child => {
                q.child = Some(e);
                q.child_aggs = std::mem::take(&mut p.aggs);
            }
            PartKind::Subtree => {
                q.subtree = Some(e);
                q.subtree_aggs = std::mem::take(&mut p.aggs);
            }
            PartKind::Sibling => {
                q.sibling = Some(e);
                q.sibling_aggs = std::mem::take(&mut p.aggs);
            }
        }
        if p.is_sym(";") {
            p.next();
        } else if !matches!(p.peek(), T::End) {
            return Err(p.err("expected ';' or the end of the query"));
        }
    }
    Ok(q)
}

fn uses_child_scope(e: &GExpr) -> bool {
    e.reads(|s| matches!(s, Scope::Child | Scope::Prev))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> GtqlNames {
        GtqlNames {
            attrs: vec!["type".into(), "flags".into(), "depth".into()],
            consts: vec![("PVNode".into(), 0), ("QNode".into(), 2)],
        }
    }

    #[test]
    fn precedence() {
        let q = parse_gtql(
            "node: not flags & QNode and depth > 1 or type = PVNode",
            &names(),
        )
        .unwrap();
        let GExpr::Bin(GOp::Or, l, _) = q.node.unwrap() else {
            panic!()
        };
        let GExpr::Bin(GOp::And, n, _) = *l else {
            panic!()
        };
        assert!(matches!(*n, GExpr::Not(ref x) if matches!(**x, GExpr::Bin(GOp::BitAnd, ..))));
    }

    #[test]
    fn errors_point_at_the_mistake() {
        for (q, at) in [
            ("node: foo = 1", 6),
            ("node: []type = 1", 6),
            ("child: []type = 1", 7),
            ("subtree: count(count(*) > 1) > 0", 15),
            ("subtree: count(*)", 9),
            ("subtree: count(*) > 1; node: type = 0", 23),
            ("node: type = 0 child: count(*) > 1", 15),
            ("node: count(*) > 3", 6),
            ("node: [^0]type = 1", 6),
            ("node: [^x]type = 1", 6),
            ("child: count([^2]type = 1) > 0", 13),
            ("node: [^2] = 1", 11),
        ] {
            let e = parse_gtql(q, &names()).unwrap_err();
            assert_eq!(e.span.start, at, "{q}: {}", e.message);
        }
    }

    #[test]
    fn sibling_part() {
        let q = parse_gtql(
            "node: type = 0; sibling: count([]type = type) = 0",
            &names(),
        )
        .unwrap();
        assert_eq!(q.sibling_aggs.len(), 1);
        for bad in [
            "sibling: count([<]type = 1) > 0",
            "sibling: [^]type = 1; node: type = 0",
            "sibling: count(*)",
        ] {
            assert!(parse_gtql(bad, &names()).is_err(), "{bad}");
        }
    }

    #[test]
    fn ancestors() {
        let q = parse_gtql("node: [^]type = [^3]type", &names()).unwrap();
        assert_eq!(
            q.node,
            Some(GExpr::Bin(
                GOp::Eq,
                Box::new(GExpr::Attr(Scope::Ancestor(1), 0)),
                Box::new(GExpr::Attr(Scope::Ancestor(3), 0)),
            ))
        );
    }

    #[test]
    fn standalone_count() {
        let q = parse_gtql("node: count(type = PVNode)", &names()).unwrap();
        assert!(q.standalone.is_some() && q.node.is_none());
        let q = parse_gtql("node: count(*)", &names()).unwrap();
        assert_eq!(q.standalone.unwrap().arg, None);
    }
}
