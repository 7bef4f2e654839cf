//! Stream loops in vectors: a `for j < n` loop inside a point's code that writes one element per
//! iteration at a running count,
//!
//! ```text
//! loop (buf, k) = (buf0, k0) for j < n do
//!   let x = u + j            -- u bound outside the loop (or the index j itself)
//!   let y = a[x]             -- a one-dimensional array bound outside the loop
//!   <lane code on the ys>    -- as an elementwise map's lambda (`elementwise.rs`)
//!   in (buf with [k] = v, k + 1)
//! ```
//!
//! (the Theil–Sen slopes of `lib/trend.og`: `(ys[i+1+j] - ys[i]) / (ts[i+1+j] - ts[i])` stored
//! at `k`), runs [`Width::lanes`] iterations per step before the scalar loop: a vector load of
//! each read at `u + j`, the lane code, and one vector store at `buf[k]`; then `j` and `k`
//! advance by the lanes, and the scalar loop (`cpu/lower.rs` `run_loop`) does the iterations
//! left over from there. The loop's other parameters must come back unchanged.
//!
//! Results and failures are the scalar loop's: the lanes are independent iterations, each doing
//! the scalar code's operations in the same order, and a step runs only when all its stores and
//! reads are in range (the reads as `bounds.rs` proves them for every iteration, or a check per
//! step; the stores a check per step); otherwise it stores nothing and leaves the rest to the
//! scalar loop, which fails where the interpreter does. As in `elementwise.rs`, the steps run
//! only when the arrays have unit stride (tested once per loop), a uniform read that fails sends
//! the step to the scalar loop, and `OGHAM_SIMD=0` turns it off.
//!
//! Invariant relied on: no array the loop reads is the buffer it updates in place, under another
//! name (the loop consumes the buffer, so no other live variable refers to its memory), so
//! reading a step's elements before storing its results reads what the scalar loop reads.

use super::check::Check;
use super::elementwise::element;
use super::lanes::Lanes;
use super::{Plan, Width, enabled};
use crate::back::cpu::codegen::{Gen, Res, View};
use crate::back::lower::Lower;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;
use ogham_ir::kir::Function;
use ogham_ir::op::BinOp;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Const, DimIndex, Exp, Lambda, LoopForm, SubExp, Type, VarId};
use std::collections::{HashMap, HashSet};

/// A read of the loop: `y = a[offset + j]`.
struct Read {
    y: VarId,
    array: VarId,
    /// The variable of the index (`x`, or `j` itself), for the bounds proofs.
    index: VarId,
    offset: SubExp,
}

/// A stream loop whose steps run in vectors (see the module header).
pub struct Stream {
    plan: Plan,
    /// The lane code: the reads' elements as parameters, the stored value as result.
    lambda: Lambda,
    reads: Vec<Read>,
    buf: VarId,
    count: VarId,
}

