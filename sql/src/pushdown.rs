//! Filter pushdown: which SQL predicates the index answers, and what they become.
//!
//! A predicate on a table's columns is pushed when it means exactly what a CQL filter means
//! (the columns are read as the filters read them): flags (`mate`, `in_check` = CQL `check`,
//! `NOT mate`), `ply`/`depth` comparisons, `result = '1-0'`, `year`/`white_elo`/`black_elo`
//! comparisons, and game-number ranges and lists (on every table). The pushed predicates of a
//! scan become one CQL query, planned by the CQL planner (its index scans, then its residual on
//! the candidate games only); the scan then reads only the games, and of `positions` and
//! `moves` only the positions, that query matched. Each pushed predicate is `Exact`: DataFusion
//! does not filter again. Anything else is left to DataFusion (`Unsupported`).
//!
//! Exact on `positions` too: `material = 'KRPkr'` (a count per piece kind, which the material
//! index answers) and `on_square(white_king, 'g1')` (CQL's `Kg1`). Narrowing only (`Inexact`:
//! the index keeps every matching game and maybe more, DataFusion filters again): `white`,
//! `black`, `event`, `site` and `date` compared with `=` or `LIKE '%word%'` on `games`,
//! which become CQL's tag searches (`player white "word"`: the tag contains the word), answered
//! by the tag index; `fen = '...'` on `positions` becomes CQL's `fen "board"` (the board
//! alone), answered by the material and board indexes.
//!
//! A nullable column under `NOT` is never pushed: SQL's `NOT (year >= 1990)` drops unknown
//! years where CQL's `not year >= 1990` keeps them.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};

use crate::tables::Table;

/// What one pushed predicate stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// A CQL filter that means exactly the predicate.
    Cql(String),
    /// A CQL filter that holds wherever the predicate does, and maybe elsewhere.
    Narrowing(String),
    /// Game numbers `lo..=hi`.
    Games(u64, u64),
    /// These game numbers.
    GameList(Vec<u64>),
}

/// The pushed predicates of one scan, combined.
#[derive(Clone, Debug, Default)]
pub struct Pushed {
    /// CQL filters, all of which must hold (at one position for position tables; at some
    /// position for `games`, where they are all game-level).
    pub cql: Vec<String>,
    /// Game numbers `lo..=hi`.
    pub lo: u64,
    pub hi: u64,
    /// And among these, if given.
    pub list: Option<Vec<u64>>,
}

impl Pushed {
    pub fn of(table: Table, filters: &[Expr]) -> Self {
        let mut p = Pushed {
            lo: 1,
            hi: u64::MAX,
            ..Pushed::default()
        };
        for f in filters {
            match piece(table, f) {
                Some(Piece::Cql(c) | Piece::Narrowing(c)) => p.cql.push(c),
                Some(Piece::Games(a, b)) => {
                    p.lo = p.lo.max(a);
                    p.hi = p.hi.min(b);
                }
                Some(Piece::GameList(mut l)) => {
                    if let Some(old) = &p.list {
                        l.retain(|g| old.contains(g));
                    }
                    p.list = Some(l);
                }
                // DataFusion only hands a scan the filters it was told are pushed.
                None => {}
            }
        }
        p
    }
}

/// The CQL or game range `e` becomes on `table`, if it can be pushed.
pub fn piece(table: Table, e: &Expr) -> Option<Piece> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => compare(table, left, *op, right),
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => {
            let name = column(expr)?;
            let (lo, hi) = (int(low)?, int(high)?);
            match name {
                "game" => Some(Piece::Games((lo.max(1)) as u64, hi.max(0) as u64)),
                _ => {
                    let Piece::Cql(a) = compare_value(table, name, Operator::GtEq, lo)? else {
                        return None;
                    };
                    let Piece::Cql(b) = compare_value(table, name, Operator::LtEq, hi)? else {
                        return None;
                    };
                    Some(Piece::Cql(format!("{a} {b}")))
                }
            }
        }
        Expr::InList(l) if !l.negated && column(&l.expr) == Some("game") => {
            let mut games: Vec<u64> = l
                .list
                .iter()
                .map(int)
                .collect::<Option<Vec<i64>>>()?
                .into_iter()
                .filter(|&g| g >= 1)
                .map(|g| g as u64)
                .collect();
            games.sort_unstable();
            games.dedup();
            Some(Piece::GameList(games))
        }
        Expr::Like(l) => like(table, l),
        Expr::ScalarFunction(_) => on_square(table, e, true),
        Expr::Column(_) | Expr::IsTrue(_) => flag(table, strip_is_true(e)?, true),
        Expr::Not(inner) | Expr::IsFalse(inner) => {
            flag(table, inner, false).or_else(|| on_square(table, inner, false))
        }
        _ => None,
    }
}

