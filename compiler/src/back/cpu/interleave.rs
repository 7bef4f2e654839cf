//! Interleaved reductions, planned by the `interleave` pass (`crate::plan::interleave`,
//! `@interleave`: a map whose lambda computes one reduction between flat statements, e.g.
//! `map (\c -> dot r c) cs`): runs [`LANES`] of the map's iterations together. Their statements
//! before the reduction are emitted once per iteration, then a single loop over the reduction's
//! width carries one accumulator per iteration, then their statements after it. The additions
//! of different iterations overlap in the processor instead of forming one dependency chain per
//! iteration, and each accumulator still adds its own terms in order, so the results are
//! bit-identical. The iterations left over (`width % LANES`) run one by one
//! (`crate::back::lower::sequential`).
//!
//! A map of *fold loops* (the pass's [`crate::plan::interleave::fold`]: a `for` loop with scalar
//! parameters in place of the reduction) runs the same way, with the loops' parameters in place
//! of the accumulators: one loop over the fold loop's iterations runs its body for each of the
//! map's iterations statement by statement ([`fold_body`]). A statement that reads nothing that
//! differs between the iterations (the mask `kept[i]` of a masked sum, a column of the shared
//! matrix) is emitted once for all, and an `if` on such a condition is one branch for all, so
//! the iterations share its prediction and each runs its own statements of the branch taken.
//! It stays a branch even where `lower.rs` would select a cheap `if`'s arms by masks: the
//! blocks of a Gram matrix replay one mask many times, which the processor learns to predict,
//! and the masks' operations cost more than the few mispredictions (BENCHMARKS.md, "Cheap ifs
//! selected by masks").
//! Each iteration still performs its own operations in its own order: the results are
//! bit-identical. No vector lanes here.
//!
//! Emission follows the plan (the pieces of a planned statement are recovered with the pass's
//! matcher; a statement that does not match is emitted plainly). What stays here is not the
//! program's to decide: where the reduction has the lane-dot shape and vectors are available
//! (`lanedot.rs`; `OGHAM_SIMD`, the machine), and the interleaved iterations' rows are adjacent
//! in memory (known only at run time), the shared loop runs in the lanes of vectors instead;
//! then blocks of two vectors' worth of iterations (8 for `f32`, 4 for `f64`) run first, so that
//! the vectors share the loop and the loads of the uniform inputs, and one block of [`LANES`]
//! follows when that many iterations are left.
//!
//! Invariants relied on: every variable is bound once, so the statements of the interleaved
//! iterations can be emitted one after the other, each iteration's values captured (as
//! Cranelift values, which dominate the shared loop) and bound again before its part of the
//! shared loop and its statements after it. Checks of the interleaved iterations run in a
//! different order than one iteration after the other: when several fail, the one reported may
//! differ from the interpreter's first (each is a real failure, reported with its location).

use super::codegen::{Cursor, Gen, Res, View, clif_type};
use super::lanedot;
use crate::back::lower;
use crate::plan::interleave::{FoldLoop, Nested, Shape};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::Variable;
use ogham_ir::traverse::free_vars_stmt;
use ogham_ir::{Body, Exp, Lambda, SubExp, VarId};
use std::collections::HashSet;

/// How many iterations run together (enough to cover the latency of a float addition), at
/// least (see [`emit`]), where their rows fit in registers ([`iterations`]).
pub const LANES: i64 = 4;

/// The most rows of their own the interleaved iterations of the scalar shared loop walk
/// together: each is a pointer the loop advances, and x86-64 has 16 general registers for them,
/// the rows the iterations share, the counter, the bound and the addresses. Eight keep four
/// iterations of a dot product with a shared vector (one row each), or of a Gram product's
/// masked rows (`bfast_kernels.og`), together; PtSel's arc coherence reads four rows of its own
/// per iteration (the real and imaginary parts of both ends), and four of its iterations took
/// 1.9 times as long as one at a time, every row pointer and accumulator reloaded from the stack
/// in every step, where two at a time take 0.94 times as long (`BENCHMARKS.md`, session 37).
const MAX_ROWS: i64 = 8;

