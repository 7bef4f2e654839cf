//! Interleaved reductions: a sequential map (inside a kernel) whose lambda computes one reduction
//! per element — `map (\c -> dot r c) cs`: matrix–vector products, Gram matrices, the residuals
//! of a fit — runs [`LANES`] of its iterations together. Their statements before the reduction
//! are emitted once per iteration, then a single loop over the reduction's width carries one
//! accumulator per iteration, then their statements after it. The additions of different
//! iterations overlap in the processor instead of forming one dependency chain per iteration,
//! and each accumulator still adds its own terms in order, so the results are bit-identical.
//! The iterations left over (`width % LANES`) run one by one (`crate::back::lower::sequential`).
//! Where the reduction fits `lanedot.rs` and the interleaved iterations' rows are adjacent in
//! memory, the shared loop runs in the lanes of vectors instead; then blocks of two vectors'
//! worth of iterations (8 for `f32`, 4 for `f64`) run first, so that the vectors share the
//! loop and the loads of the uniform inputs, and one block of [`LANES`] follows when that many
//! iterations are left.
//!
//! Applies when ([`plan`]) the map has no scans or reductions of its own and returns scalars,
//! and its lambda's body is: statements without nested bodies, one `Screma` with reductions
//! only (no scans, no mapped outputs, scalar accumulators, a lambda that allocates nothing)
//! whose width does not depend on the iteration, and more statements without nested bodies.
//!
//! Invariants relied on: every variable is bound once, so the statements of the interleaved
//! iterations can be emitted one after the other, each iteration's values captured (as
//! Cranelift values, which dominate the shared loop) and bound again before its part of the
//! shared loop and its statements after it. Checks of the interleaved iterations run in a
//! different order than one iteration after the other: when several fail, the one reported may
//! differ from the interpreter's first (each is a real failure, reported with its location).

use super::codegen::{Cursor, Gen, Res, View, allocates};
use super::lanedot;
use crate::back::lower;
use cranelift_codegen::ir::{InstBuilder, Value};
use ogham_ir::traverse::free_vars_stmt;
use ogham_ir::{Exp, Lambda, RedOp, Soac, Stmt, SubExp, VarId};
use std::collections::BTreeSet;

/// How many iterations run together (enough to cover the latency of a float addition), at
/// least (see [`emit`]).
pub const LANES: i64 = 4;

/// The most statements the lambda may have around its reduction (they are emitted once per
/// interleaved iteration).
const MAX_STATEMENTS: usize = 16;

/// A map lambda split around its reduction.
pub struct Plan<'a> {
    before: &'a [Stmt],
    reduction: &'a Stmt,
    after: &'a [Stmt],
    /// The variables the iterations bind before the reduction (parameters included): captured
    /// per iteration.
    bound: Vec<VarId>,
    /// Those the reduction's lambda reads: bound again before each iteration's part of the loop.
    read_in_loop: Vec<VarId>,
}

impl Plan<'_> {
    /// The reduction's width, inputs, map lambda and operators.
    fn screma(&self) -> (&SubExp, &[VarId], &Lambda, &[RedOp]) {
        let Exp::Soac(Soac::Screma {
            width,
            inputs,
            map,
            reds,
            ..
        }) = &self.reduction.exp
        else {
            unreachable!("the plan's reduction is a Screma");
        };
        (width, inputs, map, reds)
    }
}

/// The split of `map`'s lambda, when the map (with `n_scan` scan and `n_red` reduction
/// components of its own) can be interleaved.
pub fn plan<'a>(g: &Gen, map: &'a Lambda, n_scan: usize, n_red: usize) -> Option<Plan<'a>> {
    if n_scan + n_red > 0 || map.ret.iter().any(|t| t.rank() > 0) {
        return None;
    }
    let stmts = &map.body.stmts;
    let at = stmts.iter().position(|s| matches!(s.exp, Exp::Soac(_)))?;
    let (before, rest) = stmts.split_at(at);
    let (reduction, after) = rest.split_first()?;
    let flat = |s: &Stmt| !matches!(s.exp, Exp::Soac(_) | Exp::Loop { .. } | Exp::If { .. });
    if before.len() + after.len() > MAX_STATEMENTS || !before.iter().chain(after).all(flat) {
        return None;
    }
    let Exp::Soac(Soac::Screma {
        width,
        map: inner,
        scans,
        reds,
        ..
    }) = &reduction.exp
    else {
        return None;
    };
    let components: usize = reds.iter().map(|r| r.neutral.len()).sum();
    let scalar_accumulators = reds
        .iter()
        .flat_map(|r| &r.neutral)
        .all(|n| g.f.subexp_type(*n).rank() == 0);
    if !scans.is_empty()
        || reds.is_empty()
        || inner.ret.len() != components
        || !scalar_accumulators
        || allocates(&inner.body)
    {
        return None;
    }
    let mut bound: Vec<VarId> = map.params.clone();
    bound.extend(before.iter().flat_map(|s| s.pat.iter().copied()));
    if let SubExp::Var(w) = width
        && bound.contains(w)
    {
        return None;
    }
    let free: BTreeSet<VarId> = free_vars_stmt(g.f, reduction);
    let read_in_loop = bound.iter().copied().filter(|v| free.contains(v)).collect();
    Some(Plan {
        before,
        reduction,
        after,
        bound,
        read_in_loop,
    })
}

