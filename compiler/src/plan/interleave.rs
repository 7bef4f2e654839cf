//! `interleave` (kernel IR): plans interleaved reductions ([`Plan::Interleave`], printed
//! `@interleave`) for a sequential map whose lambda computes one reduction between flat
//! statements: several iterations of the map then run together, their reductions sharing one
//! loop with one accumulator per iteration, so that the additions of different iterations
//! overlap instead of forming one dependency chain each. Matrix–vector products
//! (`map (\c -> dot r c) cs`), the rows of Gram matrices and the residuals of a fit are typical
//! examples. Runs after `jam`, on the statements `jam` did not plan (the inner map of a jammed
//! statement is one of them: its outer iterations left over run it).
//!
//! The shape ([`shape`]), on a `Screma` statement of a kernel's body (at any depth: the CPU
//! backend runs every SOAC inside a kernel as a loop):
//! - the map has no scans or reductions of its own and returns scalars;
//! - its lambda's body is: statements without nested bodies (no SOAC, loop or `if`), one
//!   `Screma` with reductions only (no scans, no mapped outputs, scalar accumulators, a lambda
//!   that allocates nothing) whose width is not bound by the lambda (it is the same in every
//!   iteration), and more statements without nested bodies, at most [`MAX_STATEMENTS`] around
//!   the reduction in all (each is emitted once per interleaved iteration).
//!
//! Near misses that stay unplanned: a loop (or any nested body) among the statements around the
//! reduction, an accumulator that is an array, the reduction's width bound by the lambda, a map
//! that returns an array.
//!
//! The same plan covers a map whose lambda computes one *fold loop* in place of the reduction
//! ([`fold`]): a `for i < n` loop with scalar parameters whose bound is not bound by the lambda,
//! whose body is made of scalar statements that cannot have effects (arithmetic, conversions,
//! math functions, reads of one element) and `if`s with scalar results of such statements, at
//! most [`MAX_STATEMENTS`] in all, nested ones included: the masked sums of a fit written as
//! loops, `map (\b -> loop s = 0 for i < n do if kept[i] then s + x[i, a] * x[i, b] else s)`.
//! Its iterations then share one loop over `i` too, each with its own parameters.
//!
//! A map whose lambda is such a map of fold loops, whose results it returns, after statements
//! that do not depend on the outer iteration ([`nested`]: the masked Gram matrix
//! `map (\a -> map (\b -> loop …) (iota p)) (iota p)`) is planned too: the CPU then runs each
//! row's iterations in blocks, then the column left over in blocks down the rows, so that no
//! row leaves an iteration to run alone (with `p = 5`, one of 25 instead of one per row, each in
//! a loop of its own whose branches the processor predicts worse than the blocks').
//!
//! The plan does not depend on the machine or the environment. The CPU code generator
//! (`back/cpu/interleave.rs`) decides at emission whether the shared loop runs in vector lanes
//! (`lanedot.rs`: vectors available, a reduction of [`super::dot`]'s shape) and tests at run
//! time whether the iterations' rows are adjacent for it.
//!
//! CUDA: a thread of a CUDA kernel runs such a map as a loop too, and the CUDA code generator
//! follows the plan the same way (`back/cuda/interleave.rs`: four iterations' accumulators in
//! one loop, for instruction-level parallelism within the thread; scalar code, no lanes). Maps
//! of fold loops, and maps of them, it runs one iteration after the other (its matcher is
//! [`shape`]; the CPU's are [`shape_or_fold`] and [`nested`]): interleaving them is not written
//! for CUDA, nor measured on a GPU.

use ogham_ir::kir::{Function, Plan, Program};
use ogham_ir::traverse::free_vars_stmt;
use ogham_ir::{Body, Exp, Lambda, LoopForm, RedOp, Soac, Stmt, SubExp, VarId};
use std::collections::BTreeSet;

/// The most statements the lambda may have around its reduction (they are emitted once per
/// interleaved iteration). PtSel's window map (`lib/insar.og`, `ptsel_rank_wp`) has 28: the
/// clamped neighbour, the canonical orientation by arithmetic, four row reads, then the
/// coherence's modulus.
pub const MAX_STATEMENTS: usize = 32;

/// Plans every statement of the shape in every kernel of `program` that has no plan yet.
pub fn run(program: &mut Program) {
    super::plan_statements(program, &|f, stmt| match &stmt.exp {
        Exp::Soac(soac) => (shape_or_fold(f, soac).is_some() || nested(f, soac).is_some())
            .then_some(Plan::Interleave),
        _ => None,
    });
}

