//! Which rows of the candidate games a scan keeps: every row, the positions a pushed-down CQL
//! query matched, or the children of positions a `cql()` table matched (the moves out of them).

use std::collections::HashMap;
use std::sync::Arc;

use cqldb_executor::Game;

/// Position ids per game, ascending.
pub type PositionsByGame = Arc<HashMap<u64, Vec<u32>>>;

/// The rows kept of each candidate game.
#[derive(Clone, Debug, Default)]
pub enum Selection {
    /// Every row.
    #[default]
    Every,
    /// Only these positions of each game; a game not listed has none.
    Positions(PositionsByGame),
    /// Only the positions whose parent is listed (a move's row is the position it leads to,
    /// so these are the moves out of the listed positions).
    ChildrenOf(PositionsByGame),
}

impl Selection {
    /// The kept position ids of `game`, ascending for [`Selection::Every`] and
    /// [`Selection::ChildrenOf`] (no list is built when every row is kept: this runs for every
    /// game a `positions` or `moves` scan reads).
    pub fn positions<'a>(&'a self, game: &'a Game) -> Box<dyn Iterator<Item = u32> + 'a> {
        let len = game.positions.len();
        let listed =
            |map: &'a PositionsByGame| map.get(&game.number).map_or(&[][..], Vec::as_slice);
        match self {
            Selection::Every => Box::new(0..len as u32),
            Selection::Positions(map) => Box::new(
                listed(map)
                    .iter()
                    .copied()
                    .filter(move |&i| (i as usize) < len),
            ),
            Selection::ChildrenOf(map) => {
                let parents = listed(map);
                Box::new((0..len as u32).filter(move |&i| {
                    !parents.is_empty()
                        && game
                            .parent(i)
                            .is_some_and(|p| parents.binary_search(&p).is_ok())
                }))
            }
        }
    }
}
