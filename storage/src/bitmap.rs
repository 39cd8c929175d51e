//! Roaring-bitmap attribute indexes of a segment.
//!
//! Position bitmaps are over segment-local position numbers: one per (colour, role, square), per
//! flag and per material signature. Game bitmaps are over segment-local game numbers: per result,
//! year, ECO code and Elo band. Bitmaps are built from runs (positions in pre-order keep a piece on
//! a square for many consecutive ids; see `batch.rs`), then run-optimised and serialised one blob
//! a key.

use rustc_hash::FxHashMap;

use shakmaty::Color;

use crate::bitmap_pack::store_runs;
use crate::roaring_runs::{RunScratch, serialize_runs_with};
use crate::runs::{BatchRuns, DENSE_SLOTS, SIDE_TO_MOVE_SLOT, slot_key};
use crate::schema::{ELO_BAND_WIDTH, GameMeta, GameResult, PositionFlags, date_year, rating};

use crate::batch::GameFlags;
pub use crate::bitmap_key::{
    BitmapKey, FLAG_SIDES, GAME_FLAGS, GameLine, MIN_BOARD_REPEATS, move_bit,
};

/// Every result, in key order.
const RESULTS: [GameResult; 4] = [
    GameResult::Unknown,
    GameResult::WhiteWins,
    GameResult::BlackWins,
    GameResult::Draw,
];

/// Accumulates the bitmaps of one segment from per-batch runs and per-game attributes.
///
/// Each batch's runs arrive grouped by bitmap (see [`BatchRuns`]) and are kept as they are; at the
/// end every bitmap's runs are concatenated over the batches (merging runs that touch across a
/// batch boundary) and serialised straight into roaring's portable format. Building
/// `RoaringBitmap`s range by range, or appending runs one by one in the writer thread, cost more
/// than everything else the writer does.
#[derive(Default)]
pub struct BitmapBuilder {
    /// Each batch's first segment-local position id and its runs.
    batches: Vec<(u32, BatchRuns)>,
    /// Material and game bitmaps (few runs each), by key.
    other: FxHashMap<u64, Vec<(u32, u32)>>,
}

fn push_run(runs: &mut Vec<(u32, u32)>, start: u32, end: u32) {
    if end <= start {
        return;
    }
    match runs.last_mut() {
        Some(last) if last.1 >= start => last.1 = last.1.max(end),
        _ => runs.push((start, end)),
    }
}

