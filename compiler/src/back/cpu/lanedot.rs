//! Interleaved reductions in vector lanes: the shared loop of an interleaved map of reductions
//! (`interleave.rs`) runs its reductions (one per interleaved iteration) in the lanes of vectors
//! when their operands are adjacent in memory.
//!
//! Pattern: a reduction of the lane-dot shape (`crate::plan::dot`: a float `+` of a chain of
//! lanewise arithmetic on inputs that vary with the map's iteration or are uniform), e.g.
//! `map (\c -> reduce (+) z (map2 f r c)) cs`. The shape is the planning passes' (`jam` plans
//! with it); whether vectors are available (`OGHAM_SIMD`, the machine) is decided here, at
//! emission, since plans must not depend on the environment, and so are the run-time tests of
//! the rows' addresses and strides below, which only the running program knows.
//!
//! When at run time the varying rows of the interleaved iterations (8 for `f32`, 4 for `f64`,
//! or a block of 4 `f32` after them: [`Plan::lanes`]) start one element apart (`cs[j][i]` lies
//! at `cs[j+1][i]` minus one element: the map's index is the unit-stride component, as in
//! `transpose a` of a row-major `a`), each step of the reduction loads the iterations' elements
//! of a varying input as vectors (`f32x4` or `f64x2`), splats the uniform inputs' element once
//! for all of them, applies `f` lanewise and adds to one vector accumulator per vector; the
//! lanes are extracted into the iterations' accumulators after the loop. The inputs' addresses
//! advance by their strides (pointer increments), and the loop ends when the first varying
//! input's address reaches its end (no counter; where that input's stride is 0 — a broadcast
//! row — the scalar loop runs). Otherwise the interleaved scalar loop runs.
//! Remainder iterations (those left over by the interleaving) run scalar as before.
//!
//! When instead every varying row of every interleaved iteration has unit stride (the rows lie
//! anywhere: `dot xt[key] beta` over gathered rows of a row-major `xt`, `matvec a x`), the
//! reduction runs in lanes too: each step loads one vector from each iteration's row (the
//! elements `j .. j+4` of `f32` rows, `j .. j+2` of `f64`), transposes each group of a vector's
//! worth of iterations in registers (unpack shuffles), so that vector `t` holds element `j+t`
//! of every iteration of the group, and adds the terms `j, j+1, …` in order; the last
//! `width % 4` (or `% 2`) elements are gathered lane by lane.
//!
//! Invariants: each lane adds its own terms in order, starting from the neutral, with the same
//! operations as the scalar code (no reassociation, no fused multiply-add), so the results are
//! bit-identical. The element reads are those of the scalar loop (rows checked against the
//! reduction's width before it), so no check moves. The one-element-apart layout shares lane
//! 0's addresses and strides, so it needs inputs with the same strides in every iteration (rows
//! of the map's inputs); the unit-stride layout tests each iteration's own row and takes any
//! varying input. Off with `OGHAM_SIMD=0`.

use super::codegen::{Gen, Res, View, clif_type, elem_size};
use crate::back::cpu::simd;
use crate::plan::dot::{self, Dot};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32X4, F64X2, I8X16, I64};
use cranelift_codegen::ir::{
    Block, ConstantData, Endianness, InstBuilder, MemFlagsData, Type, Value,
};
use cranelift_frontend::Variable;
use ogham_ir::op::BinOp;
use ogham_ir::types::PrimType;
use ogham_ir::{Exp, Lambda, RedOp, SubExp, VarId};

/// How the reduction's inputs run in lanes: a reduction of the lane-dot shape
/// (`crate::plan::dot`), where vectors are available.
pub struct Plan {
    dot: Dot,
}

impl Plan {
    /// The plan of a reduction of the lane-dot shape, when vectors are available
    /// (`OGHAM_SIMD`: a property of the machine and the environment, so not the planning
    /// passes' business).
    pub fn new(dot: Dot) -> Option<Plan> {
        simd::enabled().then_some(Plan { dot })
    }

    /// How many interleaved iterations [`emit`] runs in lanes best: two vectors' worth.
    pub fn lanes(&self) -> i64 {
        2 * per_vector(self.dot.elem()).1 as i64
    }

    /// Per input of the reduction: whether it varies with the map's iteration.
    pub fn varying(&self) -> &[bool] {
        self.dot.varying()
    }

