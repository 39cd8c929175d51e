//! Tag filters: player, event, site, date, eco, tag "Name", result, elo, year, gamenumber.

use crate::ast::{Expr, TagField};

use crate::eval::engine::{Cx, Engine};
use crate::eval::value::Value;

impl Engine {
    pub(crate) fn eval_tag(&mut self, e: &Expr, cx: &mut Cx) -> Option<Value> {
        let g = cx.game;
        match e {
            Expr::GameNumber => Some(Value::Num(g.number as i64)),
            Expr::Result(r) => (g.tag("Result") == Some(r.as_str())).then_some(Value::Matched),
            Expr::Elo(white) => {
                let v = g.tag(if *white != cx.flip {
                    "WhiteElo"
                } else {
                    "BlackElo"
                })?;
                v.trim().parse::<i64>().ok().map(Value::Num)
            }
            Expr::Year => {
                let d = g.tag("Date")?;
                d.get(..4)?.parse::<i64>().ok().map(Value::Num)
            }
            Expr::Tag(field, search) => {
                // A search looks at every value of the tag (a malformed game may repeat one,
                // and the tag index keeps them all); a value is the first.
                let names: &[&str] = match field {
                    TagField::Player(Some(true)) => &["White"],
                    TagField::Player(Some(false)) => &["Black"],
                    TagField::Player(None) => &["White", "Black"],
                    TagField::Event => &["Event"],
                    TagField::Site => &["Site"],
                    TagField::Date => &["Date"],
                    TagField::EventDate => &["EventDate"],
                    TagField::Eco => &["ECO"],
                    TagField::Named(n) => &[n.as_str()],
                };
                let values: Vec<&str> = names.iter().flat_map(|n| g.tags_named(n)).collect();
                match search {
                    // Implicit search: a substring of the tag value.
                    Some(s) => values
                        .iter()
                        .any(|v| v.contains(s.as_str()))
                        .then_some(Value::Matched),
                    None => values.first().map(|v| Value::Str((*v).to_owned())),
                }
            }
            _ => None,
        }
    }
}
