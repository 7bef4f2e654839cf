//! `narrow` (kernel IR): a reduction over an index range whose elements are the neutral element
//! outside a sub-range given by its guard iterates only that sub-range.
//!
//! The shape it matches, in the bodies of thread-level kernels (where a SOAC runs sequentially,
//! in order) at any depth:
//!
//! ```text
//! let r = redomap w (.., iota_w, ..) reduce (+) ne
//!           map \(.., j, ..) -> { <stmts that cannot fail>; if g then {..} else {ne} }
//! ```
//!
//! where `iota_w` is `iota(w)` (so `j` is the element's index), `+` is an integer or float
//! addition (one result, no scan, no map output kept) and the guard `g` is a chain of `&&`
//! (lowered as `if a then b else false`) whose leading conjuncts compare `j` with values bound
//! outside the map (`i < j`, `j < c`, `j >= lo`, ...). Outside the range `[lo, hi)` those
//! conjuncts are false, the element is `ne`, and adding `ne` leaves the accumulator as it was;
//! so every input is sliced to `[lo, hi)`, the width becomes `hi - lo`, and the leading
//! conjuncts, true for every remaining element, become `true` (`kir-simplify` then folds the
//! chain). The bounds are clamped to `[0, w]` without overflow.
//!
//! Invariants it relies on, each checked:
//! - Exactness: `x + 0 = x` for integers, and for floats whenever `x` is not `-0.0`; an
//!   accumulator starting at the neutral `+0.0` never becomes `-0.0` by rounded additions (a sum
//!   is `-0.0` only when both operands are), and with a `-0.0` neutral `x + -0.0 = x` always.
//!   Other operators are left alone.
//! - No failure is skipped: every statement that can fail (`Exp::cannot_fail` is false: an
//!   index, a division by a variable, an assertion) runs only when all the leading conjuncts
//!   hold, that is only at indices inside the range: in the guarded `if`'s branch, or in a
//!   `then` branch of the chain entered after the last leading conjunct (`j < c && ys[j] ==
//!   ys[i]`, `count`'s shape, reads `ys[j]` there); the map's other statements, and the chain's
//!   branches entered earlier, cannot fail (where a branch between two bounds can fail, only
//!   the bounds before it narrow). So the skipped elements did nothing but produce `ne`.
//! - Order: a thread-level kernel runs the reduction sequentially in index order; removing
//!   neutral elements keeps the order of the others.

use super::iota_views::{IotaView, iota_views};
use ogham_ir::conjunction::Conjunction;
use ogham_ir::kir::{HostOp, Program, SegLevel};
use ogham_ir::math::MathFn;
use ogham_ir::op::BinOp;
use ogham_ir::source::Span;
use ogham_ir::traverse::{NestedMut, nested_bodies_mut};
use ogham_ir::types::PrimType;
use ogham_ir::{
    Body, Const, DimIndex, Exp, Function, Lambda, RedOp, Soac, Stmt, SubExp, Type, VarId,
};
use std::collections::{HashMap, HashSet};

/// Narrows every guarded reduction of the program's thread-level kernels.
pub fn narrow(program: &mut Program) {
    for f in &mut program.functions {
        let mut body = std::mem::take(&mut f.body);
        let iotas = iota_views(&body);
        let mut pass = Narrow { f, iotas };
        pass.host_body(&mut body);
        f.body = body;
    }
}

struct Narrow<'f> {
    f: &'f mut Function<HostOp>,
    iotas: HashMap<VarId, IotaView>,
}

/// A leading conjunct's bound on the index: `index >= value (+1)` or `index < value (+1)`.
#[derive(Clone, Copy)]
struct Bound {
    lower: bool,
    value: SubExp,
    plus_one: bool,
}