/// How many iterations the scalar shared loop runs together: [`LANES`], or 2 when [`LANES`]
/// iterations would walk more than [`MAX_ROWS`] rows of their own; 1 (no interleaving) when even
/// two would.
fn iterations(rows_per_iteration: usize) -> i64 {
    let rows = rows_per_iteration.max(1) as i64;
    [LANES, 2]
        .into_iter()
        .find(|w| w * rows <= MAX_ROWS)
        .unwrap_or(1)
}

/// Emits the map's iterations `0 .. w·⌊width/w⌋` interleaved, `w` at a time, writing each
/// iteration's results to row `i` of `arrays` (its inputs' rows are `cursors`' rows `i`). `w` is
/// [`LANES`], or where the reduction runs in vector lanes (`lanedot.rs`) the iterations of two
/// vectors, with one block of [`LANES`] after them when that many are left; for a map of fold
/// loops, blocks of [`LANES`] then one of two when two are left. Returns the first iteration
/// left to run.
pub fn emit(
    g: &mut Gen,
    plan: &Shape,
    width: Value,
    cursors: &[Cursor],
    arrays: &[View],
) -> Res<Value> {
    let mut start = g.iconst(0);
    let rows = Rows::Map(cursors, arrays);
    if plan.fold_loop().is_some() {
        // No vector lanes; the rows the iterations read in the loop are their own. Blocks of
        // four, then of two for two iterations left over.
        let own_rows = (plan.read_in_loop.iter())
            .filter(|v| g.f.ty(**v).rank() > 0)
            .count();
        let mut w = iterations(own_rows);
        while w > 1 {
            start = blocks(g, plan, (start, width), w, &rows, None)?;
            w /= 2;
        }
        return Ok(start);
    }
    let (_, inputs, inner, reds) = plan.screma();
    let vector = lanedot::plan(g, plan.map, (inputs, inner, reds), &plan.bound);
    if let Some(vp) = &vector
        && vp.lanes() > LANES
    {
        start = blocks(g, plan, (start, width), vp.lanes(), &rows, vector.as_ref())?;
    }
    // Rows the iterations share (inputs bound outside the map's lambda) are not counted.
    let own_rows = inputs.iter().filter(|v| plan.bound.contains(v)).count();
    let w = match vector {
        Some(_) => LANES,
        None => iterations(own_rows),
    };
    if w == 1 {
        return Ok(start);
    }
    blocks(g, plan, (start, width), w, &rows, vector.as_ref())
}

