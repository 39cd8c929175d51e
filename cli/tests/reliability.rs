//! Reliability of a database under damage, concurrency, a full disk and hostile queries: every
//! command gives the right answer or a clear error naming what is wrong — never a panic, never
//! a wrong answer with exit 0, never a spurious "in use".
//!
//! (Byte flips inside segment files are `damaged_segments.rs`; this covers the other files,
//! swapped files, readers during appends, killed appends, `check`/`repair`, permissions and
//! hostile queries.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{cqldb, games, ok, s};

/// A database of two segments (two appends) in a fresh directory.
fn two_segment_db(dir: &Path) -> PathBuf {
    let db = dir.join("db");
    for (k, from) in [(0, 0), (1, 30)] {
        let pgn = dir.join(format!("part{k}.pgn"));
        std::fs::write(&pgn, games(30, from)).unwrap();
        ok(&["index", s(&pgn), "--db", s(&db), "-q"]);
    }
    db
}

/// The commands every damage is tried against: catalog, bitmaps, positions, tag index.
fn probes(db: &Path) -> Vec<Vec<String>> {
    let d = s(db).to_string();
    let v = |a: &[&str]| a.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
    vec![
        v(&["info", "--db", &d]),
        v(&["cql", "--db", &d, "--count", "-cql", "mate"]),
        v(&[
            "cql",
            "--db",
            &d,
            "--count",
            "-cql",
            "player black \"Kasparov1\"",
        ]),
        v(&["tags", "--db", &d, "event:open", "--count"]),
    ]
}

fn run(args: &[String]) -> Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    cqldb(&a)
}

/// A command's answer without the sizes on disk (`info` reports them, and damage changes them).
fn answer_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            !["size on disk", "bytes/position", "  columns", "  bitmaps"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Runs every probe; the right answer or an error, never a crash (101 is a Rust panic, a
/// missing code a signal such as a stack overflow's abort).
fn probe_all(db: &Path, expected: &[String], what: &str) -> (usize, usize) {
    let (mut right, mut errors) = (0, 0);
    for (args, want) in probes(db).iter().zip(expected) {
        let out = run(args);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0..=2)),
            "{what}: cqldb {args:?} crashed ({:?}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        if code == Some(0) {
            assert_eq!(
                &answer_text(&out),
                want,
                "{what}: cqldb {args:?} gave a wrong answer with exit 0"
            );
            right += 1;
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("cqldb:") || err.contains("db"),
                "{what}: an error must say what failed: {err}"
            );
            errors += 1;
        }
    }
    (right, errors)
}

fn answers(db: &Path) -> Vec<String> {
    probes(db)
        .iter()
        .map(|a| {
            let out = run(a);
            assert!(out.status.success(), "{a:?}");
            answer_text(&out)
        })
        .collect()
}

/// Every file of the database but the segment files, with its bytes.
fn files(db: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![db.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_none_or(|x| x != "cqs")
                && p.file_name().is_none_or(|n| n != "writer.lock")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn damage_to_any_other_file_is_caught_or_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let db = two_segment_db(dir.path());
    let expected = answers(&db);
    let (mut tried, mut right, mut errors) = (0, 0, 0);
    for f in files(&db) {
        let original = std::fs::read(&f).unwrap();
        let n = original.len();
        // Flips spread over the file (its start and end included), a truncation, a deletion.
        let mut offsets: Vec<usize> = (0..n).step_by((n / 10).max(1)).collect();
        offsets.extend(n.saturating_sub(4)..n);
        for at in offsets {
            let mut b = original.clone();
            b[at] ^= 0x5a;
            std::fs::write(&f, &b).unwrap();
            let (r, e) = probe_all(&db, &expected, &format!("{} flipped at {at}", f.display()));
            tried += 1;
            right += r;
            errors += e;
        }
        std::fs::write(&f, &original[..n / 2]).unwrap();
        probe_all(&db, &expected, &format!("{} truncated", f.display()));
        std::fs::remove_file(&f).unwrap();
        probe_all(&db, &expected, &format!("{} deleted", f.display()));
        std::fs::write(&f, &original).unwrap();
        tried += 2;
    }
    // Segment files (flipped byte by byte in `damaged_segments.rs`): truncated, deleted.
    for id in [1, 2] {
        let f = db.join(format!("seg-00000{id}.cqs"));
        let original = std::fs::read(&f).unwrap();
        for cut in [0, 10, 64, original.len() / 2, original.len() - 1] {
            std::fs::write(&f, &original[..cut]).unwrap();
            probe_all(&db, &expected, &format!("{} cut at {cut}", f.display()));
            tried += 1;
        }
        std::fs::remove_file(&f).unwrap();
        probe_all(&db, &expected, &format!("{} deleted", f.display()));
        std::fs::write(&f, &original).unwrap();
        tried += 1;
    }
    assert_eq!(answers(&db), expected, "restored");
    eprintln!("{tried} damaged files: {right} right answers, {errors} clear errors, no crash");
}

#[test]
fn a_segment_file_copied_over_another_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = two_segment_db(dir.path());
    std::fs::copy(db.join("seg-000001.cqs"), db.join("seg-000002.cqs")).unwrap();
    for args in probes(&db) {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("seg-000002.cqs"), "{err}");
    }
    let out = cqldb(&["check", "--db", s(&db)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("DAMAGED"));
}

