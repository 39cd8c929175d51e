//! `cqldb gtql`: import search-tree logs, query them (or indexed PGN game trees) with GTQL,
//! and summarise them.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use cqldb_executor::gtql::{Answer, ParallelPass, Pass};
use cqldb_planner::gtql::{GtqlNames, GtqlQuery, parse_gtql};
use cqldb_storage::gtl::{
    AttrKind, CHUNK_NODES, Chunk, GtlReader, GtlWriter, ReadAhead, TextLogReader, TreeSchema,
};
use cqldb_storage::{Database, MoveCode, MoveKind, NO_PARENT, PositionFlags, PositionRecord};

/// Output formats.
#[derive(Copy, Clone, Debug, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Table,
    /// One JSON object per query.
    Json,
    /// Comma-separated values.
    Csv,
}

/// Arguments of `cqldb gtql`.
pub struct Args {
    pub args: Vec<String>,
    pub file: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub format: Format,
    pub limit: usize,
    /// Threads evaluating queries.
    pub threads: usize,
}

/// Runs `cqldb gtql ...`.
pub fn run(a: Args) -> Result<ExitCode> {
    match a.args.first().map(String::as_str) {
        Some("import") => {
            let input = a
                .args
                .get(1)
                .ok_or_else(|| anyhow!("usage: cqldb gtql import LOG --out TREE.gtl"))?;
            let out = a
                .out
                .clone()
                .unwrap_or_else(|| Path::new(input).with_extension("gtl"));
            let t = Instant::now();
            let n = import(Path::new(input), &out)?;
            let secs = t.elapsed().as_secs_f64();
            eprintln!(
                "imported {n} nodes into {} in {secs:.2} s ({:.1} M nodes/s)",
                out.display(),
                n as f64 / secs.max(1e-9) / 1e6
            );
            Ok(ExitCode::SUCCESS)
        }
        Some("stats") => {
            let tree = a
                .args
                .get(1)
                .ok_or_else(|| anyhow!("usage: cqldb gtql stats TREE.gtl"))?;
            stats(Path::new(tree))
        }
        _ => query(a),
    }
}

/// Reads a text log or a GT-log `.gtf` file and writes a `.gtl`.
pub fn import(input: &Path, out: &Path) -> Result<u64> {
    let is_gtf = input.extension().is_some_and(|e| e == "gtf");
    if is_gtf {
        let mut writer: Option<GtlWriter> = None;
        cqldb_storage::gtl::import_gtf(input, |schema, level, mv, values| {
            if writer.is_none() {
                writer = Some(GtlWriter::create(out, schema)?);
            }
            match writer.as_mut() {
                Some(w) => w.push_parts(level, mv, values),
                None => Ok(()),
            }
        })?;
        let w = match writer {
            Some(w) => w,
            None => GtlWriter::create(out, &TreeSchema::default())?,
        };
        return Ok(w.finish()?);
    }
    let file =
        std::fs::File::open(input).with_context(|| format!("cannot open {}", input.display()))?;
    let mut r = TextLogReader::new(ReadAhead::new(file))
        .with_context(|| format!("reading {}", input.display()))?;
    let mut w = GtlWriter::create(out, r.schema())?;
    r.for_each_node(|level, mv, values| w.push_parts(level, mv, values))
        .with_context(|| format!("reading {}", input.display()))?;
    Ok(w.finish()?)
}

fn names_of(schema: &TreeSchema) -> GtqlNames {
    GtqlNames {
        attrs: schema.attrs.iter().map(|a| a.name.clone()).collect(),
        consts: schema.constants(),
    }
}

fn read_queries(a: &Args, first_is_query: bool) -> Result<Vec<String>> {
    let mut texts = Vec::new();
    if first_is_query && let Some(q) = a.args.first() {
        texts.push(q.clone());
    }
    if let Some(f) = &a.file {
        let file =
            std::fs::File::open(f).with_context(|| format!("cannot open {}", f.display()))?;
        for line in std::io::BufReader::new(file).lines() {
            let line = line?;
            let t = line.trim();
            if !t.is_empty() && !t.starts_with('#') {
                texts.push(t.to_owned());
            }
        }
    }
    if texts.is_empty() {
        bail!("no query: give one as an argument or a file of queries with -f");
    }
    Ok(texts)
}

