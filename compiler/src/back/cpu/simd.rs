//! SIMD code for map kernels: one point per lane, the point's sequential code once for a group
//! of points (issue 4 item 4, issue 22 item 1).
//!
//! A `Thread`-level `SegMap` runs consecutive points in the lanes of 128-bit vectors, as ISPC
//! maps program instances to lanes: the outer parallel dimension is vectorised, the point's code
//! is unchanged. The kernel's result types choose the lanes ([`Width`]): four for `f32`/`i32`
//! results (`f32x4`, `i32x4`; a `bool` is an `i32x4` lane mask), two for `f64`/`i64` results
//! (`f64x2`, `i64x2`; a `bool` is an `i64x2` mask). What the point's code may contain:
//!
//! - *Lane values*: scalars of the width's float and integer types and `bool`s, computed by
//!   arithmetic, comparisons, `sqrt`, `abs`, rounding, `min`/`max`, `isnan`, `isinf`,
//!   float↔integer conversions (lane by lane for 64-bit ones), and integer `/` and `%` by a
//!   constant power of two (an arithmetic shift, a mask: floored, as the interpreter's).
//! - *Uniform values*: scalars of any type that depend only on the kernel's inputs, on uniform
//!   values and on counters of uniform loops, computed by operations that cannot fail (any
//!   arithmetic but integer division, math functions, conversions) or read from an input at
//!   uniform indices. They are computed once per group, as scalar code, and splatted where
//!   lanes use them.
//! - *Reads* of the kernel's inputs (or of rows of them) with one index component the lane
//!   index and the others uniform: a vector load when the lane index is the last component, a
//!   gather (one load per lane at the row stride) otherwise (`let row = xss[i]` then `row[j]`).
//! - `if`s with scalar results. When no branch has a loop or a read that checks its index here,
//!   both branches are computed and the lanes selected (they cannot fail or have effects);
//!   otherwise each branch runs under its execution mask (the enclosing mask and the condition,
//!   or its negation) and only when a lane is active in it, so a branch no lane takes is
//!   skipped and a uniform condition runs one branch.
//! - Loops with scalar lane parameters: `for j < n` with a uniform `n` (every lane iterates
//!   together; `j` is uniform), `for j < n` with a lane value `n` and `while` loops, whose lanes
//!   finish at their own trip counts: the loop runs while a lane of its execution mask goes on,
//!   and the lanes that are done keep their parameters (a lane select after each iteration).
//!
//! Results are bit-identical to the scalar code: each lane performs the same IEEE operations in
//! the same order (no reassociation, no fused multiply-add), and `min`/`max`, comparisons and
//! conversions have the scalar code's semantics (NaN cases included). The points left over
//! (fewer than a group at the end of a range), every segment whose rows at the lane index are
//! not all in bounds, and every group in which a read at a uniform index would be out of bounds
//! (the group bails out before it stores anything) run the scalar code, which also reports any
//! error exactly as before. Anything else keeps the whole kernel scalar: reductions, scans and
//! arrays in the point's code, transcendental functions of lane values (helper calls), lane
//! values of another width than the results', and reads at lane-dependent indices (per-lane
//! gathers: tried for STL's LOESS kernels, two lanes of `f64`, and slower than the scalar code).
//!
//! Invariants relied on: kernel inputs are contiguous and row-major (so the innermost index
//! addresses consecutive elements), a scalar result of a map kernel occupies one element of its
//! output per point, and the kernel's index range satisfies `0 <= i_start <= i_end`.
//!
//! Setting `OGHAM_SIMD=0` in the environment of the compiling process turns this off (for
//! measurements).

use super::codegen::{Gen, Res, clif_type, elem_size, float_min_max};
use super::helpers::is_inline_float_math;
use crate::back::lower;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, F64X2, I8, I32X4, I64, I64X2};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::Variable;
use ogham_ir::kir::{SegKind, SegLevel, SegOp};
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Const, DimIndex, Exp, LoopForm, SubExp, VarId};
use std::collections::{HashMap, HashSet};

