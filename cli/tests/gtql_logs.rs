//! GTQL over GT-log `.gtf` files written byte by byte as the original library lays them out:
//! the engine's name in the header, aliases, fields at any offset with padding, post-order
//! records whose ids the engine knows. Imported and queried through the `cqldb` binary, the
//! ids, values and answers must be the log's own, in every output format.

use std::path::Path;

use proptest::prelude::*;

mod common;
use common::{cqldb, ok, s};

/// A node of a tree as the engine saw it.
#[derive(Clone, Debug)]
struct Node {
    level: u32,
    mv: u32,
    /// type (1 byte at 0), value (4 bytes at 4), big (8 bytes at 8), small (2 bytes at 16).
    vals: [i64; 4],
}

const FIELDS: [(&str, usize, usize); 4] = [
    ("type", 0, 1),
    ("value", 4, 4),
    ("big", 8, 8),
    ("small", 16, 2),
];
const REC_SIZE: usize = 20;
const ALIASES: [(&str, i64); 3] = [("PVNode", 0), ("CUTNode", 1), ("ALLNode", 2)];

/// What the test knows of each node after writing: by pre-order index, its id, parent index and
/// children indexes (in search order).
struct Written {
    ids: Vec<u32>,
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
}

/// Writes a `.gtf` file: header lines `gameVersion dataVersion recSize numAliases numFields`,
/// `NAME value`, `name offset size`, then one record per node in post-order (id = record
/// number from 1): id, last child, previous sibling, move, then `REC_SIZE` bytes with the fields
/// at their offsets (little-endian, the rest padding).
fn write_gtf(path: &Path, engine: &str, tree: &[Node]) -> Written {
    let n = tree.len();
    let mut parent = vec![None; n];
    let mut children = vec![Vec::new(); n];
    let mut open: Vec<usize> = Vec::new();
    for (i, node) in tree.iter().enumerate() {
        while open.last().is_some_and(|&o| tree[o].level >= node.level) {
            open.pop();
        }
        parent[i] = open.last().copied();
        if let Some(p) = parent[i] {
            children[p].push(i);
        }
        open.push(i);
    }
    // Post-order: children first, in order, then the node.
    let mut order = Vec::with_capacity(n);
    let mut stack = vec![(0usize, false)];
    while let Some((i, done)) = stack.pop() {
        if done {
            order.push(i);
        } else {
            stack.push((i, true));
            for &c in children[i].iter().rev() {
                stack.push((c, false));
            }
        }
    }
    let mut ids = vec![0u32; n];
    for (k, &i) in order.iter().enumerate() {
        ids[i] = k as u32 + 1;
    }
    let mut out =
        format!("{engine} 3 {REC_SIZE} {} {}\n", ALIASES.len(), FIELDS.len()).into_bytes();
    for (name, v) in ALIASES {
        out.extend_from_slice(format!("{name} {v}\n").as_bytes());
    }
    for (name, off, size) in FIELDS {
        out.extend_from_slice(format!("{name} {off} {size}\n").as_bytes());
    }
    for &i in &order {
        let last_child = children[i].last().map_or(0, |&c| ids[c]);
        let prev = parent[i]
            .and_then(|p| {
                let sibs = &children[p];
                let at = sibs.iter().position(|&c| c == i)?;
                at.checked_sub(1).map(|a| ids[sibs[a]])
            })
            .unwrap_or(0);
        for x in [ids[i], last_child, prev, tree[i].mv] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let mut rec = [0xAAu8; REC_SIZE];
        for (k, (_, off, size)) in FIELDS.iter().enumerate() {
            rec[*off..off + size].copy_from_slice(&tree[i].vals[k].to_le_bytes()[..*size]);
        }
        out.extend_from_slice(&rec);
    }
    std::fs::write(path, out).unwrap();
    Written {
        ids,
        parent,
        children,
    }
}

/// The queries checked on every tree, with their brute-force answers over the written records.
fn queries(k: i64, id: u32) -> Vec<String> {
    vec![
        format!("node: value > {k}"),
        format!("node: type = PVNode and node_id >= {id}"),
        format!("node: last_move = {}", k.rem_euclid(5)),
        format!("child: count([]value > value) >= {}", k.rem_euclid(3)),
        format!("subtree: count(type = CUTNode) > {}", k.rem_euclid(4)),
        format!("node: [^]type = ALLNode and small < {k}"),
        "node: node_id > 0 and big = big".to_owned(),
    ]
}