/// The plan for the loop with parameters `params`, form `form` and body `body` of `f`, when
/// its steps can run in vectors (see the module header).
pub fn plan(
    f: &Function,
    params: &[(VarId, SubExp)],
    form: &LoopForm,
    body: &Body,
) -> Option<Stream> {
    let LoopForm::For { index, .. } = form else {
        return None;
    };
    if !enabled() || body.result.len() != params.len() {
        return None;
    }
    let index = *index;
    let param_vars: Vec<VarId> = params.iter().map(|(p, _)| *p).collect();
    let bound_here: HashSet<VarId> = body
        .stmts
        .iter()
        .flat_map(|s| s.pat.iter().copied())
        .chain(param_vars.iter().copied())
        .chain([index])
        .collect();
    // The update `upd = buf with [k] = v` and the increment `k1 = k + 1`.
    let (mut buf, mut count, mut value, mut update, mut increment) = (None, None, None, None, None);
    for (n, s) in body.stmts.iter().enumerate() {
        match (&s.pat[..], &s.exp) {
            (&[upd], Exp::Update(b, idx, v)) => {
                let [DimIndex::Fix(SubExp::Var(k))] = idx[..] else {
                    return None;
                };
                if update.is_some() || !param_vars.contains(b) || !param_vars.contains(&k) {
                    return None;
                }
                (buf, count, value, update) = (Some((*b, upd)), Some(k), Some(*v), Some(n));
            }
            (&[k1], Exp::BinOp(BinOp::Add, SubExp::Var(k), SubExp::Const(Const::I64(1))))
                if param_vars.contains(k) =>
            {
                increment = Some((n, *k, k1));
            }
            _ => {}
        }
    }
    let ((buf, upd), count, value, update) = (buf?, count?, value?, update?);
    let (inc, k, k1) = increment?;
    if k != count {
        return None;
    }
    // Every result: the update for `buf`, the increment for `k`, the parameter itself for the
    // others.
    for ((p, _), r) in params.iter().zip(&body.result) {
        let want = if *p == buf {
            upd
        } else if *p == count {
            k1
        } else {
            *p
        };
        if *r != SubExp::Var(want) {
            return None;
        }
    }
    // The offsets `x = u + j` and the reads at them.
    let mut offsets: HashMap<VarId, SubExp> = HashMap::from([(index, SubExp::i64(0))]);
    let mut reads = Vec::new();
    let mut rest = Vec::new();
    for (n, s) in body.stmts.iter().enumerate() {
        if n == update || n == inc {
            continue;
        }
        let uniform = |se: &SubExp| match se {
            SubExp::Var(v) => {
                !bound_here.contains(v) || (param_vars.contains(v) && *v != buf && *v != count)
            }
            SubExp::Const(Const::I64(_)) => true,
            SubExp::Const(_) => false,
        };
        match (&s.pat[..], &s.exp) {
            (&[x], Exp::BinOp(BinOp::Add, a, b)) if *a == SubExp::Var(index) && uniform(b) => {
                offsets.insert(x, *b);
            }
            (&[x], Exp::BinOp(BinOp::Add, a, b)) if *b == SubExp::Var(index) && uniform(a) => {
                offsets.insert(x, *a);
            }
            (&[y], Exp::Index(array, idx))
                if !bound_here.contains(array) && f.ty(*array).rank() == 1 =>
            {
                match idx[..] {
                    [DimIndex::Fix(SubExp::Var(x))] if offsets.contains_key(&x) => {
                        reads.push(Read {
                            y,
                            array: *array,
                            index: x,
                            offset: offsets[&x],
                        });
                    }
                    _ => rest.push(s.clone()),
                }
            }
            _ => rest.push(s.clone()),
        }
    }
    // What the lane code uses: no offset, counter, index or the buffer.
    let rest_body = Body {
        stmts: rest,
        result: vec![value],
    };
    let used = ogham_ir::traverse::free_vars_body(f, &rest_body);
    if used.contains(&buf) || used.contains(&count) || offsets.keys().any(|x| used.contains(x)) {
        return None;
    }
    let mut nested = false;
    ogham_ir::traverse::for_each_stmt(&rest_body, &mut |t| {
        nested |= matches!(t.exp, Exp::Loop { .. } | Exp::Soac(_) | Exp::Iota(_));
    });
    if nested {
        return None;
    }
    let Type::Array { elem, .. } = f.ty(buf).clone() else {
        return None;
    };
    let types: Vec<PrimType> = reads
        .iter()
        .map(|r| f.ty(r.y).elem())
        .chain([elem])
        .collect();
    let width = Width::of_scalars(&types)?;
    let lambda = Lambda {
        params: reads.iter().map(|r| r.y).collect(),
        body: rest_body,
        ret: vec![Type::Prim(elem)],
    };
    let mut check = Check::elementwise(f, &lambda, width);
    let ok = check.body(&lambda.body);
    Some(Stream {
        plan: check.plan(ok).ok()?,
        lambda,
        reads,
        buf,
        count,
    })
}

