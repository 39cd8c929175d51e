//! The GTQL parser: precedence climbing over the tokens, with the part rules checked as it
//! goes and every recursion and operator chain bounded (see [`MAX_NESTING`]).

use super::lex::{T, lex};
use super::{Agg, AggDef, GExpr, GOp, GtqlNames, GtqlQuery, Scope};
use crate::ast::Span;
use crate::error::ParseError;

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
    /// Recursion depth (`not`, parentheses, aggregates).
    depth: usize,
}

/// How deeply `not`s, parentheses and aggregates may nest, and how many comparisons may
/// follow one another: the parser and the evaluators recurse, and a stack must not overflow
/// on any query (CQL has the same limit).
pub const MAX_NESTING: usize = 100;

/// A comparison's operand.
enum Operand {
    Expr(GExpr),
    /// A quoted move and its span.
    Move(String, Span),
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

    /// Runs a recursive step under the nesting limit, so that no query can overflow the stack.
    fn nested<R>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<R, ParseError>,
    ) -> Result<R, ParseError> {
        if self.depth >= MAX_NESTING {
            return Err(self.err(format!(
                "the query is nested too deeply (more than {MAX_NESTING} levels)"
            )));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// `a OP b OP c ...` for an associative operator, built as a balanced tree: a chain of a
    /// hundred thousand `or`s is then 17 levels deep, not a hundred thousand.
    fn chain(
        &mut self,
        op: GOp,
        is_op: impl Fn(&Self) -> bool,
        operand: impl Fn(&mut Self) -> Result<GExpr, ParseError>,
    ) -> Result<GExpr, ParseError> {
        let mut items = vec![operand(self)?];
        while is_op(self) {
            self.next();
            items.push(operand(self)?);
        }
        while items.len() > 1 {
            let mut pairs = Vec::with_capacity(items.len().div_ceil(2));
            let mut it = items.into_iter();
            while let Some(a) = it.next() {
                pairs.push(match it.next() {
                    Some(b) => GExpr::Bin(op, Box::new(a), Box::new(b)),
                    None => a,
                });
            }
            items = pairs;
        }
        items
            .pop()
            .ok_or_else(|| self.err("expected an expression"))
    }

    fn or(&mut self) -> Result<GExpr, ParseError> {
        self.chain(GOp::Or, |p| p.is_word("or"), Self::and)
    }
    fn and(&mut self) -> Result<GExpr, ParseError> {
        self.chain(GOp::And, |p| p.is_word("and"), Self::not)
    }
    fn not(&mut self) -> Result<GExpr, ParseError> {
        if self.is_word("not") {
            self.next();
            let e = self.nested(Self::not)?;
            return Ok(GExpr::Not(Box::new(e)));
        }
        self.rel()
    }
    fn rel(&mut self) -> Result<GExpr, ParseError> {
        let mut l = self.operand()?;
        let mut chained = 0;
        loop {
            let op = match self.peek() {
                T::Sym("<") => GOp::Lt,
                T::Sym(">") => GOp::Gt,
                T::Sym("<=") => GOp::Le,
                T::Sym(">=") => GOp::Ge,
                T::Sym("=") => GOp::Eq,
                T::Sym("!=") => GOp::Ne,
                _ => break,
            };
            chained += 1;
            if chained > MAX_NESTING {
                return Err(self.err(format!("more than {MAX_NESTING} comparisons in a row")));
            }
            self.next();
            let r = self.operand()?;
            l = Operand::Expr(self.compare(op, l, r)?);
        }
        match l {
            Operand::Expr(e) => Ok(e),
            Operand::Move(_, span) => Err(ParseError::new(
                "a quoted move must be compared with last_move (last_move = \"...\")",
                span,
            )),
        }
    }
    /// A comparison's operand: an expression, or a quoted move.
    fn operand(&mut self) -> Result<Operand, ParseError> {
        if let T::Str(m) = self.peek() {
            let m = m.clone();
            let span = self.span();
            self.next();
            return Ok(Operand::Move(m, span));
        }
        self.band().map(Operand::Expr)
    }
    fn compare(&self, op: GOp, l: Operand, r: Operand) -> Result<GExpr, ParseError> {
        match (l, r) {
            (Operand::Expr(a), Operand::Expr(b)) => Ok(GExpr::Bin(op, Box::new(a), Box::new(b))),
            (Operand::Expr(a), Operand::Move(m, span))
            | (Operand::Move(m, span), Operand::Expr(a)) => self.move_test(op, a, &m, span),
            (Operand::Move(_, _), Operand::Move(_, span)) => Err(ParseError::new(
                "two quoted moves cannot be compared: one side must be last_move",
                span,
            )),
        }
    }
    /// `last_move = "..."` (or `!=`): the move's code masked to what the text says of it.
    fn move_test(&self, op: GOp, a: GExpr, text: &str, span: Span) -> Result<GExpr, ParseError> {
        let last_move = self.names.last_move();
        if !matches!(a, GExpr::Attr(_, k) if k == last_move) {
            return Err(ParseError::new(
                "a quoted move can only be compared with last_move",
                span,
            ));
        }
        if !matches!(op, GOp::Eq | GOp::Ne) {
            return Err(ParseError::new(
                "a quoted move is compared with = or != only",
                span,
            ));
        }
        let (mask, value) = self.names.moves.pattern(text).ok_or_else(|| {
            ParseError::new(
                format!(
                    "'{text}' is not a move of this tree ({})",
                    self.names.moves.describe()
                ),
                span,
            )
        })?;
        let lhs = match mask {
            -1 => a,
            m => GExpr::Bin(GOp::BitAnd, Box::new(a), Box::new(GExpr::Num(m))),
        };
        Ok(GExpr::Bin(op, Box::new(lhs), Box::new(GExpr::Num(value))))
    }
    fn band(&mut self) -> Result<GExpr, ParseError> {
        self.chain(GOp::BitAnd, |p| p.is_sym("&"), Self::atom)
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
                let e = self.nested(Self::or)?;
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
            T::Str(_) => Err(ParseError::new(
                "a quoted move must be compared with last_move (last_move = \"...\")",
                span,
            )),
            T::Sym(s) => Err(ParseError::new(
                format!("expected an expression, found '{s}'"),
                span,
            )),
        }
    }
    fn attr(&self, n: &str, span: Span) -> Result<usize, ParseError> {
        if n == "node_id" {
            return Ok(self.names.columns());
        }
        if n == "last_move" {
            return Ok(self.names.last_move());
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
            let e = self.nested(Self::or);
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
        depth: 0,
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
            ..Default::default()
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

    /// Depth of an expression tree, without recursion.
    fn depth(e: &GExpr) -> usize {
        let mut max = 0;
        let mut stack = vec![(e, 1)];
        while let Some((e, d)) = stack.pop() {
            max = max.max(d);
            match e {
                GExpr::Bin(_, a, b) => {
                    stack.push((a, d + 1));
                    stack.push((b, d + 1));
                }
                GExpr::Not(a) => stack.push((a, d + 1)),
                GExpr::Num(_) | GExpr::Attr(..) | GExpr::Agg(_) => {}
            }
        }
        max
    }

    #[test]
    fn deep_queries_are_errors_with_spans_and_long_chains_stay_shallow() {
        let nots = format!("node: {}type = 1", "not ".repeat(100_000));
        let e = parse_gtql(&nots, &names()).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{}", e.message);
        // The span is where the level past the limit begins.
        assert_eq!(e.span.start, 6 + 4 * (MAX_NESTING + 1));
        let parens = format!("node: {}type = 1{}", "(".repeat(10_000), ")".repeat(10_000));
        let e = parse_gtql(&parens, &names()).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{}", e.message);
        let aggs = format!(
            "child: count({}[]type = 1{}) > 0",
            "(".repeat(5_000),
            ")".repeat(5_000)
        );
        assert!(parse_gtql(&aggs, &names()).is_err());
        let rel = format!("node: type{}", " = 1".repeat(1_000));
        assert!(parse_gtql(&rel, &names()).is_err());
        // A hundred thousand `or`s (or `and`s, or `&`s) are fine and shallow.
        for (op, term) in [(" or ", "type = 1"), (" and ", "type = 1"), (" & ", "type")] {
            let terms = vec![term; 100_000].join(op);
            let q = parse_gtql(&format!("node: {terms}"), &names()).unwrap();
            assert!(depth(&q.node.unwrap()) < 40, "{op}");
        }
        // Within the limit, nesting works.
        let ok = format!("node: {}type = 1{}", "(".repeat(50), ")".repeat(50));
        assert!(parse_gtql(&ok, &names()).is_ok());
    }

    #[test]
    fn last_move_compares_as_a_number_and_with_quoted_moves() {
        let n = names();
        let lm = n.last_move();
        let q = parse_gtql("node: last_move = 0", &n).unwrap();
        assert_eq!(
            q.node,
            Some(GExpr::Bin(
                GOp::Eq,
                Box::new(GExpr::Attr(Scope::Bare, lm)),
                Box::new(GExpr::Num(0))
            ))
        );
        let q = parse_gtql("node: \"e2e4\" != last_move", &n).unwrap();
        assert_eq!(
            q.node,
            Some(GExpr::Bin(
                GOp::Ne,
                Box::new(GExpr::Attr(Scope::Bare, lm)),
                Box::new(GExpr::Num(crate::gtql::text_move_code(b"e2e4")))
            ))
        );
        let q = parse_gtql("node: node_id >= 1000", &n).unwrap();
        assert!(q.node.unwrap().reads(|_| true));
        assert!(parse_gtql("child: count([]last_move = 'Nf3') > 0", &n).is_ok());
        for (bad, at) in [
            ("node: last_move < \"e2e4\"", 18),
            ("node: type = \"e2e4\"", 13),
            ("node: \"e2e4\"", 6),
            ("node: last_move = \"e2e4", 18),
            ("node: \"a\" = \"a\"", 12),
        ] {
            let e = parse_gtql(bad, &n).unwrap_err();
            assert_eq!(e.span.start, at, "{bad}: {}", e.message);
        }
    }
}