/// `on_square(white_king, 'g1')`: CQL's `Kg1` (the bitboards are never NULL, so `NOT` is
/// CQL's `not`).
fn on_square(table: Table, e: &Expr, on: bool) -> Option<Piece> {
    let Expr::ScalarFunction(f) = e else {
        return None;
    };
    if table != Table::Positions || f.func.name() != "on_square" || f.args.len() != 2 {
        return None;
    }
    let (color, role) = crate::tables::positions::bitboard_of(column(&f.args[0])?)?;
    let square: shakmaty::Square = text(&f.args[1])?.parse().ok()?;
    let letter = crate::tables::piece_letter(role, color);
    Some(Piece::Cql(if on {
        format!("{letter}{square}")
    } else {
        format!("not {letter}{square}")
    }))
}

/// The CQL tag search a tag column of `games` has.
fn tag_search(name: &str) -> Option<&'static str> {
    Some(match name {
        "white" => "player white",
        "black" => "player black",
        "event" => "event",
        "site" => "site",
        "date" => "date",
        _ => return None,
    })
}

/// `tag = 'value'` or `tag LIKE '%word%'` (no other wildcard): the tag contains the text.
/// Text CQL would read as a pattern after a tag filter (`A+B`) is left to the statement.
fn tag_contains(table: Table, name: &str, word: &str) -> Option<Piece> {
    if table != Table::Games
        || word.is_empty()
        || word.contains(['"', '\\'])
        || !cqldb_planner::filter::tag_search::implicit_search_allowed(word)
    {
        return None;
    }
    let search = tag_search(name)?;
    Some(Piece::Narrowing(format!("{search} \"{word}\"")))
}

fn like(table: Table, l: &datafusion::logical_expr::Like) -> Option<Piece> {
    if l.negated || l.case_insensitive || l.escape_char.is_some() {
        return None;
    }
    let pattern = text(&l.pattern)?;
    let word = pattern.trim_start_matches('%').trim_end_matches('%');
    if word.contains(['%', '_']) {
        return None;
    }
    tag_contains(table, column(&l.expr)?, word)
}

/// `fen = '<FEN>'`: CQL's `fen "<board>"`, which compares the board alone (not the side to
/// move, castling, en passant or the counters), so it narrows.
fn fen_board(table: Table, fen: &str) -> Option<Piece> {
    if table != Table::Positions {
        return None;
    }
    let board = fen.split_whitespace().next()?;
    // A board as a FEN writes it: CQL's pattern would read `.` as any square.
    board.parse::<shakmaty::Board>().ok()?;
    if !board.bytes().all(|b| b"KQRBNPkqrbnp12345678/".contains(&b)) {
        return None;
    }
    Some(Piece::Narrowing(format!("fen \"{board}\"")))
}

/// `material = 'KRPkr'`: how many of each piece kind, each an exact count.
fn material(table: Table, signature: &str) -> Option<Piece> {
    if table != Table::Positions {
        return None;
    }
    let order = "KQRBNPkqrbnp";
    // The signature lists White's pieces then Black's, each in K Q R B N P order.
    let mut last = 0;
    let mut counts = [0u32; 12];
    for c in signature.chars() {
        let i = order.find(c)?;
        if i < last {
            return None;
        }
        last = i;
        counts[i] += 1;
    }
    let filters: Vec<String> = order
        .chars()
        .zip(counts)
        .map(|(c, n)| format!("{c} == {n}"))
        .collect();
    Some(Piece::Cql(filters.join(" ")))
}

fn strip_is_true(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::IsTrue(inner) => Some(inner),
        other => Some(other),
    }
}