/// Emits a planned map of maps of fold loops ([`Nested`]: `width` outer iterations, the rows of
/// the outer inputs are `cursors`' rows, of `q` inner ones each; results `arrays`), without
/// leaving an iteration of every row to run alone: first each row's iterations `0 .. q - q % 2`
/// in blocks of [`LANES`] then two, sharing the row's values; then, when there is a row, each
/// column left over (one at most) in blocks of [`LANES`], two and one down the rows, sharing the
/// column's values. The outer lambda's statements before the inner map (which do not depend on
/// the row) and the checks of the inner inputs run for every row, and again for the column; the
/// results' rows are checked against `q` once, when there is a row. Returns the first outer
/// iteration left to run: `width`, or 0 when the iterations' own rows would not fit in registers
/// (see [`iterations`]; then the plain code runs them all).
pub fn emit_nested(
    g: &mut Gen,
    plan: &Nested,
    width: Value,
    cursors: &[Cursor],
    arrays: &[View],
) -> Res<Value> {
    let zero = g.iconst(0);
    let own_rows = (plan.inner.read_in_loop.iter())
        .filter(|v| g.f.ty(**v).rank() > 0)
        .count();
    let most = iterations(own_rows);
    if most == 1 {
        return Ok(zero);
    }
    let q = g.scalar(plan.inner_width)?;
    let inner_loc = plan.outer.body.stmts[plan.leading.len()].loc;
    g.checks.loc = inner_loc;
    let any = g.b.ins().icmp(IntCC::SignedGreaterThan, width, zero);
    Gen::if_else(
        g,
        any,
        &mut |g| {
            for dst in arrays {
                lower::check_same_shape(g, &[q], &dst.dims[1..], "row")?;
            }
            Ok(())
        },
        &mut |_| Ok(()),
    )?;
    // The inner map's inputs, made and checked as one outer iteration does.
    let inner_inputs = |g: &mut Gen| -> Res<Vec<View>> {
        for stmt in plan.leading {
            lower::stmt(g, stmt)?;
        }
        g.checks.loc = inner_loc;
        let views: Vec<View> = (plan.inner_inputs.iter())
            .map(|v| g.view(*v))
            .collect::<Res<_>>()?;
        for view in &views {
            lower::check_same_shape(g, &view.dims[..1], &[q], "SOAC input")?;
        }
        Ok(views)
    };
    let outer: Vec<View> = cursors.iter().map(|c| c.view().clone()).collect();
    // The `count` iterations of a row or a column, in blocks of `most` down to `least`.
    let run_line = |g: &mut Gen, inner: &[View], line: Line, count: Value, least: i64| {
        let rows = Rows::Grid {
            lambda: plan.outer,
            outer: &outer,
            inner,
            arrays,
            line,
        };
        let (mut start, mut w) = (zero, most);
        while w >= least {
            start = blocks(g, &plan.inner, (start, count), w, &rows, None)?;
            w /= 2;
        }
        Ok(())
    };
    g.for_range(zero, width, &mut |g, a| {
        bind_rows(g, &plan.outer.params, &outer, a);
        let inner = inner_inputs(g)?;
        run_line(g, &inner, Line::Row(a), q, 2)
    })?;
    let odd = g.b.ins().band_imm_s(q, 1);
    let done = g.b.ins().isub(q, odd);
    let end = g.b.ins().select(any, q, done);
    g.for_range(done, end, &mut |g, b| {
        let inner = inner_inputs(g)?;
        bind_rows(g, &plan.inner.map.params, &inner, b);
        run_line(g, &inner, Line::Column(b), width, 1)
    })?;
    Ok(width)
}

/// Binds `params` to rows `i` of `views`.
fn bind_rows(g: &mut Gen, params: &[VarId], views: &[View], i: Value) {
    for (p, view) in params.iter().zip(views) {
        let row = lower::read_row(g, view, &i);
        g.bind(*p, &row);
    }
}

/// Where the interleaved iterations' inputs come from and where their results go.
enum Rows<'a> {
    /// Iteration `i` of the map reads row `i` of its inputs (the cursors, walked in order) and
    /// writes row `i` of its results (the arrays).
    Map(&'a [Cursor], &'a [View]),
    /// The iterations of a row or a column of a map of maps ([`emit_nested`]; the outer map's
    /// lambda, its inputs and the inner map's, its results): iteration `i` is inner iteration
    /// `i` of the row, or outer iteration `i` of the column. The parameters of the row or the
    /// column are bound once by the caller, so that the iterations share their values.
    Grid {
        lambda: &'a Lambda,
        outer: &'a [View],
        inner: &'a [View],
        arrays: &'a [View],
        line: Line,
    },
}

/// A row (at an outer iteration) or a column (at an inner iteration) of a map of maps.
#[derive(Clone, Copy)]
enum Line {
    Row(Value),
    Column(Value),
}

