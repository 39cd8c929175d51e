//! The sink: where the games a query selects go — what each becomes is a
//! [`MatchOutput`] (PGN, JSON or CSV rows, matched positions), written to a file, the standard
//! output or nowhere (a count) — with `sort matchcount` buffering, and the totals of a run
//! ([`Summary`]).
//!
//! A sink sees games in input order; parallel evaluation hands it finished [`GameOut`]s in that
//! order, so output never depends on the number of threads.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use cqldb_planner::Query;
use cqldb_planner::plan::{PhysicalPlan, RunStats};
use cqldb_storage::output_file::AtomicFile;

pub use crate::match_output::MatchFormat;
use crate::match_output::MatchOutput;
pub use crate::matched::Matched;
use crate::output::OutputOptions;
use crate::{Game, GameMatch};

/// What a run found.
#[derive(Debug, Default)]
pub struct Summary {
    /// Games read.
    pub games: u64,
    /// Positions visited (evaluated).
    pub positions: u64,
    /// Numbers of the games written, in output order.
    pub matched: Matched,
    /// (game, position id, ply) of every matched position of the selected games, in input
    /// order; only from a sink [`Sink::keeping_positions`].
    pub positions_matched: Vec<(u64, u32, u32)>,
    /// `message` output.
    pub messages: Vec<String>,
    /// Games the query could not be fully evaluated on: (game number, why).
    pub warnings: Vec<(u64, String)>,
    /// The plan that ran.
    pub plan: Option<PhysicalPlan>,
    /// What the executor measured of it.
    pub stats: RunStats,
}

/// Where a sink writes its games: bytes, then one [`MatchWriter::close`] that makes them whole
/// (a compressed stream's end written, a file renamed into place). Dropped without it, a file
/// output leaves the previous file as it was.
pub trait MatchWriter: Write {
    /// Ends the output.
    fn close(self: Box<Self>) -> std::io::Result<()>;
}

/// Any writer (a buffer, a pipe) as a [`MatchWriter`] whose end is a flush.
pub struct Plain<W: Write>(pub W);

impl<W: Write> Write for Plain<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write> MatchWriter for Plain<W> {
    fn close(mut self: Box<Self>) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The receiver of a run's games.
pub struct Sink<'a> {
    pub(crate) out: Option<Box<dyn MatchWriter + 'a>>,
    pub(crate) opts: OutputOptions,
    /// What a selected game becomes.
    pub(crate) output: std::sync::Arc<dyn MatchOutput>,
    pub(crate) summary: Summary,
    /// A sorting query's selected games wait here until the end.
    sorted: Option<crate::sorted::Sorted>,
    /// The query (for its sort keys).
    query: std::sync::Arc<Query>,
    /// The count of shrunk-file faults when the run began (over a database): a game is not
    /// taken once a file shrank, as it may have been read from zeros.
    pub(crate) faults_since: Option<u64>,
}

/// What one game contributes to the run.
#[derive(Default)]
pub(crate) struct GameOut {
    number: u64,
    positions: u64,
    selected: bool,
    matched: usize,
    /// The matched positions (id, ply), when the sink keeps them.
    matched_positions: Vec<(u32, u32)>,
    sort_values: Vec<Option<cqldb_planner::eval::context::SortValue>>,
    text: Vec<u8>,
    messages: Vec<String>,
    warnings: Vec<String>,
    halt: Option<String>,
}

impl GameOut {
    /// The game's contribution; its output text only when `opts` is given (a sink that writes).
    pub(crate) fn of(
        game: &Game,
        m: &GameMatch,
        opts: Option<&OutputOptions>,
        output: &dyn MatchOutput,
    ) -> Result<Self> {
        let mut text = Vec::new();
        if let (true, Some(opts)) = (m.selected, opts) {
            output.encode(&mut text, game, m, opts)?;
        }
        let keep_positions = output.keeps_positions();
        Ok(Self {
            number: game.number,
            positions: visited(game),
            selected: m.selected,
            matched: m.matched.len(),
            matched_positions: if keep_positions && m.selected {
                m.matched
                    .iter()
                    .map(|&id| (id, game.positions[id as usize].ply))
                    .collect()
            } else {
                Vec::new()
            },
            sort_values: m.sort_values.clone(),
            text,
            messages: m.messages.clone(),
            warnings: m.warnings.clone(),
            halt: m.halt.clone(),
        })
    }
}