    /// The layout of the plan's vectors.
    pub fn layout(&self) -> Layout {
        let elem = self.dot.elem();
        let (vty, per) = per_vector(elem);
        Layout {
            vty,
            per,
            ety: clif_type(elem),
            size: elem_size(elem),
        }
    }
}

/// The vector type of `elem` and its number of lanes.
fn per_vector(elem: PrimType) -> (Type, usize) {
    match elem {
        PrimType::F32 => (F32X4, 4),
        _ => (F64X2, 2),
    }
}

/// The lane plan of an interleaved reduction (of `inputs`, map lambda `inner`, operators `reds`,
/// no scans) in `map`'s lambda (`bound`: the variables its iterations bind before the
/// reduction), when it has the lane-dot shape and vectors are available.
pub fn plan(
    g: &Gen,
    map: &Lambda,
    reduction: (&[VarId], &Lambda, &[RedOp]),
    bound: &[VarId],
) -> Option<Plan> {
    Plan::new(dot::shape(g.f, map, reduction, bound)?)
}

/// The shared loop of interleaved iterations: the reduction's map lambda, its width and the
/// iterations' accumulators (one per iteration, in order).
#[derive(Clone, Copy)]
pub struct Reduction<'a> {
    pub inner: &'a Lambda,
    pub k: Value,
    pub accs: &'a [Variable],
}

/// Emits the shared loop of the interleaved iterations over `red.k` elements: in lanes where the
/// varying rows (`views[lane][input]`) are adjacent or each have unit stride, else by
/// `scalar`. Each iteration's total ends in its accumulator `red.accs[lane]`.
pub fn emit(
    g: &mut Gen,
    plan: &Plan,
    red: &Reduction,
    views: &[Vec<View>],
    scalar: &mut dyn FnMut(&mut Gen) -> Res<()>,
) -> Res<()> {
    let [lane0, ..] = views else {
        return scalar(g);
    };
    let mut unit_rows = |g: &mut Gen| match all(g, plan, views, &unit_stride) {
        Some(rows) if views.len().is_multiple_of(per_vector(plan.dot.elem()).1) => {
            g.if_else(rows, &mut |g| rows_loop(g, plan, red, views), scalar)
        }
        _ => scalar(g),
    };
    let adjacent = match plan.dot.shared_strides() {
        true => all(g, plan, views, &one_apart),
        false => None,
    };
    let Some(adjacent) = adjacent else {
        return unit_rows(g);
    };
    // The vector loop runs until the first varying input's address reaches its end: it must
    // move.
    let moves =
        g.b.ins()
            .icmp_imm_s(IntCC::NotEqual, lane0[plan.dot.first()].strides[0], 0);
    let adjacent = g.b.ins().band(adjacent, moves);
    g.if_else(
        adjacent,
        &mut |g| vector_loop(g, plan, red, lane0),
        &mut unit_rows,
    )
}

/// A test of the varying inputs' rows, given lane 0's view, the lane's number and its view.
type RowTest = dyn Fn(&mut Gen, &View, i64, &View) -> Option<Value>;

/// Whether `test` holds for the view of every varying input in every lane (`None` when it
/// tests nothing).
fn all(g: &mut Gen, plan: &Plan, views: &[Vec<View>], test: &RowTest) -> Option<Value> {
    let mut holds = None;
    for (input, _) in plan.dot.varying().iter().enumerate().filter(|(_, v)| **v) {
        for (lane, lane_views) in views.iter().enumerate() {
            let Some(ok) = test(g, &views[0][input], lane as i64, &lane_views[input]) else {
                continue;
            };
            holds = Some(match holds {
                Some(all) => g.b.ins().band(all, ok),
                None => ok,
            });
        }
    }
    holds
}

/// Whether lane `lane`'s row starts `lane` elements after lane 0's (lane 0 itself: untested).
fn one_apart(g: &mut Gen, lane0: &View, lane: i64, view: &View) -> Option<Value> {
    (lane > 0).then(|| {
        let gap = g.b.ins().isub(view.ptr, lane0.ptr);
        g.b.ins()
            .icmp_imm_s(IntCC::Equal, gap, elem_size(view.elem) * lane)
    })
}

/// Whether a lane's row has unit stride.
fn unit_stride(g: &mut Gen, _: &View, _: i64, view: &View) -> Option<Value> {
    Some(g.b.ins().icmp_imm_s(IntCC::Equal, view.strides[0], 1))
}

