//! Four-lane SIMD code for element-wise map kernels (issue 4 item 4).
//!
//! A `Thread`-level `SegMap` whose point is straight-line code on `f32`, `i32` and `bool`
//! scalars, reading its inputs at the innermost index of the space, runs four consecutive
//! points per iteration in 128-bit vectors (`f32x4`, `i32x4`; a `bool` is an `i32x4` lane mask),
//! as ISPC maps program instances to lanes: the outer parallel dimension is vectorised, the
//! point's code is unchanged. `if`s whose branches are such code become lane selects (both
//! branches are computed: they have no side effects and cannot fail). The points left over
//! (fewer than four at the end of a range) and every segment whose reads are not all in bounds
//! run the scalar code, which also reports any out-of-bounds access exactly as before.
//!
//! Results are bit-identical to the scalar code: each lane performs the same IEEE operations in
//! the same order (no reassociation, no fused multiply-add), and `min`/`max`, comparisons and
//! conversions have the scalar code's semantics (NaN cases included).
//!
//! Invariants relied on: kernel inputs are contiguous and row-major (so the innermost index
//! addresses consecutive elements), a scalar result of a map kernel occupies one element of its
//! output per point, and the kernel's index range satisfies `0 <= i_start <= i_end`.
//!
//! Setting `OGHAM_SIMD=0` in the environment of the compiling process turns this off (for
//! measurements).

use super::codegen::{Gen, Res, elem_size, float_min_max};
use super::helpers::is_inline_float_math;
use crate::builtins::MathFn;
use crate::ir::{self, Body, Const, DimIndex, Exp, SubExp, VarId};
use crate::kir::{SegKind, SegLevel, SegOp};
use crate::syntax::ast::{BinOp, UnOp};
use crate::types::PrimType;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I32, I32X4, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value};
use std::collections::{HashMap, HashSet};

/// Points per vector iteration.
pub const LANES: i64 = 4;

/// A vectorisable map kernel: the arrays it reads at the innermost index, with the other
/// (uniform) index components of each read.
pub struct Plan {
    /// Rows of inputs at uniform indices (`let row = xss[s]`), by the row's variable.
    rows: HashMap<VarId, (VarId, Vec<SubExp>)>,
    reads: Vec<(VarId, Vec<SubExp>)>,
}

/// The plan for kernel `seg` of function `f`, or `None` when its point is not straight-line
/// `f32`/`i32`/`bool` code (or SIMD is turned off).
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
        rows: HashMap::new(),
        reads: Vec::new(),
    };
    check.body(&seg.body).then_some(Plan {
        rows: check.rows,
        reads: check.reads,
    })
}

/// Whether a scalar type has lanes here.
fn laned(t: PrimType) -> bool {
    matches!(t, PrimType::F32 | PrimType::I32 | PrimType::Bool)
}

struct Check<'a> {
    f: &'a ir::Function,
    /// The innermost space variable (the lane index).
    inner: VarId,
    space: HashSet<VarId>,
    /// Variables defined by the point's code so far (vectors).
    defined: HashSet<VarId>,
    /// Rows of input arrays taken at uniform indices (`xss[s]`): their array and indices.
    rows: HashMap<VarId, (VarId, Vec<SubExp>)>,
    reads: Vec<(VarId, Vec<SubExp>)>,
}

