//! Tag filters: player, event, site, date, eco, tag "Name", result, elo, year, gamenumber.

use cqldb_planner::ast::{Expr, TagField};

use crate::eval::{Cx, Engine};
use crate::value::Value;

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
                let values: Vec<&str> = match field {
                    TagField::Player(Some(true)) => g.tag("White").into_iter().collect(),
                    TagField::Player(Some(false)) => g.tag("Black").into_iter().collect(),
                    TagField::Player(None) => {
                        g.tag("White").into_iter().chain(g.tag("Black")).collect()
                    }
                    TagField::Event => g.tag("Event").into_iter().collect(),
                    TagField::Site => g.tag("Site").into_iter().collect(),
                    TagField::Date => g.tag("Date").into_iter().collect(),
                    TagField::EventDate => g.tag("EventDate").into_iter().collect(),
                    TagField::Eco => g.tag("ECO").into_iter().collect(),
                    TagField::Named(n) => g.tag(n).into_iter().collect(),
                };
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
