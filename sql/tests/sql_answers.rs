//! SQL answers against what the PGN says and against CQL, and pushdown against no pushdown.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cqldb_indexer::{IngestOptions, Input, Progress, ingest};
use cqldb_sql::{SqlOptions, SqlSession};
use cqldb_storage::{Database, DbWriter, WriterOptions};
use proptest::prelude::*;

mod common;
use common::rows;

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

struct Fixture {
    _tmp: tempfile::TempDir,
    pgns: Vec<PathBuf>,
    db: Arc<Database>,
    pushed: SqlSession,
    plain: SqlSession,
}

fn build(pgns: &[PathBuf], dir: &Path) -> Arc<Database> {
    let mut writer = DbWriter::open(dir, WriterOptions::default()).expect("writer");
    let inputs: Vec<Input> = pgns.iter().map(|p| Input::Path(p.clone())).collect();
    let report = ingest(
        &inputs,
        &mut writer,
        IngestOptions::default(),
        &Progress::default(),
    )
    .expect("ingest");
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    writer.commit().expect("commit");
    Arc::new(Database::open(dir).expect("open"))
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let corpus = shared().join("conformance/cql/corpus");
        let pgns = vec![corpus.join("games.pgn"), corpus.join("studies.pgn")];
        let db = build(&pgns, &tmp.path().join("db"));
        let opts = |pushdown| SqlOptions {
            pushdown,
            threads: 2,
            ..Default::default()
        };
        Fixture {
            pushed: SqlSession::with_options(db.clone(), opts(true)).unwrap(),
            plain: SqlSession::with_options(db.clone(), opts(false)).unwrap(),
            _tmp: tmp,
            pgns,
            db,
        }
    })
}

fn one(s: &SqlSession, sql: &str) -> i64 {
    let r = rows(s, sql);
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r[0].parse().unwrap_or_else(|_| panic!("{sql}: {r:?}"))
}

/// The tag pairs of the PGN files, read with nothing but line matching: `[Name "Value"]`
/// lines, game by game (a game starts at a tag line after movetext).
fn tags_from_pgn(pgns: &[PathBuf]) -> Vec<Vec<(String, String)>> {
    let mut games: Vec<Vec<(String, String)>> = Vec::new();
    for p in pgns {
        let text = String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
        let mut in_tags = false;
        for line in text.lines() {
            let t = line.trim();
            let tag = t
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|r| {
                    let (name, rest) = r.split_once(' ')?;
                    let value = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
                    Some((
                        name.to_owned(),
                        value.replace("\\\"", "\"").replace("\\\\", "\\"),
                    ))
                });
            match tag {
                Some(pair) => {
                    if !in_tags {
                        games.push(Vec::new());
                        in_tags = true;
                    }
                    if let Some(g) = games.last_mut() {
                        g.push(pair);
                    }
                }
                None if !t.is_empty() => in_tags = false,
                None => {}
            }
        }
    }
    games
}

#[test]
fn games_and_tags_agree_with_the_pgn_text() {
    let f = fixture();
    let pgn = tags_from_pgn(&f.pgns);
    assert_eq!(
        one(&f.pushed, "SELECT count(*) FROM games") as usize,
        pgn.len()
    );
    let tag_rows: usize = pgn.iter().map(Vec::len).sum();
    assert_eq!(
        one(&f.pushed, "SELECT count(*) FROM tags") as usize,
        tag_rows
    );
    for result in ["1-0", "0-1", "1/2-1/2", "*"] {
        let want = pgn
            .iter()
            .filter(|g| g.iter().any(|(n, v)| n == "Result" && v == result))
            .count();
        let sql = format!("SELECT count(*) FROM games WHERE result = '{result}'");
        assert_eq!(one(&f.pushed, &sql) as usize, want, "{sql}");
        assert_eq!(one(&f.plain, &sql) as usize, want, "{sql} without pushdown");
    }
    // Every White tag, game by game.
    let mut want: Vec<String> = pgn
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            let w = g.iter().find(|(n, _)| n == "White")?;
            Some(format!("{}|{}", i + 1, w.1))
        })
        .collect();
    want.sort();
    assert_eq!(
        rows(
            &f.pushed,
            "SELECT game, white FROM games WHERE white IS NOT NULL"
        ),
        want
    );
}

