//! Indexed PGN game trees as GTQL trees: each game a tree whose nodes are its positions, all
//! games one forest fed to a single pass, `last_move` coded so that quoted moves in long
//! algebraic (`"Qd8-h4"`, `"e2e4"`) or SAN (`"Qh4"`, `"exd5"`, `"O-O"`) match.

use cqldb_planner::gtql::{GtqlNames, GtqlQuery, MoveLiterals};
use cqldb_planner::plan::bounds::TreeAttr;
use cqldb_planner::plan::gtql::{IndexedAttr, NO_RESULT, RESULT_CODES, answer_bounds};
use cqldb_planner::plan::{GameAttr as TagAttr, PositionFlag, RunStats, Scan};
use cqldb_storage::gtl::{CHUNK_NODES, Chunk};
use cqldb_storage::{
    Database, MoveCode, MoveKind, NO_PARENT, Pages, PositionFlags, PositionRecord,
};
use shakmaty::san::{San, SanPlus};
use shakmaty::{CastlingSide, Role, Square};

use super::{ParallelPass, Pass};
use crate::scan::SegmentScan;

/// A game-tree attribute's value at a position: `(row, the game's values, position id)`.
type GameAttr = fn(&PositionRecord, &GameValues, usize) -> i64;

/// A game's own values, the same at each of its nodes: its number, and what its tags say as
/// CQL's filters read them (`year`, `elo white`, `elo black`: 0 where the tag is missing or not
/// a number; `result`: a code of `RESULT_CODES`, else `NO_RESULT`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GameValues {
    number: i64,
    year: i64,
    white_elo: i64,
    black_elo: i64,
    result: i64,
}

