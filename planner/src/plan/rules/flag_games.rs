//! `flag_games`: where only a scan's games matter, the games with a flag come from the index's
//! per-flag game bitmaps instead of the flag's positions.

use shakmaty::Color;

use super::{Draft, Residual, Rule};
use crate::plan::{GameLine, PositionFlag, Scan, SinkKind};

/// The executor uses a plan's candidate positions for their games alone, except where an exact
/// plan lists the positions themselves (SQL's `cql()`). The games of `mate` on the main line
/// (with any whole-game sets beside it: `result 1-0`, a player) are then read as the segment's
/// bitmap of the games with a main-line mate: a few kilobytes instead of every mate position,
/// a main-line test and a game lookup for each (tens of milliseconds at 10 M games). With `wtm`
/// or `btm` beside the flag, the bitmap of the games where that side is to move in such a
/// position (`btm mate`: White mates; `wtm check` had to intersect the checks with the side to
/// move, 108 ms at 10 M games).
pub struct FlagGames;

impl Rule for FlagGames {
    fn name(&self) -> &'static str {
        "flag_games"
    }

    fn apply(&self, d: &mut Draft) -> Option<String> {
        let lists_positions = d.residual == Residual::None && d.logical.sink == SinkKind::Positions;
        if d.no_pruning.is_some() || lists_positions {
            return None;
        }
        let upper = games_alike(&d.upper);
        if upper == d.upper {
            return None;
        }
        // An exact plan stays exact: its games are the same.
        if d.lower == d.upper {
            d.lower = upper.clone();
        }
        d.upper = upper;
        Some("the games with a flag read from the flag's game bitmaps".into())
    }
}

/// A scan with the same games as `s` (recursion follows the query's nesting, which the parser
/// limits): a flag's positions, alone or on the main line beside whole-game sets, become the
/// games with that flag; a union's parts are taken one by one (the games of a union are the
/// union of its parts' games). Anything else is kept.
fn games_alike(s: &Scan) -> Scan {
    match s {
        Scan::And(xs) => flag_and_games(xs).unwrap_or_else(|| s.clone()),
        Scan::Or(xs) => Scan::Or(xs.iter().map(games_alike).collect()),
        Scan::GamesWith(x) => Scan::games_with(games_alike(x)),
        Scan::Flag(_) => flag_and_games(std::slice::from_ref(s)).unwrap_or_else(|| s.clone()),
        Scan::All
        | Scan::Empty
        | Scan::Pieces { .. }
        | Scan::Material(_)
        | Scan::GameNumbers(..)
        | Scan::GameResult(_)
        | Scan::GameRange { .. }
        | Scan::GameTag { .. }
        | Scan::Moves { .. }
        | Scan::Ply(..)
        | Scan::Board { .. }
        | Scan::Not(_)
        | Scan::FlagGames { .. } => s.clone(),
    }
}

/// `whole-game sets and flags [and mainline] [and wtm | btm]` (a lone flag too) as
/// `whole-game sets and the games with flags`, where `flags` is one flag or a union of flags:
/// a game is in the first's games when it is in every set and has a position with one of the
/// flags (on the main line, with that side to move), exactly when it is in the second.
fn flag_and_games(xs: &[Scan]) -> Option<Scan> {
    let (games, positions): (Vec<&Scan>, Vec<&Scan>) = xs.iter().partition(|x| x.is_whole_games());
    let mut out: Vec<Scan> = games.into_iter().cloned().collect();
    let (mut flags, mut line, mut side) = (None, GameLine::Anywhere, None);
    for x in positions {
        match (x, side_to_move(x)) {
            (Scan::Flag(PositionFlag::Mainline), _) if line == GameLine::Anywhere => {
                line = GameLine::Main;
            }
            (_, Some(color)) if side.is_none() => side = Some(color),
            _ if flags.is_none() => flags = Some(x),
            // A second flag set, line or side: not this shape.
            _ => return None,
        }
    }
    let games = |s: &Scan| match s {
        Scan::Flag(flag) if flag.has_game_bitmaps() => Some(Scan::FlagGames {
            flag: *flag,
            line,
            side,
        }),
        _ => None,
    };
    out.push(match flags? {
        Scan::Or(ys) => Scan::Or(ys.iter().map(games).collect::<Option<Vec<_>>>()?),
        x => games(x)?,
    });
    Some(if out.len() == 1 {
        out.remove(0)
    } else {
        Scan::And(out)
    })
}