fn parse_all(texts: &[String], names: &GtqlNames) -> Result<Vec<GtqlQuery>> {
    texts
        .iter()
        .map(|t| {
            parse_gtql(t, names).map_err(|e| {
                let report = e.report("query", t);
                anyhow!("{report:?}")
            })
        })
        .collect()
}

fn query(a: Args) -> Result<ExitCode> {
    let t = Instant::now();
    let (texts, answers, attr_names, nodes): (Vec<String>, Vec<Answer>, Vec<String>, u64) =
        if let Some(db) = &a.db {
            let texts = read_queries(&a, true)?;
            let (answers, nodes) = query_db(db, &texts, a.limit, a.threads)?;
            (
                texts,
                answers,
                PGN_ATTRS.iter().map(|(s, _)| (*s).to_owned()).collect(),
                nodes,
            )
        } else {
            // `cqldb gtql QUERY TREE` or `cqldb gtql -f FILE TREE`.
            let (first_is_query, tree) = match (a.args.len(), &a.file) {
                (1, Some(_)) => (false, a.args[0].clone()),
                (2, _) => (true, a.args[1].clone()),
                _ => bail!(
                    "usage: cqldb gtql 'QUERY' TREE.gtl | cqldb gtql -f QUERIES TREE.gtl | cqldb gtql 'QUERY' --db DIR"
                ),
            };
            let texts = read_queries(&a, first_is_query)?;
            let mut reader = GtlReader::open(Path::new(&tree))?;
            let schema = reader.schema().clone();
            let queries = parse_all(&texts, &names_of(&schema))?;
            // Listed nodes show every attribute; a count-only run reads just what queries use.
            let listing = a.limit > 0;
            let want = if listing {
                vec![true; schema.attrs.len()]
            } else {
                Pass::wanted(&queries, schema.attrs.len())
            };
            let attrs = schema.attrs.len();
            let mut pass = ParallelPass::new(queries, attrs, listing, a.limit, a.threads);
            let mut nodes = 0u64;
            let mut chunk = Chunk::default();
            while reader.next_chunk_into(&mut chunk, listing, &want)? {
                nodes += chunk.levels.len() as u64;
                chunk = pass.feed(chunk);
            }
            (
                texts,
                pass.finish(),
                schema.attrs.iter().map(|x| x.name.clone()).collect(),
                nodes,
            )
        };
    let secs = t.elapsed().as_secs_f64();
    print_answers(&texts, &answers, &attr_names, a.format)?;
    eprintln!(
        "{} queries over {nodes} nodes in one pass, {secs:.2} s ({:.1} M nodes/s)",
        texts.len(),
        nodes as f64 / secs.max(1e-9) / 1e6
    );
    Ok(ExitCode::SUCCESS)
}

/// A game-tree attribute's value at a position: `(row, game number, position id)`.
type PgnAttr = fn(&PositionRecord, i64, usize) -> i64;

/// Attributes of PGN game-tree nodes for `--db` (0/1 for the flags).
const PGN_ATTRS: [(&str, PgnAttr); 17] = [
    ("game", |_, game, _| game),
    ("ply", |r, _, _| i64::from(r.ply)),
    ("depth", |r, _, _| i64::from(r.depth)),
    ("child_index", |r, _, _| i64::from(r.child_index)),
    ("children", |r, _, _| i64::from(r.children)),
    ("movenumber", |r, _, _| i64::from(r.move_number)),
    ("wtm", |r, _, _| flag(r, PositionFlags::WHITE_TO_MOVE)),
    ("initial", |r, _, _| flag(r, PositionFlags::INITIAL)),
    ("terminal", |r, _, _| flag(r, PositionFlags::TERMINAL)),
    ("mainline", |r, _, _| flag(r, PositionFlags::MAINLINE)),
    ("variation", |r, _, _| flag(r, PositionFlags::VARIATION)),
    ("virtualmainline", |r, _, _| {
        flag(r, PositionFlags::VIRTUAL_MAINLINE)
    }),
    ("check", |r, _, _| flag(r, PositionFlags::CHECK)),
    ("mate", |r, _, _| flag(r, PositionFlags::MATE)),
    ("stalemate", |r, _, _| flag(r, PositionFlags::STALEMATE)),
    ("positionid", |_, _, id| id as i64),
    ("parent", |r, _, _| match r.parent {
        NO_PARENT => -1,
        q => i64::from(q),
    }),
];