impl GameValues {
    /// The values of game `number` with tags `tags` (in the order of its text).
    pub fn new(number: i64, tags: &[(String, String)]) -> Self {
        let first = |name: &str| {
            tags.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let rating = |name| {
            first(name)
                .and_then(cqldb_storage::schema::rating)
                .unwrap_or(0)
        };
        Self {
            number,
            year: first("Date")
                .and_then(cqldb_storage::schema::date_year)
                .unwrap_or(0),
            white_elo: rating("WhiteElo"),
            black_elo: rating("BlackElo"),
            result: first("Result")
                .and_then(|r| RESULT_CODES.iter().find(|(s, _)| *s == r))
                .map_or(NO_RESULT, |&(_, code)| code),
        }
    }
}

/// The attributes read from a game's tags (its text is read only for queries that read them).
const TAG_ATTRS: [&str; 4] = ["year", "white_elo", "black_elo", "result"];

/// Attributes of game-tree nodes (0/1 for the flags).
pub const GAME_ATTRS: [(&str, GameAttr); 21] = [
    ("game", |_, g, _| g.number),
    ("year", |_, g, _| g.year),
    ("white_elo", |_, g, _| g.white_elo),
    ("black_elo", |_, g, _| g.black_elo),
    ("result", |_, g, _| g.result),
    ("ply", |r, _, _| i64::from(r.ply)),
    ("depth", |r, _, _| i64::from(r.depth)),
    ("child_index", |r, _, _| i64::from(r.child_index)),
    ("children", |r, _, _| i64::from(r.children)),
    ("movenumber", |r, _, _| i64::from(r.move_number)),
    ("wtm", |r, _, _| flag(r, PositionFlags::WHITE_TO_MOVE)),
    ("initial", |r, _, _| flag(r, PositionFlags::INITIAL)),
    ("terminal", |r, _, _| flag(r, PositionFlags::TERMINAL)),
    ("mainline", |r, _, _| flag(r, PositionFlags::MAINLINE)),
    ("variation", |r, _, _| flag(r, PositionFlags::VARIATION)),
    ("virtualmainline", |r, _, _| {
        flag(r, PositionFlags::VIRTUAL_MAINLINE)
    }),
    ("check", |r, _, _| flag(r, PositionFlags::CHECK)),
    ("mate", |r, _, _| flag(r, PositionFlags::MATE)),
    ("stalemate", |r, _, _| flag(r, PositionFlags::STALEMATE)),
    ("positionid", |_, _, id| id as i64),
    ("parent", |r, _, _| match r.parent {
        NO_PARENT => -1,
        q => i64::from(q),
    }),
];

fn flag(r: &PositionRecord, f: PositionFlags) -> i64 {
    i64::from(r.flags.contains(f))
}

/// The names queries over game trees may use.
pub fn game_names() -> GtqlNames {
    GtqlNames {
        attrs: GAME_ATTRS.iter().map(|(s, _)| (*s).to_owned()).collect(),
        consts: vec![("white".into(), 1), ("black".into(), 0)],
        moves: MoveLiterals::Pattern(
            move_pattern,
            "long algebraic such as Qd8-h4, e2e4 or e7e8=Q, SAN such as Qh4, exd5 or Nbd7, \
             O-O, O-O-O, or -- for a null move",
        ),
    }
}

/// A game move as GTQL paths show it: long algebraic (`Ng1-f3`, `Pe5xd6ep`), castling as
/// `O-O` or `O-O-O` (stored as king takes rook, which reads oddly in a path).
pub fn move_text(mv: MoveCode) -> String {
    match (mv.kind(), mv.from(), mv.to()) {
        (Some(MoveKind::Castle), Some(king), Some(rook)) if rook.file() > king.file() => {
            "O-O".to_owned()
        }
        (Some(MoveKind::Castle), Some(_), Some(_)) => "O-O-O".to_owned(),
        _ => mv.to_string(),
    }
}

// The fields of a game move's code (0 at a root, which has no move).
const TAG: i64 = 1 << 40;
const TO: i64 = 0o77;
const FROM_FILE: i64 = 0o7 << 6;
const FROM_RANK: i64 = 0o7 << 9;
const ROLE: i64 = 0o7 << 12;
const PROMOTION: i64 = 0o7 << 15;
const CAPTURE: i64 = 1 << 18;
const CASTLE: i64 = 0b11 << 19;
const NULL: i64 = 1 << 21;

fn castle_bits(side: CastlingSide) -> i64 {
    match side {
        CastlingSide::KingSide => 1 << 19,
        CastlingSide::QueenSide => 2 << 19,
    }
}

fn from_bits(from: Square) -> i64 {
    (i64::from(u32::from(from.file())) << 6) | (i64::from(u32::from(from.rank())) << 9)
}

/// `last_move`'s code of a stored game move: its target and origin squares, piece,
/// promotion, capture, castling side and null-move fields, so that a quoted move is a mask
/// and a value over them ([`move_pattern`]).
pub fn move_code(mv: MoveCode) -> i64 {
    let (Some(from), Some(to), Some(role), Some(kind)) = (mv.from(), mv.to(), mv.role(), mv.kind())
    else {
        return 0;
    };
    let mut code = TAG | i64::from(u32::from(to)) | from_bits(from) | ((role as i64) << 12);
    if let Some(p) = mv.promotion() {
        code |= (p as i64) << 15;
    }
    match kind {
        MoveKind::Castle if to.file() > from.file() => code |= castle_bits(CastlingSide::KingSide),
        MoveKind::Castle => code |= castle_bits(CastlingSide::QueenSide),
        MoveKind::Null => code |= NULL,
        MoveKind::Normal | MoveKind::EnPassant => {
            if mv.capture().is_some() {
                code |= CAPTURE;
            }
        }
    }
    code
}

/// Reads a quoted move as `(mask, value)` over [`move_code`]s: long algebraic or UCI
/// (`Qd8-h4`, `Ng1xf3`, `e2e4`, `e7e8=Q`, `e7e8q`), SAN (`Qh4`, `exd5`, `Nbd7`, `e8=Q+`),
/// `O-O` / `O-O-O` (also with zeros, and a king's two-square step such as `e1g1`), `--` for a
/// null move. What the text leaves open (the origin in SAN, the piece and capture in UCI) is
/// left out of the mask; check and annotation marks are ignored.
pub fn move_pattern(text: &str) -> Option<(i64, i64)> {
    let t = text.trim().trim_end_matches(['+', '#', '!', '?']);
    let castle = |side| Some((TAG | CASTLE | NULL, TAG | castle_bits(side)));
    match t {
        "O-O" | "0-0" => return castle(CastlingSide::KingSide),
        "O-O-O" | "0-0-0" => return castle(CastlingSide::QueenSide),
        "--" | "Z0" | "0000" => return Some((TAG | NULL, TAG | NULL)),
        _ => {}
    }
    long_algebraic(t).or_else(|| san(t))
}

/// `[KQRBNP]? from [-x]? to (=?[QRBN])? (ep)?`.
fn long_algebraic(t: &str) -> Option<(i64, i64)> {
    let b = t.as_bytes();
    let piece = b.first().filter(|c| c.is_ascii_uppercase());
    let (role, rest) = match piece.and_then(|&c| Role::from_char(char::from(c))) {
        Some(r) => (Some(r), &b[1..]),
        None => (None, b),
    };
    let from = Square::from_ascii(rest.get(..2)?).ok()?;
    let (capture, rest) = match rest.get(2) {
        Some(b'-') => (Some(false), &rest[3..]),
        Some(b'x') => (Some(true), &rest[3..]),
        _ => (None, &rest[2..]),
    };
    let to = Square::from_ascii(rest.get(..2)?).ok()?;
    let mut rest = &rest[2..];
    if let Some(r) = rest.strip_suffix(b"ep") {
        rest = r;
    }
    let rest = rest.strip_prefix(b"=").unwrap_or(rest);
    let promotion = match rest {
        [] => None,
        [c] => Some(Role::from_char(char::from(*c))?),
        _ => return None,
    };
    // A king's two-square step is castling, stored as king takes rook.
    let king_step = matches!(role, None | Some(Role::King))
        && from.rank() == to.rank()
        && from.file() == shakmaty::File::E
        && matches!(to.file(), shakmaty::File::G | shakmaty::File::C)
        && matches!(from.rank(), shakmaty::Rank::First | shakmaty::Rank::Eighth);
    if king_step && promotion.is_none() {
        let side = if to.file() == shakmaty::File::G {
            CastlingSide::KingSide
        } else {
            CastlingSide::QueenSide
        };
        return Some((TAG | CASTLE | NULL, TAG | castle_bits(side)));
    }
    let mut mask = TAG | TO | FROM_FILE | FROM_RANK | PROMOTION | CASTLE | NULL;
    let mut value = TAG | i64::from(u32::from(to)) | from_bits(from);
    if let Some(r) = role {
        mask |= ROLE;
        value |= (r as i64) << 12;
    }
    if let Some(c) = capture {
        mask |= CAPTURE;
        value |= if c { CAPTURE } else { 0 };
    }
    if let Some(p) = promotion {
        value |= (p as i64) << 15;
    }
    Some((mask, value))
}

fn san(t: &str) -> Option<(i64, i64)> {
    match SanPlus::from_ascii(t.as_bytes()).ok()?.san {
        San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        } => {
            let mut mask = TAG | TO | ROLE | PROMOTION | CAPTURE | CASTLE | NULL;
            let mut value = TAG | i64::from(u32::from(to)) | ((role as i64) << 12);
            if capture {
                value |= CAPTURE;
            }
            if let Some(p) = promotion {
                value |= (p as i64) << 15;
            }
            if let Some(f) = file {
                mask |= FROM_FILE;
                value |= i64::from(u32::from(f)) << 6;
            }
            if let Some(r) = rank {
                mask |= FROM_RANK;
                value |= i64::from(u32::from(r)) << 9;
            }
            Some((mask, value))
        }
        San::Castle(side) => Some((TAG | CASTLE | NULL, TAG | castle_bits(side))),
        San::Null => Some((TAG | NULL, TAG | NULL)),
        San::Put { .. } => None,
    }
}

