//! Which rows of the candidate games a scan keeps: every row, or the positions a pushed-down
//! CQL query matched.

use std::collections::HashMap;
use std::sync::Arc;

/// The rows kept of each candidate game.
#[derive(Clone, Debug, Default)]
pub enum Selection {
    /// Every row.
    #[default]
    Every,
    /// Only these positions (ids, ascending) of each game; a game not listed has none.
    Positions(Arc<HashMap<u64, Vec<u32>>>),
}

impl Selection {
    /// The kept position ids of `game`, which has `len` positions (no list is built when
    /// every row is kept: this runs for every game a `positions` or `moves` scan reads).
    pub fn positions(&self, game: u64, len: usize) -> impl Iterator<Item = u32> + '_ {
        let (all, listed): (u32, &[u32]) = match self {
            Selection::Every => (len as u32, &[]),
            Selection::Positions(map) => (0, map.get(&game).map_or(&[][..], Vec::as_slice)),
        };
        (0..all).chain(listed.iter().copied().filter(move |&i| (i as usize) < len))
    }
}
