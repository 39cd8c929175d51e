//! Recursive-descent parser from tokens to the syntax tree, with name resolution.
//!
//! Operator precedence, loosest first: assignment; `or`; `and`; `not`; comparisons (chained),
//! `in`, `~~`; `|`; `&`; `+ -`; `* / %`; `attacks attackedby -> <-`; `:`; prefix filters
//! (`#`, `~`, `power X`, `up 1 X`, ...); postfix `[...]` and an attached dash; primaries.
//! Keyword filters live in `filters.rs`; this file holds the operator skeleton.

use crate::ast::*;
use crate::error::ParseError;
use crate::filter;
use crate::keywords::is_reserved;
use crate::token::{Tok, Token};
use crate::type_of::{Scope, ty_of};
use crate::types::Ty;

type PResult<T> = Result<T, ParseError>;

const MAX_NESTING: usize = 100;

/// The longest chain of arithmetic operators (`+` and `-`, or `*`, `/` and `%`): such a chain
/// nests one level per operator, and evaluation walks the nesting. (Chains of `and`, `or`, `|`
/// and `&` are regrouped instead, see [`balanced`].)
const MAX_CHAIN: usize = 1000;

/// Joins `operands` (in source order, at least one) with an associative operator as a balanced
/// tree, iteratively: a chain of 20,000 `or`s is 15 levels deep, not 20,000 (which overflowed
/// the stack when evaluated). Evaluation order and short-circuiting are those of the
/// left-nested form, since the operator is associative.
fn balanced(mut operands: Vec<Node>, join: impl Fn(Node, Node) -> Expr) -> Node {
    while operands.len() > 1 {
        let mut next = Vec::with_capacity(operands.len().div_ceil(2));
        let mut it = operands.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => {
                    let span = a.span.start..b.span.end.max(a.span.start);
                    next.push(Node {
                        expr: join(a, b),
                        span,
                    });
                }
                None => next.push(a),
            }
        }
        operands = next;
    }
    operands.pop().unwrap_or(Node {
        expr: Expr::True,
        span: 0..0,
    })
}

/// Parser state: the tokens and the names defined so far.
pub struct Parser {
    toks: Vec<Token>,
    i: usize,
    pub(crate) vars: Vec<(String, VarKind)>,
    /// The last slot of each name in `vars` (looking names up by scanning `vars` made a query
    /// with many variables quadratic to parse).
    var_index: std::collections::HashMap<String, usize>,
    pub(crate) var_types: Vec<Ty>,
    pub(crate) functions: Vec<Function>,
    /// The sort keys met so far (by title).
    pub(crate) sorts: Vec<SortKey>,
    pub(crate) function_depth: usize,
    nesting: usize,
    /// Inside `x[a:b]`, where `:` is the slice separator rather than the colon filter.
    no_colon: bool,
    /// Reading a `line` constituent: a `+` or `*` followed by no operand is the line's
    /// repetition mark, not arithmetic.
    pub(crate) in_line: bool,
}

impl Parser {
    pub(crate) fn new(toks: Vec<Token>) -> Self {
        Self {
            toks,
            i: 0,
            vars: Vec::new(),
            var_index: std::collections::HashMap::new(),
            var_types: Vec::new(),
            functions: Vec::new(),
            sorts: Vec::new(),
            function_depth: 0,
            nesting: 0,
            no_colon: false,
            in_line: false,
        }
    }

    pub(crate) fn peek(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    pub(crate) fn peek_at(&self, k: usize) -> &Token {
        &self.toks[(self.i + k).min(self.toks.len() - 1)]
    }

    pub(crate) fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }

    pub(crate) fn at_sym(&self, s: &str) -> bool {
        matches!(&self.peek().tok, Tok::Sym(x) if *x == s)
    }

