//! Search-tree logs for GTQL: the schema of node attributes, the plain-text log format any
//! engine can write with printf, and the compact columnar `.gtl` file `cqldb gtql import` makes.
//!
//! Text log (version 1), one line each, `#` starts a comment line:
//!
//! ```text
//! gtql-log 1
//! const INF 32000
//! attr type enum PVNode=0 CUTNode=1 ALLNode=2
//! attr flags flags QRootNode=1 QNode=2 NullMove=4 Research=8
//! attr depth int
//! nodes
//! 0 - 0 0 5
//! 1 e2e4 1 0 4
//! ```
//!
//! After `nodes`, one line per node in depth-first pre-order: its level (root = 0, a child is one
//! deeper than its parent), the move that led to it (`-` for none), then one integer per
//! attribute in declaration order (enum constants and flag names may be written by name, flags
//! joined with `|`). `node_id` (pre-order number, root = 0) and `last_move` always exist.
//!
//! `.gtl` (version 2): `GTL2`, the header text (CRC-checked), then chunks of up to
//! [`CHUNK_NODES`] nodes, each a node count and one zstd stream with its own CRC per column
//! (levels; the chunk's move list and an index per node; one column per attribute, each stored
//! at the narrowest width that holds its range), then an end marker with the node count. A chunk is decoded on its own and
//! only the columns a query reads are unpacked, so a tree larger than memory streams.
//!
//! The module is split by concept: [`schema`] (attributes and constants), [`text`] (the text
//! log reader) and `block` (its one-pass reading of whole blocks of common lines), [`writer`]
//! (`.gtl` writing), [`reader`] (`.gtl` reading), [`gtf`] (the paper's GT-log files),
//! `packing` (column packing shared by writer and reader) and [`ReadAhead`] (reading a file
//! ahead on its own thread).

mod block;
pub mod gtf;
mod packing;
mod read_ahead;
pub mod reader;
pub mod schema;
pub mod text;
pub mod writer;

pub use gtf::import_gtf;
pub use read_ahead::ReadAhead;
pub use reader::{Chunk, GtlReader};
pub use schema::{AttrDef, AttrKind, NodeRow, TreeSchema};
pub use text::TextLogReader;
pub use writer::GtlWriter;

