//! Four-lane SIMD code for map kernels: one point per lane, the point's sequential code once for
//! four points (issue 4 item 4, issue 22 item 1).
//!
//! A `Thread`-level `SegMap` with `f32`/`i32` results runs four consecutive points per
//! iteration in 128-bit vectors (`f32x4`, `i32x4`; a `bool` is an `i32x4` lane mask), as ISPC
//! maps program instances to lanes: the outer parallel dimension is vectorised, the point's code
//! is unchanged. What the point's code may contain:
//!
//! - *Lane values*: `f32`, `i32` and `bool` scalars computed by arithmetic, comparisons,
//!   `sqrt`, `abs`, rounding, `min`/`max`, `isnan` and `i32`↔`f32` conversions.
//! - *Uniform values*: scalars of any type that depend only on the kernel's inputs, on uniform
//!   values and on counters of uniform loops, computed by operations that cannot fail (any
//!   arithmetic but integer division, math functions, conversions). They are computed once per
//!   group, as scalar code, and splatted where lanes use them.
//! - *Reads* of the kernel's inputs (or of rows of them) with one index component the lane
//!   index and the others uniform: a vector load when the lane index is the last component, a
//!   gather (four loads at the row stride) otherwise (`let row = xss[i]` then `row[j]`).
//! - `if`s with scalar results. When neither branch has a loop both branches are computed and
//!   the lanes selected (they cannot fail or have effects); otherwise each branch runs under its
//!   execution mask (the enclosing mask and the condition, or its negation) and only when at
//!   least one lane is active in it, so a branch all lanes agree on is the only one run.
//! - Loops with scalar lane parameters: `for j < n` with a uniform `n` (every lane iterates
//!   together; `j` is uniform), and `while` loops, whose lanes finish at their own trip counts:
//!   the loop runs while a lane of its execution mask has its condition true, and the lanes that
//!   are done keep their parameters (a lane select after each iteration).
//!
//! Results are bit-identical to the scalar code: each lane performs the same IEEE operations in
//! the same order (no reassociation, no fused multiply-add), and `min`/`max`, comparisons and
//! conversions have the scalar code's semantics (NaN cases included). The points left over
//! (fewer than four at the end of a range), every segment whose rows at the lane index are not
//! all in bounds, and every group in which a read at a uniform index would be out of bounds
//! (the group bails out before it stores anything) run the scalar code, which also reports any
//! error exactly as before. Anything else (reductions and scans in the point's code, arrays
//! made per point, `f64`/`i64` lane values, transcendental functions of lane values, reads at
//! lane-dependent indices) keeps the whole kernel scalar.
//!
//! Invariants relied on: kernel inputs are contiguous and row-major (so the innermost index
//! addresses consecutive elements), a scalar result of a map kernel occupies one element of its
//! output per point, and the kernel's index range satisfies `0 <= i_start <= i_end`.
//!
//! Setting `OGHAM_SIMD=0` in the environment of the compiling process turns this off (for
//! measurements).

use super::codegen::{Gen, Res, clif_type, elem_size, float_min_max};
use super::helpers::is_inline_float_math;
use crate::builtins::MathFn;
use crate::ir::{self, Body, Const, DimIndex, Exp, LoopForm, Stmt, SubExp, VarId};
use crate::kir::{SegKind, SegLevel, SegOp};
use crate::syntax::ast::{BinOp, UnOp};
use crate::types::PrimType;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I8, I32, I32X4, I64};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::Variable;
use std::collections::{HashMap, HashSet};

/// Points per vector iteration.
pub const LANES: i64 = 4;

/// One index component of a read: a uniform scalar or the lane index.
#[derive(Clone, Copy, PartialEq)]
enum Comp {
    Uniform(SubExp),
    Lane,
}

/// A vectorisable map kernel: the rows of inputs its code takes, the reads whose lane
/// component must be checked before a segment runs in vectors, and its uniform statements.
pub struct Plan {
    /// Rows of inputs (`let row = xss[s]`, `let row = xss[i]`), by the row's variable: the
    /// input and the components taken.
    rows: HashMap<VarId, (VarId, Vec<Comp>)>,
    /// Inputs read with a lane component, with the components up to and including it (the
    /// uniform ones are the kernel's: bound before the point's code runs).
    reads: Vec<(VarId, Vec<Comp>)>,
    /// The first variable bound by each statement computed as uniform scalar code.
    uniform: HashSet<VarId>,
}

