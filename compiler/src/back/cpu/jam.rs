//! Unroll-and-jam of a map of interleaved dot products, planned by the `jam` pass
//! (`crate::plan::jam`, `@jam`: a map whose lambda is one map of one sum of lanewise products
//! over a shared matrix, e.g. `map (\c -> map (\d -> dot c d) ds) cs`): runs [`ROWS`]
//! iterations of the outer map together, so that each step of the shared reduction loop loads
//! the inner iterations' elements once for all of them instead of once per outer iteration.
//!
//! Emission follows the plan ([`plan`]: the pieces of a planned statement, recovered with the
//! pass's matcher; a statement that does not match is emitted plainly). Two decisions stay
//! here because they are not the program's: whether vectors are available (`OGHAM_SIMD`, the
//! machine: without them the statement is emitted plainly) and whether the inner map's rows
//! are adjacent, which only the running program knows (tested at run time, below).
//!
//! At run time ([`emit`]), when the inner map's varying inputs have rows one element apart that
//! move along the reduction (`transpose a` of a row-major `a`, as `gram_cols` reads it) and the
//! inner map has at least one block of iterations, the outer iterations `0 .. ROWS·⌊W/ROWS⌋` run `ROWS` at a time. Per block of the inner map's
//! iterations (two vectors' worth, `lanedot::Plan::lanes`), one loop over the reduction's width
//! loads the varying inputs' vectors once and, for each of the `ROWS` outer iterations, splats
//! the element of its jammed rows and adds the term to that iteration's own vector
//! accumulators; the lanes are stored to the outer map's result. The inner iterations left over
//! run one at a time through the inner lambda's own code, and the outer iterations left over
//! (or all of them, when the rows are not adjacent) run as before.
//!
//! Invariants relied on: each dot product adds its own terms in order, starting from the
//! neutral, with the scalar code's operations (`lanedot.rs`), so the results are bit-identical.
//! Every row is checked against the reduction's width before the loop, as in the scalar code
//! (the checks of the inner map's inputs and of its result's row run once per block of outer
//! iterations: they do not depend on the outer iteration). When several checks fail, the one
//! reported may be another iteration's than the interpreter's first.

use super::codegen::{Cursor, Gen, Res, View};
use super::lanedot;
use crate::back::lower;
use crate::plan::jam::{self, Shape};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I8, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};
use ogham_ir::{Lambda, Soac};

/// How many iterations of the outer map run together (their accumulators, two vectors each,
/// and the shared vectors fit in the 16 vector registers).
pub const ROWS: i64 = 4;

/// Per iteration (outer or inner), its parameters' values.
type Params = [Vec<Vec<Value>>];

/// A planned map of interleaved dot products, where vectors are available.
pub struct Plan<'a> {
    shape: Shape<'a>,
    lanes: lanedot::Plan,
}

/// The plan of `soac` (a statement that the `jam` pass planned), when it has the pass's shape
/// and vectors are available.
pub fn plan<'a>(g: &Gen, soac: &'a Soac) -> Option<Plan<'a>> {
    let shape = jam::shape(g.f, soac)?;
    let lanes = lanedot::Plan::new(shape.dot.clone())?;
    Some(Plan { shape, lanes })
}

