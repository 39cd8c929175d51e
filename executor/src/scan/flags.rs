//! Position flags as the index stores them: a flag's bitmap key, and the key of the games with
//! a flag (per line and side to move) with the positions a segment without them reads instead.

use cqldb_planner::plan::{GameLine, PositionFlag, Scan};
use cqldb_storage::{BitmapKey, PositionFlags};
use shakmaty::Color;

/// The key of the games with `f` on `line` with `side` to move.
pub(super) fn flag_games_key(f: PositionFlag, line: GameLine, side: Option<Color>) -> BitmapKey {
    let line = match line {
        GameLine::Main => cqldb_storage::GameLine::Main,
        GameLine::Anywhere => cqldb_storage::GameLine::Anywhere,
    };
    BitmapKey::flag_games(flag(f), line, side)
}

/// The positions whose games [`Scan::FlagGames`] names.
pub(super) fn flag_positions(f: PositionFlag, line: GameLine, side: Option<Color>) -> Scan {
    let mut all = vec![Scan::Flag(f)];
    if line == GameLine::Main {
        all.push(Scan::Flag(PositionFlag::Mainline));
    }
    let wtm = Scan::Flag(PositionFlag::WhiteToMove);
    match side {
        None => {}
        Some(Color::White) => all.push(wtm),
        Some(Color::Black) => all.push(Scan::Not(Box::new(wtm))),
    }
    if all.len() == 1 {
        all.remove(0)
    } else {
        Scan::And(all)
    }
}

/// The stored flag of a query's flag.
pub(super) fn flag(f: PositionFlag) -> PositionFlags {
    match f {
        PositionFlag::Check => PositionFlags::CHECK,
        PositionFlag::Mate => PositionFlags::MATE,
        PositionFlag::Stalemate => PositionFlags::STALEMATE,
        PositionFlag::Initial => PositionFlags::INITIAL,
        PositionFlag::Terminal => PositionFlags::TERMINAL,
        PositionFlag::Mainline => PositionFlags::MAINLINE,
        PositionFlag::VirtualMainline => PositionFlags::VIRTUAL_MAINLINE,
        PositionFlag::WhiteToMove => PositionFlags::WHITE_TO_MOVE,
    }
}
