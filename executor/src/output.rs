//! PGN output of a matching game, written the way the reference CQL writes it: a
//! `{Game number N}` comment first, the match string after every matched position, user
//! comments, variations in parentheses, SAN regenerated from the tree.

use std::io::{self, Write};

use shakmaty::Chess;
use shakmaty::san::SanPlus;

use crate::eval::GameMatch;
use crate::game::Game;

/// Output settings from the header and command line.
#[derive(Clone, Debug)]
pub struct OutputOptions {
    /// Text put after each matched position (`matchstring`); empty = none.
    pub matchstring: String,
    /// `silent`: no annotations at all.
    pub silent: bool,
    /// `quiet`: no automatic match comments.
    pub quiet: bool,
}

impl Default for OutputOptions {
    fn default() -> Self {
        Self {
            matchstring: "CQL".to_owned(),
            silent: false,
            quiet: false,
        }
    }
}

const ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// Writes one game.
pub fn write_game(
    out: &mut dyn Write,
    game: &Game,
    m: &GameMatch,
    opts: &OutputOptions,
) -> io::Result<()> {
    for name in ROSTER {
        let v = game.tag(name).unwrap_or(match name {
            "Date" => "????.??.??",
            "Result" => "*",
            _ => "?",
        });
        writeln!(out, "[{name} \"{}\"]", escape(v))?;
    }
    for (name, value) in &game.tags {
        if !ROSTER.contains(&name.as_str()) {
            writeln!(out, "[{name} \"{}\"]", escape(value))?;
        }
    }
    writeln!(out)?;
    let mut notes: Vec<Vec<String>> = vec![Vec::new(); game.len()];
    if !opts.silent {
        notes[0].push(format!("Game number {}", game.number));
        for &(pos, ref text) in &m.comments {
            notes[pos as usize].push(text.clone());
        }
        if !opts.quiet && !opts.matchstring.is_empty() {
            for &p in &m.matched {
                notes[p as usize].push(opts.matchstring.clone());
            }
        }
    }
    let mut w = Wrapper::new(out);
    if !notes[0].is_empty() {
        w.word(&format!("{{{}}}", notes[0].join(" ")))?;
    }
    let mut chess_cache: Vec<Option<Chess>> = vec![None; game.len()];
    write_line(&mut w, game, 0, true, &notes, &mut chess_cache)?;
    w.word(game.tag("Result").unwrap_or("*"))?;
    w.finish()?;
    writeln!(w.out)?;
    writeln!(w.out)?;
    Ok(())
}

/// Writes the continuation after position `start` (whose move is already written).
fn write_line(
    w: &mut Wrapper<'_>,
    game: &Game,
    start: u32,
    mut after_break: bool,
    notes: &[Vec<String>],
    cache: &mut [Option<Chess>],
) -> io::Result<()> {
    // An explicit stack instead of recursion (variations may nest arbitrarily deep). A frame is
    // (position, alternatives already written, a move number is due); u32::MAX closes a
    // variation.
    let mut frames: Vec<(u32, usize, bool)> = vec![(start, 0, after_break)];
    while let Some((cur, alt_done, brk)) = frames.pop() {
        if cur == u32::MAX {
            w.word(")")?;
            continue;
        }
        after_break = brk;
        let kids = game.children(cur);
        if alt_done == 0 {
            let Some(&main) = kids.first() else { continue };
            write_move(w, game, cur, main, after_break, cache)?;
            after_break = false;
            if !notes[main as usize].is_empty() {
                w.word(&format!("{{{}}}", notes[main as usize].join(" ")))?;
                after_break = true;
            }
        }
        let next_alt = alt_done + 1;
        if next_alt < kids.len() {
            let alt = kids[next_alt];
            // Come back to this position for the next alternative, then continue the line.
            frames.push((cur, next_alt, true));
            w.word("(")?;
            write_move(w, game, cur, alt, true, cache)?;
            if !notes[alt as usize].is_empty() {
                w.word(&format!("{{{}}}", notes[alt as usize].join(" ")))?;
            }
            frames.push((u32::MAX, 0, false));
            frames.push((alt, 0, true));
            continue;
        }
        if let Some(&main) = kids.first() {
            frames.push((main, 0, after_break || kids.len() > 1));
        }
    }
    Ok(())
}

fn chess_at(game: &Game, id: u32, cache: &mut [Option<Chess>]) -> Option<Chess> {
    if let Some(p) = &cache[id as usize] {
        return Some(p.clone());
    }
    let pos = crate::board::to_chess(&game.positions[id as usize])?;
    cache[id as usize] = Some(pos.clone());
    Some(pos)
}

fn write_move(
    w: &mut Wrapper<'_>,
    game: &Game,
    parent: u32,
    child: u32,
    number_black: bool,
    cache: &mut [Option<Chess>],
) -> io::Result<()> {
    let prec = &game.positions[parent as usize];
    let root_black = game.positions[0].turn() == shakmaty::Color::Black;
    let fen_move = game.positions[0].move_number;
    let n = i64::from(fen_move) + (i64::from(prec.ply) + i64::from(root_black)) / 2;
    let white = prec.turn() == shakmaty::Color::White;
    let crec = &game.positions[child as usize];
    let san = match crec.mv.to_move() {
        None => "--".to_owned(),
        Some(m) => match chess_at(game, parent, cache) {
            Some(pos) => SanPlus::from_move(pos, m).to_string(),
            None => crec.mv.to_string(),
        },
    };
    let text = if white {
        format!("{n}.{san}")
    } else if number_black {
        format!("{n}...{san}")
    } else {
        san
    };
    w.word(&text)
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Writes words separated by spaces, wrapping lines at 79 columns.
struct Wrapper<'a> {
    out: &'a mut dyn Write,
    col: usize,
}

impl<'a> Wrapper<'a> {
    fn new(out: &'a mut dyn Write) -> Self {
        Self { out, col: 0 }
    }

    fn word(&mut self, s: &str) -> io::Result<()> {
        // `(` is followed and `)` preceded by a space, like every other word.
        let len = s.chars().count();
        if self.col > 0 && self.col + 1 + len > 79 {
            writeln!(self.out)?;
            self.col = 0;
        }
        if self.col > 0 {
            self.out.write_all(b" ")?;
            self.col += 1;
        }
        self.out.write_all(s.as_bytes())?;
        self.col += len;
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.col > 0 {
            writeln!(self.out)?;
            self.col = 0;
        }
        Ok(())
    }
}