fn brute(tree: &[Node], w: &Written, k: i64, id: u32) -> Vec<Vec<u32>> {
    let n = tree.len();
    let descendants = |i: usize| -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = w.children[i].clone();
        while let Some(c) = stack.pop() {
            out.push(c);
            stack.extend(&w.children[c]);
        }
        out
    };
    let answers: Vec<Box<dyn Fn(usize) -> bool>> = vec![
        Box::new(|i| tree[i].vals[1] > k),
        Box::new(|i| tree[i].vals[0] == 0 && w.ids[i] >= id),
        Box::new(|i| i64::from(tree[i].mv) == k.rem_euclid(5)),
        Box::new(|i| {
            let c = w.children[i]
                .iter()
                .filter(|&&c| tree[c].vals[1] > tree[i].vals[1]);
            c.count() as i64 >= k.rem_euclid(3)
        }),
        Box::new(|i| {
            let c = descendants(i).into_iter().filter(|&d| tree[d].vals[0] == 1);
            c.count() as i64 > k.rem_euclid(4)
        }),
        Box::new(|i| w.parent[i].is_some_and(|p| tree[p].vals[0] == 2) && tree[i].vals[3] < k),
        Box::new(|_| true),
    ];
    answers
        .iter()
        .map(|f| {
            let mut ids: Vec<u32> = (0..n).filter(|&i| f(i)).map(|i| w.ids[i]).collect();
            ids.sort_unstable();
            ids
        })
        .collect()
}

/// Per query, the listed (id, [type, value, big, small]) of each format's output.
fn listed(format: &str, out: &str, queries: &[String]) -> Vec<Vec<(u32, Vec<i64>)>> {
    let mut per: Vec<Vec<(u32, Vec<i64>)>> = vec![Vec::new(); queries.len()];
    match format {
        "json" => {
            for (q, line) in out.lines().enumerate() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                assert_eq!(v["query"], queries[q].as_str());
                assert_eq!(v["truncated"], false);
                for node in v["nodes"].as_array().unwrap() {
                    let vals = ["type", "value", "big", "small"].map(|a| node[a].as_i64().unwrap());
                    per[q].push((node["node_id"].as_u64().unwrap() as u32, vals.to_vec()));
                }
            }
        }
        "csv" => {
            let mut lines = out.lines();
            assert_eq!(
                lines.next(),
                Some("query,node_id,path,type,value,big,small")
            );
            for line in lines {
                let f: Vec<&str> = line.split(',').collect();
                let q = queries.iter().position(|x| x == f[0]).unwrap();
                let vals = f[3..7].iter().map(|x| x.parse().unwrap()).collect();
                per[q].push((f[1].parse().unwrap(), vals));
            }
        }
        _ => {
            let mut q = usize::MAX;
            for line in out.lines() {
                if let Some(text) = line.strip_prefix("# ")
                    && let Some(i) = queries.iter().position(|x| x == text)
                {
                    q = i;
                    continue;
                }
                let f: Vec<&str> = line.split_whitespace().collect();
                if let Some(Ok(id)) = f.first().map(|x| x.parse::<u32>()) {
                    // node_id, path (one word: the moves joined by spaces are numbers too, so
                    // the last four words are the values).
                    let vals = f[f.len() - 4..]
                        .iter()
                        .map(|x| x.parse().unwrap())
                        .collect();
                    per[q].push((id, vals));
                }
            }
        }
    }
    per
}

