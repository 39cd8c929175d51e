//! A zstd dictionary for game text ([`TextDictionary`]), trained on the first games an append
//! reads and kept in each segment it writes.
//!
//! Why: game text is compressed in chunks of four games ([`crate::TEXT_GAMES`]) so that writing
//! one game decompresses little; a chunk that small starts with no history, so what every game
//! repeats (tag names, the event and site of a tournament, move numbers, result strings) is
//! paid for again in each chunk, and zstd builds its entropy tables per chunk. A dictionary
//! trained on the input's own first games gives every chunk that history and tables: measured
//! on chunks of the master games of ../shared/data/large, 0.50 → 0.41 of the raw text.
//!
//! A segment without a dictionary (written before them, or from too little text to train on)
//! keeps plain frames; the reader tells them apart by the segment's table of parts.

use zstd::zstd_safe::{self, CCtx, CDict, DCtx, DDict};

/// Largest dictionary trained (bytes): 16 KB did almost as well on the measured text.
const MAX_BYTES: usize = 32 << 10;

/// Text trained on, at most (bytes): training time grows with it, the dictionary's worth does
/// not (2,000 games of masters' text: 0.14 s for 0.407 of the raw size, 800: 0.06 s for 0.411).
pub const TRAIN_BYTES: usize = 1 << 20;

/// Too little text to train on: zstd's trainer fails or makes a dictionary worth nothing.
const MIN_SAMPLES: usize = 32;
const MIN_BYTES: usize = 64 << 10;

/// zstd level of text compressed with a dictionary (as without one).
const LEVEL: i32 = 2;

/// Chunks at least this long (four games with long comments, such as engine output) are
/// compressed at [`LONG_LEVEL`]: there the dictionary's history matters little and level 1
/// finds as much as level 2, sooner. Measured on 4-game chunks with a dictionary (zstd's Python
/// binding): TCEC's annotated games 0.69 → 0.55 s and 41.81 → 41.57 MB; the master games and
/// the GNU Chess book have no chunk this long.
const LONG_CHUNK: usize = 16 << 10;
const LONG_LEVEL: i32 = 1;

/// A trained dictionary, ready for compressing and decompressing.
pub struct TextDictionary {
    bytes: Vec<u8>,
    /// Made on first compression: a reader never compresses, and the compression side (hash
    /// tables over the dictionary) is several times the size of the decompression side.
    cdict: std::sync::OnceLock<Option<CDict<'static>>>,
    /// The same at [`LONG_LEVEL`], for chunks of [`LONG_CHUNK`] bytes or more.
    cdict_long: std::sync::OnceLock<Option<CDict<'static>>>,
    ddict: DDict<'static>,
}

impl std::fmt::Debug for TextDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TextDictionary({} bytes)", self.bytes.len())
    }
}

impl TextDictionary {
    /// Trains on `samples` (chunks of game text as they will be compressed); `None` when there
    /// is too little text or training fails (the text is then compressed without one).
    pub fn train(samples: &[Vec<u8>]) -> Option<Self> {
        let total: usize = samples.iter().map(Vec::len).sum();
        if samples.len() < MIN_SAMPLES || total < MIN_BYTES {
            return None;
        }
        let bytes = zstd::dict::from_samples(samples, MAX_BYTES).ok()?;
        Self::from_bytes(&bytes)
    }