impl BitmapBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a batch's runs, its position ids shifted by `base`.
    pub fn add_runs(&mut self, base: u32, runs: BatchRuns) {
        let mut current: Option<(u64, &mut Vec<(u32, u32)>)> = None;
        for &(key, start, end) in runs.material() {
            let list = match current {
                Some((k, list)) if k == key => list,
                _ => self.other.entry(key).or_default(),
            };
            push_run(list, base + start, base + end);
            current = Some((key, list));
        }
        self.batches.push((base, runs));
    }

    /// Adds a game (segment-local number `game`) with its tags and its positions' flags.
    pub fn push_game(
        &mut self,
        game: u32,
        meta: &GameMeta,
        flags: GameFlags,
        tags: &[(String, String)],
    ) {
        let mut add =
            |key: BitmapKey| push_run(self.other.entry(key.to_u64()).or_default(), game, game + 1);
        add(BitmapKey::Result(meta.result));
        for line in GameLine::ALL {
            for side in FLAG_SIDES {
                for flag in GAME_FLAGS {
                    if flags.on(line, side).contains(flag) {
                        add(BitmapKey::flag_games(flag, line, side));
                    }
                }
            }
        }
        let result_tag = tags.iter().find(|(name, _)| name == "Result");
        if let Some(r) = result_tag.and_then(|(_, v)| RESULTS.into_iter().find(|r| r.as_pgn() == v))
        {
            add(BitmapKey::ResultTag(r));
        }
        // The year and ratings as a query reads them (not `meta`'s, which may come from
        // `EventDate` and keep 0 for none).
        let first = |name: &str| {
            tags.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        if let Some(year) = first("Date").and_then(date_year) {
            add(u16::try_from(year).map_or(BitmapKey::YearOutside, BitmapKey::Year));
        }
        if meta.eco > 0 {
            add(BitmapKey::Eco(meta.eco));
        }
        for (color, tag) in [(Color::White, "WhiteElo"), (Color::Black, "BlackElo")] {
            if let Some(elo) = first(tag).and_then(rating) {
                add(
                    u16::try_from(elo).map_or(BitmapKey::EloOutside(color), |elo| {
                        BitmapKey::EloBand(color, elo / ELO_BAND_WIDTH)
                    }),
                );
            }
        }
    }

    /// Adds the games of each tag value (index = value number, games ascending).
    pub fn add_tag_values(&mut self, values: &[Vec<u32>]) {
        for (id, games) in values.iter().enumerate() {
            // A value of one game keeps it in its tag index document instead (`tags/`).
            if crate::tags::inlined(games) {
                continue;
            }
            let runs = self
                .other
                .entry(BitmapKey::TagValue(id as u32).to_u64())
                .or_default();
            for &g in games {
                push_run(runs, g, g + 1);
            }
        }
    }

    /// Serialises every non-empty bitmap, sorted by key.
    pub fn finish(self) -> (Vec<u64>, Vec<Vec<u8>>) {
        let mut buffers = RunScratch::default();
        let mut entries: Vec<(u64, Vec<u8>)> = self
            .other
            .into_iter()
            .map(|(key, runs)| {
                // The games with a flag answer counts alone: read whole by every such count,
                // they stay in roaring's format, which reads as fast as it is copied (packed,
                // the two in three games with a check took longer to unpack than to count).
                let blob = match BitmapKey::from_u64(key) {
                    Some(BitmapKey::FlagGames(..)) => serialize_runs_with(&runs, &mut buffers),
                    _ => store_runs(&runs, &mut buffers),
                };
                (key, blob)
            })
            .collect();
        let mut scratch = Vec::new();
        if let Some(blob) = side_to_move(&self.batches, &mut scratch) {
            entries.push((slot_key(SIDE_TO_MOVE_SLOT), blob));
        }
        for slot in (0..DENSE_SLOTS).filter(|&s| s != SIDE_TO_MOVE_SLOT) {
            scratch.clear();
            for (base, runs) in &self.batches {
                for &(start, end) in runs.slot(slot) {
                    push_run(&mut scratch, base + start, base + end);
                }
            }
            if !scratch.is_empty() {
                let key = slot_key(slot);
                // The main line's bitmap is read by nearly every query (positions off it are
                // not visited), mostly to test a few positions: kept in roaring's format,
                // whose containers are read alone, instead of unpacked whole. Real games have
                // few variations, so it is small there (a third of synthetic positions are in
                // variations: a count of `mate` over 10 M of them took 60 ms packed).
                let blob = if key == BitmapKey::flag(PositionFlags::MAINLINE).to_u64() {
                    serialize_runs_with(&scratch, &mut buffers)
                } else {
                    store_runs(&scratch, &mut buffers)
                };
                entries.push((key, blob));
            }
        }
        entries.push((
            BitmapKey::MOVES_MARKER.to_u64(),
            serialize_runs_with(&[], &mut buffers),
        ));
        // Keys a segment has even when empty: their presence says what it was written with.
        let markers = RESULTS
            .into_iter()
            .map(BitmapKey::ResultTag)
            .chain([BitmapKey::YearOutside])
            .chain(Color::ALL.map(BitmapKey::EloOutside))
            .chain(
                GameLine::ALL
                    .into_iter()
                    .flat_map(|line| FLAG_SIDES.map(move |side| (line, side)))
                    .flat_map(|(line, side)| {
                        GAME_FLAGS.map(|flag| BitmapKey::flag_games(flag, line, side))
                    }),
            );
        for key in markers.map(BitmapKey::to_u64) {
            if !entries.iter().any(|(k, _)| *k == key) {
                entries.push((key, serialize_runs_with(&[], &mut buffers)));
            }
        }
        entries.sort_unstable_by_key(|(k, _)| *k);
        entries.into_iter().unzip()
    }
}

