//! CQL 3 list files against the CQL 6 queries written by hand for the same meaning: the same
//! games, over a database (planned) and over the PGN itself, on the conformance corpus and on
//! games with variations; the command line reads such a file, EXPLAIN shows its CQL 6 text,
//! and what is not supported yet is refused with its line and column.

use std::path::PathBuf;

use std::sync::{Arc, OnceLock};

use cqldb::cql::{CqlRun, Source, run};
use datafusion::arrow::array::{Array, BooleanArray, Int64Array, UInt64Array};
use proptest::prelude::*;

mod common;
use common::{cqldb, ok, s};

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// (CQL 3 list, CQL 6 query meaning the same, written independently).
const PAIRS: &[(&str, &str)] = &[
    ("(match (position Ka1))", "cql() Ka1"),
    (
        "(match :result 1-0 (position :mate :btm))",
        "cql() result 1-0 btm mate",
    ),
    (
        "(match (position .e4 .d4 Pe2 Pd2 :wtm))",
        "cql() _e4 _d4 Pe2 Pd2 wtm",
    ),
    (
        "(match (position U[a1,h1,a8,h8] :not))",
        "cql() not [Aa][a1,h1,a8,h8]",
    ),
    (
        "(match (position M?8 :flipcolor))",
        "cql() flipcolor { [QR]a-h8 }",
    ),
    (
        "(match (position :piececount P 8 :piececount p 8 :check))",
        "cql() #P == 8 #p == 8 check",
    ),
    (
        "(match :year 1990 2010 (position :stalemate))",
        "cql() year >= 1990 year <= 2010 stalemate",
    ),
    ("(match (position Ra1 ka8 :flip))", "cql() flip { Ra1 ka8 }"),
    (
        "(match (position :or ((position :mate) (position :stalemate))))",
        "cql() mate or stalemate",
    ),
    (
        "(match (position :and ((position Qd1) (position qd8)) :nocheck))",
        "cql() Qd1 qd8 not check",
    ),
    (
        "(match (position :variationsonly :check))",
        "cql(variations) variation check",
    ),
    (
        "(match (position :variations :mate))",
        "cql(variations) mate",
    ),
    (
        "(match :gamenumber 10 200 (position I[c3,f3]))",
        "cql(gamenumber 10 200) [BN][c3,f3]",
    ),
    (
        "(match (position ?e4 :fliphorizontal))",
        "cql() fliphorizontal { [Aa_]e4 }",
    ),
    (
        "(match (position ka? :piececount U 3 5))",
        "cql() k[a1-8] #[Aa] >= 3 #[Aa] <= 5",
    ),
    (
        "(match :result 1/2 (position :initial))",
        "cql() result 1/2-1/2 initial",
    ),
    // Shifts keep the squares on the edge they move away from (so a right shift of a4
    // keeps a4): the documentation's example, N on d4..h4 and a P on the 4th rank at least
    // three files to its left.
    (
        "(match (position Pa4 Nd4 :shifthorizontal))",
        "cql() {Nd4 Pa4} or {Ne4 Pa-b4} or {Nf4 Pa-c4} or {Ng4 Pa-d4} or {Nh4 Pa-e4}",
    ),
    (
        "(match (position Kg1 Rf1 :shiftvertical :not))",
        "cql() not {{Kg1 Rf1} or {Kg1-2 Rf1-2} or {Kg1-3 Rf1-3} or {Kg1-4 Rf1-4} \
         or {Kg1-5 Rf1-5} or {Kg1-6 Rf1-6} or {Kg1-7 Rf1-7} or {Kg1-8 Rf1-8}}",
    ),
    // Quadrupled pawns on some file (the b-file shifted right, or left onto the a-file).
    (
        "(match (position :piececount P[b2-7] 3 :shifthorizontal :flipcolor))",
        "cql() flipcolor {#Pa2-7 == 3 or #Pb2-7 == 3 or #Pc2-7 == 3 or #Pd2-7 == 3 \
         or #Pe2-7 == 3 or #Pf2-7 == 3 or #Pg2-7 == 3 or #Ph2-7 == 3}",
    ),
    (
        "(match (position Rc3 qg3 :flipdiagonal))",
        "cql() {Rc3 qg3} or {Rc3 qc7}",
    ),
    // Smothered mate: the mated king attacks no empty square and no white piece.
    (
        "(match (position :flipcolor :attackcount k [A.] 0 :mate))",
        "cql() flipcolor {mate not (k attacks [A_])}",
    ),
    (
        "(match (position :attackcount [RQ] [rq] 2 10))",
        "cql() {c = 0 piece x in [rq] {c += #([RQ] attacks x)} 2 <= c <= 10}",
    ),
    // A queen on a line with the king, nothing between: the queen attacks it.
    ("(match (position :ray (k Q)))", "cql() Q attacks k"),
    (
        "(match (position :rayorthogonal (K r)))",
        "cql() r attacks K",
    ),
    (
        "(match (position :raydiagonal (b K) 0))",
        "cql() not (b attacks K)",
    ),
    (
        "(match (position :power U 60 70))",
        "cql() {w = #[Pp] + 3 * #[NBnb] + 5 * #[Rr] + 9 * #[Qq] w >= 60 w <= 70}",
    ),
    (
        "(match (position :powerdifference U 3 10))",
        "cql() {d = #P + 3 * #[NB] + 5 * #R + 9 * #Q - #p - 3 * #[nb] - 5 * #r - 9 * #q \
         d >= 3 d <= 10}",
    ),
    // Castling, anywhere: the king moves two files.
    (
        "(match (position :movefrom [Kk]e? :moveto .[c?,g?] :variations))",
        "cql(variations) --(castle)",
    ),
    ("(match (position :promote n))", "cql() btm --=N"),
    (
        "(match (position :enpassant :btm))",
        "cql() btm child:enpassant",
    ),
    (
        "(match (position :xor ((position :check) (position Qd1)) :noenpassant))",
        "cql() {check or Qd1} not {check Qd1} not child:enpassant",
    ),
    (
        "(match (position :movefrom Pe2 :moveto .e4))",
        "cql() Pe2--e4",
    ),
    // A sequence of positions one move apart: the e-pawn's double step.
    (
        "(match (position :sequence ((position Pe2 .e4) (position .e2 Pe4))))",
        "cql() Pe2--e4",
    ),
    (
        "(match (position :initial :gappedsequence ((position :check) (position :mate))))",
        "cql() initial find {check child:find mate}",
    ),
    (
        "(match :elo 2600 2900 (position :check :matchcount 20 1000))",
        "cql(matchcount 20 1000) {2600 <= elo white <= 2900 or 2600 <= elo black <= 2900} check",
    ),
    (
        "(match :player an (position :mate))",
        "cql() {lowercase player white ~~ \"an\" or lowercase player black ~~ \"an\"} mate",
    ),
    // Six captures or more on one square (each placement of `Ud4` counted alone); the
    // destination holds a piece before the move, so en passant is not one.
    (
        "(match (position :movefrom U :moveto Ud4 :shift :pretransformmatchcount 6 100))",
        "cql() initial square x in . {6 <= find all {mainline {[x]x not --(enpassant)}} <= 100}",
    ),
    (
        "(match :eco B20 B99 (position :check))",
        "cql() eco ~~ \"^B[2-9][0-9]\" check",
    ),
    // When the query visits variations for another list, a list without `:variations`
    // still follows the main line's moves.
    (
        "(match (position :movefrom Pe2 :moveto .e4) (position :variationsonly :check))",
        "cql(variations) initial find {mainline Pe2 _e4 child(0):{_e2 Pe4}} find {variation check}",
    ),
    // Tags: a rook of the start position visits the four corners.
    (
        "(match :forany rook [rR] (position $rook[a1]) (position $rook[h1]) (position $rook[h8]) (position $rook[a8]))",
        "cql() initial piece x in [Rr] {find {x & a1} find {x & h1} find {x & h8} find {x & a8}}",
    ),
    // Excelsior: a pawn from its second rank promotes.
    (
        "(match :forany pawn [Pp] (position :initial :tagmatch pawn P?2 :gappedsequence ((position :movefrom $pawn :promote U)) :flipcolor))",
        "cql() initial piece x in [Pp] {{(x & Pa-h2) or (x & pa-h7)} \
         find {(x--=Q) or (x--=R) or (x--=B) or (x--=N)}}",
    ),
    // `:pattern`: only the list's squares are compared.
    (
        "(match (position Kd4 :relation (:pattern :changesidetomove)))",
        "cql() Kd4 echo quiet (s t) {ancestor(s t) sidetomove != s:sidetomove Kd4}",
    ),
    (
        "(match (position Kc3 :shift :relation (:pattern :shift :originalsamecount 0)))",
        "cql() echo quiet (s t) {ancestor(s t) sidetomove == s:sidetomove #(s:K & K) == 0}",
    ),
];