/// What the index knows of each game attribute (for planning): the 0/1 flags it keeps, ply
/// and depth, which it ranges over, and the game's number, year, ratings and result.
pub fn indexed_attr(attr: usize) -> Option<IndexedAttr> {
    let flag = |f| Some(IndexedAttr::Flag(Scan::Flag(f)));
    match GAME_ATTRS.get(attr)?.0 {
        "game" => Some(IndexedAttr::GameNumber),
        "year" => Some(IndexedAttr::GameValue(TagAttr::Year)),
        "white_elo" => Some(IndexedAttr::GameValue(TagAttr::WhiteElo)),
        "black_elo" => Some(IndexedAttr::GameValue(TagAttr::BlackElo)),
        "result" => Some(IndexedAttr::GameResult),
        "wtm" => flag(PositionFlag::WhiteToMove),
        "initial" => flag(PositionFlag::Initial),
        "terminal" => flag(PositionFlag::Terminal),
        "mainline" => flag(PositionFlag::Mainline),
        "variation" => Some(IndexedAttr::Flag(Scan::complement(Scan::Flag(
            PositionFlag::Mainline,
        )))),
        "virtualmainline" => flag(PositionFlag::VirtualMainline),
        "check" => flag(PositionFlag::Check),
        "mate" => flag(PositionFlag::Mate),
        "stalemate" => flag(PositionFlag::Stalemate),
        "ply" => Some(IndexedAttr::Tree(TreeAttr::Ply)),
        "depth" => Some(IndexedAttr::Tree(TreeAttr::Depth)),
        "movenumber" => Some(IndexedAttr::Tree(TreeAttr::MoveNumber)),
        _ => None,
    }
}