#[test]
fn positions_and_moves_agree_with_the_trees() {
    let f = fixture();
    let games = one(&f.pushed, "SELECT count(*) FROM games");
    let positions = one(&f.pushed, "SELECT count(*) FROM positions");
    let stored: u64 = f.db.segments().map(|(e, _)| e.positions).sum();
    assert_eq!(positions as u64, stored);
    assert_eq!(
        one(&f.pushed, "SELECT sum(positions) FROM games"),
        positions
    );
    // One root per game with positions; every other position is reached by one move.
    let roots = one(&f.pushed, "SELECT count(*) FROM positions WHERE initial");
    assert!(roots <= games);
    assert_eq!(
        one(&f.pushed, "SELECT count(*) FROM moves"),
        positions - roots
    );
    assert_eq!(
        one(
            &f.pushed,
            "SELECT count(*) FROM positions WHERE parent IS NULL"
        ),
        roots
    );
    // The main line's plies are its positions past the root.
    assert_eq!(
        rows(
            &f.pushed,
            "SELECT g.game, g.plies FROM games g JOIN (SELECT game, count(*) - 1 AS n FROM positions \
             WHERE mainline GROUP BY game) p ON g.game = p.game WHERE g.plies <> p.n"
        ),
        Vec::<String>::new()
    );
    // A move's SAN and its position's FEN agree with the scalar functions.
    assert_eq!(
        rows(
            &f.pushed,
            "SELECT m.game, m.position FROM moves m WHERE m.game <= 20 AND m.san <> san(m.game, m.position)"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        rows(
            &f.pushed,
            "SELECT game FROM positions WHERE game <= 20 AND fen <> fen(game, position)"
        ),
        Vec::<String>::new()
    );
}

#[test]
fn flags_and_cql_agree() {
    let f = fixture();
    for (column, cql) in [
        ("mate", "mate"),
        ("stalemate", "stalemate"),
        ("in_check", "check"),
        ("terminal", "terminal"),
    ] {
        let sql = one(
            &f.pushed,
            &format!("SELECT count(*) FROM positions WHERE {column}"),
        );
        let plain = one(
            &f.plain,
            &format!("SELECT count(*) FROM positions WHERE {column}"),
        );
        let via_cql = one(
            &f.pushed,
            &format!("SELECT count(*) FROM cql('cql(variations) {cql}')"),
        );
        assert_eq!((sql, plain), (via_cql, via_cql), "{column}");
    }
    // The documented join.
    let by_white = rows(
        &f.pushed,
        "SELECT g.white, count(*) FROM cql('mate') m JOIN games g USING (game) GROUP BY 1",
    );
    let total: i64 = by_white
        .iter()
        .map(|r| r.rsplit('|').next().unwrap().parse::<i64>().unwrap())
        .sum();
    assert_eq!(total, one(&f.pushed, "SELECT count(*) FROM cql('mate')"));
    assert!(total > 0);
}

/// Joins with a `cql()` table that the narrowing rule restricts to the matched games, positions
/// or children of positions give what they give without the rule (the plain session has no
/// pushdown and no narrowing), for each join form and side.
#[test]
fn joins_narrowed_by_cql_keep_their_answers() {
    let f = fixture();
    let queries = [
        "mate",
        "cql(variations) check",
        "move previous promote [RBN]",
        "btm Ke1",
        "mainline fen \"rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\"",
    ];
    let forms = [
        "SELECT m.game, m.position, m.san FROM cql('{q}') c JOIN moves m ON m.game = c.game AND m.parent = c.position",
        "SELECT m.game, m.position, m.uci FROM moves m JOIN cql('{q}') c ON c.position = m.parent AND c.game = m.game",
        "SELECT c.game, c.position, m.san FROM cql('{q}') c LEFT JOIN moves m ON m.game = c.game AND m.parent = c.position",
        "SELECT m.game, m.position, c.ply FROM moves m LEFT JOIN cql('{q}') c ON m.game = c.game AND m.parent = c.position WHERE m.game <= 30",
        "SELECT p.game, p.position, p.fen FROM cql('{q}') c JOIN positions p USING (game, position)",
        "SELECT p.game, p.position, p.ply FROM positions p JOIN cql('{q}') c ON p.game = c.game AND p.parent = c.position",
        "SELECT m.game, m.position FROM cql('{q}') c JOIN moves m ON m.game = c.game AND m.position = c.position",
        "SELECT g.game, g.white, c.position FROM cql('{q}') c JOIN games g USING (game)",
    ];
    let mut nonempty = 0;
    for q in queries {
        for form in forms {
            let sql = form.replace("{q}", q);
            let (pushed, plain) = (rows(&f.pushed, &sql), rows(&f.plain, &sql));
            assert_eq!(pushed, plain, "{sql}");
            nonempty += usize::from(!pushed.is_empty());
        }
    }
    assert!(nonempty >= 30, "{nonempty}");
}

#[test]
fn errors_are_errors() {
    let f = fixture();
    for bad in [
        "SELECT nope FROM games",
        "SELECT * FROM cql('maet')",
        "SELECT * FROM cql(1)",
        "SELEC 1",
        "SELECT on_square(white_king, 'z9') FROM positions",
    ] {
        assert!(f.pushed.query(bad).is_err(), "{bad}");
    }
}

fn games_predicate() -> impl Strategy<Value = String> {
    prop_oneof![
        (1i64..60).prop_map(|n| format!("game <= {n}")),
        (1i64..60).prop_map(|n| format!("game > {n}")),
        (1i64..60).prop_map(|n| format!("game = {n}")),
        (1i64..40, 0i64..30).prop_map(|(a, d)| format!("game BETWEEN {a} AND {}", a + d)),
        prop::sample::select(vec!["1-0", "0-1", "1/2-1/2", "*"])
            .prop_map(|r| format!("result = '{r}'")),
        (1850i64..2030).prop_map(|y| format!("year >= {y}")),
        (1850i64..2030).prop_map(|y| format!("year < {y}")),
        (1850i64..2030).prop_map(|y| format!("year = {y}")),
        (1800i64..2900).prop_map(|e| format!("white_elo >= {e}")),
        (1800i64..2900).prop_map(|e| format!("black_elo < {e}")),
        Just("game IN (1, 3, 5, 70, 71)".to_owned()),
        Just("NOT (year >= 1990)".to_owned()),
        Just("white LIKE '%a%'".to_owned()),
        (
            prop::sample::select(vec!["white", "black", "event", "site", "eco", "date"]),
            prop::sample::select(vec![
                "Tal", "Kasparov", "Carlsen", "ch", "Ch", "B9", "C", "19", "London", "a_b", "e",
                // Text CQL would read as a pattern after a tag filter: not pushed down.
                "Ta+l", "[T]al",
            ]),
            prop::sample::select(vec!["= '{}'", "LIKE '%{}%'", "LIKE '{}%'", "LIKE '%{}'"]),
        )
            .prop_map(|(col, word, form)| format!("{col} {}", form.replace("{}", word))),
    ]
}

/// A material signature: common ones, random ones, and some out of order (never pushed).
fn signature() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "KQRRBBNNPPPPPPPPkqrrbbnnpppppppp",
            "KRPkr",
            "KRkr",
            "KPk",
            "Kk",
            "KQkq",
            "kK",
            "KRRPPPPPkrrppppp",
        ])
        .prop_map(str::to_owned),
        (
            0usize..2,
            0usize..3,
            0usize..3,
            0usize..3,
            0usize..9,
            0usize..2,
            0usize..3,
            0usize..9
        )
            .prop_map(|(q, r, b, n, p, q2, r2, p2)| {
                format!(
                    "K{}{}{}{}{}k{}{}{}",
                    "Q".repeat(q),
                    "R".repeat(r),
                    "B".repeat(b),
                    "N".repeat(n),
                    "P".repeat(p),
                    "q".repeat(q2),
                    "r".repeat(r2),
                    "p".repeat(p2)
                )
            }),
    ]
}

