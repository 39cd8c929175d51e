//! End-to-end tests of the `cqldb` binary: the README commands, exact `show`, error reporting,
//! corruption detection and crash safety (SIGKILL part-way through a build).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cqldb_bench_data::synth::{Generator, SynthOptions};
use cqldb_storage::Database;

mod common;
use common::{cqldb, ok, s};

#[test]
fn demo_builds_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo");
    let out = ok(&["demo", "--db", s(&db)]);
    assert!(out.contains("games              448"), "{out}");
    assert!(out.contains("bytes/position"));
    // Running it again rebuilds rather than appends.
    let again = ok(&["demo", "--db", s(&db)]);
    assert!(again.contains("games              448"));
    let errors = ok(&["errors", "--db", s(&db)]);
    assert!(
        errors.contains("sample/immortal-games.pgn:17:8: game 1: ambiguous-move"),
        "{errors}"
    );
}

#[test]
fn index_append_show_positions_tags() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.pgn");
    let b = dir.path().join("b.pgn");
    let game1 = "[Event \"One\"]\r\n[White \"Kasparov, Garry\"]\r\n\r\n1. e4 (1. d4 Nf6 (1...d5 2. c4)) (1. Nf3 d5) 1...e5 2. d4 {a comment} $1 *\r\n\r\n";
    let game2 =
        "[Event \"Two\"]\n[White \"Deep Blue\"]\n[Result \"1-0\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n";
    std::fs::write(&a, format!("{game1}{game2}")).unwrap();
    std::fs::write(
        &b,
        "[Event \"Three\"]\n\n1. e4 e5 2. Nf3 Ke7 3. Bb5 Qe8 4. Nc3 Kd8 5. d4 Nf3 *\n",
    )
    .unwrap();
    let db = dir.path().join("db");
    ok(&["index", s(&a), "--db", s(&db), "-q"]);
    ok(&["index", s(&b), "--db", s(&db), "-q"]);
    let info = ok(&["info", "--db", s(&db)]);
    assert!(info.contains("games              3"), "{info}");
    assert!(info.contains("segments           2"), "{info}");
    // show is byte-exact.
    let shown = cqldb(&["show", "--db", s(&db), "1"]).stdout;
    assert_eq!(shown, game1.as_bytes());
    let shown = cqldb(&["show", "--db", s(&db), "2"]).stdout;
    assert_eq!(shown, game2.as_bytes());
    // The position table of the rules-page example.
    let table = ok(&["positions", "--db", s(&db), "1"]);
    let rows: Vec<&str> = table.lines().filter(|l| !l.starts_with("      ")).collect();
    assert!(
        rows[2].contains("wtm,initial,mainline,virtualmainline"),
        "{table}"
    );
    assert!(table.contains("Pd2-d4"));
    assert!(table.contains("{a comment}") && table.contains("$1"));
    let mate = ok(&["positions", "--db", s(&db), "2"]);
    assert!(mate.contains("check,mate"), "{mate}");
    // Errors carry file:line:col.
    let errors = ok(&["errors", "--db", s(&db)]);
    assert!(
        errors.contains(&format!("{}:3:49: game 3: illegal-move", b.display())),
        "{errors}"
    );
    // Tag search.
    let out = cqldb(&["tags", "--db", s(&db), "white:kasparov"]);
    // A header line, then the game.
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    // Unknown game: a clear error, not a panic.
    let out = cqldb(&["show", "--db", s(&db), "99"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("game 99 does not exist"));
}