/// The side a scan says is to move: `wtm` is White, its complement (`btm`) Black.
fn side_to_move(s: &Scan) -> Option<Color> {
    let wtm = Scan::Flag(PositionFlag::WhiteToMove);
    match s {
        x if *x == wtm => Some(Color::White),
        Scan::Not(x) if **x == wtm => Some(Color::Black),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::rules::tests::draft;

    fn flag(f: PositionFlag) -> Scan {
        Scan::Flag(f)
    }

    fn games(flag: PositionFlag, line: GameLine) -> Scan {
        Scan::FlagGames {
            flag,
            line,
            side: None,
        }
    }

    fn wtm() -> Scan {
        flag(PositionFlag::WhiteToMove)
    }

    fn btm() -> Scan {
        Scan::Not(Box::new(wtm()))
    }

    #[test]
    fn the_side_to_move_beside_a_flag_picks_its_sided_games() {
        let sided = |flag, line, side| Scan::FlagGames { flag, line, side };
        let mut d = draft("btm mate");
        d.upper = Scan::And(vec![
            flag(PositionFlag::Mate),
            flag(PositionFlag::Mainline),
            btm(),
        ]);
        d.lower = d.upper.clone();
        assert!(FlagGames.apply(&mut d).is_some());
        let black = Some(Color::Black);
        assert_eq!(d.upper, sided(PositionFlag::Mate, GameLine::Main, black));
        assert_eq!(d.lower, d.upper, "still exact");
        // In any order, beside whole-game sets, with a union of flags, anywhere in the tree.
        d.upper = Scan::And(vec![
            wtm(),
            Scan::GameResult("0-1".into()),
            Scan::Or(vec![
                flag(PositionFlag::Check),
                flag(PositionFlag::Stalemate),
            ]),
        ]);
        assert!(FlagGames.apply(&mut d).is_some());
        let white = Some(Color::White);
        assert_eq!(
            d.upper,
            Scan::And(vec![
                Scan::GameResult("0-1".into()),
                Scan::Or(vec![
                    sided(PositionFlag::Check, GameLine::Anywhere, white),
                    sided(PositionFlag::Stalemate, GameLine::Anywhere, white),
                ]),
            ])
        );
        // Both sides, a side alone, a side twice: kept.
        for kept in [
            vec![flag(PositionFlag::Mate), wtm(), btm()],
            vec![wtm(), flag(PositionFlag::Mainline)],
            vec![wtm(), wtm(), flag(PositionFlag::Check)],
            vec![btm(), flag(PositionFlag::Mate), flag(PositionFlag::Check)],
        ] {
            d.upper = Scan::And(kept);
            let before = d.upper.clone();
            assert!(FlagGames.apply(&mut d).is_none(), "{before:?}");
            assert_eq!(d.upper, before);
        }
    }

    #[test]
    fn a_flag_on_the_main_line_becomes_its_games() {
        let mut d = draft("mate");
        d.upper = Scan::And(vec![flag(PositionFlag::Mate), flag(PositionFlag::Mainline)]);
        d.lower = d.upper.clone();
        assert!(FlagGames.apply(&mut d).is_some());
        assert_eq!(d.upper, games(PositionFlag::Mate, GameLine::Main));
        assert_eq!(d.lower, d.upper, "still exact");
    }

    #[test]
    fn whole_game_sets_stay_beside_it_and_unions_are_taken_apart() {
        let mut d = draft("mate");
        d.logical.sink = SinkKind::Count;
        d.residual = Residual::None;
        d.upper = Scan::Or(vec![
            Scan::And(vec![
                Scan::GameResult("1-0".into()),
                flag(PositionFlag::Mainline),
                flag(PositionFlag::Check),
            ]),
            flag(PositionFlag::Stalemate),
        ]);
        assert!(FlagGames.apply(&mut d).is_some());
        assert_eq!(
            d.upper,
            Scan::Or(vec![
                Scan::And(vec![
                    Scan::GameResult("1-0".into()),
                    games(PositionFlag::Check, GameLine::Main),
                ]),
                games(PositionFlag::Stalemate, GameLine::Anywhere),
            ])
        );
        assert_ne!(d.lower, d.upper, "was not exact");
    }

    #[test]
    fn a_union_of_flags_on_the_main_line_becomes_a_union_of_their_games() {
        let mut d = draft("mate or stalemate");
        d.upper = Scan::And(vec![
            Scan::Or(vec![
                flag(PositionFlag::Mate),
                flag(PositionFlag::Stalemate),
            ]),
            flag(PositionFlag::Mainline),
        ]);
        assert!(FlagGames.apply(&mut d).is_some());
        assert_eq!(
            d.upper,
            Scan::Or(vec![
                games(PositionFlag::Mate, GameLine::Main),
                games(PositionFlag::Stalemate, GameLine::Main),
            ])
        );
        // A union with another position set: kept.
        d.upper = Scan::And(vec![
            Scan::Or(vec![flag(PositionFlag::Mate), Scan::Material(Vec::new())]),
            flag(PositionFlag::Mainline),
        ]);
        let before = d.upper.clone();
        assert!(FlagGames.apply(&mut d).is_none());
        assert_eq!(d.upper, before);
    }

    #[test]
    fn positions_needed_or_other_positions_keep_the_scan() {
        let kept = |d: &mut Draft| {
            let before = d.upper.clone();
            assert!(FlagGames.apply(d).is_none());
            assert_eq!(d.upper, before);
        };
        // Listed positions: the flag's positions are the answer.
        let mut d = draft("mate");
        d.logical.sink = SinkKind::Positions;
        d.residual = Residual::None;
        d.upper = flag(PositionFlag::Mate);
        kept(&mut d);
        // Another position set beside the flag: its games are not the flag's.
        let mut d = draft("mate");
        d.upper = Scan::And(vec![
            flag(PositionFlag::Mate),
            flag(PositionFlag::Mainline),
            Scan::Material(Vec::new()),
        ]);
        kept(&mut d);
        // A flag every game has: no game bitmaps; a complement: not the games of its input.
        d.upper = Scan::And(vec![
            flag(PositionFlag::Terminal),
            flag(PositionFlag::Mainline),
        ]);
        kept(&mut d);
        d.upper = Scan::Not(Box::new(flag(PositionFlag::Check)));
        kept(&mut d);
        // On the virtual main line: no game bitmaps of it.
        d.upper = Scan::And(vec![
            flag(PositionFlag::Mate),
            flag(PositionFlag::VirtualMainline),
        ]);
        kept(&mut d);
        // No pruning at all.
        let mut d = draft("mate");
        d.upper = flag(PositionFlag::Mate);
        d.no_pruning = Some("full scan".into());
        kept(&mut d);
    }
}
