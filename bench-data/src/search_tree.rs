//! Synthetic alpha-beta-shaped search trees written as GTQL text logs, for load tests of
//! `cqldb gtql` (a stand-in until the logging searcher exists).
//!
//! The shape follows a principal-variation search: a PV node's first child is a PV node and the
//! others are searched as CUT nodes; CUT nodes' children are ALL nodes and vice versa; when the
//! remaining depth runs out a quiescence search of a few captures hangs below.

use std::io::{self, Write};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The header of the logs this module writes (the attributes the GTQL issue names).
pub const HEADER: &str = "gtql-log 1\n\
attr type enum PVNode=0 CUTNode=1 ALLNode=2\n\
attr flags flags QRootNode=1 QNode=2 NullMove=4 Research=8\n\
attr depth int\n\
attr ply int\n\
attr alpha int\n\
attr beta int\n\
attr value int\n\
attr best_move int\n\
nodes\n";

/// Writes a tree of about `nodes` nodes; returns the exact number written.
pub fn write_log(out: &mut impl Write, nodes: u64, seed: u64) -> io::Result<u64> {
    out.write_all(HEADER.as_bytes())?;
    let mut line = String::with_capacity(64);
    generate(nodes, seed, |level, mv, v| {
        line.clear();
        use std::fmt::Write as _;
        let _ = match mv {
            None => write!(line, "{level} -"),
            Some(m) => write!(line, "{level} m{m}"),
        };
        for x in v {
            let _ = write!(line, " {x}");
        }
        line.push('\n');
        out.write_all(line.as_bytes())
    })
}

/// The fields of [`write_gtf`]'s records (the attributes of [`HEADER`], 4 bytes each).
pub const GTF_FIELDS: [(&str, usize); 8] = [
    ("type", 4),
    ("flags", 4),
    ("depth", 4),
    ("ply", 4),
    ("alpha", 4),
    ("beta", 4),
    ("value", 4),
    ("best_move", 4),
];

/// The same tree as [`write_log`] with the same seed, as a GT-log `.gtf` file written through
/// `gtlog` (post-order; move `m{k}` logged as the integer k + 1). Returns the node count.
pub fn write_gtf(out: impl Write, nodes: u64, seed: u64) -> io::Result<u64> {
    let aliases = [
        ("PVNode", 0),
        ("CUTNode", 1),
        ("ALLNode", 2),
        ("QRootNode", 1),
        ("QNode", 2),
        ("NullMove", 4),
        ("Research", 8),
    ];
    let mut log = gtlog::Logger::new(out, "synthetic-1", &aliases, &GTF_FIELDS)?;
    // The open nodes' moves and values: a node is written when its subtree ends.
    let mut open: Vec<(u32, [i64; 8])> = Vec::new();
    let n = generate(nodes, seed, |level, mv, v| {
        while open.len() > level as usize {
            if let Some((m, vals)) = open.pop() {
                log.exit(m, &vals)?;
            }
        }
        log.enter();
        open.push((mv.map_or(0, |m| m + 1), v));
        Ok(())
    })?;
    while let Some((m, vals)) = open.pop() {
        log.exit(m, &vals)?;
    }
    log.finish()?;
    Ok(n)
}

/// Generates the tree in pre-order: each node's level, move number (none at the root) and
/// values in [`HEADER`]'s order. Returns the node count.
fn generate(
    nodes: u64,
    seed: u64,
    mut emit: impl FnMut(u32, Option<u32>, [i64; 8]) -> io::Result<()>,
) -> io::Result<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut written = 0u64;
    // Iterative deepening: one tree per iteration would be separate files; here the root's
    // children are the iterations' root moves, searched to growing depths until the budget ends.
    let mut stack: Vec<(u32, u8, i32, bool, bool)> = vec![(0, 0, 0, false, false)];
    let mut depth_limit = 3i32;
    while written < nodes {
        let Some((level, ty, depth, q, qroot)) = stack.pop() else {
            // Next iteration from the root's level-1 children.
            depth_limit += 1;
            stack.push((1, 0, depth_limit, false, false));
            continue;
        };
        let mut flags = 0;
        if q {
            flags |= 2;
        }
        if qroot {
            flags |= 1;
        }
        if !q && rng.random_bool(0.03) {
            flags |= 4;
        }
        if ty == 0 && rng.random_bool(0.05) {
            flags |= 8;
        }
        let alpha: i32 = rng.random_range(-300..300);
        let beta = if ty == 0 {
            alpha + rng.random_range(1..200)
        } else {
            alpha + 1
        };
        let value: i32 = rng.random_range(-400..400);
        let mv = (level > 0).then(|| rng.random_range(0..40u32));
        let best = rng.random_range(0..40);
        let values = [
            i32::from(ty),
            flags,
            depth,
            level as i32,
            alpha,
            beta,
            value,
            best,
        ]
        .map(i64::from);
        emit(level, mv, values)?;
        written += 1;
        // Children, pushed last-first so the first child comes out first.
        let kids: Vec<(u32, u8, i32, bool, bool)> = if q {
            let n = if level > 40 {
                0
            } else {
                rng.random_range(0..3u32).saturating_sub(1)
            };
            (0..n)
                .map(|_| (level + 1, 2, depth - 1, true, false))
                .collect()
        } else if depth <= 0 {
            let n = rng.random_range(0..4u32);
            (0..n)
                .map(|_| (level + 1, 2, depth - 1, true, true))
                .collect()
        } else {
            let n = match ty {
                0 => rng.random_range(2..8u32),
                1 => rng.random_range(1..3u32),
                _ => rng.random_range(3..10u32),
            };
            (0..n)
                .map(|i| {
                    let child_ty = match (ty, i) {
                        (0, 0) => 0,
                        (0, _) => 1,
                        (1, _) => 2,
                        _ => 1,
                    };
                    (level + 1, child_ty, depth - 1, false, false)
                })
                .collect()
        };
        for k in kids.into_iter().rev() {
            stack.push(k);
        }
    }
    Ok(written)
}