impl Rows<'_> {
    /// Binds the parameters of iteration `i` to its rows; `map` is the lambda of the map of
    /// reductions or fold loops.
    fn bind(&self, g: &mut Gen, map: &Lambda, i: Value) {
        match self {
            Rows::Map(cursors, _) => {
                let args = g.cursor_rows(cursors, i);
                g.advance(cursors);
                for (p, a) in map.params.iter().zip(&args) {
                    g.bind(*p, a);
                }
            }
            Rows::Grid {
                line: Line::Row(_),
                inner,
                ..
            } => bind_rows(g, &map.params, inner, i),
            Rows::Grid {
                line: Line::Column(_),
                lambda,
                outer,
                ..
            } => bind_rows(g, &lambda.params, outer, i),
        }
    }

    /// Writes iteration `i`'s results `values`.
    fn write(&self, g: &mut Gen, i: Value, values: &[Vec<Value>]) -> Res<()> {
        let (arrays, at) = match self {
            Rows::Map(_, arrays) => {
                for (dst, val) in arrays.iter().zip(values) {
                    lower::write_row(g, dst, &i, val)?;
                }
                return Ok(());
            }
            Rows::Grid { arrays, line, .. } => match line {
                Line::Row(a) => (arrays, [*a, i]),
                Line::Column(b) => (arrays, [i, *b]),
            },
        };
        for (dst, val) in arrays.iter().zip(values) {
            let addr = g.elem_addr(dst, &at);
            g.store(val[0], addr);
        }
        Ok(())
    }
}

/// Emits the iterations `start .. start + w·⌊(width - start)/w⌋` (`(start, width)`), `w` at a
/// time, reading their inputs from `rows` and writing their results there; returns the first
/// one left.
fn blocks(
    g: &mut Gen,
    plan: &Shape,
    (start, width): (Value, Value),
    w: i64,
    rows: &Rows,
    vector: Option<&lanedot::Plan>,
) -> Res<Value> {
    let map = plan.map;
    let fold = plan.fold_loop();
    let ops = match fold {
        Some(_) => Vec::new(),
        None => ogham_ir::screma_operators(&[], plan.screma().3),
    };
    let left = g.b.ins().isub(width, start);
    let lanes = g.iconst(w);
    let count = g.b.ins().udiv(left, lanes);
    let zero = g.iconst(0);
    g.for_range(zero, count, &mut |g, block| {
        let offset = g.b.ins().imul_imm_s(block, w);
        let first = g.b.ins().iadd(start, offset);
        let mut captured = Vec::new();
        let mut inner_cursors = Vec::new();
        let mut accs = Vec::new();
        let mut lane_views = Vec::new();
        // The statements before the reduction, one iteration after the other.
        for lane in 0..w {
            let row = g.b.ins().iadd_imm_s(first, lane);
            rows.bind(g, map, row);
            for stmt in plan.before {
                lower::stmt(g, stmt)?;
            }
            g.checks.loc = plan.reduction.loc;
            if let Some(fold) = &fold {
                accs.push(fold_parameters(g, fold)?);
            } else {
                let (inner_width, inputs, ..) = plan.screma();
                let k = g.scalar(*inner_width)?;
                let views: Vec<View> = inputs.iter().map(|v| g.view(*v)).collect::<Res<_>>()?;
                for view in &views {
                    lower::check_same_shape(g, &view.dims[..1], &[k], "SOAC input")?;
                }
                inner_cursors.push(g.cursors(&views));
                lane_views.push(views);
                accs.push(lower::accumulators(g, &ops)?);
            }
            let values = plan
                .bound
                .iter()
                .map(|v| Ok((*v, g.use_var(*v)?)))
                .collect::<Res<Vec<_>>>()?;
            captured.push(values);
        }
        // One loop over the reduction's width, an accumulator per iteration (in vector lanes
        // where `lanedot.rs` applies); or the fold loops' iterations, parameters per iteration.
        if let Some(fold) = &fold {
            fold_loop(g, plan, fold, &captured, &accs)?;
        } else {
            let rows = (&inner_cursors[..], &lane_views[..]);
            reduction_loop(g, plan, &captured, rows, &accs, &ops, vector)?;
        }
        // The statements after the reduction and the results, one iteration after the other.
        for lane in 0..w as usize {
            for (v, values) in &captured[lane] {
                g.bind(*v, values);
            }
            let totals: Vec<Value> = accs[lane]
                .iter()
                .flatten()
                .map(|var| g.b.use_var(*var))
                .collect();
            for (v, total) in plan.reduction.pat.iter().zip(totals) {
                g.bind(*v, &[total]);
            }
            for stmt in plan.after {
                lower::stmt(g, stmt)?;
            }
            let i = g.b.ins().iadd_imm_s(first, lane as i64);
            let values: Vec<Vec<Value>> = (map.body.result.iter())
                .map(|r| g.operand(*r))
                .collect::<Res<_>>()?;
            rows.write(g, i, &values)?;
        }
        Ok(())
    })?;
    let done = g.b.ins().imul_imm_s(count, w);
    Ok(g.b.ins().iadd(start, done))
}