/// The plan for kernel `seg` of function `f`, or `None` when its point's code is not in the
/// subset described in the module header (or SIMD is turned off).
pub fn plan(f: &ir::Function, seg: &SegOp) -> Option<Plan> {
    if std::env::var_os("OGHAM_SIMD").is_some_and(|v| v == "0") {
        return None;
    }
    if seg.kind != SegKind::Map || seg.level != SegLevel::Thread {
        return None;
    }
    if !seg
        .ret
        .iter()
        .all(|t| matches!(t, ir::Type::Prim(PrimType::F32 | PrimType::I32)))
    {
        return None;
    }
    let mut check = Check {
        f,
        inner: seg.space.last()?.0,
        space: seg.space.iter().map(|(v, _)| *v).collect(),
        defined: HashSet::new(),
        local: HashSet::new(),
        rows: HashMap::new(),
        reads: Vec::new(),
        uniform: HashSet::new(),
    };
    check.body(&seg.body).then_some(Plan {
        rows: check.rows,
        reads: check.reads,
        uniform: check.uniform,
    })
}

/// Whether a scalar type has lanes here.
fn laned(t: PrimType) -> bool {
    matches!(t, PrimType::F32 | PrimType::I32 | PrimType::Bool)
}

/// Whether `body` has a loop (then an `if` around it runs its branches under masks).
fn has_loop(body: &Body) -> bool {
    let mut found = false;
    ir::traverse::for_each_stmt(body, &mut |stmt: &Stmt| {
        found |= matches!(stmt.exp, Exp::Loop { .. });
    });
    found
}

struct Check<'a> {
    f: &'a ir::Function,
    /// The innermost space variable (the lane index).
    inner: VarId,
    space: HashSet<VarId>,
    /// Variables defined by the point's code so far as lane values.
    defined: HashSet<VarId>,
    /// Uniform variables defined by the point's code (computed inside the vector loop).
    local: HashSet<VarId>,
    rows: HashMap<VarId, (VarId, Vec<Comp>)>,
    reads: Vec<(VarId, Vec<Comp>)>,
    uniform: HashSet<VarId>,
}

