//! Builds one game's tree from its tokens, playing every move with shakmaty.
//!
//! Variations are handled with an explicit stack of open lines (no recursion, so a 10,000-deep
//! nesting is fine). A broken move cuts only the line it stands in: the rest of that variation is
//! skipped, the main line and other variations go on. Following the reference CQL, a variation that
//! is an alternative to the *first* move of another variation is kept in the text but is not part of
//! the tree (it gets no positions); such variations are counted as "detached".

use cqldb_storage::{CommentPlacement, MoveCode, NO_PARENT};
use shakmaty::san::{San, SanError, SanPlus};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen};

use crate::lexer::{Lexer, Token};
use crate::tags::{decode_text, excerpt, tag};

/// A problem in the game text, at a byte offset of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// Byte offset in the game text.
    pub offset: usize,
    /// Short kind, e.g. `illegal-move`.
    pub kind: &'static str,
    /// Explanation.
    pub message: String,
}

/// A node of the tree in creation (text) order.
#[derive(Clone, Debug)]
pub struct Node {
    /// Parent node index, [`NO_PARENT`] for the root.
    pub parent: u32,
    /// First child (the primary move's), [`NO_PARENT`] if none. Children form a sibling list in
    /// PGN order, so building a tree allocates nothing per node beyond the node itself.
    pub first_child: u32,
    /// Last child, [`NO_PARENT`] if none (for appending).
    pub last_child: u32,
    /// Next sibling, [`NO_PARENT`] if none.
    pub next_sibling: u32,
    /// Number of children.
    pub children: u32,
    /// Index of this node among its parent's children (its move index).
    pub child_index: u32,
    /// The position.
    pub pos: Chess,
    /// The move that reached it.
    pub mv: MoveCode,
    /// A line was cut here by a broken move.
    pub truncated: bool,
    /// The side to move is in check (`pos.is_check()`, computed once when the node is made).
    pub check: bool,
}

/// A comment attached to a node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NodeComment {
    /// Node index.
    pub node: u32,
    /// Before or after the node's move.
    pub placement: CommentPlacement,
    /// Body offset in the game text.
    pub start: usize,
    /// Body length.
    pub len: usize,
}

/// Everything read from one game's text.
#[derive(Clone, Debug, Default)]
pub struct GameTree {
    /// Tag pairs in input order.
    pub tags: Vec<(String, String)>,
    /// Nodes in creation order; node 0 is the root. Empty if the start position was unusable.
    pub nodes: Vec<Node>,
    /// Comments.
    pub comments: Vec<NodeComment>,
    /// NAGs as (node, nag).
    pub nags: Vec<(u32, u8)>,
    /// Problems found.
    pub issues: Vec<Issue>,
    /// Variations in the text that are not in the tree.
    pub detached_variations: u32,
    /// The termination marker, if any.
    pub termination: Option<String>,
}

struct Line {
    last: u32,
    moves: u32,
    skip: bool,
    open_offset: usize,
    pending: Vec<(usize, usize)>,
}

fn root_position(tags: &[(String, String)]) -> Result<Chess, (&'static str, String)> {
    let variant = tag(tags, "Variant").map(|v| v.trim().to_ascii_lowercase());
    let chess960 = match variant.as_deref() {
        None | Some("" | "standard" | "from position" | "normal") => false,
        Some("chess960" | "chess 960" | "960" | "fischerandom" | "fischer random" | "frc") => true,
        Some(other) => {
            return Err((
                "unsupported-variant",
                format!("variant \"{other}\" is not standard chess; moves not indexed"),
            ));
        }
    };
    let Some(fen) = tag(tags, "FEN") else {
        return Ok(Chess::default());
    };
    let parsed = Fen::from_ascii(fen.trim().as_bytes())
        .map_err(|e| ("bad-fen", format!("bad FEN \"{fen}\": {e}")))?;
    let modes: &[CastlingMode] = if chess960 {
        &[CastlingMode::Chess960]
    } else {
        &[CastlingMode::Standard, CastlingMode::Chess960]
    };
    let mut last_err = String::new();
    for &mode in modes {
        // Positions that are only dubious (a stale en-passant square, a study's extra
        // material) are accepted.
        match cqldb_storage::lenient_position(parsed.clone().into_setup(), mode) {
            Ok(pos) => return Ok(pos),
            Err(e) => last_err = e,
        }
    }
    Err(("bad-fen", format!("bad FEN \"{fen}\": {last_err}")))
}