impl<'a> Sink<'a> {
    /// A sink for `query`'s games writing what `output` makes of them to `out` (`None`: count
    /// only).
    pub fn new(
        query: &Query,
        mut out: Option<Box<dyn MatchWriter + 'a>>,
        output: std::sync::Arc<dyn MatchOutput>,
    ) -> Result<Self> {
        if let (Some(w), Some(header)) = (out.as_mut(), output.header()) {
            writeln!(w, "{header}")?;
        }
        Ok(Self {
            out,
            opts: output_options(query),
            output,
            summary: Summary::default(),
            sorted: crate::sorted::Sorted::of(query),
            query: std::sync::Arc::new(query.clone()),
            faults_since: None,
        })
    }

    /// Whether selected games are written (not only counted).
    pub fn writes(&self) -> bool {
        self.out.is_some()
    }

    /// Takes one evaluated game.
    pub fn take(&mut self, game: &Game, m: &GameMatch) -> Result<()> {
        let writing = self.out.is_some();
        let g = GameOut::of(game, m, writing.then_some(&self.opts), self.output.as_ref())?;
        self.accept(g)
    }

    /// A game is not taken once a database file shrank: it may have been read from zeros.
    fn check_faults(&self) -> Result<()> {
        if self
            .faults_since
            .is_some_and(|f| cqldb_storage::mapped::faults() != f)
        {
            anyhow::bail!("a database file shrank while it was being read");
        }
        Ok(())
    }

    pub(crate) fn accept(&mut self, g: GameOut) -> Result<()> {
        self.check_faults()?;
        if let Some(why) = &g.halt {
            // The output is not committed: the answer would be wrong or incomplete.
            anyhow::bail!("game {}: {why}", g.number);
        }
        self.summary.games += 1;
        self.summary.positions += g.positions;
        self.summary.messages.extend(g.messages);
        for w in g.warnings {
            self.summary.warnings.push((g.number, w));
        }
        if !g.selected {
            return Ok(());
        }
        let number = g.number;
        self.summary.positions_matched.extend(
            g.matched_positions
                .iter()
                .map(|&(id, ply)| (number, id, ply)),
        );
        if let Some(sorted) = self.sorted.as_mut() {
            let keys = crate::sorted::Sorted::keys(&self.query, g.matched, &g.sort_values);
            sorted.push(keys, g.number, &g.text)?;
            return Ok(());
        }
        self.summary.matched.push(g.number);
        if let Some(w) = self.out.as_mut() {
            w.write_all(&g.text)?;
        }
        Ok(())
    }

    /// Takes a matching game whose matching positions (id, ply) the index listed (see
    /// `listed.rs`): no game was read, nothing is written.
    pub(crate) fn listed(
        &mut self,
        number: u64,
        positions: impl Iterator<Item = (u32, u32)>,
    ) -> Result<()> {
        self.check_faults()?;
        self.summary
            .positions_matched
            .extend(positions.map(|(id, ply)| (number, id, ply)));
        self.summary.matched.push(number);
        Ok(())
    }

    /// Writes sorted output (largest key first, ties in input order), flushes, and returns the
    /// run's totals.
    pub fn finish(mut self) -> Result<Summary> {
        let t = std::time::Instant::now();
        if let Some(sorted) = self.sorted.take() {
            let out: Option<&mut dyn Write> = match self.out.as_mut() {
                Some(w) => Some(w),
                None => None,
            };
            self.summary.matched = Matched::from(sorted.finish(out)?);
        }
        if let Some(w) = self.out.take() {
            w.close()?;
        }
        let stats = &mut self.summary.stats.sink;
        stats.micros += t.elapsed().as_micros() as u64;
        stats.games = self.summary.matched.len() as u64;
        Ok(self.summary)
    }
}