/// A map lambda split around its reduction (or its fold loop, for [`fold`]).
pub struct Shape<'a> {
    /// The map's lambda.
    pub map: &'a Lambda,
    /// The statements before the reduction.
    pub before: &'a [Stmt],
    /// The reduction.
    pub reduction: &'a Stmt,
    /// The statements after the reduction.
    pub after: &'a [Stmt],
    /// The variables the iterations bind before the reduction (parameters included).
    pub bound: Vec<VarId>,
    /// Those the reduction reads.
    pub read_in_loop: Vec<VarId>,
}

/// The pieces of a fold loop (see [`fold`]).
pub struct FoldLoop<'a> {
    /// The loop's parameters and their initial values.
    pub params: &'a [(VarId, SubExp)],
    /// The loop's index.
    pub index: VarId,
    /// The number of iterations.
    pub bound: SubExp,
    /// The loop's body (statements [`folds`] accepts).
    pub body: &'a Body,
}

impl Shape<'_> {
    /// The fold loop of a shape [`fold`] made (`None` for [`shape`]'s).
    pub fn fold_loop(&self) -> Option<FoldLoop<'_>> {
        match &self.reduction.exp {
            Exp::Loop {
                params,
                form: LoopForm::For { index, bound },
                body,
            } => Some(FoldLoop {
                params,
                index: *index,
                bound: *bound,
                body,
            }),
            _ => None,
        }
    }

    /// The reduction's width, inputs, map lambda and operators.
    pub fn screma(&self) -> (&SubExp, &[VarId], &Lambda, &[RedOp]) {
        let Exp::Soac(Soac::Screma {
            width,
            inputs,
            map,
            reds,
            ..
        }) = &self.reduction.exp
        else {
            unreachable!("the shape's reduction is a Screma");
        };
        (width, inputs, map, reds)
    }
}

/// The split of `soac`'s lambda (a statement's SOAC in `f`) when it has the module's shape.
pub fn shape<'a>(f: &Function, soac: &'a Soac) -> Option<Shape<'a>> {
    let split = split(f, soac, |s| matches!(s.exp, Exp::Soac(_)))?;
    let Exp::Soac(Soac::Screma {
        width,
        map: inner,
        scans,
        reds,
        ..
    }) = &split.reduction.exp
    else {
        return None;
    };
    let components: usize = reds.iter().map(|r| r.neutral.len()).sum();
    let scalar_accumulators = reds
        .iter()
        .flat_map(|r| &r.neutral)
        .all(|n| f.subexp_type(*n).rank() == 0);
    if !scans.is_empty()
        || reds.is_empty()
        || inner.ret.len() != components
        || !scalar_accumulators
        || super::allocates(&inner.body)
    {
        return None;
    }
    if let SubExp::Var(w) = width
        && split.bound.contains(w)
    {
        return None;
    }
    Some(split)
}

/// A map of maps of fold loops (see [`nested`]).
pub struct Nested<'a> {
    /// The outer map's lambda: statements that do not read its parameters (an `iota` of the
    /// inner width), then the inner map, whose results it returns.
    pub outer: &'a Lambda,
    /// The statements before the inner map.
    pub leading: &'a [Stmt],
    /// The inner map's width (the same in every outer iteration).
    pub inner_width: SubExp,
    /// The inner map's inputs (arrays of that width, not the outer lambda's parameters).
    pub inner_inputs: &'a [VarId],
    /// The inner map's split by [`fold`], whose `bound` and `read_in_loop` also hold the outer
    /// lambda's parameters (they differ between the iterations of the map of maps).
    pub inner: Shape<'a>,
}

