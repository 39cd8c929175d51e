//! The keyword table: how each CQL keyword filter is parsed.
//!
//! The filters with a file of their own (`crate::filter`) are found through its table first;
//! the arms here are the language's core and the filters not yet moved to a file.

use crate::ast::*;
use crate::error::ParseError;
use crate::filter::syntax::Syntax;
use crate::keywords::is_reserved;
use crate::parser::Parser;
use crate::token::Tok;
use crate::type_of::ty_of;
use crate::types::Ty;

type PResult<T> = Result<T, ParseError>;

impl Parser {
    /// A filter that starts with the word `w` (already consumed).
    pub(crate) fn word(&mut self, w: &str, start: usize) -> PResult<Node> {
        if let Some(expr) = crate::filter::parse(w, self) {
            return Ok(Node {
                expr: expr?,
                span: self.span_from(start),
            });
        }
        let simple = |e: Expr| -> PResult<Option<Expr>> { Ok(Some(e)) };
        let expr: Option<Expr> = match w {
            "true" => simple(Expr::True)?,
            "false" => simple(Expr::False)?,
            "abs" => Some(Expr::Abs(Box::new(self.unary()?))),
            "sqrt" => Some(Expr::Sqrt(Box::new(self.unary()?))),
            "int" => Some(Expr::Int(Box::new(self.unary()?))),
            "lowercase" => Some(Expr::Case(true, Box::new(self.unary()?))),
            "uppercase" => Some(Expr::Case(false, Box::new(self.unary()?))),
            "max" => Some(Expr::MinMax(true, self.paren_args()?)),
            "min" => Some(Expr::MinMax(false, self.paren_args()?)),
            // As for `comment` and `message`, one argument may go without parentheses.
            "str" => Some(Expr::ToStr(self.note_args()?)),
            "comment" => Some(Expr::Comment(self.note_args()?)),
            "message" => {
                let quiet = self.eat_word("quiet");
                Some(Expr::Message(quiet, self.note_args()?))
            }
            "persistent" => {
                let quiet = self.eat_word("quiet");
                let t = self.peek().clone();
                let name = match &t.tok {
                    Tok::Word(n) if !is_reserved(n) => n.clone(),
                    _ => return Err(self.unexpected("expected a name after 'persistent'")),
                };
                if let Some(slot) = self.var_slot(&name)
                    && !matches!(self.vars[slot].1, VarKind::Persistent { .. })
                {
                    return Err(ParseError::new(
                        format!("'{name}' was used before as a variable that is not persistent"),
                        t.span,
                    ));
                }
                if !matches!(&self.peek_at(1).tok, Tok::Sym(op) if op.ends_with('=') && *op != "==")
                {
                    return Err(self.unexpected(&format!(
                        "a persistent variable is declared with its assignment: persistent {name} = ..."
                    )));
                }
                self.declare(&name, VarKind::Persistent { quiet }, Ty::Unknown);
                let node = self.assignment(name, t.span.start)?;
                Some(node.expr)
            }
            "atomic" => {
                // `atomic x = ...`: an assignment. (CQL rolls atomic variables back when a path
                // search abandons a branch; path searches here evaluate constituents for their
                // match only, so an assignment inside one is the query's own business.)
                let node = self.filter()?;
                if !matches!(node.expr, Expr::Assign(..)) {
                    return Err(ParseError::new(
                        "'atomic' goes before an assignment: atomic x = ...",
                        node.span,
                    ));
                }
                Some(node.expr)
            }
            "isbound" | "isunbound" => {
                let t = self.peek().clone();
                let name = match &t.tok {
                    Tok::Word(n) if !is_reserved(n) => n.clone(),
                    _ => return Err(self.unexpected(&format!("expected a variable after '{w}'"))),
                };
                self.next();
                let slot = match self.var_slot(&name) {
                    Some(s) => s,
                    None => self.declare(&name, VarKind::Plain, Ty::Unknown),
                };
                Some(Expr::IsBound(slot, w == "isbound"))
            }
            "not" => Some(Expr::Not(Box::new(self.not()?))),
            "if" => {
                let cond = self.filter()?;
                self.eat_word("then");
                let then = self.filter()?;
                let els = if self.eat_word("else") {
                    Some(Box::new(self.filter()?))
                } else {
                    None
                };
                Some(Expr::If(Box::new(cond), Box::new(then), els))
            }
            "square" | "piece" => Some(self.iteration(w == "piece", false)?),
            "loop" => Some(Expr::Loop(Box::new(self.filter()?))),
            "while" => {
                let open = self.peek().span.clone();
                if !self.at_sym("(") {
                    return Err(self.unexpected("expected '(' after 'while'"));
                }
                self.next();
                let cond = self.filter()?;
                if !self.eat_sym(")") {
                    return Err(ParseError::new("this '(' is never closed", open));
                }
                let body = self.filter()?;
                Some(Expr::While(Box::new(cond), Box::new(body)))
            }
            "dictionary" => {
                let name = self.new_name("dictionary")?;
                let slot = self.declare(&name, VarKind::Dictionary, Ty::Unknown);
                // `dictionary D["k"] = v`: declared with its first entry.
                if self.eat_sym("[") {
                    let key = self.filter()?;
                    self.expect_sym("]")?;
                    self.expect_sym("=")?;
                    let value = self.union_level()?;
                    Some(Expr::DictSet(slot, Box::new(key), Box::new(value)))
                } else {
                    Some(Expr::Declaration)
                }
            }
            "function" => {
                self.function()?;
                Some(Expr::Declaration)
            }
            "unbind" => {
                let t = self.peek().clone();
                let slot = match &t.tok {
                    Tok::Word(n) => self.var_slot(n),
                    _ => None,
                };
                let Some(slot) = slot else {
                    return Err(ParseError::new(
                        "'unbind' needs the name of an existing variable",
                        t.span,
                    ));
                };
                self.next();
                // `unbind D[k]`: one entry of a dictionary.
                let key = if self.vars[slot].1 == VarKind::Dictionary && self.eat_sym("[") {
                    let k = self.filter()?;
                    self.expect_sym("]")?;
                    Some(Box::new(k))
                } else {
                    None
                };
                Some(Expr::Unbind(slot, key))
            }
            "local" => {
                if self.function_depth == 0 {
                    return Err(ParseError::new(
                        "'local' declarations are only allowed inside a function body",
                        start..start + w.len(),
                    ));
                }
                let inner = self.filter()?;
                Some(inner.expr)
            }
            _ if TransformKind::of_keyword(w).is_some() => Some(self.transform(w, start)?),
            "echo" => Some(self.echo()?),
            "sort" => Some(self.sort()?),
            _ => None,
        };
        if let Some(e) = expr {
            return Ok(Node {
                expr: e,
                span: self.span_from(start),
            });
        }
        if is_reserved(w) {
            return Err(ParseError::new(
                format!("'{w}' is not supported"),
                start..start + w.len(),
            ));
        }
        if let Some(f) = self.functions.iter().rposition(|f| f.name == w) {
            let args = self.paren_args()?;
            if args.len() != self.functions[f].params.len() {
                return Err(ParseError::new(
                    format!(
                        "'{w}' takes {} arguments, got {}",
                        self.functions[f].params.len(),
                        args.len()
                    ),
                    self.span_from(start),
                ));
            }
            return Ok(Node {
                expr: Expr::Call(f, args),
                span: self.span_from(start),
            });
        }
        if let Some(slot) = self.var_slot(w) {
            return Ok(Node {
                expr: Expr::Var(slot),
                span: start..start + w.len(),
            });
        }
        let names = crate::keywords::RESERVED
            .iter()
            .copied()
            .chain(self.vars.iter().map(|(n, _)| n.as_str()));
        let hint = match cqldb_storage::did_you_mean(w, names) {
            Some(s) => format!("; did you mean '{s}'?"),
            None => String::new(),
        };
        Err(ParseError::new(
            format!("unknown filter or variable '{w}'{hint}"),
            start..start + w.len(),
        ))
    }

