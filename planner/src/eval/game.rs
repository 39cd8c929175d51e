//! A game tree as the evaluator sees it: position rows in id order, tags, children lists,
//! and which positions the traversal may visit.

use cqldb_storage::{CommentPlacement, MoveKind, NO_PARENT, PositionRecord};

/// One game ready for evaluation.
pub struct Game {
    /// 1-based number of the game in its input.
    pub number: u64,
    /// The tree in position-id order.
    pub positions: Vec<PositionRecord>,
    /// Tag pairs in input order.
    pub tags: Vec<(String, String)>,
    /// Children lists and subtree ends, built on first use: a query that only looks at each
    /// position (most do) never needs them, and building them cost a twentieth of a full scan.
    tree: std::cell::OnceCell<Tree>,
    /// Whether variations are visited; if not, only main-line positions exist for queries.
    pub variations: bool,
    /// Piece identities per position, computed on first use.
    piece_ids: std::cell::OnceCell<Vec<[u8; 64]>>,
    /// The game's own comments (position, placement, text), for output.
    pub comments: Vec<(u32, CommentPlacement, String)>,
    /// The game's NAGs (position, NAG), for output.
    pub nags: Vec<(u32, u8)>,
    /// The result as read (Result tag, else termination marker), for output.
    pub result: Option<String>,
    /// The termination marker after the main line, if read (for output, where it wins over
    /// the tag, as in the reference's output).
    pub termination: Option<String>,
}

impl Game {
    /// Wraps a game's rows.
    pub fn new(
        number: u64,
        positions: Vec<PositionRecord>,
        tags: Vec<(String, String)>,
        variations: bool,
    ) -> Self {
        Self {
            number,
            positions,
            tags,
            tree: std::cell::OnceCell::new(),
            variations,
            piece_ids: std::cell::OnceCell::new(),
            comments: Vec::new(),
            nags: Vec::new(),
            result: None,
            termination: None,
        }
    }

    /// Sets the termination marker read from the game's text.
    pub fn with_termination(mut self, termination: Option<String>) -> Self {
        self.termination = termination;
        self
    }

    /// The result written when the game is output: its termination marker, else its Result
    /// tag, else the result as read.
    pub fn output_result(&self) -> String {
        self.termination
            .clone()
            .or_else(|| self.tag("Result").map(str::to_owned))
            .or_else(|| self.result.clone())
            .unwrap_or_else(|| "*".to_owned())
    }

    /// Sets the result as read (used when the game has no Result tag).
    pub fn with_result(mut self, result: Option<String>) -> Self {
        self.result = result;
        self
    }

    /// Adds the game's comments and NAGs (needed only to write the game out).
    pub fn with_notes(
        mut self,
        comments: Vec<(u32, CommentPlacement, String)>,
        nags: Vec<(u32, u8)>,
    ) -> Self {
        self.comments = comments;
        self.nags = nags;
        self
    }

    fn tree(&self) -> &Tree {
        self.tree.get_or_init(|| Tree::of(&self.positions))
    }

    /// Every child of `id` in move order, visited or not (output writes whole trees).
    pub fn all_children(&self, id: u32) -> &[u32] {
        let (s, e) = (
            self.tree().child_start[id as usize] as usize,
            self.tree().child_start[id as usize + 1] as usize,
        );
        &self.tree().children[s..e]
    }

    /// Number of positions in the tree.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the tree is empty (never for a read game: the root always exists).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// CQL's move number of a position: counted from 1 at the root, ignoring a FEN's fullmove
    /// field (as the reference does).
    pub fn move_number(&self, id: u32) -> i64 {
        let root_black = self.positions[0].turn() == shakmaty::Color::Black;
        1 + (i64::from(self.positions[id as usize].ply) + i64::from(root_black)) / 2
    }

    /// Whether queries may see position `id`.
    pub fn visible(&self, id: u32) -> bool {
        self.positions
            .get(id as usize)
            .is_some_and(|p| self.variations || p.depth == 0)
    }

    /// The visible children of `id`, in move order.
    pub fn children(&self, id: u32) -> &[u32] {
        let (s, e) = (
            self.tree().child_start[id as usize] as usize,
            self.tree().child_start[id as usize + 1] as usize,
        );
        let all = &self.tree().children[s..e];
        if self.variations {
            all
        } else {
            &all[..all.len().min(1)]
        }
    }