/// The stored side-to-move bitmap of a segment of `batches` (`bitmap_parity.rs`; `None` for no
/// positions). The batches' parity runs are over batch-local ids: a batch that starts at an odd
/// id has the parity of each of its ids the other way, so its runs are complemented.
fn side_to_move(batches: &[(u32, BatchRuns)], scratch: &mut Vec<(u32, u32)>) -> Option<Vec<u8>> {
    scratch.clear();
    let mut positions = 0u32;
    for (base, runs) in batches {
        let part = runs.slot(SIDE_TO_MOVE_SLOT);
        if base & 1 == 0 {
            for &(start, end) in part {
                push_run(scratch, base + start, base + end);
            }
        } else {
            for (start, end) in complement(part, runs.positions()) {
                push_run(scratch, base + start, base + end);
            }
        }
        positions = base + runs.positions();
    }
    // The runs were found in order within each batch and the batches follow each other,
    // so they are sorted and inside the segment: what `store` checks.
    (positions > 0).then(|| {
        crate::bitmap_parity::store(scratch, positions)
            .expect("parity runs are sorted and inside the segment")
    })
}

/// The runs of `0..len` outside `runs` (sorted, disjoint, half-open, inside `0..len`).
fn complement(runs: &[(u32, u32)], len: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
    let ends = std::iter::once(0).chain(runs.iter().map(|&(_, e)| e));
    let starts = runs.iter().map(|&(s, _)| s).chain(std::iter::once(len));
    ends.zip(starts).filter(|(a, b)| a < b)
}

