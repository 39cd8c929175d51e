//! Persistent storage of cqldb: everything that is on disk and how it is read back.
//!
//! Owns the on-disk formats: the row types ([`PositionRecord`], [`GameMeta`]), segments of
//! position columns archived with rkyv and read in place from memory maps (checksummed, verified on
//! open), roaring bitmap indexes, per-segment tantivy tag indexes, and the redb catalog that makes a
//! batch of new segments visible in one atomic commit; and the search-tree logs GTQL reads (the
//! text log format and the columnar `.gtl` file, [`gtl`]).
//!
//! The catalog is redb, not sled as the design first said: sled's last release is from 2021 and its
//! tracker has open reports of corruption after a killed process, while the catalog commit is the
//! one step whose atomicity the whole index relies on. redb is maintained and commits a write
//! transaction atomically and durably (see `catalog.rs`).
//!
//! It must not know about PGN, query languages or the command line: the indexer hands it finished
//! [`NewGame`]s, and planners and executors read [`Database`]s.
//!
//! It also owns the files around a database: outputs written for the user (`output_file`:
//! never over an input or inside a database, renamed into place when complete), the writer's
//! journal (`journal`), and memory maps that report a file shrinking under them (`mapped`).
//!
//! Flow: [`DbWriter::open`] → [`DbWriter::push_game`]… → [`DbWriter::commit`]; then
//! [`Database::open`] → [`Database::game_positions`], [`Database::search_tags`], bitmaps.

pub mod batch;
pub mod bitmap;
pub mod bitmap_cache;
pub mod bitmap_dense;
pub mod bitmap_key;
pub mod bitmap_lookup;
pub mod bitmap_pack;
pub mod bitmap_parity;
mod bitmap_seek;
pub mod bitmap_window;
pub mod board_index;
pub mod catalog;
pub mod check;
pub mod columns;
pub mod db;
pub mod digest;
pub mod error;
pub mod file;
pub mod gtl;
pub mod guard;
pub mod journal;
pub mod manifest;
pub mod mapped;
mod migrate;
pub mod move_features;
pub mod output_file;
pub mod recover;
pub mod replay;
pub mod retire;
pub mod roaring_runs;
pub mod runs;
pub mod schema;
pub mod segment;
pub mod segment_entry;
pub mod source;
mod suggest;
pub use source::{SourceRecord, fingerprint};
pub mod tag_reader_cache;
pub mod tag_words;
pub mod tags;
pub mod text_dictionary;
pub use suggest::did_you_mean;

pub use batch::{
    BLOCK_GAMES, BatchEncoder, EncodedBatch, EncodedBlock, GameFlags, TEXT_GAMES, encode_batch,
};
pub use bitmap::BitmapKey;
pub use bitmap_key::{FLAG_SIDES, GAME_FLAGS, GameLine, KeyKind};
pub use catalog::SegmentEntry;
pub use columns::DecodedBlock;
pub use db::{CommitSummary, Database, DbStats, DbWriter, WriterOptions};
pub use error::{Result, StorageError};
pub use schema::{
    Bitboards, CommentPlacement, CommentRef, GameMeta, GameResult, MaterialSignature, MoveCode,
    MoveKind, NO_PARENT, NagRef, PositionFlags, PositionRecord, SCHEMA_VERSION, lenient_position,
};
pub use segment::{
    GameInfo, GameRows, GameSource, IssueRecord, NewGame, Pages, Segment, SegmentLayout,
    SegmentStats, Signatures,
};
pub use text_dictionary::TextDictionary;