impl Check<'_> {
    fn prim(&self, se: SubExp) -> Option<PrimType> {
        match self.f.subexp_type(se) {
            ir::Type::Prim(p) => Some(p),
            ir::Type::Array { .. } => None,
        }
    }

    /// An operand: a lane value (defined by the point) or a uniform scalar (splatted).
    fn operand(&self, se: SubExp) -> bool {
        match se {
            SubExp::Const(_) => self.prim(se).is_some_and(laned),
            SubExp::Var(v) => {
                v != self.inner && (self.defined.contains(&v) || self.prim(se).is_some_and(laned))
            }
        }
    }

    /// A uniform index component: the same for the four lanes.
    fn uniform(&self, se: SubExp) -> bool {
        match se {
            SubExp::Const(_) => true,
            SubExp::Var(v) => {
                v != self.inner && !self.defined.contains(&v) && self.prim(se).is_some()
            }
        }
    }

    /// `arr[idx]` as a row of an input at uniform indices: the input and the indices.
    fn uniform_row(&self, arr: VarId, idx: &[DimIndex]) -> Option<(VarId, Vec<SubExp>)> {
        let (base, mut comps) = self.input(arr)?;
        for d in idx {
            match d {
                DimIndex::Fix(se) if self.uniform(*se) => comps.push(*se),
                _ => return None,
            }
        }
        let rank = self.f.ty(base).rank();
        (comps.len() < rank).then_some((base, comps))
    }

    /// An input array, or a row of one: the input and the indices taken so far.
    fn input(&self, arr: VarId) -> Option<(VarId, Vec<SubExp>)> {
        if let Some(row) = self.rows.get(&arr) {
            return Some(row.clone());
        }
        let free = !self.defined.contains(&arr) && !self.space.contains(&arr);
        free.then(|| (arr, Vec::new()))
    }

    fn body(&mut self, body: &Body) -> bool {
        for stmt in &body.stmts {
            if let ([row], Exp::Index(arr, idx)) = (&stmt.pat[..], &stmt.exp)
                && let Some(row_of) = self.uniform_row(*arr, idx)
            {
                self.rows.insert(*row, row_of);
                continue;
            }
            let scalars = stmt.pat.iter().all(|v| match self.f.ty(*v) {
                ir::Type::Prim(p) => laned(*p),
                ir::Type::Array { .. } => false,
            });
            if !scalars || !self.exp(&stmt.exp) {
                return false;
            }
            self.defined.extend(stmt.pat.iter().copied());
        }
        body.result.iter().all(|r| self.operand(*r))
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
                let Some((base, mut outer)) = self.input(*arr) else {
                    return false;
                };
                let Some((DimIndex::Fix(last), rest)) = idx.split_last() else {
                    return false;
                };
                for d in rest {
                    match d {
                        DimIndex::Fix(se) if self.uniform(*se) => outer.push(*se),
                        _ => return false,
                    }
                }
                let ir::Type::Array { elem, shape } = self.f.ty(base) else {
                    return false;
                };
                let ok = matches!(elem, P::F32 | P::I32)
                    && outer.len() + 1 == shape.len()
                    && *last == SubExp::Var(self.inner);
                if ok {
                    self.reads.push((base, outer));
                }
                ok
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
            _ => false,
        }
    }
}

/// Runs the points `i_start..` of the current segment (`s`, whose coordinates are bound) four
/// at a time while at least four remain and every read is in bounds; returns the first point
/// left for the scalar code. `outputs` are the element pointers of the kernel's results.
pub fn vector_points(
    g: &mut Gen,
    plan: &Plan,
    seg: &SegOp,
    (s, inner): (Value, Value),
    (i_start, i_end): (Value, Value),
    outputs: &[Value],
) -> Res<Value> {
    // In bounds: the uniform components, and the innermost extent covers the whole range.
    let mut ok = g.b.ins().iconst(cranelift_codegen::ir::types::I8, 1);
    for (arr, outer) in &plan.reads {
        let view = g.view(*arr)?;
        for (c, dim) in outer.iter().zip(&view.dims) {
            let c = g.scalar(*c)?;
            let inside = g.b.ins().icmp(IntCC::UnsignedLessThan, c, *dim);
            ok = g.b.ins().band(ok, inside);
        }
        let last = view.dims[view.dims.len() - 1];
        let covers = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, i_end, last);
        ok = g.b.ins().band(ok, covers);
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
        rows: &plan.rows,
        vals: HashMap::new(),
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
    rows: &'p HashMap<VarId, (VarId, Vec<SubExp>)>,
    vals: HashMap<VarId, Value>,
}

impl Lanes<'_> {
    fn body(&mut self, g: &mut Gen, body: &Body) -> Res<Vec<Value>> {
        for stmt in &body.stmts {
            if stmt.pat.len() == 1 && self.rows.contains_key(&stmt.pat[0]) {
                continue; // a row view: its reads are addressed from the input
            }
            let vals = self.exp(g, &stmt.exp)?;
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

    fn exp(&mut self, g: &mut Gen, exp: &Exp) -> Res<Vec<Value>> {
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
            Exp::Index(arr, idx) => {
                let (base, mut outer) = self.rows.get(arr).cloned().unwrap_or((*arr, Vec::new()));
                outer.extend(idx[..idx.len() - 1].iter().map(|d| match d {
                    DimIndex::Fix(c) => *c,
                    DimIndex::Slice { .. } => unreachable!("plan: reads are element indices"),
                }));
                let view = g.view(base)?;
                let size = elem_size(view.elem);
                let mut offset = g.b.ins().imul(self.i, view.strides[view.strides.len() - 1]);
                for (c, stride) in outer.iter().zip(&view.strides) {
                    let c = g.scalar(*c)?;
                    let part = g.b.ins().imul(c, *stride);
                    offset = g.b.ins().iadd(offset, part);
                }
                let bytes = g.b.ins().imul_imm_s(offset, size);
                let addr = g.b.ins().iadd(view.ptr, bytes);
                let flags = MemFlagsData::new().with_notrap();
                vec![g.b.ins().load(vector_type(view.elem), flags, addr, 0)]
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let mask = self.operand(g, *cond)?;
                let then_vals = self.body(g, then_body)?;
                let else_vals = self.body(g, else_body)?;
                then_vals
                    .into_iter()
                    .zip(else_vals)
                    .map(|(x, y)| Self::select(g, mask, x, y))
                    .collect()
            }
            _ => unreachable!("plan: only straight-line scalar code is vectorised"),
        })
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