fn tree_strategy() -> impl Strategy<Value = Vec<Node>> {
    (1usize..80).prop_flat_map(|n| {
        prop::collection::vec(
            (
                0u32..3,
                0u32..6,
                0i64..3,
                -50i64..50,
                any::<i64>(),
                -300i64..300,
            ),
            n,
        )
        .prop_map(|raw| {
            let mut level = 0u32;
            raw.iter()
                .enumerate()
                .map(|(i, &(step, mv, ty, value, big, small))| {
                    level = match (i, step) {
                        (0, _) => 0,
                        (_, 0) => level + 1,
                        (_, 1) => level.max(1),
                        _ => (level / 2).max(1),
                    };
                    Node {
                        level,
                        mv: if i == 0 { 0 } else { mv },
                        vals: [ty, value, big, small],
                    }
                })
                .collect()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// For random trees, the ids (and values) listed for a query in every output format are
    /// the brute-force answers over the records as written.
    #[test]
    fn listed_ids_are_the_logs_own(tree in tree_strategy(), k in -10i64..10, id_frac in 0u32..100) {
        let dir = tempfile::tempdir().unwrap();
        let gtf = dir.path().join("t.gtf");
        let gtl = dir.path().join("t.gtl");
        let w = write_gtf(&gtf, "mychess-1.0", &tree);
        ok(&["gtql", "import", s(&gtf), "--out", s(&gtl)]);
        let id = (tree.len() as u32 * id_frac / 100).max(1);
        let qs = queries(k, id);
        let want = brute(&tree, &w, k, id);
        let qfile = dir.path().join("q.gtql");
        std::fs::write(&qfile, qs.join("\n")).unwrap();
        let by_id: std::collections::HashMap<u32, usize> =
            w.ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        for format in ["table", "csv", "json"] {
            let mut args = vec!["gtql", "-f", s(&qfile), s(&gtl), "--format", format];
            if format == "table" {
                args.extend(["--limit", "all"]);
            }
            let out = ok(&args);
            for (q, got) in listed(format, &out, &qs).iter().enumerate() {
                let ids: Vec<u32> = got.iter().map(|h| h.0).collect();
                prop_assert_eq!(&ids, &want[q], "{} ({})", &qs[q], format);
                for (id, vals) in got {
                    prop_assert_eq!(&vals[..], &tree[by_id[id]].vals[..], "values of node {}", id);
                }
            }
        }
    }
}

/// A hand-made tree: ids, values and answers by id.
#[test]
fn a_gtf_file_as_the_library_writes_it() {
    // root (PV) -> a (CUT, mv 7) -> a1 (ALL, mv 3); root -> b (ALL, mv 9)
    let tree = vec![
        Node {
            level: 0,
            mv: 0,
            vals: [0, 10, -1, 5],
        },
        Node {
            level: 1,
            mv: 7,
            vals: [1, -20, 1 << 40, -300],
        },
        Node {
            level: 2,
            mv: 3,
            vals: [2, 30, 0, 7],
        },
        Node {
            level: 1,
            mv: 9,
            vals: [2, 40, i64::MIN, 0],
        },
    ];
    let dir = tempfile::tempdir().unwrap();
    let gtf = dir.path().join("t.gtf");
    let gtl = dir.path().join("t.gtl");
    let w = write_gtf(&gtf, "fruit-2.1", &tree);
    // Post-order: a1 = 1, a = 2, b = 3, root = 4.
    assert_eq!(w.ids, vec![4, 2, 1, 3]);
    ok(&["gtql", "import", s(&gtf), "--out", s(&gtl)]);
    let json = |q: &str| -> serde_json::Value {
        serde_json::from_str(ok(&["gtql", q, s(&gtl), "--format", "json"]).trim()).unwrap()
    };
    let v = json("node: node_id = 2");
    assert_eq!(v["count"], 1);
    let node = &v["nodes"][0];
    assert_eq!(node["node_id"], 2);
    assert_eq!(node["path"], serde_json::json!(["7"]));
    assert_eq!(
        (node["value"].as_i64(), node["big"].as_i64()),
        (Some(-20), Some(1 << 40))
    );
    assert_eq!(node["small"].as_i64(), Some(-300));
    let ids = |q: &str| -> Vec<u64> {
        json(q)["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["node_id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(ids("node: last_move = 0"), vec![4]);
    assert_eq!(ids("node: last_move >= 7"), vec![2, 3]);
    assert_eq!(ids("node: node_id >= 3"), vec![3, 4]);
    assert_eq!(ids("node: big < 0"), vec![3, 4]);
    assert_eq!(ids("subtree: count(*) = 0"), vec![1, 3]);
    assert_eq!(ids("child: count([]type = ALLNode) >= 1"), vec![2, 4]);
    assert_eq!(ids("node: [^]node_id = 4"), vec![2, 3]);
    // The table shows the same ids.
    let table = ok(&["gtql", "node: type = ALLNode", s(&gtl)]);
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(
        rows[0].trim_start().starts_with("1 ") && rows[1].trim_start().starts_with("3 "),
        "{table}"
    );
}

/// The paper's tool took the query file and the `.gtf` file as they are; so does `cqldb gtql`
/// (a log is imported into a temporary `.gtl`), whatever the log's file name.
#[test]
fn logs_are_queried_directly() {
    let dir = tempfile::tempdir().unwrap();
    let gtf = dir.path().join("tree12.dat");
    let tree = vec![
        Node {
            level: 0,
            mv: 0,
            vals: [0, 1, 0, 0],
        },
        Node {
            level: 1,
            mv: 5,
            vals: [1, 2, 0, 0],
        },
    ];
    write_gtf(&gtf, "mychess-1.0", &tree);
    let queries = dir.path().join("queries.txt");
    std::fs::write(&queries, "node:type=CUTNode\nsubtree:count(*)>0\n").unwrap();
    let out = ok(&["gtql", "-f", s(&queries), s(&gtf), "--format", "csv"]);
    assert!(out.contains("node:type=CUTNode,1,5,1,2,0,0"), "{out}");
    assert!(out.contains("subtree:count(*)>0,2,,0,1,0,0"), "{out}");
    let log = dir.path().join("t.log");
    std::fs::write(
        &log,
        "# a log\ngtql-log 1\nattr v int\nnodes\n0 - 4\n1 e2e4 5\n",
    )
    .unwrap();
    let out = ok(&[
        "gtql",
        "node: last_move = \"e2e4\"",
        s(&log),
        "--format",
        "csv",
    ]);
    assert!(out.contains(",1,e2e4,5"), "{out}");
    // `|` is not the flag test: the error says what is.
    let bad = cqldb(&["gtql", "node: type|CUTNode", s(&gtf)]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("'&'"));
}

#[test]
fn a_failed_import_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let gtf = dir.path().join("t.gtf");
    let tree = vec![
        Node {
            level: 0,
            mv: 0,
            vals: [0; 4],
        },
        Node {
            level: 1,
            mv: 1,
            vals: [0; 4],
        },
    ];
    write_gtf(&gtf, "e", &tree);
    // Break the root's child link: the import fails after it started writing.
    let mut bytes = std::fs::read(&gtf).unwrap();
    let body = bytes.len() - 2 * (16 + REC_SIZE);
    let root_link = body + (16 + REC_SIZE) + 4;
    bytes[root_link] = 9;
    std::fs::write(&gtf, &bytes).unwrap();
    let out = cqldb(&[
        "gtql",
        "import",
        s(&gtf),
        "--out",
        s(&dir.path().join("t.gtl")),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad child or sibling link"));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn bad_gtf_headers_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let gtf = dir.path().join("t.gtf");
    for (head, want) in [
        (
            "1 16 0 0\n",
            "gameVersion dataVersion recSize numAliases numFields",
        ),
        ("mychess-1.0 x 16 0 0\n", "dataVersion 'x' is not a number"),
        ("mychess-1.0 1 4 0 2\na 0 4\na 0 4\n", "declared twice"),
        ("mychess-1.0 1 4 0 1\nnode_id 0 4\n", "built-in"),
        ("mychess-1.0 1 4 0 1\nv 2 4\n", "does not fit"),
    ] {
        std::fs::write(&gtf, head).unwrap();
        let out = cqldb(&[
            "gtql",
            "import",
            s(&gtf),
            "--out",
            s(&dir.path().join("t.gtl")),
        ]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{head:?}: {err}");
    }
}

/// `gtlog`, the crate an engine links, writes files `import` reads back with the same ids.
#[test]
fn gtlog_files_keep_their_ids() {
    let dir = tempfile::tempdir().unwrap();
    let gtf = dir.path().join("g.gtf");
    let gtl = dir.path().join("g.gtl");
    let file = std::io::BufWriter::new(std::fs::File::create(&gtf).unwrap());
    let mut log = gtlog::Logger::new(
        file,
        "mychess-1.0",
        &[("Cut", 1)],
        &[("value", 2), ("ply", 1)],
    )
    .unwrap();
    // A tree of 3-way branching to depth 4, values from the order of entry.
    let mut logged = Vec::new();
    let mut entered = 0i64;
    fn walk(
        log: &mut gtlog::Logger<std::io::BufWriter<std::fs::File>>,
        ply: i64,
        entered: &mut i64,
        logged: &mut Vec<(u32, i64, i64, u32)>,
    ) {
        log.enter();
        *entered += 1;
        let value = *entered * 7 - 100;
        if ply < 4 {
            for _ in 0..3 {
                walk(log, ply + 1, entered, logged);
            }
        }
        let mv = if ply == 0 {
            0
        } else {
            value.rem_euclid(50) as u32
        };
        let id = log.exit(mv, &[value, ply]).unwrap();
        logged.push((id, value, ply, mv));
    }
    walk(&mut log, 0, &mut entered, &mut logged);
    log.finish().unwrap();
    // Post-order numbering: the ids are 1..=n in the order exits happened.
    let ids: Vec<u32> = logged.iter().map(|l| l.0).collect();
    assert_eq!(ids, (1..=logged.len() as u32).collect::<Vec<_>>());
    ok(&["gtql", "import", s(&gtf), "--out", s(&gtl)]);
    let out = ok(&["gtql", "node: ply >= 0", s(&gtl), "--format", "csv"]);
    let mut got: Vec<(u32, i64, i64)> = out
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[1].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect();
    got.sort_unstable();
    let want: Vec<(u32, i64, i64)> = logged.iter().map(|l| (l.0, l.1, l.2)).collect();
    assert_eq!(got, want);
    // The root is the last record, and its move is 0.
    let root = format!(
        "node: node_id = {} and last_move = 0 and ply = 0",
        logged.len()
    );
    assert!(ok(&["gtql", &root, s(&gtl)]).contains("# 1 nodes"));
}

#[test]
fn listings_are_complete_for_scripts_and_say_when_cut() {
    let dir = tempfile::tempdir().unwrap();
    let gtf = dir.path().join("t.gtf");
    let gtl = dir.path().join("t.gtl");
    let tree: Vec<Node> = (0..120)
        .map(|i| Node {
            level: u32::from(i > 0),
            mv: i,
            vals: [1, 0, 0, 0],
        })
        .collect();
    write_gtf(&gtf, "e", &tree);
    ok(&["gtql", "import", s(&gtf), "--out", s(&gtl)]);
    let q = "node: value = 0";
    // csv and json list everything by default.
    let csv = ok(&["gtql", q, s(&gtl), "--format", "csv"]);
    assert_eq!(csv.lines().count(), 121, "{csv}");
    let json: serde_json::Value =
        serde_json::from_str(ok(&["gtql", q, s(&gtl), "--format", "json"]).trim()).unwrap();
    assert_eq!(json["nodes"].as_array().unwrap().len(), 120);
    assert_eq!(
        (json["count"].as_u64(), json["truncated"].as_bool()),
        (Some(120), Some(false))
    );
    // A table shows 50 and says so.
    let table = ok(&["gtql", q, s(&gtl)]);
    assert!(
        table.contains("# listed the first 50 of 120 nodes"),
        "{table}"
    );
    // A limit the user set: json says so in a field, csv stays plain.
    let json: serde_json::Value =
        serde_json::from_str(ok(&["gtql", q, s(&gtl), "--format", "json", "--limit", "10"]).trim())
            .unwrap();
    assert_eq!(
        (json["listed"].as_u64(), json["truncated"].as_bool()),
        (Some(10), Some(true))
    );
    let csv = ok(&["gtql", q, s(&gtl), "--format", "csv", "--limit", "10"]);
    assert_eq!(csv.lines().count(), 11);
    assert!(!csv.contains('#'));
    let table = ok(&["gtql", q, s(&gtl), "--limit", "all"]);
    assert!(!table.contains("listed the first"));
    assert_eq!(table.lines().filter(|l| !l.starts_with('#')).count(), 121);
}

#[test]
fn deep_queries_are_errors_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let gtf = dir.path().join("t.gtf");
    let gtl = dir.path().join("t.gtl");
    write_gtf(
        &gtf,
        "e",
        &[Node {
            level: 0,
            mv: 0,
            vals: [0; 4],
        }],
    );
    ok(&["gtql", "import", s(&gtf), "--out", s(&gtl)]);
    let nots = format!("node: {}value = 0", "not ".repeat(100_000));
    let parens = format!(
        "node: {}value = 0{}",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    // (in a file: one argument may not be this long)
    let qfile = dir.path().join("q.gtql");
    for q in [nots, parens] {
        std::fs::write(&qfile, q).unwrap();
        let out = cqldb(&["gtql", "-f", s(&qfile), s(&gtl)]);
        // A query error (no crash: no panic's 101, no signal).
        assert!(matches!(out.status.code(), Some(1 | 2)), "{:?}", out.status);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("nested too deeply"), "{err}");
    }
    let ors = format!("node: {}", vec!["value = 0"; 100_000].join(" or "));
    std::fs::write(&qfile, ors).unwrap();
    assert!(ok(&["gtql", "-f", s(&qfile), s(&gtl)]).contains("# 1 nodes"));
}
