//! Transforms against their images written out by hand: for random set filters `F` and every
//! transform `T`, at every position of real games,
//!
//! - `T F` matches where `{F1} or {F2} or ...` does,
//! - `#(T F)` is `#(F1 | F2 | ...)` (a set transform's value is the union of its images'),
//! - `T count F` is the number of distinct images that match,
//!
//! where the images `Fi` are produced here, from this file's own small syntax tree, by an
//! independent implementation of CQL's rewriting rules: colours swapped and ranks mirrored,
//! the eight symmetries of the board, shifts that keep a designator's whole ranks and files
//! and drop squares leaving the board (an image with an emptied designator is no image), and
//! directions turned by 45°. The engine evaluates transforms at run time through a stack of
//! basic transforms, not by writing images out, so the two share no code but the parser.

use cqldb_executor::{Engine, Game};
use cqldb_indexer::flatten::index_game;
use cqldb_indexer::split::Splitter;
use proptest::prelude::*;

const DIRS: [&str; 13] = [
    "up",
    "down",
    "left",
    "right",
    "northeast",
    "northwest",
    "southeast",
    "southwest",
    "vertical",
    "horizontal",
    "diagonal",
    "orthogonal",
    "anydirection",
];

fn dir_steps(d: &str) -> Vec<(i8, i8)> {
    match d {
        "up" => vec![(0, 1)],
        "down" => vec![(0, -1)],
        "left" => vec![(-1, 0)],
        "right" => vec![(1, 0)],
        "northeast" => vec![(1, 1)],
        "northwest" => vec![(-1, 1)],
        "southeast" => vec![(1, -1)],
        "southwest" => vec![(-1, -1)],
        "vertical" => vec![(0, 1), (0, -1)],
        "horizontal" => vec![(1, 0), (-1, 0)],
        "diagonal" => vec![(1, 1), (-1, 1), (1, -1), (-1, -1)],
        "orthogonal" => vec![(0, 1), (0, -1), (1, 0), (-1, 0)],
        _ => (-1..=1)
            .flat_map(|x| (-1..=1).map(move |y| (x, y)))
            .filter(|v| *v != (0, 0))
            .collect(),
    }
}

fn dir_named(steps: &[(i8, i8)]) -> Option<&'static str> {
    DIRS.into_iter().find(|d| {
        let own = dir_steps(d);
        own.len() == steps.len() && own.iter().all(|s| steps.contains(s))
    })
}