/// Values of the variables bound per interleaved iteration, by iteration.
type Captured = [Vec<(VarId, Vec<Value>)>];

/// The shared loop of interleaved reductions over the reduction's width (in vector lanes where
/// `lanedot.rs` applies): each step runs the reduction's lambda for every iteration, on its
/// rows (`cursors`) and into its accumulators.
fn reduction_loop(
    g: &mut Gen,
    plan: &Shape,
    captured: &Captured,
    (inner_cursors, lane_views): (&[Vec<Cursor>], &[Vec<View>]),
    accs: &[Vec<Vec<Variable>>],
    ops: &[(&Lambda, &[SubExp])],
    vector: Option<&lanedot::Plan>,
) -> Res<()> {
    let (inner_width, _, inner, _) = plan.screma();
    let k = g.scalar(*inner_width)?;
    let mut shared = |g: &mut Gen| {
        g.for_loop(k, &mut |g, j| {
            for (lane, cursors) in inner_cursors.iter().enumerate() {
                for (v, values) in &captured[lane] {
                    if plan.read_in_loop.contains(v) {
                        g.bind(*v, values);
                    }
                }
                let args = g.cursor_rows(cursors, j);
                let vals = lower::apply(g, inner, &args)?;
                let mut c = 0;
                for (j, (op, neutral)) in ops.iter().enumerate() {
                    let m = neutral.len();
                    lower::accumulate(g, op, &accs[lane][j], &vals[c..c + m])?;
                    c += m;
                }
            }
            for cursors in inner_cursors {
                g.advance(cursors);
            }
            Ok(())
        })
    };
    match vector {
        Some(vp) => {
            let totals: Vec<_> = accs.iter().map(|a| a[0][0]).collect();
            let red = lanedot::Reduction {
                inner,
                k,
                accs: &totals,
            };
            lanedot::emit(g, vp, &red, lane_views, &mut shared)?;
        }
        None => shared(g)?,
    }
    Ok(())
}

/// Variables holding the parameters of an interleaved iteration's fold loop, set to their
/// initial values.
fn fold_parameters(g: &mut Gen, fold: &FoldLoop) -> Res<Vec<Vec<Variable>>> {
    fold.params
        .iter()
        .map(|(p, init)| {
            let value = g.scalar(*init)?;
            let var = g.b.declare_var(clif_type(g.f.ty(*p).elem()));
            g.b.def_var(var, value);
            Ok(vec![var])
        })
        .collect()
}

/// The shared loop of interleaved fold loops: each step runs the loop's body once for every
/// iteration, on its parameters (`accs`), statement by statement ([`fold_body`]).
fn fold_loop(
    g: &mut Gen,
    plan: &Shape,
    fold: &FoldLoop,
    captured: &Captured,
    accs: &[Vec<Vec<Variable>>],
) -> Res<()> {
    let n = g.scalar(fold.bound)?;
    g.for_loop(n, &mut |g, i| {
        g.bind(fold.index, &[i]);
        let mut lanes = Vec::new();
        for (values, acc) in captured.iter().zip(accs) {
            let mut lane: Vec<(VarId, Vec<Value>)> = (values.iter())
                .filter(|(v, _)| plan.read_in_loop.contains(v))
                .cloned()
                .collect();
            for ((p, _), var) in fold.params.iter().zip(acc) {
                lane.push((*p, vec![g.b.use_var(var[0])]));
            }
            lanes.push(lane);
        }
        // A variable with the same values in every iteration (a row's value shared by the
        // iterations of a row of a map of maps) does not vary: it is bound once.
        let mut varying = HashSet::new();
        for (k, (v, values)) in lanes[0].iter().enumerate() {
            if lanes.iter().all(|lane| lane[k].1 == *values) {
                g.bind(*v, values);
            } else {
                varying.insert(*v);
            }
        }
        let results = fold_body(g, fold.body, lanes, varying)?;
        for (acc, vals) in accs.iter().zip(results) {
            for (var, val) in acc.iter().zip(vals) {
                g.b.def_var(var[0], val[0]);
            }
        }
        Ok(())
    })
}

