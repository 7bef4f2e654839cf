//! `jam` (kernel IR): plans unroll-and-jam ([`Plan::Jam`], printed `@jam`) for a sequential map
//! whose lambda is one map of one sum of lanewise products over a shared matrix: the outer map
//! then runs several of its iterations together, so that each step of the shared reduction loop
//! loads the inner map's elements once for all of them. `map (\c -> map (\d -> dot c d) ds) cs`
//! (a product `A·Bᵀ`, the Gram matrix of the library's `gram_cols`) is the typical example.
//!
//! The shape ([`shape`]), on a `Screma` statement of a kernel's body (at any depth: the CPU
//! backend runs every SOAC inside a kernel as a loop):
//! - the outer map has no scans or reductions of its own, and its lambda's body is one
//!   map-only `Screma` (the inner map) whose one array is the lambda's only result;
//! - the inner map's width and inputs do not depend on the outer lambda's parameters (they are
//!   the shared matrix, the same in every outer iteration);
//! - the inner lambda's body is one reduction (no scans, one result, the inner lambda's
//!   result) whose width depends on neither lambda's parameters, and which has the lane-dot
//!   shape of [`super::dot`] with the inner lambda's parameters as its varying inputs, all of
//!   them rows of the inner map's inputs;
//! - at least one input of the reduction is a parameter of the outer lambda (*jammed*: a row
//!   that changes with the outer iteration); the others are bound outside both maps.
//!
//! Near misses that stay unplanned: an inner width or input that depends on the outer
//! parameter, a scan instead of the reduction, an operator other than `+`, no jammed input.
//!
//! The plan does not depend on the machine or the environment: whether vectors are available
//! (`OGHAM_SIMD`) and whether the inner map's rows are adjacent at run time (its inputs are
//! `transpose a` of a row-major `a`) are tested by the CPU code generator (`back/cpu/jam.rs`),
//! which emits the statement plainly otherwise.
//!
//! CUDA: a thread of a CUDA kernel runs such a map as a loop too, and the CUDA code generator
//! follows the plan with register tiles (`back/cuda/jam.rs`: four outer by four inner
//! iterations per pass over the reduction, sharing each row's loads across the tile).

use super::dot::{self, Dot};
use ogham_ir::kir::{Function, Plan, Program};
use ogham_ir::{Exp, Lambda, Soac, Stmt, SubExp, VarId};

/// Plans every statement of the shape in every kernel of `program`.
pub fn run(program: &mut Program) {
    super::plan_statements(program, &|f, stmt| match &stmt.exp {
        Exp::Soac(soac) => shape(f, soac).map(|_| Plan::Jam),
        _ => None,
    });
}

/// The pieces of a statement of the module's shape.
pub struct Shape<'a> {
    /// The inner map (the outer lambda's only statement).
    pub inner: &'a Stmt,
    /// The reduction (the inner lambda's only statement).
    pub reduction: &'a Stmt,
    /// The reduction's lane-dot shape.
    pub dot: Dot,
    /// Per input of the reduction: the position of the outer lambda's parameter it is.
    pub jammed: Vec<Option<usize>>,
}

impl Shape<'_> {
    /// The inner map's SOAC and lambda.
    pub fn inner(&self) -> (&Soac, &Lambda) {
        match &self.inner.exp {
            Exp::Soac(soac @ Soac::Screma { map, .. }) => (soac, map),
            _ => unreachable!("the shape's inner map is a Screma"),
        }
    }

    /// The reduction's width, inputs, map lambda and neutral element.
    pub fn reduction(&self) -> (SubExp, &[VarId], &Lambda, SubExp) {
        match &self.reduction.exp {
            Exp::Soac(Soac::Screma {
                width,
                inputs,
                map,
                reds,
                ..
            }) => (*width, inputs, map, reds[0].neutral[0]),
            _ => unreachable!("the shape's reduction is a Screma"),
        }
    }

    /// The reduction's operator (a `+`, by the lane-dot shape).
    pub fn operator(&self) -> &Lambda {
        match &self.reduction.exp {
            Exp::Soac(Soac::Screma { reds, .. }) => &reds[0].lambda,
            _ => unreachable!("the shape's reduction is a Screma"),
        }
    }
}

/// The pieces of `soac` (a statement's SOAC in `f`) when it has the module's shape.
pub fn shape<'a>(f: &Function, soac: &'a Soac) -> Option<Shape<'a>> {
    let map = super::map_only(soac)?;
    let [inner] = map.body.stmts.as_slice() else {
        return None;
    };
    let Exp::Soac(Soac::Screma {
        width,
        inputs,
        map: inner_map,
        scans: inner_scans,
        reds: inner_reds,
    }) = &inner.exp
    else {
        return None;
    };
    let outer = |se: &SubExp| matches!(se, SubExp::Var(v) if map.params.contains(v));
    if !inner_scans.is_empty()
        || !inner_reds.is_empty()
        || inner.pat.len() != 1
        || map.body.result != [SubExp::Var(inner.pat[0])]
        || outer(width)
        || inputs.iter().any(|v| outer(&SubExp::Var(*v)))
    {
        return None;
    }
    let [reduction] = inner_map.body.stmts.as_slice() else {
        return None;
    };
    let Exp::Soac(Soac::Screma {
        width: k,
        inputs: red_inputs,
        map: red_map,
        scans,
        reds,
    }) = &reduction.exp
    else {
        return None;
    };
    let bound_inside = matches!(k, SubExp::Var(v) if inner_map.params.contains(v));
    if !scans.is_empty()
        || reduction.pat.len() != 1
        || inner_map.body.result != [SubExp::Var(reduction.pat[0])]
        || outer(k)
        || bound_inside
    {
        return None;
    }
    let reduction_parts = (red_inputs.as_slice(), red_map, reds.as_slice());
    let dot = dot::shape(f, inner_map, reduction_parts, &inner_map.params)?;
    let jammed: Vec<Option<usize>> = red_inputs
        .iter()
        .map(|v| map.params.iter().position(|p| p == v))
        .collect();
    if !dot.shared_strides() || jammed.iter().all(Option::is_none) {
        return None;
    }
    Some(Shape {
        inner,
        reduction,
        dot,
        jammed,
    })
}