/// Emits the map's iterations `0 .. w·⌊width/w⌋` interleaved, `w` at a time, writing each
/// iteration's results to row `i` of `arrays` (its inputs' rows are `cursors`' rows `i`). `w` is
/// [`LANES`], or where the reduction runs in vector lanes (`lanedot.rs`) the iterations of two
/// vectors, with one block of [`LANES`] after them when that many are left. Returns the first
/// iteration left to run.
pub fn emit(
    g: &mut Gen,
    plan: &Plan,
    map: &Lambda,
    width: Value,
    cursors: &[Cursor],
    arrays: &[View],
) -> Res<Value> {
    let (_, inputs, inner, reds) = plan.screma();
    let vector = lanedot::plan(g, map, (inputs, inner, reds), &plan.bound);
    let mut start = g.iconst(0);
    if let Some(vp) = &vector
        && vp.lanes() > LANES
    {
        let rows = (cursors, arrays);
        start = blocks(
            g,
            plan,
            map,
            (start, width),
            vp.lanes(),
            rows,
            vector.as_ref(),
        )?;
    }
    let rows = (cursors, arrays);
    blocks(g, plan, map, (start, width), LANES, rows, vector.as_ref())
}

/// Emits the iterations `start .. start + w·⌊(width - start)/w⌋` (`(start, width)`), `w` at a
/// time; returns the first one left.
/// The map's inputs and outputs are `(cursors, arrays)`, as for [`emit`].
fn blocks(
    g: &mut Gen,
    plan: &Plan,
    map: &Lambda,
    (start, width): (Value, Value),
    w: i64,
    (cursors, arrays): (&[Cursor], &[View]),
    vector: Option<&lanedot::Plan>,
) -> Res<Value> {
    let (inner_width, inputs, inner, reds) = plan.screma();
    let ops = ogham_ir::screma_operators(&[], reds);
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
            let args = g.cursor_rows(cursors, row);
            g.advance(cursors);
            for (p, a) in map.params.iter().zip(&args) {
                g.bind(*p, a);
            }
            for stmt in plan.before {
                lower::stmt(g, stmt)?;
            }
            g.checks.loc = plan.reduction.loc;
            let k = g.scalar(*inner_width)?;
            let views: Vec<View> = inputs.iter().map(|v| g.view(*v)).collect::<Res<_>>()?;
            for view in &views {
                lower::check_same_shape(g, &view.dims[..1], &[k], "SOAC input")?;
            }
            inner_cursors.push(g.cursors(&views));
            lane_views.push(views);
            accs.push(lower::accumulators(g, &ops)?);
            let values = plan
                .bound
                .iter()
                .map(|v| Ok((*v, g.use_var(*v)?)))
                .collect::<Res<Vec<_>>>()?;
            captured.push(values);
        }
        // One loop over the reduction's width, an accumulator per iteration (in vector lanes
        // where `lanedot.rs` applies).
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
                for cursors in &inner_cursors {
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
                lanedot::emit(g, vp, &red, &lane_views, &mut shared)?;
            }
            None => shared(g)?,
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
            for (r, dst) in map.body.result.iter().zip(arrays) {
                let val = g.operand(*r)?;
                lower::write_row(g, dst, &i, &val)?;
            }
        }
        Ok(())
    })?;
    let done = g.b.ins().imul_imm_s(count, w);
    Ok(g.b.ins().iadd(start, done))
}
