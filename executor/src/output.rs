//! PGN output of a matching game, written the way the reference CQL writes it.
//!
//! Tags are re-rendered (seven-tag roster first); the movetext is regenerated from the whole
//! tree (variations included even when they were not visited) with the original comments and
//! NAGs; `{Game number N}` opens the movetext on a line of its own; each matched position gets
//! the match string in the comment after its move, after the original comment and any
//! `comment(...)` text. Lines are filled to 79 columns from small pieces (a move number and its
//! move are separate pieces, as are the braces of a comment and its words), breaking before the
//! first piece that does not fit.

use std::fmt::Write as _;
use std::io::{self, Write};

use cqldb_storage::{CommentPlacement, PositionFlags};
use shakmaty::{Chess, Position};

use crate::Game;
use crate::GameMatch;

/// Output settings from the header and command line.
#[derive(Clone, Debug)]
pub struct OutputOptions {
    /// Text put after each matched position (`matchstring`); empty = none.
    pub matchstring: String,
    /// `silent`: no annotations at all.
    pub silent: bool,
    /// `quiet`: no automatic match comments.
    pub quiet: bool,
    /// `-noheader`: no `Game number N` comment.
    pub no_game_header: bool,
}

impl Default for OutputOptions {
    fn default() -> Self {
        Self {
            matchstring: "CQL".to_owned(),
            silent: false,
            quiet: false,
            no_game_header: false,
        }
    }
}

const ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];
const AFTER_ROSTER: [&str; 4] = ["WhiteElo", "BlackElo", "ECO", "EventDate"];
const WIDTH: usize = 79;

/// Writes one game.
pub fn write_game(
    out: &mut dyn Write,
    game: &Game,
    m: &GameMatch,
    opts: &OutputOptions,
) -> io::Result<()> {
    write_tags(out, game, &m.settags)?;
    out.write_all(b"\n")?;
    let n = game.len();
    // Per position: the text CQL adds (user comments, match string).
    let mut added: Vec<Vec<String>> = vec![Vec::new(); n];
    if !opts.silent {
        for (pos, text) in &m.comments {
            if let Some(a) = added.get_mut(*pos as usize) {
                a.push(text.clone());
            }
        }
        if !opts.quiet && !opts.matchstring.is_empty() {
            for &p in &m.matched {
                if let Some(a) = added.get_mut(p as usize) {
                    a.push(opts.matchstring.clone());
                }
            }
        }
        // Comments of `sort` targets come after the match string.
        for (pos, text) in &m.late_comments {
            if let Some(a) = added.get_mut(*pos as usize)
                && !a.contains(text)
            {
                a.push(text.clone());
            }
        }
    }
    let mut w = Wrap {
        out,
        col: 0,
        scratch: String::new(),
    };
    let notes = NoteIndex::of(game);
    // The game comment: original pre-game comment, game number, root annotations.
    let mut root: Vec<Segment> = notes.comment(game, 0, CommentPlacement::After);
    if !opts.silent && !opts.no_game_header {
        root.push(Segment::added(format!("Game number {}", game.number)));
    }
    root.extend(added[0].drain(..).map(Segment::added));
    if !opts.silent {
        // Sort values follow after two spaces: `{Game number 936  matchcount: 22}`.
        for (i, note) in m.sort_notes.iter().enumerate() {
            let lead = if i == 0 { " " } else { "" };
            root.push(Segment::added(format!("{lead}{note}")));
        }
    }
    if !root.is_empty() {
        w.comment_glued(&root)?;
        w.newline()?;
    }
    write_tree(&mut w, game, &notes, &mut added)?;
    w.space()?;
    let result = game.output_result();
    w.piece(result.as_bytes())?;
    w.out.write_all(b"\n\n\n")?;
    Ok(())
}