/// The candidate positions of a batch of queries' answers: the union of each query's (see
/// [`cqldb_planner::plan::gtql::answer_bounds`]); `None` when some query needs every game.
pub fn candidates(queries: &[GtqlQuery]) -> Option<Scan> {
    let mut all = Scan::Empty;
    for q in queries {
        all = Scan::or(all, answer_bounds(q, &indexed_attr));
    }
    (all != Scan::All).then_some(all)
}

/// Feeds the games of `db` to `pass` as one forest (each game's root at level 0), in chunks
/// of many games, so `node_id` numbers the database's positions in pre-order, game after game.
/// With `scan`, only the games holding a position of it are fed (their nodes keep the ids
/// they have in the whole forest). Reads the attributes `queries` read (all of them and the
/// moves when `listing`). Returns the number of nodes fed.
pub fn feed_games(
    db: &Database,
    queries: &[GtqlQuery],
    pass: &mut ParallelPass,
    listing: bool,
    scan: Option<&Scan>,
) -> cqldb_storage::Result<u64> {
    let feed = Feed {
        listing,
        scan,
        pages: Pages::Keep,
    };
    feed_games_measured(db, queries, pass, feed, None)
}

/// What a feed of a database's games gives the pass.
#[derive(Copy, Clone, Debug)]
pub struct Feed<'a> {
    /// The games' moves too, for listing answers.
    pub listing: bool,
    /// Only the games with a position in this scan (`None`: every game).
    pub scan: Option<&'a Scan>,
    /// What becomes of each segment's pages once its games are fed.
    pub pages: Pages,
}

