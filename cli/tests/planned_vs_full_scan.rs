//! The planner's contract, checked differentially: a planned run (index scans, then the
//! residual on candidate games) gives exactly what `--full-scan` gives, game for game and
//! position for position (the output PGN marks every matched position), for every query of the
//! CQL conformance suite on its corpus, for fixed queries on the blind data, and for random
//! queries mixing indexable and non-indexable filters. A rule planted with a bug must make the
//! same comparison fail.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use cqldb::cql::{CqlRun, KeptPositions, Source, logical_plan, run_plan};
use cqldb_planner::plan::rules::{Draft, RULES, Rule, optimize_with};
use cqldb_planner::plan::{PhysicalPlan, Scan};
use proptest::prelude::*;

mod common;
use common::{ok, s};

/// The optimizer's rules but `skip_unselective`, so that broad scans are checked too (the full
/// rule set would run them as full scans).
fn pruning_rules() -> Vec<&'static dyn Rule> {
    RULES
        .iter()
        .copied()
        .filter(|r| r.name() != "skip_unselective")
        .collect()
}

fn shared() -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../shared")
}

fn index(inputs: &[PathBuf], db: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(["index", "--quiet", "--db"])
        .arg(db)
        .args(inputs)
        .status()
        .expect("run cqldb index");
    assert!(status.success(), "indexing {inputs:?}");
}

fn cql_run(query: &str, db: &Path, variations: bool, full_scan: bool, out: &Path) -> CqlRun {
    CqlRun {
        output: Some(out.to_owned()),
        variations,
        full_scan,
        ..CqlRun::new(query, Source::Db(db.to_owned()))
    }
}

/// The matched games and the output of one run with a given plan.
fn outcome(r: &CqlRun, plan: PhysicalPlan) -> (Vec<u64>, Vec<u8>) {
    let s = run_plan(r, plan).expect("run");
    let out = r
        .output
        .as_ref()
        .map(|p| std::fs::read(p).unwrap_or_default());
    (s.matched.into_vec(), out.unwrap_or_default())
}

/// Compares the planned run (made with `rules`) with the full scan; `Err` describes the first
/// difference. Queries the planner cannot prune are skipped (they take the full-scan path).
fn compare(
    query: &str,
    db: &Path,
    variations: bool,
    rules: &[&dyn Rule],
    tmp: &Path,
) -> Result<bool, String> {
    // Tests run in parallel and share the fixture's work directory: each comparison writes
    // its outputs in a directory of its own.
    let own = tempfile::tempdir_in(tmp).map_err(|e| e.to_string())?;
    let planned_out = own.path().join("planned.pgn");
    let full_out = own.path().join("full.pgn");
    let r = cql_run(query, db, variations, false, &planned_out);
    let Ok(logical) = logical_plan(&r) else {
        return Ok(false);
    };
    let plan = optimize_with(logical, rules);
    if plan.candidates.is_none() {
        return Ok(false);
    }
    let planned = outcome(&r, plan);
    let full_r = cql_run(query, db, variations, true, &full_out);
    let full = outcome(&full_r, cqldb::cql::plan(&full_r).expect("plan"));
    if planned.0 != full.0 {
        return Err(format!(
            "{query} (variations {variations}): planned games {:?}... full scan {:?}...",
            &planned.0[..planned.0.len().min(10)],
            &full.0[..full.0.len().min(10)]
        ));
    }
    if planned.1 != full.1 {
        return Err(format!(
            "{query}: same games, different output (matched positions)"
        ));
    }
    // The count-only plan (maybe answered from the index alone) agrees too.
    let mut count = cql_run(query, db, variations, false, &planned_out);
    count.output = None;
    let n = run_plan(&count, cqldb::cql::plan(&count).expect("plan"))
        .expect("count")
        .matched
        .into_vec();
    if n != full.0 {
        return Err(format!(
            "{query}: count-only run gives {} games, not {}",
            n.len(),
            full.0.len()
        ));
    }
    // The matched positions (SQL's `cql()` and pushed filters; listed from the index alone
    // when the plan is exact) agree with the full scan's, plies included.
    let positions = |full_scan: bool, kept: KeptPositions| {
        let mut r = cql_run(query, db, variations, full_scan, &planned_out);
        r.output = None;
        r.positions = kept;
        run_plan(&r, cqldb::cql::plan(&r).expect("plan"))
            .expect("positions")
            .positions_matched
    };
    let want = positions(true, KeptPositions::WithPlies);
    if positions(false, KeptPositions::WithPlies) != want {
        return Err(format!(
            "{query} (variations {variations}): matched positions differ"
        ));
    }
    let ids = |rows: Vec<(u64, u32, u32)>| -> Vec<(u64, u32)> {
        rows.into_iter().map(|(g, id, _)| (g, id)).collect()
    };
    if ids(positions(false, KeptPositions::Ids)) != ids(want) {
        return Err(format!(
            "{query} (variations {variations}): matched position ids differ"
        ));
    }
    Ok(true)
}

