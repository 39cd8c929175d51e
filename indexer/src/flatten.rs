//! Turns a [`GameTree`] into index rows: position ids in the reference CQL order (pre-order, primary
//! child first, each child's whole subtree before its next sibling) and every per-position column.

use std::cell::Cell;
use std::thread::LocalKey;

use cqldb_storage::{
    Bitboards, CommentRef, IssueRecord, MaterialSignature, NO_PARENT, NagRef, NewGame,
    PositionFlags, PositionRecord,
};
use shakmaty::{Color, EnPassantMode, Position};

use crate::split::{RawGame, line_col};
use crate::tags::game_meta;
use crate::tree::{GameTree, Node, build_into};

/// Pre-order of the tree: `order[i]` is the node with position id `i`.
pub fn preorder(tree: &GameTree) -> Vec<u32> {
    let mut order = Vec::with_capacity(tree.nodes.len());
    if tree.nodes.is_empty() {
        return order;
    }
    // Most games have no variations: their nodes are already in pre-order.
    if tree.nodes.iter().all(|n| n.children <= 1) {
        order.extend(0..tree.nodes.len() as u32);
        return order;
    }
    // Explicit stack of "next sibling to visit" (no recursion: variations nest arbitrarily deep).
    let mut stack = vec![0u32];
    while let Some(n) = stack.pop() {
        order.push(n);
        let node = &tree.nodes[n as usize];
        if node.next_sibling != NO_PARENT {
            stack.push(node.next_sibling);
        }
        if node.first_child != NO_PARENT {
            stack.push(node.first_child);
        }
    }
    order
}

/// The position rows of a tree, in position-id order, in `out` (emptied first), and the node →
/// id map.
pub fn records(tree: &GameTree, mut out: Vec<PositionRecord>) -> (Vec<PositionRecord>, Vec<u32>) {
    let order = preorder(tree);
    let mut id_of = vec![0u32; tree.nodes.len()];
    for (id, &n) in order.iter().enumerate() {
        id_of[n as usize] = id as u32;
    }
    out.clear();
    out.reserve(order.len());
    for &n in &order {
        let node = &tree.nodes[n as usize];
        let pos = &node.pos;
        let (parent, child_index, ply, depth, vml) = if node.parent == NO_PARENT {
            (NO_PARENT, 0, 0, 0, true)
        } else {
            let ci = node.child_index;
            let prec = &out[id_of[node.parent as usize] as usize];
            let parent_vml = prec.flags.contains(PositionFlags::VIRTUAL_MAINLINE);
            let vml = parent_vml && (prec.turn() == Color::Black || ci == 0);
            (
                id_of[node.parent as usize],
                ci,
                prec.ply + 1,
                prec.depth + u32::from(ci > 0),
                vml,
            )
        };
        let mut flags = PositionFlags::default();
        let terminal = node.children == 0;
        flags.set(PositionFlags::WHITE_TO_MOVE, pos.turn() == Color::White);
        flags.set(PositionFlags::INITIAL, parent == NO_PARENT);
        flags.set(PositionFlags::TERMINAL, terminal);
        flags.set(PositionFlags::MAINLINE, depth == 0);
        flags.set(PositionFlags::VARIATION, depth > 0);
        flags.set(PositionFlags::VIRTUAL_MAINLINE, vml);
        flags.set(PositionFlags::CHECK, node.check);
        // Mate and stalemate need move generation; only a terminal position can be either.
        if terminal {
            flags.set(PositionFlags::MATE, pos.is_checkmate());
            flags.set(PositionFlags::STALEMATE, pos.is_stalemate());
        }
        flags.set(PositionFlags::TRUNCATED, node.truncated);
        out.push(PositionRecord {
            parent,
            child_index,
            children: node.children,
            ply,
            depth,
            move_number: pos.fullmoves().get(),
            flags,
            mv: node.mv,
            castling: pos.castles().castling_rights(),
            ep_square: pos.ep_square(EnPassantMode::Legal),
            halfmove_clock: pos.halfmoves(),
            zobrist: 0,
            material: MaterialSignature::default(),
            board: Bitboards::of(pos.board()),
        });
        // Material changes only with a capture or promotion, so it is taken from the parent's
        // row otherwise. The Zobrist hash is left at 0: nothing stores it (the block decoder
        // derives it), and computing it here cost 1 % of ingest.
        let id = out.len() - 1;
        let changes = node.mv.capture().is_some() || node.mv.promotion().is_some();
        out[id].material = if parent == NO_PARENT || changes {
            MaterialSignature::of(pos.board())
        } else {
            out[parent as usize].material
        };
    }
    (out, id_of)
}

/// Problems kept per game: junk can make one per token, and a list nobody reads must not grow
/// with the input (the rest are counted in one last entry).
pub const MAX_ISSUES: usize = 100;