    /// The set argument of `power`, `light`, `up 1`, ...: a prefix-level expression.
    fn set_arg(&mut self, w: &str) -> PResult<Node> {
        if !self.starts_filter() {
            return Err(self.unexpected(&format!("expected a set filter after '{w}'")));
        }
        self.unary()
    }

    fn direction_word(&mut self) -> Option<Direction> {
        let Tok::Word(w) = &self.peek().tok else {
            return None;
        };
        let d = crate::ast_direction(w)?;
        self.next();
        Some(d)
    }

    /// `T [count] F`: the transform's argument is one whole filter, read at the lowest level
    /// (CQL's precedence table puts transforms with the constituents of `{...}`), so
    /// `flipcolor A attacks k` is `flipcolor (A attacks k)` and `flipcolor Q == 1` is
    /// `flipcolor (Q == 1)`.
    fn transform(&mut self, w: &str, start: usize) -> PResult<Expr> {
        let Some(kind) = TransformKind::of_keyword(w) else {
            return Err(ParseError::new("not a transform", start..start + w.len()));
        };
        let count = self.eat_word("count");
        if !self.starts_filter() {
            return Err(self.unexpected(&format!("expected a filter after '{w}'")));
        }
        let body = self.filter_inner()?;
        if kind == TransformKind::Rotate45 {
            let mut partial = None;
            body.walk(&mut |n| {
                if let Expr::Pieces(d) = &n.expr
                    && d.squares != u64::MAX
                {
                    partial.get_or_insert(n.span.clone());
                }
            });
            if let Some(span) = partial {
                return Err(ParseError::new(
                    "inside 'rotate45' a square set must be the whole board (a 45° turn of a square is no square)",
                    span,
                ));
            }
        }
        let combine = match crate::type_of::ty_of(&body, self) {
            Ty::Set => Combine::Union,
            Ty::Number => Combine::Max,
            _ => Combine::First,
        };
        Ok(Expr::Transform(Box::new(Transformed {
            kind,
            count,
            combine,
            body,
        })))
    }