/// As [`feed_games`], measuring each scan operator and the feed into `stats` (`EXPLAIN
/// ANALYZE`): scans in the plan's pre-order, the residual as the games and nodes fed and the
/// time to feed them (the pass runs alongside; its end is timed by the caller).
pub fn feed_games_measured(
    db: &Database,
    queries: &[GtqlQuery],
    pass: &mut ParallelPass,
    feed: Feed<'_>,
    mut stats: Option<&mut RunStats>,
) -> cqldb_storage::Result<u64> {
    let Feed {
        listing,
        scan,
        pages,
    } = feed;
    let started = std::time::Instant::now();
    let names = game_names();
    let read = Pass::wanted(queries, names.columns());
    let want: Vec<bool> = read.iter().map(|&r| r || listing).collect();
    let codes = read[names.last_move()];
    let tags_read = GAME_ATTRS
        .iter()
        .zip(&want)
        .any(|((name, _), &wanted)| wanted && TAG_ATTRS.contains(name));
    let mut chunk = Chunk::default();
    chunk.cols.resize(names.columns(), Vec::new());
    let mut nodes = 0u64;
    for (entry, seg) in db.segments() {
        let first_game = entry.first_game as i64;
        // With a scan, only candidate games are fed, each with its nodes' forest ids (from
        // where its game starts); without one, ids are counted as the nodes come.
        if let Some(st) = stats.as_deref_mut() {
            st.games += entry.games;
        }
        let (games, starts) = match scan {
            Some(s) => {
                let mut ss = SegmentScan::new(seg, entry.first_game)?;
                ss.count_games = stats.is_some();
                let mut scratch = Vec::new();
                let ops = match stats.as_deref_mut() {
                    Some(st) => &mut st.scans,
                    None => &mut scratch,
                };
                let games = ss.eval_games(s, ops)?;
                // A scan the segment could not answer exactly bounds nothing there.
                let games = (!ss.inexact).then_some(games);
                (games, ss.into_game_starts())
            }
            None => (None, std::borrow::Cow::Borrowed(&[][..])),
        };
        let mut fed = 0u64;
        seg.for_each_game_in(games.as_ref(), tags_read, |local, rows| {
            let number = first_game + i64::from(local);
            let values = if tags_read {
                GameValues::new(number, &cqldb_indexer::tags::scan_tags(rows.text))
            } else {
                GameValues {
                    number,
                    ..GameValues::default()
                }
            };
            let p = rows.positions;
            nodes += p.len() as u64;
            fed += 1;
            chunk.levels.extend(p.iter().map(|r| r.ply));
            if scan.is_some() {
                let first = (entry.first_position + u64::from(starts[local as usize])) as i64;
                chunk.ids.extend(first..first + p.len() as i64);
            }
            if listing {
                chunk.moves.extend(p.iter().map(|r| move_text(r.mv)));
            }
            for ((col, (_, value)), &wanted) in chunk.cols.iter_mut().zip(&GAME_ATTRS).zip(&want) {
                if wanted {
                    col.extend(p.iter().enumerate().map(|(i, r)| value(r, &values, i)));
                }
            }
            if codes {
                chunk.cols[GAME_ATTRS.len()].extend(p.iter().map(|r| move_code(r.mv)));
            }
            if chunk.levels.len() >= CHUNK_NODES {
                chunk = pass.feed(std::mem::take(&mut chunk));
                chunk.levels.clear();
                chunk.moves.clear();
                chunk.ids.clear();
                chunk.cols.resize(names.columns(), Vec::new());
                chunk.cols.iter_mut().for_each(Vec::clear);
            }
            Ok(())
        })?;
        if let Some(st) = stats.as_deref_mut() {
            st.residual.games += fed;
        }
        seg.done_reading(pages);
    }
    pass.feed(chunk);
    if let Some(st) = stats {
        st.residual.positions = nodes;
        st.residual.micros = started.elapsed().as_micros() as u64;
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Chess, Move, Position};

    fn code_of(fen_moves: &[&str], san_text: &str) -> i64 {
        let mut pos = Chess::default();
        for m in fen_moves {
            let mv = San::from_ascii(m.as_bytes())
                .unwrap()
                .to_move(&pos)
                .unwrap();
            pos.play_unchecked(mv);
        }
        let mv: Move = San::from_ascii(san_text.as_bytes())
            .unwrap()
            .to_move(&pos)
            .unwrap();
        move_code(MoveCode::from_move(&mv))
    }

    fn matches(code: i64, text: &str) -> bool {
        let (mask, value) = move_pattern(text).unwrap();
        code & mask == value
    }

    #[test]
    fn quoted_moves_match_their_moves_only() {
        let qh4 = code_of(&["f3", "e5", "g4"], "Qh4");
        for yes in ["Qh4", "Qh4#", "Qd8-h4", "d8h4", "Qd8h4"] {
            assert!(matches(qh4, yes), "{yes}");
        }
        for no in ["Qh5", "Qxh4", "Qd8xh4", "Bh4", "Qeh4", "O-O", "--", "e2e4"] {
            assert!(!matches(qh4, no), "{no}");
        }
        let exd5 = code_of(&["e4", "d5"], "exd5");
        for yes in ["exd5", "Pe4xd5", "e4d5", "e4xd5"] {
            assert!(matches(exd5, yes), "{yes}");
        }
        for no in ["d5", "e4-d5", "cxd5"] {
            assert!(!matches(exd5, no), "{no}");
        }
        let castle = code_of(&["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5"], "O-O");
        for yes in ["O-O", "0-0", "e1g1", "Ke1-g1"] {
            assert!(matches(castle, yes), "{yes}");
        }
        assert!(!matches(castle, "O-O-O"));
        assert_eq!(move_code(MoveCode::NONE), 0);
        assert!(move_pattern("hello").is_none());
        assert!(move_pattern("").is_none());
    }
}
