//! The ingest baseline: parse PGN with pgn-reader and replay every move (variations included)
//! with shakmaty, doing nothing else. Indexing throughput is reported as a ratio to this.

use std::io::Read;
use std::ops::ControlFlow;

use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen};

/// Totals of a replay.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Games read.
    pub games: u64,
    /// Positions reached (roots included).
    pub positions: u64,
    /// Moves that did not parse or were illegal (the rest of their line is skipped).
    pub bad_moves: u64,
}

struct Replayer {
    stats: ReplayStats,
}

struct Line {
    stack: Vec<(Chess, Option<Chess>, bool)>,
}

impl Visitor for Replayer {
    type Tags = Option<Chess>;
    type Movetext = Line;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), Option<Chess>> {
        ControlFlow::Continue(None)
    }

    fn tag(&mut self, tags: &mut Option<Chess>, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        if name == b"FEN" {
            *tags = Fen::from_ascii(value.as_bytes())
                .ok()
                .and_then(|f| f.into_position(CastlingMode::Chess960).ok());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Option<Chess>) -> ControlFlow<(), Line> {
        self.stats.positions += 1;
        ControlFlow::Continue(Line {
            stack: vec![(tags.unwrap_or_default(), None, false)],
        })
    }

    fn san(&mut self, line: &mut Line, san: SanPlus) -> ControlFlow<()> {
        let Some((pos, before, dead)) = line.stack.last_mut() else {
            return ControlFlow::Continue(());
        };
        if *dead {
            return ControlFlow::Continue(());
        }
        match san.san.to_move(pos) {
            Ok(m) => {
                *before = Some(pos.clone());
                pos.play_unchecked(m);
                self.stats.positions += 1;
            }
            Err(_) => {
                *dead = true;
                self.stats.bad_moves += 1;
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, line: &mut Line) -> ControlFlow<(), Skip> {
        let start = line.stack.last().and_then(|(_, before, _)| before.clone());
        match start {
            Some(p) => {
                line.stack.push((p, None, false));
                ControlFlow::Continue(Skip(false))
            }
            None => ControlFlow::Continue(Skip(true)),
        }
    }

    fn end_variation(&mut self, line: &mut Line) -> ControlFlow<()> {
        if line.stack.len() > 1 {
            line.stack.pop();
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, _line: Line) {
        self.stats.games += 1;
    }
}

/// Replays every game of a decompressed PGN stream, variations included.
pub fn replay<R: Read>(input: R) -> std::io::Result<ReplayStats> {
    let mut reader = Reader::new(input);
    let mut v = Replayer {
        stats: ReplayStats::default(),
    };
    while reader.read_game(&mut v)?.is_some() {}
    Ok(v.stats)
}