fn games(query: &str, source: Source) -> Vec<u64> {
    run(&CqlRun::new(query, source))
        .unwrap_or_else(|e| panic!("{query}: {e:#}"))
        .matched
        .into_vec()
}

#[test]
fn lists_match_the_games_of_their_cql6_forms() {
    let tmp = tempfile::tempdir().unwrap();
    let files = [
        shared().join("conformance/cql/corpus/games.pgn"),
        shared().join("data/variations/pychess_world_matches.pgn"),
    ];
    let mut nonempty = 0;
    for file in &files {
        let db = tmp.path().join(file.file_name().unwrap());
        ok(&["index", "--quiet", "--db", s(&db), s(file)]);
        for (list, cql6) in PAIRS {
            let want = games(cql6, Source::Db(db.clone()));
            let got = games(list, Source::Db(db.clone()));
            assert_eq!(got, want, "{list} against {cql6} on {}", file.display());
            let from_pgn = games(list, Source::Pgn(cqldb_indexer::Input::Path(file.clone())));
            assert_eq!(from_pgn, want, "{list} over the PGN");
            nonempty += usize::from(!want.is_empty());
        }
    }
    assert!(nonempty >= 20, "only {nonempty} pairs matched some game");
}

/// Several position lists: a game matches when each list matches some position of it, so its
/// games are those every list finds alone.
#[test]
fn several_lists_each_match_somewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let file = shared().join("data/variations/pychess_world_matches.pgn");
    let db = tmp.path().join("db");
    ok(&["index", "--quiet", "--db", s(&db), s(&file)]);
    let lists = [
        "(position :check)",
        "(position :piececount U 10 20)",
        "(position Qd1 :flipcolor)",
        "(position :mate :variations)",
        "(position .e4 .d4 :btm)",
        "(position :variationsonly :stalemate)",
    ];
    let mut nonempty = 0;
    for (i, a) in lists.iter().enumerate() {
        for b in &lists[i + 1..] {
            let alone = |l: &str| games(&format!("(match {l})"), Source::Db(db.clone()));
            let (ga, gb) = (alone(a), alone(b));
            let want: Vec<u64> = ga.iter().copied().filter(|g| gb.contains(g)).collect();
            let both = games(&format!("(match {a} {b})"), Source::Db(db.clone()));
            assert_eq!(both, want, "{a} {b}");
            nonempty += usize::from(!want.is_empty());
        }
    }
    assert!(nonempty >= 5, "{nonempty}");
}