thread_local! {
    /// The node buffer of this thread's last game, for its next one (see [`build_into`]).
    static SPARE_NODES: Cell<Vec<Node>> = const { Cell::new(Vec::new()) };
    /// A position buffer handed back by [`spare_positions`], for this thread's next game.
    static SPARE_POSITIONS: Cell<Vec<PositionRecord>> = const { Cell::new(Vec::new()) };
}

/// Keeps `buffer` in `spare` for this thread's next game, unless it is longer than 4,096 rows:
/// one huge game must not pin its memory in every parser thread for the rest of a build.
fn keep_spare<T: 'static>(spare: &'static LocalKey<Cell<Vec<T>>>, buffer: Vec<T>) {
    if buffer.capacity() <= 4096 {
        spare.set(buffer);
    }
}

/// Keeps a game's emptied position buffer (from [`cqldb_storage::BatchEncoder::push`]) for the
/// next game [`index_game`] reads on this thread. Allocating one per game, and the node buffer
/// likewise, cost about 1.5 % of a build's CPU each (BENCHMARKS.md, twenty-fourth session).
pub fn spare_positions(positions: Vec<PositionRecord>) {
    keep_spare(&SPARE_POSITIONS, positions);
}

/// Reads one raw game into a [`NewGame`] ready for storage.
pub fn index_game(raw: RawGame, file: u32) -> NewGame {
    let mut tree = build_into(&raw.text, SPARE_NODES.take());
    let (positions, id_of) = records(&tree, SPARE_POSITIONS.take());
    let mut issues: Vec<IssueRecord> = tree
        .issues
        .iter()
        .take(MAX_ISSUES)
        .map(|i| {
            let (line, column) = line_col(&raw.text, raw.line, i.offset);
            IssueRecord {
                game: 0,
                line,
                column,
                kind: i.kind.to_owned(),
                message: i.message.clone(),
            }
        })
        .collect();
    if tree.issues.len() > MAX_ISSUES {
        let last = &tree.issues[MAX_ISSUES];
        let (line, column) = line_col(&raw.text, raw.line, last.offset);
        issues.push(IssueRecord {
            game: 0,
            line,
            column,
            kind: "more-problems".into(),
            message: format!(
                "{} more problems from here on are not listed",
                tree.issues.len() - MAX_ISSUES
            ),
        });
    }
    if raw.oversized {
        let (line, column) = line_col(&raw.text, raw.line, raw.text.len());
        issues.push(IssueRecord {
            game: 0,
            line,
            column,
            kind: "game-too-large".into(),
            message: format!(
                "game text exceeds {} MiB; cut here",
                crate::split::MAX_GAME_BYTES >> 20
            ),
        });
    }
    let comments = tree
        .comments
        .iter()
        .map(|c| CommentRef {
            position: id_of[c.node as usize],
            placement: c.placement,
            start: c.start as u32,
            len: c.len as u32,
        })
        .collect();
    let nags = tree
        .nags
        .iter()
        .map(|&(n, nag)| NagRef {
            position: id_of[n as usize],
            nag,
        })
        .collect();
    keep_spare(&SPARE_NODES, std::mem::take(&mut tree.nodes));
    NewGame {
        file,
        line: raw.line,
        byte_offset: raw.offset,
        meta: Some(game_meta(&tree.tags, tree.termination.as_deref())),
        tags: tree.tags,
        positions,
        comments,
        nags,
        issues,
        detached_variations: tree.detached_variations,
        text: raw.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawGame {
        RawGame {
            text: text.as_bytes().to_vec(),
            line: 1,
            ..RawGame::default()
        }
    }

    /// What a thread with no buffers to hand on reads from `text`.
    fn fresh(text: &'static str) -> NewGame {
        std::thread::spawn(move || index_game(raw(text), 0))
            .join()
            .expect("indexing thread")
    }

    #[test]
    fn buffers_handed_on_leave_no_trace_in_the_next_game() {
        // Long, then short, then with a start position and variations, then broken: a buffer
        // that kept anything of the game before would show in the next one's rows.
        let games = [
            "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 (3... Nf6 4. O-O {Berlin} Nxe4) 4. Ba4 Nf6 5. O-O *",
            "1. d4 $1 *",
            "[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n\n1. e4 (1. e3 Kd7) Kf7 2. Kf2 *",
            "1. e4 e5 2. Qxf7 *",
            "*",
        ];
        for round in 0..2 {
            for text in games {
                let want = fresh(text);
                let got = index_game(raw(text), 0);
                assert_eq!(got.positions, want.positions, "round {round}: {text}");
                assert_eq!(got.comments, want.comments, "round {round}: {text}");
                assert_eq!(got.nags, want.nags, "round {round}: {text}");
                // As the pipeline does: the buffer comes back (the encoder empties it; a full
                // one must not matter either).
                spare_positions(got.positions);
            }
        }
    }
}