impl Check<'_> {
    fn prim(&self, se: SubExp) -> Option<PrimType> {
        match self.f.subexp_type(se) {
            ir::Type::Prim(p) => Some(p),
            ir::Type::Array { .. } => None,
        }
    }

    /// An operand of a lane operation: a lane value or a uniform scalar (splatted).
    fn operand(&self, se: SubExp) -> bool {
        match se {
            SubExp::Const(_) => self.prim(se).is_some_and(laned),
            SubExp::Var(v) => {
                v != self.inner && (self.defined.contains(&v) || self.prim(se).is_some_and(laned))
            }
        }
    }

    /// A uniform scalar: the same for the four lanes.
    fn uniform(&self, se: SubExp) -> bool {
        match se {
            SubExp::Const(_) => true,
            SubExp::Var(v) => {
                v != self.inner && !self.defined.contains(&v) && self.prim(se).is_some()
            }
        }
    }

    /// A uniform scalar bound before the point's code runs.
    fn kernel_uniform(&self, se: SubExp) -> bool {
        self.uniform(se) && !matches!(se, SubExp::Var(v) if self.local.contains(&v))
    }

    /// `arr[idx]` as components of an input: the input, its components (at most one the lane
    /// index) and the input's rank.
    fn components(&self, arr: VarId, idx: &[DimIndex]) -> Option<(VarId, Vec<Comp>, usize)> {
        let (base, mut comps) = match self.rows.get(&arr) {
            Some(row) => row.clone(),
            None => {
                let free = !self.defined.contains(&arr)
                    && !self.space.contains(&arr)
                    && !self.local.contains(&arr);
                free.then(|| (arr, Vec::new()))?
            }
        };
        for d in idx {
            match d {
                DimIndex::Fix(SubExp::Var(v)) if *v == self.inner => comps.push(Comp::Lane),
                DimIndex::Fix(se) if self.uniform(*se) => comps.push(Comp::Uniform(*se)),
                _ => return None,
            }
        }
        let lanes = comps.iter().filter(|c| **c == Comp::Lane).count();
        let rank = self.f.ty(base).rank();
        (lanes <= 1 && comps.len() <= rank).then_some((base, comps, rank))
    }

    /// Records the lane component of a read (or row) for the check before a segment runs; the
    /// uniform components before it must be the kernel's.
    fn lane_read(&mut self, base: VarId, comps: &[Comp]) -> bool {
        let Some(at) = comps.iter().position(|c| *c == Comp::Lane) else {
            return true;
        };
        let prefix = comps[..=at].to_vec();
        let ok = prefix
            .iter()
            .all(|c| matches!(c, Comp::Lane) || matches!(c, Comp::Uniform(se) if self.kernel_uniform(*se)));
        if ok {
            self.reads.push((base, prefix));
        }
        ok
    }

    fn body(&mut self, body: &Body) -> bool {
        for stmt in &body.stmts {
            if let ([row], Exp::Index(arr, idx)) = (&stmt.pat[..], &stmt.exp)
                && let Some((base, comps, rank)) = self.components(*arr, idx)
                && comps.len() < rank
            {
                if !self.lane_read(base, &comps) {
                    return false;
                }
                self.rows.insert(*row, (base, comps));
                continue;
            }
            let prims: Option<Vec<PrimType>> = stmt
                .pat
                .iter()
                .map(|v| match self.f.ty(*v) {
                    ir::Type::Prim(p) => Some(*p),
                    ir::Type::Array { .. } => None,
                })
                .collect();
            let Some(prims) = prims else {
                return false;
            };
            if !stmt.pat.is_empty() && (self.uniform_exp(&stmt.exp) || self.uniform_read(&stmt.exp)) {
                self.uniform.insert(stmt.pat[0]);
                self.local.extend(stmt.pat.iter().copied());
                continue;
            }
            if !prims.iter().all(|p| laned(*p)) || !self.exp(&stmt.exp) {
                return false;
            }
            self.defined.extend(stmt.pat.iter().copied());
        }
        body.result.iter().all(|r| self.operand(*r))
    }

    /// Whether `exp` reads an element of an input (or of a row of one) at uniform indices.
    fn uniform_read(&self, exp: &Exp) -> bool {
        let Exp::Index(arr, idx) = exp else {
            return false;
        };
        self.components(*arr, idx)
            .is_some_and(|(_, comps, rank)| comps.len() == rank && !comps.contains(&Comp::Lane))
    }

    /// Whether `exp` is scalar code on uniform operands that cannot fail.
    fn uniform_exp(&self, exp: &Exp) -> bool {
        match exp {
            Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Convert(_, a) => self.uniform(*a),
            Exp::BinOp(op, a, b) => {
                let fails = matches!(
                    op,
                    BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow
                ) && !matches!(self.prim(*a), Some(PrimType::F32 | PrimType::F64));
                let pipe = matches!(op, BinOp::PipeLeft | BinOp::PipeRight);
                !fails && !pipe && self.uniform(*a) && self.uniform(*b)
            }
            Exp::Math(_, _, args) => args.iter().all(|a| self.uniform(*a)),
            _ => false,
        }
    }

    fn exp(&mut self, exp: &Exp) -> bool {
        use PrimType as P;
        match exp {
            Exp::SubExp(se) => self.operand(*se),
            Exp::BinOp(op, a, b) => {
                use BinOp as B;
                let compare = matches!(op, B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge);
                let ok = match self.prim(*a) {
                    Some(P::F32) => compare || matches!(op, B::Add | B::Sub | B::Mul | B::Div),
                    Some(P::I32) => {
                        compare
                            || matches!(
                                op,
                                B::Add | B::Sub | B::Mul | B::BitAnd | B::BitOr | B::BitXor
                            )
                    }
                    Some(P::Bool) => matches!(
                        op,
                        B::And | B::Or | B::BitAnd | B::BitOr | B::BitXor | B::Eq | B::Ne
                    ),
                    _ => false,
                };
                ok && self.operand(*a) && self.operand(*b)
            }
            Exp::UnOp(op, a) => {
                let ok = matches!(
                    (op, self.prim(*a)),
                    (UnOp::Neg, Some(P::F32 | P::I32)) | (UnOp::Not, Some(P::I32 | P::Bool))
                );
                ok && self.operand(*a)
            }
            Exp::Math(f, t, args) => {
                let ok = match t {
                    // No vector `isinf` is emitted (yet).
                    P::F32 => is_inline_float_math(*f) && *f != MathFn::IsInf,
                    P::I32 => matches!(f, MathFn::Min | MathFn::Max),
                    _ => false,
                };
                ok && args.iter().all(|a| self.operand(*a))
            }
            Exp::Convert(to, a) => {
                matches!(
                    (self.prim(*a), to),
                    (Some(P::I32), P::F32 | P::I32) | (Some(P::F32), P::I32 | P::F32)
                ) && self.operand(*a)
            }
            Exp::Index(arr, idx) => {
                let Some((base, comps, rank)) = self.components(*arr, idx) else {
                    return false;
                };
                let elem = self.f.ty(base).elem();
                matches!(elem, P::F32 | P::I32)
                    && comps.len() == rank
                    && comps.contains(&Comp::Lane)
                    && self.lane_read(base, &comps)
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => {
                let ok = ret
                    .iter()
                    .all(|t| matches!(t, ir::Type::Prim(p) if laned(*p)))
                    && self.operand(*cond);
                ok && self.body(then_body) && self.body(else_body)
            }
            Exp::Loop { params, form, body } => {
                let lane_params = params.iter().all(|(p, init)| {
                    matches!(self.f.ty(*p), ir::Type::Prim(t) if laned(*t)) && self.operand(*init)
                });
                if !lane_params {
                    return false;
                }
                self.defined.extend(params.iter().map(|(p, _)| *p));
                let form_ok = match form {
                    LoopForm::For { index, bound } => {
                        self.local.insert(*index);
                        self.uniform(*bound)
                    }
                    LoopForm::While { cond } => params.iter().any(|(p, _)| p == cond),
                };
                form_ok && self.body(body)
            }
            _ => false,
        }
    }
}

