//! Skipping idle iterations of a filtering loop 16 bytes at a time: a `for i < n` loop whose body
//! reads element `i` of an array, tests it with `isnan` (and `!`s) and runs an `if` one of whose
//! branches returns the loop's parameters unchanged, an *idle* iteration. This is the one-pass
//! compaction of the valid observations of a series (`compact_with_keys (\v -> !(isnan v))` in
//! `lib/segmented.og`, BFAST's first step): on a long, mostly-missing series (a daily axis, 95 %
//! NaN) the scalar loop spends 7 instructions on every position, almost all of them idle.
//!
//! Where the next element is idle (a scalar probe: one load and one comparison) and a whole
//! vector of elements from it lies within the array and the loop's range, the loop loads the
//! 128-bit vector (4 `f32` or 2 `f64`), compares it with itself (unordered: NaN) and moves the
//! counter to the first element that runs the body (`ctz` of the lane mask), or past the vector
//! when none does and on to the next vector while one fits, without running the idle
//! iterations in between. While two vectors fit, it first tests both at once (the two
//! comparisons or-ed, one `ptest`) and moves past both when no element of either runs; in a
//! pair with an element that runs, the counter moves to the first such element (`ctz` of the
//! two lane masks side by side); a last single vector takes the one-vector step, and after a
//! pair that leaves no room for a vector the loop's own test follows. Everything else runs the
//! body as before, so the iterations that run are the same, in the same order, with the same
//! results and failures: an idle iteration reads one in-bounds element (`i < n` and within the
//! array's extent, checked before the vector load) and has no other effect. A contiguous array
//! only (its stride, tested once before the loop); otherwise the probe never passes.
//!
//! Applies to the loops the `skip-idle` pass planned (`plan/skip_idle.rs` describes the shape
//! and recovers its pieces, [`planned`]). What stays here, and why: whether SIMD code is on
//! (`OGHAM_SIMD=0` turns it off, and a dump of the plans must not depend on the environment),
//! the array's stride and the room for a vector (known only at run time), and the vector code.

use super::codegen::{Gen, Res, clif_type, elem_size};
use super::simd;
use crate::plan::skip_idle::{self, Shape};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F32X4, F64X2, I64};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;
use ogham_ir::kir::Plan;
use ogham_ir::{Body, LoopForm, SubExp, VarId};

/// The shape of the loop with pattern `pat`, parameters `params`, form `form` and body `body`
/// when the `skip-idle` pass planned it (`@skip_idle` on the statement, keyed by its first
/// bound variable) and SIMD code is on; `None` otherwise, also when a planned loop (in
/// hand-written IR) does not have the shape, so that the loop is emitted plainly.
pub fn planned(
    g: &Gen,
    pat: &[VarId],
    params: &[(VarId, SubExp)],
    form: &LoopForm,
    body: &Body,
) -> Option<Shape> {
    let key = pat.first()?;
    if g.plans.get(key) != Some(&Plan::SkipIdle) || !simd::enabled() {
        return None;
    }
    skip_idle::shape(g.f, params, form, body)
}

/// The last counter value from which a vector of the skip's array lies within the loop's range
/// `bound` and the array (-1 when the array is not contiguous), computed before the loop.
pub fn limit(g: &mut Gen, skip: &Shape, bound: Value) -> Res<Value> {
    let view = g.view(skip.array)?;
    let lanes = 16 / elem_size(view.elem);
    let contiguous = g.b.ins().icmp_imm_s(IntCC::Equal, view.strides[0], 1);
    let end = g.b.ins().smin(bound, view.dims[0]);
    let last = g.b.ins().iadd_imm_s(end, -lanes);
    let none = g.iconst(-1);
    Ok(g.b.ins().select(contiguous, last, none))
}