/// Every query of the conformance suite, on the corpus file its rows name.
#[test]
fn conformance_queries_agree() {
    let suite = shared().join("conformance/cql");
    let tmp = tempfile::tempdir().unwrap();
    let manifest = std::fs::read_to_string(suite.join("MANIFEST.tsv")).unwrap();
    let mut dbs = std::collections::HashMap::new();
    let (mut pruned, mut rows) = (0, 0);
    let mut seen = std::collections::HashSet::new();
    for line in manifest.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 9 || !seen.insert((c[2].to_owned(), c[3].to_owned(), c[4].to_owned())) {
            continue;
        }
        let Ok(query) = std::fs::read_to_string(suite.join(c[2])) else {
            continue;
        };
        let db = dbs
            .entry(c[3].to_owned())
            .or_insert_with(|| {
                let db = tmp.path().join(c[3].replace('/', "_"));
                index(&[suite.join(c[3])], &db);
                db
            })
            .clone();
        rows += 1;
        match compare(&query, &db, c[4] == "yes", &pruning_rules(), tmp.path()) {
            Ok(true) => pruned += 1,
            Ok(false) => {}
            Err(e) => panic!("{}: {e}", c[0]),
        }
    }
    eprintln!("{rows} conformance queries, {pruned} of them pruned by the index, all agree");
    assert!(pruned >= 50, "only {pruned} queries used the index");
}

/// Queries each index rule serves, on the blind data (sources the project never tuned on).
#[test]
fn blind_data_agrees() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut stack = vec![shared().join("data/blind")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "pgn") {
                files.push(p);
            }
        }
    }
    files.sort();
    let db = tmp.path().join("blind");
    index(&files, &db);
    for q in BLIND_QUERIES {
        for variations in [false, true] {
            let query = format!("cql() {q}");
            if let Err(e) = compare(&query, &db, variations, &pruning_rules(), tmp.path()) {
                panic!("{e}");
            }
        }
    }
}

/// Games whose trees branch (studies, repertoires, annotated matches): the positions an
/// exact plan lists from the index, main line or every line, against the full scan's, for
/// filters about positions and about whole games.
#[test]
fn listed_positions_agree_on_game_trees() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = shared().join("data/variations");
    let files: Vec<PathBuf> = [
        "pychess_world_matches.pgn",
        "pychess_dortmund.pgn",
        "pgn4people-poc_demo_pgn_1.pgn",
    ]
    .iter()
    .map(|f| dir.join(f))
    .collect();
    let db = tmp.path().join("trees");
    index(&files, &db);
    for q in [
        "result 1-0",
        "not result 0-1",
        "player white \"a\"",
        "year > 1900",
        // `!=` is `not ==`: games without a year are in it, on the index as in the scan.
        "year != 1900",
        "check",
        "mate",
        "Ka1 or Kh8",
        "btm Qd1",
        "flipcolor { Kg1 }",
        "check result 1-0",
        "gamenumber 2 9",
        // The main line's next move, from the positions its move reached (variations hold
        // such moves too).
        "move capture q",
        "move promote Q",
        "move castle",
    ] {
        for variations in [false, true] {
            let query = format!("cql() {q}");
            match compare(&query, &db, variations, &pruning_rules(), tmp.path()) {
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
    }
}

const BLIND_QUERIES: [&str; 31] = [
    "flip { Ka1 }",
    "rotate90 { Qa1-h1 }",
    "flipvertical { Rh1 kh8 }",
    "shift { Kg1 Pf2 Pg2 Ph2 }",
    "mate",
    "stalemate",
    "check not mate",
    "Ke1 Qd1",
    "[Qq]d4",
    "Pa-h7 btm",
    "R == 1 r == 1",
    "[Aa] <= 5",
    "A == 0",
    "flipcolor { Pa-h7 check }",
    "not (check or mate)",
    "terminal wtm",
    "variation check",
    "parent : check",
    "result 1-0 mate",
    "initial Ke1",
    "move promote N",
    "--=q",
    "N[x]q",
    "--(o-o-o)",
    "move previous capture r",
    "enpassant",
    "o-o check",
    "eco \"0\"",
    "eco \"B\" check",
    "tag \"Round\" \"1\"",
    "tag \"Annotator\" \"a\"",
];

/// A material count compared with a number: what the index answers from its material
/// signatures, searched by their counts (`executor/src/scan/signature_search.rs`).
fn material() -> impl Strategy<Value = String> {
    (
        prop::sample::subsequence(
            vec![
                "A", "a", "P", "p", "N", "n", "B", "b", "R", "r", "Q", "q", "K",
            ],
            1..4,
        ),
        prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]),
        0u8..10,
    )
        .prop_map(|(pieces, op, n)| format!("#[{}] {op} {n}", pieces.concat()))
}

/// The grammar of random queries: indexable and non-indexable filters under `not`, `or`,
/// compounds, `flipcolor` and header filters.
fn atom() -> impl Strategy<Value = String> {
    prop_oneof![4 => fixed_atom(), 1 => material()]
}