/// Emits `body` once for every interleaved iteration (`lanes`: the values of the `varying`
/// variables, those that differ between iterations, per iteration) and returns its results per
/// iteration. A statement that reads no varying variable is emitted once for all; an `if` on a
/// condition that does not vary is one branch, in which each iteration's statements of the
/// branch taken follow one another (so the iterations share its prediction); any other
/// statement is emitted once per iteration, with that iteration's values bound.
fn fold_body(
    g: &mut Gen,
    body: &Body,
    mut lanes: Vec<Vec<(VarId, Vec<Value>)>>,
    mut varying: HashSet<VarId>,
) -> Res<Vec<Vec<Vec<Value>>>> {
    for stmt in &body.stmts {
        if !free_vars_stmt(g.f, stmt)
            .iter()
            .any(|v| varying.contains(v))
        {
            lower::stmt(g, stmt)?;
            continue;
        }
        match &stmt.exp {
            Exp::If {
                cond: cond @ SubExp::Var(c),
                then_body,
                else_body,
                ..
            } if !varying.contains(c) => {
                let vars: Vec<Vec<Variable>> = (lanes.iter())
                    .map(|_| {
                        (stmt.pat.iter())
                            .map(|v| g.b.declare_var(clif_type(g.f.ty(*v).elem())))
                            .collect()
                    })
                    .collect();
                let arm = |g: &mut Gen, taken: bool, branch: &Body| {
                    let results = lower::in_branch(g, *cond, taken, |g| {
                        fold_body(g, branch, lanes.clone(), varying.clone())
                    })?;
                    for (vars, vals) in vars.iter().zip(results) {
                        for (var, val) in vars.iter().zip(vals) {
                            g.b.def_var(*var, val[0]);
                        }
                    }
                    Ok(())
                };
                let c = g.scalar(*cond)?;
                Gen::if_else(g, c, &mut |g| arm(g, true, then_body), &mut |g| {
                    arm(g, false, else_body)
                })?;
                for (lane, vars) in lanes.iter_mut().zip(&vars) {
                    for (v, var) in stmt.pat.iter().zip(vars) {
                        lane.push((*v, vec![g.b.use_var(*var)]));
                    }
                }
            }
            _ => {
                for lane in &mut lanes {
                    for (v, values) in lane.iter() {
                        g.bind(*v, values);
                    }
                    lower::stmt(g, stmt)?;
                    for v in &stmt.pat {
                        let values = g.use_var(*v)?;
                        lane.push((*v, values));
                    }
                }
            }
        }
        varying.extend(stmt.pat.iter().copied());
    }
    let mut results = Vec::new();
    for lane in &lanes {
        for (v, values) in lane {
            g.bind(*v, values);
        }
        results.push(
            body.result
                .iter()
                .map(|r| g.operand(*r))
                .collect::<Res<_>>()?,
        );
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    /// Four iterations while their own rows fit in eight registers, two while two iterations'
    /// do, otherwise none interleaved.
    #[test]
    fn iterations_follow_the_rows_they_walk() {
        let widths: Vec<i64> = (0..=5).map(super::iterations).collect();
        assert_eq!(widths, [4, 4, 4, 2, 2, 1]);
    }
}