#[test]
fn check_finds_damage_and_repair_rebuilds_the_catalog_and_tag_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let db = two_segment_db(dir.path());
    let expected = answers(&db);
    assert!(ok(&["check", "--db", s(&db)]).contains("all intact"));
    // Damage catalog.redb past its header, and one file of each tag index.
    let redb = db.join("catalog.redb");
    let mut b = std::fs::read(&redb).unwrap();
    for i in (4096..b.len()).step_by(257) {
        b[i] ^= 0x55;
    }
    std::fs::write(&redb, b).unwrap();
    for seg in ["seg-000001.tags", "seg-000002.tags"] {
        let f = files(&db.join(seg))
            .into_iter()
            .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .unwrap();
        let mut b = std::fs::read(&f).unwrap();
        let at = b.len() / 2;
        b[at] ^= 1;
        std::fs::write(&f, b).unwrap();
    }
    let out = cqldb(&["check", "--db", s(&db)]);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(report.matches("DAMAGED").count(), 3, "{report}");
    // Queries still answer rightly or say what is damaged, meanwhile.
    probe_all(&db, &expected, "before repair");
    let repaired = ok(&["repair", "--db", s(&db)]);
    assert_eq!(repaired.matches("repaired:").count(), 3, "{repaired}");
    assert!(ok(&["check", "--db", s(&db)]).contains("all intact"));
    assert_eq!(answers(&db), expected);
    // And the database takes appends again.
    let more = dir.path().join("more.pgn");
    std::fs::write(&more, games(3, 100)).unwrap();
    ok(&["index", s(&more), "--db", s(&db), "-q"]);
    assert!(ok(&["info", "--db", s(&db)]).contains("63"));
}

/// The number of games `info` reports, or the error.
fn info_games(db: &Path) -> Result<u64, String> {
    let out = cqldb(&["info", "--db", s(db)]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("games")?.trim().parse().ok())
        .ok_or(text)
}

/// A database of one batch of `n` games, and the batch's file (to append again, with
/// `--allow-duplicates`).
fn db_of_one_batch(dir: &Path, n: usize) -> (PathBuf, PathBuf) {
    let db = dir.join("db");
    let pgn = dir.join("batch.pgn");
    std::fs::write(&pgn, games(n, 0)).unwrap();
    ok(&["index", s(&pgn), "--db", s(&db), "-q"]);
    (db, pgn)
}

#[test]
fn readers_during_appends_see_a_committed_state_and_never_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (db, pgn) = db_of_one_batch(dir.path(), 400);
    let appends = 6;
    let writer = {
        let (db, pgn) = (db.clone(), pgn.clone());
        std::thread::spawn(move || {
            for _ in 0..appends {
                ok(&["index", s(&pgn), "--db", s(&db), "-q", "--allow-duplicates"]);
            }
        })
    };
    let mut reads = 0;
    while !writer.is_finished() {
        // Several readers started at the same moment.
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let db = db.clone();
                std::thread::spawn(move || info_games(&db))
            })
            .collect();
        for h in handles {
            let n = h
                .join()
                .unwrap()
                .expect("a reader never fails during an append");
            assert!(
                n % 400 == 0 && (400..=400 * (appends + 1)).contains(&n),
                "{n}"
            );
            reads += 1;
        }
    }
    writer.join().unwrap();
    assert_eq!(info_games(&db), Ok(400 * (appends + 1)));
    eprintln!("{reads} reads during {appends} appends, none failed");
}