    /// The arguments of `comment` and `message`: in parentheses, or one without them
    /// (`comment "text"`, `///"text"`).
    fn note_args(&mut self) -> PResult<Vec<Node>> {
        if self.at_sym("(") {
            return self.paren_args();
        }
        if !self.starts_filter() {
            return Err(self.unexpected("expected '(' or an argument"));
        }
        Ok(vec![self.unary()?])
    }

    fn new_name(&mut self, after: &str) -> PResult<String> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Word(n) if !is_reserved(n) => {
                self.next();
                Ok(n.clone())
            }
            Tok::Designator(_) => Err(ParseError::new(
                format!(
                    "'{}' is a piece designator and cannot name a variable",
                    self.text_of(&t)
                ),
                t.span,
            )),
            _ => Err(self.unexpected(&format!("expected a name after '{after}'"))),
        }
    }

    /// `square [all] x in S body` and `piece [all] x in S body` (`all` already read when
    /// `all_read`, as in `∀x∊S`).
    pub(crate) fn iteration(&mut self, piece: bool, all_read: bool) -> PResult<Expr> {
        let all = all_read || self.eat_word("all") || self.eat_sym("[forall]");
        let name = self.new_name(if piece { "piece" } else { "square" })?;
        // `piece x = S`: an assignment, not a loop.
        if piece && !all && self.at_sym("=") {
            self.next();
            let value = self.filter()?;
            if !matches!(ty_of(&value, self), Ty::Set | Ty::Unknown) {
                return Err(ParseError::new(
                    "'piece x =' takes a set (the square of one piece)",
                    value.span.clone(),
                ));
            }
            if self
                .var_slot(&name)
                .is_some_and(|s| self.vars[s].1 != VarKind::Piece)
            {
                return Err(ParseError::new(
                    format!("'{name}' is already a variable of another kind"),
                    value.span.clone(),
                ));
            }
            let slot = self.declare(&name, VarKind::Piece, Ty::Set);
            return Ok(Expr::Assign(slot, AssignOp::Piece, Box::new(value)));
        }
        if !(self.eat_word("in") || self.eat_sym("[element]")) {
            return Err(self.unexpected("expected 'in'"));
        }
        let set = self.unary()?;
        let kind = if piece {
            VarKind::Piece
        } else {
            VarKind::Plain
        };
        let slot = self.declare(&name, kind, Ty::Set);
        let body = self.filter()?;
        Ok(if piece {
            Expr::PieceIter(slot, all, Box::new(set), Box::new(body))
        } else {
            Expr::SquareIter(slot, all, Box::new(set), Box::new(body))
        })
    }

    fn function(&mut self) -> PResult<()> {
        let name = self.new_name("function")?;
        let open = self.peek().span.clone();
        self.expect_sym("(")?;
        let mut params = Vec::new();
        while !self.at_sym(")") {
            if matches!(self.peek().tok, Tok::Eof) {
                return Err(ParseError::new("this '(' is never closed", open));
            }
            let p = self.new_name("(")?;
            params.push(self.declare(&p, VarKind::Plain, Ty::Unknown));
        }
        self.next();
        // Registered before the body so that it may call itself.
        self.functions.push(Function {
            name,
            params,
            body: Node {
                expr: Expr::True,
                span: open.clone(),
            },
        });
        let idx = self.functions.len() - 1;
        self.function_depth += 1;
        let body = self.primary_block();
        self.function_depth -= 1;
        self.functions[idx].body = body?;
        Ok(())
    }

    fn primary_block(&mut self) -> PResult<Node> {
        if !self.at_sym("{") {
            return Err(self.unexpected("expected '{' to start the function body"));
        }
        self.unary()
    }

    /// `echo [quiet] (s t) [in all] body`: `s` and `t` are variables holding positions.
    fn echo(&mut self) -> PResult<Expr> {
        let quiet = self.eat_word("quiet");
        self.expect_sym("(")?;
        let s = self.new_name("echo (")?;
        let t = self.new_name("echo (")?;
        self.expect_sym(")")?;
        let source = self.declare(&s, VarKind::Plain, Ty::Position);
        let target = self.declare(&t, VarKind::Plain, Ty::Position);
        let in_all = if self.at_word("in") && self.peek_at(1).tok == Tok::Word("all".into()) {
            self.next();
            self.next();
            true
        } else {
            false
        };
        // The body is one whole filter, comparisons included, as a transform's argument (CQL's
        // precedence table puts both with the constituents of `{...}`): `echo (s t) s&t == .`
        // compares the two boards, not the echo's value.
        let body = self.filter()?;
        Ok(Expr::Echo(Box::new(Echo {
            quiet,
            source,
            target,
            in_all,
            body,
        })))
    }

    /// `sort [quiet] [min|max] ["title"] target`: the target is read up to a comparison, so
    /// `sort "N" find all check >= 40` compares the sort's value.
    fn sort(&mut self) -> PResult<Expr> {
        let quiet = self.eat_word("quiet");
        let kw = self.peek().clone();
        let min = self.eat_word("min");
        let max = !min && self.eat_word("max");
        let title = match self.peek().tok.clone() {
            Tok::Str(t) => {
                self.next();
                Some(t)
            }
            _ => None,
        };
        if (min || max) && title.is_none() {
            return Err(ParseError::new(
                "'sort min' and 'sort max' need a title string, e.g. sort min \"moves\" ply",
                kw.span.start..self.peek().span.end,
            ));
        }
        let quiet = quiet || self.eat_word("quiet");
        let title = title.unwrap_or_default();
        let key = match self.sorts.iter().position(|k| k.title == title) {
            Some(k) => k,
            None => {
                self.sorts.push(SortKey { title, min, quiet });
                self.sorts.len() - 1
            }
        };
        let target = self.union_level()?;
        Ok(Expr::Sort(Box::new(Sort { key, target })))
    }
}