/// Runs the points `i_start..` of the current segment (`s`, whose coordinates are bound) four
/// at a time while at least four remain and every read's lane component is in bounds; returns
/// the first point left for the scalar code. `outputs` are the element pointers of the
/// kernel's results.
pub fn vector_points(
    g: &mut Gen,
    plan: &Plan,
    seg: &SegOp,
    (s, inner): (Value, Value),
    (i_start, i_end): (Value, Value),
    outputs: &[Value],
) -> Res<Value> {
    // In bounds: the uniform components before the lane's, and the lane's extent covers the
    // whole range.
    let mut ok = g.b.ins().iconst(I8, 1);
    for (arr, comps) in &plan.reads {
        let view = g.view(*arr)?;
        for (c, dim) in comps.iter().zip(&view.dims) {
            let inside = match c {
                Comp::Uniform(c) => {
                    let c = g.scalar(*c)?;
                    g.b.ins().icmp(IntCC::UnsignedLessThan, c, *dim)
                }
                Comp::Lane => g.b.ins().icmp(IntCC::SignedLessThanOrEqual, i_end, *dim),
            };
            ok = g.b.ins().band(ok, inside);
        }
    }
    let cursor = g.b.declare_var(I64);
    g.b.def_var(cursor, i_start);
    let (header, body, exit) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
    g.b.ins().brif(ok, header, &[], exit, &[]);
    g.b.switch_to_block(header);
    let i = g.b.use_var(cursor);
    let left = g.b.ins().isub(i_end, i);
    let more =
        g.b.ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, left, LANES);
    g.b.ins().brif(more, body, &[], exit, &[]);
    g.b.switch_to_block(body);
    g.b.seal_block(body);
    let mut lanes = Lanes {
        i,
        inner: seg.space[seg.space.len() - 1].0,
        plan,
        vals: HashMap::new(),
        mask: None,
        bail: exit,
    };
    let results = lanes.body(g, &seg.body)?;
    let row_start = g.b.ins().imul(s, inner);
    let p = g.b.ins().iadd(row_start, i);
    for ((out, val), ty) in outputs.iter().zip(results).zip(&seg.ret) {
        let bytes = g.b.ins().imul_imm_s(p, elem_size(ty.elem()));
        let addr = g.b.ins().iadd(*out, bytes);
        g.b.ins()
            .store(MemFlagsData::new().with_notrap(), val, addr, 0);
    }
    let next = g.b.ins().iadd_imm_s(i, LANES);
    g.b.def_var(cursor, next);
    g.b.ins().jump(header, &[]);
    g.b.seal_block(header);
    g.b.switch_to_block(exit);
    g.b.seal_block(exit);
    Ok(g.b.use_var(cursor))
}