#[test]
fn appends_killed_at_random_moments_leave_the_old_or_the_new_state() {
    let dir = tempfile::tempdir().unwrap();
    let (db, pgn) = db_of_one_batch(dir.path(), 3000);
    // A rough duration of one append, to spread the kills over it.
    let t = Instant::now();
    ok(&["index", s(&pgn), "--db", s(&db), "-q", "--allow-duplicates"]);
    let span = t.elapsed().as_micros().max(1000) as u64;
    let mut committed = 6000u64;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let kills = 20;
    for _ in 0..kills {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new(env!("CARGO_BIN_EXE_cqldb"))
            .args(["index", s(&pgn), "--db", s(&db), "-q", "--allow-duplicates"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(seed % (span + span / 4)));
        let _ = child.kill();
        let _ = child.wait();
        let n = info_games(&db).expect("a killed append leaves a readable database");
        assert!(
            n == committed || n == committed + 3000,
            "{n} after {committed}"
        );
        committed = n;
    }
    assert!(ok(&["check", "--db", s(&db)]).contains("all intact"));
    // The next append cleans up after the killed ones and commits.
    ok(&["index", s(&pgn), "--db", s(&db), "-q", "--allow-duplicates"]);
    assert_eq!(info_games(&db), Ok(committed + 3000));
    eprintln!("{kills} appends killed; the database always held a committed state");
}

/// (name, length, modified time, permissions) of every file under `dir`.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::metadata(&p).unwrap();
            if m.is_dir() {
                todo.push(p.clone());
            }
            out.insert(p, (m.len(), m.modified().unwrap(), m.permissions().mode()));
        }
    }
    out
}

#[test]
fn reading_writes_nothing_and_files_get_the_umasks_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("g.pgn");
    std::fs::write(&pgn, games(20, 0)).unwrap();
    let db = dir.path().join("db");
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 022 && exec '{}' index '{}' --db '{}' -q",
            env!("CARGO_BIN_EXE_cqldb"),
            s(&pgn),
            s(&db)
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let before = snapshot(&db);
    for (p, (_, _, mode)) in &before {
        assert_eq!(
            mode & 0o044,
            0o044,
            "{} is not readable by others: {mode:o}",
            p.display()
        );
    }
    for args in probes(&db) {
        assert!(run(&args).status.success(), "{args:?}");
    }
    ok(&["check", "--db", s(&db)]);
    // No file created, changed or removed: a reader needs only read permission.
    assert_eq!(snapshot(&db), before);
    as_another_user(dir.path(), &db);
    assert_eq!(snapshot(&db), before);
}

