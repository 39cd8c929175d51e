//! The cqldb planner: the query languages. CQL 6.2 text becomes a checked syntax tree
//! ([`ast::Query`]) and GTQL text a checked query ([`gtql`]); both become plans ([`plan`]):
//! index scans and the residual filter, rewritten by rules, one file each.
//!
//! Owns the language: tokens ([`token`]), the reserved words ([`keywords`]), the parser
//! (operator skeleton in `parser.rs`, the keyword table in `filters.rs`), static types
//! ([`types`], `type_of.rs`), transforms such as `flipcolor` ([`transform`]), diagnostics with
//! spans ([`error`]), and what each filter means: one file per filter ([`filter`]) with its
//! syntax, type, evaluation and index rule, evaluated by the engine ([`eval`]) over a game's
//! position rows. It reads no database and writes no output: which games are evaluated, and
//! where matches go, is the executor's business.
//! ```
//! let q = cqldb_planner::parse("cql(variations) mate flipcolor (K attacks q)").unwrap();
//! assert!(q.header.variations);
//! assert_eq!(q.body.len(), 2);
//! let err = cqldb_planner::parse("cql() r > R").unwrap_err();
//! assert_eq!(err.line_col("cql() r > R"), (1, 9));
//! ```

pub mod ast;
pub mod cql3;
pub mod error;
pub mod eval;
pub mod filter;
mod filters;
pub mod gtql;
pub mod keywords;
mod parser;
pub mod plan;
pub mod token;
pub mod transform;
mod type_of;
pub mod types;

pub use ast::Query;
pub use error::ParseError;

use ast::{Direction, Header};
use token::Tok;

/// Parses a whole CQL file: `cql( header )` followed by one or more filters.
pub fn parse(src: &str) -> Result<Query, ParseError> {
    parse_with_assignments(src, &[])
}

/// Parses a CQL file whose variables `assign` names are bound before it starts (the reference
/// program's `-assign X V`): each is a number when its text reads as one, else a string, and is
/// bound again at each game's start.
pub fn parse_with_assignments(src: &str, assign: &[(String, String)]) -> Result<Query, ParseError> {
    let toks = token::lex(src)?;
    // Words that read the game's text (its tags, or its comments).
    const TAG_WORDS: [&str; 12] = [
        "originalcomment",
        "hascomment",
        "player",
        "event",
        "site",
        "date",
        "eventdate",
        "eco",
        "tag",
        "result",
        "elo",
        "year",
    ];
    let reads_tags = toks
        .iter()
        .any(|t| matches!(&t.tok, Tok::Word(w) if TAG_WORDS.contains(&w.as_str())));
    let mut p = parser::Parser::new(toks);
    let mut bound = Vec::with_capacity(assign.len());
    for (name, text) in assign {
        if !is_identifier(name) || keywords::RESERVED.contains(&name.as_str()) {
            return Err(ParseError::new(
                format!("-assign: '{name}' cannot name a variable"),
                0..0,
            ));
        }
        let ty = match text.trim().parse::<i64>() {
            Ok(_) => types::Ty::Number,
            Err(_) => types::Ty::String,
        };
        bound.push((p.declare(name, ast::VarKind::Plain, ty), text.clone()));
    }
    let mut header = if p.at_word("cql") {
        p.next();
        parse_header(&mut p, src)?
    } else {
        return Err(p.unexpected("a CQL query starts with 'cql('"));
    };
    let mut body = Vec::new();
    while !matches!(p.peek().tok, Tok::Eof) {
        if p.at_sym(")") || p.at_sym("}") {
            return Err(p.unexpected("unbalanced delimiter"));
        }
        body.push(p.filter()?);
    }
    if body.is_empty() {
        return Err(p.unexpected("expected one or more filters after the cql() header"));
    }
    check_depth(body.iter().chain(p.functions.iter().map(|f| &f.body)))?;
    header.assign = bound;
    Ok(Query {
        header,
        body,
        vars: p.vars,
        functions: p.functions,
        sorts: p.sorts,
        reads_tags,
    })
}

/// Whether `name` reads as one CQL word that can name a variable.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// How deep a query's tree may nest. Evaluation recurses once per level on worker threads
/// with a few megabytes of stack; the parser's own limits (100 nested parentheses, 1,000
/// operators in an arithmetic chain) can still multiply into deeper trees.
pub const MAX_DEPTH: usize = 2500;

/// Rejects a query whose tree is deeper than [`MAX_DEPTH`] (walked with an explicit stack).
fn check_depth<'a>(roots: impl Iterator<Item = &'a ast::Node>) -> Result<(), ParseError> {
    let mut stack: Vec<(&ast::Node, usize)> = roots.map(|n| (n, 1)).collect();
    while let Some((n, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(ParseError::new(
                format!("the query nests more than {MAX_DEPTH} levels deep"),
                n.span.clone(),
            ));
        }
        stack.extend(n.children().into_iter().map(|c| (c, depth + 1)));
    }
    Ok(())
}