impl Syntax for Parser {
    fn sym_at(&self, k: usize, sym: &str) -> bool {
        matches!(&self.peek_at(k).tok, Tok::Sym(s) if *s == sym)
    }

    fn number_at(&self, k: usize) -> Option<i64> {
        match self.peek_at(k).tok {
            Tok::Number(n) => Some(n),
            _ => None,
        }
    }

    fn starts_filter(&self) -> bool {
        Parser::starts_filter(self)
    }

    fn group_of_moves(&self) -> bool {
        if !self.at_sym("(") {
            return false;
        }
        let mut depth = 0usize;
        for k in 0.. {
            match &self.peek_at(k).tok {
                Tok::Eof => return false,
                Tok::Sym("(") => depth += 1,
                Tok::Sym(")") => {
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                }
                Tok::Dash { .. } | Tok::Sym("-->" | "<--") => return true,
                _ => {}
            }
        }
        false
    }

    fn line_constituent(&mut self) -> PResult<Node> {
        let saved = std::mem::replace(&mut self.in_line, true);
        let r = self.not();
        self.in_line = saved;
        r
    }

    fn at_dash(&self) -> bool {
        matches!(self.peek().tok, Tok::Dash { .. })
    }

    fn designator_then_dash(&self) -> bool {
        let square_like = match &self.peek().tok {
            Tok::Designator(_) => true,
            Tok::Word(w) => self.var_slot(w).is_some(),
            _ => false,
        };
        square_like && matches!(self.peek_at(1).tok, Tok::Dash { .. }) && self.peek_at(1).attached
    }

