//! Strings: `~~` with its capture groups `\\N`, `int`, `str`, `lowercase`/`uppercase`, slices,
//! and how values print (`str`, `comment`, `message`).

use crate::ast::*;
use crate::eval::context::Cx;
use crate::eval::value::Value;

use super::Engine;
use crate::eval::board;

impl Engine {
    pub(super) fn regex(&mut self, a: &Node, b: &Node, cx: &mut Cx) -> Option<Value> {
        let Value::Str(text) = self.eval(a, cx)? else {
            return None;
        };
        let Value::Str(pattern) = self.eval(b, cx)? else {
            return None;
        };
        let re = self
            .regexes
            .entry(pattern.clone())
            .or_insert_with(|| regex::Regex::new(&pattern).ok())
            .as_ref()?;
        let caps = re.captures(&text)?;
        cx.groups = caps
            .iter()
            .map(|m| m.map(|m| m.as_str().to_owned()))
            .collect();
        Some(Value::Str(caps.get(0)?.as_str().to_owned()))
    }

    pub(super) fn group(&mut self, g: &u32, cx: &mut Cx) -> Option<Value> {
        cx.groups
            .get(*g as usize)
            .cloned()
            .flatten()
            .map(Value::Str)
    }

    pub(super) fn int(&mut self, a: &Node, cx: &mut Cx) -> Option<Value> {
        match self.eval(a, cx)? {
            Value::Str(s) => s.trim().parse::<i64>().ok().map(Value::Num),
            Value::Num(v) => Some(Value::Num(v)),
            _ => None,
        }
    }

    /// `str(...)` always matches (CQL): an argument without a value reads `<false>`, as in a
    /// message (`str(2<1 K)` is `"<false>e1"` with the king on e1).
    pub(super) fn str_of(&mut self, args: &[Node], cx: &mut Cx) -> Option<Value> {
        Some(Value::Str(self.render_args(args, cx)))
    }

    pub(super) fn case(&mut self, lower: &bool, a: &Node, cx: &mut Cx) -> Option<Value> {
        match self.eval(a, cx)? {
            Value::Str(s) => Some(Value::Str(if *lower {
                s.to_lowercase()
            } else {
                s.to_uppercase()
            })),
            _ => None,
        }
    }

    pub(super) fn slice(
        &mut self,
        base: &Node,
        from: &Option<Box<Node>>,
        to: &Option<Box<Node>>,
        range: &bool,
        cx: &mut Cx,
    ) -> Option<Value> {
        let Value::Str(s) = self.eval(base, cx)? else {
            return None;
        };
        let chars: Vec<char> = s.chars().collect();
        let len = chars.len() as i64;
        let idx = |e: &mut Self, x: &Option<Box<Node>>, cx: &mut Cx, default: i64| match x {
            None => Some(default),
            Some(n) => match e.eval(n, cx)? {
                Value::Num(v) => Some(if v < 0 { len + v } else { v }),
                _ => None,
            },
        };
        let a = idx(self, from, cx, 0)?;
        if !*range {
            let c = chars.get(usize::try_from(a).ok()?)?;
            return Some(Value::Str(c.to_string()));
        }
        let b = idx(self, to, cx, len)?.min(len);
        let a = a.clamp(0, len);
        if a > b {
            return Some(Value::Str(String::new()));
        }
        Some(Value::Str(chars[a as usize..b as usize].iter().collect()))
    }

    /// The arguments of `comment`/`message` as text; a failing one prints `<false>`.
    pub(super) fn render_args(&mut self, args: &[Node], cx: &mut Cx) -> String {
        let mut text = String::new();
        for a in args {
            match self.eval(a, cx) {
                Some(v) => text.push_str(&self.render(&v, cx)),
                None => text.push_str("<false>"),
            }
        }
        text
    }

    pub(super) fn render(&self, v: &Value, cx: &Cx) -> String {
        match v {
            Value::Piece(_) => {
                // A piece variable prints with its piece where it stands: `Kg1`.
                let s = self.as_set(v, cx).unwrap_or(0);
                let rec = &cx.game.positions[cx.cur as usize];
                if s.count_ones() == 1
                    && let Some(p) = board::piece_on(rec, s.trailing_zeros())
                {
                    let c = "PNBRQKpnbrqk".as_bytes()[p] as char;
                    return format!("{c}{}", crate::eval::value::squares_text(s));
                }
                crate::eval::value::squares_text(s)
            }
            // A set prints its squares only (`e6`, `[d1,a2]`).
            Value::Set(s) => crate::eval::value::squares_text(*s),
            Value::Pos(p) => cx.locate_text(*p),
            other => other.render(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::filter::testing::{SCHOLAR, matching};

    /// `str` always matches, a failing argument reading `<false>`; one argument may go without
    /// parentheses; `~~` has the text it matched as its value.
    #[test]
    fn str_always_matches_and_a_match_is_its_text() {
        let all: Vec<u32> = (0..=8).collect();
        assert_eq!(
            matching("initial str(2 < 1 K) == \"<false>e1\"", SCHOLAR),
            vec![0]
        );
        assert_eq!(matching("X = \"pin\" str X == \"pin\"", SCHOLAR), all);
        assert_eq!(
            matching("(\"football\" ~~ \"otb\") == \"otb\"", SCHOLAR),
            all
        );
        assert_eq!(
            matching("x = (\"football\" ~~ \"o+\") x == \"oo\"", SCHOLAR),
            all
        );
        assert_eq!(
            matching("\"football\" ~~ \"z\"", SCHOLAR),
            Vec::<u32>::new()
        );
    }
}