#[test]
fn compressed_and_stdin_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = "[Event \"x\"]\n\n1. e4 e5 *\n\n[Event \"y\"]\n\n1. d4 d5 *\n";
    let zst = dir.path().join("g.pgn.zst");
    std::fs::write(&zst, zstd::encode_all(pgn.as_bytes(), 19).unwrap()).unwrap();
    let gz = dir.path().join("g.pgn.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, pgn.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let bz = dir.path().join("g.pgn.bz2");
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    std::io::Write::write_all(&mut enc, pgn.as_bytes()).unwrap();
    std::fs::write(&bz, enc.finish().unwrap()).unwrap();
    let db = dir.path().join("db");
    ok(&["index", s(&zst), s(&gz), s(&bz), "--db", s(&db), "-q"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(["index", "-", "--db", s(&db), "-q"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(pgn.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let db = Database::open(&db).unwrap();
    assert_eq!(db.game_count(), 8);
    assert_eq!(db.game_text(3).unwrap(), b"[Event \"x\"]\n\n1. e4 e5 *\n\n");
    assert_eq!(db.game_info(7).unwrap().file, "<stdin>");
}

#[test]
fn a_corrupt_segment_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.pgn");
    std::fs::write(&a, "1. e4 e5 2. Nf3 Nc6 *\n").unwrap();
    let db = dir.path().join("db");
    ok(&["index", s(&a), "--db", s(&db), "-q"]);
    let seg = db.join("seg-000001.cqs");
    let mut bytes = std::fs::read(&seg).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0x55;
    std::fs::write(&seg, &bytes).unwrap();
    let out = cqldb(&["info", "--db", s(&db)]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("corrupt file: checksum mismatch"), "{err}");
    // Truncation too.
    std::fs::write(&seg, &bytes[..n / 2]).unwrap();
    let err = String::from_utf8_lossy(&cqldb(&["info", "--db", s(&db)]).stderr).into_owned();
    assert!(err.contains("truncated"), "{err}");
    // Not a database at all.
    let err = String::from_utf8_lossy(&cqldb(&["info", "--db", s(dir.path())]).stderr).into_owned();
    assert!(err.contains("not a cqldb database"), "{err}");
}

#[test]
fn sigkill_during_a_build_leaves_the_previous_state() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.pgn");
    let big = dir.path().join("big.pgn");
    let mut generator = Generator::new(42, SynthOptions::default());
    let small_text: String = (0..50).map(|_| generator.game().pgn).collect();
    std::fs::write(&small, &small_text).unwrap();
    let big_text: String = (0..20_000).map(|_| generator.game().pgn).collect();
    std::fs::write(&big, &big_text).unwrap();
    let db = dir.path().join("db");
    ok(&["index", s(&small), "--db", s(&db), "-q"]);
    let before = Database::open(&db).unwrap();
    let (games, positions) = (before.game_count(), before.stats().unwrap().positions);
    let text_1 = before.game_text(1).unwrap();
    drop(before);
    assert_eq!(games, 50);

    // Small segments, so several segment files exist before the kill.
    let mut child = Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args([
            "index",
            s(&big),
            "--db",
            s(&db),
            "-q",
            "--segment-positions",
            "20000",
        ])
        .spawn()
        .unwrap();
    let start = Instant::now();
    let seg3 = db.join("seg-000003.cqs");
    while !seg3.exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    assert!(
        seg3.exists(),
        "the build was killed after writing new segments"
    );

    let after = Database::open(&db).unwrap();
    assert_eq!(
        after.game_count(),
        games,
        "uncommitted segments are invisible"
    );
    assert_eq!(after.stats().unwrap().positions, positions);
    assert_eq!(after.game_text(1).unwrap(), text_1);
    drop(after);

    // The next build cleans up the leftovers and completes.
    ok(&[
        "index",
        s(&big),
        "--db",
        s(&db),
        "-q",
        "--segment-positions",
        "200000",
    ]);
    let done = Database::open(&db).unwrap();
    assert_eq!(done.game_count(), games + 20_000);
    let leftovers: Vec<_> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("seg-") && n.ends_with(".cqs"))
        .collect();
    let expected_segments = done.stats().unwrap().segments as usize;
    assert_eq!(leftovers.len(), expected_segments, "{leftovers:?}");
}

#[test]
fn cql_over_pgn_and_index_with_reference_options() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("g.pgn");
    std::fs::write(
        &pgn,
        "[Event \"a\"]\n[White \"X\"]\n[Black \"Y\"]\n[Result \"1-0\"]\n\n\
         1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n\
         [Event \"b\"]\n[Result \"*\"]\n\n1. d4 (1. e4 e5 2. Qh5 Ke7 3. Qxe5#) d5 *\n",
    )
    .unwrap();
    // Reference-style options; the matching game is written with its marks.
    let out = ok(&["cql", "-cql", "mate", "-i", s(&pgn), "-o", "-"]);
    assert!(out.contains("{Game number 1}"), "{out}");
    assert!(out.contains("4.Qxf7# {CQL} 1-0"), "{out}");
    assert!(!out.contains("Game number 2"), "{out}");
    // -variations reaches the mate inside the variation of game 2.
    let out = ok(&[
        "cql",
        "-cql",
        "mate",
        "-i",
        s(&pgn),
        "-variations",
        "-o",
        "-",
    ]);
    assert!(out.contains("Game number 2"), "{out}");
    assert!(out.contains("3.Qxe5# {CQL} )"), "{out}");
    // The same over an index.
    let db = dir.path().join("db");
    ok(&["index", "--quiet", "--db", s(&db), s(&pgn)]);
    let from_db = ok(&[
        "cql",
        "--cql",
        "mate",
        "--db",
        s(&db),
        "--variations",
        "-o",
        "-",
    ]);
    assert_eq!(from_db, out);
    // -gamenumber, -matchstring, -silent.
    let out = ok(&[
        "cql",
        "-cql",
        "mate",
        "-i",
        s(&pgn),
        "-variations",
        "-gamenumber",
        "2",
        "2",
        "-matchstring",
        "HIT",
        "-o",
        "-",
    ]);
    assert!(
        out.contains("{HIT}") && !out.contains("Game number 1}"),
        "{out}"
    );
    let out = ok(&["cql", "-cql", "mate", "-i", s(&pgn), "-silent", "-o", "-"]);
    assert!(
        !out.contains("Game number") && !out.contains("CQL"),
        "{out}"
    );
}

/// What a new user of the reference program expects: `cql(input x.pgn output y.pgn)` headers
/// with unquoted names, `NAME-out.pgn` when no output is named, `--count`, rows as json or
/// csv, compressed output.
#[test]
fn cql_output_files_counts_and_formats() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_cqldb"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    std::fs::write(
        dir.path().join("games.pgn"),
        "[Event \"a\"]\n[White \"X, Y\"]\n[Black \"Z\"]\n[Date \"2020.01.02\"]\n[Result \"1-0\"]\n[ECO \"C20\"]\n\n\
         1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n[Event \"b\"]\n[Result \"*\"]\n\n1. d4 d5 *\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let abs = dir.path().join("sub/abs.pgn");
    std::fs::write(
        dir.path().join("mates.cql"),
        format!("cql(input games.pgn output {})\nmate\n", abs.display()),
    )
    .unwrap();
    run(&["cql", "mates.cql"]);
    let written = std::fs::read_to_string(&abs).unwrap();
    assert!(written.contains("4.Qxf7# {CQL} 1-0"), "{written}");
    // No output named anywhere: NAME-out.pgn, as the reference program writes.
    std::fs::write(
        dir.path().join("checks.cql"),
        "cql(input games.pgn)\ncheck\n",
    )
    .unwrap();
    run(&["cql", "checks.cql"]);
    assert!(
        std::fs::read_to_string(dir.path().join("checks-out.pgn"))
            .unwrap()
            .contains("Game number 1")
    );
    // --count writes nothing and prints the number.
    std::fs::remove_file(dir.path().join("checks-out.pgn")).unwrap();
    assert_eq!(run(&["cql", "checks.cql", "--count"]).trim(), "1");
    assert!(!dir.path().join("checks-out.pgn").exists());
    // One row per matching game.
    let json = run(&[
        "cql",
        "-cql",
        "mate",
        "-i",
        "games.pgn",
        "--format",
        "json",
        "-o",
        "-",
    ]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["game"], 1);
    assert_eq!(
        (v["white"].as_str(), v["eco"].as_str(), v["result"].as_str()),
        (Some("X, Y"), Some("C20"), Some("1-0"))
    );
    assert_eq!(v["matches"][0]["san"], "Qxf7#");
    assert_eq!(v["matches"][0]["ply"], 7);
    assert_eq!(v["matches"][0]["position"], 7);
    assert!(
        v["matches"][0]["fen"]
            .as_str()
            .unwrap()
            .starts_with("r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq")
    );
    let csv = run(&[
        "cql",
        "-cql",
        "check",
        "-i",
        "games.pgn",
        "--format",
        "csv",
        "-o",
        "-",
    ]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "game,white,black,date,result,eco,matches,positions,plies,fens,sans"
    );
    assert!(
        lines[1].starts_with("1,\"X, Y\",Z,2020.01.02,1-0,C20,1,7,7,"),
        "{csv}"
    );
    assert!(lines[1].ends_with(",Qxf7#"), "{csv}");
    // Compressed output.
    run(&["cql", "-cql", "mate", "-i", "games.pgn", "-o", "m.pgn.zst"]);
    let z = zstd::decode_all(std::fs::File::open(dir.path().join("m.pgn.zst")).unwrap()).unwrap();
    assert!(String::from_utf8(z).unwrap().contains("Qxf7#"));
    run(&["cql", "-cql", "mate", "-i", "games.pgn", "-o", "m.pgn.gz"]);
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(
            std::fs::File::open(dir.path().join("m.pgn.gz")).unwrap(),
        ),
        &mut text,
    )
    .unwrap();
    assert!(text.contains("Qxf7#"));
}

