//! Reading a segment's games in order: [`Segment::for_each_game`] and its kin decompress each
//! position block and text chunk once for all the games they hold, replay only the games asked
//! for, and, when a visit reads most of a segment, ask for its blocks and text ahead.

use roaring::RoaringBitmap;

use super::parts::Part;
use super::{GameRows, Segment};
use crate::columns::{BlockView, decompress_block_into};
use crate::error::Result;
use crate::mapped::Ahead;
use crate::schema::{CommentRef, GameResult, NagRef, PositionRecord};

impl Segment {
    /// Visits every game in order with its positions and (if `with_text`) its text, decoding each
    /// position block and text chunk once (reading games one by one would decode them per game).
    /// The rows carry no Zobrist hash or material signature (both zero): query evaluation does
    /// not read them, and skipping them makes decoding a third faster.
    pub fn for_each_game(
        &self,
        with_text: bool,
        f: impl FnMut(u32, GameRows<'_>) -> Result<()>,
    ) -> Result<()> {
        self.for_each_game_in(None, with_text, f)
    }

    /// As [`Segment::for_each_game`], for the games in `only` (segment-local numbers; `None`:
    /// all): blocks and text chunks without such a game are not decoded.
    pub fn for_each_game_in(
        &self,
        only: Option<&RoaringBitmap>,
        with_text: bool,
        f: impl FnMut(u32, GameRows<'_>) -> Result<()>,
    ) -> Result<()> {
        self.visit_with_results(only, with_text, false, f)
    }

    /// Visits every game with its text and its positions whole (Zobrist hashes and material
    /// signatures included): what a merge writes again.
    pub fn for_each_game_whole(
        &self,
        f: impl FnMut(u32, GameRows<'_>) -> Result<()>,
    ) -> Result<()> {
        self.visit_with_results(None, true, true, f)
    }

    /// The positions alone of the games in `only` (segment-local numbers), as
    /// [`Segment::for_each_game_in`] decodes them.
    ///
    /// Why apart: a game's result is one of the attribute columns, checked together (some 33
    /// bytes a game); a reader deciding a few candidates by their positions (an exact `fen`)
    /// would otherwise read and check them for every game of each segment it touches, most of
    /// such a query's time and memory at 10 M games.
    pub fn for_each_game_positions_in(
        &self,
        only: &RoaringBitmap,
        mut f: impl FnMut(u32, Vec<PositionRecord>) -> Result<()>,
    ) -> Result<()> {
        self.visit_games(Some(only), false, false, |i, visit| f(i, visit.positions))
    }

    /// [`Segment::visit_games`] with each game's result.
    fn visit_with_results(
        &self,
        only: Option<&RoaringBitmap>,
        with_text: bool,
        hashes: bool,
        mut f: impl FnMut(u32, GameRows<'_>) -> Result<()>,
    ) -> Result<()> {
        self.parts(&[Part::Attributes])?;
        let results = &self.data().games.result;
        self.visit_games(only, with_text, hashes, |i, visit| {
            let result = results
                .get(i as usize)
                .ok_or_else(|| self.corrupt("no such game"))?;
            f(
                i,
                GameRows {
                    positions: visit.positions,
                    comments: visit.comments,
                    nags: visit.nags,
                    first: visit.first,
                    result: GameResult::from_u8(*result),
                    text: visit.text,
                },
            )
        })
    }

    fn visit_games(
        &self,
        only: Option<&RoaringBitmap>,
        with_text: bool,
        hashes: bool,
        mut f: impl FnMut(u32, Visit<'_>) -> Result<()>,
    ) -> Result<()> {
        self.parts(&[Part::Blocks])?;
        if with_text {
            self.parts(&[Part::Text])?;
        }
        let g = &self.data().games;
        let games = self.games();
        let mut ahead = VisitAhead::new(in_order(only, games));
        // The current text chunk (its number and text); one buffer serves every chunk.
        let mut chunk_at: Option<u32> = None;
        let mut chunk_text: Vec<u8> = Vec::new();
        // The candidate's block, decompressed once, with its first position and game and its
        // notes; each game is then replayed alone.
        let mut block_cache: Option<BlockCache> = None;
        let all = 0..games;
        let picked: &mut dyn Iterator<Item = u32> = match only {
            Some(set) => &mut set.iter().take_while(|&i| i < games),
            None => &mut all.into_iter(),
        };
        for i in picked {
            let i = i as usize;
            let block = g.block[i].to_native();
            if block_cache.as_ref().is_none_or(|c| c.block != block) {
                let reuse = block_cache.take().map(|c| c.raw).unwrap_or_default();
                block_cache = Some(self.block_cache(block, reuse, ahead.blocks.as_mut())?);
            }
            let Some(cache) = &block_cache else {
                return Err(self.corrupt("block cache"));
            };
            let first = cache.first_position;
            let outside = || self.corrupt("game outside its block");
            let start = g.pos_start[i]
                .to_native()
                .checked_sub(first)
                .ok_or_else(outside)? as usize;
            let end = g.pos_start[i + 1]
                .to_native()
                .checked_sub(first)
                .ok_or_else(outside)? as usize;
            // The game's number among the block's games with positions (a game has one root if
            // it has positions): counted from the game columns, not by scanning the block.
            let root = (cache.first_game as usize..i)
                .filter(|&j| g.pos_start[j + 1] != g.pos_start[j])
                .count();
            let view = BlockView::parse(&cache.raw)
                .ok_or_else(|| self.corrupt("undecodable position block"))?;
            let positions = view.replay(start..end, root, hashes).ok_or_else(outside)?;
            let decoded = &cache.notes;
            let mut text: &[u8] = &[];
            if with_text {
                let chunk = g.text_chunk[i].to_native();
                if chunk_at != Some(chunk) {
                    self.text_chunk_into(chunk, &mut chunk_text, ahead.text.as_mut())?;
                    chunk_at = Some(chunk);
                }
                let s = g.text_offset[i].to_native() as usize;
                let e = s + g.text_len[i].to_native() as usize;
                text = chunk_text
                    .get(s..e)
                    .ok_or_else(|| self.corrupt("game text out of chunk bounds"))?;
            }
            // Comments and NAGs of a block are grouped by game, in game order.
            let (lo, hi) = (start as u32, end as u32);
            let c0 = decoded.comments.partition_point(|c| c.position < lo);
            let c1 = decoded.comments.partition_point(|c| c.position < hi);
            let n0 = decoded.nags.partition_point(|n| n.position < lo);
            let n1 = decoded.nags.partition_point(|n| n.position < hi);
            f(
                i as u32,
                Visit {
                    positions,
                    comments: decoded.comments.get(c0..c1).unwrap_or_default(),
                    nags: decoded.nags.get(n0..n1).unwrap_or_default(),
                    first: lo,
                    text,
                },
            )?;
        }
        Ok(())
    }

    /// Visits the games in `only` (segment-local numbers, ascending) with their original text
    /// alone: no position block is decoded (SQL's `games` and `tags` tables when no column
    /// needs a position). Each text chunk is decompressed once.
    pub fn for_each_game_text_in(
        &self,
        only: &RoaringBitmap,
        mut f: impl FnMut(u32, &[u8]) -> Result<()>,
    ) -> Result<()> {
        self.parts(&[Part::Text])?;
        let g = &self.data().games;
        let games = self.games();
        let mut ahead = in_order(Some(only), games).then(Ahead::default);
        let mut chunk_at: Option<u32> = None;
        let mut chunk_text: Vec<u8> = Vec::new();
        for i in only.iter().take_while(|&i| i < games) {
            let at = i as usize;
            let chunk = g.text_chunk[at].to_native();
            if chunk_at != Some(chunk) {
                self.text_chunk_into(chunk, &mut chunk_text, ahead.as_mut())?;
                chunk_at = Some(chunk);
            }
            let s = g.text_offset[at].to_native() as usize;
            let e = s + g.text_len[at].to_native() as usize;
            let text = chunk_text
                .get(s..e)
                .ok_or_else(|| self.corrupt("game text out of chunk bounds"))?;
            f(i, text)?;
        }
        Ok(())
    }

    /// Decompresses block `block` for a visit of games, into `raw` (a previous block's buffer,
    /// reused).
    fn block_cache(
        &self,
        block: u32,
        mut raw: Vec<u8>,
        ahead: Option<&mut Ahead>,
    ) -> Result<BlockCache> {
        let b = self.block_entry(block as usize, ahead)?;
        decompress_block_into(b.data, b.raw_len as usize, &mut raw)
            .ok_or_else(|| self.corrupt("undecodable position block"))?;
        let view =
            BlockView::parse(&raw).ok_or_else(|| self.corrupt("undecodable position block"))?;
        if view.len() != b.positions as usize {
            return Err(self.corrupt("position block has the wrong length"));
        }
        let (comments, nags) = view
            .notes()
            .ok_or_else(|| self.corrupt("undecodable position block"))?;
        let (first_position, first_game) = self.block_start(block as usize)?;
        Ok(BlockCache {
            block,
            raw,
            first_position,
            first_game,
            notes: Notes { comments, nags },
        })
    }
}

/// Whether a visit of `only` (all: `None`) reads most of a segment's `games`, in order: then
/// the blocks and text it reads are asked for ahead, a window at a time.
fn in_order(only: Option<&RoaringBitmap>, games: u32) -> bool {
    only.is_none_or(|s| s.len().saturating_mul(2) >= u64::from(games))
}

/// Reading ahead through blocks and text chunks, each a run of parts in file order.
struct VisitAhead {
    blocks: Option<Ahead>,
    text: Option<Ahead>,
}

impl VisitAhead {
    fn new(in_order: bool) -> Self {
        Self {
            blocks: in_order.then(Ahead::default),
            text: in_order.then(Ahead::default),
        }
    }
}

/// One game as a visit decodes it: [`GameRows`] but for the result, an attribute column.
struct Visit<'a> {
    positions: Vec<PositionRecord>,
    comments: &'a [CommentRef],
    nags: &'a [NagRef],
    first: u32,
    text: &'a [u8],
}

/// A decompressed block kept while its games are read.
struct BlockCache {
    block: u32,
    raw: Vec<u8>,
    first_position: u32,
    /// The block's first game (segment-local).
    first_game: u32,
    notes: Notes,
}

/// A block's comments and NAGs (positions block-local).
struct Notes {
    comments: Vec<CommentRef>,
    nags: Vec<NagRef>,
}
