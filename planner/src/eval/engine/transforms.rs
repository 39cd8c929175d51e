//! Transforms at run time: `T F` evaluates `F` under each of its valid, distinct images (the
//! basic transforms pushed on the context's stack, so literals read through them; transforms
//! written directly inside one another are one chain of images), and combines
//! what matched: a set filter's images unite, a numeric filter's give the largest number,
//! anything else the first match; `T count F` is the number of matching images.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::ast::*;
use crate::eval::context::{Cx, matches};
use crate::eval::value::Value;
use crate::transform::{Step, chain, images_of_chain};

use super::Engine;

/// Which images of each transform are evaluated, per transform node and the transforms
/// around it: worked out once (a walk of the filter per basic transform), then reused at every
/// position.
#[derive(Default)]
pub(crate) struct ImageCache {
    /// Transforms not inside another, by node.
    top: FxHashMap<usize, Images>,
    /// Nested transforms, by node and the steps around them.
    nested: FxHashMap<(usize, Vec<Step>), Images>,
}

/// A transform's images, each as the steps it takes.
type Images = Arc<[Vec<Step>]>;

impl ImageCache {
    /// The images of `t`'s chain (see [`chain`]) as the steps each takes.
    fn get(&mut self, t: &Transformed, outer: &[Step]) -> Images {
        let key = std::ptr::from_ref(t) as usize;
        let make = || {
            let (kinds, body) = chain(t);
            Arc::from(images_of_chain(&kinds, body, outer))
        };
        if outer.is_empty() {
            return self.top.entry(key).or_insert_with(make).clone();
        }
        self.nested
            .entry((key, outer.to_vec()))
            .or_insert_with(make)
            .clone()
    }
}

impl Engine {
    pub(super) fn transform(&mut self, t: &Transformed, cx: &mut Cx) -> Option<Value> {
        let images = self.images.get(t, &cx.transforms);
        let (_, body) = chain(t);
        let depth = cx.transforms.len();
        let mut value: Option<Value> = None;
        let mut matched = 0i64;
        for steps in images.iter() {
            cx.transforms.extend_from_slice(steps);
            let v = self.eval(body, cx);
            cx.transforms.truncate(depth);
            if !matches(&v) {
                // An empty set is still a set: the union of images that are all empty is
                // the empty set, a value (`#(flipcolor K[a1]) == 0`), not a failure.
                if let (Combine::Union, Some(Value::Set(0)), None) = (t.combine, &v, &value) {
                    value = Some(Value::Set(0));
                }
                continue;
            }
            matched += 1;
            let Some(v) = v else { continue };
            value = Some(match (t.combine, value) {
                (_, None) | (Combine::Union, Some(Value::Set(0))) => v,
                (Combine::Union, Some(acc)) => {
                    let a = self.as_set(&acc, cx).unwrap_or(0);
                    let b = self.as_set(&v, cx).unwrap_or(0);
                    Value::Set(a | b)
                }
                (Combine::Max, Some(Value::Num(a))) => match v {
                    Value::Num(b) => Value::Num(a.max(b)),
                    other => other,
                },
                (Combine::Max | Combine::First, Some(acc)) => acc,
            });
            if t.combine == Combine::First && !t.count {
                break;
            }
        }
        if t.count {
            return Some(Value::Num(matched));
        }
        // A set image that is a piece variable's square is a set once united.
        match value {
            Some(v @ Value::Piece(_)) if t.combine == Combine::Union => {
                self.as_set(&v, cx).map(Value::Set)
            }
            other => other,
        }
    }
}