/// The lanes of a kernel's vectors: four 32-bit lanes (`f32`, `i32`; a `bool` is an `i32x4`
/// lane mask) or two 64-bit lanes (`f64`, `i64`; a `bool` is an `i64x2` mask), chosen by the
/// kernel's result types.
#[derive(Clone, Copy, PartialEq)]
pub enum Width {
    Four,
    Two,
}

impl Width {
    /// Points per vector iteration.
    fn lanes(self) -> i64 {
        match self {
            Width::Four => 4,
            Width::Two => 2,
        }
    }

    fn float(self) -> PrimType {
        match self {
            Width::Four => PrimType::F32,
            Width::Two => PrimType::F64,
        }
    }

    fn int(self) -> PrimType {
        match self {
            Width::Four => PrimType::I32,
            Width::Two => PrimType::I64,
        }
    }

    /// Whether a scalar type has lanes here.
    fn laned(self, t: PrimType) -> bool {
        t == self.float() || t == self.int() || t == PrimType::Bool
    }

    /// The vector of a laned type (a `bool` as its mask).
    fn vector(self, t: PrimType) -> Type {
        match (self, t == self.float()) {
            (Width::Four, true) => F32X4,
            (Width::Four, false) => I32X4,
            (Width::Two, true) => F64X2,
            (Width::Two, false) => I64X2,
        }
    }

    fn mask(self) -> Type {
        self.vector(self.int())
    }
}

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
    /// The first variable bound by each `if` whose branches run under execution masks.
    masked: HashSet<VarId>,
    width: Width,
}

/// The plan for kernel `seg` of function `f`, or `None` when its point's code is not in the
/// subset described in the module header (or SIMD is turned off).
pub fn plan(f: &ogham_ir::Function, seg: &SegOp) -> Option<Plan> {
    if std::env::var_os("OGHAM_SIMD").is_some_and(|v| v == "0") {
        return None;
    }
    if seg.kind != SegKind::Map || seg.level != SegLevel::Thread {
        return None;
    }
    let width = if seg
        .ret
        .iter()
        .all(|t| matches!(t, ogham_ir::Type::Prim(PrimType::F32 | PrimType::I32)))
    {
        Width::Four
    } else if seg
        .ret
        .iter()
        .all(|t| matches!(t, ogham_ir::Type::Prim(PrimType::F64 | PrimType::I64)))
    {
        Width::Two
    } else {
        return None;
    };
    let mut check = Check {
        f,
        inner: seg.space.last()?.0,
        space: seg.space.iter().map(|(v, _)| *v).collect(),
        defined: HashSet::new(),
        local: HashSet::new(),
        rows: HashMap::new(),
        reads: Vec::new(),
        uniform: HashSet::new(),
        masked: HashSet::new(),
        checked: 0,
        width,
    };
    check.body(&seg.body).then_some(Plan {
        rows: check.rows,
        reads: check.reads,
        uniform: check.uniform,
        masked: check.masked,
        width,
    })
}

struct Check<'a> {
    f: &'a ogham_ir::Function,
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
    masked: HashSet<VarId>,
    /// Loops and reads that check their indices seen so far (an `if` around one runs its
    /// branches under masks: they must not run for lanes that do not take the branch).
    checked: usize,
    width: Width,
}

