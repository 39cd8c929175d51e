//! Synthetic games: random legal moves with random, possibly nested variations, rendered as PGN.
//!
//! Every game comes with its expected tree (positions in the reference pre-order with parent,
//! child index, ply, depth and FEN), computed here independently of the indexer, so tests can
//! compare. Deterministic for a given seed; any number of games can be streamed.

use std::fmt::Write as _;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{Chess, Color, EnPassantMode, Position};

/// Shape of the generated games.
#[derive(Copy, Clone, Debug)]
pub struct SynthOptions {
    /// Longest main line, in plies.
    pub max_plies: u32,
    /// Chance that a move gets an alternative (a variation).
    pub variation_rate: f64,
    /// Longest variation, in plies.
    pub max_variation_plies: u32,
    /// Chance that a move is followed by a comment.
    pub comment_rate: f64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        Self {
            max_plies: 120,
            variation_rate: 0.05,
            max_variation_plies: 12,
            comment_rate: 0.02,
        }
    }
}

/// One position of a generated game, in pre-order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SynthNode {
    /// Pre-order id of the parent (`None` for the root).
    pub parent: Option<usize>,
    /// Index of the move that reached it among the parent's moves.
    pub child_index: usize,
    /// Number of moves from it.
    pub children: usize,
    /// Plies from the root.
    pub ply: u32,
    /// Secondary moves on the path.
    pub depth: u32,
    /// The position as FEN (legal en-passant squares only).
    pub fen: String,
}

/// A generated game: its PGN and its expected tree.
#[derive(Clone, Debug)]
pub struct SynthGame {
    /// PGN text, tags included, ending in a newline.
    pub pgn: String,
    /// The tree in pre-order.
    pub nodes: Vec<SynthNode>,
}

struct ArenaNode {
    parent: Option<usize>,
    children: Vec<usize>,
    pos: Chess,
    san: String,
    comment: bool,
}

/// A seeded game generator.
pub struct Generator {
    rng: StdRng,
    options: SynthOptions,
    count: u64,
}

