//! Segment merging through the binary: `cqldb index` merges as its policy says, `cqldb
//! optimize` merges everything; answers never change, readers keep working during merges, and
//! a merge killed at any moment leaves the old state or the new one, whole.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{cqldb, games, ok, s};

/// What the probes answer: counts over bitmaps, positions, tags, and game text.
fn answers(db: &Path) -> Vec<String> {
    let d = s(db);
    let probes: [&[&str]; 6] = [
        &["cql", "--db", d, "--count", "-cql", "mate"],
        &["cql", "--db", d, "--count", "-cql", "check"],
        &[
            "cql",
            "--db",
            d,
            "--count",
            "-cql",
            "player black \"Kasparov1\"",
        ],
        &["cql", "--db", d, "--count", "-cql", "Qd8 btm"],
        &["tags", "--db", d, "event:open", "--count"],
        &["show", "--db", d, "7"],
    ];
    probes
        .iter()
        .map(|a| {
            let out = cqldb(a);
            assert!(
                out.status.success(),
                "{a:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
        .collect()
}

fn info_line(db: &Path, what: &str) -> u64 {
    ok(&["info", "--db", s(db)])
        .lines()
        .find_map(|l| l.strip_prefix(what)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {what} in info"))
}

/// The segment files in `db`.
fn segment_files(db: &Path) -> usize {
    std::fs::read_dir(db)
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_string_lossy();
            n.starts_with("seg-") && n.ends_with(".cqs")
        })
        .count()
}

/// A database of `n` games in many small segments (no merging), and its input.
fn fragmented(dir: &Path, n: usize) -> (PathBuf, PathBuf) {
    let pgn = dir.join("g.pgn");
    std::fs::write(&pgn, games(n, 0)).unwrap();
    let db = dir.join("db");
    ok(&[
        "index",
        s(&pgn),
        "--db",
        s(&db),
        "-q",
        "--no-merge",
        "--segment-positions",
        "600",
    ]);
    (db, pgn)
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let st = Command::new("cp")
        .args(["-r", s(from), s(to)])
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn index_merges_as_its_policy_says_and_answers_stay() {
    let dir = tempfile::tempdir().unwrap();
    let (merged, plain) = (dir.path().join("merged"), dir.path().join("plain"));
    for i in 0..9 {
        let pgn = dir.path().join(format!("p{i}.pgn"));
        std::fs::write(&pgn, games(60, i * 60)).unwrap();
        // (The generated games repeat: some files are the same file again.)
        let again = "--allow-duplicates";
        ok(&["index", s(&pgn), "--db", s(&merged), "-q", again]);
        ok(&[
            "index",
            s(&pgn),
            "--db",
            s(&plain),
            "-q",
            "--no-merge",
            again,
        ]);
    }
    // Every four one-segment appends of one tier became one segment (tier 1), the ninth
    // stays beside the two.
    assert_eq!(info_line(&plain, "segments"), 9);
    assert_eq!(info_line(&merged, "segments"), 3);
    assert_eq!(segment_files(&merged), 3);
    assert_eq!(answers(&merged), answers(&plain));
    ok(&["optimize", "--db", s(&plain), "-q"]);
    assert_eq!(info_line(&plain, "segments"), 1);
    assert_eq!(answers(&merged), answers(&plain));
    assert!(ok(&["check", "--db", s(&plain)]).contains("all intact"));
}

#[test]
fn queries_during_merges_give_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = fragmented(dir.path(), 1500);
    let before = info_line(&db, "segments");
    assert!(before >= 12, "{before}");
    let expected = answers(&db);
    let merging = {
        let db = db.clone();
        // Several merges one after the other (the cap keeps each small).
        std::thread::spawn(move || {
            ok(&["optimize", "--db", s(&db), "-q", "--max-positions", "2500"])
        })
    };
    let mut rounds = 0;
    while !merging.is_finished() || rounds == 0 {
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let db = db.clone();
                std::thread::spawn(move || answers(&db))
            })
            .collect();
        for r in readers {
            assert_eq!(
                r.join().unwrap(),
                expected,
                "an answer changed during a merge"
            );
        }
        rounds += 1;
    }
    merging.join().unwrap();
    let after = info_line(&db, "segments");
    assert!(after < before && after >= 3, "{after} of {before}");
    assert_eq!(answers(&db), expected);
    eprintln!("{rounds} rounds of reads during the merges; {before} segments became {after}");
}

#[test]
fn merges_killed_at_random_moments_leave_the_old_or_the_new_state() {
    let dir = tempfile::tempdir().unwrap();
    let (original, _) = fragmented(dir.path(), 2000);
    let segments = info_line(&original, "segments");
    let expected = answers(&original);
    let db = dir.path().join("work");
    copy_dir(&original, &db);
    let t = Instant::now();
    ok(&["optimize", "--db", s(&db), "-q"]);
    let span = t.elapsed().as_micros().max(1000) as u64;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let (mut old, mut new) = (0, 0);
    for _ in 0..16 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        copy_dir(&original, &db);
        let mut child = Command::new(env!("CARGO_BIN_EXE_cqldb"))
            .args(["optimize", "--db", s(&db), "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(seed % (span + span / 4)));
        let _ = child.kill();
        let _ = child.wait();
        match info_line(&db, "segments") {
            1 => new += 1,
            n => {
                assert_eq!(n, segments, "a killed merge left a state between the two");
                old += 1;
            }
        }
        assert_eq!(answers(&db), expected, "a killed merge changed an answer");
        // The next writer cleans up and merges; nothing is left but the merged segment.
        ok(&["optimize", "--db", s(&db), "-q"]);
        assert_eq!(info_line(&db, "segments"), 1);
        assert_eq!(answers(&db), expected);
        assert_eq!(
            segment_files(&db),
            1,
            "files of replaced or unfinished segments were left"
        );
        assert!(ok(&["check", "--db", s(&db)]).contains("all intact"));
    }
    eprintln!("16 merges killed: {old} left the old state, {new} the new");
}