fn write_tags(out: &mut dyn Write, game: &Game, settags: &[(String, String)]) -> io::Result<()> {
    let placeholder = |v: &str| v.trim().is_empty() || v.trim() == "?";
    for name in ROSTER {
        let v = game.tag(name);
        let v = match (name, v) {
            ("Result", _) => game.output_result(),
            ("Date", Some(d)) => normalise_date(d, true),
            ("White" | "Black", Some(p)) => normalise_player(p),
            ("Date", None) => "????.??.??".to_owned(),
            (_, Some(v)) => v.to_owned(),
            (_, None) => "?".to_owned(),
        };
        write_tag(out, name, &v)?;
    }
    // These four are written only when they hold a real value (the reference drops `?`,
    // `ECO "000"` and the like).
    let valid = |name: &str, v: &str| match name {
        "WhiteElo" | "BlackElo" => v.trim().parse::<u32>().is_ok_and(|e| e > 0),
        "ECO" => {
            let b = v.trim().as_bytes();
            b.len() >= 3 && (b'A'..=b'E').contains(&b[0]) && b[1..3].iter().all(u8::is_ascii_digit)
        }
        _ => !placeholder(v) && v.trim() != "????.??.??",
    };
    for name in AFTER_ROSTER {
        if let Some(v) = game.tag(name).filter(|v| valid(name, v)) {
            let v = match name {
                "EventDate" => normalise_date(v, false),
                // Up to the first sign: `E21/10` is written `E21`, `D07t` stays.
                "ECO" => v
                    .trim()
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                _ => v.to_owned(),
            };
            write_tag(out, name, &v)?;
        }
    }
    // The rest in input order; a FEN game gets `SetUp "1"` where its SetUp/FEN tag stood and
    // the FEN (as the root position renders) last.
    let fen = game.tag("FEN").is_some();
    let mut setup_written = false;
    for (name, value) in &game.tags {
        if ROSTER.contains(&name.as_str()) || AFTER_ROSTER.contains(&name.as_str()) {
            continue;
        }
        // A tag `settag` gives replaces the input's (written after the others).
        if settags.iter().any(|(n, _)| n == name) {
            continue;
        }
        if name == "SetUp" || name == "FEN" {
            if fen && !setup_written {
                write_tag(out, "SetUp", "1")?;
                setup_written = true;
            }
            continue;
        }
        write_tag(out, name, value)?;
    }
    for (name, value) in settags {
        write_tag(out, name, value)?;
    }
    if let Some(f) = game.tag("FEN") {
        write_tag(out, "FEN", &normalise_fen(f))?;
    }
    Ok(())
}

/// The FEN as given, with a fullmove number of 0 written as 1 (as the reference does).
fn normalise_fen(f: &str) -> String {
    let mut fields: Vec<&str> = f.split_whitespace().collect();
    if fields.len() == 6 && fields[5] == "0" {
        fields[5] = "1";
    }
    fields.join(" ")
}

/// `Surname,I.` is written `Surname, I` like the reference writes player names.
fn normalise_player(p: &str) -> String {
    let p = p.trim();
    let Some((surname, rest)) = p.split_once(',') else {
        return p.to_owned();
    };
    let rest = rest.trim_start();
    // A last initial loses its period: `Barnes, David J.` is written `Barnes, David J`.
    let b = rest.as_bytes();
    let rest = match b {
        [.., c, b'.'] if c.is_ascii_uppercase() && (b.len() == 2 || b[b.len() - 3] == b' ') => {
            &rest[..rest.len() - 1]
        }
        _ => rest,
    };
    format!("{surname}, {rest}")
}

/// A bare year (`2011`) becomes `2011.??.??`, year 0000 becomes `????`.
fn expand_year(d: &str) -> String {
    let d = if d.len() == 4 && d.bytes().all(|b| b.is_ascii_digit() || b == b'?') {
        format!("{d}.??.??")
    } else {
        d.to_owned()
    };
    match d.strip_prefix("0000") {
        Some(rest) => format!("????{rest}"),
        None => d,
    }
}

