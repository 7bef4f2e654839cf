//! Interleaved reductions in vector lanes: the shared loop of an interleaved map of reductions
//! (`interleave.rs`) runs its reductions (one per interleaved iteration) in the lanes of vectors
//! when their operands are adjacent in memory.
//!
//! Pattern: `map (\c -> reduce (+) z (map2 f r c)) cs` (more inputs allowed), where
//! - the reduction is a single `+` on `f32` or `f64` (the lambda `\x y -> x + y`, accumulator
//!   first);
//! - its map lambda `f` is a chain of float `+`, `-`, `*`, `/` of its parameters and constants
//!   (lanewise operations that round exactly as their scalar forms);
//! - each input is either a parameter of the outer map (a row of one of its inputs: varying,
//!   read in iteration `j` of the map and `i` of the reduction at `cs[j][i]`) or bound outside
//!   the map (uniform, the same row for every iteration);
//! - at least one input varies.
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
//! Invariants: each lane adds its own terms in order, starting from the neutral, with the same
//! operations as the scalar code (no reassociation, no fused multiply-add), so the results are
//! bit-identical. The element reads are those of the scalar loop (rows checked against the
//! reduction's width before it), so no check moves. Off with `OGHAM_SIMD=0`.

use super::codegen::{Gen, Res, View, clif_type, elem_size};
use crate::back::cpu::simd;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32X4, F64X2, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::Variable;
use ogham_ir::op::BinOp;
use ogham_ir::types::PrimType;
use ogham_ir::{Exp, Lambda, RedOp, SubExp, VarId};

/// How the reduction's inputs run in lanes.
pub struct Plan {
    elem: PrimType,
    /// Per input of the reduction: whether it varies with the map's iteration.
    varying: Vec<bool>,
    /// The first varying input: its address ends the vector loop.
    first: usize,
}

impl Plan {
    /// How many interleaved iterations [`emit`] runs in lanes best: two vectors' worth.
    pub fn lanes(&self) -> i64 {
        2 * per_vector(self.elem).1 as i64
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
/// reduction), when it fits the module's pattern.
pub fn plan(
    g: &Gen,
    map: &Lambda,
    (inputs, inner, reds): (&[VarId], &Lambda, &[RedOp]),
    bound: &[VarId],
) -> Option<Plan> {
    if !simd::enabled() {
        return None;
    }
    let [red] = reds else {
        return None;
    };
    let [neutral] = red.neutral.as_slice() else {
        return None;
    };
    let elem = g.f.subexp_type(*neutral).elem();
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
    let typed = |v: &VarId| g.f.ty(*v).elem() == elem;
    let [result] = inner.body.result.as_slice() else {
        return None;
    };
    if !inner.params.iter().all(typed) || !inputs.iter().all(typed) || !arith(result, &known) {
        return None;
    }
    // A varying input is a row of the map's inputs; one bound before the reduction is not.
    let varying: Vec<bool> = inputs.iter().map(|v| bound.contains(v)).collect();
    let first = varying.iter().position(|&v| v)?;
    if inputs
        .iter()
        .any(|v| bound.contains(v) && !map.params.contains(v))
    {
        return None;
    }
    Some(Plan {
        elem,
        varying,
        first,
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

/// Emits the shared loop of the interleaved iterations over `k` elements: in lanes where the
/// varying rows (`views[lane][input]`) are adjacent, else by `scalar`. Each iteration's total
/// ends in its accumulator `accs[lane]`.
pub fn emit(
    g: &mut Gen,
    plan: &Plan,
    inner: &Lambda,
    k: Value,
    views: &[Vec<View>],
    accs: &[Variable],
    scalar: &mut dyn FnMut(&mut Gen) -> Res<()>,
) -> Res<()> {
    let size = elem_size(plan.elem);
    let mut adjacent = None;
    for (input, _) in plan.varying.iter().enumerate().filter(|(_, v)| **v) {
        for (lane, lane_views) in views.iter().enumerate().skip(1) {
            let gap = g.b.ins().isub(lane_views[input].ptr, views[0][input].ptr);
            let ok = g.b.ins().icmp_imm_s(IntCC::Equal, gap, size * lane as i64);
            adjacent = Some(match adjacent {
                Some(all) => g.b.ins().band(all, ok),
                None => ok,
            });
        }
    }
    let (Some(adjacent), [lane0, ..]) = (adjacent, views) else {
        return scalar(g);
    };
    // The vector loop runs until the first varying input's address reaches its end: it must
    // move.
    let moves =
        g.b.ins()
            .icmp_imm_s(IntCC::NotEqual, lane0[plan.first].strides[0], 0);
    let adjacent = g.b.ins().band(adjacent, moves);
    g.if_else(
        adjacent,
        &mut |g| vector_loop(g, plan, inner, k, lane0, accs),
        scalar,
    )
}

/// The reduction loop in lanes, from the views of lane 0 (the others follow one element apart).
/// Each input's address advances by its row stride per step (no multiplication in the loop, no
/// counter).
fn vector_loop(
    g: &mut Gen,
    plan: &Plan,
    inner: &Lambda,
    k: Value,
    lane0: &[View],
    accs: &[Variable],
) -> Res<()> {
    let (vty, per) = per_vector(plan.elem);
    let ety = clif_type(plan.elem);
    let size = elem_size(plan.elem);
    let vectors = accs.len() / per;
    let init = g.b.use_var(accs[0]);
    let init = g.b.ins().splat(vty, init);
    let vaccs: Vec<Variable> = (0..vectors)
        .map(|_| {
            let var = g.b.declare_var(vty);
            g.b.def_var(var, init);
            var
        })
        .collect();
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
    let (drive, drive_step) = walks[plan.first];
    let start = g.b.use_var(drive);
    let extent = g.b.ins().imul(k, drive_step);
    let end = g.b.ins().iadd(start, extent);
    let (body, exit) = (g.b.create_block(), g.b.create_block());
    let go = g.b.ins().icmp(IntCC::NotEqual, start, end);
    g.loop_branch(go, body, exit);
    g.b.switch_to_block(body);
    let flags = MemFlagsData::new().with_notrap();
    // Per input, its vectors at this step.
    let mut args: Vec<Vec<Value>> = Vec::new();
    for ((var, step), varying) in walks.iter().zip(&plan.varying) {
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
        let vals: Vec<(VarId, Value)> = inner
            .params
            .iter()
            .zip(&args)
            .map(|(p, a)| (*p, a[v]))
            .collect();
        let term = apply(g, inner, vals, vty);
        let acc = g.b.use_var(*vacc);
        let sum = g.b.ins().fadd(acc, term);
        g.b.def_var(*vacc, sum);
    }
    let at = g.b.use_var(drive);
    let go = g.b.ins().icmp(IntCC::NotEqual, at, end);
    g.close_loop(go, body, exit);
    for (lane, acc) in accs.iter().enumerate() {
        let v = g.b.use_var(vaccs[lane / per]);
        let x = g.b.ins().extractlane(v, (lane % per) as u8);
        g.b.def_var(*acc, x);
    }
    Ok(())
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