fn fixed_atom() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "mate",
        "check",
        "stalemate",
        "initial",
        "terminal",
        "mainline",
        "variation",
        "wtm",
        "btm",
        "Ke1",
        "Kg1",
        "[Qq]d4",
        "Pa-h7",
        "pe4",
        "R == 1",
        "[Aa] <= 5",
        "#N >= 2",
        "Q",
        "B == 0",
        "2 < #P",
        "result 1-0",
        "result *",
        "K attacks q",
        "ply > 30",
        "movenumber < 10",
        "parent : check",
        "player white \"a\"",
        "player black \"an\"",
        "player \"e, \"",
        "event \"ch\"",
        "site \"NED\"",
        "eco \"B9\"",
        "eco \"0\"",
        "tag \"Round\" \"1\"",
        "tag \"EventDate\" \"19\"",
        "player white \".\"",
        "R attacks k",
        "depth == 0",
        "Nf3",
        "_e4",
        "light B",
        "true",
        "false",
        "o-o",
        "o-o-o",
        "castle",
        "enpassant",
        "nullmove",
        "[x]",
        "--=q",
        "P--=Q",
        "N[x]q",
        "B[x]",
        "K--",
        "--r",
        "--(o-o-o)",
        "move promote N",
        "move previous capture r",
        "move from R",
        "move legal capture q",
        "currentmove [x]",
        "ply < 12",
        "movenumber <= 4",
        "movenumber == 20",
        "ply == 7",
        "ply != 7",
        "ply >= 120",
        "40 < ply",
        "depth > 0",
        "depth == 1",
        "depth < 3",
        "fen \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR\"",
        "fen \"rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R\"",
        "fen \"r.bqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR\"",
        "year > 1990",
        "year <= 1900",
        "year == 2004",
        "year != 1999",
        "elo white >= 2600",
        "elo black > 2650",
        "elo white < 2400",
        "2500 <= elo black",
    ])
    .prop_map(str::to_owned)
}

fn filter() -> impl Strategy<Value = String> {
    atom().prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|a| format!("not {a}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} or {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{{ {a} {b} }}")),
            (
                prop::sample::select(vec![
                    "flipcolor",
                    "reversecolor",
                    "flip",
                    "flipvertical",
                    "fliphorizontal",
                    "rotate90",
                    "shifthorizontal",
                    "shiftvertical",
                ]),
                inner.clone()
            )
                .prop_map(|(t, a)| format!("{t} {{ {a} }}")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a} and {b})")),
        ]
    })
}

fn header() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "cql()",
        "cql(variations)",
        "cql(gamenumber 100 900)",
        "cql(result 0-1)",
        "cql(result *)",
        "cql(variations gamenumber 5 2000)",
    ])
}

struct Fixture {
    _tmp: tempfile::TempDir,
    db: PathBuf,
    work: PathBuf,
}