    /// A dictionary as stored.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        Some(Self {
            bytes: bytes.to_vec(),
            cdict: std::sync::OnceLock::new(),
            cdict_long: std::sync::OnceLock::new(),
            ddict: DDict::try_create(bytes)?,
        })
    }

    /// Its bytes (what a segment stores).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// `data` compressed with the dictionary, in one frame that records its size.
    pub fn compress(&self, data: &[u8]) -> Vec<u8> {
        thread_local! {
            static CONTEXT: std::cell::RefCell<Option<CCtx<'static>>> =
                const { std::cell::RefCell::new(None) };
        }
        let (cell, level) = if data.len() >= LONG_CHUNK {
            (&self.cdict_long, LONG_LEVEL)
        } else {
            (&self.cdict, LEVEL)
        };
        let Some(cdict) = cell.get_or_init(|| CDict::try_create(&self.bytes, level)) else {
            return crate::columns::compress(data, level);
        };
        CONTEXT
            .with(|c| {
                let mut c = c.borrow_mut();
                let ctx = c.get_or_insert_with(CCtx::create);
                crate::columns::in_scratch(data.len(), |out| {
                    ctx.compress_using_cdict(out, data, cdict).is_ok()
                })
            })
            // Unreachable with a buffer of the bound's size; a plain frame still reads back (frames
            // name their dictionary, and a plain one names none).
            .unwrap_or_else(|| crate::columns::compress(data, level))
    }

    /// Decompresses one frame made by [`Self::compress`] into `out` (contents replaced); a
    /// frame claiming more than `limit` bytes, or not decompressing to its size, is an error.
    pub fn decompress_into(
        &self,
        data: &[u8],
        limit: usize,
        out: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        thread_local! {
            static CONTEXT: std::cell::RefCell<Option<DCtx<'static>>> =
                const { std::cell::RefCell::new(None) };
        }
        let size = match zstd_safe::get_frame_content_size(data) {
            Ok(Some(n)) => usize::try_from(n)
                .ok()
                .filter(|&n| n <= limit)
                .ok_or_else(|| std::io::Error::other("text chunk larger than allowed"))?,
            _ => return Err(std::io::Error::other("text chunk without its size")),
        };
        out.clear();
        out.reserve(size);
        CONTEXT.with(|c| {
            let mut c = c
                .try_borrow_mut()
                .map_err(|_| std::io::Error::other("decompression context busy"))?;
            let ctx = c.get_or_insert_with(DCtx::create);
            let n = ctx
                .decompress_using_ddict(out, data, &self.ddict)
                .map_err(|code| std::io::Error::other(zstd_safe::get_error_name(code)))?;
            if n == size {
                Ok(())
            } else {
                Err(std::io::Error::other(
                    "text chunk does not decompress to its size",
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn games(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                format!(
                    "[Event \"Club {e}\"]\n[Site \"Town\"]\n[Date \"19{y:02}.01.0{d}\"]\n[Round \"{i}\"]\n\
                     [White \"Player {w}\"]\n[Black \"Player {b}\"]\n[Result \"1-0\"]\n\n\
                     1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 {i} 1-0\n\n",
                    e = i % 7,
                    y = i % 90,
                    d = i % 9 + 1,
                    w = i * 7 % 101,
                    b = i * 13 % 97
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn text_compressed_with_a_trained_dictionary_reads_back_and_is_smaller() {
        let samples: Vec<Vec<u8>> = games(2000).chunks(4).map(|c| c.concat()).collect();
        let d = TextDictionary::train(&samples).expect("enough text to train on");
        let again = TextDictionary::from_bytes(d.bytes()).unwrap();
        let (mut with, mut without) = (0, 0);
        for chunk in &samples[..100] {
            let frame = d.compress(chunk);
            let mut out = Vec::new();
            again.decompress_into(&frame, 1 << 20, &mut out).unwrap();
            assert_eq!(&out, chunk);
            with += frame.len();
            without += crate::columns::compress(chunk, LEVEL).len();
            // A limit below the frame's size is refused, not allocated.
            assert!(
                again
                    .decompress_into(&frame, chunk.len() - 1, &mut out)
                    .is_err()
            );
        }
        assert!(
            with * 10 < without * 8,
            "{with} bytes with, {without} without"
        );
    }

    /// Long chunks go through the other level's compression side of the same dictionary: each
    /// size reads back, on either side of the cut.
    #[test]
    fn long_chunks_read_back_too() {
        let samples: Vec<Vec<u8>> = games(2000).chunks(4).map(|c| c.concat()).collect();
        let d = TextDictionary::train(&samples).expect("enough text to train on");
        let again = TextDictionary::from_bytes(d.bytes()).unwrap();
        let all = games(2000).concat();
        assert!(all.len() > 2 * LONG_CHUNK);
        for len in [
            LONG_CHUNK - 1,
            LONG_CHUNK,
            LONG_CHUNK + 1,
            2 * LONG_CHUNK,
            all.len(),
        ] {
            let chunk = &all[..len];
            let frame = d.compress(chunk);
            let mut out = Vec::new();
            again.decompress_into(&frame, 1 << 24, &mut out).unwrap();
            assert!(out == chunk, "a chunk of {len} bytes read back otherwise");
            assert!(
                frame.len() < len / 4,
                "{len} bytes compressed to {}",
                frame.len()
            );
            // The short chunk alone used the ordinary side; from the cut on, the long one.
            let long_made = d.cdict_long.get().is_some_and(Option::is_some);
            assert_eq!(long_made, len >= LONG_CHUNK, "{len} bytes");
        }
    }

    #[test]
    fn too_little_text_trains_nothing() {
        assert!(TextDictionary::train(&games(10)).is_none());
    }
}