impl Narrow<'_> {
    fn host_body(&mut self, body: &mut ogham_ir::kir::HostBody) {
        for stmt in &mut body.stmts {
            if let Exp::Host(HostOp::Seg(seg)) = &mut stmt.exp {
                if seg.level == SegLevel::Thread {
                    self.kernel_body(&mut seg.body);
                }
                continue;
            }
            for nested in nested_bodies_mut(&mut stmt.exp) {
                if let NestedMut::Host(b) = nested {
                    self.host_body(b);
                }
            }
        }
    }

    fn kernel_body(&mut self, body: &mut Body) {
        let mut out = Vec::with_capacity(body.stmts.len());
        for mut stmt in std::mem::take(&mut body.stmts) {
            for nested in nested_bodies_mut(&mut stmt.exp) {
                self.kernel_body(nested.body());
            }
            if let Some(prefix) = self.narrow_stmt(&mut stmt) {
                out.extend(prefix);
            }
            out.push(stmt);
        }
        body.stmts = out;
    }

    /// Narrows `stmt` if it has the shape of the header: the statements computing the range,
    /// to place before it.
    fn narrow_stmt(&mut self, stmt: &mut Stmt) -> Option<Vec<Stmt>> {
        let Exp::Soac(Soac::Screma {
            width,
            inputs,
            map,
            scans,
            reds,
        }) = &mut stmt.exp
        else {
            return None;
        };
        let ([red], true, 1) = (&reds[..], scans.is_empty(), stmt.pat.len()) else {
            return None;
        };
        let ne = *red.neutral.first().filter(|_| red.neutral.len() == 1)?;
        if !exact_addition(red, ne) {
            return None;
        }
        let k = inputs
            .iter()
            .position(|a| self.iotas.get(a).is_some_and(|v| v.is_iota_of(*width)))?;
        let bounds = guard_bounds(map, map.params[k], ne)?;
        let types: Vec<(PrimType, Vec<SubExp>)> = inputs
            .iter()
            .map(|a| match self.f.ty(*a) {
                Type::Array { elem, shape } => Some((*elem, shape.clone())),
                Type::Prim(_) => None,
            })
            .collect::<Option<_>>()?;
        let loc = stmt.loc;
        let (mut prefix, lo, len) = self.range(&bounds, *width, loc);
        for (input, (elem, mut shape)) in inputs.iter_mut().zip(types) {
            shape[0] = len;
            let name = format!("{}_narrowed", self.f.var(*input).name);
            let sliced = self.f.new_var(name, Type::Array { elem, shape });
            let slice = DimIndex::Slice {
                start: lo,
                len,
                stride: SubExp::i64(1),
            };
            prefix.push(Stmt {
                pat: vec![sliced],
                exp: Exp::Index(*input, vec![slice]),
                loc,
            });
            *input = sliced;
        }
        *width = len;
        let conjuncts: HashSet<VarId> = bounds.iter().map(|(v, _)| *v).collect();
        set_true(&mut map.body, &conjuncts);
        Some(prefix)
    }

    /// The statements computing `lo` and `len` of the range the bounds leave of `[0, w)`.
    fn range(
        &mut self,
        bounds: &[(VarId, Bound)],
        w: SubExp,
        loc: Span,
    ) -> (Vec<Stmt>, SubExp, SubExp) {
        let mut stmts = Vec::new();
        let mut emit = |f: &mut Function<HostOp>, name: &str, exp: Exp| {
            let v = f.new_var(name, Type::Prim(PrimType::I64));
            stmts.push(Stmt {
                pat: vec![v],
                exp,
                loc,
            });
            SubExp::Var(v)
        };
        let math = |m: MathFn, a: SubExp, b: SubExp| Exp::Math(m, PrimType::I64, vec![a, b]);
        let (mut lo, mut hi) = (SubExp::i64(0), w);
        for (_, b) in bounds {
            // The value clamped to [-1, w], then +1 if asked: in [-1, w + 1], no overflow.
            let low = emit(self.f, "bound", math(MathFn::Max, b.value, SubExp::i64(-1)));
            let mut v = emit(self.f, "bound", math(MathFn::Min, low, w));
            if b.plus_one {
                v = emit(self.f, "bound", Exp::BinOp(BinOp::Add, v, SubExp::i64(1)));
            }
            if b.lower {
                lo = emit(self.f, "lo", math(MathFn::Max, lo, v));
            } else {
                hi = emit(self.f, "hi", math(MathFn::Min, hi, v));
            }
        }
        let lo = emit(self.f, "lo", math(MathFn::Min, lo, w));
        let hi = emit(self.f, "hi", math(MathFn::Max, hi, lo));
        let len = emit(self.f, "len", Exp::BinOp(BinOp::Sub, hi, lo));
        (stmts, lo, len)
    }
}