/// Reads a game's text into a tree.
pub fn build(text: &[u8]) -> GameTree {
    build_into(text, Vec::new())
}

/// [`build`] with its nodes in `nodes` (emptied first): a parser thread hands each game the
/// buffer of the one before instead of allocating and freeing one per game.
pub fn build_into(text: &[u8], mut nodes: Vec<Node>) -> GameTree {
    nodes.clear();
    // About one node per 6 bytes of plain movetext; capped, as comment-heavy games have far
    // fewer (over-reserving made the kernel zero pages that were never used).
    nodes.reserve((text.len() / 6).clamp(1, 512));
    let mut g = GameTree {
        nodes,
        ..GameTree::default()
    };
    let mut tokens = Lexer::new(text).peekable();
    let mut pre_comments = Vec::new();
    // Tag section (comments before it are kept for the root).
    while let Some((tok, off)) = tokens.peek() {
        match tok {
            Token::Tag { name, value } => {
                g.tags.push((decode_text(name), decode_text(value)));
            }
            Token::BadTag => g.issues.push(Issue {
                offset: *off,
                kind: "bad-tag",
                message: "malformed tag pair; line ignored".into(),
            }),
            Token::Comment { start, len, .. } if g.tags.is_empty() => {
                pre_comments.push((*start, *len));
            }
            _ => break,
        }
        tokens.next();
    }
    let root = match root_position(&g.tags) {
        Ok(p) => p,
        Err((kind, message)) => {
            let offset = find_tag_offset(text, if kind == "bad-fen" { "FEN" } else { "Variant" });
            g.issues.push(Issue {
                offset,
                kind,
                message,
            });
            return g;
        }
    };
    g.nodes.push(Node {
        parent: NO_PARENT,
        first_child: NO_PARENT,
        last_child: NO_PARENT,
        next_sibling: NO_PARENT,
        children: 0,
        child_index: 0,
        check: root.is_check(),
        pos: root,
        mv: MoveCode::NONE,
        truncated: false,
    });
    for (start, len) in pre_comments {
        g.comments.push(NodeComment {
            node: 0,
            placement: CommentPlacement::After,
            start,
            len,
        });
    }
    let mut lines = vec![Line {
        last: 0,
        moves: 0,
        skip: false,
        open_offset: 0,
        pending: Vec::new(),
    }];
    let mut any_movetext = false;
    for (tok, off) in tokens {
        any_movetext = true;
        let depth = lines.len();
        let Some(line) = lines.last_mut() else {
            break;
        };
        match tok {
            Token::San(word) => {
                if line.skip {
                    continue;
                }
                play(&mut g, line, word, off);
                if line.skip && depth > 1 {
                    // The reference CQL stops reading a game at an unreadable move inside a
                    // variation (the main line's continuation included); doing the same keeps
                    // position ids and answers equal to its own. The text is still stored.
                    if let Some(issue) = g.issues.last_mut() {
                        issue.message = issue.message.replace(
                            "rest of the line dropped",
                            "the rest of the game is not read (it is inside a variation)",
                        );
                    }
                    lines.truncate(1);
                    break;
                }
            }
            Token::Nag(n) => {
                if !line.skip && line.moves > 0 {
                    g.nags.push((line.last, n));
                }
            }
            Token::Comment {
                start,
                len,
                terminated,
            } => {
                if !terminated {
                    g.issues.push(Issue {
                        offset: off,
                        kind: "unterminated-comment",
                        message: "comment opened here is never closed".into(),
                    });
                }
                if line.skip {
                    continue;
                }
                if line.moves == 0 && depth > 1 {
                    line.pending.push((start, len));
                } else {
                    g.comments.push(NodeComment {
                        node: line.last,
                        placement: CommentPlacement::After,
                        start,
                        len,
                    });
                }
            }
            Token::Open => {
                let mut next = Line {
                    last: 0,
                    moves: 0,
                    skip: true,
                    open_offset: off,
                    pending: Vec::new(),
                };
                if line.skip {
                } else if line.moves == 0 {
                    g.issues.push(Issue {
                        offset: off,
                        kind: "misplaced-variation",
                        message: "variation before any move it could be an alternative to; skipped"
                            .into(),
                    });
                } else if depth > 1 && line.moves == 1 {
                    g.detached_variations += 1;
                } else {
                    next.skip = false;
                    next.last = g.nodes[line.last as usize].parent;
                }
                lines.push(next);
            }
            Token::Close => {
                if depth == 1 {
                    g.issues.push(Issue {
                        offset: off,
                        kind: "unmatched-paren",
                        message: "')' without a matching '('; ignored".into(),
                    });
                } else {
                    lines.pop();
                }
            }
            Token::Result(r) => {
                if depth == 1 {
                    g.termination = Some(decode_text(r));
                    // The game ends here: text after its result (engine logs in `;` comments,
                    // say) belongs to no position, as for the reference CQL.
                    break;
                } else {
                    // The reference CQL ends the game at a result token even inside a variation
                    // (the rest stays in the stored text); doing the same keeps position ids and
                    // query answers equal to its own.
                    g.issues.push(Issue {
                        offset: off,
                        kind: "result-in-variation",
                        message: format!(
                            "result \"{}\" inside a variation ends the game; the rest is not read",
                            excerpt(r)
                        ),
                    });
                    lines.truncate(1);
                    break;
                }
            }
            Token::Unknown(word) => g.issues.push(Issue {
                offset: off,
                kind: "unknown-token",
                message: format!("unknown token \"{}\"; skipped", excerpt(word)),
            }),
            Token::Tag { .. } | Token::BadTag => {}
        }
    }
    if lines.len() > 1 {
        let open = lines[1..]
            .iter()
            .map(|l| l.open_offset)
            .next_back()
            .unwrap_or(0);
        g.issues.push(Issue {
            offset: open,
            kind: "unterminated-variation",
            message: format!(
                "{} variation(s) never closed (innermost opened here)",
                lines.len() - 1
            ),
        });
    }
    if !any_movetext {
        g.issues.push(Issue {
            offset: text.len(),
            kind: "no-movetext",
            message: "game has tags but no movetext".into(),
        });
    }
    g
}