fn vector_type(t: PrimType) -> Type {
    if t == PrimType::F32 { F32X4 } else { I32X4 }
}

/// The lane values of the current four points.
struct Lanes<'p> {
    /// The first point's innermost index.
    i: Value,
    /// The innermost space variable (the lane index).
    inner: VarId,
    plan: &'p Plan,
    vals: HashMap<VarId, Value>,
    /// The lanes the code being emitted runs for (`None`: all four).
    mask: Option<Value>,
    /// Where a group goes when a read at a uniform index is out of bounds: the scalar code,
    /// from the group's first point (nothing of the group is stored yet).
    bail: Block,
}

impl Lanes<'_> {
    fn body(&mut self, g: &mut Gen, body: &Body) -> Res<Vec<Value>> {
        for stmt in &body.stmts {
            if stmt.pat.len() == 1 && self.plan.rows.contains_key(&stmt.pat[0]) {
                continue; // a row: its reads are addressed from the input
            }
            if stmt.pat.first().is_some_and(|v| self.plan.uniform.contains(v)) {
                match &stmt.exp {
                    Exp::Index(arr, idx) => {
                        let x = self.read(g, *arr, idx)?;
                        g.bind(stmt.pat[0], &[x]);
                    }
                    _ => g.stmt(stmt)?,
                }
                continue;
            }
            let vals = self.exp(g, &stmt.exp, &stmt.pat)?;
            for (v, val) in stmt.pat.iter().zip(vals) {
                self.vals.insert(*v, val);
            }
        }
        body.result.iter().map(|r| self.operand(g, *r)).collect()
    }

    fn prim(g: &Gen, se: SubExp) -> PrimType {
        g.f.subexp_type(se).elem()
    }

    /// The four lanes of an operand: its vector, or a uniform scalar splatted (a `bool` as a
    /// lane mask).
    fn operand(&mut self, g: &mut Gen, se: SubExp) -> Res<Value> {
        if let SubExp::Var(v) = se
            && let Some(val) = self.vals.get(&v)
        {
            return Ok(*val);
        }
        let t = Self::prim(g, se);
        let x = match se {
            SubExp::Const(Const::Bool(b)) => g.b.ins().iconst(I32, -(b as i64)),
            _ if t == PrimType::Bool => {
                let x = g.scalar(se)?;
                let wide = g.b.ins().uextend(I32, x);
                g.b.ins().ineg(wide)
            }
            _ => g.scalar(se)?,
        };
        Ok(g.b.ins().splat(vector_type(t), x))
    }

    /// `mask ? x : y` lane by lane (`mask` an `i32x4` of all-ones or zero lanes).
    fn select(g: &mut Gen, mask: Value, x: Value, y: Value) -> Value {
        let ty = g.b.func.dfg.value_type(x);
        let mask = if ty == I32X4 {
            mask
        } else {
            g.b.ins().bitcast(ty, MemFlagsData::new(), mask)
        };
        g.b.ins().bitselect(mask, x, y)
    }

    /// The execution mask `mask and cond` (`cond` alone when all lanes run).
    fn and_mask(&self, g: &mut Gen, cond: Value) -> Value {
        match self.mask {
            Some(m) => g.b.ins().band(m, cond),
            None => cond,
        }
    }

    /// The vector type of an IR scalar variable.
    fn var_type(g: &Gen, v: VarId) -> Type {
        vector_type(g.f.ty(v).elem())
    }

    fn exp(&mut self, g: &mut Gen, exp: &Exp, pat: &[VarId]) -> Res<Vec<Value>> {
        Ok(match exp {
            Exp::SubExp(se) => vec![self.operand(g, *se)?],
            Exp::BinOp(op, a, b) => {
                let t = Self::prim(g, *a);
                let (x, y) = (self.operand(g, *a)?, self.operand(g, *b)?);
                vec![Self::binop(g, *op, t, x, y)]
            }
            Exp::UnOp(op, a) => {
                let t = Self::prim(g, *a);
                let x = self.operand(g, *a)?;
                vec![match (op, t) {
                    (UnOp::Neg, PrimType::F32) => g.b.ins().fneg(x),
                    (UnOp::Neg, _) => g.b.ins().ineg(x),
                    (UnOp::Not, _) => g.b.ins().bnot(x),
                }]
            }
            Exp::Math(f, t, args) => {
                let args: Vec<Value> = args
                    .iter()
                    .map(|a| self.operand(g, *a))
                    .collect::<Res<_>>()?;
                vec![Self::math(g, *f, *t, &args)]
            }
            Exp::Convert(to, a) => {
                let from = Self::prim(g, *a);
                let x = self.operand(g, *a)?;
                vec![match (from, to) {
                    (PrimType::I32, PrimType::F32) => g.b.ins().fcvt_from_sint(F32X4, x),
                    (PrimType::F32, PrimType::I32) => g.b.ins().fcvt_to_sint_sat(I32X4, x),
                    _ => x,
                }]
            }
            Exp::Index(arr, idx) => vec![self.read(g, *arr, idx)?],
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let cond = self.operand(g, *cond)?;
                if has_loop(then_body) || has_loop(else_body) {
                    let not = g.b.ins().bnot(cond);
                    let then_vals = self.masked(g, cond, then_body, pat)?;
                    let else_vals = self.masked(g, not, else_body, pat)?;
                    then_vals
                        .into_iter()
                        .zip(else_vals)
                        .map(|(x, y)| Self::select(g, cond, x, y))
                        .collect()
                } else {
                    let then_vals = self.body(g, then_body)?;
                    let else_vals = self.body(g, else_body)?;
                    then_vals
                        .into_iter()
                        .zip(else_vals)
                        .map(|(x, y)| Self::select(g, cond, x, y))
                        .collect()
                }
            }
            Exp::Loop { params, form, body } => self.run_loop(g, params, form, body, pat)?,
            _ => unreachable!("plan: only the subset in the module header is vectorised"),
        })
    }

    /// `body` (a branch of an `if` whose results are `pat`) for the lanes of `mask and cond`,
    /// run only when one of them is active; the lanes' results (zero when it does not run: no
    /// lane selects them).
    fn masked(
        &mut self,
        g: &mut Gen,
        cond: Value,
        body: &Body,
        pat: &[VarId],
    ) -> Res<Vec<Value>> {
        let mask = self.and_mask(g, cond);
        let outer = self.mask.replace(mask);
        let results: Vec<Variable> = pat
            .iter()
            .map(|v| {
                let ty = Self::var_type(g, *v);
                let var = g.b.declare_var(ty);
                let zero = g.b.ins().iconst(I32, 0);
                let zeros = g.b.ins().splat(I32X4, zero);
                let zeros = if ty == I32X4 {
                    zeros
                } else {
                    g.b.ins().bitcast(ty, MemFlagsData::new(), zeros)
                };
                g.b.def_var(var, zeros);
                var
            })
            .collect();
        let (run, merge) = (g.b.create_block(), g.b.create_block());
        let any = g.b.ins().vany_true(mask);
        g.b.ins().brif(any, run, &[], merge, &[]);
        g.b.switch_to_block(run);
        g.b.seal_block(run);
        let vals = self.body(g, body)?;
        for (var, val) in results.iter().zip(vals) {
            g.b.def_var(*var, val);
        }
        g.b.ins().jump(merge, &[]);
        g.b.switch_to_block(merge);
        g.b.seal_block(merge);
        self.mask = outer;
        Ok(results.iter().map(|v| g.b.use_var(*v)).collect())
    }

    /// A loop whose parameters are lane values: a `for` over a uniform range (all lanes
    /// iterate together), or a `while` that runs until no lane of the execution mask has its
    /// condition true (finished lanes keep their parameters).
    fn run_loop(
        &mut self,
        g: &mut Gen,
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body,
        pat: &[VarId],
    ) -> Res<Vec<Value>> {
        let mut vars = Vec::new();
        for (p, init) in params {
            let x = self.operand(g, *init)?;
            let var = g.b.declare_var(Self::var_type(g, *p));
            g.b.def_var(var, x);
            vars.push(var);
        }
        let counter = g.b.declare_var(I64);
        let zero = g.iconst(0);
        g.b.def_var(counter, zero);
        let (header, inner, exit) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
        g.b.ins().jump(header, &[]);
        g.b.switch_to_block(header);
        for ((p, _), var) in params.iter().zip(&vars) {
            let x = g.b.use_var(*var);
            self.vals.insert(*p, x);
        }
        let outer = self.mask;
        let live = match form {
            LoopForm::For { index, bound } => {
                let j = g.b.use_var(counter);
                g.bind(*index, &[j]);
                let bound = g.scalar(*bound)?;
                let go = g.b.ins().icmp(IntCC::SignedLessThan, j, bound);
                g.b.ins().brif(go, inner, &[], exit, &[]);
                None
            }
            LoopForm::While { cond } => {
                let c = self.vals[cond];
                let live = self.and_mask(g, c);
                let any = g.b.ins().vany_true(live);
                g.b.ins().brif(any, inner, &[], exit, &[]);
                Some(live)
            }
        };
        g.b.switch_to_block(inner);
        g.b.seal_block(inner);
        if let Some(live) = live {
            self.mask = Some(live);
        }
        let results = self.body(g, body)?;
        for (((p, _), var), new) in params.iter().zip(&vars).zip(results) {
            let new = match live {
                Some(live) => {
                    let old = self.vals[p];
                    Self::select(g, live, new, old)
                }
                None => new,
            };
            g.b.def_var(*var, new);
        }
        let j = g.b.use_var(counter);
        let next = g.b.ins().iadd_imm_s(j, 1);
        g.b.def_var(counter, next);
        g.b.ins().jump(header, &[]);
        g.b.seal_block(header);
        g.b.switch_to_block(exit);
        g.b.seal_block(exit);
        self.mask = outer;
        let finals: Vec<Value> = vars.iter().map(|v| g.b.use_var(*v)).collect();
        for (v, x) in pat.iter().zip(&finals) {
            self.vals.insert(*v, *x);
        }
        Ok(finals)
    }

    /// A read of an input: with a lane component, four consecutive elements when it is the
    /// last, else one element of each lane's row (at the stride of the lane's dimension);
    /// without one, a uniform scalar. Uniform components after the lane's (all of them for a
    /// uniform read) are checked here: out of bounds, the group runs as scalar code.
    fn read(&mut self, g: &mut Gen, arr: VarId, idx: &[DimIndex]) -> Res<Value> {
        let (base, mut comps) = self
            .plan
            .rows
            .get(&arr)
            .cloned()
            .unwrap_or((arr, Vec::new()));
        for d in idx {
            let DimIndex::Fix(c) = d else {
                unreachable!("plan: reads are element indices")
            };
            comps.push(if *c == SubExp::Var(self.inner) {
                Comp::Lane
            } else {
                Comp::Uniform(*c)
            });
        }
        let view = g.view(base)?;
        let size = elem_size(view.elem);
        // The lane's component, if any, is checked before the segment runs; the others after
        // it (all of them for a uniform read) here.
        let at = comps.iter().position(|c| *c == Comp::Lane);
        let checked_from = at.map_or(0, |a| a + 1);
        let mut ok = None;
        for (k, c) in comps.iter().enumerate().skip(checked_from) {
            let Comp::Uniform(c) = c else { continue };
            let c = g.scalar(*c)?;
            let inside = g.b.ins().icmp(IntCC::UnsignedLessThan, c, view.dims[k]);
            ok = Some(match ok {
                Some(ok) => g.b.ins().band(ok, inside),
                None => inside,
            });
        }
        if let Some(ok) = ok {
            let next = g.b.create_block();
            g.b.ins().brif(ok, next, &[], self.bail, &[]);
            g.b.switch_to_block(next);
            g.b.seal_block(next);
        }
        // The element offset of the first lane's element.
        let mut offset = at.map(|a| g.b.ins().imul(self.i, view.strides[a]));
        for (c, stride) in comps.iter().zip(&view.strides) {
            let Comp::Uniform(c) = c else { continue };
            let c = g.scalar(*c)?;
            let part = g.b.ins().imul(c, *stride);
            offset = Some(match offset {
                Some(o) => g.b.ins().iadd(o, part),
                None => part,
            });
        }
        let offset = offset.expect("plan: a read has an index");
        let flags = MemFlagsData::new().with_notrap();
        let Some(at) = at else {
            let bytes = g.b.ins().imul_imm_s(offset, size);
            let addr = g.b.ins().iadd(view.ptr, bytes);
            return Ok(g.b.ins().load(clif_type(view.elem), flags, addr, 0));
        };
        let bytes = g.b.ins().imul_imm_s(offset, size);
        let addr = g.b.ins().iadd(view.ptr, bytes);
        let vty = vector_type(view.elem);
        if at + 1 == comps.len() {
            return Ok(g.b.ins().load(vty, flags, addr, 0));
        }
        let step = g.b.ins().imul_imm_s(view.strides[at], size);
        let ety = clif_type(view.elem);
        let x = g.b.ins().load(ety, flags, addr, 0);
        let mut v = g.b.ins().splat(vty, x);
        let mut a = addr;
        for l in 1..LANES as u8 {
            a = g.b.ins().iadd(a, step);
            let x = g.b.ins().load(ety, flags, a, 0);
            v = g.b.ins().insertlane(v, x, l);
        }
        Ok(v)
    }

    fn binop(g: &mut Gen, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let ins = g.b.ins();
        if t == PrimType::F32 {
            let cc = match op {
                BinOp::Add => return ins.fadd(x, y),
                BinOp::Sub => return ins.fsub(x, y),
                BinOp::Mul => return ins.fmul(x, y),
                BinOp::Div => return ins.fdiv(x, y),
                BinOp::Eq => FloatCC::Equal,
                BinOp::Ne => FloatCC::NotEqual,
                BinOp::Lt => FloatCC::LessThan,
                BinOp::Le => FloatCC::LessThanOrEqual,
                BinOp::Gt => FloatCC::GreaterThan,
                _ => FloatCC::GreaterThanOrEqual,
            };
            return ins.fcmp(cc, x, y);
        }
        // i32 and bool masks.
        let cc = match op {
            BinOp::Add => return ins.iadd(x, y),
            BinOp::Sub => return ins.isub(x, y),
            BinOp::Mul => return ins.imul(x, y),
            BinOp::BitAnd | BinOp::And => return ins.band(x, y),
            BinOp::BitOr | BinOp::Or => return ins.bor(x, y),
            BinOp::BitXor => return ins.bxor(x, y),
            BinOp::Eq => IntCC::Equal,
            BinOp::Ne => IntCC::NotEqual,
            BinOp::Lt => IntCC::SignedLessThan,
            BinOp::Le => IntCC::SignedLessThanOrEqual,
            BinOp::Gt => IntCC::SignedGreaterThan,
            _ => IntCC::SignedGreaterThanOrEqual,
        };
        ins.icmp(cc, x, y)
    }

    fn math(g: &mut Gen, f: MathFn, t: PrimType, args: &[Value]) -> Value {
        let x = args[0];
        if t == PrimType::I32 {
            // The interpreter's: `x` when `x <= y` (min) or `x >= y` (max), else `y`.
            let cc = if f == MathFn::Min {
                IntCC::SignedLessThanOrEqual
            } else {
                IntCC::SignedGreaterThanOrEqual
            };
            let x_wins = g.b.ins().icmp(cc, x, args[1]);
            return Self::select(g, x_wins, x, args[1]);
        }
        let ins = g.b.ins();
        match f {
            MathFn::Sqrt => ins.sqrt(x),
            MathFn::Abs => ins.fabs(x),
            MathFn::Floor => ins.floor(x),
            MathFn::Ceil => ins.ceil(x),
            MathFn::Trunc => ins.trunc(x),
            MathFn::Round => ins.nearest(x),
            MathFn::IsNan => ins.fcmp(FloatCC::Unordered, x, x),
            _ => float_min_max(g, f, x, args[1], Self::select),
        }
    }
}