/// Whether the reduction is `a + b` (either order) at a type where skipping `ne` is exact.
fn exact_addition(red: &RedOp, ne: SubExp) -> bool {
    let zero = match ne {
        SubExp::Const(c) => match c {
            Const::I8(0) | Const::I16(0) | Const::I32(0) | Const::I64(0) | Const::U8(0) => true,
            Const::F32(x) => x == 0.0,
            Const::F64(x) => x == 0.0,
            _ => false,
        },
        SubExp::Var(_) => false,
    };
    zero && red.lambda.is_addition()
}

/// The leading index bounds of the map's guard, with the variables their conjuncts bind, if
/// the map has the shape of the header.
fn guard_bounds(map: &Lambda, index: VarId, ne: SubExp) -> Option<Vec<(VarId, Bound)>> {
    let body = &map.body;
    let (last, before) = body.stmts.split_last()?;
    let Exp::If {
        cond: SubExp::Var(guard),
        else_body,
        ..
    } = &last.exp
    else {
        return None;
    };
    let ok = body.result == [SubExp::Var(*last.pat.first()?)]
        && last.pat.len() == 1
        && else_body.stmts.is_empty()
        && else_body.result == [ne];
    if !ok {
        return None;
    }
    let inner = bound_vars(map);
    let chain = Conjunction::of(*guard, before);
    let mut bounds: Vec<(VarId, Bound)> = chain
        .leaves
        .iter()
        .map_while(|&(v, exp)| Some((v, bound(exp?, index, &inner)?)))
        .collect();
    // The most leading bounds before which nothing that can fail runs.
    let k = (1..=bounds.len())
        .rev()
        .find(|&k| fails_only_in_range(&chain, before, k))?;
    bounds.truncate(k);
    Some(bounds)
}

/// Whether every statement that can fail runs only when the first `k` leaves of the guard's
/// `chain` hold (so only inside the narrowed range): the statements `before` the guarded `if`
/// and those of the chain's `then` branches entered before all `k` are known cannot fail (the
/// chain's own `if`s are judged by their branches).
fn fails_only_in_range(chain: &Conjunction, before: &[Stmt], k: usize) -> bool {
    let is_if = |s: &Stmt| matches!(s.pat[..], [v] if chain.ifs.iter().any(|i| i.0 == v));
    let unguarded = before.iter().filter(|s| !is_if(s));
    let early = chain
        .ifs
        .iter()
        .filter(|(_, _, known)| *known < k)
        .flat_map(|(_, stmts, _)| stmts.iter().filter(|s| !is_if(s)));
    unguarded.chain(early).all(|s| s.exp.cannot_fail())
}

/// The bound a comparison of `index` with a value bound outside the map puts on the index.
fn bound(exp: &Exp, index: VarId, inner: &HashSet<VarId>) -> Option<Bound> {
    let Exp::BinOp(op, a, b) = exp else {
        return None;
    };
    let outside = |s: &SubExp| match s {
        SubExp::Var(v) => !inner.contains(v),
        SubExp::Const(c) => matches!(c, Const::I64(_)),
    };
    // Normalise to `index OP value`.
    let (op, value) = if *a == SubExp::Var(index) && outside(b) {
        (*op, *b)
    } else if *b == SubExp::Var(index) && outside(a) {
        let flipped = match op {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            _ => return None,
        };
        (flipped, *a)
    } else {
        return None;
    };
    let (lower, plus_one) = match op {
        BinOp::Ge => (true, false),
        BinOp::Gt => (true, true),
        BinOp::Lt => (false, false),
        BinOp::Le => (false, true),
        _ => return None,
    };
    Some(Bound {
        lower,
        value,
        plus_one,
    })
}

/// Every variable bound inside the map (its parameters and every statement's at any depth).
fn bound_vars(map: &Lambda) -> HashSet<VarId> {
    let mut inner: HashSet<VarId> = map.params.iter().copied().collect();
    ogham_ir::traverse::for_each_stmt(&map.body, &mut |s: &Stmt| inner.extend(&s.pat));
    inner
}

/// Rebinds the conjuncts `vars` (defined anywhere in `body`) to `true`.
fn set_true(body: &mut Body, vars: &HashSet<VarId>) {
    for stmt in &mut body.stmts {
        if let [v] = stmt.pat[..]
            && vars.contains(&v)
        {
            stmt.exp = Exp::SubExp(SubExp::Const(Const::Bool(true)));
            continue;
        }
        for nested in nested_bodies_mut(&mut stmt.exp) {
            set_true(nested.body(), vars);
        }
    }
}