#[test]
fn the_command_line_reads_list_files_and_explains_them() {
    let tmp = tempfile::tempdir().unwrap();
    let pgn = shared().join("conformance/cql/corpus/games.pgn");
    let query = tmp.path().join("mates.cql");
    std::fs::write(
        &query,
        "; CQL 3\n(match :result 0-1\n  (position :mate :wtm))\n",
    )
    .unwrap();
    let count = ok(&["cql", "--count", s(&query), "--pgn", s(&pgn)]);
    let six = tmp.path().join("mates6.cql");
    std::fs::write(&six, "cql() result 0-1 mate wtm").unwrap();
    assert_eq!(count, ok(&["cql", "--count", s(&six), "--pgn", s(&pgn)]));
    let explained = ok(&["explain", s(&query), "--pgn", s(&pgn)]);
    assert!(explained.contains("as CQL 6:"), "{explained}");
    assert!(explained.contains("result 0-1"), "{explained}");
    // Not supported yet: refused, with the place.
    std::fs::write(&query, "(match\n (position Ka1 :shiftmaindiagonal))\n").unwrap();
    let out = cqldb(&["cql", "--count", s(&query), "--pgn", s(&pgn)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":2:16") && err.contains(":shiftmaindiagonal"),
        "{err}"
    );
    // The start position: examined by default, skipped on request.
    std::fs::write(&query, "(match (position :initial))\n").unwrap();
    let all = ok(&["cql", "--count", s(&query), "--pgn", s(&pgn)]);
    assert_ne!(all.trim(), "0");
    let skipped = ok(&[
        "cql",
        "--count",
        "--cql3-skip-initial",
        s(&query),
        "--pgn",
        s(&pgn),
    ]);
    assert_eq!(skipped.trim(), "0");
}