/// Tag searches as a user types them: any case of a field, `tags.White` like `white`, accents
/// folded, prefixes, results and Elo / year / ECO ranges, clear errors, a game list.
#[test]
fn tag_searches_a_user_would_type() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("t.pgn");
    std::fs::write(
        &pgn,
        "[Event \"Linares\"]\n[Date \"1985.03.01\"]\n[White \"Ljubojević, Ljubomir\"]\n[Black \"Kasparov, Garry\"]\n\
         [Result \"1-0\"]\n[WhiteElo \"2600\"]\n[BlackElo \"2750\"]\n[ECO \"B90\"]\n[Opening \"Sicilian\"]\n\n1. e4 c5 1-0\n\n\
         [Event \"Tilburg\"]\n[Date \"1993.10.01\"]\n[White \"Kasparov, Garry\"]\n[Black \"Karpov, Anatoly\"]\n\
         [Result \"1/2-1/2\"]\n[WhiteElo \"2805\"]\n[BlackElo \"2725\"]\n[ECO \"E15\"]\n\n1. d4 Nf6 1/2-1/2\n",
    )
    .unwrap();
    let db = dir.path().join("db");
    ok(&["index", "--quiet", "--db", s(&db), s(&pgn)]);
    let count = |q: &str| -> usize {
        ok(&["tags", "--db", s(&db), q, "--count"])
            .trim()
            .parse()
            .unwrap()
    };
    for (q, n) in [
        ("tags.White:Kasparov", 1),
        ("White:kasparov", 1),
        ("white:Ljubojevic", 1),
        ("Ljubojević", 1),
        ("white:ljubo*", 1),
        ("kasparov", 2),
        ("result:1-0", 1),
        ("result:\"1/2-1/2\"", 1),
        ("tags.Result:\"1-0\"", 1),
        ("elo:[2740 TO *]", 2),
        ("whiteelo:[2500 TO 2700]", 1),
        ("blackelo:{2725 TO 2800]", 1),
        ("year:[1990 TO 1999]", 1),
        ("eco:[B20 TO B99]", 1),
        ("opening:sicilian", 1),
        ("event:lin*", 1),
        ("kasparov -result:1-0", 1),
        ("player:kasparov", 2),
        ("player:karpov", 1),
        ("player:ljubo*", 1),
        ("eco:B9*", 1),
        ("eco:b90", 1),
        ("eco:E*", 1),
        ("result:*", 0),
        ("date:[1985 TO 1985]", 1),
        ("date:[1985.03.01 TO 1993.10.01]", 2),
        ("date:{1985.03.01 TO *]", 1),
        ("date:[1993.10 TO 1993.10]", 1),
    ] {
        assert_eq!(count(q), n, "{q}");
    }
    let list = ok(&["tags", "--db", s(&db), "kasparov"]);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines[0], "game\tWhite\tBlack\tDate\tResult\tECO");
    assert_eq!(
        lines[1],
        "1\tLjubojević, Ljubomir\tKasparov, Garry\t1985.03.01\t1-0\tB90"
    );
    for (q, want) in [
        ("elo:[abc TO 3000]", "not a value"),
        ("result:2-0", "not a result"),
        ("white:(", "cannot parse"),
        ("foo:bar", "no game has a field or tag 'foo'"),
        ("plyer:carlsen", "did you mean 'player'"),
        ("date:[1985.13 TO *]", "not a date"),
        ("eco:F*", "not an ECO prefix"),
    ] {
        let out = cqldb(&["tags", "--db", s(&db), q]);
        assert_eq!(out.status.code(), Some(1), "{q}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(want) && !err.contains("panicked"),
            "{q}: {err}"
        );
    }
}