/// `on_square` over a random bitboard and square, or its negation.
fn on_square() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "white_king",
            "black_king",
            "white_rooks",
            "black_pawns",
            "white_knights",
            "black_queens",
            "white_bishops",
            "white_pawns",
        ]),
        0usize..64,
        any::<bool>(),
    )
        .prop_map(|(b, sq, neg)| {
            let square = format!("{}{}", (b'a' + (sq % 8) as u8) as char, sq / 8 + 1);
            let call = format!("on_square({b}, '{square}')");
            if neg { format!("NOT {call}") } else { call }
        })
}

fn positions_predicate() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "mate",
            "stalemate",
            "in_check",
            "initial",
            "terminal",
            "mainline",
            "variation",
            "virtualmainline",
            "wtm",
        ])
        .prop_flat_map(|f| prop_oneof![
            Just(f.to_owned()),
            Just(format!("NOT {f}")),
            Just(format!("{f} = false")),
        ]),
        (0i64..80).prop_map(|n| format!("ply >= {n}")),
        (0i64..80).prop_map(|n| format!("ply < {n}")),
        (0i64..3).prop_map(|n| format!("depth = {n}")),
        (1i64..60).prop_map(|n| format!("game <= {n}")),
        (1i64..60).prop_map(|n| format!("game >= {n}")),
        Just("on_square(white_king, 'g1')".to_owned()),
        on_square(),
        signature().prop_map(|m| format!("material = '{m}'")),
        prop::sample::select(vec![
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 0 2",
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "not a fen",
        ])
        .prop_map(|f| format!("fen = '{f}'")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn games_pushdown_changes_no_answer(ps in prop::collection::vec(games_predicate(), 1..4)) {
        let f = fixture();
        let sql = format!("SELECT game, white, result, year FROM games WHERE {}", ps.join(" AND "));
        prop_assert_eq!(rows(&f.pushed, &sql), rows(&f.plain, &sql), "{}", sql);
        // Counts and game numbers alone: a scan that decodes no game when the filters are all
        // pushed.
        let count = format!("SELECT count(*), sum(game) FROM games WHERE {}", ps.join(" AND "));
        prop_assert_eq!(rows(&f.pushed, &count), rows(&f.plain, &count), "{}", count);
    }

    #[test]
    fn positions_pushdown_changes_no_answer(ps in prop::collection::vec(positions_predicate(), 1..4)) {
        let f = fixture();
        let sql = format!("SELECT game, position, ply FROM positions WHERE {}", ps.join(" AND "));
        prop_assert_eq!(rows(&f.pushed, &sql), rows(&f.plain, &sql), "{}", sql);
        // Counts and ids alone: with every filter pushed, a scan that decodes no game.
        let count = format!("SELECT count(*), sum(position), sum(game) FROM positions WHERE {}", ps.join(" AND "));
        prop_assert_eq!(rows(&f.pushed, &count), rows(&f.plain, &count), "{}", count);
        let moves = format!("SELECT count(*) FROM moves m JOIN positions p ON m.game = p.game AND m.position = p.position WHERE {}",
            ps.iter().map(|p| qualify(p)).collect::<Vec<_>>().join(" AND "));
        prop_assert_eq!(rows(&f.pushed, &moves), rows(&f.plain, &moves), "{}", moves);
    }
}

/// `p` with its columns read from the alias `p` (for the join of `moves` and `positions`).
fn qualify(p: &str) -> String {
    let mut out = String::new();
    let mut in_text = false;
    for (i, word) in p.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let bare = word.trim_start_matches('(');
        let quoted = in_text;
        if word.matches('\'').count() % 2 == 1 {
            in_text = !in_text;
        }
        let is_column = !quoted
            && bare.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && !["and", "between", "false", "true", "in"].contains(&bare)
            && !bare.contains('\'')
            && !bare.contains('(');
        if is_column && !word.starts_with("on_square") {
            out.push_str(&word.replacen(bare, &format!("p.{bare}"), 1));
        } else {
            out.push_str(&word.replace("on_square(", "on_square(p."));
        }
    }
    out
}