fn play(g: &mut GameTree, line: &mut Line, word: &[u8], off: usize) {
    let cut = |g: &mut GameTree, line: &mut Line, kind, message| {
        g.issues.push(Issue {
            offset: off,
            kind,
            message,
        });
        g.nodes[line.last as usize].truncated = true;
        line.skip = true;
    };
    let fixed;
    let word = if word.starts_with(b"0-0") {
        fixed = word
            .iter()
            .map(|&c| if c == b'0' { b'O' } else { c })
            .collect::<Vec<u8>>();
        &fixed[..]
    } else {
        word
    };
    // Long algebraic (UCI) moves such as `g1f3` or `d7d8q` are read too; many tools write them.
    if let Some(m) = uci_move(word, &g.nodes[line.last as usize].pos) {
        let mut p = g.nodes[line.last as usize].pos.clone();
        p.play_unchecked(m);
        add_node(g, line, p, MoveCode::from_move(&m));
        return;
    }
    let Ok(san) = SanPlus::from_ascii(word) else {
        g.issues.push(Issue {
            offset: off,
            kind: "unknown-token",
            message: format!("unknown token \"{}\"; skipped", excerpt(word)),
        });
        return;
    };
    let parent = line.last;
    let node = &g.nodes[parent as usize];
    let (pos, in_check) = (&node.pos, node.check);
    let (next, mv) = if san.san == San::Null {
        if in_check {
            cut(
                g,
                line,
                "null-move-in-check",
                "null move while in check; rest of the line dropped".into(),
            );
            return;
        }
        let king = pos.board().king_of(pos.turn());
        match pos.clone().swap_turn() {
            Ok(p) => (p, king.map_or(MoveCode::NONE, MoveCode::null)),
            Err(_) => {
                cut(
                    g,
                    line,
                    "illegal-move",
                    "null move is not possible here; rest of the line dropped".into(),
                );
                return;
            }
        }
    } else {
        let resolved = match crate::san::fast_move(&san.san, pos, in_check) {
            Some(m) => Ok(m),
            None => san
                .san
                .to_move(pos)
                .or_else(|e| with_capture_flipped(san.san, pos).ok_or(e)),
        };
        match resolved {
            Ok(m) => {
                let mut p = pos.clone();
                p.play_unchecked(m);
                (p, MoveCode::from_move(&m))
            }
            Err(e) => {
                let (kind, what) = match e {
                    SanError::AmbiguousSan => ("ambiguous-move", "ambiguous"),
                    _ => ("illegal-move", "illegal"),
                };
                cut(
                    g,
                    line,
                    kind,
                    format!(
                        "{what} move \"{}\" in {}; rest of the line dropped",
                        excerpt(word),
                        Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
                    ),
                );
                return;
            }
        }
    };
    add_node(g, line, next, mv);
}