    pub(crate) fn at_word(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(x) if x == w)
    }

    pub(crate) fn eat_sym(&mut self, s: &str) -> bool {
        if self.at_sym(s) {
            self.next();
            true
        } else {
            false
        }
    }

    pub(crate) fn eat_word(&mut self, w: &str) -> bool {
        if self.at_word(w) {
            self.next();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_sym(&mut self, s: &str) -> PResult<Token> {
        if self.at_sym(s) {
            Ok(self.next())
        } else {
            Err(self.unexpected(&format!("expected '{s}'")))
        }
    }

    pub(crate) fn unexpected(&self, what: &str) -> ParseError {
        let t = self.peek();
        let found = match &t.tok {
            Tok::Eof => "end of input".to_owned(),
            Tok::Word(w) => format!("'{w}'"),
            Tok::Sym(s) => format!("'{s}'"),
            Tok::Number(n) => format!("'{n}'"),
            Tok::Str(s) => format!("\"{s}\""),
            _ => "this".to_owned(),
        };
        ParseError::new(format!("{what}, found {found}"), t.span.clone())
    }

    /// The span of the token read last.
    pub(crate) fn previous_span(&self) -> Span {
        self.toks[self.i.saturating_sub(1)].span.clone()
    }

    pub(crate) fn span_from(&self, start: usize) -> Span {
        let end = self.toks[self.i.saturating_sub(1)].span.end.max(start);
        start..end
    }

    pub(crate) fn var_slot(&self, name: &str) -> Option<usize> {
        self.var_index.get(name).copied()
    }

    pub(crate) fn declare(&mut self, name: &str, kind: VarKind, ty: Ty) -> usize {
        if let Some(s) = self.var_slot(name)
            && self.vars[s].1 == kind
        {
            if self.var_types[s] != ty {
                self.var_types[s] = Ty::Unknown;
            }
            return s;
        }
        self.vars.push((name.to_owned(), kind));
        self.var_types.push(ty);
        self.var_index.insert(name.to_owned(), self.vars.len() - 1);
        self.vars.len() - 1
    }

    /// Whether the token can begin a filter.
    pub(crate) fn starts_filter(&self) -> bool {
        match &self.peek().tok {
            Tok::Eof => false,
            Tok::Sym(s) => matches!(*s, "(" | "{" | "#" | "~" | "-" | "[forall]" | "◭"),
            Tok::Word(w) => !matches!(
                w.as_str(),
                "then" | "else" | "and" | "or" | "in" | "attacks" | "attackedby" | "through" | "to"
            ),
            _ => true,
        }
    }

    // ----- operator levels -------------------------------------------------------------------

    /// A whole filter, assignments included.
    pub(crate) fn filter(&mut self) -> PResult<Node> {
        self.nested(Self::filter_inner)
    }

    /// Runs a recursive step under the nesting limit: the parser is recursive, and the limit
    /// keeps a pathological query (`not not not ...`, `((((...`) from exhausting the stack.
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> PResult<Node>) -> PResult<Node> {
        if self.nesting >= MAX_NESTING {
            return Err(ParseError::new(
                "filters are nested too deeply",
                self.peek().span.clone(),
            ));
        }
        self.nesting += 1;
        let r = f(self);
        self.nesting -= 1;
        r
    }

    /// A whole filter without a nesting level of its own, for a prefix whose own parse
    /// already counted one (a transform: its argument then costs what `unary` cost before).
    pub(crate) fn filter_inner(&mut self) -> PResult<Node> {
        let start = self.peek().span.start;
        // `p = ...` with a piece letter as the name.
        if let (Tok::Designator(_), Tok::Sym(op)) = (&self.peek().tok, &self.peek_at(1).tok)
            && is_assign_op(op)
        {
            let t = self.peek().clone();
            return Err(ParseError::new(
                format!(
                    "'{}' is a piece designator, not a variable name",
                    self.text_of(&t)
                ),
                t.span,
            ));
        }
        if let Tok::Word(name) = &self.peek().tok {
            let name = name.clone();
            if !is_reserved(&name)
                && self.at_dict(&name)
                && self.peek_at(1).tok == Tok::Sym("[")
                && let Some(node) = self.dict_assignment(&name, start)?
            {
                return Ok(node);
            }
        }
        self.or()
    }

    pub(crate) fn text_of(&self, _t: &Token) -> String {
        match &_t.tok {
            Tok::Word(w) => w.clone(),
            Tok::Designator(d) => crate::types::designator_text(d),
            _ => String::new(),
        }
    }

    fn at_dict(&self, name: &str) -> bool {
        self.var_slot(name)
            .is_some_and(|s| self.vars[s].1 == VarKind::Dictionary)
    }

    /// `name op value`, the name the next token.
    pub(crate) fn assignment(&mut self, name: String, start: usize) -> PResult<Node> {
        let name_tok = self.next();
        let Tok::Sym(op) = self.next().tok else {
            unreachable!("checked by the caller")
        };
        if self.at_dict(&name) {
            return Err(ParseError::new(
                format!("'{name}' is a dictionary; assign to an entry: {name}[key] = value"),
                name_tok.span,
            ));
        }
        // The value binds tighter than comparisons and `and`/`or`, as arithmetic does.
        let value = self.union_level()?;
        let vty = ty_of(&value, self);
        let op = assign_op(op);
        if let AssignOp::Arith(_) = op {
            let Some(slot) = self.var_slot(&name) else {
                return Err(ParseError::new(
                    format!("'{name}' is used before it is assigned"),
                    name_tok.span,
                ));
            };
            let string_append = vty == Ty::String && matches!(op, AssignOp::Arith(BinOp::Add));
            if vty != Ty::Number && vty != Ty::Unknown && !string_append {
                return Err(ParseError::new(
                    "compound assignment needs a number on the right (or a string after '+=')",
                    value.span.clone(),
                ));
            }
            return Ok(Node {
                expr: Expr::Assign(slot, op, Box::new(value)),
                span: self.span_from(start),
            });
        }
        if vty == Ty::Logical {
            return Err(ParseError::new(
                "this filter has no value to assign",
                value.span.clone(),
            ));
        }
        if op == AssignOp::IfNonEmpty && !matches!(vty, Ty::Set | Ty::Unknown) {
            return Err(ParseError::new(
                "'=?' assigns a set (when it is not empty)",
                value.span.clone(),
            ));
        }
        if let Some(s) = self.var_slot(&name)
            && self.vars[s].1 == VarKind::Piece
        {
            return Err(ParseError::new(
                format!("'{name}' is a piece variable: assign it with 'piece {name} = ...'"),
                name_tok.span,
            ));
        }
        // A persistent variable stays one (its kind was declared by `persistent`).
        let kind = self
            .var_slot(&name)
            .map(|s| self.vars[s].1)
            .filter(|k| matches!(k, VarKind::Persistent { .. }))
            .unwrap_or(VarKind::Plain);
        let slot = self.declare(&name, kind, vty);
        Ok(Node {
            expr: Expr::Assign(slot, op, Box::new(value)),
            span: self.span_from(start),
        })
    }

    /// `D[k] = v`; returns `None` (and consumes nothing) when it is a read `D[k]`.
    fn dict_assignment(&mut self, name: &str, start: usize) -> PResult<Option<Node>> {
        let save = self.i;
        self.next();
        self.next();
        let key = self.filter()?;
        self.expect_sym("]")?;
        let slot = self.var_slot(name).unwrap_or_default();
        if self.at_sym("=") {
            self.next();
            let value = self.filter()?;
            return Ok(Some(Node {
                expr: Expr::DictSet(slot, Box::new(key), Box::new(value)),
                span: self.span_from(start),
            }));
        }
        if let Tok::Sym(op) = &self.peek().tok
            && is_assign_op(op)
        {
            return Err(ParseError::new(
                format!("compound assignment '{op}' is not supported on a dictionary entry"),
                self.peek().span.clone(),
            ));
        }
        self.i = save;
        Ok(None)
    }

    fn or(&mut self) -> PResult<Node> {
        let mut operands = vec![self.and()?];
        while self.eat_word("or") {
            operands.push(self.and()?);
        }
        Ok(balanced(operands, |a, b| {
            Expr::Or(Box::new(a), Box::new(b))
        }))
    }

    fn and(&mut self) -> PResult<Node> {
        let mut operands = vec![self.not()?];
        while self.eat_word("and") {
            operands.push(self.not()?);
        }
        Ok(balanced(operands, |a, b| {
            Expr::And(Box::new(a), Box::new(b))
        }))
    }

    pub(crate) fn not(&mut self) -> PResult<Node> {
        let start = self.peek().span.start;
        // An assignment is an operand of `and`/`or`: `v = k or q` is `(v = k) or q`.
        if let (Tok::Word(name), Tok::Sym(op)) = (&self.peek().tok, &self.peek_at(1).tok)
            && !is_reserved(name)
            && is_assign_op(op)
        {
            let name = name.clone();
            return self.assignment(name, start);
        }
        if self.eat_word("not") {
            let inner = self.nested(Self::not)?;
            return Ok(Node {
                expr: Expr::Not(Box::new(inner)),
                span: self.span_from(start),
            });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> PResult<Node> {
        let start = self.peek().span.start;
        let first = self.union()?;
        if self.eat_word("in") {
            let rhs = self.union()?;
            return Ok(Node {
                expr: Expr::In(Box::new(first), Box::new(rhs)),
                span: self.span_from(start),
            });
        }
        if self.eat_sym("~~") {
            let rhs = self.union()?;
            if !matches!(ty_of(&rhs, self), Ty::String | Ty::Unknown) {
                return Err(ParseError::new(
                    "'~~' needs a regular expression string",
                    rhs.span,
                ));
            }
            return Ok(Node {
                expr: Expr::Regex(Box::new(first), Box::new(rhs)),
                span: self.span_from(start),
            });
        }
        let mut rest = Vec::new();
        let mut left_ty = ty_of(&first, self);
        while let Some(op) = self.cmp_op() {
            let op_tok = self.next();
            let rhs = self.union()?;
            let rty = ty_of(&rhs, self);
            crate::types::check_compare(op, left_ty, rty, op_tok.span.clone())?;
            left_ty = rty;
            rest.push((op, rhs));
        }
        if rest.is_empty() {
            return Ok(first);
        }
        Ok(Node {
            expr: Expr::Compare(Box::new(first), rest),
            span: self.span_from(start),
        })
    }

    fn cmp_op(&self) -> Option<CmpOp> {
        let Tok::Sym(s) = &self.peek().tok else {
            return None;
        };
        Some(match *s {
            "<" | "[<]" => CmpOp::Lt,
            "<=" | "[<=]" => CmpOp::Le,
            ">" | "[>]" => CmpOp::Gt,
            ">=" | "[>=]" => CmpOp::Ge,
            "==" => CmpOp::Eq,
            "!=" => CmpOp::Ne,
            _ => return None,
        })
    }

    /// A filter up to (not including) comparisons: sets, arithmetic, attacks, `:`.
    pub(crate) fn union_level(&mut self) -> PResult<Node> {
        self.nested(Self::union)
    }

    fn union(&mut self) -> PResult<Node> {
        self.set_chain("|", BinOp::Union, Self::inter)
    }

    fn inter(&mut self) -> PResult<Node> {
        self.set_chain("&", BinOp::Inter, Self::additive)
    }

    /// Operands joined by the set operator `sym` (`|` or `&`), checked to be sets, kept as a
    /// balanced tree (a long chain does not nest deeply).
    fn set_chain(
        &mut self,
        sym: &'static str,
        op: BinOp,
        operand: fn(&mut Self) -> PResult<Node>,
    ) -> PResult<Node> {
        let mut operands = vec![operand(self)?];
        while self.at_sym(sym) {
            let t = self.next();
            let rhs = operand(self)?;
            if let Some(lhs) = operands.last() {
                crate::types::check_set_op(sym, ty_of(lhs, self), ty_of(&rhs, self), t.span)?;
            }
            operands.push(rhs);
        }
        Ok(balanced(operands, |a, b| {
            Expr::Binary(op, Box::new(a), Box::new(b))
        }))
    }

    fn additive(&mut self) -> PResult<Node> {
        self.arithmetic(
            |t| match t {
                Tok::Sym("+") => Some(BinOp::Add),
                Tok::Sym("-") => Some(BinOp::Sub),
                _ => None,
            },
            Self::multiplicative,
            "additions and subtractions",
        )
    }

    fn multiplicative(&mut self) -> PResult<Node> {
        self.arithmetic(
            |t| match t {
                Tok::Sym("*") => Some(BinOp::Mul),
                Tok::Sym("/") => Some(BinOp::Div),
                Tok::Sym("%") => Some(BinOp::Mod),
                _ => None,
            },
            Self::arrow,
            "products and quotients",
        )
    }

    /// A chain of arithmetic operators of one precedence level (`operator` tells them), its
    /// operands parsed by `operand`. The chain stays nested to the left, as written: integer
    /// arithmetic here fails on overflow, so regrouping could change an answer; it is bounded
    /// instead ([`MAX_CHAIN`]). The type of the left side is kept as the chain grows rather
    /// than recomputed from the growing tree (that made long sums quadratic).
    fn arithmetic(
        &mut self,
        operator: impl Fn(&Tok) -> Option<BinOp>,
        operand: fn(&mut Self) -> PResult<Node>,
        what: &str,
    ) -> PResult<Node> {
        let start = self.peek().span.start;
        let mut lhs = operand(self)?;
        let mut lhs_ty = ty_of(&lhs, self);
        let mut chain = 0usize;
        while let Some(op) = operator(&self.peek().tok) {
            if self.in_line
                && matches!(op, BinOp::Add | BinOp::Mul)
                && !matches!(
                    self.peek_at(1).tok,
                    Tok::Number(_) | Tok::Word(_) | Tok::Designator(_) | Tok::Sym("(" | "#" | "-")
                )
            {
                break;
            }
            let t = self.next();
            let rhs = operand(self)?;
            let rhs_ty = ty_of(&rhs, self);
            lhs_ty = crate::types::arith_type(op, lhs_ty, rhs_ty, t.span.clone())?;
            chain += 1;
            if chain > MAX_CHAIN {
                return Err(ParseError::new(
                    format!("more than {MAX_CHAIN} {what} in one expression"),
                    t.span,
                ));
            }
            lhs = Node {
                expr: Expr::Binary(op, Box::new(lhs), Box::new(rhs)),
                span: self.span_from(start),
            };
        }
        Ok(lhs)
    }

    /// Operands joined by attack arrows: two make a binary filter, more a chain, whose arrows
    /// must all point one way.
    fn arrow(&mut self) -> PResult<Node> {
        let start = self.peek().span.start;
        let mut operands = vec![self.colon()?];
        let mut arrows: Vec<(String, Span)> = Vec::new();
        loop {
            let ops = filter::attack::OPERATORS;
            let op = match &self.peek().tok {
                Tok::Word(w) if ops.contains(&w.as_str()) => w.clone(),
                Tok::Sym(s) if ops.contains(s) => (*s).to_owned(),
                _ => break,
            };
            let t = self.next();
            if operands.len() > filter::attack::MAX_CHAIN {
                return Err(ParseError::new(
                    format!(
                        "more than {} operands in one chain of attack arrows",
                        filter::attack::MAX_CHAIN
                    ),
                    t.span,
                ));
            }
            arrows.push((op, t.span));
            operands.push(self.colon()?);
        }
        let span = self.span_from(start);
        filter::attack::join(operands, &arrows, span)
    }

    /// What `#` counts: a set up to `|`, `&` and attack arrows, which CQL's precedence table
    /// puts above `#` (`#P attackedby K` counts the pawns the king attacks), but not the
    /// arithmetic below it (`#A - #a`).
    fn count_operand(&mut self) -> PResult<Node> {
        self.set_chain("|", BinOp::Union, Self::count_intersection)
    }

    fn count_intersection(&mut self) -> PResult<Node> {
        self.set_chain("&", BinOp::Inter, Self::arrow)
    }

    fn colon(&mut self) -> PResult<Node> {
        let start = self.peek().span.start;
        let lhs = self.unary()?;
        if !self.no_colon && self.eat_sym(":") {
            let rhs = self.nested(Self::colon)?;
            return Ok(Node {
                expr: Expr::Colon(Box::new(lhs), Box::new(rhs)),
                span: self.span_from(start),
            });
        }
        Ok(lhs)
    }

    /// Prefix operators and keyword filters that take one argument.
    pub(crate) fn unary(&mut self) -> PResult<Node> {
        self.nested(Self::unary_inner)
    }

    fn unary_inner(&mut self) -> PResult<Node> {
        let start = self.peek().span.start;
        let wrap = |p: &Self, e: Expr| Node {
            expr: e,
            span: p.span_from(start),
        };
        if self.eat_sym("#") {
            let arg = self.nested(Self::count_operand)?;
            return Ok(wrap(self, Expr::Count(Box::new(arg))));
        }
        if self.eat_sym("~") {
            let arg = self.nested(Self::unary)?;
            return Ok(wrap(self, Expr::Complement(Box::new(arg))));
        }
        if self.eat_sym("-") {
            let arg = self.nested(Self::unary)?;
            return Ok(wrap(self, Expr::Neg(Box::new(arg))));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> PResult<Node> {
        let start = self.peek().span.start;
        let mut node = self.primary()?;
        loop {
            match &self.peek().tok {
                Tok::Dash { .. } if self.peek().attached && is_square_like(&node) => {
                    node = self.dash(Some(node), start)?;
                }
                Tok::Sym("[") if self.peek().attached => {
                    node = self.index(node, start)?;
                }
                _ => return Ok(node),
            }
        }
    }

    fn index(&mut self, base: Node, start: usize) -> PResult<Node> {
        self.expect_sym("[")?;
        if let Expr::Var(slot) = base.expr
            && self.vars[slot].1 == VarKind::Dictionary
        {
            let key = self.filter()?;
            self.expect_sym("]")?;
            return Ok(Node {
                expr: Expr::DictGet(slot, Box::new(key)),
                span: self.span_from(start),
            });
        }
        let saved = std::mem::replace(&mut self.no_colon, true);
        let from = if self.at_sym(":") {
            None
        } else {
            match self.filter() {
                Ok(f) => Some(Box::new(f)),
                Err(e) => {
                    self.no_colon = saved;
                    return Err(e);
                }
            }
        };
        self.no_colon = saved;
        let range = self.eat_sym(":");
        let to = if range && !self.at_sym("]") {
            Some(Box::new(self.filter()?))
        } else {
            None
        };
        self.expect_sym("]")?;
        Ok(Node {
            expr: Expr::Slice(Box::new(base), from, to, range),
            span: self.span_from(start),
        })
    }

    fn primary(&mut self) -> PResult<Node> {
        let t = self.peek().clone();
        let start = t.span.start;
        let node = |e: Expr| Node {
            expr: e,
            span: t.span.clone(),
        };
        match &t.tok {
            Tok::Number(n) => {
                self.next();
                Ok(node(Expr::Number(*n)))
            }
            Tok::Str(s) => {
                self.next();
                Ok(node(Expr::Str(s.clone())))
            }
            Tok::Designator(d) => {
                self.next();
                Ok(node(Expr::Pieces(*d)))
            }
            Tok::Group(g) => {
                self.next();
                Ok(node(Expr::Group(*g)))
            }
            Tok::Dash { .. } => self.dash(None, start),
            Tok::Sym("(") => {
                self.next();
                let inner = self.filter()?;
                if !self.at_sym(")") {
                    return Err(self.unexpected("expected ')'"));
                }
                self.next();
                Ok(Node {
                    expr: inner.expr,
                    span: self.span_from(start),
                })
            }
            Tok::Sym("{") => {
                self.next();
                let mut items = Vec::new();
                while !self.at_sym("}") {
                    if matches!(self.peek().tok, Tok::Eof) {
                        return Err(ParseError::new("this '{' is never closed", t.span.clone()));
                    }
                    items.push(self.filter()?);
                }
                self.next();
                Ok(Node {
                    expr: Expr::Compound(items),
                    span: self.span_from(start),
                })
            }
            // The square and piece loops' symbol forms: `x∊S`, `∀x∊S`, `◭x∊S`, `∀◭x∊S`.
            Tok::Word(_) if self.peek_at(1).tok == Tok::Sym("[element]") => {
                let e = self.iteration(false, false)?;
                Ok(Node {
                    expr: e,
                    span: self.span_from(start),
                })
            }
            Tok::Sym("[forall]") | Tok::Sym("◭") => {
                let all = self.eat_sym("[forall]");
                let piece = self.eat_sym("◭");
                let e = self.iteration(piece, all)?;
                Ok(Node {
                    expr: e,
                    span: self.span_from(start),
                })
            }
            Tok::Word(w) => {
                let w = w.clone();
                self.next();
                self.word(&w, start)
            }
            Tok::Result(_) | Tok::Sym(_) | Tok::Eof => Err(self.unexpected("expected a filter")),
        }
    }

    /// A dash filter; `from` is the set written immediately before it, if any.
    pub(crate) fn dash(&mut self, from: Option<Node>, start: usize) -> PResult<Node> {
        let t = self.next();
        let Tok::Dash { capture } = t.tok else {
            return Err(ParseError::new("expected '--'", t.span));
        };
        let mut d = Dash {
            from,
            to: None,
            capture,
            promotion: None,
            target: None,
            source: MoveSource::Pgn,
        };
        let attached = |p: &Self| p.peek().attached;
        match &self.peek().tok {
            Tok::Designator(_) if attached(self) => {
                let n = self.primary()?;
                d.to = Some(n);
            }
            Tok::Word(w) if attached(self) && !is_reserved(w) && self.var_slot(w).is_some() => {
                let n = self.primary()?;
                d.to = Some(n);
            }
            _ => {}
        }
        if self.at_sym("=") && attached(self) {
            let eq = self.next();
            let mask = match &self.peek().tok {
                Tok::Designator(p) => {
                    let p = *p;
                    self.next();
                    let mut m = 0u8;
                    for i in 0..12 {
                        if p.has_piece(i) {
                            m |= 1 << (i % 6);
                        }
                    }
                    m
                }
                Tok::Str(s) => {
                    let s = s.clone();
                    self.next();
                    let mut m = 0u8;
                    for c in s.chars() {
                        let i = "PNBRQK".find(c.to_ascii_uppercase()).ok_or_else(|| {
                            ParseError::new("unknown promotion piece", eq.span.clone())
                        })?;
                        m |= 1 << i;
                    }
                    m
                }
                _ => {
                    return Err(ParseError::new(
                        "expected a piece designator or a string as the promotion type after '='",
                        eq.span,
                    ));
                }
            };
            d.promotion = Some(mask);
            if self.at_word("or") || self.at_word("and") {
                return Err(ParseError::new(
                    "the promotion type after '=' takes the following 'or'/'and' with it in CQL 6.2; put the dash in parentheses",
                    self.peek().span.clone(),
                ));
            }
        }
        if self.at_sym("(") && attached(self) {
            let open = self.next();
            let mut items = Vec::new();
            while !self.at_sym(")") {
                if matches!(self.peek().tok, Tok::Eof) {
                    return Err(ParseError::new("this '(' is never closed", open.span));
                }
                items.push(self.filter()?);
            }
            self.next();
            let span = open.span.start..self.span_from(open.span.start).end;
            d.target = Some(if items.len() == 1 {
                items.pop().unwrap_or_else(|| unreachable!())
            } else {
                Node {
                    expr: Expr::Compound(items),
                    span,
                }
            });
        }
        Ok(Node {
            expr: Expr::Dash(Box::new(d)),
            span: self.span_from(start),
        })
    }

    /// Arguments in parentheses, separated by whitespace: `(x y z)`.
    pub(crate) fn paren_args(&mut self) -> PResult<Vec<Node>> {
        if !self.at_sym("(") {
            return Err(self.unexpected("expected '('"));
        }
        let open = self.next();
        let mut args = Vec::new();
        while !self.at_sym(")") {
            if matches!(self.peek().tok, Tok::Eof) {
                return Err(ParseError::new("this '(' is never closed", open.span));
            }
            args.push(self.filter()?);
            self.eat_sym(",");
        }
        self.next();
        Ok(args)
    }

    pub(crate) fn paren_args_n(&mut self, n: usize, what: &str) -> PResult<Vec<Node>> {
        let start = self.peek().span.start;
        let args = self.paren_args()?;
        if args.len() != n {
            return Err(ParseError::new(
                format!("'{what}' takes {n} arguments, got {}", args.len()),
                self.span_from(start),
            ));
        }
        Ok(args)
    }
}

fn is_assign_op(op: &str) -> bool {
    matches!(
        op,
        "=" | "=?" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|="
    )
}

fn assign_op(op: &str) -> AssignOp {
    match op {
        "+=" => AssignOp::Arith(BinOp::Add),
        "-=" => AssignOp::Arith(BinOp::Sub),
        "*=" => AssignOp::Arith(BinOp::Mul),
        "/=" => AssignOp::Arith(BinOp::Div),
        "%=" => AssignOp::Arith(BinOp::Mod),
        "&=" => AssignOp::Arith(BinOp::Inter),
        "|=" => AssignOp::Arith(BinOp::Union),
        "=?" => AssignOp::IfNonEmpty,
        _ => AssignOp::Set,
    }
}

fn is_square_like(n: &Node) -> bool {
    matches!(n.expr, Expr::Pieces(_) | Expr::Var(_))
}

impl Scope for Parser {
    fn var_ty(&self, slot: usize) -> Ty {
        match self.vars.get(slot).map(|v| v.1) {
            Some(VarKind::Piece) => Ty::Set,
            _ => self.var_types.get(slot).copied().unwrap_or(Ty::Unknown),
        }
    }
}