/// A reader that closes the pipe early (`| head`) ends the program quietly, never a panic.
#[test]
fn closed_pipes_are_not_panics() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    ok(&["demo", "--db", s(&db)]);
    for args in [
        vec!["tags", "--db", s(&db), "white:a*"],
        vec!["errors", "--db", s(&db)],
        vec!["positions", "--db", s(&db), "1"],
        vec!["cql", "-cql", "check", "--db", s(&db), "-o", "-"],
        vec!["gtql", "node: ply >= 0", "--db", s(&db), "--format", "csv"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cqldb"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 1];
        let _ = child.stdout.take().unwrap().read(&mut first);
        // The pipe is closed here, while the command is still writing.
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}");
    }
}

#[test]
fn cql_errors_point_at_the_span() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.cql");
    std::fs::write(&q, "cql()\nmate\nr > R\n").unwrap();
    let out = cqldb(&["cql", s(&q), "-i", "nothing.pgn"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("q.cql:3:3"), "{err}");
    assert!(err.contains("r > R"), "{err}");
    assert!(
        err.contains('┬') || err.contains('^'),
        "caret under the span: {err}"
    );
    // A file naming its input in the header, as classic query files do: the query's own error
    // comes first, not "no input" (the header cannot be read from a query that does not parse),
    // and no output file is made.
    std::fs::write(
        &q,
        "cql(input games.pgn output out.pgn)\nmate ; old comment\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(["cql", "q.cql"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("q.cql:2:6"), "{err}");
    assert!(!err.contains("no input"), "{err}");
    assert!(!dir.path().join("out.pgn").exists());
}

#[test]
fn gtql_import_query_stats_and_db() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("t.log");
    std::fs::write(
        &log,
        "gtql-log 1\nattr type enum PVNode=0 CUTNode=1 ALLNode=2\nattr value int\nnodes\n\
         0 - PVNode 0\n1 a PVNode 3\n2 b CUTNode 1\n1 c CUTNode -2\n2 d ALLNode 5\n2 e ALLNode 6\n",
    )
    .unwrap();
    let gtl = dir.path().join("t.gtl");
    cqldb(&["gtql", "import", s(&log), "--out", s(&gtl)]);
    let out = ok(&["gtql", "subtree: count(*) >= 2", s(&gtl)]);
    assert!(out.contains("# 2 nodes"), "{out}");
    assert!(out.contains("c "), "path of node 3: {out}");
    let out = ok(&["gtql", "node: count(type = PVNode)", s(&gtl)]);
    assert!(out.contains("# 2 nodes"), "{out}");
    let out = ok(&[
        "gtql",
        "child: count([]value > [<]value) >= 1",
        s(&gtl),
        "--format",
        "json",
    ]);
    assert!(
        out.contains("\"count\":1") && out.contains("\"node_id\":3,\"path\":[\"c\"],\"type\":1"),
        "{out}"
    );
    let qf = dir.path().join("q.gtql");
    std::fs::write(
        &qf,
        "node: type = CUTNode\n# comment\nsubtree: count(*) = 0\n",
    )
    .unwrap();
    let out = ok(&["gtql", "-f", s(&qf), s(&gtl)]);
    assert!(
        out.contains("# 2 nodes") && out.contains("# 3 nodes"),
        "{out}"
    );
    let out = ok(&["gtql", "stats", s(&gtl)]);
    assert!(out.contains("nodes: 6") && out.contains("PVNode"), "{out}");
    let bad = cqldb(&["gtql", "node: []type = 1", s(&gtl)]);
    assert!(!bad.status.success());
    // Over indexed PGN game trees.
    let pgn = dir.path().join("g.pgn");
    std::fs::write(&pgn, "[Event \"a\"]\n\n1. e4 (1. d4 d5) e5 2. Nf3 *\n").unwrap();
    let db = dir.path().join("db");
    ok(&["index", "--quiet", "--db", s(&db), s(&pgn)]);
    let out = ok(&[
        "gtql",
        "node: mainline; child: count(*) >= 2",
        "--db",
        s(&db),
    ]);
    assert!(out.contains("# 1 nodes"), "{out}");
    // `last_move` compares with quoted moves, long algebraic or SAN; the root has none (0).
    let pgn2 = dir.path().join("h.pgn");
    std::fs::write(
        &pgn2,
        "[Event \"b\"]\n\n1. f3 e5 2. g4 (2. e4 Nf6) Qh4# 0-1\n",
    )
    .unwrap();
    let db2 = dir.path().join("db2");
    ok(&["index", "--quiet", "--db", s(&db2), s(&pgn2)]);
    for (q, n) in [
        ("node: last_move = \"Qh4\"", 1),
        ("node: last_move = \"Qh4#\"", 1),
        ("node: last_move = \"Qd8-h4\"", 1),
        ("node: last_move = 'd8h4'", 1),
        ("node: last_move = \"Qh5\"", 0),
        ("node: last_move = \"e4\"", 1),
        ("node: last_move = \"e2-e4\" or last_move = \"g2g4\"", 2),
        ("node: last_move != \"e5\" and ply > 0", 5),
        ("node: last_move = 0", 1),
        ("child: count([]last_move = \"e4\") = 1", 1),
    ] {
        let out = ok(&["gtql", q, "--db", s(&db2)]);
        assert!(out.contains(&format!("# {n} nodes")), "{q}: {out}");
    }
    let bad = cqldb(&["gtql", "node: last_move = \"Xz9\"", "--db", s(&db2)]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a move"));
}

/// GTQL over indexed games sees the trees the position table stores: the tree GTQL builds
/// from the plies agrees with each row's parent, children and child index, and counts agree
/// with the rows' flags, on real games with deep variations.
#[test]
fn gtql_over_games_agrees_with_the_position_table() {
    use cqldb_storage::{Database, PositionFlags};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let pgn = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../shared/data/variations/pychess_world_matches.pgn");
    ok(&["index", "--quiet", "--db", s(&db), s(&pgn)]);
    let gtql = |q: &str| ok(&["gtql", q, "--db", s(&db), "--limit", "0"]);
    for q in [
        // Parents: GTQL's (from the plies) is the row's.
        "node: ply > 0 and not [^]positionid = parent",
        "node: ply = 0 and not parent = -1",
        "node: ply > 1 and not [^2]ply < [^]ply",
        // Children and siblings: counted from the tree, stored in the rows.
        "child: count(*) != children",
        "sibling: count([]child_index < child_index) != child_index",
        "node: child_index > 0; sibling: count([]child_index = 0) != 1",
        // Main line and variations.
        "node: mainline = 1 and ply > 0 and not [^]mainline = 1",
        "node: variation = 1 and [^]mainline = 1 and child_index = 0",
        "node: mainline = 1 and not depth = 0",
    ] {
        let out = gtql(q);
        assert!(out.contains("# 0 nodes"), "{q}: {out}");
    }
    // Counts from the rows themselves.
    let (mut all, mut mainline, mut checks, mut variations) = (0u64, 0u64, 0u64, 0u64);
    let database = Database::open(&db).unwrap();
    for (_, seg) in database.segments() {
        seg.for_each_game(false, |_, rows| {
            for r in rows.positions {
                all += 1;
                mainline += u64::from(r.flags.contains(PositionFlags::MAINLINE));
                checks += u64::from(r.flags.contains(PositionFlags::CHECK));
                variations += u64::from(r.child_index > 0);
            }
            Ok(())
        })
        .unwrap();
    }
    assert!(variations > 100, "the file should have variations");
    for (q, expected) in [
        ("node: count(*)", all),
        ("node: count(mainline = 1)", mainline),
        ("node: count(check = 1)", checks),
        ("node: count(child_index > 0)", variations),
    ] {
        let out = gtql(q);
        assert!(
            out.contains(&format!("# {expected} nodes")),
            "{q}: expected {expected}: {out}"
        );
    }
    // Paths write castling as players do, not as the stored king-takes-rook.
    let paths = ok(&[
        "gtql",
        "node: mainline = 1 and ply = 24",
        "--db",
        s(&db),
        "--format",
        "csv",
    ]);
    assert!(paths.contains(" O-O"), "{paths}");
    assert!(!paths.contains("castle"), "{paths}");
}

#[test]
fn searcher_logs_import_and_answer_the_papers_questions() {
    use cqldb_bench_data::search::{ALIASES, ENGINE, FIELDS, Searcher, epd_position};
    let dir = tempfile::tempdir().unwrap();
    let epd = std::fs::read_to_string(
        std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
        )
        .join("../../shared/data/epd/lct2.epd"),
    )
    .unwrap();
    let (pos, _) = epd_position(epd.lines().nth(14).unwrap()).unwrap();
    let gtf = dir.path().join("t.gtf");
    let file = std::fs::File::create(&gtf).unwrap();
    let log = gtlog::Logger::new(file, ENGINE, &ALIASES, &FIELDS).unwrap();
    let mut searcher = Searcher::new(log, 16);
    searcher.search(&pos, 4).unwrap();
    let (log, nodes) = searcher.into_log();
    log.finish().unwrap();
    let gtl = dir.path().join("t.gtl");
    ok(&["gtql", "import", s(&gtf), "--out", s(&gtl)]);
    let out = ok(&["gtql", "node: count(*)", s(&gtl)]);
    assert!(out.contains(&format!("# {nodes} nodes")), "{out}");
    // The root (the last record, so its id is the node count) is a PV node at depth 4 and
    // ply 0; every node is one of the three types.
    let root = format!("node: node_id = {nodes} and type = PVNode and depth = 4 and ply = 0");
    let out = ok(&["gtql", &root, s(&gtl)]);
    assert!(out.contains("# 1 nodes"), "{out}");
    let out = ok(&[
        "gtql",
        "node: not (type = PVNode or type = CUTNode or type = ALLNode)",
        s(&gtl),
    ]);
    assert!(out.contains("# 0 nodes"), "{out}");
    // Quiescence roots have depth 0, their subtrees only quiescence nodes.
    let out = ok(&[
        "gtql",
        "node: flags & QRootNode; subtree: count(not flags & QNode) > 0",
        s(&gtl),
    ]);
    assert!(out.contains("# 0 nodes"), "{out}");
    // Children are deeper than their parent.
    let out = ok(&["gtql", "node: ply <= [^]ply", s(&gtl)]);
    assert!(out.contains("# 0 nodes"), "{out}");
}