/// The pieces of `soac` when it is a map whose lambda is a map of fold loops ([`fold`]), after
/// at most [`MAX_STATEMENTS`] statements without nested bodies that do not read the lambda's
/// parameters, and returns that map's results; the inner map's width bound outside the lambda,
/// its inputs and the fold loop's bound not its parameters:
/// `map (\a -> map (\b -> loop s = 0 for i < n do …) (iota p)) (iota p)`, the masked Gram
/// matrix of a fit. The CPU then runs its iterations by rows and columns
/// (`back/cpu/interleave.rs`), so that no iteration of a row is left to run alone.
pub fn nested<'a>(f: &Function, soac: &'a Soac) -> Option<Nested<'a>> {
    let outer = super::map_only(soac)?;
    let (stmt, leading) = outer.body.stmts.split_last()?;
    let invariant = |s: &Stmt| {
        flat(s)
            && !free_vars_stmt(f, s)
                .iter()
                .any(|v| outer.params.contains(v))
    };
    if leading.len() > MAX_STATEMENTS || !leading.iter().all(invariant) {
        return None;
    }
    let leading_bound = |v: &VarId| leading.iter().any(|s| s.pat.contains(v));
    let Exp::Soac(inner_soac @ Soac::Screma { width, inputs, .. }) = &stmt.exp else {
        return None;
    };
    let returned = outer.body.result.len() == stmt.pat.len()
        && (outer.body.result.iter())
            .zip(&stmt.pat)
            .all(|(r, v)| *r == SubExp::Var(*v));
    let mut inner = fold(f, inner_soac)?;
    let fold_bound = inner.fold_loop()?.bound;
    let param = |e: &SubExp| matches!(e, SubExp::Var(v) if outer.params.contains(v));
    let inputs_outside = inputs.iter().all(|v| !outer.params.contains(v));
    let width_outside = !param(width) && !matches!(width, SubExp::Var(w) if leading_bound(w));
    if !returned || !inputs_outside || !width_outside || param(&fold_bound) {
        return None;
    }
    let free = free_vars_stmt(f, inner.reduction);
    let read_outer = outer.params.iter().filter(|v| free.contains(v));
    inner.read_in_loop.extend(read_outer);
    inner.bound.extend(outer.params.iter().copied());
    Some(Nested {
        outer,
        leading,
        inner_width: *width,
        inner_inputs: inputs,
        inner,
    })
}

/// The split of `soac`'s lambda by [`shape`] or else by [`fold`].
pub fn shape_or_fold<'a>(f: &Function, soac: &'a Soac) -> Option<Shape<'a>> {
    shape(f, soac).or_else(|| fold(f, soac))
}

/// The split of `soac`'s lambda when it has the fold-loop shape of the module's header: one
/// `for` loop with scalar parameters, whose bound the lambda does not bind, and whose body has
/// only statements [`folds`] accepts.
pub fn fold<'a>(f: &Function, soac: &'a Soac) -> Option<Shape<'a>> {
    let split = split(f, soac, |s| matches!(s.exp, Exp::Loop { .. }))?;
    let Exp::Loop {
        params,
        form: LoopForm::For { bound, .. },
        body,
    } = &split.reduction.exp
    else {
        return None;
    };
    let scalar_params = params.iter().all(|(p, _)| f.ty(*p).rank() == 0);
    let unbound = match bound {
        SubExp::Var(b) => !split.bound.contains(b),
        SubExp::Const(_) => true,
    };
    let mut budget = MAX_STATEMENTS;
    (scalar_params && unbound && folds(f, body, &mut budget)).then_some(split)
}

/// Whether every statement of `body` (nested ones included, at most `budget` in all) is a
/// scalar operation without effects or a read of one element, or an `if` with scalar results
/// whose branches are such statements.
fn folds(f: &Function, body: &Body, budget: &mut usize) -> bool {
    super::scalar_statements(body, budget, &|stmt| match &stmt.exp {
        Exp::SubExp(_) | Exp::UnOp(..) | Exp::BinOp(..) | Exp::Math(..) | Exp::Convert(..) => true,
        Exp::Index(..) => stmt.pat.iter().all(|v| f.ty(*v).rank() == 0),
        _ => false,
    })
}

/// The split of the lambda of map `soac` (scalar results) around its one statement that
/// `nested` accepts, with at most [`MAX_STATEMENTS`] statements without nested bodies around it.
fn split<'a>(f: &Function, soac: &'a Soac, nested: fn(&Stmt) -> bool) -> Option<Shape<'a>> {
    let map = super::map_only(soac)?;
    if map.ret.iter().any(|t| t.rank() > 0) {
        return None;
    }
    let stmts = &map.body.stmts;
    let at = stmts.iter().position(nested)?;
    let (before, rest) = stmts.split_at(at);
    let (reduction, after) = rest.split_first()?;
    if before.len() + after.len() > MAX_STATEMENTS || !before.iter().chain(after).all(flat) {
        return None;
    }
    let mut bound: Vec<VarId> = map.params.clone();
    bound.extend(before.iter().flat_map(|s| s.pat.iter().copied()));
    let free: BTreeSet<VarId> = free_vars_stmt(f, reduction);
    let read_in_loop = bound.iter().copied().filter(|v| free.contains(v)).collect();
    Some(Shape {
        map,
        before,
        reduction,
        after,
        bound,
        read_in_loop,
    })
}

/// Whether `stmt` has no nested body (no SOAC, loop or `if`).
fn flat(stmt: &Stmt) -> bool {
    !matches!(stmt.exp, Exp::Soac(_) | Exp::Loop { .. } | Exp::If { .. })
}