/// Where the test runs as root and `runuser` exists: another user, who may only read the
/// database, queries it (and may not append to it).
fn as_another_user(dir: &Path, db: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let has_runuser = Command::new("runuser")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !is_root || !has_runuser {
        eprintln!("skipped: reading as another user needs root and runuser");
        return;
    }
    // The binary and the database where that user can reach them.
    let exe = dir.join("cqldb");
    std::fs::copy(env!("CARGO_BIN_EXE_cqldb"), &exe).unwrap();
    for p in [dir, exe.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let as_nobody = |args: &[&str]| {
        Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(&exe)
            .args(args)
            .output()
            .unwrap()
    };
    for args in probes(db) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = as_nobody(&a);
        assert!(
            out.status.success(),
            "{a:?} as another user: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = as_nobody(&["check", "--db", s(db)]);
    assert!(out.status.success());
    // Appending needs write permission, and says so.
    let out = as_nobody(&["index", "-", "--db", s(db)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"));
}

#[test]
fn a_full_disk_is_said_plainly_and_leaves_the_committed_state() {
    let mnt = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs", s(mnt.path())])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|st| st.success());
    if !mounted {
        eprintln!("skipped: cannot mount a small filesystem here (needs root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = mnt.path().join("db");
    let small = dir.path().join("small.pgn");
    std::fs::write(&small, games(20, 0)).unwrap();
    ok(&["index", s(&small), "--db", s(&db), "-q"]);
    let before: Vec<_> = snapshot(&db).into_keys().collect();
    let big = dir.path().join("big.pgn");
    std::fs::write(&big, games(40_000, 0)).unwrap();
    let out = cqldb(&["index", s(&big), "--db", s(&db), "-q"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let after: Vec<_> = snapshot(&db).into_keys().collect();
    let games_after = info_games(&db);
    let _ = Command::new("umount").arg(mnt.path()).status();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(games_after, Ok(20));
    assert_eq!(after, before, "the failed append's files are removed");
}

/// Runs a CQL query over a one-game PGN; it must end (with an answer or an error) within
/// `limit` and without a crash.
fn hostile_cql(query: &str, limit: Duration) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.cql");
    std::fs::write(&q, query).unwrap();
    let pgn = dir.path().join("g.pgn");
    std::fs::write(&pgn, games(2, 0)).unwrap();
    let t = Instant::now();
    let out = cqldb(&["cql", s(&q), "--pgn", s(&pgn), "--count"]);
    assert!(t.elapsed() < limit, "took {:?}", t.elapsed());
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "crashed: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn long_operator_chains_evaluate_and_parse_in_linear_time() {
    for op in ["or", "and"] {
        let q = format!("cql() {}", vec!["check"; 20_000].join(&format!(" {op} ")));
        assert!(
            hostile_cql(&q, Duration::from_secs(20)).status.success(),
            "{op}"
        );
    }
    // Sums stay nested as written (overflow makes regrouping change answers): a long one is
    // an error, a thousand terms are fine.
    let sum = format!("cql() {} > 3", vec!["1"; 20_000].join(" + "));
    assert_eq!(
        hostile_cql(&sum, Duration::from_secs(10)).status.code(),
        Some(1)
    );
    let sum = format!("cql() {} > 3", vec!["1"; 1_000].join(" + "));
    assert!(hostile_cql(&sum, Duration::from_secs(10)).status.success());
    // Limits that multiply (nested parentheses around long chains) meet the depth limit.
    let chain = vec!["1"; 999].join(" - ");
    let mut deep = "1".to_string();
    for _ in 0..4 {
        deep = format!("({deep} - {chain})");
    }
    let out = hostile_cql(&format!("cql() {deep} < 3"), Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("levels deep"));
    let vars: Vec<String> = (0..50_000).map(|i| format!("x{i} = {i}")).collect();
    assert!(
        hostile_cql(
            &format!("cql() {}", vars.join(" ")),
            Duration::from_secs(10)
        )
        .status
        .success()
    );
    // Non-associative chains are bounded with an error rather than nested without end.
    let diff = format!("cql() {} > 3", vec!["1"; 5_000].join(" - "));
    let out = hostile_cql(&diff, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(1));
    // Nested transforms stay linear.
    let flips = format!(
        "cql() {}check{}",
        "flipcolor { ".repeat(40),
        " }".repeat(40)
    );
    hostile_cql(&flips, Duration::from_secs(10));
    let parens = format!("cql() {}check{}", "(".repeat(20_000), ")".repeat(20_000));
    assert_eq!(
        hostile_cql(&parens, Duration::from_secs(10)).status.code(),
        Some(1)
    );
}

#[test]
fn deeply_nested_tag_queries_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = two_segment_db(dir.path());
    let q = format!("{}kasparov1{}", "(".repeat(10_000), ")".repeat(10_000));
    let out = cqldb(&["tags", "--db", s(&db), &q, "--count"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nest"));
    // Within the limit the nesting is fine.
    let q = format!("{}black:kasparov1{}", "(".repeat(50), ")".repeat(50));
    assert_eq!(ok(&["tags", "--db", s(&db), &q, "--count"]).trim(), "20");
}

#[test]
fn far_ancestors_on_a_deep_tree_cost_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("deep.log");
    let n = 200_000;
    let mut t = String::from("gtql-log 1\nattr depth int\nnodes\n0 - 0\n");
    for i in 1..n {
        t.push_str(&format!("{i} m1 {i}\n"));
    }
    std::fs::write(&log, t).unwrap();
    let start = Instant::now();
    let out = ok(&[
        "gtql",
        "node: [^100000]depth > 5",
        s(&log),
        "--format",
        "json",
        "--limit",
        "0",
    ]);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    // Nodes at depth >= 100006 have a 100000th ancestor at depth > 5.
    assert!(out.contains(&format!("\"count\":{}", n - 100_006)), "{out}");
}

#[test]
fn appending_after_the_catalog_was_lost_or_damaged_keeps_every_game() {
    let dir = tempfile::tempdir().unwrap();
    let more = dir.path().join("more.pgn");
    std::fs::write(&more, games(5, 500)).unwrap();
    // Deleted, then emptied: rebuilt from the manifest before the append.
    for lose in ["delete", "empty"] {
        let sub = dir.path().join(lose);
        std::fs::create_dir(&sub).unwrap();
        let db = two_segment_db(&sub);
        let redb = db.join("catalog.redb");
        if lose == "delete" {
            std::fs::remove_file(&redb).unwrap();
        } else {
            std::fs::write(&redb, b"").unwrap();
        }
        ok(&["index", s(&more), "--db", s(&db), "-q"]);
        assert_eq!(info_games(&db), Ok(65), "{lose}");
        assert!(
            ok(&["check", "--db", s(&db)]).contains("all intact"),
            "{lose}"
        );
    }
    // Damaged: the append refuses and says to repair; nothing is lost.
    let sub = dir.path().join("damaged");
    std::fs::create_dir(&sub).unwrap();
    let db = two_segment_db(&sub);
    let redb = db.join("catalog.redb");
    let mut b = std::fs::read(&redb).unwrap();
    for i in (4096..b.len()).step_by(257) {
        b[i] ^= 0x55;
    }
    std::fs::write(&redb, b).unwrap();
    let out = cqldb(&["index", s(&more), "--db", s(&db), "-q"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cqldb repair"));
    assert_eq!(info_games(&db), Ok(60));
    ok(&["repair", "--db", s(&db)]);
    ok(&["index", s(&more), "--db", s(&db), "-q"]);
    assert_eq!(info_games(&db), Ok(65));
}

/// The manifest's rename is the commit point: an append whose manifest cannot be written
/// commits nothing and leaves no file behind, and readers never see its games.
#[test]
fn an_append_whose_manifest_cannot_be_written_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = two_segment_db(dir.path());
    let before = snapshot(&db);
    // The manifest's temporary name is taken by a directory: writing it fails after the
    // segments went into catalog.redb.
    let blocker = db.join("catalog.manifest.tmp");
    std::fs::create_dir(&blocker).unwrap();
    let more = dir.path().join("more.pgn");
    std::fs::write(&more, games(5, 500)).unwrap();
    let out = cqldb(&["index", s(&more), "--db", s(&db), "-q"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was committed"));
    assert_eq!(info_games(&db), Ok(60));
    std::fs::remove_dir(&blocker).unwrap();
    let segments = |snap: &BTreeMap<PathBuf, (u64, std::time::SystemTime, u32)>| -> Vec<PathBuf> {
        snap.keys()
            .filter(|p| p.to_string_lossy().contains("seg-"))
            .cloned()
            .collect()
    };
    assert_eq!(
        segments(&snapshot(&db)),
        segments(&before),
        "its files are removed"
    );
    assert!(ok(&["check", "--db", s(&db)]).contains("all intact"));
    // The next append commits, under new segment ids.
    ok(&["index", s(&more), "--db", s(&db), "-q"]);
    assert_eq!(info_games(&db), Ok(65));
    assert!(ok(&["check", "--db", s(&db)]).contains("all intact"));
}

#[test]
fn bad_inputs_and_targets_leave_no_database_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    // A directory without PGN, a missing file: errors before anything is written.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for input in [s(&empty), "/no/such/file.pgn"] {
        let out = cqldb(&["index", input, "--db", s(&db), "-q"]);
        assert_eq!(out.status.code(), Some(1), "{input}");
        assert!(!db.exists(), "{input} left a database behind");
    }
    // A regular file as the database: said plainly.
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let pgn = dir.path().join("g.pgn");
    std::fs::write(&pgn, games(3, 0)).unwrap();
    let out = cqldb(&["index", s(&pgn), "--db", s(&file), "-q"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a database directory"));
    // A directory of PGN files (nested) is every file under it.
    let folder = dir.path().join("folder");
    std::fs::create_dir_all(folder.join("sub")).unwrap();
    std::fs::write(folder.join("a.pgn"), games(3, 0)).unwrap();
    std::fs::write(folder.join("sub").join("b.pgn"), games(4, 10)).unwrap();
    std::fs::write(folder.join("notes.txt"), "not a game").unwrap();
    ok(&["index", s(&folder), "--db", s(&db), "-q"]);
    assert_eq!(info_games(&db), Ok(7));
    // Usage errors exit with 2, query errors with 1.
    let both = ["cql", "--db", s(&db), "--pgn", s(&pgn), "-cql", "check"];
    assert_eq!(cqldb(&both).status.code(), Some(2));
    assert_eq!(cqldb(&["cql", "--no-such-option"]).status.code(), Some(2));
    assert_eq!(
        cqldb(&["cql", "--db", s(&db), "--count", "-cql", "check ((("])
            .status
            .code(),
        Some(1)
    );
}
