//! Transforms rewrite a filter into its transformed copy (CQL's `flipcolor`, `reversecolor`):
//! piece colours swapped, ranks mirrored, side to move and up/down exchanged.

use crate::ast::*;

/// The colour-flipped copy of `n`.
pub fn flip_color(n: &Node) -> Node {
    map(n, &|e| match e {
        Expr::Pieces(p) => Some(Expr::Pieces(PieceSet {
            pieces: swap_colors(p.pieces),
            squares: mirror_ranks(p.squares),
        })),
        Expr::ToMove(w) => Some(Expr::ToMove(!w)),
        Expr::ColorConst(c) => Some(Expr::ColorConst(-c)),
        Expr::Elo(w) => Some(Expr::Elo(!w)),
        Expr::Fen(cells) => {
            let mut out = vec![12u8; 64];
            for (sq, &c) in cells.iter().enumerate() {
                let m = (7 - sq / 8) * 8 + sq % 8;
                out[m] = if c < 12 { (c + 6) % 12 } else { c };
            }
            Some(Expr::Fen(out))
        }
        _ => None,
    })
}

fn swap_colors(p: u16) -> u16 {
    (p & 0x1000) | ((p & 0x3f) << 6) | ((p >> 6) & 0x3f)
}

fn mirror_ranks(s: u64) -> u64 {
    s.swap_bytes()
}

/// Copies `n`, replacing each expression for which `f` returns a value; directions are mirrored.
fn map(n: &Node, f: &dyn Fn(&Expr) -> Option<Expr>) -> Node {
    let span = n.span.clone();
    if let Some(e) = f(&n.expr) {
        return Node { expr: e, span };
    }
    let m = |x: &Node| map(x, f);
    let b = |x: &Node| Box::new(map(x, f));
    let ob = |x: &Option<Box<Node>>| x.as_ref().map(|x| Box::new(map(x, f)));
    let v = |xs: &[Node]| xs.iter().map(|x| map(x, f)).collect::<Vec<_>>();
    use Expr::*;
    let expr = match &n.expr {
        Compound(xs) => Compound(v(xs)),
        And(a, c) => And(b(a), b(c)),
        Or(a, c) => Or(b(a), b(c)),
        Not(a) => Not(b(a)),
        If(c, t, e) => If(b(c), b(t), ob(e)),
        Compare(a, rest) => Compare(b(a), rest.iter().map(|(op, x)| (*op, m(x))).collect()),
        Binary(op, a, c) => Binary(*op, b(a), b(c)),
        Neg(a) => Neg(b(a)),
        Complement(a) => Complement(b(a)),
        Count(a) => Count(b(a)),
        In(a, c) => In(b(a), b(c)),
        Regex(a, c) => Regex(b(a), b(c)),
        Colon(a, c) => Colon(b(a), b(c)),
        Attacks(a, c) => Attacks(b(a), b(c)),
        AttackedBy(a, c) => AttackedBy(b(a), b(c)),
        Direction(d, lo, hi, a) => Direction(d.mirrored(), *lo, *hi, b(a)),
        Shade(l, a) => Shade(*l, b(a)),
        RankFile(r, a) => RankFile(*r, b(a)),
        Power(a) => Power(b(a)),
        Between(a, c) => Between(b(a), b(c)),
        Ray(d, xs, x) => Ray(d.map(|d| d.mirrored()), v(xs), *x),
        Pin(a, c, d) => Pin(ob(a), ob(c), ob(d)),
        MakeSquare(a, c) => MakeSquare(b(a), b(c)),
        Position(a) => Position(b(a)),
        Child(a) => Child(ob(a)),
        Ancestor(a, c) => Ancestor(b(a), b(c)),
        Descendant(a, c) => Descendant(b(a), b(c)),
        Distance(a, c) => Distance(b(a), b(c)),
        Lca(a, c) => Lca(b(a), b(c)),
        Find(fd) => Find(Box::new(crate::ast::Find {
            backward: fd.backward,
            quiet: fd.quiet,
            count: fd.count,
            body: m(&fd.body),
        })),
        Dash(d) => Dash(Box::new(map_dash(d, f))),
        CountMoves(d) => CountMoves(Box::new(map_dash(d, f))),
        Move(mv) => Move(Box::new(MoveFilter {
            from: mv.from.as_ref().map(m),
            to: mv.to.as_ref().map(m),
            capture: mv.capture.as_ref().map(m),
            ..(**mv).clone()
        })),
        Abs(a) => Abs(b(a)),
        Sqrt(a) => Sqrt(b(a)),
        MinMax(x, xs) => MinMax(*x, v(xs)),
        Int(a) => Int(b(a)),
        ToStr(xs) => ToStr(v(xs)),
        Case(x, a) => Case(*x, b(a)),
        Slice(a, c, d, r) => Slice(b(a), ob(c), ob(d), *r),
        Assign(s, op, a) => Assign(*s, *op, b(a)),
        DictGet(s, a) => DictGet(*s, b(a)),
        DictSet(s, a, c) => DictSet(*s, b(a), b(c)),
        Call(i, xs) => Call(*i, v(xs)),
        SquareIter(s, all, a, c) => SquareIter(*s, *all, b(a), b(c)),
        PieceIter(s, all, a, c) => PieceIter(*s, *all, b(a), b(c)),
        While(a, c) => While(b(a), b(c)),
        Comment(xs) => Comment(v(xs)),
        Message(xs) => Message(v(xs)),
        Transform(xs) => Transform(v(xs)),
        other => other.clone(),
    };
    Node { expr, span }
}

fn map_dash(d: &Dash, f: &dyn Fn(&Expr) -> Option<Expr>) -> Dash {
    Dash {
        from: d.from.as_ref().map(|x| map(x, f)),
        to: d.to.as_ref().map(|x| map(x, f)),
        capture: d.capture,
        promotion: d.promotion,
        target: d.target.as_ref().map(|x| map(x, f)),
        source: d.source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_and_mirrors() {
        assert_eq!(swap_colors(1), 1 << 6);
        assert_eq!(swap_colors(1 << 11), 1 << 5);
        assert_eq!(mirror_ranks(1), 1 << 56);
    }
}