/// A position as the naive evaluator sees it: White to move, and each square's piece.
type Position = (bool, [u8; 64]);
/// A game's main line, in ply order.
type MainLine = Vec<Position>;

/// Main-line positions of the first games of the corpus, read back through SQL: per game, in
/// ply order, the side to move and each square's piece (0 empty, 1..=6 white PNBRQK, 7..=12
/// black).
struct Trees {
    _tmp: tempfile::TempDir,
    db: PathBuf,
    games: Vec<(u64, MainLine)>,
}

/// Games the relation property test reads (the naive evaluator is quadratic per game).
const RELATION_GAMES: u64 = 400;

fn trees() -> &'static Trees {
    static T: OnceLock<Trees> = OnceLock::new();
    T.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("db");
        let pgn = shared().join("conformance/cql/corpus/games.pgn");
        ok(&["index", "--quiet", "--db", s(&db), s(&pgn)]);
        let open = Arc::new(cqldb_storage::Database::open(&db).unwrap());
        let session = cqldb_sql::SqlSession::open(open).unwrap();
        let boards = [
            "white_pawns", "white_knights", "white_bishops", "white_rooks", "white_queens",
            "white_king", "black_pawns", "black_knights", "black_bishops", "black_rooks",
            "black_queens", "black_king",
        ];
        let sql = format!(
            "SELECT game, wtm, {} FROM positions WHERE mainline AND game <= {RELATION_GAMES} ORDER BY game, ply",
            boards.join(", ")
        );
        let answer = session.query(&sql).unwrap();
        let mut games: Vec<(u64, MainLine)> = Vec::new();
        for b in &answer.batches {
            let game = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let wtm = b.column(1).as_any().downcast_ref::<BooleanArray>().unwrap();
            for r in 0..b.num_rows() {
                let mut board = [0u8; 64];
                for (k, _) in boards.iter().enumerate() {
                    let bits = b.column(2 + k).as_any().downcast_ref::<UInt64Array>().unwrap();
                    let v = bits.value(r);
                    for (sq, cell) in board.iter_mut().enumerate() {
                        if v >> sq & 1 == 1 {
                            *cell = k as u8 + 1;
                        }
                    }
                }
                let g = game.value(r) as u64;
                match games.last_mut() {
                    Some((last, list)) if *last == g => list.push((wtm.value(r), board)),
                    _ => games.push((g, vec![(wtm.value(r), board)])),
                }
            }
        }
        Trees { _tmp: tmp, db, games }
    })
}