/// Nodes per `.gtl` chunk.
pub const CHUNK_NODES: usize = 1 << 16;
const MAGIC: &[u8; 4] = b"GTL2";

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# a tree\ngtql-log 1\nattr type enum PVNode=0 CUTNode=1 ALLNode=2\n\
attr flags flags QRootNode=1 QNode=2\nattr value int\nnodes\n0 - PVNode 0 5\n1 e2e4 CUTNode QRootNode|QNode -300000\n2 e7e5 2 2 7\n1 d2d4 ALLNode 0 1\n";

    #[test]
    fn text_log_round_trips_through_gtl() {
        let mut r = TextLogReader::new(LOG.as_bytes()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gtl");
        let mut w = GtlWriter::create(&path, r.schema()).unwrap();
        let mut rows = Vec::new();
        while let Some(n) = r.next_node().unwrap() {
            w.push(&n).unwrap();
            rows.push(n);
        }
        assert_eq!(w.finish().unwrap(), 4);
        assert_eq!(rows[1].values, vec![1, 3, -300000]);
        let mut g = GtlReader::open(&path).unwrap();
        assert_eq!(g.schema(), r.schema());
        let c = g.next_chunk(true, &[true, true, true]).unwrap().unwrap();
        assert_eq!(c.levels, vec![0, 1, 2, 1]);
        assert_eq!(c.moves, vec!["-", "e2e4", "e7e5", "d2d4"]);
        assert_eq!(c.cols[2], vec![5, -300000, 7, 1]);
        assert!(g.next_chunk(false, &[]).unwrap().is_none());
        assert_eq!(g.total, Some(4));
    }

    #[test]
    fn bad_logs_are_errors_with_lines() {
        for (log, want) in [
            ("gtql-log 2\n", "line 1"),
            ("gtql-log 1\nattr x float\nnodes\n", "line 2"),
            ("gtql-log 1\nattr x int\nnodes\n1 - 0\n", "line 4"),
            ("gtql-log 1\nattr x int\nnodes\n0 - 0\n2 a 0\n", "line 5"),
            ("gtql-log 1\nattr x int\nnodes\n0 - zz\n", "line 4"),
        ] {
            let err = TextLogReader::new(log.as_bytes()).and_then(|mut r| {
                while r.next_node()?.is_some() {}
                Ok(())
            });
            let msg = err.unwrap_err().to_string();
            assert!(msg.contains(want), "{log:?}: {msg}");
        }
    }

    #[test]
    fn corrupt_gtl_is_an_error() {
        let mut r = TextLogReader::new(LOG.as_bytes()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gtl");
        let mut w = GtlWriter::create(&path, r.schema()).unwrap();
        while let Some(n) = r.next_node().unwrap() {
            w.push(&n).unwrap();
        }
        w.finish().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 20;
        bytes[last] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let mut g = GtlReader::open(&path).unwrap();
        assert!(g.next_chunk(true, &[true, true, true]).is_err());
    }

    #[test]
    fn gtf_post_order_becomes_pre_order() {
        // Line 1 starts with the engine's name for itself, not a number.
        let mut f = b"mychess-1.0 1 2 1 1\nPVNode 0\nval 0 2\n".to_vec();
        let rec = |f: &mut Vec<u8>, id: u32, last: u32, prev: u32, mv: u32, val: i16| {
            for x in [id, last, prev, mv] {
                f.extend_from_slice(&x.to_le_bytes());
            }
            f.extend_from_slice(&val.to_le_bytes());
        };
        rec(&mut f, 1, 0, 0, 11, 5);
        rec(&mut f, 2, 1, 0, 10, -3);
        rec(&mut f, 3, 0, 2, 20, 7);
        rec(&mut f, 4, 3, 0, 0, 1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gtf");
        std::fs::write(&path, &f).unwrap();
        let mut got = Vec::new();
        let mut consts = Vec::new();
        let (_, n) = import_gtf(&path, |s, level, mv, values| {
            consts = s.constants();
            got.push((
                level,
                String::from_utf8_lossy(mv).into_owned(),
                values[0],
                values[1],
            ));
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 4);
        assert_eq!(consts, vec![("PVNode".to_owned(), 0)]);
        assert_eq!(
            got,
            vec![
                (0, "0".to_owned(), 1, 4),
                (1, "10".to_owned(), -3, 2),
                (2, "11".to_owned(), 5, 1),
                (1, "20".to_owned(), 7, 3)
            ]
        );
        // A header without the engine's name, or with a name where a number belongs, is an
        // error naming the line.
        for head in ["1 2 1 1\n", "mychess 1 two 1 1\n"] {
            std::fs::write(&path, head).unwrap();
            let e = import_gtf(&path, |_, _, _, _| Ok(()))
                .unwrap_err()
                .to_string();
            assert!(e.contains("header line"), "{e}");
        }
        // A truncated body is an error, not a panic.
        std::fs::write(&path, &f[..f.len() - 3]).unwrap();
        assert!(import_gtf(&path, |_, _, _, _| Ok(())).is_err());
        // So are field offsets and sizes at the ends of the integers.
        for field in [
            format!("val {} 2", u64::MAX),
            format!("val {} 1", u64::MAX - 1),
            format!("val 0 {}", u64::MAX),
        ] {
            let head = format!("mychess-1.0 1 2 1 1\nPVNode 0\n{field}\n");
            std::fs::write(&path, [head.as_bytes(), &f[f.len() - 18..]].concat()).unwrap();
            let e = import_gtf(&path, |_, _, _, _| Ok(())).unwrap_err();
            assert!(e.to_string().contains("does not fit"), "{field}: {e}");
        }
    }
}