impl Check<'_> {
    fn laned(&self, t: PrimType) -> bool {
        self.width.laned(t)
    }

    fn prim(&self, se: SubExp) -> Option<PrimType> {
        match self.f.subexp_type(se) {
            ogham_ir::Type::Prim(p) => Some(p),
            ogham_ir::Type::Array { .. } => None,
        }
    }

    /// An operand of a lane operation: a lane value or a uniform scalar (splatted).
    fn operand(&self, se: SubExp) -> bool {
        match se {
            SubExp::Const(_) => self.prim(se).is_some_and(|t| self.laned(t)),
            SubExp::Var(v) => {
                v != self.inner
                    && (self.defined.contains(&v) || self.prim(se).is_some_and(|t| self.laned(t)))
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
        let ok = prefix.iter().all(|c| {
            matches!(c, Comp::Lane) || matches!(c, Comp::Uniform(se) if self.kernel_uniform(*se))
        });
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
                    ogham_ir::Type::Prim(p) => Some(*p),
                    ogham_ir::Type::Array { .. } => None,
                })
                .collect();
            let Some(prims) = prims else {
                return false;
            };
            let read = self.uniform_read(&stmt.exp);
            if !stmt.pat.is_empty() && (self.uniform_exp(&stmt.exp) || read) {
                self.checked += read as usize;
                self.uniform.insert(stmt.pat[0]);
                self.local.extend(stmt.pat.iter().copied());
                continue;
            }
            if !prims.iter().all(|p| self.laned(*p)) || !self.exp(&stmt.exp, &stmt.pat) {
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
                !fails && self.uniform(*a) && self.uniform(*b)
            }
            Exp::Math(_, _, args) => args.iter().all(|a| self.uniform(*a)),
            _ => false,
        }
    }

    fn exp(&mut self, exp: &Exp, pat: &[VarId]) -> bool {
        let (float, int) = (self.width.float(), self.width.int());
        match exp {
            Exp::SubExp(se) => self.operand(*se),
            Exp::BinOp(op, a, b) => {
                use BinOp as B;
                let compare = matches!(op, B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge);
                let ok = match self.prim(*a) {
                    Some(t) if t == float => {
                        compare || matches!(op, B::Add | B::Sub | B::Mul | B::Div)
                    }
                    Some(t) if t == int => {
                        compare
                            || matches!(
                                op,
                                B::Add | B::Sub | B::Mul | B::BitAnd | B::BitOr | B::BitXor
                            )
                            || (matches!(op, B::Div | B::Mod) && power_of_two(*b).is_some())
                    }
                    Some(PrimType::Bool) => {
                        matches!(op, B::BitAnd | B::BitOr | B::BitXor | B::Eq | B::Ne)
                    }
                    _ => false,
                };
                ok && self.operand(*a) && self.operand(*b)
            }
            Exp::UnOp(op, a) => {
                let t = self.prim(*a);
                let ok = match op {
                    UnOp::Neg => t == Some(float) || t == Some(int),
                    UnOp::Not => t == Some(int) || t == Some(PrimType::Bool),
                };
                ok && self.operand(*a)
            }
            Exp::Math(f, t, args) => {
                let ok = if *t == float {
                    is_inline_float_math(*f)
                } else {
                    *t == int && matches!(f, MathFn::Min | MathFn::Max | MathFn::Abs)
                };
                ok && args.iter().all(|a| self.operand(*a))
            }
            Exp::Convert(to, a) => {
                let from = self.prim(*a);
                (from == Some(float) || from == Some(int))
                    && (*to == float || *to == int)
                    && self.operand(*a)
            }
            Exp::Index(arr, idx) => {
                let Some((base, comps, rank)) = self.components(*arr, idx) else {
                    return false;
                };
                let elem = self.f.ty(base).elem();
                let Some(lane) = comps.iter().position(|c| *c == Comp::Lane) else {
                    return false;
                };
                // Components after the lane's are checked where the read is.
                if lane + 1 < comps.len() {
                    self.checked += 1;
                }
                (elem == float || elem == int)
                    && comps.len() == rank
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
                    .all(|t| matches!(t, ogham_ir::Type::Prim(p) if self.laned(*p)))
                    && self.operand(*cond);
                let before = self.checked;
                let ok = ok && self.body(then_body) && self.body(else_body);
                if self.checked > before
                    && let Some(first) = pat.first()
                {
                    self.masked.insert(*first);
                }
                ok
            }
            Exp::Loop { params, form, body } => {
                self.checked += 1;
                let lane_params = params.iter().all(|(p, init)| {
                    matches!(self.f.ty(*p), ogham_ir::Type::Prim(t) if self.laned(*t))
                        && self.operand(*init)
                });
                if !lane_params {
                    return false;
                }
                self.defined.extend(params.iter().map(|(p, _)| *p));
                let form_ok = match form {
                    LoopForm::For { index, bound } if self.uniform(*bound) => {
                        self.local.insert(*index);
                        true
                    }
                    // A per-lane trip count: the counter is a lane value.
                    LoopForm::For { index, bound } => {
                        self.defined.insert(*index);
                        self.prim(*bound) == Some(int) && self.operand(*bound)
                    }
                    LoopForm::While { cond } => params.iter().any(|(p, _)| p == cond),
                };
                form_ok && self.body(body)
            }
            _ => false,
        }
    }
}

