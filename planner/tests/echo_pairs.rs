//! Compiled `echo` bodies against the interpreter: random bodies built from what the compiler
//! accepts (square sets of either position, `s & t`, `~ & |`, counts, `+ -`, comparisons and
//! chains, side to move, `ancestor`, `descendant`, `mainline`, `variation`, `not and or`,
//! nested `{}`), with a few it must refuse, give the same matched positions and notes on real
//! games, main lines and variations.

use cqldb_indexer::flatten::index_game;
use cqldb_indexer::split::Splitter;
use cqldb_planner::eval::{Engine, Game};
use proptest::prelude::*;

/// Games of the conformance corpus and the studies with variations, at most `max` positions
/// each (the interpreter visits every pair).
fn games(max: usize) -> Vec<Game> {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    let files = [
        "conformance/cql/corpus/games.pgn",
        "conformance/cql/corpus/studies.pgn",
        "data/variations/pgn4people-poc_demo_pgn_1.pgn",
    ];
    let mut out = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(shared.join(f)) else {
            continue;
        };
        let mut split = Splitter::new(std::io::Cursor::new(bytes));
        let mut taken = 0;
        while let Ok(Some(raw)) = split.next_game() {
            let g = index_game(raw, 0);
            if g.positions.len() > max || g.positions.len() < 4 {
                continue;
            }
            out.push(Game::new(out.len() as u64 + 1, g.positions, g.tags, true));
            taken += 1;
            if taken == 40 {
                break;
            }
        }
    }
    out
}

fn leaf_set() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "[Aa]", "A", "a", "_", "P", "p", "k", "K", "[QR]", "[Aa_]", "[Nn_]",
    ]);
    let squares = prop::sample::select(vec!["", "a-d1-8", "e4", "[a1,h8,e1-8]", "c-f3-6"]);
    (pieces, squares).prop_map(|(p, s)| format!("{p}{s}"))
}

fn set() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => leaf_set(),
        1 => Just("(s & t)".to_owned()),
        1 => Just("(t & s)".to_owned()),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| format!("s:({x})")),
            inner.clone().prop_map(|x| format!("t:({x})")),
            inner.clone().prop_map(|x| format!("~({x})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} & {y})")),
            (inner.clone(), inner).prop_map(|(x, y)| format!("({x} | {y})")),
        ]
    })
}

fn num() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        3 => set().prop_map(|x| format!("#({x})")),
        1 => (0i64..4).prop_map(|k| k.to_string()),
        1 => Just("sidetomove".to_owned()),
        1 => Just("s:sidetomove".to_owned()),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} - {y})")),
            (inner.clone(), inner).prop_map(|(x, y)| format!("({x} + {y})")),
        ]
    })
}

/// The forms the plan reads through columns: one side of the source, one of the target.
fn split_test() -> impl Strategy<Value = String> {
    prop_oneof![
        (split_num(true), cmp(), split_num(false), any::<bool>()).prop_map(|(a, op, b, swap)| {
            if swap {
                format!("{b} {op} {a}")
            } else {
                format!("{a} {op} {b}")
            }
        }),
        (leaf_set(), leaf_set(), cmp(), 0i64..3, any::<bool>()).prop_map(|(a, b, op, k, swap)| {
            if swap {
                format!("#({b} & s:{a}) {op} {k}")
            } else {
                format!("#(s:{a} & {b}) {op} {k}")
            }
        }),
    ]
}

/// A number of the source alone (`source`) or of the target alone.
fn split_num(source: bool) -> impl Strategy<Value = String> {
    let at = if source { "s:" } else { "" };
    prop_oneof![
        leaf_set().prop_map(move |x| format!("#({at}{x})")),
        Just(format!("{at}sidetomove")),
    ]
}

fn cmp() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="])
}

fn test() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => (num(), cmp(), num()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        1 => (num(), cmp(), num(), cmp(), num())
            .prop_map(|(a, o, b, p, c)| format!("{a} {o} {b} {p} {c}")),
        1 => (set(), prop::sample::select(vec!["==", "!="]), set())
            .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        1 => set(),
        1 => split_test(),
        1 => prop::sample::select(vec![
            "mainline", "variation", "wtm", "btm", "ancestor(s t)", "ancestor(t s)",
            "descendant(s t)", "s:mainline", "s:btm", "true",
            // Refused by the compiler: interpreted either way.
            "check", "s:check",
        ])
        .prop_map(str::to_owned),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| format!("not {x}")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} and {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} or {y})")),
            (inner.clone(), inner).prop_map(|(x, y)| format!("{{{x} {y}}}")),
        ]
    })
}

fn body() -> impl Strategy<Value = String> {
    (
        prop::option::of(Just("ancestor(s t)")),
        prop::collection::vec(prop_oneof![2 => split_test(), 3 => test()], 1..4),
    )
        .prop_map(|(anc, tests)| {
            let mut parts: Vec<String> = anc.into_iter().map(str::to_owned).collect();
            parts.extend(tests);
            format!("{{{}}}", parts.join(" "))
        })
}

/// Per game: the matched positions and the notes made.
type Answers = Vec<(Vec<u32>, Vec<(u32, String)>)>;

fn run(query: &str, games: &[Game], compiled: bool) -> Answers {
    let q = cqldb_planner::parse(query).expect("generated query parses");
    let mut e = Engine::new(q, true);
    e.compiled_echo = compiled;
    games
        .iter()
        .map(|g| {
            let m = e.run_game(g);
            (m.matched, m.comments)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn compiled_bodies_match_the_interpreter(
        body in body(),
        quiet in any::<bool>(),
        start in 0usize..80,
    ) {
        let all = games(90);
        prop_assume!(!all.is_empty());
        let pick: Vec<Game> = all.into_iter().skip(start).take(10).collect();
        let quiet = if quiet { "quiet " } else { "" };
        let query = format!("cql(variations) echo {quiet}(s t) {body}");
        let fast = run(&query, &pick, true);
        let slow = run(&query, &pick, false);
        prop_assert_eq!(fast, slow, "{}", query);
    }
}

/// The relation shapes the CQL 3 front end writes, on every kept game.
#[test]
fn relation_bodies_match_the_interpreter() {
    let all = games(160);
    assert!(all.len() > 40, "the shared corpus is readable");
    for body in [
        "{ancestor(s t) mainline sidetomove == s:sidetomove #(s:_ & [Aa]) == 0 \
          #(s:[Aa] & _) == (#(s:(A | _) & _) - #(s:_ & _)) \
          (#(s:(A | _) & _) - #(s:_ & _)) >= 1 #(~(s & t) & s:[Aa] & [Aa]) == 0}",
        "{ancestor(s t) sidetomove != s:sidetomove #(~(s & t)) == 0}",
        "{ancestor(s t) variation #(s:_ & [Aa]) == 0 #((s & t) & [Aa]) <= 20}",
    ] {
        let query = format!("cql(variations) echo (s t) {body}");
        assert_eq!(run(&query, &all, true), run(&query, &all, false), "{query}");
    }
}