/// [`expand_year`], numbers padded to two digits; `strict` (the Date tag): a month or day out
/// of range becomes `??`, and so does the day of an unknown month.
fn normalise_date(d: &str, strict: bool) -> String {
    let d = expand_year(d.trim());
    let parts: Vec<&str> = d.split('.').collect();
    if parts.len() != 3 {
        return d;
    }
    let fix = |p: &str, max: u32| -> String {
        match p.parse::<u32>() {
            Ok(v) if !strict || (1..=max).contains(&v) => format!("{v:02}"),
            Ok(_) => "??".to_owned(),
            Err(_) => p.to_owned(),
        }
    };
    let month = fix(parts[1], 12);
    let day = if strict && month == "??" {
        "??".to_owned()
    } else {
        fix(parts[2], 31)
    };
    format!("{}.{month}.{day}", parts[0])
}

fn write_tag(out: &mut dyn Write, name: &str, value: &str) -> io::Result<()> {
    out.write_all(b"[")?;
    out.write_all(name.as_bytes())?;
    out.write_all(b" \"")?;
    // Values are written as read, without escaping (as the reference does).
    out.write_all(&latin1(value, false))?;
    out.write_all(b"\"]\n")
}

/// Text as the reference writes it: characters U+00C0..U+00FF as single Latin-1 bytes, other
/// characters unchanged, or (`mask`) every non-ASCII byte as `?`.
fn latin1(s: &str, mask: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c as u8);
        } else if mask {
            out.extend(std::iter::repeat_n(b'?', c.len_utf8()));
        } else if ('\u{C0}'..='\u{FF}').contains(&c) {
            out.push(c as u32 as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

/// Part of a comment: original text from the game, or text CQL adds.
struct Segment {
    text: String,
    original: bool,
}

impl Segment {
    fn added(text: String) -> Self {
        Self {
            text,
            original: false,
        }
    }
}

/// The game's own comment at a place; of several comments in a row the reference keeps the
/// last.
/// Walks the whole tree with an explicit stack (variations may nest arbitrarily deep).
fn write_tree(
    w: &mut Wrap<'_>,
    game: &Game,
    notes: &NoteIndex,
    added: &mut [Vec<String>],
) -> io::Result<()> {
    enum Frame {
        /// At `pos`: `alts_done` alternatives written; whether a black move needs its number.
        At {
            pos: u32,
            alts_done: usize,
            number_due: bool,
        },
        /// Close a variation.
        Close,
    }
    let mut cache: Vec<Option<Chess>> = vec![None; game.len()];
    let mut stack = vec![Frame::At {
        pos: 0,
        alts_done: 0,
        number_due: true,
    }];
    while let Some(frame) = stack.pop() {
        let (pos, alts_done, mut number_due) = match frame {
            Frame::Close => {
                w.space()?;
                w.piece(b")")?;
                continue;
            }
            Frame::At {
                pos,
                alts_done,
                number_due,
            } => (pos, alts_done, number_due),
        };
        let kids = game.all_children(pos);
        let Some(&main) = kids.first() else { continue };
        if alts_done == 0 {
            number_due = write_move(w, game, notes, pos, main, number_due, added, &mut cache)?;
        }
        if let Some(&alt) = kids.get(alts_done + 1) {
            // Come back here for the next alternative; then the variation itself.
            stack.push(Frame::At {
                pos,
                alts_done: alts_done + 1,
                number_due: true,
            });
            stack.push(Frame::Close);
            w.space()?;
            w.piece(b"(")?;
            let due = write_move(w, game, notes, pos, alt, true, added, &mut cache)?;
            stack.push(Frame::At {
                pos: alt,
                alts_done: 0,
                number_due: due,
            });
            continue;
        }
        stack.push(Frame::At {
            pos: main,
            alts_done: 0,
            number_due: number_due || kids.len() > 1,
        });
    }
    Ok(())
}

/// Where each position's original comments and NAGs are in a game's note lists, so that
/// writing a move looks them up instead of scanning every note of the game.
struct NoteIndex {
    /// Per position: the index of its last comment before and after the move (`u32::MAX`:
    /// none); empty when the game has no comments.
    comments: Vec<[u32; 2]>,
    /// Indexes of the NAGs, ordered by position (ties in list order).
    nags: Vec<u32>,
}

impl NoteIndex {
    fn of(game: &Game) -> Self {
        let mut comments = Vec::new();
        if !game.comments.is_empty() {
            comments = vec![[u32::MAX; 2]; game.len()];
            for (i, (p, placement, _)) in game.comments.iter().enumerate() {
                let side = usize::from(*placement == CommentPlacement::After);
                if let Some(slot) = comments.get_mut(*p as usize) {
                    slot[side] = i as u32;
                }
            }
        }
        let mut nags: Vec<u32> = (0..game.nags.len() as u32).collect();
        nags.sort_by_key(|&i| game.nags[i as usize].0);
        Self { comments, nags }
    }

    /// The original comment at `pos` with `placement`, as a segment list (empty or one).
    fn comment(&self, game: &Game, pos: u32, placement: CommentPlacement) -> Vec<Segment> {
        let side = usize::from(placement == CommentPlacement::After);
        self.comments
            .get(pos as usize)
            .and_then(|slot| game.comments.get(slot[side] as usize))
            .map(|(_, _, t)| Segment {
                text: t.clone(),
                original: true,
            })
            .into_iter()
            .collect()
    }

    /// The NAGs of `pos`, in list order.
    fn nags<'a>(&'a self, game: &'a Game, pos: u32) -> impl Iterator<Item = u8> + 'a {
        let key = |i: &u32| game.nags[*i as usize].0;
        let lo = self.nags.partition_point(|i| key(i) < pos);
        let hi = self.nags.partition_point(|i| key(i) <= pos);
        self.nags[lo..hi].iter().map(|&i| game.nags[i as usize].1)
    }
}

/// Writes the move from `parent` to `child` with its comments and NAGs; returns whether the
/// next black move needs its number (after a comment).
#[allow(clippy::too_many_arguments)]
fn write_move(
    w: &mut Wrap<'_>,
    game: &Game,
    notes: &NoteIndex,
    parent: u32,
    child: u32,
    mut number_due: bool,
    added: &mut [Vec<String>],
    cache: &mut [Option<Chess>],
) -> io::Result<bool> {
    let before = notes.comment(game, child, CommentPlacement::Before);
    if !before.is_empty() {
        w.space()?;
        w.comment(&before)?;
        number_due = true;
    }
    let prec = &game.positions[parent as usize];
    let root_black = game.positions[0].turn() == shakmaty::Color::Black;
    let n = i64::from(game.positions[0].move_number.max(1))
        + (i64::from(prec.ply) + i64::from(root_black)) / 2;
    let white = prec.turn() == shakmaty::Color::White;
    w.space()?;
    if white || number_due {
        w.scratch.clear();
        push_number(&mut w.scratch, n);
        w.scratch.push_str(if white { "." } else { "..." });
        w.piece_scratch()?;
    }
    let crec = &game.positions[child as usize];
    w.scratch.clear();
    match crec.mv.to_move() {
        None => w.scratch.push_str("--"),
        Some(m) => match chess_at(game, parent, cache) {
            Some(mut pos) => {
                // The child's position comes from playing the move (the next move's SAN needs
                // it), cheaper than building it from the child's record. The suffix comes from
                // the child's check and mate flags, computed when the game was read (shakmaty's
                // `SanPlus` generates the legal moves at every move to find the outcome).
                crate::san::san(&pos, m).append_to_string(&mut w.scratch);
                pos.play_unchecked(m);
                if crec.flags.contains(PositionFlags::MATE) {
                    w.scratch.push('#');
                } else if crec.flags.contains(PositionFlags::CHECK) {
                    w.scratch.push('+');
                }
                if let Some(slot) = cache.get_mut(child as usize) {
                    *slot = Some(pos);
                }
            }
            None => write!(w.scratch, "{}", crec.mv).map_err(io::Error::other)?,
        },
    }
    w.piece_scratch()?;
    for nag in notes.nags(game, child) {
        w.space()?;
        w.scratch.clear();
        write!(w.scratch, "${nag}").map_err(io::Error::other)?;
        w.piece_scratch()?;
    }
    let mut after = notes.comment(game, child, CommentPlacement::After);
    after.extend(added[child as usize].drain(..).map(Segment::added));
    if after.is_empty() {
        return Ok(false);
    }
    w.space()?;
    w.comment(&after)?;
    Ok(true)
}

/// Appends `n` in decimal (the formatting machinery was a visible share of writing a move).
fn push_number(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    let mut digits = [0u8; 20];
    let mut v = n.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&d| char::from(d)));
}

