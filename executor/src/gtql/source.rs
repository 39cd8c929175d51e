//! Trees as a pass reads them: a `.gtl` file's chunks with `last_move` as a column of integer
//! codes after the attributes, and the nodes' own ids where the log gave them.

use std::path::Path;

use cqldb_planner::gtql::{GtqlNames, GtqlQuery, MoveLiterals, text_move_code};
use cqldb_storage::gtl::{Chunk, GtlReader, TreeSchema};

use super::Pass;

/// The names queries over a tree with `schema` may use.
pub fn tree_names(schema: &TreeSchema) -> GtqlNames {
    GtqlNames {
        attrs: schema.attrs.iter().map(|a| a.name.clone()).collect(),
        consts: schema.constants(),
        moves: MoveLiterals::Text,
    }
}

/// Appends the code of each move word ([`text_move_code`]) to `out`; a chunk repeats few
/// distinct moves, so equal neighbours are coded once.
pub fn text_move_codes(moves: &[String], out: &mut Vec<i64>) {
    out.reserve(moves.len());
    let mut last: Option<(&str, i64)> = None;
    for m in moves {
        let code = match last {
            Some((w, c)) if w == m => c,
            _ => text_move_code(m.as_bytes()),
        };
        last = Some((m, code));
        out.push(code);
    }
}

/// A `.gtl` tree read for a set of queries: only the columns they read (every column when
/// answers are listed), `last_move`'s codes when a query compares it, and the ids.
pub struct GtlSource {
    reader: GtlReader,
    names: GtqlNames,
    /// Per stored column (attributes, then ids): whether to read it.
    want: Vec<bool>,
    /// Whether to read the moves: for listed paths, or for `last_move`'s codes.
    moves: bool,
    codes: bool,
}

impl GtlSource {
    /// Opens a tree.
    pub fn open(path: &Path) -> cqldb_storage::Result<Self> {
        let reader = GtlReader::open(path)?;
        let names = tree_names(reader.schema());
        Ok(Self {
            reader,
            names,
            want: Vec::new(),
            moves: false,
            codes: false,
        })
    }

    /// The tree's attributes and constants.
    pub fn schema(&self) -> &TreeSchema {
        self.reader.schema()
    }

    /// The names its queries may use.
    pub fn names(&self) -> &GtqlNames {
        &self.names
    }

    /// Reads what `queries` need; `listing` reads every attribute and the moves.
    pub fn prepare(&mut self, queries: &[GtqlQuery], listing: bool) {
        let attrs = self.names.attrs.len();
        let read = Pass::wanted(queries, self.names.columns() + 1);
        self.codes = read[self.names.last_move()];
        self.moves = listing || self.codes;
        self.want = (0..attrs).map(|k| listing || read[k]).collect();
        // The ids: for listed answers and for queries that read `node_id`.
        self.want.push(listing || read[self.names.columns()]);
    }

    /// Decodes the next chunk into `chunk` (its buffers reused); `false` at the end.
    pub fn next_chunk(&mut self, chunk: &mut Chunk) -> cqldb_storage::Result<bool> {
        if !self.reader.next_chunk_into(chunk, self.moves, &self.want)? {
            return Ok(false);
        }
        let attrs = self.names.attrs.len();
        chunk.cols.resize_with(self.names.columns(), Vec::new);
        let codes = &mut chunk.cols[attrs];
        codes.clear();
        if self.codes {
            text_move_codes(&chunk.moves, codes);
        }
        Ok(true)
    }
}