fn fixture() -> &'static Fixture {
    static F: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    F.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("games");
        index(&[shared().join("conformance/cql/corpus/games.pgn")], &db);
        let work = tmp.path().join("work");
        std::fs::create_dir(&work).unwrap();
        Fixture {
            _tmp: tmp,
            db,
            work,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_queries_agree(h in header(), body in prop::collection::vec(filter(), 1..3)) {
        let f = fixture();
        let query = format!("{h} {}", body.join(" "));
        if let Err(e) = compare(&query, &f.db, false, &pruning_rules(), &f.work) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// One stored bitmap: a piece on a square (where pieces of a castled or opening position
/// stand, so that many are broad) or a flag.
fn stored_bitmap() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            'K', 'k', 'Q', 'q', 'R', 'r', 'B', 'b', 'N', 'n', 'P', 'p',
        ]),
        prop::sample::select(vec![
            "g1", "g8", "e1", "e8", "f1", "f8", "d1", "d8", "a1", "h8", "c3", "f6", "e4", "d5",
            "f2", "f7", "b2", "g7", "c1", "c8",
        ]),
    )
        .prop_map(|(p, sq)| format!("{p}{sq}"))
        .boxed()
        .prop_union(
            prop::sample::select(vec!["check", "mainline", "wtm", "btm", "initial", "mate"])
                .prop_map(str::to_owned)
                .boxed(),
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Conjunctions of stored bitmaps, which the executor intersects a window at a time when
    /// the first is broad (`storage/src/bitmap_window.rs`): the games, positions and counts of
    /// the full scan, with and without variations.
    #[test]
    fn conjunctions_of_stored_bitmaps_agree(
        parts in prop::collection::vec(stored_bitmap(), 2..5),
        variations: bool,
    ) {
        let f = fixture();
        let query = format!("cql() {}", parts.join(" "));
        if let Err(e) = compare(&query, &f.db, variations, &pruning_rules(), &f.work) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// Intersections whose smallest operand is a piece on a square held by between 1/512 and
/// 1/128 of a segment's positions: their games are found window by window without making
/// their set of positions (`WindowGames` in `executor/src/found.rs`). Such pieces on squares
/// of the corpus, beside each flag in turn, with and without variations, give the full
/// scan's games, output and count.
#[test]
fn conjunctions_led_by_a_middling_bitmap_agree() {
    use cqldb_storage::{BitmapKey, Database};
    use shakmaty::{Color, Role, Square};
    let f = fixture();
    let db = Database::open(&f.db).unwrap();
    let mut picked = std::collections::BTreeSet::new();
    for (_, seg) in db.segments() {
        let universe = seg.positions();
        for color in Color::ALL {
            for role in Role::ALL {
                for square in Square::ALL {
                    let n = seg.bitmap_len(BitmapKey::Piece(color, role, square));
                    if n * 512 > universe && n * 128 < universe {
                        let piece = role.of(color).char();
                        picked.insert(format!("{piece}{square}"));
                    }
                }
            }
        }
    }
    assert!(picked.len() >= 8, "too few middling bitmaps: {picked:?}");
    let flags = ["wtm", "mainline", "btm", "check"];
    // About 40 of them, spread over the pieces and squares: each pair of runs is a full scan.
    let step = picked.len().div_ceil(40);
    for (i, p) in picked.iter().step_by(step).enumerate() {
        let query = format!("cql() {p} {}", flags[i % flags.len()]);
        for variations in [false, true] {
            compare(&query, &f.db, variations, &pruning_rules(), &f.work).unwrap();
        }
    }
}

/// A rule with a classic bug: it takes the lower bound for the upper one (as if every
/// filter were exact), dropping candidates.
struct PlantedBug;

impl Rule for PlantedBug {
    fn name(&self) -> &'static str {
        "planted_bug"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        if d.lower == Scan::Empty {
            return None;
        }
        d.upper = d.lower.clone();
        Some("upper := lower".into())
    }
}

#[test]
fn a_planted_bug_is_caught() {
    let f = fixture();
    let mut rules: Vec<&dyn Rule> = pruning_rules();
    rules.insert(2, &PlantedBug);
    let queries = [
        "cql() check or K attacks q",
        "cql() mate or ply > 60",
        "cql() not (check and R attacks k)",
    ];
    let caught = queries
        .iter()
        .any(|q| compare(q, &f.db, false, &rules, &f.work).is_err());
    assert!(caught, "the planted bug went unnoticed");
    // Without the plant, the same queries agree.
    for q in queries {
        compare(q, &f.db, false, &pruning_rules(), &f.work).unwrap();
    }
}

#[test]
fn plans_explain_their_stages() {
    let f = fixture();
    let r = cql_run(
        "cql() mate R == 1",
        &f.db,
        false,
        false,
        &f.work.join("x.pgn"),
    );
    let plan = cqldb::cql::plan(&r).unwrap();
    let text = plan.explain("cql() mate R == 1", &[], None);
    for want in [
        "Logical plan:",
        "index_bounds: the body is an index expression (exact)",
        "Physical plan:",
        "IndexScan: flag mate",
        "IndexScan: material #R == 1",
        "Residual: the query at each visited position",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // Over the database each scan operator carries its estimates, from the stored bitmaps'
    // headers: exact for one stored bitmap, products of shares for an intersection, unknown
    // for a tag search and whatever stands on one.
    let text = cqldb::cql::explain(&r, &plan, None).unwrap();
    assert!(text.contains("BitmapAnd  [est. positions="), "{text}");
    let analyzed_line = |query: &str, operator: &str| -> String {
        let analyzed = ok(&["explain", "--analyze", "--db", s(&f.db), "-cql", query]);
        analyzed
            .lines()
            .find(|l| l.contains(operator))
            .unwrap_or_else(|| panic!("{analyzed}"))
            .to_owned()
    };
    let field = |line: &str, from: &str| -> u64 {
        let at = line.find(from).unwrap_or_else(|| panic!("{line}")) + from.len();
        line[at..]
            .split([',', ']'])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let line = analyzed_line("Rf1", "IndexScan: pieces R on f1");
    assert_eq!(
        field(&line, "[est. positions="),
        field(&line, "]  [positions="),
        "{line}"
    );
    // A flag's games: one stored game bitmap, its size exact too.
    let line = analyzed_line("mate", "GameScan: games with mate on the main line");
    let measured = &line[line
        .find("]  [positions=")
        .unwrap_or_else(|| panic!("{line}"))..];
    assert_eq!(
        field(&line, ", games="),
        field(measured, ", games="),
        "{line}"
    );
    assert!(
        text.contains("CandidateGames (exact)  [est. games="),
        "{text}"
    );
    let tags = cql_run(
        "cql() player \"Carlsen\" mate",
        &f.db,
        false,
        false,
        &f.work.join("x.pgn"),
    );
    let text = cqldb::cql::explain(&tags, &cqldb::cql::plan(&tags).unwrap(), None).unwrap();
    assert!(
        text.contains("TagScan: White contains \"Carlsen\"  [est. positions=?, games=?]"),
        "{text}"
    );
    assert!(
        text.contains("BitmapAnd  [est. positions=?, games=?]"),
        "{text}"
    );
    let counted = logical_plan(&CqlRun {
        output: None,
        ..cql_run("cql() mate", &f.db, false, false, &f.work.join("x.pgn"))
    })
    .unwrap();
    let plan = cqldb_planner::plan::rules::optimize(counted);
    assert_eq!(plan.residual, cqldb_planner::plan::Residual::None);
    let _ = Arc::clone(&plan.query);
}

/// An exact `fen` of a placement repeated in the corpus is one board bitmap (its pieces'
/// bitmaps are not read), and a rare one falls back to its pieces; both agree with the full
/// scan, colours flipped or not.
#[test]
fn fen_reads_the_board_index() {
    let f = fixture();
    let db = s(&f.db);
    let explain = |q: &str| ok(&["explain", "--analyze", "--db", db, "-cql", q]);
    let operators = |text: &str, name: &str| -> Vec<u64> {
        text.lines()
            .filter(|l| l.contains(name))
            .map(|l| {
                let at = l.find("[positions=").expect("analyzed operator") + 11;
                l[at..].split(',').next().unwrap().parse().unwrap()
            })
            .collect()
    };
    // After 1.e4: in most games of the corpus.
    let common = "fen \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR\"";
    let text = explain(&format!("cql() {common}"));
    let board = operators(&text, "IndexScan: board");
    assert!(board.len() == 1 && board[0] > 8, "{text}");
    assert!(
        operators(&text, "IndexScan: pieces")
            .iter()
            .all(|&n| n == 0),
        "{text}"
    );
    // A mate position of the corpus: in few games.
    let csv = f.work.join("mates.csv");
    ok(&[
        "cql",
        "--format",
        "csv",
        "-o",
        s(&csv),
        "--db",
        db,
        "-cql",
        "mate",
    ]);
    let rows = std::fs::read_to_string(&csv).unwrap();
    // Mates from across the corpus (so from different stretches of the board index).
    let boards: Vec<String> = rows
        .lines()
        .skip(1)
        .step_by(7)
        .take(8)
        .filter_map(|row| row.split(',').find(|cell| cell.matches('/').count() == 7))
        .filter_map(|fen| fen.split(' ').next())
        .map(str::to_owned)
        .collect();
    assert!(boards.len() >= 4, "{rows}");
    let rare = format!("fen \"{}\"", boards[0]);
    let text = explain(&format!("cql() {rare}"));
    assert!(operators(&text, "IndexScan: board")[0] >= 1, "{text}");
    let mut queries = vec![
        format!("cql() {common}"),
        format!("cql() flipcolor {common}"),
        format!("cql() flipcolor {{ {rare} wtm }}"),
    ];
    queries.extend(boards.iter().map(|b| format!("cql() fen \"{b}\"")));
    for q in queries {
        assert!(compare(&q, &f.db, false, &pruning_rules(), &f.work).unwrap());
        assert!(compare(&q, &f.db, true, &pruning_rules(), &f.work).unwrap());
    }
}

/// Every answer of a GTQL query over `db` as CSV, planned or fed every game (`full`).
fn gtql_csv(db: &Path, q: &str, full: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cqldb"));
    cmd.args(["gtql", q, "--db"])
        .arg(db)
        .args(["--format", "csv"]);
    if full {
        cmd.arg("--full-scan");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{q}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// GTQL over game trees: the games the index keeps give the same answers, with the same node
/// ids, as feeding every game.
#[test]
fn gtql_over_games_agrees() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("studies");
    index(&[shared().join("conformance/cql/corpus/studies.pgn")], &db);
    let run = |q: &str, full: bool| gtql_csv(&db, q, full);
    let mut pruned = 0;
    for q in [
        "node: mate",
        "node: mate = 1; subtree: count(*) = 0",
        "node: check and mainline = 0",
        "node: stalemate or mate",
        "node: variation; subtree: count(*) > 3",
        "node: not mainline",
        "node: terminal and not mate",
        "node: check = 1 and ply > 20; child: count(*) >= 2",
        "node: wtm = 0 and check; sibling: count(*) >= 1",
        "node: initial; child: count([]check = 1) >= 1",
        "node: mate or ply > 200",
        "node: count(mate = 1)",
        "node: depth > 0 and check",
        "node: depth = 1; subtree: count(*) > 2",
        "node: 6 >= ply; child: count(*) > 1",
        "node: ply = 40 and wtm = 0",
        "node: movenumber <= 3 and check",
        "node: 2 >= movenumber; child: count(*) > 1",
        "node: not (depth <= 1)",
    ] {
        let names = cqldb_executor::gtql::game_names();
        let query = cqldb_planner::gtql::parse_gtql(q, &names).unwrap();
        pruned += usize::from(cqldb_executor::gtql::games::candidates(&[query]).is_some());
        assert_eq!(run(q, false), run(q, true), "{q}");
    }
    assert!(pruned >= 8, "{pruned}");
    // `--explain --analyze` runs the query and shows what each operator did.
    let out = Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(["gtql", "--explain", "--analyze", "node: mate", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: u64 = run("node: mate", false).lines().count() as u64 - 1;
    assert!(
        text.starts_with(&format!("{answers} answers: node: mate")),
        "{text}"
    );
    for want in [
        "CandidateGames  [est. games=",
        "]  [games=",
        "IndexScan: flag mate  [est. positions=",
        "]  [positions=",
        "nodes=",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
}

/// GTQL's game values over an index (`game`, `year`, `white_elo`, `black_elo`, `result`):
/// planned runs give the same answers, node ids included, as feeding every game, on real
/// games and on games whose tags are missing, misspelt, zero or outside what the bitmaps hold;
/// and the values are the ones CQL's filters read.
#[test]
fn gtql_game_values_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let edge = tmp.path().join("edge.pgn");
    let mut text = String::new();
    for (i, (date, white_elo, result)) in [
        ("1999.01.01", "2750", "1-0"),
        ("", "", ""),
        ("-500.??.??", "0", "*"),
        ("????.??.??", "99999", "1-0 "),
        ("2001.??.??", " 2699 ", "0-1"),
        ("1850.??.??", "abc", "1/2-1/2"),
        ("0000.01.01", "2800", "½-½"),
    ]
    .iter()
    .enumerate()
    {
        let tag = |name: &str, v: &str| {
            if v.is_empty() {
                String::new()
            } else {
                format!("[{name} \"{v}\"]\n")
            }
        };
        text += &format!(
            "[Event \"e{i}\"]\n{}{}{}[BlackElo \"{}\"]\n\n1. f3 e5 2. g4 Qh4# *\n\n",
            tag("Date", date),
            tag("WhiteElo", white_elo),
            tag("Result", result),
            2000 + i * 100
        );
    }
    std::fs::write(&edge, text).unwrap();
    for (name, inputs) in [
        ("edge", vec![edge.clone()]),
        (
            "real",
            vec![shared().join("conformance/cql/corpus/games.pgn"), edge],
        ),
    ] {
        let db = tmp.path().join(name);
        index(&inputs, &db);
        let run = |q: &str, full: bool| gtql_csv(&db, q, full);
        let mut answered = 0;
        for q in [
            "node: game = 3 and mate",
            "node: game != 2 and mate",
            "node: 5 >= game and initial",
            "node: year >= 1990 and mate",
            "node: year < 1900 and mate",
            "node: year = 0 and mate",
            "node: year != 1999 and mate",
            "node: white_elo >= 2700 and mate",
            "node: white_elo > 2750; child: count(*) = 0",
            "node: black_elo <= 2300 and mate",
            "node: black_elo = 2100",
            "node: result = 1 and mate",
            "node: result >= 0 and mate",
            "node: result = -2 and mate",
            "node: not (result = -1) and mate",
            "node: result = 0 or white_elo >= 2800",
        ] {
            let (planned, full) = (run(q, false), run(q, true));
            assert_eq!(planned, full, "{name}: {q}");
            answered += usize::from(planned.lines().count() > 1);
        }
        assert!(
            answered >= 12,
            "{name}: only {answered} queries have answers"
        );
        if name == "edge" {
            // The values CQL reads: the year of the first Date tag, the rating as a number,
            // the first Result tag spelt exactly (else -2); 0 where a tag says nothing.
            let count = |q: &str| run(q, true).lines().count() - 1;
            assert_eq!(count("node: initial and year = 1999"), 1);
            assert_eq!(count("node: initial and year = -500"), 1);
            assert_eq!(count("node: initial and year = 0"), 3);
            assert_eq!(count("node: initial and white_elo = 2699"), 1);
            assert_eq!(count("node: initial and white_elo = 99999"), 1);
            assert_eq!(count("node: initial and white_elo = 0"), 3);
            assert_eq!(count("node: initial and result = 1"), 1);
            assert_eq!(count("node: initial and result = -2"), 4);
            assert_eq!(count("node: initial and black_elo = 2600"), 1);
        }
    }
}

/// Years and ratings, from the bitmaps by value: exact answers from the index where every
/// game's year and ratings are the ones indexed, and the same answers as the full scan where
/// some are not (a year taken from `EventDate`, years and ratings outside 1..=65535), whose
/// segments are then evaluated whole.
#[test]
fn years_and_ratings_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let game = |date: &str, white: &str, black: &str| {
        let tag = |name: &str, v: &str| {
            if v.is_empty() {
                String::new()
            } else {
                format!("[{name} \"{v}\"]\n")
            }
        };
        format!(
            "[Event \"t\"]\n{}{}{}\n1. f3 e5 2. g4 Qh4# 0-1\n\n",
            tag("Date", date),
            tag("WhiteElo", white),
            tag("BlackElo", black)
        )
    };
    let clean: String = [
        game("1851.06.21", "", ""),
        game("1990.01.01", "2650", "2400"),
        game("1999.??.??", "2600", "2599"),
        game("2004.05.05", " 2700 ", "2701"),
        game("????.??.??", "?", "2650"),
        game("", "1", "100"),
        game("2023.01.01", "65535", "99"),
    ]
    .concat();
    // Each odd game in a database of its own, so none hides another.
    let odd = [
        game("-500.??.??", "99999", "-5"),
        game("0000.01.01", "0", "2600"),
        "[EventDate \"1995.??.??\"]\n[WhiteElo \"2601\"]\n\n1. e4 *\n\n".to_owned(),
    ]
    .map(|g| format!("{clean}{g}"));
    let queries = [
        "year > 1990",
        "year >= 1990",
        "year < 1900",
        "year <= 0",
        "year == 1995",
        "year != 1999",
        "not year > 1990",
        "year < 1",
        "year > 3000",
        "elo white >= 2600",
        "elo white > 2600",
        "elo white < 2650",
        "elo black == 2599",
        "elo black != 2400",
        "elo white > 65535",
        "elo black < 1",
        "2600 <= elo black",
        "flipcolor { elo white >= 2650 }",
        "not elo black >= 2600",
        "mate year > 1900 elo white >= 2600",
    ];
    let dbs = [
        ("clean", &clean),
        ("odd values", &odd[0]),
        ("zeros", &odd[1]),
        ("event date", &odd[2]),
    ];
    for (name, text) in dbs {
        let pgn = tmp.path().join(format!("{name}.pgn"));
        std::fs::write(&pgn, text).unwrap();
        let db = tmp.path().join(name);
        index(&[pgn], &db);
        for q in queries {
            let q = format!("cql() {q}");
            for variations in [false, true] {
                compare(&q, &db, variations, &pruning_rules(), tmp.path())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
    }
    // Where every value is the indexed one, a year or a rating on a band's edge is answered
    // from the index alone.
    let explain = |q: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_cqldb"))
            .args(["explain", "--db"])
            .arg(tmp.path().join("clean"))
            .args(["-cql", q])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    for q in ["year > 1990", "elo white >= 2600"] {
        let text = explain(q);
        assert!(text.contains("GameScan: "), "{text}");
        assert!(text.contains("the index answers exactly"), "{text}");
    }
}

/// Cases a review found where the index could have missed games: a game tagged `*` whose
/// movetext ends decisively (indexed by its marker), a Result tag that is not exactly a
/// result's spelling, a repeated Result tag, promotions in variations, and a tag word too long
/// to be indexed.
#[test]
fn index_edge_cases_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let pgn = tmp.path().join("edge.pgn");
    let long = format!("Abc{}xyz", "q".repeat(300));
    std::fs::write(
        &pgn,
        format!(
            "[Event \"a\"]\n[White \"{long}\"]\n[Result \"*\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n\
             [Event \"b\"]\n[White \"Short Name\"]\n[Result \"1-0\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n\
             [Event \"c\"]\n[White \"First\"]\n[White \"Second Name\"]\n\n1. e4 *\n\n\
             [Event \"d\"]\n[white \"Lower Name\"]\n[Black \"O'Kelly, A.\"]\n\n1. d4 *\n\n\
             [Event \"e\"]\n[White \"{word255}\"]\n\n1. e4 (1. d4 d5 (1... Nf6)) e5 *\n\n\
             [White \"A\"]\n{{note}}\n[Black \"Carlsen\"]\n\n1. e4 *\n\n\
             [Event \"f\"]\n[Result \" 0-1\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n\
             [Event \"g\"]\n[Result \"1/2-1/2\"]\n[Result \"1-0\"]\n\n1. e4 1-0\n\n\
             [Event \"h\"]\n[SetUp \"1\"]\n[FEN \"8/P7/8/8/8/8/7p/K3k3 w - - 0 1\"]\n\n\
             1. a8=Q (1. a8=N h1=Q (1... h1=B)) h1=R *\n",
            word255 = "A".repeat(255)
        ),
    )
    .unwrap();
    let db = tmp.path().join("db");
    index(&[pgn], &db);
    for q in [
        "cql() result * mate",
        "cql(result *) mate",
        "cql() result 1-0 mate",
        // A Result tag that is not exactly a result's spelling, and a repeated one.
        "cql() result 0-1",
        "cql() not result 0-1",
        "cql() result 1/2-1/2",
        "cql(result 1-0) true",
        "cql() not result *",
        "cql() result 0-1 or result 1-0",
        // Promotions in the main line and in variations.
        "cql() move promote N",
        "cql(variations) move promote N",
        "cql(variations) move promote B",
        "cql() move promote R",
        "cql() not move promote [QN]",
        "cql(variations) not move promote [RB]",
        "cql() move promote Q check",
        // At the position the move leaves, not the one it reaches.
        "cql() move promote Q wtm",
        "cql() move promote R btm",
        "cql(variations) move promote [NB] Pa7",
        "cql() player white \"xyz\"",
        "cql() player white \"qqq\" mate",
        "cql() player white \"Name\"",
        "cql() position 0 : true",
        // A repeated tag, a tag name in another case, needles the words cannot find.
        "cql() player white \"Second\"",
        "cql() player white \"Lower\"",
        "cql() player \"'K\"",
        "cql() player black \"., \"",
        "cql() not player white \"Name\"",
        "cql() player white \"e N\"",
        "cql() eco \"B\"",
        // A word of exactly the length the tokenizer drops; a depth range under `not`; a
        // comment between tags (it ends the tag section, at ingest and at query time alike).
        "cql() player white \"AAA\"",
        "cql(variations) not depth < 2",
        "cql(variations) not depth <= 1",
        "cql(variations) depth < 2",
        "cql() not player black \"Carlsen\"",
        "cql() player black \"Carlsen\"",
    ] {
        if let Err(e) = compare(q, &db, false, &pruning_rules(), tmp.path()) {
            panic!("{e}");
        }
        let r = cql_run(q, &db, false, false, &tmp.path().join("o.pgn"));
        let full = cql_run(q, &db, false, true, &tmp.path().join("o.pgn"));
        let n = |r: &CqlRun| cqldb::cql::run(r).unwrap().matched;
        assert_eq!(n(&r), n(&full), "{q}");
    }
}

/// The games a segment keeps per flag, line and side to move are the games of the flag's
/// positions there (on the main line, with that side to move): what a segment written before
/// them gives, read from the positions.
#[test]
fn flag_games_are_the_games_of_the_flag_s_positions() {
    use cqldb_planner::plan::{GameLine, PositionFlag};
    use shakmaty::Color;
    let f = fixture();
    let db = cqldb_storage::Database::open(&f.db).unwrap();
    let mut nonempty = 0;
    let flags = [
        (PositionFlag::Check, cqldb_storage::PositionFlags::CHECK),
        (PositionFlag::Mate, cqldb_storage::PositionFlags::MATE),
        (
            PositionFlag::Stalemate,
            cqldb_storage::PositionFlags::STALEMATE,
        ),
    ];
    for (_, seg) in db.segments() {
        for (flag, storage_flag) in flags {
            for line in [GameLine::Main, GameLine::Anywhere] {
                for side in [None, Some(Color::White), Some(Color::Black)] {
                    let storage_line = match line {
                        GameLine::Main => cqldb_storage::GameLine::Main,
                        GameLine::Anywhere => cqldb_storage::GameLine::Anywhere,
                    };
                    let key =
                        cqldb_storage::BitmapKey::flag_games(storage_flag, storage_line, side);
                    assert!(seg.has_bitmap(key).unwrap(), "{key:?} written");
                    let mut positions = vec![Scan::Flag(flag)];
                    if line == GameLine::Main {
                        positions.push(Scan::Flag(PositionFlag::Mainline));
                    }
                    let wtm = Scan::Flag(PositionFlag::WhiteToMove);
                    match side {
                        None => {}
                        Some(Color::White) => positions.push(wtm),
                        Some(Color::Black) => positions.push(Scan::Not(Box::new(wtm))),
                    }
                    let mut scan = cqldb_executor::scan::SegmentScan::new(seg, 1).unwrap();
                    let games = Scan::FlagGames { flag, line, side };
                    let stored = scan.eval_games(&games, &mut Vec::new()).unwrap();
                    let from_positions = scan
                        .eval_games(&Scan::And(positions), &mut Vec::new())
                        .unwrap();
                    assert_eq!(stored, from_positions, "{flag:?} {line:?} {side:?}");
                    nonempty += usize::from(!stored.is_empty());
                }
            }
        }
    }
    assert!(
        nonempty >= 12,
        "the corpus has checks, mates and stalemates of both sides"
    );
}

/// A flag beside the side to move (`btm mate`: White mates) takes the games from the sided
/// game bitmaps: the full scan's games, output and count, for each flag and side, alone,
/// beside a whole-game set, in a union of flags, with and without variations.
#[test]
fn flags_beside_the_side_to_move_agree() {
    let f = fixture();
    let mut queries = Vec::new();
    for side in ["wtm", "btm"] {
        for flag in ["check", "mate", "stalemate"] {
            queries.push(format!("cql() {side} {flag}"));
            queries.push(format!("cql() {flag} {side} result 1-0"));
            queries.push(format!("cql() mainline {side} {flag}"));
        }
        queries.push(format!("cql() (mate or stalemate) {side}"));
        queries.push(format!("cql() {side} check player white \"a\""));
    }
    for query in queries {
        for variations in [false, true] {
            compare(&query, &f.db, variations, &pruning_rules(), &f.work)
                .unwrap_or_else(|e| panic!("{query} (variations: {variations}): {e}"));
        }
    }
}
