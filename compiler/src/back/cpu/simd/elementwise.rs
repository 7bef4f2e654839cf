//! Elementwise sequential maps in vectors: a `map` inside a point's code (a sequential SOAC
//! loop) whose lambda is lane code over its own parameters runs [`Width::lanes`] consecutive
//! iterations per step in 128-bit vectors — a vector load of each input at the step's first
//! element, the lambda's statements as lane code (`lanes.rs`: values uniform over the map are
//! splatted), a vector store of each result — and the iterations left over (`width % lanes`)
//! run one by one as before (`crate::back::lower::sequential`). Gauss–Jordan elimination's
//! `map2 (\v x -> v - factor * x) row scaled` (`lib/linalg.og` `inverse`, in its unswitched
//! copy: an `if` on a condition fixed by `unswitch.rs` emits only the branch taken), its
//! scaling `map (\x -> x / pivot) prow`, `map (\v -> v - c) ys`.
//!
//! Integer sums run so too: a `redomap` whose reductions are all `+` on the width's integer type
//! (`i32`, `i64`; Mann-Kendall's score `sum (map (\x -> if y < x then 1 else ...) row)` and
//! counts) keeps one sum per lane and reduction, from 0, adds each step's lanes to it, and adds
//! the lanes' sums to the accumulator after the vector steps; the scalar loop then adds the
//! iterations left over. Integer additions wrap (`ir/src/scalar.rs`), so they are associative
//! and commutative and the result is the scalar loop's, bit for bit. Float sums stay scalar
//! (reassociating them changes their rounding), and so do other operators.
//!
//! Applies when ([`plan`]) the map has no scans, its reductions are such sums, its parameters
//! and results are scalars of one width's types (`f32`/`i32`: four lanes, `f64`/`i64`: two;
//! `bool`s only inside), and its lambda, with no loop, SOAC or `iota` at any depth, is in the lane subset of the map
//! kernels' SIMD (`check.rs`) with the parameters as the lane values: arithmetic, comparisons,
//! `select`able `if`s, inline math and helper calls lane by lane, conversions, and reads at
//! indices uniform over the map (the only checks it may hold). Reads at indices that depend
//! on the element keep the scalar loop. The vector steps run only when every input it reads and
//! every result has unit stride along the map (tested once per map, at run time: rows of loop
//! parameters carry their strides as values).
//!
//! Results are bit-identical: the elements are independent and each lane performs the scalar
//! code's operations in the same order (no reassociation, no fused multiply-add). A step whose
//! uniform read would be out of bounds stores nothing, adds nothing to the sums and leaves the rest of the map, from that
//! step's first element, to the scalar loop, which fails where the interpreter does.
//!
//! Invariants relied on: every input of the map has the map's width (checked by the SOAC before
//! the loop) and a fresh result array does not overlap its inputs except element for element
//! (a step reads all its inputs before it stores); `OGHAM_SIMD=0` turns it off.
//!
//! The decision stays in emission for the reason `mod.rs` gives: the lambda must be in the lane
//! subset this backend can emit (`check.rs`), a property of the emitter, not of the program.

use super::check::Check;
use super::lanes::Lanes;
use super::{Plan, Width, enabled};
use crate::back::cpu::codegen::{Cursor, Gen, Res, View, clif_type, elem_size};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I8, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;
use ogham_ir::kir::Function;
use ogham_ir::types::PrimType;
use ogham_ir::{Exp, Lambda, Soac, Type};
use std::collections::HashMap;

/// A sequential map whose loop runs in vectors: the lane code's plan, the map's lambda and its
/// number of reductions (integer additions, the lambda's first results).
pub struct Elementwise<'a> {
    plan: Plan,
    map: &'a Lambda,
    n_red: usize,
}

/// The plan for the sequential Screma `soac` of function `f`, when its loop can run in vectors
/// (see the module header).
pub fn plan<'a>(f: &Function, soac: &'a Soac) -> Option<Elementwise<'a>> {
    let Soac::Screma {
        map, scans, reds, ..
    } = soac
    else {
        return None;
    };
    let exact = reds
        .iter()
        .all(|r| r.neutral.len() == 1 && r.lambda.is_addition());
    if !enabled() || !scans.is_empty() || !exact || map.ret.is_empty() {
        return None;
    }
    let types: Vec<PrimType> = map
        .params
        .iter()
        .map(|p| f.ty(*p))
        .chain(&map.ret)
        .map(|t| match t {
            Type::Prim(p) => Some(*p),
            Type::Array { .. } => None,
        })
        .collect::<Option<_>>()?;
    let width = Width::of_scalars(&types)?;
    let n_red = reds.len();
    if map.ret[..n_red].iter().any(|t| t.elem() != width.int()) {
        return None;
    }
    let mut nested = false;
    ogham_ir::traverse::for_each_stmt(&map.body, &mut |s| {
        nested |= matches!(s.exp, Exp::Loop { .. } | Exp::Soac(_) | Exp::Iota(_));
    });
    if nested {
        return None;
    }
    let mut check = Check::elementwise(f, map, width);
    let ok = check.body(&map.body);
    Some(Elementwise {
        plan: check.plan(ok).ok()?,
        map,
        n_red,
    })
}