/// Positions a game's evaluation visits: all of them with variations, else the main line.
fn visited(game: &Game) -> u64 {
    if game.variations {
        game.len() as u64
    } else {
        game.positions.iter().filter(|p| p.depth == 0).count() as u64
    }
}

/// The header's output settings (`matchstring`, `silent`, `quiet`).
pub fn output_options(query: &Query) -> OutputOptions {
    OutputOptions {
        matchstring: query
            .header
            .matchstring
            .clone()
            .unwrap_or_else(|| "CQL".to_owned()),
        silent: query.header.silent,
        quiet: query.header.quiet,
        no_game_header: query.header.no_game_header,
    }
}

/// An output file: `-` is stdout; a name ending in `.zst`, `.gz` or `.bz2` is compressed
/// (another compressed kind, `.xz` or `.zip`, is refused rather than written plain). A file is
/// written under a temporary name and renamed over `p` when the sink closes it
/// ([`cqldb_storage::output_file::AtomicFile`]); the caller has checked `p` with
/// [`cqldb_storage::output_file::refuse_unsafe_target`].
pub fn open_output(p: &Path) -> Result<Box<dyn MatchWriter>> {
    if p.as_os_str() == "-" {
        return Ok(Box::new(Plain(std::io::BufWriter::new(std::io::stdout()))));
    }
    let name = p.to_string_lossy().to_ascii_lowercase();
    if let Some(ext) = [".xz", ".lzma", ".lz4", ".zip", ".7z", ".z", ".br"]
        .iter()
        .find(|e| name.ends_with(*e))
    {
        anyhow::bail!(
            "{}: cannot write {ext} output; name it .pgn, .pgn.zst, .pgn.gz or .pgn.bz2",
            p.display()
        );
    }
    let file = AtomicFile::create(p).with_context(|| format!("cannot create {}", p.display()))?;
    let inner = if name.ends_with(".bz2") {
        Compressed::Bzip2(bzip2::write::BzEncoder::new(
            file,
            bzip2::Compression::default(),
        ))
    } else if name.ends_with(".zst") {
        Compressed::Zstd(zstd::Encoder::new(file, 3)?)
    } else if name.ends_with(".gz") {
        Compressed::Gzip(flate2::write::GzEncoder::new(
            file,
            flate2::Compression::default(),
        ))
    } else {
        Compressed::Plain(file)
    };
    Ok(Box::new(OutputFile {
        target: p.to_owned(),
        inner,
    }))
}

/// An output file, compressed or not, whose close writes the compressed stream's end and then
/// renames the file into place; its errors name the file.
struct OutputFile {
    target: std::path::PathBuf,
    inner: Compressed,
}

enum Compressed {
    Plain(AtomicFile),
    Zstd(zstd::Encoder<'static, AtomicFile>),
    Gzip(flate2::write::GzEncoder<AtomicFile>),
    Bzip2(bzip2::write::BzEncoder<AtomicFile>),
}

impl OutputFile {
    fn named(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("{}: {e}", self.target.display()))
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = match &mut self.inner {
            Compressed::Plain(f) => f.write(buf),
            Compressed::Zstd(e) => e.write(buf),
            Compressed::Gzip(e) => e.write(buf),
            Compressed::Bzip2(e) => e.write(buf),
        };
        r.map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = match &mut self.inner {
            Compressed::Plain(f) => f.flush(),
            Compressed::Zstd(e) => e.flush(),
            Compressed::Gzip(e) => e.flush(),
            Compressed::Bzip2(e) => e.flush(),
        };
        r.map_err(|e| self.named(e))
    }
}

impl MatchWriter for OutputFile {
    fn close(self: Box<Self>) -> std::io::Result<()> {
        let this = *self;
        let file = match this.inner {
            Compressed::Plain(f) => Ok(f),
            Compressed::Zstd(e) => e.finish(),
            Compressed::Gzip(e) => e.finish(),
            Compressed::Bzip2(e) => e.finish(),
        };
        let file = file.map_err(|e| {
            std::io::Error::new(e.kind(), format!("{}: {e}", this.target.display()))
        })?;
        // The commit's error names the file already.
        file.commit().map_err(std::io::Error::other)
    }
}
