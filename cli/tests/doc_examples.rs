//! The examples of the CQL documentation (the CQL 6.2 and CQLi pages, the project's
//! reference notes) run: each documented query parses and runs to the end on real games, and
//! each form the documentation (or the reference program) rejects is an error with exit 1,
//! never an answer.

mod common;
use common::cqldb;

fn corpus(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/conformance/cql/corpus")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Documented queries (each the body of a `cql()` query).
const RUN: &[&str] = &[
    "colortype e1 == 6",
    "colortype e8 == -6",
    "colortype K == 6",
    "x=colortype a1 y=colortype h1 x==y",
    "x=type a1 y=type h1 x==y",
    "currentmove ――=♖♗♘",
    "x = pieceid Qd1",
    "ascii 65 + \"C\" == \"AC\"",
    "indexof (\"e\" \"hello\") == 1",
    "\"pinmate\" ~~ \"mate\"",
    "notransform a4",
    "notransform player white \"Kasparov\"",
    "notransform flipcolor { P & ~down horizontal 0 1 p }",
    "rotate90 passedpawns",
    "flipcolor notransform ke1",
    "flipcolor count notransform Ke1",
    "originalcomment \"kenin\"",
    "originalcomment \"$6\"",
    "originalcomment \"?!\"",
    "\"kening\" in originalcomment",
    "originalcomment ~~ \"Eval: (\\d+)\"",
    "hascomment \"s\"",
    "message quiet (\"Fen: \" fen)",
    "atomic Count=0",
    "if isunbound Depth Depth = 3",
    "persistent quiet Mates += 1",
    "find 8 10 check",
    "Run = path (-- check --){3,}  Run >= 10",
    "path P--=Q check? [x]Qa-h8",
    "(path lastposition (-- check --){4,}) : (Q==0 and q==0)",
    "line --> (check --> not check){5,}",
    "line <-- (check <-- not check){6,}",
    "line singlecolor nestban --> check +",
    "find <-- mainline",
    "ka-h1-3 Q>=1 find mate btm",
    "sort \"N\" find all check >= 40",
    "sort \"Material\" power A  sort \"Material\" power a  mate",
    "if initial then Checks = 0",
    "countmoves legal N-- >= 15",
    "find 1 4 {currentmove p--=A}",
    "Pinned = pin through a",
    "piece X = Qd1",
    "movenumber == 10 wtm piece Wq in Qd1 find quiet Wq & a-h8",
    "(child:e4) & P",
    "flip {Ka1 kh8}",
    "shift {Ka1 ka8}",
    "flip northeast 1 up 1 Q",
    "fliphorizontal {Ka-h8 ka-h8}",
    "reversecolor 2==A attacks k",
    "reversecolor {player white \"Kasparov\" result 1-0}",
    "reversecolor power A >= power a + 10",
    "flipcolor {Pe4 up 1 Pe4 & _}",
    "flipcolor {P--=N(check)}",
    "flipvertical { path B[x]h7 check k[x]h7 N--g5 check }",
    "shift count {Q == 1}",
    "rotate45 ray up (R k)",
    "rotate45 { up 1 k & Q }",
    "#(flipcolor K) == 2",
    "4 == flip count [Rr]a1",
    "(flipcolor count { pin through a }) == 2",
    "(shift count { Pd4 Pd5 }) >= 2",
    "flipcolor 2 == A attacks k",
    "flipcolor Q == 1",
    "flipcolor Ka1 or check",
    "(flip northeast 1 up 1 Q) & (flip northeast 1 up 1 K)",
    "x = flipcolor K",
    "sqrt 4 + 8 < 9 + 5",
    "⊢◎♙ ―― ―― ///\"fianchetto\"",
    "X=a1 flipvertical {X==h1}",
    "y = find check",
    "z = . attackedby k",
    "X = Qa1  comment(\"x=\" X)",
    "piece Pinner in R  xray (Pinner a k)",
    "y=k piece x=y",
    "piece y=q piece y=q",
    "dictionary v unbind v",
    "dictionary v[\"key\"]=\"value\" unbind v[\"key\"]",
    "(N -> k) & (N -> q) != ~.",
    "Q -> p -> k",
    "k <- p <- Q",
    "v=k or q",
    "initial NumberPositions = 0 loop { position NumberPositions  NumberPositions += 1 } comment (\"Number of positions is: \" NumberPositions)",
    "S=N find {N != S}",
    "echo (s t) { s & t == . }",
    "consecutivemoves (position 0 currentposition) >= 0",
    "sort min \"Date\" tag \"Date\"",
    "player \"Carlsen\" sort \"Length\" ply",
    "X = 0 assert X==0",
    "⬓{ btm purestalemate ♖♘♗♕ in purestalemate }",
    "modelstalemate",
];

/// Forms the documentation or the reference program rejects.
const REJECTED: &[&str] = &[
    "sort min ply",
    "path (N[x]f7 | B[x]f7) k[x]f7",
    "unbind NeverAssigned",
    "local Counter = 1",
    "move from P count == 8",
    "dictionary Tally Tally[\"x\"] = 1 Tally[\"x\"] += 1",
    "y=k piece y=q",
    "piece y=q y=k",
    "X =? 3",
    "v=(k or q)",
    "Q -> p <- k",
    "persistent x",
];

#[test]
fn documented_queries_run() {
    for (body, file) in RUN
        .iter()
        .flat_map(|b| [(b, "games.pgn"), (b, "studies.pgn")])
    {
        let out = cqldb(&[
            "cql",
            "-cql",
            body,
            "-i",
            &corpus(file),
            "-g",
            "1",
            "60",
            "--count",
            "-variations",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{body} on {file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_failed_assert_stops_the_run_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("out.pgn");
    let out = cqldb(&[
        "cql",
        "-cql",
        "assert ply < 30",
        "-i",
        &corpus("games.pgn"),
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("assertion"));
    assert!(
        !out_file.exists(),
        "no output from a run an assertion stopped"
    );
}

#[test]
fn documented_errors_are_errors() {
    for body in REJECTED {
        let out = cqldb(&["cql", "-cql", body, "-i", &corpus("games.pgn"), "--count"]);
        assert_eq!(out.status.code(), Some(1), "{body} must be refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("panicked") && err.contains("here"),
            "{body}: {err}"
        );
    }
}

/// `readfile` and `writefile` use only the directory named with `--files`.
#[test]
fn files_only_inside_the_named_directory() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let f = files.to_str().unwrap();
    let games = corpus("games.pgn");
    let run = |body: &str, with_dir: bool| {
        let mut args = vec!["cql", "-cql", body, "-i", games.as_str(), "--count"];
        if with_dir {
            args.extend(["--files", f]);
        }
        cqldb(&args)
    };
    let out = run("mate writefile (\"mates.cqo\" fen + \"\\n\")", true);
    assert_eq!(out.status.code(), Some(0));
    let mates: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let written = std::fs::read_to_string(files.join("mates.cqo")).unwrap();
    assert!(mates > 0 && written.lines().count() >= mates);
    std::fs::write(files.join("x.cqo"), "hello").unwrap();
    let out = run("initial X = readfile \"x.cqo\" X == \"hello\"", true);
    assert_eq!(out.status.code(), Some(0));
    for (body, with_dir) in [
        ("initial X = readfile \"x.cqo\"", false),
        ("initial X = readfile \"../x.cqo\"", true),
        ("initial writefile (\"x.pgn\" \"a\")", true),
    ] {
        let out = run(body, with_dir);
        assert_eq!(out.status.code(), Some(1), "{body}");
    }
}

/// A filter that looks at every other position (`find`, `echo`) at every position of a game
/// of many thousand plies would take hours: the run stops, said, in seconds.
#[test]
fn quadratic_filters_on_a_very_long_game_stop() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("long.pgn");
    let mut text = String::from("[Event \"long\"]\n[Result \"*\"]\n\n");
    for i in 0..12_500 {
        text.push_str(&format!("{}. Nf3 Nf6 {}. Ng1 Ng8 ", 2 * i + 1, 2 * i + 2));
    }
    text.push_str("*\n");
    std::fs::write(&pgn, text).unwrap();
    for body in ["find check", "find all check > 3", "echo (s t) { t:check }"] {
        let start = std::time::Instant::now();
        let out = cqldb(&["cql", "-cql", body, "-i", pgn.to_str().unwrap(), "--count"]);
        assert_eq!(out.status.code(), Some(1), "{body}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("stopped"),
            "{body}"
        );
        assert!(
            start.elapsed().as_secs() < 60,
            "{body}: {:?}",
            start.elapsed()
        );
    }
    // Along one line no run of common moves can start (one position is the other's
    // ancestor): answered at once for every position, not stopped.
    let start = std::time::Instant::now();
    let out = cqldb(&[
        "cql",
        "-cql",
        "consecutivemoves (position 0 currentposition) > 5",
        "-i",
        pgn.to_str().unwrap(),
        "--count",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
}