/// Many PGN writers (and the reference CQL's reader) accept a capture written without `x`
/// (`Raf8` for `Raxf8`, `ed5` for `exd5`) or a non-capture written with one. Only an
/// unambiguous reading is taken.
fn with_capture_flipped(san: San, pos: &Chess) -> Option<shakmaty::Move> {
    match san {
        San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        } => San::Normal {
            role,
            file,
            rank,
            capture: !capture,
            to,
            promotion,
        }
        .to_move(pos)
        .ok(),
        _ => None,
    }
}

/// UCI (`g1f3`, `d7d8q`) and long algebraic (`e2-e4`, `Ng1-f3`, `g1xd1`, `Rg1xd1`, `e7e8=Q+`)
/// moves: the legal move with that origin, destination and promotion, if there is one.
fn uci_move(word: &[u8], pos: &Chess) -> Option<shakmaty::Move> {
    let mut w = word;
    while let [rest @ .., b'+' | b'#'] = w {
        w = rest;
    }
    let role = match w.first()? {
        b'K' | b'Q' | b'R' | b'B' | b'N' | b'P' => {
            let r = shakmaty::Role::from_char(char::from(w[0]))?;
            w = &w[1..];
            Some(r)
        }
        _ => None,
    };
    let square = |b: &[u8]| -> Option<shakmaty::Square> {
        match b {
            [f @ b'a'..=b'h', r @ b'1'..=b'8', ..] => Some(shakmaty::Square::from_coords(
                shakmaty::File::new(u32::from(f - b'a')),
                shakmaty::Rank::new(u32::from(r - b'1')),
            )),
            _ => None,
        }
    };
    let from = square(w)?;
    w = &w[2..];
    if let [b'-' | b'x' | b':', rest @ ..] = w {
        w = rest;
    }
    let to = square(w)?;
    w = &w[2..];
    if let [b'=', rest @ ..] = w {
        w = rest;
    }
    let promotion = match w {
        [] => None,
        [c] => Some(shakmaty::Role::from_char(char::from(
            c.to_ascii_lowercase(),
        ))?),
        _ => return None,
    };
    pos.legal_moves().into_iter().find(|m| {
        m.from() == Some(from)
            && (m.to() == to
                || matches!(m, shakmaty::Move::Castle { .. }) && castle_target(m) == Some(to))
            && m.promotion() == promotion
            && role.is_none_or(|r| m.role() == r)
    })
}

/// The king's destination of a castling move (`e1g1` means O-O).
fn castle_target(m: &shakmaty::Move) -> Option<shakmaty::Square> {
    match *m {
        shakmaty::Move::Castle { king, rook } => {
            let side = if rook.file() > king.file() {
                shakmaty::CastlingSide::KingSide
            } else {
                shakmaty::CastlingSide::QueenSide
            };
            Some(shakmaty::Square::from_coords(
                side.king_to_file(),
                king.rank(),
            ))
        }
        _ => None,
    }
}

fn add_node(g: &mut GameTree, line: &mut Line, next: Chess, mv: MoveCode) {
    let parent = line.last;
    let id = g.nodes.len() as u32;
    let p = &mut g.nodes[parent as usize];
    let child_index = p.children;
    let prev_last = p.last_child;
    p.children += 1;
    p.last_child = id;
    if prev_last == NO_PARENT {
        p.first_child = id;
    } else {
        g.nodes[prev_last as usize].next_sibling = id;
    }
    g.nodes.push(Node {
        parent,
        first_child: NO_PARENT,
        last_child: NO_PARENT,
        next_sibling: NO_PARENT,
        children: 0,
        child_index,
        check: next.is_check(),
        pos: next,
        mv,
        truncated: false,
    });
    for (start, len) in line.pending.drain(..) {
        g.comments.push(NodeComment {
            node: id,
            placement: CommentPlacement::Before,
            start,
            len,
        });
    }
    line.last = id;
    line.moves += 1;
}

fn find_tag_offset(text: &[u8], name: &str) -> usize {
    let needle = format!("[{name} ");
    text.windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap_or(0)
}