impl Elementwise<'_> {
    /// Emits the map's iterations `0 .. lanes·⌊width/lanes⌋` in vectors when its inputs
    /// (`inputs`, rows `i`) and mapped results (`arrays`, rows `i`) have unit stride, else none,
    /// adding what they reduce into the reductions' accumulators `accs`; returns the first
    /// iteration left to the scalar loop.
    pub fn emit(
        &self,
        g: &mut Gen,
        width: Value,
        inputs: &[Cursor],
        arrays: &[View],
        accs: &[Vec<Variable>],
    ) -> Res<Value> {
        let (plan, map) = (&self.plan, self.map);
        let lanes = plan.width.lanes();
        let read: Vec<(usize, View)> = inputs
            .iter()
            .enumerate()
            .filter(|(k, _)| !g.unread_rows.contains(k))
            .map(|(k, c)| (k, c.view().clone()))
            .collect();
        let mut unit = g.b.ins().iconst(I8, 1);
        for view in read.iter().map(|(_, v)| v).chain(arrays) {
            let one = g.b.ins().icmp_imm_s(IntCC::Equal, view.strides[0], 1);
            unit = g.b.ins().band(unit, one);
        }
        let steps =
            g.b.ins()
                .ushr_imm_u(width, i64::from(lanes.trailing_zeros()));
        let zero = g.iconst(0);
        let steps = g.b.ins().select(unit, steps, zero);
        let end = g.b.ins().imul_imm_s(steps, lanes);
        let cursor = g.b.declare_var(I64);
        g.b.def_var(cursor, zero);
        // One sum per lane and reduction, from 0: integer additions wrap, so adding the lanes'
        // sums to the accumulator gives the scalar loop's result in any order.
        let int = plan.width.int();
        let sums: Vec<Variable> = (0..self.n_red)
            .map(|_| {
                let sum = g.b.declare_var(plan.width.vector(int));
                let zero = g.b.ins().iconst(clif_type(int), 0);
                let splat = g.b.ins().splat(plan.width.vector(int), zero);
                g.b.def_var(sum, splat);
                sum
            })
            .collect();
        let (body, exit) = (g.b.create_block(), g.b.create_block());
        let go = g.b.ins().icmp(IntCC::SignedLessThan, zero, end);
        g.loop_branch(go, body, exit);
        g.b.switch_to_block(body);
        let i = g.b.use_var(cursor);
        let flags = MemFlagsData::new().with_notrap();
        let mut vals = HashMap::new();
        for (k, view) in &read {
            let addr = element(g, view, i);
            let x = g.b.ins().load(plan.width.vector(view.elem), flags, addr, 0);
            vals.insert(map.params[*k], x);
        }
        let mut step = Lanes::elementwise(i, plan, exit, vals);
        let results = step.body(g, &map.body)?;
        let (reduced, mapped) = results.split_at(self.n_red);
        for (sum, x) in sums.iter().zip(reduced) {
            let before = g.b.use_var(*sum);
            let after = g.b.ins().iadd(before, *x);
            g.b.def_var(*sum, after);
        }
        for (val, dst) in mapped.iter().zip(arrays) {
            let addr = element(g, dst, i);
            g.b.ins().store(flags, *val, addr, 0);
        }
        let next = g.b.ins().iadd_imm_s(i, lanes);
        g.b.def_var(cursor, next);
        let go = g.b.ins().icmp(IntCC::SignedLessThan, next, end);
        g.close_loop(go, body, exit);
        for (sum, acc) in sums.iter().zip(accs) {
            let v = g.b.use_var(*sum);
            let mut total = g.b.ins().extractlane(v, 0);
            for lane in 1..lanes {
                let x = g.b.ins().extractlane(v, lane as u8);
                total = g.b.ins().iadd(total, x);
            }
            let before = g.b.use_var(acc[0]);
            let after = g.b.ins().iadd(before, total);
            g.b.def_var(acc[0], after);
        }
        Ok(g.b.use_var(cursor))
    }
}

/// The address of element `i` of a rank-1 `view` of unit stride.
pub(super) fn element(g: &mut Gen, view: &View, i: Value) -> Value {
    let bytes = g.b.ins().imul_imm_s(i, elem_size(view.elem));
    g.b.ins().iadd(view.ptr, bytes)
}