    fn set_arg(&mut self, word: &str) -> PResult<Node> {
        Parser::set_arg(self, word)
    }

    fn value_operand(&mut self) -> PResult<Node> {
        self.union_level()
    }

    fn whole_filter(&mut self) -> PResult<Node> {
        self.filter()
    }

    fn operand(&mut self) -> PResult<Node> {
        self.unary()
    }

    fn paren_attached(&self) -> bool {
        self.at_sym("(") && self.peek().attached
    }

    fn number(&mut self) -> Option<i64> {
        let Tok::Number(n) = self.peek().tok else {
            return None;
        };
        self.next();
        Some(n)
    }

    fn direction(&mut self) -> Option<Direction> {
        self.direction_word()
    }

    fn any_args(&mut self) -> PResult<Vec<Node>> {
        Parser::paren_args(self)
    }

    fn here(&self) -> usize {
        self.peek().span.start
    }

    fn paren_args(&mut self, n: usize, word: &str) -> PResult<Vec<Node>> {
        self.paren_args_n(n, word)
    }

    fn string(&mut self, expected: &str) -> PResult<(String, Span)> {
        let Tok::Str(s) = self.peek().tok.clone() else {
            return Err(self.unexpected(expected));
        };
        let t = self.next();
        Ok((s, t.span))
    }

    fn eat_sym(&mut self, sym: &str) -> bool {
        Parser::eat_sym(self, sym)
    }

    fn body(&mut self) -> PResult<Node> {
        self.union_level()
    }

    fn eat_word(&mut self, word: &str) -> bool {
        Parser::eat_word(self, word)
    }

    fn optional_string(&mut self) -> Option<String> {
        let Tok::Str(s) = self.peek().tok.clone() else {
            return None;
        };
        self.next();
        Some(s)
    }

    fn error(&self, expected: &str) -> ParseError {
        self.unexpected(expected)
    }

    fn previous_span(&self) -> Span {
        Parser::previous_span(self)
    }

    fn designator(&mut self) -> Option<PieceSet> {
        let Tok::Designator(p) = self.peek().tok else {
            return None;
        };
        self.next();
        Some(p)
    }

    fn result(&mut self, expected: &str) -> PResult<String> {
        let Tok::Result(r) = self.peek().tok.clone() else {
            return Err(self.unexpected(expected));
        };
        self.next();
        Ok(r)
    }
}

#[cfg(test)]
mod suggestion_tests {
    #[test]
    fn misspelt_keywords_get_a_suggestion() {
        for (q, want) in [
            ("maet", "mate"),
            ("flipcolr", "flipcolor"),
            ("chekc", "check"),
        ] {
            let e = crate::parse(&format!("cql() {q}")).expect_err(q);
            assert!(
                e.message.contains(&format!("did you mean '{want}'")),
                "{q}: {}",
                e.message
            );
        }
    }
}