/// Emits the outer map's iterations `0 .. ROWS·⌊width/ROWS⌋` jammed when the inner map's
/// varying rows are adjacent and fill a block of lanes (else none), writing row `i` of the
/// result to `arrays[0]` (the outer inputs' rows are `cursors`' rows `i`). Returns the first
/// iteration left to run.
pub fn emit(
    g: &mut Gen,
    plan: &Plan,
    map: &Lambda,
    width: Value,
    cursors: &[Cursor],
    arrays: &[View],
) -> Res<Value> {
    let (soac, inner_map) = plan.shape.inner();
    let (_, red_inputs, _, _) = plan.shape.reduction();
    // The varying rows are rows of the inner map's inputs: adjacent when those have rows one
    // element apart, moving along the reduction.
    let mut adjacent = g.b.ins().iconst(I8, 1);
    for (input, var) in red_inputs.iter().enumerate() {
        if !plan.lanes.varying()[input] {
            continue;
        }
        let at = inner_map.params.iter().position(|p| p == var);
        let view = g.view(soac.inputs()[at.expect("a varying input is an inner parameter")])?;
        let one_apart = g.b.ins().icmp_imm_s(IntCC::Equal, view.strides[0], 1);
        let moves = g.b.ins().icmp_imm_s(IntCC::NotEqual, view.strides[1], 0);
        let both = g.b.ins().band(one_apart, moves);
        adjacent = g.b.ins().band(adjacent, both);
    }
    // With fewer inner iterations than a block, nothing would run in lanes.
    let inner_width = g.scalar(soac.width())?;
    let wide = g.b.ins().icmp_imm_s(
        IntCC::SignedGreaterThanOrEqual,
        inner_width,
        plan.lanes.lanes(),
    );
    let adjacent = g.b.ins().band(adjacent, wide);
    let blocks = g.b.ins().udiv_imm_u(width, ROWS);
    let jammed = g.b.ins().imul_imm_s(blocks, ROWS);
    let zero = g.iconst(0);
    let start = g.b.ins().select(adjacent, jammed, zero);
    g.when(adjacent, &mut |g| {
        g.for_loop(blocks, &mut |g, b| {
            let first = g.b.ins().imul_imm_s(b, ROWS);
            outer_block(g, plan, map, first, cursors, &arrays[0])
        })
    })?;
    Ok(start)
}

/// The outer iterations `first .. first + ROWS`, writing their rows of `out`.
fn outer_block(
    g: &mut Gen,
    plan: &Plan,
    map: &Lambda,
    first: Value,
    cursors: &[Cursor],
    out: &View,
) -> Res<()> {
    let (soac, inner_map) = plan.shape.inner();
    // Per outer iteration, its parameters' values (rows of the outer inputs).
    let outer_rows: Vec<Vec<Vec<Value>>> = (0..ROWS)
        .map(|r| {
            let i = g.b.ins().iadd_imm_s(first, r);
            let rows = g.cursor_rows(cursors, i);
            g.advance(cursors);
            rows
        })
        .collect();
    g.checks.loc = plan.shape.inner.loc;
    let (inner_width, inner_views) = lower::soac_inputs(g, soac)?;
    lower::check_same_shape(g, &out.dims[1..2], &[inner_width], "row")?;
    let inner_cursors = g.cursors(&inner_views);
    let lanes = plan.lanes.lanes();
    let inner_blocks = g.b.ins().udiv_imm_u(inner_width, lanes);
    g.for_loop(inner_blocks, &mut |g, block| {
        let j = g.b.ins().imul_imm_s(block, lanes);
        let lane_rows: Vec<Vec<Vec<Value>>> = (0..lanes)
            .map(|l| {
                let i = g.b.ins().iadd_imm_s(j, l);
                let rows = g.cursor_rows(&inner_cursors, i);
                g.advance(&inner_cursors);
                rows
            })
            .collect();
        inner_block(g, plan, (&outer_rows, &lane_rows), (first, j), out)
    })?;
    // The inner iterations left over, one at a time for each outer iteration.
    let done = g.b.ins().imul_imm_s(inner_blocks, lanes);
    g.for_range(done, inner_width, &mut |g, j| {
        let rows = g.cursor_rows(&inner_cursors, j);
        g.advance(&inner_cursors);
        for (r, params) in outer_rows.iter().enumerate() {
            for (p, vals) in map.params.iter().zip(params) {
                g.bind(*p, vals);
            }
            let vals = lower::apply(g, inner_map, &rows)?;
            let i = g.b.ins().iadd_imm_s(first, r as i64);
            let at = g.elem_addr(out, &[i, j]);
            g.store(vals[0][0], at);
        }
        Ok(())
    })
}