/// The reduction loop in lanes, from the views of lane 0 (the others follow one element apart).
/// Each input's address advances by its row stride per step (no multiplication in the loop, no
/// counter).
fn vector_loop(g: &mut Gen, plan: &Plan, red: &Reduction, lane0: &[View]) -> Res<()> {
    let Reduction { inner, k, accs } = *red;
    let (layout, vaccs) = vector_accumulators(g, plan, accs);
    let (vty, per, ety, size) = (layout.vty, layout.per, layout.ety, layout.size);
    let vectors = vaccs.len();
    let walks: Vec<(Variable, Value)> = lane0
        .iter()
        .map(|view| {
            let step = g.b.ins().imul_imm_s(view.strides[0], size);
            let var = g.b.declare_var(I64);
            g.b.def_var(var, view.ptr);
            (var, step)
        })
        .collect();
    // No counter: the loop ends when the first varying input's address reaches its end.
    let (drive, drive_step) = walks[plan.dot.first()];
    let pointer_loop = PointerLoop::open(g, drive, drive_step, k);
    let flags = MemFlagsData::new().with_notrap();
    // Per input, its vectors at this step.
    let mut args: Vec<Vec<Value>> = Vec::new();
    for ((var, step), varying) in walks.iter().zip(plan.dot.varying()) {
        let addr = g.b.use_var(*var);
        args.push(if *varying {
            (0..vectors)
                .map(|v| {
                    g.b.ins()
                        .load(vty, flags, addr, (v * per) as i32 * size as i32)
                })
                .collect()
        } else {
            let x = g.b.ins().load(ety, flags, addr, 0);
            vec![g.b.ins().splat(vty, x); vectors]
        });
        let next = g.b.ins().iadd(addr, *step);
        g.b.def_var(*var, next);
    }
    for (v, vacc) in vaccs.iter().enumerate() {
        let vals: Vec<Value> = args.iter().map(|a| a[v]).collect();
        add_term(g, inner, *vacc, &vals, vty);
    }
    pointer_loop.close(g);
    lanes_to_accumulators(g, &vaccs, accs, per);
    Ok(())
}

/// A loop without a counter, driven by an address that its body advances: it runs while the
/// address has not reached the end it had `k` steps on when the loop was opened.
pub struct PointerLoop {
    drive: Variable,
    end: Value,
    body: Block,
    exit: Block,
}

impl PointerLoop {
    /// Opens the loop (code continues in its body) over `k` steps of `step` bytes of the
    /// address in `drive`, which the body advances.
    pub fn open(g: &mut Gen, drive: Variable, step: Value, k: Value) -> PointerLoop {
        let start = g.b.use_var(drive);
        let extent = g.b.ins().imul(k, step);
        let end = g.b.ins().iadd(start, extent);
        let (body, exit) = (g.b.create_block(), g.b.create_block());
        let go = g.b.ins().icmp(IntCC::NotEqual, start, end);
        g.loop_branch(go, body, exit);
        g.b.switch_to_block(body);
        PointerLoop {
            drive,
            end,
            body,
            exit,
        }
    }

    /// Closes the loop after its body; code continues after it.
    pub fn close(self, g: &mut Gen) {
        let at = g.b.use_var(self.drive);
        let go = g.b.ins().icmp(IntCC::NotEqual, at, self.end);
        g.close_loop(go, self.body, self.exit);
    }
}

