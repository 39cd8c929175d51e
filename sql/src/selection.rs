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
    /// The kept position ids of `game`, which has `len` positions.
    pub fn positions(&self, game: u64, len: usize) -> Vec<u32> {
        match self {
            Selection::Every => (0..len as u32).collect(),
            Selection::Positions(map) => map
                .get(&game)
                .map(|ids| {
                    ids.iter()
                        .copied()
                        .filter(|&i| (i as usize) < len)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}