fn flag(r: &PositionRecord, f: PositionFlags) -> i64 {
    i64::from(r.flags.contains(f))
}

/// A game move as GTQL paths show it: long algebraic (`Ng1-f3`, `Pe5xd6ep`), castling as
/// `O-O` or `O-O-O` (stored as king takes rook, which reads oddly in a path).
fn move_text(mv: MoveCode) -> String {
    match (mv.kind(), mv.from(), mv.to()) {
        (Some(MoveKind::Castle), Some(king), Some(rook)) if rook.file() > king.file() => {
            "O-O".to_owned()
        }
        (Some(MoveKind::Castle), Some(_), Some(_)) => "O-O-O".to_owned(),
        _ => mv.to_string(),
    }
}

/// Answers `texts` over every game of a database: the games form one forest (each game's
/// root at level 0), fed to one pass in chunks of many games, so `node_id` numbers the
/// database's positions in pre-order, game after game.
fn query_db(
    db: &Path,
    texts: &[String],
    limit: usize,
    threads: usize,
) -> Result<(Vec<Answer>, u64)> {
    let database = Database::open(db)?;
    let names = GtqlNames {
        attrs: PGN_ATTRS.iter().map(|(s, _)| (*s).to_owned()).collect(),
        consts: vec![("white".into(), 1), ("black".into(), 0)],
    };
    let queries = parse_all(texts, &names)?;
    let listing = limit > 0;
    let want = if listing {
        vec![true; PGN_ATTRS.len()]
    } else {
        Pass::wanted(&queries, PGN_ATTRS.len())
    };
    let mut pass = ParallelPass::new(queries, PGN_ATTRS.len(), listing, limit, threads);
    let mut chunk = Chunk::default();
    chunk.cols.resize(PGN_ATTRS.len(), Vec::new());
    let mut nodes = 0u64;
    let mut number = 0i64;
    for (_, seg) in database.segments() {
        seg.for_each_game(false, |_, rows| {
            number += 1;
            let p = rows.positions;
            nodes += p.len() as u64;
            chunk.levels.extend(p.iter().map(|r| r.ply));
            if listing {
                chunk.moves.extend(p.iter().map(|r| move_text(r.mv)));
            }
            for ((col, (_, value)), &wanted) in chunk.cols.iter_mut().zip(&PGN_ATTRS).zip(&want) {
                if wanted {
                    col.extend(p.iter().enumerate().map(|(i, r)| value(r, number, i)));
                }
            }
            if chunk.levels.len() >= CHUNK_NODES {
                chunk = pass.feed(std::mem::take(&mut chunk));
                chunk.levels.clear();
                chunk.moves.clear();
                chunk.cols.resize(PGN_ATTRS.len(), Vec::new());
                chunk.cols.iter_mut().for_each(Vec::clear);
            }
            Ok(())
        })?;
    }
    pass.feed(chunk);
    Ok((pass.finish(), nodes))
}