/// This file's filters (all set-valued).
#[derive(Clone, Debug)]
enum F {
    /// Piece letters (`K`, `[Qq]`, `A`, or none: any content) and squares (none: the board).
    Des(String, Vec<(i8, i8)>),
    Dir(&'static str, u8, Box<F>),
    Attacks(Box<F>, Box<F>),
    Shade(bool, Box<F>),
    Union(Box<F>, Box<F>),
    /// `{wtm F}` / `{btm F}`.
    ToMove(bool, Box<F>),
}

/// A basic transform, as CQL's documentation states it.
#[derive(Clone, Copy, Debug)]
enum Step {
    Colour,
    /// (file, rank) -> (file, rank) of one board symmetry, and whether it swaps square colours.
    Sym(fn(i8, i8) -> (i8, i8), bool),
    Shift(i8, i8),
    Turn(u8),
}

fn syms() -> Vec<Step> {
    vec![
        Step::Sym(|f, r| (7 - r, f), true),
        Step::Sym(|f, r| (7 - f, 7 - r), false),
        Step::Sym(|f, r| (r, 7 - f), true),
        Step::Sym(|f, r| (f, 7 - r), true),
        Step::Sym(|f, r| (7 - f, r), true),
        Step::Sym(|f, r| (r, f), false),
        Step::Sym(|f, r| (7 - r, 7 - f), false),
    ]
}

/// The basic transforms of each transform keyword, `None` the identity.
fn steps(kw: &str) -> Vec<Option<Step>> {
    let shifts = |h: bool, v: bool| {
        let mut out = vec![None];
        for dy in -7..=7i8 {
            for dx in -7..=7i8 {
                if (dx, dy) != (0, 0) && (h || dx == 0) && (v || dy == 0) {
                    out.push(Some(Step::Shift(dx, dy)));
                }
            }
        }
        out
    };
    let s = syms();
    match kw {
        "flipcolor" => vec![None, Some(Step::Colour)],
        "reversecolor" => vec![Some(Step::Colour)],
        "flip" => std::iter::once(None)
            .chain(s.into_iter().map(Some))
            .collect(),
        "flipvertical" => vec![None, Some(s[4])],
        "fliphorizontal" => vec![None, Some(s[3])],
        "rotate90" => vec![None, Some(s[0]), Some(s[1]), Some(s[2])],
        "rotate45" => std::iter::once(None)
            .chain((1..8).map(|k| Some(Step::Turn(k))))
            .collect(),
        "shift" => shifts(true, true),
        "shifthorizontal" => shifts(true, false),
        "shiftvertical" => shifts(false, true),
        other => unreachable!("{other}"),
    }
}

fn image_squares(sq: &[(i8, i8)], step: Step) -> Vec<(i8, i8)> {
    let mut out: Vec<(i8, i8)> = match step {
        Step::Colour => sq.iter().map(|&(f, r)| (f, 7 - r)).collect(),
        Step::Sym(m, _) => sq.iter().map(|&(f, r)| m(f, r)).collect(),
        Step::Turn(_) => sq.to_vec(),
        Step::Shift(dx, dy) => {
            // Sideways: squares on a rank the designator holds whole stay; then up or down:
            // squares on a file it then holds whole stay; squares leaving the board go.
            let full_rank = |s: &[(i8, i8)], r: i8| (0..8).all(|f| s.contains(&(f, r)));
            let full_file = |s: &[(i8, i8)], f: i8| (0..8).all(|r| s.contains(&(f, r)));
            let h: Vec<(i8, i8)> = sq
                .iter()
                .filter_map(|&(f, r)| {
                    if full_rank(sq, r) {
                        Some((f, r))
                    } else {
                        let nf = f + dx;
                        (0..8).contains(&nf).then_some((nf, r))
                    }
                })
                .collect();
            h.iter()
                .filter_map(|&(f, r)| {
                    if full_file(&h, f) {
                        Some((f, r))
                    } else {
                        let nr = r + dy;
                        (0..8).contains(&nr).then_some((f, nr))
                    }
                })
                .collect()
        }
    };
    out.sort();
    out.dedup();
    out
}

fn image_dir(d: &'static str, step: Step) -> Option<&'static str> {
    let turned: Vec<(i8, i8)> = dir_steps(d)
        .into_iter()
        .map(|(x, y)| match step {
            Step::Colour => (x, -y),
            // A symmetry maps a step as it maps the squares around the board's centre.
            Step::Sym(m, _) => {
                let (a, b) = m(3, 3);
                let (c, e) = m(3 + x, 3 + y);
                (c - a, e - b)
            }
            Step::Shift(..) => (x, y),
            Step::Turn(k) => (0..k).fold((x, y), |(x, y), _| ((x - y).signum(), (x + y).signum())),
        })
        .collect();
    dir_named(&turned)
}

fn swaps_shade(step: Step) -> bool {
    match step {
        Step::Colour => true,
        Step::Sym(_, s) => s,
        Step::Shift(dx, dy) => (dx + dy) % 2 != 0,
        Step::Turn(_) => false,
    }
}

/// `f` rewritten by `step`; `None` if a designator became empty (or a direction has no name).
fn image(f: &F, step: Step) -> Option<F> {
    Some(match f {
        F::Des(p, sq) => {
            let p = if matches!(step, Step::Colour) {
                let swapped: String = p
                    .chars()
                    .map(|c| {
                        if c.is_ascii_uppercase() {
                            c.to_ascii_lowercase()
                        } else {
                            c.to_ascii_uppercase()
                        }
                    })
                    .collect();
                // `[rR]` is written `[Rr]`: equal images must read equal.
                match swapped.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
                    Some(inner) => {
                        let mut c: Vec<char> = inner.chars().collect();
                        c.sort_unstable();
                        format!("[{}]", c.into_iter().collect::<String>())
                    }
                    None => swapped,
                }
            } else {
                p.clone()
            };
            if sq.is_empty() {
                F::Des(p, Vec::new())
            } else {
                let s = image_squares(sq, step);
                if s.is_empty() {
                    return None;
                }
                F::Des(p, s)
            }
        }
        F::Dir(d, n, x) => F::Dir(image_dir(d, step)?, *n, Box::new(image(x, step)?)),
        F::Attacks(a, b) => F::Attacks(Box::new(image(a, step)?), Box::new(image(b, step)?)),
        F::Shade(light, x) => F::Shade(*light != swaps_shade(step), Box::new(image(x, step)?)),
        F::Union(a, b) => F::Union(Box::new(image(a, step)?), Box::new(image(b, step)?)),
        F::ToMove(w, x) => F::ToMove(
            *w != matches!(step, Step::Colour),
            Box::new(image(x, step)?),
        ),
    })
}

fn text(f: &F) -> String {
    match f {
        F::Des(p, sq) => {
            let squares: Vec<String> = sq
                .iter()
                .map(|&(f, r)| format!("{}{}", (b'a' + f as u8) as char, r + 1))
                .collect();
            match (p.is_empty(), squares.is_empty()) {
                (true, true) => ".".into(),
                (false, true) => p.clone(),
                (_, false) => format!("{p}[{}]", squares.join(",")),
            }
        }
        F::Dir(d, n, x) => format!("({d} {n} ({}))", text(x)),
        F::Attacks(a, b) => format!("(({}) attacks ({}))", text(a), text(b)),
        F::Shade(l, x) => format!("({} ({}))", if *l { "light" } else { "dark" }, text(x)),
        F::Union(a, b) => format!("(({}) | ({}))", text(a), text(b)),
        F::ToMove(w, x) => format!("{{{} ({})}}", if *w { "wtm" } else { "btm" }, text(x)),
    }
}

fn has_side(f: &F) -> bool {
    match f {
        F::Des(..) => false,
        F::ToMove(..) => true,
        F::Dir(_, _, x) | F::Shade(_, x) => has_side(x),
        F::Attacks(a, b) | F::Union(a, b) => has_side(a) || has_side(b),
    }
}

/// Whether `f` names only whole-board sets and directions `rotate45` can turn.
fn turnable(f: &F) -> bool {
    match f {
        F::Des(_, sq) => sq.is_empty(),
        F::Dir(d, _, x) => !matches!(*d, "vertical" | "horizontal") && turnable(x),
        F::Attacks(a, b) | F::Union(a, b) => turnable(a) && turnable(b),
        F::Shade(_, x) | F::ToMove(_, x) => turnable(x),
    }
}

fn designator() -> impl Strategy<Value = F> {
    let pieces = prop::sample::select(vec![
        "K", "k", "Q", "[Qq]", "A", "a", "P", "p", "[Rr]", "N", "",
    ]);
    let squares = prop_oneof![
        Just(Vec::new()),
        prop::collection::vec((0..8i8, 0..8i8), 1..4),
        // A whole rank or file, plus a square.
        (0..8i8, 0..8i8, any::<bool>()).prop_map(|(k, o, rank)| {
            let mut v: Vec<(i8, i8)> = (0..8).map(|i| if rank { (i, k) } else { (k, i) }).collect();
            v.push((o, (o + 3) % 8));
            v
        }),
    ];
    (pieces, squares).prop_map(|(p, mut s)| {
        s.sort();
        s.dedup();
        F::Des(p.to_owned(), s)
    })
}

fn filter() -> impl Strategy<Value = F> {
    designator().prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (prop::sample::select(DIRS.to_vec()), 1..3u8, inner.clone())
                .prop_map(|(d, n, x)| F::Dir(d, n, Box::new(x))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| F::Attacks(Box::new(a), Box::new(b))),
            (any::<bool>(), inner.clone()).prop_map(|(l, x)| F::Shade(l, Box::new(x))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| F::Union(Box::new(a), Box::new(b))),
            (any::<bool>(), inner).prop_map(|(w, x)| F::ToMove(w, Box::new(x))),
        ]
    })
}

