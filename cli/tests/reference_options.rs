//! The reference program's command line: each metadata option selects what its filter in the
//! query selects, each transform option what the body written under that transform selects,
//! and the header-like options change the output as the header's parameters do.

use std::path::Path;

mod common;
use common::{cqldb, ok, s};

const CORPUS: &str = "../../shared/conformance/cql/corpus/games.pgn";

fn corpus() -> &'static str {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS);
    Box::leak(p.to_string_lossy().into_owned().into_boxed_str())
}

/// The matching games' numbers, as CSV rows list them.
fn matched(args: &[&str]) -> Vec<u64> {
    let mut all = vec!["cql", "-i", corpus(), "-o", "-", "--format", "csv"];
    all.extend_from_slice(args);
    let out = ok(&all);
    out.lines()
        .skip(1)
        .filter_map(|l| l.split(',').next()?.trim().parse().ok())
        .collect()
}

#[test]
fn metadata_options_select_what_their_filters_select() {
    let cases: [(&[&str], &str); 8] = [
        (&["-player", "Carlsen"], "player \"Carlsen\""),
        (&["-white", "Korchnoi"], "player white \"Korchnoi\""),
        (&["-black", "Nakamura"], "player black \"Nakamura\""),
        (&["-event", "Blitz"], "event \"Blitz\""),
        (&["-site", "Moscow"], "site \"Moscow\""),
        (&["-year", "2010", "2017"], "year >= 2010 year <= 2017"),
        (&["-result", "0-1"], "result 0-1"),
        (
            &[
                "-fen",
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R",
            ],
            "fen \"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R\"",
        ),
    ];
    for (opts, filter) in cases {
        let mut with_option = opts.to_vec();
        with_option.extend(["-cql", "not mate"]);
        let by_option = matched(&with_option);
        let by_filter = matched(&["-cql", &format!("not mate {filter}")]);
        assert_eq!(by_option, by_filter, "{opts:?} against {filter}");
        assert!(
            !by_option.is_empty(),
            "{opts:?} selects nothing: a weak test"
        );
    }
    // A name CQL would read as a pattern after `player` (which it refuses there) is still
    // searched for as text, and finds what `in` finds.
    for (opts, filter) in [
        (
            ["-player", "Tal+"],
            "{\"Tal+\" in player white or \"Tal+\" in player black}",
        ),
        (["-white", "[K]orchnoi"], "\"[K]orchnoi\" in player white"),
    ] {
        let mut with_option = opts.to_vec();
        with_option.extend(["-cql", "not mate"]);
        let by_filter = matched(&["-cql", &format!("not mate {filter}")]);
        assert_eq!(matched(&with_option), by_filter, "{opts:?}");
    }
    // A result the reference does not know is refused, not read as no result.
    let out = cqldb(&["cql", "-i", corpus(), "-result", "1:0", "-cql", "check"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn transform_options_wrap_the_whole_body() {
    for (option, word) in [
        ("-flipcolor", "flipcolor"),
        ("-flip", "flip"),
        ("-fliphorizontal", "fliphorizontal"),
        ("-shifthorizontal", "shifthorizontal"),
        ("-rotate90", "rotate90"),
        ("-reversecolor", "reversecolor"),
    ] {
        // Two filters: the option transforms both together, as one compound.
        let body = "Ra1 ka8";
        let by_option = matched(&[option, "-cql", body]);
        let by_filter = matched(&["-cql", &format!("{word} {{{body}}}")]);
        assert_eq!(by_option, by_filter, "{option}");
    }
    let out = cqldb(&[
        "cql",
        "-i",
        corpus(),
        "-flip",
        "-flipcolor",
        "-cql",
        "check",
    ]);
    assert_eq!(out.status.code(), Some(2), "two transform options");
}

#[test]
fn assign_binds_before_each_game() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.cql");
    // `Seen` counts positions within a game only if it starts again at each game from the
    // value given (bound once, only the first game would match; at each position, none).
    std::fs::write(&q, "cql()\nSeen += 1\nSeen == 4\n").unwrap();
    let from2 = matched(&["-assign", "Seen", "2", s(&q)]);
    let after_one_move = matched(&["-cql", "ply == 1"]);
    assert!(after_one_move.len() > 1);
    assert_eq!(
        from2, after_one_move,
        "3 at the first position, 4 at the second"
    );
    std::fs::write(&q, "cql()\nplayer white == W\n").unwrap();
    assert_eq!(
        matched(&["-assign", "W", "Magnus Carlsen", s(&q)]),
        matched(&["-cql", "player white == \"Magnus Carlsen\""]),
    );
    let out = cqldb(&[
        "cql",
        "-i",
        corpus(),
        "-assign",
        "mate",
        "1",
        "-cql",
        "check",
    ]);
    assert_eq!(out.status.code(), Some(1), "a reserved word is no variable");
}

#[test]
fn header_options_change_the_output() {
    let run = |extra: &[&str]| {
        let mut a = vec!["cql", "-i", corpus(), "-o", "-", "-g", "1", "40"];
        a.extend_from_slice(extra);
        a.extend(["-cql", "check"]);
        ok(&a)
    };
    let plain = run(&[]);
    assert!(plain.contains("{Game number"));
    assert!(!run(&["-noheader"]).contains("{Game number"));
    let quiet = run(&["-quiet"]);
    assert!(plain.contains("{CQL}") && !quiet.contains("{CQL}"));
    assert_eq!(run(&["-s"]), plain, "one thread writes what several do");
    assert_eq!(run(&["-threads", "2"]), plain);
    let listed = ok(&[
        "cql",
        "-i",
        corpus(),
        "-g",
        "1",
        "40",
        "--count",
        "-showmatches",
        "-cql",
        "check",
    ]);
    let mut lines = listed.lines();
    let count: usize = lines.next().unwrap().parse().unwrap();
    assert_eq!(lines.count(), count);
    assert!(ok(&["cql", "-version"]).contains("CQL 6.2"));
}