/// Emits the skip at the top of the loop's body block (`counter` the loop's counter, `limit`
/// from [`limit`], `bound` the loop's range, `inner` its body block, which the skip may branch
/// back to, and `exit` the block after it); continues in a new block where the body runs.
pub fn emit(
    g: &mut Gen,
    skip: &Shape,
    counter: Variable,
    limit: Value,
    bound: Value,
    (inner, exit): (Block, Block),
) -> Res<()> {
    let view = g.view(skip.array)?;
    let ety = clif_type(view.elem);
    let (vty, lanes) = if ety == F32 { (F32X4, 4) } else { (F64X2, 2) };
    let [
        probe,
        pair,
        pair_load,
        pair_hit,
        pair_idle,
        single,
        vector,
        again,
        tail,
        run,
    ] = [(); 10].map(|()| g.b.create_block());
    let i = g.b.use_var(counter);
    let fits = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, i, limit);
    g.b.ins().brif(fits, probe, &[], run, &[]);

    // One element: idle?
    g.b.switch_to_block(probe);
    g.b.seal_block(probe);
    let size = elem_size(view.elem);
    let bytes = g.b.ins().imul_imm_s(i, size);
    let addr = g.b.ins().iadd(view.ptr, bytes);
    let flags = MemFlagsData::new().with_notrap();
    let x = g.b.ins().load(ety, flags, addr, 0);
    let (run_cc, idle_cc) = if skip.nan_runs {
        (FloatCC::Unordered, FloatCC::Ordered)
    } else {
        (FloatCC::Ordered, FloatCC::Unordered)
    };
    let idle = g.b.ins().fcmp(idle_cc, x, x);
    g.b.ins().brif(idle, pair, &[], run, &[]);

    // Two vectors from the counter while both fit: past both when no element of either runs;
    // otherwise one vector at a time, below, while one fits (after a pair the counter may be
    // past `limit`: then on to the loop's own test).
    g.b.switch_to_block(pair);
    let j = g.b.use_var(counter);
    let second = g.b.ins().iadd_imm_s(j, lanes);
    let both = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, second, limit);
    g.b.ins().brif(both, pair_load, &[], single, &[]);

    g.b.switch_to_block(pair_load);
    g.b.seal_block(pair_load);
    let bytes = g.b.ins().imul_imm_s(j, size);
    let addr = g.b.ins().iadd(view.ptr, bytes);
    let v0 = g.b.ins().load(vty, flags, addr, 0);
    let v1 = g.b.ins().load(vty, flags, addr, (lanes * size) as i32);
    let active0 = g.b.ins().fcmp(run_cc, v0, v0);
    let active1 = g.b.ins().fcmp(run_cc, v1, v1);
    let active = g.b.ins().bor(active0, active1);
    let any = g.b.ins().vany_true(active);
    g.b.ins().brif(any, pair_hit, &[], pair_idle, &[]);

    // The first element of the pair that runs: `ctz` of the two lane masks side by side.
    g.b.switch_to_block(pair_hit);
    g.b.seal_block(pair_hit);
    let bits0 = g.b.ins().vhigh_bits(I64, active0);
    let bits1 = g.b.ins().vhigh_bits(I64, active1);
    let bits1 = g.b.ins().ishl_imm_s(bits1, lanes);
    let bits = g.b.ins().bor(bits0, bits1);
    let step = g.b.ins().ctz(bits);
    let hit = g.b.ins().iadd(j, step);
    g.b.def_var(counter, hit);
    g.b.ins().jump(run, &[]);

    g.b.switch_to_block(pair_idle);
    g.b.seal_block(pair_idle);
    let past = g.b.ins().iadd_imm_s(j, 2 * lanes);
    g.b.def_var(counter, past);
    g.b.ins().jump(pair, &[]);
    g.b.seal_block(pair);

    g.b.switch_to_block(single);
    g.b.seal_block(single);
    let one = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, j, limit);
    g.b.ins().brif(one, vector, &[], tail, &[]);

    g.b.switch_to_block(vector);
    let j = g.b.use_var(counter);
    let bytes = g.b.ins().imul_imm_s(j, size);
    let addr = g.b.ins().iadd(view.ptr, bytes);
    let v = g.b.ins().load(vty, flags, addr, 0);
    let active = g.b.ins().fcmp(run_cc, v, v);
    let bits = g.b.ins().vhigh_bits(I64, active);
    let bits = g.b.ins().bor_imm_s(bits, 1 << lanes);
    let step = g.b.ins().ctz(bits);
    let next = g.b.ins().iadd(j, step);
    g.b.def_var(counter, next);
    let past = g.b.ins().icmp_imm_s(IntCC::Equal, step, lanes);
    g.b.ins().brif(past, again, &[], run, &[]);

    g.b.switch_to_block(again);
    g.b.seal_block(again);
    let fits = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, next, limit);
    g.b.ins().brif(fits, vector, &[], tail, &[]);
    g.b.seal_block(vector);

    g.b.switch_to_block(tail);
    g.b.seal_block(tail);
    let k = g.b.use_var(counter);
    let go = g.b.ins().icmp(IntCC::SignedLessThan, k, bound);
    g.b.ins().brif(go, inner, &[], exit, &[]);

    g.b.switch_to_block(run);
    g.b.seal_block(run);
    Ok(())
}