/// A boolean flag column of `positions`, true or false.
fn flag(table: Table, e: &Expr, on: bool) -> Option<Piece> {
    if table != Table::Positions {
        return None;
    }
    let name = column(e)?;
    crate::tables::positions::flag_of(name)?;
    let cql = match name {
        "in_check" => "check",
        "wtm" if !on => return Some(Piece::Cql("btm".into())),
        other => other,
    };
    Some(Piece::Cql(if on {
        cql.to_owned()
    } else {
        format!("not {cql}")
    }))
}

fn compare(table: Table, left: &Expr, op: Operator, right: &Expr) -> Option<Piece> {
    // `col op literal` or `literal op col`.
    let (name, op, lit) = match (column(left), column(right)) {
        (Some(n), None) => (n, op, right),
        (None, Some(n)) => (n, op.swap()?, left),
        _ => return None,
    };
    if let (Some(flag_on), true) = (boolean(lit), matches!(op, Operator::Eq | Operator::NotEq)) {
        let on = flag_on == (op == Operator::Eq);
        return flag(table, &Expr::Column(name.into()), on);
    }
    if op == Operator::Eq
        && let Some(t) = text(lit)
    {
        if name == "material" {
            return material(table, t);
        }
        if tag_search(name).is_some() {
            return tag_contains(table, name, t);
        }
        if name == "fen" {
            return fen_board(table, t);
        }
    }
    if table == Table::Games && name == "result" && op == Operator::Eq {
        let r = text(lit)?;
        return ["1-0", "0-1", "1/2-1/2"]
            .contains(&r)
            .then(|| Piece::Cql(format!("result {r}")));
    }
    compare_value(table, name, op, int(lit)?)
}

fn compare_value(table: Table, name: &str, op: Operator, v: i64) -> Option<Piece> {
    if name == "game" {
        let nat = |v: i64| v.max(0) as u64;
        return Some(match op {
            Operator::Eq => Piece::Games(nat(v).max(1), nat(v)),
            Operator::Lt => Piece::Games(1, nat(v.saturating_sub(1))),
            Operator::LtEq => Piece::Games(1, nat(v)),
            Operator::Gt => Piece::Games(nat(v.saturating_add(1)).max(1), u64::MAX),
            Operator::GtEq => Piece::Games(nat(v).max(1), u64::MAX),
            _ => return None,
        });
    }
    let filter = match (table, name) {
        (Table::Positions, "ply") => "ply",
        (Table::Positions, "depth") => "depth",
        (Table::Games, "year") => "year",
        (Table::Games, "white_elo") => "elo white",
        (Table::Games, "black_elo") => "elo black",
        _ => return None,
    };
    let op = match op {
        Operator::Eq => "==",
        Operator::NotEq => "!=",
        Operator::Lt => "<",
        Operator::LtEq => "<=",
        Operator::Gt => ">",
        Operator::GtEq => ">=",
        _ => return None,
    };
    Some(Piece::Cql(format!("{filter} {op} {v}")))
}

fn column(e: &Expr) -> Option<&str> {
    match e {
        Expr::Column(c) => Some(c.name.as_str()),
        _ => None,
    }
}

fn int(e: &Expr) -> Option<i64> {
    let Expr::Literal(v, _) = e else {
        return None;
    };
    match v {
        ScalarValue::Int64(Some(x)) => Some(*x),
        ScalarValue::Int32(Some(x)) => Some(i64::from(*x)),
        ScalarValue::Int16(Some(x)) => Some(i64::from(*x)),
        ScalarValue::Int8(Some(x)) => Some(i64::from(*x)),
        ScalarValue::UInt32(Some(x)) => Some(i64::from(*x)),
        ScalarValue::UInt64(Some(x)) => i64::try_from(*x).ok(),
        _ => None,
    }
}

fn boolean(e: &Expr) -> Option<bool> {
    match e {
        Expr::Literal(ScalarValue::Boolean(Some(b)), _) => Some(*b),
        _ => None,
    }
}

fn text(e: &Expr) -> Option<&str> {
    match e {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)),
            _,
        ) => Some(s.as_str()),
        _ => None,
    }
}