const TRANSFORMS: [&str; 10] = [
    "flipcolor",
    "reversecolor",
    "flip",
    "flipvertical",
    "fliphorizontal",
    "rotate90",
    "rotate45",
    "shift",
    "shifthorizontal",
    "shiftvertical",
];

const PGN: &str = "[Event \"t\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n\
1. e4 (1. d4 d5 (1... Nf6 2. c4) 2. c4) e5 2. Nf3 Nc6 3. Bb5 a6 4. O-O Nf6 5. Bxc6 dxc6 \
6. d4 exd4 7. Qxd4 Qxd4 8. Nxd4 Bd7 9. Nc3 O-O-O 10. Be3 c5 11. Nf3 b6 12. e5 Ng4 13. e6 Bxe6 \
14. Ng5 Nxe3 15. fxe3 Rd2 16. Rad1 Rxd1 17. Rxd1 c4 18. Rd8+ Kb7 19. h4 h6 20. h5 a5 \
21. b3 a4 22. Nxe6 fxe6 23. Rd7 Kc6 24. Rxg7 1-0";

fn game() -> Game {
    let mut split = Splitter::new(std::io::Cursor::new(PGN.as_bytes().to_vec()));
    let raw = split.next_game().unwrap().unwrap();
    let g = index_game(raw, 0);
    Game::new(1, g.positions, g.tags, true)
}