/// `k` when `se` is the integer constant `2^k` with `k >= 1`.
fn power_of_two(se: SubExp) -> Option<u32> {
    let n = match se {
        SubExp::Const(Const::I32(n)) => n as i64,
        SubExp::Const(Const::I64(n)) => n,
        _ => return None,
    };
    (n >= 2 && n.count_ones() == 1).then(|| n.trailing_zeros())
}

/// Runs the points `i_start..` of the current segment (`s`, whose coordinates are bound) a
/// group of lanes at a time while a whole group remains and every read's lane component is in
/// bounds; returns the first point left for the scalar code. `outputs` are the element
/// pointers of the kernel's results.
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
    let lanes = plan.width.lanes();
    let cursor = g.b.declare_var(I64);
    g.b.def_var(cursor, i_start);
    let (header, body, exit) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
    g.b.ins().brif(ok, header, &[], exit, &[]);
    g.b.switch_to_block(header);
    let i = g.b.use_var(cursor);
    let left = g.b.ins().isub(i_end, i);
    let more =
        g.b.ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, left, lanes);
    g.loop_branch(more, body, exit);
    g.b.switch_to_block(body);
    g.b.seal_block(body);
    let mut group = Lanes {
        i,
        inner: seg.space[seg.space.len() - 1].0,
        plan,
        width: plan.width,
        vals: HashMap::new(),
        mask: None,
        bail: exit,
    };
    let results = group.body(g, &seg.body)?;
    let row_start = g.b.ins().imul(s, inner);
    let p = g.b.ins().iadd(row_start, i);
    for ((out, val), ty) in outputs.iter().zip(results).zip(&seg.ret) {
        let bytes = g.b.ins().imul_imm_s(p, elem_size(ty.elem()));
        let addr = g.b.ins().iadd(*out, bytes);
        g.b.ins()
            .store(MemFlagsData::new().with_notrap(), val, addr, 0);
    }
    let next = g.b.ins().iadd_imm_s(i, lanes);
    g.b.def_var(cursor, next);
    g.b.ins().jump(header, &[]);
    g.b.seal_block(header);
    g.b.switch_to_block(exit);
    g.b.seal_block(exit);
    Ok(g.b.use_var(cursor))
}

/// The lane values of the current group of points.
struct Lanes<'p> {
    /// The first point's innermost index.
    i: Value,
    /// The innermost space variable (the lane index).
    inner: VarId,
    plan: &'p Plan,
    width: Width,
    vals: HashMap<VarId, Value>,
    /// The lanes the code being emitted runs for (`None`: all of them). Code under a mask
    /// runs only when one of its lanes is active.
    mask: Option<Value>,
    /// Where a group goes when a read would be out of bounds: the scalar code, from the
    /// group's first point (nothing of the group is stored yet).
    bail: Block,
}

