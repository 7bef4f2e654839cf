//! The shape of a *lane dot*: a reduction that a code generator can run in the lanes of vectors,
//! one lane per iteration of the map around it. `jam` plans with it; the CPU code generator
//! recovers it from planned statements (`jam.rs`) and from interleaved ones (`interleave.rs`,
//! `lanedot.rs`, which add the run-time tests and the vector code).
//!
//! The shape ([`shape`]): inside the lambda of a map, a reduction with
//! - a single `+` on `f32` or `f64` (the operator `\x y -> x + y`, accumulator first), one
//!   component;
//! - a map lambda that is a chain of float `+`, `-`, `*`, `/` of its parameters and constants of
//!   the element type (lanewise operations that round exactly as their scalar forms), returning
//!   one value;
//! - inputs of the element type, each either bound by the map's iteration (*varying*: a
//!   parameter of the map's lambda or a variable its statements bind before the reduction) or
//!   bound outside the map (*uniform*, the same row in every iteration), at least one varying.
//!
//! `matvec`-like sums of products (`reduce (+) 0 (map2 (*) r c)` in a map over `c`) are the
//! typical example. Invariant relied on: every variable is bound once, so "bound by the
//! iteration" is a question of which list a variable is in.

use ogham_ir::kir::Function;
use ogham_ir::op::BinOp;
use ogham_ir::types::PrimType;
use ogham_ir::{Exp, Lambda, RedOp, SubExp, VarId};

/// A reduction of the lane-dot shape.
#[derive(Clone)]
pub struct Dot {
    elem: PrimType,
    /// Per input of the reduction: whether it varies with the map's iteration.
    varying: Vec<bool>,
    /// The first varying input.
    first: usize,
    /// Whether every varying input is a parameter of the map's lambda (a row of the map's
    /// inputs, so with the same strides in every iteration).
    shared_strides: bool,
}

impl Dot {
    /// The element type of the sum (`f32` or `f64`).
    pub fn elem(&self) -> PrimType {
        self.elem
    }

    /// Per input of the reduction: whether it varies with the map's iteration.
    pub fn varying(&self) -> &[bool] {
        &self.varying
    }

    /// The position of the first varying input.
    pub fn first(&self) -> usize {
        self.first
    }

    /// Whether every varying input is a parameter of the map's lambda.
    pub fn shared_strides(&self) -> bool {
        self.shared_strides
    }
}

/// The lane-dot shape of a reduction (of `inputs`, map lambda `inner`, operators `reds`, no
/// scans) in `map`'s lambda (`bound`: the variables its iterations bind before the reduction,
/// its parameters included), when it has the module's shape.
pub fn shape(
    f: &Function,
    map: &Lambda,
    (inputs, inner, reds): (&[VarId], &Lambda, &[RedOp]),
    bound: &[VarId],
) -> Option<Dot> {
    let [red] = reds else {
        return None;
    };
    let [neutral] = red.neutral.as_slice() else {
        return None;
    };
    let elem = f.subexp_type(*neutral).elem();
    if !matches!(elem, PrimType::F32 | PrimType::F64) || !is_sum(&red.lambda) {
        return None;
    }
    let arith = |se: &SubExp, known: &[VarId]| match se {
        SubExp::Var(v) => known.contains(v),
        SubExp::Const(c) => c.prim_type() == elem,
    };
    let mut known = inner.params.clone();
    for s in &inner.body.stmts {
        let (Exp::BinOp(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, a, b), [v]) =
            (&s.exp, s.pat.as_slice())
        else {
            return None;
        };
        if !arith(a, &known) || !arith(b, &known) {
            return None;
        }
        known.push(*v);
    }
    let typed = |v: &VarId| f.ty(*v).elem() == elem;
    let [result] = inner.body.result.as_slice() else {
        return None;
    };
    if !inner.params.iter().all(typed) || !inputs.iter().all(typed) || !arith(result, &known) {
        return None;
    }
    // A varying input is bound by the iteration: a row of the map's inputs, or an array its
    // statements before the reduction bind (a gathered row).
    let varying: Vec<bool> = inputs.iter().map(|v| bound.contains(v)).collect();
    let first = varying.iter().position(|&v| v)?;
    let shared_strides = inputs
        .iter()
        .all(|v| !bound.contains(v) || map.params.contains(v));
    Some(Dot {
        elem,
        varying,
        first,
        shared_strides,
    })
}

/// Whether a reduction operator is `\x y -> x + y`.
fn is_sum(op: &Lambda) -> bool {
    let ([x, y], [s]) = (op.params.as_slice(), op.body.stmts.as_slice()) else {
        return false;
    };
    matches!(&s.exp, Exp::BinOp(BinOp::Add, SubExp::Var(a), SubExp::Var(b)) if a == x && b == y)
        && op.body.result == [SubExp::Var(s.pat[0])]
}