/// The positions where the body `q` matches.
fn matching(q: &str, g: &Game) -> Vec<u32> {
    let parsed = cqldb_planner::parse(&format!("cql(variations) {q}"))
        .unwrap_or_else(|e| panic!("{q}: {}", e.message));
    Engine::new(parsed, true).run_game(g).matched
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn transforms_are_the_union_of_their_images_written_out(f in filter(), t in 0..TRANSFORMS.len()) {
        let kw = TRANSFORMS[t];
        prop_assume!(kw != "rotate45" || turnable(&f));
        let g = game();
        // The distinct valid images, written out.
        let mut images: Vec<String> = Vec::new();
        for step in steps(kw) {
            let img = match step {
                None => Some(f.clone()),
                Some(s) => image(&f, s),
            };
            if let Some(img) = img {
                let t = text(&img);
                if !images.contains(&t) {
                    images.push(t);
                }
            }
        }
        let body = text(&f);
        let any = if images.is_empty() {
            "false".to_owned()
        } else {
            images.iter().map(|i| format!("{{{i}}}")).collect::<Vec<_>>().join(" or ")
        };
        prop_assert_eq!(matching(&format!("{kw} {body}"), &g), matching(&any, &g), "match of {} {}", kw, body);
        // A `{wtm F}` image that fails has no value, and would fail a written-out union (the
        // transform unites only the images that match): the value is checked without them.
        if !images.is_empty() && !has_side(&f) {
            let union = images.iter().map(|i| format!("({i})")).collect::<Vec<_>>().join(" | ");
            for k in 0..4 {
                prop_assert_eq!(
                    matching(&format!("#({kw} {body}) == {k}"), &g),
                    matching(&format!("#({union}) == {k}"), &g),
                    "value of {} {} (k = {})", kw, body, k
                );
            }
        }
        // `count`: the number of distinct images matching at each position.
        let per_image: Vec<Vec<u32>> = images.iter().map(|i| matching(i, &g)).collect();
        let count_at = |pos: u32| per_image.iter().filter(|m| m.contains(&pos)).count();
        for k in 0..3usize {
            let want: Vec<u32> = (0..g.len() as u32).filter(|&p| count_at(p) == k).collect();
            prop_assert_eq!(
                matching(&format!("({kw} count {body}) == {k}"), &g),
                want,
                "count of {} {} (k = {})", kw, body, k
            );
        }
    }
}

#[test]
fn the_precedence_and_value_rules_of_the_documentation() {
    let g = game();
    let same = |a: &str, b: &str| assert_eq!(matching(a, &g), matching(b, &g), "{a} vs {b}");
    // A transform takes one whole filter: attacks, comparisons and `or` included.
    same("flipcolor A attacks k", "flipcolor (A attacks k)");
    same("flipcolor Q == 1", "Q == 1 or q == 1");
    same("flipcolor Ka1 or check", "{Ka1 or check} or {ka8 or check}");
    // A set transform's value is the union of its images: both kings.
    same("#(flipcolor K) == 2", "true");
    // Sides, results and shades follow the colour swap.
    same("flipcolor {wtm Q}", "{wtm Q} or {btm q}");
    same("flipcolor light B", "light B | dark b");
    let tagged = |q: &str| {
        let parsed = cqldb_planner::parse(&format!("cql() {q}")).unwrap();
        !Engine::new(parsed, false).run_game(&g).matched.is_empty()
    };
    assert!(tagged("flipcolor result 0-1"), "1-0 is 0-1 swapped");
    assert!(tagged("flipcolor player black \"A\""));
    assert!(!tagged("reversecolor player white \"A\""));
    // `count` always matches; its comparison needs parentheses.
    same("flipcolor count {Q} == 2", "true");
    same("(flipcolor count K) == 2", "true");
}