/// The dot products of the outer iterations `first ..` (parameters `outer_rows`) with the inner
/// iterations `j ..` (parameters `lane_rows`, rows one element apart): one loop over the
/// reduction's width, each step loading the inner rows' vectors once.
fn inner_block(
    g: &mut Gen,
    plan: &Plan,
    (outer_rows, lane_rows): (&Params, &Params),
    (first, j): (Value, Value),
    out: &View,
) -> Res<()> {
    let (_, inner_map) = plan.shape.inner();
    let (k, red_inputs, red_map, neutral) = plan.shape.reduction();
    g.checks.loc = plan.shape.reduction.loc;
    let k = g.scalar(k)?;
    // The view of reduction input `input` in outer iteration `r` and inner lane `l`.
    let view = |g: &mut Gen, input: usize, r: usize, l: usize| -> Res<View> {
        let var = red_inputs[input];
        let elem = g.f.ty(var).elem();
        if let Some(p) = inner_map.params.iter().position(|p| *p == var) {
            return Ok(View::from_values(&lane_rows[l][p], elem));
        }
        match plan.shape.jammed[input] {
            Some(q) => Ok(View::from_values(&outer_rows[r][q], elem)),
            None => g.view(var),
        }
    };
    for r in 0..outer_rows.len() {
        for l in 0..lane_rows.len() {
            for input in 0..red_inputs.len() {
                let v = view(g, input, r, l)?;
                lower::check_same_shape(g, &v.dims[..1], &[k], "SOAC input")?;
            }
        }
    }
    let layout = plan.lanes.layout();
    let vectors = lane_rows.len() / layout.per;
    let ne = g.scalar(neutral)?;
    let vaccs: Vec<_> = (0..outer_rows.len())
        .map(|_| lanedot::splat_accumulators(g, &layout, ne, vectors))
        .collect();
    // Per input: its address variable (lane 0's, outer iteration 0's), the bytes of a step and,
    // for a jammed input, each outer iteration's offset from it.
    let mut walks = Vec::new();
    for input in 0..red_inputs.len() {
        let v0 = view(g, input, 0, 0)?;
        let var = g.b.declare_var(I64);
        g.b.def_var(var, v0.ptr);
        let step = g.b.ins().imul_imm_s(v0.strides[0], layout.size);
        let mut offsets = Vec::new();
        if plan.shape.jammed[input].is_some() {
            for r in 0..outer_rows.len() {
                let vr = view(g, input, r, 0)?;
                offsets.push(g.b.ins().isub(vr.ptr, v0.ptr));
            }
        }
        walks.push((var, step, offsets));
    }
    // No counter: the loop ends when the first varying input's address reaches its end.
    let drive = plan.lanes.varying().iter().position(|v| *v);
    let (drive, drive_step, _) = &walks[drive.expect("a lane plan has a varying input")];
    let pointer_loop = lanedot::PointerLoop::open(g, *drive, *drive_step, k);
    let flags = MemFlagsData::new().with_notrap();
    // Per input, per outer iteration, per vector: the step's operand.
    let mut args: Vec<Vec<Vec<Value>>> = Vec::new();
    for (input, (var, step, offsets)) in walks.iter().enumerate() {
        let addr = g.b.use_var(*var);
        let per_row = if plan.lanes.varying()[input] {
            let loaded: Vec<Value> = (0..vectors)
                .map(|v| {
                    let offset = (v * layout.per) as i64 * layout.size;
                    g.b.ins().load(layout.vty, flags, addr, offset as i32)
                })
                .collect();
            vec![loaded; outer_rows.len()]
        } else if offsets.is_empty() {
            let x = g.b.ins().load(layout.ety, flags, addr, 0);
            vec![vec![g.b.ins().splat(layout.vty, x); vectors]; outer_rows.len()]
        } else {
            offsets
                .iter()
                .map(|offset| {
                    let at = g.b.ins().iadd(addr, *offset);
                    let x = g.b.ins().load(layout.ety, flags, at, 0);
                    vec![g.b.ins().splat(layout.vty, x); vectors]
                })
                .collect()
        };
        args.push(per_row);
        let next = g.b.ins().iadd(addr, *step);
        g.b.def_var(*var, next);
    }
    for (r, row_accs) in vaccs.iter().enumerate() {
        for (v, vacc) in row_accs.iter().enumerate() {
            let vals: Vec<Value> = args.iter().map(|a| a[r][v]).collect();
            lanedot::add_term(g, red_map, *vacc, &vals, layout.vty);
        }
    }
    pointer_loop.close(g);
    for (r, row_accs) in vaccs.iter().enumerate() {
        let i = g.b.ins().iadd_imm_s(first, r as i64);
        for lane in 0..lane_rows.len() {
            let v = g.b.use_var(row_accs[lane / layout.per]);
            let x = g.b.ins().extractlane(v, (lane % layout.per) as u8);
            let jl = g.b.ins().iadd_imm_s(j, lane as i64);
            let at = g.elem_addr(out, &[i, jl]);
            g.store(x, at);
        }
    }
    Ok(())
}