fn print_answers(
    texts: &[String],
    answers: &[Answer],
    attrs: &[String],
    format: Format,
) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (text, ans) in texts.iter().zip(answers) {
        match format {
            Format::Table => {
                writeln!(out, "# {text}")?;
                writeln!(out, "# {} nodes", ans.count)?;
                if !ans.hits.is_empty() {
                    writeln!(
                        out,
                        "{:>10}  {:<40}  {}",
                        "node_id",
                        "path",
                        attrs.join(" ")
                    )?;
                }
                for h in &ans.hits {
                    let vals: Vec<String> = h.values.iter().map(i64::to_string).collect();
                    writeln!(
                        out,
                        "{:>10}  {:<40}  {}",
                        h.node_id,
                        h.path.join(" "),
                        vals.join(" ")
                    )?;
                }
            }
            Format::Csv => {
                writeln!(out, "query,node_id,path,{}", attrs.join(","))?;
                for h in &ans.hits {
                    let vals: Vec<String> = h.values.iter().map(i64::to_string).collect();
                    writeln!(
                        out,
                        "\"{}\",{},{},{}",
                        text.replace('"', "\"\""),
                        h.node_id,
                        h.path.join(" "),
                        vals.join(",")
                    )?;
                }
            }
            Format::Json => {
                let hits: Vec<String> = ans
                    .hits
                    .iter()
                    .map(|h| {
                        let vals: Vec<String> = attrs
                            .iter()
                            .zip(&h.values)
                            .map(|(n, v)| format!("\"{n}\":{v}"))
                            .collect();
                        format!(
                            "{{\"node_id\":{},\"path\":[{}],{}}}",
                            h.node_id,
                            h.path
                                .iter()
                                .map(|m| format!("\"{}\"", m.replace('"', "\\\"")))
                                .collect::<Vec<_>>()
                                .join(","),
                            vals.join(",")
                        )
                    })
                    .collect();
                writeln!(
                    out,
                    "{{\"query\":\"{}\",\"count\":{},\"nodes\":[{}]}}",
                    text.replace('\\', "\\\\").replace('"', "\\\""),
                    ans.count,
                    hits.join(",")
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Node count, depth profile and attribute histograms of a `.gtl` tree.
fn stats(tree: &Path) -> Result<ExitCode> {
    let mut reader = GtlReader::open(tree)?;
    let schema = reader.schema().clone();
    let want = vec![true; schema.attrs.len()];
    let mut by_level: Vec<u64> = Vec::new();
    let mut hist: Vec<std::collections::BTreeMap<i64, u64>> =
        vec![Default::default(); schema.attrs.len()];
    let mut range: Vec<(i64, i64, i128)> = vec![(i64::MAX, i64::MIN, 0); schema.attrs.len()];
    let mut nodes = 0u64;
    let mut c = Chunk::default();
    while reader.next_chunk_into(&mut c, false, &want)? {
        nodes += c.levels.len() as u64;
        for &l in &c.levels {
            let l = l as usize;
            if by_level.len() <= l {
                by_level.resize(l + 1, 0);
            }
            by_level[l] += 1;
        }
        for (k, a) in schema.attrs.iter().enumerate() {
            for &v in &c.cols[k] {
                match &a.kind {
                    AttrKind::Int => {
                        let r = &mut range[k];
                        r.0 = r.0.min(v);
                        r.1 = r.1.max(v);
                        r.2 += i128::from(v);
                    }
                    AttrKind::Enum(_) => *hist[k].entry(v).or_default() += 1,
                    AttrKind::Flags(bits) => {
                        for (_, b) in bits {
                            if v & b != 0 {
                                *hist[k].entry(*b).or_default() += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "nodes: {nodes}")?;
    writeln!(out, "depth profile (level: nodes):")?;
    for (l, n) in by_level.iter().enumerate() {
        writeln!(out, "  {l:>3}: {n}")?;
    }
    for (k, a) in schema.attrs.iter().enumerate() {
        match &a.kind {
            AttrKind::Int => {
                let (lo, hi, sum) = range[k];
                if nodes > 0 {
                    writeln!(
                        out,
                        "{}: min {lo}, max {hi}, mean {:.2}",
                        a.name,
                        sum as f64 / nodes as f64
                    )?;
                }
            }
            AttrKind::Enum(c) | AttrKind::Flags(c) => {
                writeln!(out, "{}:", a.name)?;
                for (name, v) in c {
                    let n = hist[k].get(v).copied().unwrap_or(0);
                    let pct = 100.0 * n as f64 / nodes.max(1) as f64;
                    writeln!(out, "  {name:<16} {n:>12}  {pct:5.1} %")?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