/// The reduction loop in lanes over rows of unit stride (`views[lane][input]`, any addresses):
/// per step of a vector's worth of elements, one vector from each iteration's row of each
/// varying input, transposed per group of a vector's worth of iterations (see [`transpose`]),
/// and the step's terms added in order; then the last `k % per` elements, gathered lane by lane.
fn rows_loop(g: &mut Gen, plan: &Plan, red: &Reduction, views: &[Vec<View>]) -> Res<()> {
    let Reduction { inner, k, accs } = *red;
    let (layout, vaccs) = vector_accumulators(g, plan, accs);
    let (vty, per, ety, size) = (layout.vty, layout.per, layout.ety, layout.size);
    let groups = vaccs.len();
    // A uniform input's element `j` lies `j` strides from lane 0's address.
    let uniform_steps: Vec<Value> = views[0]
        .iter()
        .map(|view| g.b.ins().imul_imm_s(view.strides[0], size))
        .collect();
    let flags = MemFlagsData::new().with_notrap();
    let uniform = |g: &mut Gen, input: usize, j: Value| {
        let at = g.b.ins().imul(j, uniform_steps[input]);
        let addr = g.b.ins().iadd(views[0][input].ptr, at);
        let x = g.b.ins().load(ety, flags, addr, 0);
        g.b.ins().splat(vty, x)
    };
    let steps = g.b.ins().ushr_imm_u(k, i64::from(per.trailing_zeros()));
    g.for_loop(steps, &mut |g, s| {
        let first = g.b.ins().imul_imm_s(s, per as i64);
        let offset = g.b.ins().imul_imm_s(s, per as i64 * size);
        // Per input, per element of the step, per group: a vector.
        let mut args: Vec<Vec<Vec<Value>>> = Vec::new();
        for (input, varying) in plan.dot.varying().iter().enumerate() {
            let mut columns = vec![Vec::new(); per];
            if *varying {
                for lanes in views.chunks(per) {
                    let rows: Vec<Value> = lanes
                        .iter()
                        .map(|lane| {
                            let addr = g.b.ins().iadd(lane[input].ptr, offset);
                            g.b.ins().load(vty, flags, addr, 0)
                        })
                        .collect();
                    for (t, column) in transpose(g, &rows).into_iter().enumerate() {
                        columns[t].push(column);
                    }
                }
            } else {
                for (t, column) in columns.iter_mut().enumerate() {
                    let j = g.b.ins().iadd_imm_s(first, t as i64);
                    *column = vec![uniform(g, input, j); groups];
                }
            }
            args.push(columns);
        }
        for t in 0..per {
            for (group, vacc) in vaccs.iter().enumerate() {
                let vals: Vec<Value> = args.iter().map(|a| a[t][group]).collect();
                add_term(g, inner, *vacc, &vals, vty);
            }
        }
        Ok(())
    })?;
    let done = g.b.ins().imul_imm_s(steps, per as i64);
    g.for_range(done, k, &mut |g, j| {
        let offset = g.b.ins().imul_imm_s(j, size);
        let mut args: Vec<Vec<Value>> = Vec::new();
        for (input, varying) in plan.dot.varying().iter().enumerate() {
            args.push(if *varying {
                views
                    .chunks(per)
                    .map(|lanes| {
                        let mut vector = None;
                        for (l, lane) in lanes.iter().enumerate() {
                            let addr = g.b.ins().iadd(lane[input].ptr, offset);
                            let x = g.b.ins().load(ety, flags, addr, 0);
                            vector = Some(match vector {
                                None => g.b.ins().scalar_to_vector(vty, x),
                                Some(v) => g.b.ins().insertlane(v, x, l as u8),
                            });
                        }
                        vector.expect("a group has lanes")
                    })
                    .collect()
            } else {
                vec![uniform(g, input, j); groups]
            });
        }
        for (group, vacc) in vaccs.iter().enumerate() {
            let vals: Vec<Value> = args.iter().map(|a| a[group]).collect();
            add_term(g, inner, *vacc, &vals, vty);
        }
        Ok(())
    })?;
    lanes_to_accumulators(g, &vaccs, accs, per);
    Ok(())
}

/// The vectors of a plan's element type: their type, lanes, element type and element size.
pub struct Layout {
    pub vty: Type,
    pub per: usize,
    pub ety: Type,
    pub size: i64,
}

/// The layout of `plan`'s vectors and one vector accumulator per vector's worth of the
/// iterations' accumulators `accs`, each lane starting from their initial value (the
/// reduction's neutral, the same for all).
fn vector_accumulators(g: &mut Gen, plan: &Plan, accs: &[Variable]) -> (Layout, Vec<Variable>) {
    let layout = plan.layout();
    let init = g.b.use_var(accs[0]);
    let vaccs = splat_accumulators(g, &layout, init, accs.len() / layout.per);
    (layout, vaccs)
}

/// `count` vector accumulators of `layout`, every lane holding `init`.
pub fn splat_accumulators(
    g: &mut Gen,
    layout: &Layout,
    init: Value,
    count: usize,
) -> Vec<Variable> {
    let init = g.b.ins().splat(layout.vty, init);
    (0..count)
        .map(|_| {
            let var = g.b.declare_var(layout.vty);
            g.b.def_var(var, init);
            var
        })
        .collect()
}