impl Generator {
    /// A generator with a seed.
    pub fn new(seed: u64, options: SynthOptions) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
            options,
            count: 0,
        }
    }

    fn random_line(&mut self, arena: &mut Vec<ArenaNode>, from: usize, plies: u32) -> Vec<usize> {
        let mut line = Vec::new();
        let mut at = from;
        for _ in 0..plies {
            let moves = arena[at].pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let taken: Vec<_> = arena[at]
                .children
                .iter()
                .map(|&c| arena[c].san.clone())
                .collect();
            let m = moves[self.rng.random_range(0..moves.len())];
            let san = San::from_move(&arena[at].pos, m).to_string();
            if taken.contains(&san) {
                break;
            }
            let mut pos = arena[at].pos.clone();
            pos.play_unchecked(m);
            let suffix = if pos.is_checkmate() {
                "#"
            } else if pos.is_check() {
                "+"
            } else {
                ""
            };
            arena.push(ArenaNode {
                parent: Some(at),
                children: Vec::new(),
                pos,
                san: format!("{san}{suffix}"),
                comment: self.rng.random_bool(self.options.comment_rate),
            });
            let id = arena.len() - 1;
            arena[at].children.push(id);
            line.push(id);
            at = id;
        }
        line
    }

    /// The next game.
    pub fn game(&mut self) -> SynthGame {
        self.count += 1;
        let mut arena = vec![ArenaNode {
            parent: None,
            children: Vec::new(),
            pos: Chess::default(),
            san: String::new(),
            comment: false,
        }];
        let plies = self.rng.random_range(1..=self.options.max_plies.max(1));
        let mut work = vec![self.random_line(&mut arena, 0, plies)];
        // Add alternatives line by line (a work list, not recursion).
        while let Some(line) = work.pop() {
            for &n in &line {
                // Variations branch: cap the tree so the expected size stays finite.
                if arena.len() < 4000 && self.rng.random_bool(self.options.variation_rate) {
                    let Some(parent) = arena[n].parent else {
                        continue;
                    };
                    let len = self
                        .rng
                        .random_range(1..=self.options.max_variation_plies.max(1));
                    let alt = self.random_line(&mut arena, parent, len);
                    if !alt.is_empty() {
                        work.push(alt);
                    }
                }
            }
        }
        let pgn = self.render(&arena);
        SynthGame {
            pgn,
            nodes: expected_nodes(&arena),
        }
    }

    fn render(&mut self, arena: &[ArenaNode]) -> String {
        enum Task {
            Move(usize, bool),
            Text(&'static str),
        }
        let mut out = String::new();
        let _ = write!(
            out,
            "[Event \"Synthetic\"]\n[Site \"cqldb\"]\n[Date \"2026.01.01\"]\n[Round \"{}\"]\n[White \"W{}\"]\n[Black \"B{}\"]\n[Result \"*\"]\n\n",
            self.count,
            self.count % 97,
            self.count % 89
        );
        let mut stack: Vec<Task> = arena[0]
            .children
            .first()
            .map(|&c| vec![Task::Move(c, true)])
            .unwrap_or_default();
        let mut col = 0usize;
        while let Some(task) = stack.pop() {
            let piece = match task {
                Task::Text(t) => t.to_owned(),
                Task::Move(n, force) => {
                    let node = &arena[n];
                    let Some(parent) = node.parent else { continue };
                    let before = &arena[parent].pos;
                    let number = before.fullmoves().get();
                    let mut s = match before.turn() {
                        Color::White => format!("{number}. "),
                        Color::Black if force => format!("{number}... "),
                        Color::Black => String::new(),
                    };
                    s.push_str(&node.san);
                    if node.comment {
                        s.push_str(" {a comment}");
                    }
                    let siblings: &[usize] = if arena[parent].children.first() == Some(&n) {
                        &arena[parent].children[1..]
                    } else {
                        &[]
                    };
                    if let Some(&next) = node.children.first() {
                        stack.push(Task::Move(next, !siblings.is_empty() || node.comment));
                    }
                    for &alt in siblings.iter().rev() {
                        stack.push(Task::Text(")"));
                        stack.push(Task::Move(alt, true));
                        stack.push(Task::Text("("));
                    }
                    s
                }
            };
            if col > 0 && col + piece.len() + 1 > 79 {
                out.push('\n');
                col = 0;
            } else if col > 0 {
                out.push(' ');
                col += 1;
            }
            col += piece.len();
            out.push_str(&piece);
        }
        out.push_str(if col > 0 { " *\n\n" } else { "*\n\n" });
        out
    }
}

fn expected_nodes(arena: &[ArenaNode]) -> Vec<SynthNode> {
    let mut order = Vec::with_capacity(arena.len());
    let mut stack = vec![0usize];
    while let Some(n) = stack.pop() {
        order.push(n);
        stack.extend(arena[n].children.iter().rev());
    }
    let mut id_of = vec![0usize; arena.len()];
    for (i, &n) in order.iter().enumerate() {
        id_of[n] = i;
    }
    let mut out: Vec<SynthNode> = Vec::with_capacity(order.len());
    for &n in &order {
        let node = &arena[n];
        let (parent, child_index, ply, depth) = match node.parent {
            None => (None, 0, 0, 0),
            Some(p) => {
                let ci = arena[p].children.iter().position(|&c| c == n).unwrap_or(0);
                let pr = &out[id_of[p]];
                (Some(id_of[p]), ci, pr.ply + 1, pr.depth + u32::from(ci > 0))
            }
        };
        out.push(SynthNode {
            parent,
            child_index,
            children: node.children.len(),
            ply,
            depth,
            fen: Fen::from_position(&node.pos, EnPassantMode::Legal).to_string(),
        });
    }
    out
}