    /// The parent of `id`, if any.
    pub fn parent(&self, id: u32) -> Option<u32> {
        let p = self.positions[id as usize].parent;
        (p != NO_PARENT).then_some(p)
    }

    /// One past the last id in `id`'s subtree.
    pub fn subtree_end(&self, id: u32) -> u32 {
        self.tree().subtree_end[id as usize]
    }

    /// Whether `a` is `b` or an ancestor of it.
    pub fn is_ancestor_or_self(&self, a: u32, b: u32) -> bool {
        a <= b && b < self.subtree_end(a)
    }

    /// Latest common ancestor.
    pub fn lca(&self, mut a: u32, mut b: u32) -> u32 {
        while !self.is_ancestor_or_self(a, b) {
            match self.parent(a) {
                Some(p) => a = p,
                None => return 0,
            }
        }
        let _ = &mut b;
        a
    }

    /// The value of a tag, if present.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags_named(name).next()
    }

    /// Every value of the tags named `name`, in order (a malformed game may repeat a tag).
    pub fn tags_named<'a, 'n>(
        &'a self,
        name: &'n str,
    ) -> impl Iterator<Item = &'a str> + use<'a, 'n> {
        self.tags
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The identity (1-based, 0 = none) of the piece on each square, per position. A piece keeps
    /// its identity when it moves or promotes.
    pub fn piece_ids(&self) -> &[[u8; 64]] {
        self.piece_ids.get_or_init(|| {
            let mut out: Vec<[u8; 64]> = Vec::with_capacity(self.positions.len());
            for (id, rec) in self.positions.iter().enumerate() {
                let Some(parent) = self.parent(id as u32) else {
                    let mut ids = [0u8; 64];
                    let occ = rec.board.0[0] | rec.board.0[1];
                    let mut next = 1u8;
                    for (sq, slot) in ids.iter_mut().enumerate() {
                        if occ >> sq & 1 == 1 {
                            *slot = next;
                            next = next.saturating_add(1);
                        }
                    }
                    out.push(ids);
                    continue;
                };
                let mut ids = out[parent as usize];
                let mv = rec.mv;
                if let (Some(from), Some(to), Some(kind)) = (mv.from(), mv.to(), mv.kind()) {
                    let (f, t) = (from as usize, to as usize);
                    match kind {
                        MoveKind::Null => {}
                        MoveKind::Castle => {
                            let (king, rook) = (ids[f], ids[t]);
                            ids[f] = 0;
                            ids[t] = 0;
                            let rank = f / 8 * 8;
                            let king_side = t > f;
                            ids[rank + if king_side { 6 } else { 2 }] = king;
                            ids[rank + if king_side { 5 } else { 3 }] = rook;
                        }
                        MoveKind::EnPassant => {
                            ids[t] = ids[f];
                            ids[f] = 0;
                            ids[f / 8 * 8 + t % 8] = 0;
                        }
                        MoveKind::Normal => {
                            ids[t] = ids[f];
                            ids[f] = 0;
                        }
                    }
                }
                out.push(ids);
            }
            out
        })
    }
}

/// A game's children lists and subtree ends.
struct Tree {
    /// `children[child_start[p]..child_start[p + 1]]` are p's children in move order.
    children: Vec<u32>,
    child_start: Vec<u32>,
    /// One past the last id of each position's subtree (ids of a subtree are contiguous).
    subtree_end: Vec<u32>,
}

impl Tree {
    fn of(positions: &[PositionRecord]) -> Self {
        let n = positions.len();
        let mut count = vec![0u32; n + 1];
        for p in positions {
            if p.parent != NO_PARENT {
                count[p.parent as usize + 1] += 1;
            }
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let child_start = count.clone();
        let mut fill = count;
        let mut children = vec![0u32; n.saturating_sub(1)];
        // Ids are pre-order, so visiting them in order lists each parent's children in move order.
        for (id, p) in positions.iter().enumerate() {
            if p.parent != NO_PARENT {
                let slot = &mut fill[p.parent as usize];
                if let Some(c) = children.get_mut(*slot as usize) {
                    *c = id as u32;
                }
                *slot += 1;
            }
        }
        let mut subtree_end: Vec<u32> = (1..=n as u32).collect();
        for id in (0..n).rev() {
            let p = positions[id].parent;
            if p != NO_PARENT {
                let end = subtree_end[id];
                let pe = &mut subtree_end[p as usize];
                *pe = (*pe).max(end);
            }
        }
        Tree {
            children,
            child_start,
            subtree_end,
        }
    }
}
