//! Matching games as machine-readable rows: one JSON object per line or one CSV row per game,
//! with the game's number and roster tags and, per matched position, its id, ply, FEN and the
//! SAN of the move that reached it.

use std::io::{self, Write};

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Position};

use crate::Game;
use crate::GameMatch;

/// The CSV header line of [`write_csv_row`].
pub const CSV_HEADER: &str = "game,white,black,date,result,eco,matches,positions,plies,fens,sans";

/// One matched position.
struct Matched {
    id: u32,
    ply: u32,
    fen: String,
    san: String,
}

fn matched(game: &Game, m: &GameMatch) -> Vec<Matched> {
    m.matched
        .iter()
        .filter_map(|&id| {
            let p = game.positions.get(id as usize)?;
            Some(Matched {
                id,
                ply: p.ply,
                fen: p.fen(),
                san: san_to(game, id).unwrap_or_default(),
            })
        })
        .collect()
}

/// The SAN (with check marks) of the move that reached position `id` (empty at the root).
pub fn san_to(game: &Game, id: u32) -> Option<String> {
    let parent = game.parent(id)?;
    let setup = game.positions.get(parent as usize)?.to_setup()?;
    let pos: Chess = match setup.position(shakmaty::CastlingMode::Chess960) {
        Ok(p) => p,
        Err(e) => e.ignore_too_much_material().ok()?,
    };
    let mv = game.positions.get(id as usize)?.mv.to_move()?;
    if !pos.is_legal(mv) {
        // A null move or an unusual position: the long form is still informative.
        return Some(game.positions[id as usize].mv.to_string());
    }
    Some(SanPlus::from_move(pos, mv).to_string())
}

fn tag<'a>(game: &'a Game, name: &str) -> &'a str {
    game.tag(name).unwrap_or("")
}

fn result(game: &Game) -> &str {
    game.tag("Result").or(game.result.as_deref()).unwrap_or("*")
}

/// Writes one game as a JSON object on its own line.
pub fn write_json_row(out: &mut dyn Write, game: &Game, m: &GameMatch) -> io::Result<()> {
    let matches: Vec<serde_json::Value> = matched(game, m)
        .into_iter()
        .map(|x| serde_json::json!({"position": x.id, "ply": x.ply, "fen": x.fen, "san": x.san}))
        .collect();
    let row = serde_json::json!({
        "game": game.number,
        "white": tag(game, "White"),
        "black": tag(game, "Black"),
        "date": tag(game, "Date"),
        "result": result(game),
        "eco": tag(game, "ECO"),
        "matches": matches,
    });
    serde_json::to_writer(&mut *out, &row)?;
    out.write_all(b"\n")
}

/// Writes one game as a CSV row ([`CSV_HEADER`]); the per-match columns hold one value per
/// matched position, separated by `;`.
pub fn write_csv_row(out: &mut dyn Write, game: &Game, m: &GameMatch) -> io::Result<()> {
    let ms = matched(game, m);
    let join = |f: &dyn Fn(&Matched) -> String| ms.iter().map(f).collect::<Vec<_>>().join(";");
    let fields = [
        game.number.to_string(),
        tag(game, "White").to_owned(),
        tag(game, "Black").to_owned(),
        tag(game, "Date").to_owned(),
        result(game).to_owned(),
        tag(game, "ECO").to_owned(),
        ms.len().to_string(),
        join(&|x| x.id.to_string()),
        join(&|x| x.ply.to_string()),
        join(&|x| x.fen.clone()),
        join(&|x| x.san.clone()),
    ];
    let row: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
    writeln!(out, "{}", row.join(","))
}

/// A CSV field, quoted when it must be (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}
