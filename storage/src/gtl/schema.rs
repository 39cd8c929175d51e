//! The attributes and constants a search-tree log declares in its header.

use crate::error::{Result, StorageError};

/// How an attribute's integers are to be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// A plain integer.
    Int,
    /// One of named values.
    Enum(Vec<(String, i64)>),
    /// Bit flags with names.
    Flags(Vec<(String, i64)>),
}

/// A declared node attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrDef {
    /// Name (a letter, then letters, digits, `_`).
    pub name: String,
    /// Kind.
    pub kind: AttrKind,
}

/// The attributes of a tree's nodes (besides `node_id` and `last_move`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeSchema {
    /// Attributes in declaration order.
    pub attrs: Vec<AttrDef>,
    /// Constants not tied to one attribute (`const NAME value`; the GT-log aliases).
    pub consts: Vec<(String, i64)>,
    /// Whether every node carries the id its log gave it (a GT-log `.gtf` record number),
    /// stored as one more column after the attributes. Without it, `node_id` is the pre-order
    /// number (root = 0).
    pub ids: bool,
}

impl TreeSchema {
    /// Every named constant (enum values and flag bits) with its value.
    pub fn constants(&self) -> Vec<(String, i64)> {
        let mut out: Vec<(String, i64)> = self
            .attrs
            .iter()
            .flat_map(|a| match &a.kind {
                AttrKind::Int => Vec::new(),
                AttrKind::Enum(v) | AttrKind::Flags(v) => v.clone(),
            })
            .collect();
        out.extend(self.consts.iter().cloned());
        out
    }

    /// Value columns per node: the attributes, and the id when the log gave one.
    pub fn value_columns(&self) -> usize {
        self.attrs.len() + usize::from(self.ids)
    }

    /// The header lines of the text format (without `gtql-log` and `nodes`); a `.gtl` header
    /// adds the line `ids` when nodes carry their log's ids.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        if self.ids {
            s.push_str("ids\n");
        }
        for (n, v) in &self.consts {
            s.push_str(&format!("const {n} {v}\n"));
        }
        for a in &self.attrs {
            s.push_str("attr ");
            s.push_str(&a.name);
            match &a.kind {
                AttrKind::Int => s.push_str(" int"),
                AttrKind::Enum(v) | AttrKind::Flags(v) => {
                    s.push_str(if matches!(a.kind, AttrKind::Enum(_)) {
                        " enum"
                    } else {
                        " flags"
                    });
                    for (n, x) in v {
                        s.push_str(&format!(" {n}={x}"));
                    }
                }
            }
            s.push('\n');
        }
        s
    }

    pub(super) fn parse_const(line: &str, lineno: usize) -> Result<(String, i64)> {
        let bad = |m: &str| StorageError::Format(format!("line {lineno}: {m}"));
        let mut w = line.split_whitespace().skip(1);
        let (Some(n), Some(v), None) = (w.next(), w.next(), w.next()) else {
            return Err(bad("expected 'const NAME value'"));
        };
        if !valid_name(n) {
            return Err(bad(&format!("'{n}' is not a usable constant name")));
        }
        let v = v
            .parse::<i64>()
            .map_err(|_| bad(&format!("'{v}' is not an integer")))?;
        Ok((n.to_owned(), v))
    }

    pub(super) fn parse_attr(line: &str, lineno: usize) -> Result<AttrDef> {
        let bad = |m: &str| StorageError::Format(format!("line {lineno}: {m}"));
        let mut w = line.split_whitespace();
        w.next();
        let name = w.next().ok_or_else(|| bad("attr needs a name"))?.to_owned();
        if !valid_name(&name) || matches!(name.as_str(), "node_id" | "last_move") {
            return Err(bad(&format!("'{name}' is not a usable attribute name")));
        }
        let kind = w.next().ok_or_else(|| bad("attr needs a type"))?;
        let mut consts = Vec::new();
        for c in w {
            let (n, v) = c
                .split_once('=')
                .ok_or_else(|| bad(&format!("expected NAME=value, found '{c}'")))?;
            if !valid_name(n) {
                return Err(bad(&format!("'{n}' is not a usable constant name")));
            }
            let v = v
                .parse::<i64>()
                .map_err(|_| bad(&format!("'{v}' is not an integer")))?;
            consts.push((n.to_owned(), v));
        }
        let kind = match kind {
            "int" => AttrKind::Int,
            "enum" => AttrKind::Enum(consts),
            "flags" => AttrKind::Flags(consts),
            other => return Err(bad(&format!("unknown attribute type '{other}'"))),
        };
        Ok(AttrDef { name, kind })
    }
}

fn valid_name(n: &str) -> bool {
    let mut c = n.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
        && !matches!(
            n,
            "node" | "child" | "subtree" | "count" | "and" | "or" | "not"
        )
}

/// One node as read from a log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRow {
    /// Depth in the tree (root = 0).
    pub level: u32,
    /// The move that led to it (`-` for the root).
    pub last_move: String,
    /// Attribute values in schema order.
    pub values: Vec<i64>,
}
