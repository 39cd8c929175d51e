//! What a query writes: `comment(...)` at the position, `message(...)` to the run's messages.

use crate::ast::*;
use crate::eval::context::Cx;
use crate::eval::value::Value;

use super::Engine;

impl Engine {
    pub(super) fn comment(&mut self, args: &[Node], cx: &mut Cx) -> Option<Value> {
        if !self.comments {
            // The text is not wanted, but an argument may assign (`comment(x = 3)`); a constant
            // cannot, and a long one costs its copy.
            for a in args {
                if !matches!(a.expr, Expr::Str(_) | Expr::Number(_)) {
                    self.eval(a, cx);
                }
            }
            return Some(Value::Matched);
        }
        let text = self.render_args(args, cx);
        cx.comments.push((cx.cur, text));
        Some(Value::Matched)
    }

    pub(super) fn message(&mut self, quiet: bool, args: &[Node], cx: &mut Cx) -> Option<Value> {
        let text = self.render_args(args, cx);
        if quiet {
            cx.messages.push(text);
            return Some(Value::Matched);
        }
        // The reference's format: `Game: 42 move 87(btm): text`.
        let rec = &cx.game.positions[cx.cur as usize];
        let number = cx.game.move_number(cx.cur);
        let side = if rec.turn() == shakmaty::Color::White {
            "wtm"
        } else {
            "btm"
        };
        cx.messages.push(format!(
            "Game: {} move {number}({side}): {text}",
            cx.game.number
        ));
        Some(Value::Matched)
    }
}
