//! Which adjacent segments to merge: tiers of growing size, as Lucene's log merge policy.
//!
//! A segment's tier is how many times `factor` its positions are beyond a small floor (1,000
//! positions: a few dozen games), so that small appends' segments merge among themselves in
//! tiers too and a game is written again a logarithmic number of times, never once per
//! append. Whenever `factor` adjacent segments share a tier, they become one segment of the next
//! tier: the number of segments then grows with the logarithm of the database's size, and
//! each game is written again once per tier it climbs. A merged segment never exceeds
//! `max_positions`, because a segment is built in memory (the builder's memory is what bounds
//! it); beyond that size segments stay as they are, and their number grows linearly again
//! (a tenth of a million games' worth of positions each at the defaults).

use cqldb_storage::SegmentEntry;

/// The knobs of the policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MergePolicy {
    /// How many segments of one tier make one of the next.
    pub factor: usize,
    /// The size of tier 0, in positions (smaller segments count as this size).
    pub floor_positions: u64,
    /// The largest merged segment, in positions.
    pub max_positions: u64,
    /// Whether to merge as many adjacent segments as fit under the cap, whatever their tiers
    /// (`cqldb optimize`).
    pub greedy: bool,
}

impl Default for MergePolicy {
    fn default() -> Self {
        Self {
            factor: 4,
            floor_positions: 1_000,
            max_positions: 8_000_000,
            greedy: false,
        }
    }
}

impl MergePolicy {
    /// Everything into as few segments as `max_positions` allows (`cqldb optimize`).
    pub fn everything() -> Self {
        Self {
            greedy: true,
            ..Self::default()
        }
    }

    /// The tier of a segment of `positions` positions.
    pub fn tier(&self, positions: u64) -> u32 {
        let mut tier = 0;
        let mut size = self.floor_positions.max(1);
        let factor = self.factor.max(2) as u64;
        while positions >= size.saturating_mul(factor) {
            size = size.saturating_mul(factor);
            tier += 1;
        }
        tier
    }

    /// The next merge to make among `segments` (in game order): the ids of `factor` (or, for
    /// [`MergePolicy::everything`], as many as fit) adjacent segments of the lowest tier that
    /// has such a run, or `None` when the database is as the policy wants it.
    pub fn next_merge(&self, segments: &[SegmentEntry]) -> Option<Vec<u64>> {
        let factor = self.factor.max(2);
        let tiers: Vec<u32> = segments
            .iter()
            .map(|s| {
                if self.greedy {
                    0
                } else {
                    self.tier(s.positions)
                }
            })
            .collect();
        let mut best: Option<(u32, Vec<u64>)> = None;
        let mut i = 0;
        while i < segments.len() {
            let tier = tiers[i];
            let mut j = i;
            while j < segments.len() && tiers[j] == tier {
                j += 1;
            }
            // Within the run of one tier, the first window that fits under the cap.
            if let Some(window) = self.window(&segments[i..j], factor)
                && best.as_ref().is_none_or(|(t, _)| tier < *t)
            {
                best = Some((tier, window));
            }
            i = j;
        }
        best.map(|(_, ids)| ids)
    }

    /// The first `factor` adjacent segments of `run` whose positions fit under the cap (when
    /// the policy merges everything, as many as fit, at least two).
    fn window(&self, run: &[SegmentEntry], factor: usize) -> Option<Vec<u64>> {
        let greedy = self.greedy;
        for start in 0..run.len() {
            let mut total = 0u64;
            let mut ids = Vec::new();
            let mut capped = false;
            for s in &run[start..] {
                if !greedy && ids.len() == factor {
                    break;
                }
                if total + s.positions > self.max_positions {
                    capped = true;
                    break;
                }
                total += s.positions;
                ids.push(s.id);
            }
            // Where the cap stops a window short of `factor`, what fits is merged: the
            // segments then reach the cap rather than stay a tier below it.
            let enough = if greedy || capped {
                ids.len() >= 2
            } else {
                ids.len() == factor
            };
            if enough {
                return Some(ids);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(id: u64, positions: u64) -> SegmentEntry {
        SegmentEntry {
            id,
            positions,
            ..SegmentEntry::default()
        }
    }

    fn simulate(policy: &MergePolicy, appends: usize, per_append: &[u64]) -> Vec<SegmentEntry> {
        let mut segs: Vec<SegmentEntry> = Vec::new();
        let mut id = 0;
        for _ in 0..appends {
            for &p in per_append {
                id += 1;
                segs.push(seg(id, p));
            }
            while let Some(ids) = policy.next_merge(&segs) {
                let at = segs.iter().position(|s| s.id == ids[0]).unwrap();
                let total = segs[at..at + ids.len()].iter().map(|s| s.positions).sum();
                id += 1;
                segs.splice(at..at + ids.len(), [seg(id, total)]);
            }
        }
        segs
    }

    #[test]
    fn tiers_grow_by_the_factor() {
        let p = MergePolicy {
            factor: 10,
            floor_positions: 100,
            max_positions: u64::MAX,
            greedy: false,
        };
        assert_eq!(p.tier(1), 0);
        assert_eq!(p.tier(999), 0);
        assert_eq!(p.tier(1000), 1);
        assert_eq!(p.tier(99_999), 2);
    }

    #[test]
    fn segments_stay_logarithmic_under_the_cap() {
        let p = MergePolicy {
            factor: 4,
            floor_positions: 100,
            max_positions: u64::MAX,
            greedy: false,
        };
        // 1000 appends of one full and one small segment.
        let segs = simulate(&p, 1000, &[100, 7]);
        let total: u64 = segs.iter().map(|s| s.positions).sum();
        assert_eq!(total, 107_000);
        // At most factor-1 segments per tier, tiers up to log4(2000).
        assert!(segs.len() <= 3 * 7, "{} segments", segs.len());
    }

    #[test]
    fn no_merge_passes_the_cap_and_merged_runs_are_adjacent() {
        let p = MergePolicy {
            factor: 4,
            floor_positions: 100,
            max_positions: 1000,
            greedy: false,
        };
        let segs = simulate(&p, 200, &[100]);
        assert!(segs.iter().all(|s| s.positions <= 1000));
        assert_eq!(segs.iter().map(|s| s.positions).sum::<u64>(), 20_000);
        // Under the cap the merges stop at 4 * 4 * 100 > 1000: 400-position segments.
        assert!(
            segs.len() <= 20_000 / 400 + 3 * 2,
            "{} segments",
            segs.len()
        );
    }

    #[test]
    fn everything_merges_greedily_up_to_the_cap() {
        let p = MergePolicy {
            max_positions: 1000,
            ..MergePolicy::everything()
        };
        let segs: Vec<_> = (1..=25).map(|i| seg(i, 100)).collect();
        assert_eq!(p.next_merge(&segs).unwrap().len(), 10);
        assert_eq!(p.next_merge(&segs[..1]), None);
    }
}