/// The lanes of the vector accumulators `vaccs` (`per` lanes each) into the iterations'
/// accumulators `accs`, in order.
fn lanes_to_accumulators(g: &mut Gen, vaccs: &[Variable], accs: &[Variable], per: usize) {
    for (lane, acc) in accs.iter().enumerate() {
        let v = g.b.use_var(vaccs[lane / per]);
        let x = g.b.ins().extractlane(v, (lane % per) as u8);
        g.b.def_var(*acc, x);
    }
}

/// Byte masks of `shuffle` (result byte `i` is byte `mask[i]` of the two operands
/// concatenated): the 32-bit lanes 0, 1 (`LOW_32`) or 2, 3 (`HIGH_32`) of both operands
/// interleaved (`punpckldq`, `punpckhdq`), and the low or high 64-bit halves of both
/// (`punpcklqdq`, `punpckhqdq`).
const LOW_32: [u8; 16] = [0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23];
const HIGH_32: [u8; 16] = [8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31];
const LOW_64: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const HIGH_64: [u8; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];

/// The transpose of a group of row vectors (four `f32x4` or two `f64x2`): vector `t` of the
/// result holds element `t` of every row, in the rows' order.
fn transpose(g: &mut Gen, rows: &[Value]) -> Vec<Value> {
    let vty = g.b.func.dfg.value_type(rows[0]);
    let little = MemFlagsData::new().with_endianness(Endianness::Little);
    let bytes: Vec<Value> = rows
        .iter()
        .map(|r| g.b.ins().bitcast(I8X16, little, *r))
        .collect();
    let shuffle = |g: &mut Gen, a: Value, b: Value, mask: &[u8; 16]| {
        let mask = g.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
        g.b.ins().shuffle(a, b, mask)
    };
    let columns = match bytes.as_slice() {
        [a, b] => vec![shuffle(g, *a, *b, &LOW_64), shuffle(g, *a, *b, &HIGH_64)],
        [a, b, c, d] => {
            let (ab_low, cd_low) = (shuffle(g, *a, *b, &LOW_32), shuffle(g, *c, *d, &LOW_32));
            let (ab_high, cd_high) = (shuffle(g, *a, *b, &HIGH_32), shuffle(g, *c, *d, &HIGH_32));
            vec![
                shuffle(g, ab_low, cd_low, &LOW_64),
                shuffle(g, ab_low, cd_low, &HIGH_64),
                shuffle(g, ab_high, cd_high, &LOW_64),
                shuffle(g, ab_high, cd_high, &HIGH_64),
            ]
        }
        _ => unreachable!("a group is a vector's worth of rows (4 f32x4 or 2 f64x2)"),
    };
    columns
        .into_iter()
        .map(|c| g.b.ins().bitcast(vty, little, c))
        .collect()
}

/// Adds the term of the reduction's map lambda on the vectors `vals` (one per input) to the
/// vector accumulator `vacc`.
pub fn add_term(g: &mut Gen, inner: &Lambda, vacc: Variable, vals: &[Value], vty: Type) {
    let vals = inner
        .params
        .iter()
        .copied()
        .zip(vals.iter().copied())
        .collect();
    let term = apply(g, inner, vals, vty);
    let acc = g.b.use_var(vacc);
    let sum = g.b.ins().fadd(acc, term);
    g.b.def_var(vacc, sum);
}

/// The map lambda of the reduction (float arithmetic only, checked by [`plan`]) on vectors.
fn apply(g: &mut Gen, inner: &Lambda, mut vals: Vec<(VarId, Value)>, vty: Type) -> Value {
    let operand = |g: &mut Gen, vals: &[(VarId, Value)], se: &SubExp| match se {
        SubExp::Var(v) => match vals.iter().find(|(w, _)| w == v) {
            Some((_, x)) => *x,
            None => unreachable!("lane operands are bound before use (checked by the plan)"),
        },
        SubExp::Const(c) => {
            let x = g.constant(*c);
            g.b.ins().splat(vty, x)
        }
    };
    for s in &inner.body.stmts {
        let Exp::BinOp(op, a, b) = &s.exp else {
            unreachable!("lane statements are arithmetic (checked by the plan)");
        };
        let (a, b) = (operand(g, &vals, a), operand(g, &vals, b));
        let x = match op {
            BinOp::Add => g.b.ins().fadd(a, b),
            BinOp::Sub => g.b.ins().fsub(a, b),
            BinOp::Mul => g.b.ins().fmul(a, b),
            _ => g.b.ins().fdiv(a, b),
        };
        vals.push((s.pat[0], x));
    }
    operand(g, &vals, &inner.body.result[0])
}