impl Stream {
    /// Emits the loop's steps in vectors before its scalar loop, whose counter is `counter`
    /// and bound `bound`: leaves the counter at the first iteration left to the scalar loop and
    /// the count parameter at its value there.
    pub fn emit(&self, g: &mut Gen, counter: Variable, bound: Value) -> Res<()> {
        let plan = &self.plan;
        let lanes = plan.width.lanes();
        let buf = g.view(self.buf)?;
        let views: Vec<View> = self
            .reads
            .iter()
            .map(|r| g.view(r.array))
            .collect::<Res<_>>()?;
        let offsets: Vec<Value> = self
            .reads
            .iter()
            .map(|r| g.scalar(r.offset))
            .collect::<Res<_>>()?;
        let proven: Vec<bool> = self
            .reads
            .iter()
            .map(|r| {
                let dim = g.f.ty(r.array).shape()[0];
                g.proofs().within(SubExp::Var(r.index), dim)
            })
            .collect();
        let mut unit = g.b.ins().icmp_imm_s(IntCC::Equal, buf.strides[0], 1);
        for view in &views {
            let one = g.b.ins().icmp_imm_s(IntCC::Equal, view.strides[0], 1);
            unit = g.b.ins().band(unit, one);
        }
        // The arrays a step checks (the buffer, and the reads not proven), each with the
        // largest start of a step inside it, `len - lanes`: with that at least 0, a step at
        // `at` is in range (`0 <= at` and `at + lanes <= len`) exactly when `at <= limit` as
        // unsigned numbers, one comparison; with it below 0 no step fits, and none runs.
        let mut limits = vec![g.b.ins().iadd_imm_s(buf.dims[0], -lanes)];
        for (view, proven) in views.iter().zip(&proven) {
            if !proven {
                limits.push(g.b.ins().iadd_imm_s(view.dims[0], -lanes));
            }
        }
        for limit in &limits {
            let fits =
                g.b.ins()
                    .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, *limit, 0);
            unit = g.b.ins().band(unit, fits);
        }
        let zero = g.iconst(0);
        let runs = g.b.ins().smax(bound, zero);
        let steps =
            g.b.ins()
                .ushr_imm_u(runs, i64::from(lanes.trailing_zeros()));
        let steps = g.b.ins().select(unit, steps, zero);
        let end = g.b.ins().imul_imm_s(steps, lanes);
        let count = g.scalar(SubExp::Var(self.count))?;
        let cursor = g.b.declare_var(I64);
        g.b.def_var(cursor, zero);
        let running = g.b.declare_var(I64);
        g.b.def_var(running, count);
        let (step, body, exit) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
        let go = g.b.ins().icmp(IntCC::SignedLessThan, zero, end);
        g.loop_branch(go, step, exit);
        g.b.switch_to_block(step);
        let j = g.b.use_var(cursor);
        let k = g.b.use_var(running);
        // The step's stores, and its reads not proven, in range (see `limits`).
        let mut ok = g.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, k, limits[0]);
        let unproven = offsets.iter().zip(&proven).filter(|(_, p)| !**p);
        for ((off, _), limit) in unproven.zip(&limits[1..]) {
            let at = g.b.ins().iadd(*off, j);
            let inside = g.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, at, *limit);
            ok = g.b.ins().band(ok, inside);
        }
        g.b.ins().brif(ok, body, &[], exit, &[]);
        g.b.switch_to_block(body);
        g.b.seal_block(body);
        let flags = MemFlagsData::new().with_notrap();
        let mut vals = HashMap::new();
        for ((read, view), off) in self.reads.iter().zip(&views).zip(&offsets) {
            let at = g.b.ins().iadd(*off, j);
            let addr = element(g, view, at);
            let x = g.b.ins().load(plan.width.vector(view.elem), flags, addr, 0);
            vals.insert(read.y, x);
        }
        let mut lanes_code = Lanes::elementwise(j, plan, exit, vals);
        let results = lanes_code.body(g, &self.lambda.body)?;
        let addr = element(g, &buf, k);
        g.b.ins().store(flags, results[0], addr, 0);
        let next = g.b.ins().iadd_imm_s(j, lanes);
        g.b.def_var(cursor, next);
        let k_next = g.b.ins().iadd_imm_s(k, lanes);
        g.b.def_var(running, k_next);
        let go = g.b.ins().icmp(IntCC::SignedLessThan, next, end);
        g.loop_branch(go, step, exit);
        g.b.seal_block(step);
        g.b.switch_to_block(exit);
        g.b.seal_block(exit);
        let j = g.b.use_var(cursor);
        g.b.def_var(counter, j);
        let k = g.b.use_var(running);
        g.bind(self.count, &[k]);
        Ok(())
    }
}