/// The board bitmaps of a segment whose positions have the board keys `boards` (position i's
/// at index i), sorted by key: one for each placement occurring at least [`MIN_BOARD_REPEATS`]
/// times; then, last, the board index of the other positions (see `board_index.rs`). Board keys
/// sort after every other kind of key, and the index's after them.
pub fn board_bitmaps(boards: &[u64]) -> (Vec<u64>, Vec<Vec<u8>>) {
    // Most placements occur once (every game leaves its opening soon): a table of saturating
    // counters, one per slot of key bits, drops them before the sort. A slot's count is at
    // least each of its keys' counts, so no repeated placement is dropped.
    let bits = (usize::BITS - boards.len().leading_zeros()).clamp(10, 24);
    let mask = (1usize << bits) - 1;
    let mut counts = vec![0u8; 1 << bits];
    for &key in boards {
        let c = &mut counts[key as usize & mask];
        *c = c.saturating_add(1);
    }
    let mut repeated: Vec<(u64, u32)> = (0u32..)
        .zip(boards)
        .filter(|&(_, &key)| usize::from(counts[key as usize & mask]) >= MIN_BOARD_REPEATS)
        .map(|(pos, &key)| (key, pos))
        .collect();
    repeated.sort_unstable();
    let mut scratch = RunScratch::default();
    let mut runs = Vec::new();
    let (mut keys, mut blobs) = (Vec::new(), Vec::new());
    let mut covered = fixedbitset::FixedBitSet::with_capacity(boards.len());
    for group in repeated.chunk_by(|a, b| a.0 == b.0) {
        if group.len() < MIN_BOARD_REPEATS {
            continue;
        }
        runs.clear();
        for &(_, pos) in group {
            push_run(&mut runs, pos, pos + 1);
            covered.insert(pos as usize);
        }
        keys.push(group[0].0);
        blobs.push(store_runs(&runs, &mut scratch));
    }
    for (part, blob) in (0u32..).zip(crate::board_index::build(boards, &covered)) {
        keys.push(BitmapKey::BoardIndex(part).to_u64());
        blobs.push(blob);
    }
    (keys, blobs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Bitboards, MaterialSignature};
    use proptest::prelude::*;
    use roaring::RoaringBitmap;
    use shakmaty::{Role, Square};

    /// Segments append board bitmaps after the others' sorted keys.
    #[test]
    fn board_keys_sort_after_every_other_kind() {
        let board = BitmapKey::Board(0).to_u64();
        for other in [
            BitmapKey::Piece(Color::Black, Role::King, Square::H8),
            BitmapKey::Flag(63),
            BitmapKey::Material(MaterialSignature(u64::MAX >> 8)),
            BitmapKey::TagValue(u32::MAX),
            BitmapKey::Move(63),
            BitmapKey::EloBand(Color::White, u16::MAX),
            BitmapKey::FlagGames(63, GameLine::Anywhere, Some(Color::Black)),
        ] {
            assert!(other.to_u64() < board, "{other:?}");
        }
        let k = BitmapKey::board(&Bitboards::default());
        assert_eq!(BitmapKey::from_u64(k.to_u64()), Some(k));
    }

    #[test]
    fn result_tag_bitmaps_hold_exact_spellings_and_always_exist() {
        for r in RESULTS {
            let k = BitmapKey::ResultTag(r);
            assert_eq!(BitmapKey::from_u64(k.to_u64()), Some(k));
            assert_ne!(k.to_u64(), BitmapKey::Result(r).to_u64());
            assert!(k.is_game_key());
        }
        let meta = GameMeta {
            result: GameResult::BlackWins,
            year: 0,
            eco: 0,
            white_elo: 0,
            black_elo: 0,
        };
        let tag = |v: &str| vec![("Result".to_owned(), v.to_owned())];
        let mut b = BitmapBuilder::default();
        b.push_game(0, &meta, GameFlags::default(), &tag("0-1"));
        // Not CQL's `0-1`: an indexed result, but no exact tag.
        b.push_game(1, &meta, GameFlags::default(), &tag(" 0-1"));
        b.push_game(2, &meta, GameFlags::default(), &[]);
        // The first tag counts.
        let mut two = tag("*");
        two.extend(tag("0-1"));
        b.push_game(3, &meta, GameFlags::default(), &two);
        let (keys, blobs) = b.finish();
        let get = |k: BitmapKey| {
            let i = keys.iter().position(|&x| x == k.to_u64()).expect("key");
            RoaringBitmap::deserialize_from(blobs[i].as_slice()).unwrap()
        };
        let games = |b: RoaringBitmap| b.iter().collect::<Vec<_>>();
        assert_eq!(games(get(BitmapKey::ResultTag(GameResult::BlackWins))), [0]);
        assert_eq!(games(get(BitmapKey::ResultTag(GameResult::Unknown))), [3]);
        assert!(get(BitmapKey::ResultTag(GameResult::Draw)).is_empty());
        assert!(get(BitmapKey::ResultTag(GameResult::WhiteWins)).is_empty());
        assert_eq!(
            games(get(BitmapKey::Result(GameResult::BlackWins))),
            [0, 1, 2, 3]
        );
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    /// A game is in a flag's game bitmap of a line when some position of that line carries
    /// the flag; a segment has every such bitmap, empty ones included.
    #[test]
    fn flag_games_name_the_games_with_the_flag_on_each_line_and_side() {
        let meta = GameMeta {
            result: GameResult::Unknown,
            year: 0,
            eco: 0,
            white_elo: 0,
            black_elo: 0,
        };
        let main = |f: PositionFlags| PositionFlags(f.0 | PositionFlags::MAINLINE.0);
        let white = |f: PositionFlags| PositionFlags(f.0 | PositionFlags::WHITE_TO_MOVE.0);
        let flags = |line: &[PositionFlags]| GameFlags::of(line.iter().copied());
        let mut b = BitmapBuilder::default();
        // Black mated on the main line, White in check in a variation only.
        let g0 = flags(&[
            white(main(PositionFlags::INITIAL)),
            white(PositionFlags::CHECK),
            main(PositionFlags::MATE),
        ]);
        b.push_game(0, &meta, g0, &[]);
        // White in check on the main line.
        b.push_game(1, &meta, flags(&[white(main(PositionFlags::CHECK))]), &[]);
        // White mated in a variation, Black in check there too.
        let g2 = flags(&[white(PositionFlags::MATE), PositionFlags::CHECK]);
        b.push_game(2, &meta, g2, &[]);
        let (keys, blobs) = b.finish();
        let get = |flag, line, side| {
            let k = BitmapKey::flag_games(flag, line, side);
            assert_eq!(BitmapKey::from_u64(k.to_u64()), Some(k));
            assert!(k.is_game_key());
            let i = keys.iter().position(|&x| x == k.to_u64()).expect("key");
            let blob = if crate::bitmap_pack::is_packed(&blobs[i]) {
                crate::bitmap_pack::unpack(&blobs[i], &mut RunScratch::default()).unwrap()
            } else {
                blobs[i].clone()
            };
            RoaringBitmap::deserialize_from(blob.as_slice())
                .unwrap()
                .iter()
                .collect::<Vec<_>>()
        };
        let (main_line, anywhere) = (GameLine::Main, GameLine::Anywhere);
        let (w, b) = (Some(Color::White), Some(Color::Black));
        assert_eq!(get(PositionFlags::MATE, main_line, None), [0]);
        assert_eq!(get(PositionFlags::MATE, anywhere, None), [0, 2]);
        assert_eq!(get(PositionFlags::CHECK, main_line, None), [1]);
        assert_eq!(get(PositionFlags::CHECK, anywhere, None), [0, 1, 2]);
        assert_eq!(get(PositionFlags::MATE, main_line, b), [0]);
        assert!(get(PositionFlags::MATE, main_line, w).is_empty());
        assert_eq!(get(PositionFlags::MATE, anywhere, w), [2]);
        assert_eq!(get(PositionFlags::MATE, anywhere, b), [0]);
        assert_eq!(get(PositionFlags::CHECK, main_line, w), [1]);
        assert!(get(PositionFlags::CHECK, main_line, b).is_empty());
        assert_eq!(get(PositionFlags::CHECK, anywhere, w), [0, 1]);
        assert_eq!(get(PositionFlags::CHECK, anywhere, b), [2]);
        for line in GameLine::ALL {
            for side in FLAG_SIDES {
                assert!(get(PositionFlags::STALEMATE, line, side).is_empty());
            }
        }
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    /// The keys written before sided game bitmaps existed keep their encoding.
    #[test]
    fn unsided_flag_game_keys_keep_their_encoding() {
        let k = BitmapKey::flag_games(PositionFlags::MATE, GameLine::Anywhere, None);
        let bit = u64::from(PositionFlags::MATE.0.trailing_zeros());
        assert_eq!(k.to_u64(), 2 << 56 | 0x1_0000 | 1 << 8 | bit);
        for side in FLAG_SIDES {
            for line in GameLine::ALL {
                let k = BitmapKey::flag_games(PositionFlags::CHECK, line, side);
                assert_eq!(BitmapKey::from_u64(k.to_u64()), Some(k));
            }
        }
    }

    /// A row with only its side to move set (the rest as at the start of a game).
    fn row(white: bool) -> crate::schema::PositionRecord {
        let board = shakmaty::Board::default();
        crate::schema::PositionRecord {
            parent: crate::schema::NO_PARENT,
            child_index: 0,
            children: 0,
            ply: 0,
            depth: 0,
            move_number: 1,
            flags: if white {
                PositionFlags::WHITE_TO_MOVE
            } else {
                PositionFlags(0)
            },
            mv: crate::schema::MoveCode::NONE,
            castling: shakmaty::Bitboard::EMPTY,
            ep_square: None,
            halfmove_clock: 0,
            zobrist: 0,
            material: MaterialSignature::of(&board),
            board: Bitboards::of(&board),
        }
    }

    proptest! {
        /// The segment's side-to-move bitmap holds exactly the white-to-move positions, however
        /// the games fall into batches (batches of odd and even length, so of both parities of
        /// start) and whatever sides the games' lines start with.
        #[test]
        fn side_to_move_is_every_white_to_move_position(
            games in proptest::collection::vec(
                proptest::collection::vec((any::<bool>(), 1usize..40), 1..4), 1..30),
            batch_sizes in proptest::collection::vec(1usize..5, 1..10),
        ) {
            let games: Vec<Vec<crate::schema::PositionRecord>> = games
                .iter()
                .map(|lines| {
                    lines
                        .iter()
                        .flat_map(|&(white, len)| (0..len).map(move |i| row(white ^ (i % 2 == 1))))
                        .collect()
                })
                .collect();
            let mut builder = BitmapBuilder::new();
            let (mut at, mut base, mut sizes) = (0, 0u32, batch_sizes.iter().cycle());
            while at < games.len() {
                let n = (*sizes.next().unwrap()).min(games.len() - at);
                let runs = BatchRuns::of(&games[at..at + n]);
                let positions = runs.positions();
                builder.add_runs(base, runs);
                base += positions;
                at += n;
            }
            let want: RoaringBitmap = (0u32..)
                .zip(games.iter().flatten())
                .filter(|(_, r)| r.flags.contains(PositionFlags::WHITE_TO_MOVE))
                .map(|(id, _)| id)
                .collect();
            let (keys, blobs) = builder.finish();
            let key = BitmapKey::flag(PositionFlags::WHITE_TO_MOVE).to_u64();
            let i = keys.iter().position(|&k| k == key).expect("a side-to-move bitmap");
            let bytes = crate::bitmap_parity::roaring_bytes(&blobs[i]).expect("readable");
            prop_assert_eq!(RoaringBitmap::deserialize_from(&bytes[..]).unwrap(), want);
        }

        /// Every placement repeated often enough gets exactly its positions; no other gets a
        /// bitmap (keys drawn from a few values so that slots of the counter table are shared,
        /// with a big table and a small one).
        #[test]
        fn board_bitmaps_hold_every_repeated_placement(
            picks in proptest::collection::vec(0usize..40, 0..3000),
            spread in any::<bool>(),
        ) {
            let values: Vec<u64> = (0..40u64)
                .map(|i| {
                    let hash = if spread { i.wrapping_mul(0x9e37_79b9_7f4a_7c15) } else { i << 24 };
                    BitmapKey::Board(hash >> 8).to_u64()
                })
                .collect();
            let boards: Vec<u64> = picks.iter().map(|&i| values[i]).collect();
            let (keys, blobs) = board_bitmaps(&boards);
            prop_assert!(keys.windows(2).all(|w| w[0] < w[1]));
            for v in &values {
                let want: RoaringBitmap = (0u32..)
                    .zip(&boards)
                    .filter(|(_, k)| *k == v)
                    .map(|(p, _)| p)
                    .collect();
                match keys.binary_search(v) {
                    Ok(i) => {
                        let blob = crate::bitmap_pack::unpack(&blobs[i], &mut RunScratch::default())
                            .unwrap_or_else(|| blobs[i].clone());
                        let got = RoaringBitmap::deserialize_from(blob.as_slice()).unwrap();
                        prop_assert_eq!(got, want);
                    }
                    Err(_) => prop_assert!((want.len() as usize) < MIN_BOARD_REPEATS),
                }
            }
        }
    }
}