fn chess_at(game: &Game, id: u32, cache: &mut [Option<Chess>]) -> Option<Chess> {
    if let Some(p) = &cache[id as usize] {
        return Some(p.clone());
    }
    let pos = game.positions[id as usize].to_chess()?;
    cache[id as usize] = Some(pos.clone());
    Some(pos)
}

/// Fills lines to [`WIDTH`] columns from pieces.
struct Wrap<'a> {
    out: &'a mut dyn Write,
    col: usize,
    /// Text of the next piece, built here to spare an allocation per move.
    scratch: String,
}

impl Wrap<'_> {
    /// [`Self::piece`] with the scratch text.
    fn piece_scratch(&mut self) -> io::Result<()> {
        let text = std::mem::take(&mut self.scratch);
        let done = self.piece(text.as_bytes());
        self.scratch = text;
        done
    }

    fn piece(&mut self, p: &[u8]) -> io::Result<()> {
        if self.col > 0 && self.col + p.len() > WIDTH {
            self.newline()?;
        }
        self.out.write_all(p)?;
        self.col += p.len();
        Ok(())
    }

    /// A separating space, unless it would end the line (then the line ends instead).
    fn space(&mut self) -> io::Result<()> {
        if self.col == 0 {
            return Ok(());
        }
        if self.col + 1 > WIDTH {
            return self.newline();
        }
        self.out.write_all(b" ")?;
        self.col += 1;
        Ok(())
    }

    fn newline(&mut self) -> io::Result<()> {
        self.out.write_all(b"\n")?;
        self.col = 0;
        Ok(())
    }

    /// The game comment: like [`Self::comment`] but its closing brace stays on the last
    /// word's line (the reference writes it so, even past the last column).
    fn comment_glued(&mut self, parts: &[Segment]) -> io::Result<()> {
        self.comment_with(parts, true)
    }

    /// `{words}`: original text keeps its characters unless CQL adds to it.
    fn comment(&mut self, parts: &[Segment]) -> io::Result<()> {
        self.comment_with(parts, false)
    }

    fn comment_with(&mut self, parts: &[Segment], glued: bool) -> io::Result<()> {
        let touched = parts.iter().any(|s| !s.original) && parts.iter().any(|s| s.original);
        self.piece(b"{")?;
        let mut first = true;
        for part in parts {
            let mask = touched && part.original;
            if !first && part.text.starts_with(' ') {
                self.space()?;
            }
            for word in part.text.split_whitespace() {
                if !first {
                    self.space()?;
                }
                first = false;
                self.piece(&latin1(word, mask))?;
            }
        }
        if glued {
            self.out.write_all(b"}")?;
            self.col += 1;
            return Ok(());
        }
        self.piece(b"}")
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn numbers_are_written_in_decimal(n: i64) {
            let mut s = String::from("x");
            super::push_number(&mut s, n);
            prop_assert_eq!(s, format!("x{n}"));
        }
    }
}