/// Parses filters given on the command line (`-cql '...'`) and appends them to a query.
pub fn parse_with_extra(src: &str, extra: &str) -> Result<Query, ParseError> {
    if extra.trim().is_empty() {
        return parse(src);
    }
    // The extra filters are parsed as part of the same text so that spans stay meaningful.
    let combined = format!("{src}\n{extra}");
    parse(&combined)
}

fn parse_header(p: &mut parser::Parser, src: &str) -> Result<Header, ParseError> {
    let open = p.peek().span.clone();
    p.expect_sym("(")?;
    let mut h = Header::default();
    loop {
        let t = p.peek().clone();
        let range = |p: &mut parser::Parser| -> Result<(i64, i64), ParseError> {
            let Tok::Number(lo) = p.peek().tok else {
                return Err(p.unexpected("expected a number"));
            };
            p.next();
            let hi = if let Tok::Number(hi) = p.peek().tok {
                p.next();
                hi
            } else {
                lo
            };
            Ok((lo, hi))
        };
        match &t.tok {
            Tok::Sym(")") => {
                p.next();
                return Ok(h);
            }
            Tok::Eof => return Err(error::ParseError::new("this '(' is never closed", open)),
            Tok::Word(w) => {
                p.next();
                match w.as_str() {
                    "variations" => h.variations = true,
                    "silent" => h.silent = true,
                    "quiet" => h.quiet = true,
                    "matchcount" => h.matchcount = Some(range(p)?),
                    "gamenumber" => h.gamenumber = Some(range(p)?),
                    "sort" => {
                        if !p.eat_word("matchcount") {
                            return Err(p.unexpected("expected 'matchcount' after 'sort'"));
                        }
                        h.sort_matchcount = true;
                        if matches!(p.peek().tok, Tok::Number(_)) {
                            h.matchcount = Some(range(p)?);
                        }
                    }
                    "matchstring" => {
                        let Tok::Str(s) = p.peek().tok.clone() else {
                            return Err(p.unexpected("expected a string after 'matchstring'"));
                        };
                        p.next();
                        h.matchstring = Some(s);
                    }
                    "result" => {
                        let Tok::Result(r) = p.peek().tok.clone() else {
                            return Err(p.unexpected("expected a result after 'result'"));
                        };
                        p.next();
                        h.result = Some(r);
                    }
                    "input" | "output" => {
                        let name = match p.peek().tok.clone() {
                            Tok::Str(s) => {
                                p.next();
                                s
                            }
                            Tok::Eof | Tok::Sym(")") => {
                                return Err(p.unexpected("expected a file name"));
                            }
                            _ => {
                                // An unquoted file name (`games.pgn`, `/data/out.pgn`): the
                                // source text up to the next space or ')', whatever tokens the
                                // lexer made of it.
                                let start = p.peek().span.start;
                                let rest = src.get(start..).unwrap_or_default();
                                let len = rest
                                    .find(|c: char| c.is_whitespace() || c == ')')
                                    .unwrap_or(rest.len());
                                while p.peek().span.start < start + len
                                    && !matches!(p.peek().tok, Tok::Eof)
                                {
                                    p.next();
                                }
                                rest[..len].to_owned()
                            }
                        };
                        if w == "input" {
                            h.input = Some(name);
                        } else {
                            h.output = Some(name);
                        }
                    }
                    other => {
                        return Err(error::ParseError::new(
                            format!("'{other}' is not a valid cql() header parameter in CQL 6.2"),
                            t.span,
                        ));
                    }
                }
            }
            _ => return Err(p.unexpected("expected a cql() header parameter or ')'")),
        }
    }
}

/// The direction named by a direction filter keyword.
pub(crate) fn ast_direction(w: &str) -> Option<Direction> {
    use Direction::*;
    Some(match w {
        "up" => Up,
        "down" => Down,
        "left" => Left,
        "right" => Right,
        "northeast" => NorthEast,
        "northwest" => NorthWest,
        "southeast" => SouthEast,
        "southwest" => SouthWest,
        "vertical" => Vertical,
        "horizontal" => Horizontal,
        "diagonal" => Diagonal,
        "orthogonal" => Orthogonal,
        "anydirection" => AnyDirection,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn unquoted_file_names_in_the_header_are_taken_whole() {
        for (src, input, output) in [
            (
                "cql(input games.pgn output out.pgn) check",
                "games.pgn",
                "out.pgn",
            ),
            (
                "cql(input /data/2024/games.pgn.zst output /tmp/out-6.pgn)\ncheck",
                "/data/2024/games.pgn.zst",
                "/tmp/out-6.pgn",
            ),
            (
                "cql(output ~/a.b.c input \"x y.pgn\") mate",
                "x y.pgn",
                "~/a.b.c",
            ),
            ("cql(input 2024.pgn variations) mate", "2024.pgn", ""),
        ] {
            let q = crate::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
            assert_eq!(q.header.input.as_deref(), Some(input), "{src}");
            assert_eq!(q.header.output.as_deref().unwrap_or(""), output, "{src}");
        }
        let q = crate::parse("cql(input 2024.pgn variations) mate").unwrap();
        assert!(q.header.variations);
        assert!(crate::parse("cql(input) mate").is_err());
    }
}
