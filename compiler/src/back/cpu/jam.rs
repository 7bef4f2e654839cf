//! Unroll-and-jam of a map of interleaved dot products: `map (\c -> map (\d -> dot c d) ds) cs`
//! (the Gram matrix of `gram_cols`, a product `A·Bᵀ`) runs [`ROWS`] iterations of the outer map
//! together, so that each step of the shared reduction loop loads the inner iterations' elements
//! once for all of them instead of once per outer iteration.
//!
//! Pattern ([`plan`]): a sequential map (no scans or reductions of its own) whose lambda's body
//! is one map-only `Screma`, the inner map, whose array is the lambda's only result; the inner
//! map's width and inputs do not depend on the outer lambda's parameters; the inner lambda's
//! body is one reduction that `lanedot.rs` runs in vector lanes with its varying inputs rows of
//! the inner map's inputs, and its result is that reduction's. The reduction's other inputs are
//! parameters of the outer lambda (rows that change with the outer iteration: *jammed*) or
//! bound outside both maps (uniform).
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
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I8, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};
use ogham_ir::{Exp, Lambda, Soac, Stmt, SubExp, VarId};

/// How many iterations of the outer map run together (their accumulators, two vectors each,
/// and the shared vectors fit in the 16 vector registers).
pub const ROWS: i64 = 4;

/// Per iteration (outer or inner), its parameters' values.
type Params = [Vec<Vec<Value>>];

/// A map of interleaved dot products that can be jammed.
pub struct Plan<'a> {
    /// The inner map (the outer lambda's only statement).
    inner: &'a Stmt,
    /// The reduction (the inner lambda's only statement).
    reduction: &'a Stmt,
    lanes: lanedot::Plan,
    /// Per input of the reduction: the position of the outer lambda's parameter it is.
    jammed: Vec<Option<usize>>,
}

impl Plan<'_> {
    /// The inner map's SOAC and lambda.
    fn inner(&self) -> (&Soac, &Lambda) {
        match &self.inner.exp {
            Exp::Soac(soac @ Soac::Screma { map, .. }) => (soac, map),
            _ => unreachable!("the plan's inner map is a Screma"),
        }
    }

    /// The reduction's width, inputs, map lambda and neutral element.
    fn reduction(&self) -> (SubExp, &[VarId], &Lambda, SubExp) {
        match &self.reduction.exp {
            Exp::Soac(Soac::Screma {
                width,
                inputs,
                map,
                reds,
                ..
            }) => (*width, inputs, map, reds[0].neutral[0]),
            _ => unreachable!("the plan's reduction is a Screma"),
        }
    }
}

/// The plan of `map` (a sequential map's lambda, with `n_scan` scan and `n_red` reduction
/// components of its own) when it is a map of interleaved dot products worth jamming.
pub fn plan<'a>(g: &Gen, map: &'a Lambda, n_scan: usize, n_red: usize) -> Option<Plan<'a>> {
    let [inner] = map.body.stmts.as_slice() else {
        return None;
    };
    let Exp::Soac(Soac::Screma {
        width,
        inputs,
        map: inner_map,
        scans,
        reds,
    }) = &inner.exp
    else {
        return None;
    };
    let outer = |se: &SubExp| matches!(se, SubExp::Var(v) if map.params.contains(v));
    if n_scan + n_red > 0
        || !scans.is_empty()
        || !reds.is_empty()
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
    let lanes = lanedot::plan(g, inner_map, (red_inputs, red_map, reds), &inner_map.params)?;
    let jammed: Vec<Option<usize>> = red_inputs
        .iter()
        .map(|v| map.params.iter().position(|p| p == v))
        .collect();
    if !lanes.shared_strides() || jammed.iter().all(Option::is_none) {
        return None;
    }
    Some(Plan {
        inner,
        reduction,
        lanes,
        jammed,
    })
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
    let (soac, inner_map) = plan.inner();
    let (_, red_inputs, _, _) = plan.reduction();
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
    let (soac, inner_map) = plan.inner();
    // Per outer iteration, its parameters' values (rows of the outer inputs).
    let outer_rows: Vec<Vec<Vec<Value>>> = (0..ROWS)
        .map(|r| {
            let i = g.b.ins().iadd_imm_s(first, r);
            let rows = g.cursor_rows(cursors, i);
            g.advance(cursors);
            rows
        })
        .collect();
    g.checks.loc = plan.inner.loc;
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
    let (_, inner_map) = plan.inner();
    let (k, red_inputs, red_map, neutral) = plan.reduction();
    g.checks.loc = plan.reduction.loc;
    let k = g.scalar(k)?;
    // The view of reduction input `input` in outer iteration `r` and inner lane `l`.
    let view = |g: &mut Gen, input: usize, r: usize, l: usize| -> Res<View> {
        let var = red_inputs[input];
        let elem = g.f.ty(var).elem();
        if let Some(p) = inner_map.params.iter().position(|p| *p == var) {
            return Ok(View::from_values(&lane_rows[l][p], elem));
        }
        match plan.jammed[input] {
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
        if plan.jammed[input].is_some() {
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