/// A relation list and what it asks, for the naive evaluator.
#[derive(Clone, Debug)]
struct Spec {
    missing: Option<(&'static str, (i64, i64))>,
    new: Option<(&'static str, (i64, i64))>,
    /// 0 same side to move (default), 1 change, 2 ignore.
    side: u8,
    different: Option<(i64, i64)>,
    same: Option<(i64, i64)>,
    /// `:pattern` over the squares of `?sq` designators in the list (they match any
    /// contents, so they only name the squares compared).
    pattern: Option<Vec<u8>>,
}

/// CQL 3 piece-type designators and the pieces (codes as in `Trees`) each holds.
const DESIGNATORS: &[(&str, &[u8])] = &[
    ("U", &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
    ("A", &[1, 2, 3, 4, 5, 6]),
    ("a", &[7, 8, 9, 10, 11, 12]),
    ("P", &[1]),
    ("p", &[7]),
    ("[Nn]", &[2, 8]),
    ("I", &[2, 3]),
    ("m", &[10, 11]),
];

fn pieces_of(d: &str) -> &'static [u8] {
    DESIGNATORS
        .iter()
        .find(|(n, _)| *n == d)
        .map_or(&[], |(_, p)| p)
}

impl Spec {
    fn cql3(&self) -> String {
        let range = |(lo, hi): (i64, i64)| format!("{lo} {hi}");
        let mut words = Vec::new();
        if let Some((d, r)) = self.missing {
            words.push(format!(":missingpiececount {d} {}", range(r)));
        }
        if let Some((d, r)) = self.new {
            words.push(format!(":newpiececount {d} {}", range(r)));
        }
        words.push(
            [":samesidetomove", ":changesidetomove", ":ignoresidetomove"][self.side as usize]
                .into(),
        );
        if let Some(r) = self.different {
            words.push(format!(":originaldifferentcount {}", range(r)));
        }
        if let Some(r) = self.same {
            words.push(format!(":originalsamecount {}", range(r)));
        }
        let mut designators = String::new();
        if let Some(squares) = &self.pattern {
            words.push(":pattern".into());
            for &sq in squares {
                let (f, r) = (char::from(b'a' + sq % 8), char::from(b'1' + sq / 8));
                designators.push_str(&format!("?{f}{r} "));
            }
        }
        format!(
            "(match :gamenumber 1 {RELATION_GAMES} (position {designators}:relation ({})))",
            words.join(" ")
        )
    }

    /// Whether P2 relates to P1, square by square.
    fn relates(&self, p1: &Position, p2: &Position) -> bool {
        let side_ok = match self.side {
            0 => p1.0 == p2.0,
            1 => p1.0 != p2.0,
            _ => true,
        };
        if !side_ok {
            return false;
        }
        let (dm, rm) = self.missing.unwrap_or(("U", (0, 0)));
        let (dn, rn) = self.new.unwrap_or(("U", (0, 0)));
        let (mut missing, mut missing_d, mut new, mut new_d, mut different, mut same) =
            (0i64, 0i64, 0i64, 0i64, 0i64, 0i64);
        for (sq, (&a, &b)) in p1.1.iter().zip(&p2.1).enumerate() {
            if self
                .pattern
                .as_ref()
                .is_some_and(|p| !p.contains(&(sq as u8)))
            {
                continue;
            }
            if a != 0 && b != 0 && a != b {
                return false;
            }
            if a != 0 && b == 0 {
                missing += 1;
                missing_d += i64::from(pieces_of(dm).contains(&a));
            }
            if a == 0 && b != 0 {
                new += 1;
                new_d += i64::from(pieces_of(dn).contains(&b));
            }
            different += i64::from(a != b);
            same += i64::from(a != 0 && a == b);
        }
        let within = |n: i64, (lo, hi): (i64, i64)| lo <= n && n <= hi;
        missing == missing_d
            && within(missing_d, rm)
            && new == new_d
            && within(new_d, rn)
            && self.different.is_none_or(|r| within(different, r))
            && self.same.is_none_or(|r| within(same, r))
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    let designator = prop::sample::select(DESIGNATORS.iter().map(|d| d.0).collect::<Vec<_>>());
    let range = (0i64..4, 0i64..4).prop_map(|(a, d)| (a, a + d));
    (
        prop::option::of((designator.clone(), range.clone())),
        prop::option::of((designator, range.clone())),
        0u8..3,
        prop::option::of((0i64..40, 0i64..30).prop_map(|(a, d)| (a, a + d))),
        prop::option::of((0i64..32, 0i64..10).prop_map(|(a, d)| (a, a + d))),
        prop::option::of(prop::collection::btree_set(0u8..64, 1..7)),
    )
        .prop_map(|(missing, new, side, different, same, pattern)| Spec {
            missing,
            new,
            side,
            different,
            same,
            pattern: pattern.map(|p| p.into_iter().collect()),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// `:relation` lists desugared and run against a naive evaluator over the positions read
    /// back: a game matches when some main-line position P1 has a later main-line P2 that
    /// relates to it.
    #[test]
    fn relations_match_a_naive_evaluator(spec in spec()) {
        let t = trees();
        let want: Vec<u64> = t
            .games
            .iter()
            .filter(|(_, line)| {
                (0..line.len()).any(|i| (i + 1..line.len()).any(|j| spec.relates(&line[i], &line[j])))
            })
            .map(|(g, _)| *g)
            .collect();
        let got = games(&spec.cql3(), Source::Db(t.db.clone()));
        prop_assert_eq!(got, want, "{}", spec.cql3());
    }
}

/// The three canonical examples run and find games over the corpus.
#[test]
fn canonical_relations_find_games() {
    let t = trees();
    for (q, at_least) in [
        (
            "(match (position :relation (:missingpiececount A 1 10)))",
            1,
        ),
        ("(match (position :relation (:changesidetomove)))", 1),
        (
            "(match (position :relation (:ignoresidetomove :originaldifferentcount 0)))",
            10,
        ),
    ] {
        let n = games(q, Source::Db(t.db.clone())).len();
        assert!(n >= at_least, "{q}: {n} games");
    }
}