/// `bench query` times a query planned and as a full scan (checking they agree); with
/// `--no-full-scan` it skips the scan and says so in its columns.
#[test]
fn bench_query_with_and_without_its_full_scan() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("g.pgn");
    std::fs::write(&pgn, common::games(40, 0)).unwrap();
    let db = dir.path().join("db");
    ok(&["index", "-q", "--db", s(&db), s(&pgn)]);
    // The columns between bars: matches, timings, the full scan and its ratio, the command.
    let scan_columns = |extra: &[&str]| -> String {
        let mut args = vec![
            "bench",
            "query",
            "--db",
            s(&db),
            "--runs",
            "2",
            "--cql",
            "mate",
        ];
        args.extend_from_slice(extra);
        let out = ok(&args);
        let row = out
            .lines()
            .find(|l| l.starts_with("mate "))
            .unwrap_or_else(|| panic!("no row for mate: {out}"));
        assert!(
            row.split_whitespace().nth(1) == Some("20"),
            "20 games end in mate: {row}"
        );
        row.split('|')
            .nth(2)
            .expect("a full-scan column")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let with = scan_columns(&[]);
    assert!(with.ends_with('x'), "a ratio against the full scan: {with}");
    assert_eq!(scan_columns(&["--no-full-scan"]), "- -");
}
