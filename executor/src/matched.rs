//! The numbers of the games a run selected ([`Matched`]), kept as the index's game sets where
//! the index answered alone.
//!
//! Why: an exact count of a broad filter (`check`: two games in three) selects millions of
//! games; a number each cost more than the whole index scan (7 ns a game at 10 M games), and a
//! count needs only their number.

use roaring::RoaringBitmap;

/// Numbers of the selected games, in output order.
#[derive(Clone, Debug, Default)]
pub struct Matched {
    /// Games taken one by one, in output order.
    listed: Vec<u64>,
    /// Then whole sets, in order: each segment's selected games (segment-local numbers) with the
    /// database number of the segment's first game.
    sets: Vec<(u64, RoaringBitmap)>,
}

impl Matched {
    /// How many.
    pub fn len(&self) -> usize {
        self.listed.len()
            + self
                .sets
                .iter()
                .map(|(_, s)| s.len() as usize)
                .sum::<usize>()
    }

    /// True when none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds the next game.
    pub fn push(&mut self, number: u64) {
        self.flatten();
        self.listed.push(number);
    }

    /// Adds the games of a segment whose first game is numbered `first` (they follow every
    /// game added so far).
    pub fn push_segment(&mut self, first: u64, games: RoaringBitmap) {
        if !games.is_empty() {
            self.sets.push((first, games));
        }
    }

    /// The numbers, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.listed.iter().copied().chain(
            self.sets
                .iter()
                .flat_map(|(first, games)| games.iter().map(move |g| first + u64::from(g))),
        )
    }

    /// The numbers, in order, as a vector.
    pub fn into_vec(mut self) -> Vec<u64> {
        self.flatten();
        self.listed
    }

    /// Moves the sets into the list (keeping the order).
    fn flatten(&mut self) {
        if self.sets.is_empty() {
            return;
        }
        let sets = std::mem::take(&mut self.sets);
        self.listed
            .reserve(sets.iter().map(|(_, s)| s.len() as usize).sum());
        // A batch at a time: roaring's one-at-a-time iterator was a quarter of the time of
        // counting a broad query's 155k games.
        let mut batch = [0u32; 512];
        for (first, games) in sets {
            let mut members = games.iter();
            loop {
                let got = members.next_many(&mut batch);
                if got.is_empty() {
                    break;
                }
                self.listed
                    .extend(got.iter().map(|&g| first + u64::from(g)));
            }
        }
    }
}

impl From<Vec<u64>> for Matched {
    fn from(listed: Vec<u64>) -> Self {
        Self {
            listed,
            sets: Vec::new(),
        }
    }
}

/// Equal when the same numbers come in the same order, however they are held.
impl PartialEq for Matched {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Matched {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_and_single_games_keep_their_order() {
        let mut m = Matched::default();
        m.push(3);
        m.push_segment(10, [0u32, 2].into_iter().collect());
        m.push_segment(20, RoaringBitmap::new());
        m.push_segment(30, [1u32].into_iter().collect());
        assert_eq!(m.len(), 4);
        assert_eq!(m.iter().collect::<Vec<_>>(), [3, 10, 12, 31]);
        m.push(40);
        assert_eq!(m, Matched::from(vec![3, 10, 12, 31, 40]));
        assert_eq!(m.into_vec(), [3, 10, 12, 31, 40]);
    }
}