impl Lanes<'_> {
    fn body(&mut self, g: &mut Gen, body: &Body) -> Res<Vec<Value>> {
        for stmt in &body.stmts {
            if stmt.pat.len() == 1 && self.plan.rows.contains_key(&stmt.pat[0]) {
                continue; // a row: its reads are addressed from the input
            }
            if stmt
                .pat
                .first()
                .is_some_and(|v| self.plan.uniform.contains(v))
            {
                match &stmt.exp {
                    Exp::Index(arr, idx) => {
                        let x = self.read(g, *arr, idx)?;
                        g.bind(stmt.pat[0], &[x]);
                    }
                    _ => lower::stmt(g, stmt)?,
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

    /// The lanes of an operand: its vector, or a uniform scalar splatted (a `bool` as a lane
    /// mask).
    fn operand(&mut self, g: &mut Gen, se: SubExp) -> Res<Value> {
        if let SubExp::Var(v) = se
            && let Some(val) = self.vals.get(&v)
        {
            return Ok(*val);
        }
        let t = Self::prim(g, se);
        let int = clif_type(self.width.int());
        let x = match se {
            SubExp::Const(Const::Bool(b)) => g.b.ins().iconst(int, -(b as i64)),
            _ if t == PrimType::Bool => {
                let x = g.scalar(se)?;
                let wide = g.b.ins().uextend(int, x);
                g.b.ins().ineg(wide)
            }
            _ => g.scalar(se)?,
        };
        Ok(g.b.ins().splat(self.width.vector(t), x))
    }

    /// `mask ? x : y` lane by lane (`mask` a vector of all-ones or zero lanes).
    fn select(g: &mut Gen, mask: Value, x: Value, y: Value) -> Value {
        let ty = g.b.func.dfg.value_type(x);
        let mask = if g.b.func.dfg.value_type(mask) == ty {
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
    fn var_type(&self, g: &Gen, v: VarId) -> Type {
        self.width.vector(g.f.ty(v).elem())
    }

    /// A vector of zero lanes of type `ty`.
    fn zeros(&self, g: &mut Gen, ty: Type) -> Value {
        let int = self.width.mask();
        let zero = g.b.ins().iconst(clif_type(self.width.int()), 0);
        let zeros = g.b.ins().splat(int, zero);
        if ty == int {
            zeros
        } else {
            g.b.ins().bitcast(ty, MemFlagsData::new(), zeros)
        }
    }

    /// `op` on each lane of `x` as scalar code (conversions with no vector instruction here).
    fn per_lane(
        &self,
        g: &mut Gen,
        x: Value,
        to: Type,
        op: &dyn Fn(&mut Gen, Value) -> Value,
    ) -> Value {
        let mut out = None;
        for l in 0..self.width.lanes() as u8 {
            let e = g.b.ins().extractlane(x, l);
            let r = op(g, e);
            out = Some(match out {
                None => g.b.ins().splat(to, r),
                Some(v) => g.b.ins().insertlane(v, r, l),
            });
        }
        out.expect("a group has lanes")
    }

    fn exp(&mut self, g: &mut Gen, exp: &Exp, pat: &[VarId]) -> Res<Vec<Value>> {
        Ok(match exp {
            Exp::SubExp(se) => vec![self.operand(g, *se)?],
            Exp::BinOp(op, a, b) => {
                let t = Self::prim(g, *a);
                let x = self.operand(g, *a)?;
                if let (BinOp::Div | BinOp::Mod, Some(k)) = (op, power_of_two(*b)) {
                    // Floored division and modulo by `2^k`: an arithmetic shift, the low bits.
                    return Ok(vec![if *op == BinOp::Div {
                        g.b.ins().sshr_imm_s(x, k as i64)
                    } else {
                        let low = g.b.ins().iconst(clif_type(t), (1i64 << k) - 1);
                        let low = g.b.ins().splat(self.width.vector(t), low);
                        g.b.ins().band(x, low)
                    }]);
                }
                let y = self.operand(g, *b)?;
                vec![Self::binop(g, *op, t, x, y)]
            }
            Exp::UnOp(op, a) => {
                let t = Self::prim(g, *a);
                let x = self.operand(g, *a)?;
                vec![match (op, t) {
                    (UnOp::Neg, PrimType::F32 | PrimType::F64) => g.b.ins().fneg(x),
                    (UnOp::Neg, _) => g.b.ins().ineg(x),
                    (UnOp::Not, _) => g.b.ins().bnot(x),
                }]
            }
            Exp::Math(f, t, args) => {
                let args: Vec<Value> = args
                    .iter()
                    .map(|a| self.operand(g, *a))
                    .collect::<Res<_>>()?;
                vec![self.math(g, *f, *t, &args)]
            }
            Exp::Convert(to, a) => {
                let from = Self::prim(g, *a);
                let x = self.operand(g, *a)?;
                let vto = self.width.vector(*to);
                let sto = clif_type(*to);
                vec![match (from, *to) {
                    _ if from == *to => x,
                    (PrimType::I32, PrimType::F32) => g.b.ins().fcvt_from_sint(F32X4, x),
                    (PrimType::F32, PrimType::I32) => g.b.ins().fcvt_to_sint_sat(I32X4, x),
                    (PrimType::I64, _) => {
                        self.per_lane(g, x, vto, &|g, e| g.b.ins().fcvt_from_sint(sto, e))
                    }
                    _ => self.per_lane(g, x, vto, &|g, e| g.b.ins().fcvt_to_sint_sat(sto, e)),
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
                let (then_vals, else_vals) =
                    if pat.first().is_some_and(|v| self.plan.masked.contains(v)) {
                        let not = g.b.ins().bnot(cond);
                        (
                            self.masked(g, cond, then_body, pat)?,
                            self.masked(g, not, else_body, pat)?,
                        )
                    } else {
                        (self.body(g, then_body)?, self.body(g, else_body)?)
                    };
                then_vals
                    .into_iter()
                    .zip(else_vals)
                    .map(|(x, y)| Self::select(g, cond, x, y))
                    .collect()
            }
            Exp::Loop { params, form, body } => self.run_loop(g, params, form, body, pat)?,
            _ => unreachable!("plan: only the subset in the module header is vectorised"),
        })
    }

    /// `body` (a branch of an `if` whose results are `pat`) for the lanes of `mask and cond`,
    /// run only when one of them is active; the lanes' results (zero when it does not run: no
    /// lane selects them).
    fn masked(&mut self, g: &mut Gen, cond: Value, body: &Body, pat: &[VarId]) -> Res<Vec<Value>> {
        let mask = self.and_mask(g, cond);
        let outer = self.mask.replace(mask);
        let results: Vec<Variable> = pat
            .iter()
            .map(|v| {
                let ty = self.var_type(g, *v);
                let var = g.b.declare_var(ty);
                let zeros = self.zeros(g, ty);
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
    /// iterate together), or a `for` with a per-lane bound or a `while`, which run until no
    /// lane of the execution mask goes on (finished lanes keep their parameters).
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
            let var = g.b.declare_var(self.var_type(g, *p));
            g.b.def_var(var, x);
            vars.push(var);
        }
        // The counter of a `for`: a scalar for a uniform bound, a vector for a per-lane one.
        let per_lane = matches!(form, LoopForm::For { bound: SubExp::Var(b), .. }
            if self.vals.contains_key(b));
        let counter = if per_lane {
            let ty = self.width.mask();
            let var = g.b.declare_var(ty);
            let zeros = self.zeros(g, ty);
            g.b.def_var(var, zeros);
            var
        } else {
            let var = g.b.declare_var(I64);
            let zero = g.iconst(0);
            g.b.def_var(var, zero);
            var
        };
        let (header, inner, exit) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
        g.b.ins().jump(header, &[]);
        g.b.switch_to_block(header);
        for ((p, _), var) in params.iter().zip(&vars) {
            let x = g.b.use_var(*var);
            self.vals.insert(*p, x);
        }
        let outer = self.mask;
        let j = g.b.use_var(counter);
        let live = match form {
            LoopForm::For { index, bound } if per_lane => {
                self.vals.insert(*index, j);
                let bound = self.operand(g, *bound)?;
                let go = g.b.ins().icmp(IntCC::SignedLessThan, j, bound);
                Some(self.and_mask(g, go))
            }
            LoopForm::For { index, bound } => {
                g.bind(*index, &[j]);
                let bound = g.scalar(*bound)?;
                let go = g.b.ins().icmp(IntCC::SignedLessThan, j, bound);
                g.loop_branch(go, inner, exit);
                None
            }
            LoopForm::While { cond } => {
                let c = self.vals[cond];
                Some(self.and_mask(g, c))
            }
        };
        if let Some(live) = live {
            let any = g.b.ins().vany_true(live);
            g.loop_branch(any, inner, exit);
            self.mask = Some(live);
        }
        g.b.switch_to_block(inner);
        g.b.seal_block(inner);
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
        let next = if per_lane {
            let one = g.b.ins().iconst(clif_type(self.width.int()), 1);
            let ones = g.b.ins().splat(self.width.mask(), one);
            g.b.ins().iadd(j, ones)
        } else {
            g.b.ins().iadd_imm_s(j, 1)
        };
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

    /// A read of an input: with a lane component, consecutive elements when it is the last,
    /// else one element of each lane's row (a gather at the stride of the lane's dimension);
    /// without one, a uniform scalar. Components after the lane's (all of them for a uniform
    /// read) are checked here: out of bounds, the group runs as scalar code.
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
        // The lane's component, if any, is checked before the segment runs.
        let at = comps.iter().position(|c| *c == Comp::Lane);
        let mut ok = None;
        for (k, c) in comps.iter().enumerate().skip(at.map_or(0, |a| a + 1)) {
            let Comp::Uniform(c) = c else { continue };
            let c = g.scalar(*c)?;
            let inside = g.b.ins().icmp(IntCC::UnsignedLessThan, c, view.dims[k]);
            ok = Some(match ok {
                Some(ok) => g.b.ins().band(ok, inside),
                None => inside,
            });
        }
        if let Some(ok) = ok {
            self.bail_unless(g, ok);
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
        let bytes = g.b.ins().imul_imm_s(offset, size);
        let addr = g.b.ins().iadd(view.ptr, bytes);
        let flags = MemFlagsData::new().with_notrap();
        let ety = clif_type(view.elem);
        let Some(at) = at else {
            return Ok(g.b.ins().load(ety, flags, addr, 0));
        };
        let vty = self.width.vector(view.elem);
        if at + 1 == comps.len() {
            return Ok(g.b.ins().load(vty, flags, addr, 0));
        }
        let step = g.b.ins().imul_imm_s(view.strides[at], size);
        let x = g.b.ins().load(ety, flags, addr, 0);
        let mut v = g.b.ins().splat(vty, x);
        let mut a = addr;
        for l in 1..self.width.lanes() as u8 {
            a = g.b.ins().iadd(a, step);
            let x = g.b.ins().load(ety, flags, a, 0);
            v = g.b.ins().insertlane(v, x, l);
        }
        Ok(v)
    }

    /// Goes on when `ok` (a scalar truth value) holds, else leaves the group to the scalar code.
    fn bail_unless(&self, g: &mut Gen, ok: Value) {
        let next = g.b.create_block();
        g.b.ins().brif(ok, next, &[], self.bail, &[]);
        g.b.switch_to_block(next);
        g.b.seal_block(next);
    }

    fn binop(g: &mut Gen, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let ins = g.b.ins();
        if matches!(t, PrimType::F32 | PrimType::F64) {
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
        // Integers and bool masks.
        let cc = match op {
            BinOp::Add => return ins.iadd(x, y),
            BinOp::Sub => return ins.isub(x, y),
            BinOp::Mul => return ins.imul(x, y),
            BinOp::BitAnd => return ins.band(x, y),
            BinOp::BitOr => return ins.bor(x, y),
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

    fn math(&self, g: &mut Gen, f: MathFn, t: PrimType, args: &[Value]) -> Value {
        let x = args[0];
        if matches!(t, PrimType::I32 | PrimType::I64) {
            if f == MathFn::Abs {
                // Wrapping, as the interpreter's (`abs MIN = MIN`).
                let zeros = self.zeros(g, self.width.mask());
                let negative = g.b.ins().icmp(IntCC::SignedLessThan, x, zeros);
                let minus = g.b.ins().ineg(x);
                return Self::select(g, negative, minus, x);
            }
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
            MathFn::IsInf => {
                let a = ins.fabs(x);
                let inf = if t == PrimType::F32 {
                    g.b.ins().f32const(f32::INFINITY)
                } else {
                    g.b.ins().f64const(f64::INFINITY)
                };
                let inf = g.b.ins().splat(self.width.vector(t), inf);
                g.b.ins().fcmp(FloatCC::Equal, a, inf)
            }
            _ => float_min_max(g, f, x, args[1], Self::select),
        }
    }
}
