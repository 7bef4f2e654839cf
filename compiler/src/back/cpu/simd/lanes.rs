//! Lane code: the statements of a map kernel's point code for a group of points, one point
//! per lane (loops and reductions: `loops.rs`).

use super::PointArray;
use super::{Comp, Plan, Width};
use crate::back::cpu::codegen::{Gen, Res, clif_type, elem_size, float_min_max};
use crate::back::cpu::early_calls;
use crate::back::cpu::helpers::is_inline_float_math;
use crate::back::cpu::scalar::{float_cc, int_cc};
use crate::back::lower;
use crate::back::steps::{self, Bits, FloatSteps, Target};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I32, I32X4, I64};
use cranelift_codegen::ir::{
    Block, InstBuilder, InstructionData, MemFlagsData, Opcode, Type, Value, ValueDef,
};
use cranelift_frontend::Variable;
use ogham_ir::kir::SegOp;
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Const, DimIndex, Exp, Soac, SubExp, VarId};
use std::collections::HashMap;

/// The largest `iota` of lane code: the scalar code allocates one (8 bytes an element, from
/// the worker's arena), which may fail for a large one; a group with a larger one (or a
/// negative one, an error) runs the scalar code.
const MAX_IOTA: i64 = 1 << 16;

/// The lane values of the current group of points.
pub(super) struct Lanes<'p> {
    /// The first point's innermost index.
    i: Value,
    /// The innermost space variable (the lane index; `None` in an elementwise map).
    inner: Option<VarId>,
    pub(super) plan: &'p Plan,
    pub(super) width: Width,
    pub(super) vals: HashMap<VarId, Value>,
    /// The lanes the code being emitted runs for (`None`: all of them). Code under a mask
    /// runs only when one of its lanes is active.
    pub(super) mask: Option<Value>,
    /// Where a group goes when a read would be out of bounds: the scalar code, from the
    /// group's first point (nothing of the group is stored yet).
    bail: Block,
    /// The lanes extracted from vectors, by block, vector and lane: reused within a block, so
    /// that `sin x` and `cos x` of one lane share the scalar code's helper call.
    extracted: HashMap<(Block, Value, u8), Value>,
    /// The group's per-point arrays (`arrays.rs`), by name.
    pub(super) arrays: HashMap<VarId, PointArray>,
}

impl<'p> Lanes<'p> {
    /// The group whose first point's innermost index is `i`, of kernel `seg` under `plan`;
    /// `bail` is where it leaves to the scalar code.
    pub(super) fn new(i: Value, seg: &SegOp, plan: &'p Plan, bail: Block) -> Lanes<'p> {
        Lanes {
            i,
            inner: Some(seg.space[seg.space.len() - 1].0),
            plan,
            width: plan.width,
            vals: HashMap::new(),
            mask: None,
            bail,
            extracted: HashMap::new(),
            arrays: HashMap::new(),
        }
    }

    /// The iteration block from `i` of an elementwise map (`elementwise.rs`) under `plan`, whose
    /// parameters' lanes are `vals`; `bail` is where it leaves to the scalar code.
    pub(super) fn elementwise(
        i: Value,
        plan: &'p Plan,
        bail: Block,
        vals: HashMap<VarId, Value>,
    ) -> Lanes<'p> {
        Lanes {
            i,
            inner: None,
            plan,
            width: plan.width,
            vals,
            mask: None,
            bail,
            extracted: HashMap::new(),
            arrays: HashMap::new(),
        }
    }

    pub(super) fn body(&mut self, g: &mut Gen, body: &Body) -> Res<Vec<Value>> {
        // Helper calls first, as in the scalar code (`early_calls.rs`): lane by lane they are
        // calls too, and no vector register survives one.
        let order =
            early_calls::order(g.f, body).unwrap_or_else(|| (0..body.stmts.len()).collect());
        for stmt in order.into_iter().map(|k| &body.stmts[k]) {
            if stmt.pat.len() == 1
                && let Some((base, comps)) = self.plan.rows.get(&stmt.pat[0]).cloned()
            {
                // A row: its reads are addressed from the input. Its index is checked here, where
                // the scalar code checks it, even if no element of it is ever read.
                // Not again: the components of the outer row of a row of a row, checked at it,
                // and uniform components that a read with a lane component after them checks
                // before the segment runs.
                let outer = match &stmt.exp {
                    Exp::Index(arr, _) => self.plan.rows.get(arr).map_or(0, |(_, c)| c.len()),
                    _ => 0,
                };
                let prechecked = self.plan.reads.iter().any(|(b, read)| {
                    *b == base && read.len() > comps.len() && read.starts_with(&comps)
                });
                let from = if prechecked { comps.len() } else { outer };
                if from < comps.len() {
                    let parts = Self::parts(g, &comps)?;
                    self.check(g, base, &parts, from..parts.len())?;
                }
                continue;
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
            if self.array_stmt(g, &stmt.exp, &stmt.pat)? {
                continue;
            }
            // The lane values of the statement's scalars (an `if` or a loop also passes arrays,
            // which it binds itself).
            let vals = self.exp(g, &stmt.exp, &stmt.pat)?;
            let scalars = stmt.pat.iter().filter(|v| g.f.ty(**v).rank() == 0);
            for (v, val) in scalars.zip(vals) {
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
    pub(super) fn operand(&mut self, g: &mut Gen, se: SubExp) -> Res<Value> {
        if let SubExp::Var(v) = se
            && let Some(val) = self.vals.get(&v)
        {
            return Ok(*val);
        }
        if let SubExp::Var(v) = se
            && let Some(array) = self.array(v)
        {
            // A per-point array passed through an `if` or a loop: its memory.
            return Ok(array.ptr());
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

    /// `mask ? x : y` lane by lane (`mask` a vector of all-ones or zero lanes). Between integer
    /// lanes with a zero arm, the same bits with fewer constants: `mask & x` (`mask` itself
    /// for `x` all ones) or `y & !mask` (`!mask` for `y` all ones), so that no zero vector is
    /// kept in a register (or spilled) for it.
    pub(super) fn select(g: &mut Gen, mask: Value, x: Value, y: Value) -> Value {
        let ty = g.b.func.dfg.value_type(x);
        let mask = if g.b.func.dfg.value_type(mask) == ty {
            mask
        } else {
            g.b.ins().bitcast(ty, MemFlagsData::new(), mask)
        };
        let int = match ty.lane_type() {
            I32 => Some(PrimType::I32),
            I64 => Some(PrimType::I64),
            _ => None,
        };
        if let Some(t) = int {
            match (splatted(g, t, x), splatted(g, t, y)) {
                (Some(-1), Some(0)) => return mask,
                (_, Some(0)) => return g.b.ins().band(mask, x),
                (Some(0), Some(-1)) => return g.b.ins().bnot(mask),
                (Some(0), _) => return g.b.ins().band_not(y, mask),
                _ => {}
            }
        }
        g.b.ins().bitselect(mask, x, y)
    }

    /// The execution mask `mask and cond` (`cond` alone when all lanes run).
    pub(super) fn and_mask(&self, g: &mut Gen, cond: Value) -> Value {
        match self.mask {
            Some(m) => g.b.ins().band(m, cond),
            None => cond,
        }
    }

    /// The vector type of an IR scalar variable.
    fn var_type(&self, g: &Gen, v: VarId) -> Type {
        self.width.vector(g.f.ty(v).elem())
    }

    /// The scalar ones of an `if`'s results `vals` (bound to `pat`, the branch's `results`);
    /// each array result is bound to the per-point array the branch returns, which is the same
    /// memory in both branches (the plan's rule) and which each branch updated for its lanes.
    fn scalar_results(
        &mut self,
        g: &Gen,
        pat: &[VarId],
        results: &[SubExp],
        vals: Vec<Value>,
    ) -> Vec<Value> {
        let mut scalars = Vec::new();
        for ((v, r), x) in pat.iter().zip(results).zip(vals) {
            if g.f.ty(*v).rank() == 0 {
                scalars.push(x);
            } else if let SubExp::Var(a) = r
                && let Some(array) = self.array(*a)
            {
                self.arrays.insert(*v, array);
            }
        }
        scalars
    }

    /// A vector of zero lanes of type `ty`.
    pub(super) fn zeros(&self, g: &mut Gen, ty: Type) -> Value {
        let int = self.width.mask();
        let zero = g.b.ins().iconst(clif_type(self.width.int()), 0);
        let zeros = g.b.ins().splat(int, zero);
        if ty == int {
            zeros
        } else {
            g.b.ins().bitcast(ty, MemFlagsData::new(), zeros)
        }
    }

    /// `op` on each lane of `args` as scalar code (conversions with no vector instruction
    /// here, math functions by their helpers): a vector of type `to`.
    fn per_lane(
        &mut self,
        g: &mut Gen,
        args: &[Value],
        to: Type,
        op: &dyn Fn(&mut Gen, &[Value]) -> Value,
    ) -> Value {
        let block = g.b.current_block().expect("code is emitted into a block");
        let mut out = None;
        for l in 0..self.width.lanes() as u8 {
            let xs: Vec<Value> = args
                .iter()
                .map(|a| {
                    *self
                        .extracted
                        .entry((block, *a, l))
                        .or_insert_with(|| g.b.ins().extractlane(*a, l))
                })
                .collect();
            let r = op(g, &xs);
            out = Some(match out {
                None => g.b.ins().splat(to, r),
                Some(v) => g.b.ins().insertlane(v, r, l),
            });
        }
        out.expect("a group has lanes")
    }

    /// Whether `se` is a lane value here (else a uniform scalar).
    pub(super) fn is_lane(&self, se: SubExp) -> bool {
        matches!(se, SubExp::Var(v) if self.vals.contains_key(&v))
    }

    fn exp(&mut self, g: &mut Gen, exp: &Exp, pat: &[VarId]) -> Res<Vec<Value>> {
        Ok(match exp {
            Exp::SubExp(se) => vec![self.operand(g, *se)?],
            Exp::BinOp(op, a, b) => {
                let t = Self::prim(g, *a);
                let x = self.operand(g, *a)?;
                if let Some(n) = b.int_value() {
                    // Floored division and modulo by `2^k`: a shift, the low bits.
                    let mut lanes = LaneBits {
                        g: &mut *g,
                        width: self.width,
                    };
                    if let Some(r) = steps::by_power_of_two(&mut lanes, *op, t, x, n) {
                        return Ok(vec![r]);
                    }
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
                        self.per_lane(g, &[x], vto, &|g, e| g.b.ins().fcvt_from_sint(sto, e[0]))
                    }
                    _ => self.per_lane(g, &[x], vto, &|g, e| g.b.ins().fcvt_to_sint_sat(sto, e[0])),
                }]
            }
            Exp::Index(arr, idx) => vec![self.read(g, *arr, idx)?],
            Exp::If {
                cond: SubExp::Var(c),
                then_body,
                else_body,
                ..
            } if g.unswitched.contains_key(c) => {
                // In a copy of an unswitched loop (`unswitch.rs`): the branch it takes.
                let body = if g.unswitched[c] {
                    then_body
                } else {
                    else_body
                };
                let vals = self.body(g, body)?;
                self.scalar_results(g, pat, &body.result, vals)
            }
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
                        let then_vals = self.body(g, then_body)?;
                        let then_vals = self.scalar_results(g, pat, &then_body.result, then_vals);
                        let else_vals = self.body(g, else_body)?;
                        let else_vals = self.scalar_results(g, pat, &else_body.result, else_vals);
                        (then_vals, else_vals)
                    };
                then_vals
                    .into_iter()
                    .zip(else_vals)
                    .map(|(x, y)| Self::select(g, cond, x, y))
                    .collect()
            }
            Exp::Loop { params, form, body } => self.run_loop(g, params, form, body, pat)?,
            Exp::Iota(n) => {
                self.iota_size(g, *n)?;
                Vec::new()
            }
            Exp::Soac(Soac::Screma {
                width,
                inputs,
                map,
                reds,
                ..
            }) => self.reduction(g, *width, inputs, map, reds)?,
            _ => unreachable!("plan: only the subset in the module header is vectorised"),
        })
    }

    /// `body` (a branch of an `if` whose results are `pat`) for the lanes of `mask and cond`,
    /// run only when one of them is active; the lanes' scalar results (zero when it does not
    /// run: no lane selects them; per-point arrays are updated in place).
    fn masked(&mut self, g: &mut Gen, cond: Value, body: &Body, pat: &[VarId]) -> Res<Vec<Value>> {
        let mask = self.and_mask(g, cond);
        let outer = self.mask.replace(mask);
        let results: Vec<Variable> = pat
            .iter()
            .filter(|v| g.f.ty(**v).rank() == 0)
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
        let vals = self.scalar_results(g, pat, &body.result, vals);
        for (var, val) in results.iter().zip(vals) {
            g.b.def_var(*var, val);
        }
        g.b.ins().jump(merge, &[]);
        g.b.switch_to_block(merge);
        g.b.seal_block(merge);
        self.mask = outer;
        Ok(results.iter().map(|v| g.b.use_var(*v)).collect())
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
            comps.push(if Some(*c) == self.inner.map(SubExp::Var) {
                Comp::Lane
            } else {
                Comp::Uniform(*c)
            });
        }
        let row = self.plan.rows.get(&arr).map_or(0, |(_, c)| c.len());
        let parts = Self::parts(g, &comps)?;
        let n = parts.len();
        self.check(g, base, &parts, row..n)?;
        self.load(g, base, &parts)
    }

    /// Element `j` (a uniform scalar) of an in-point reduction's input: `base` at `comps`
    /// then `j`, which is in bounds (the reduction checked the input's size; a row's index
    /// was checked at the row).
    pub(super) fn element(
        &mut self,
        g: &mut Gen,
        base: VarId,
        comps: &[Comp],
        j: Value,
    ) -> Res<Value> {
        let mut parts = Self::parts(g, comps)?;
        parts.push(Some(j));
        self.load(g, base, &parts)
    }

    /// The values of index components (`None`: the lane index).
    fn parts(g: &mut Gen, comps: &[Comp]) -> Res<Vec<Option<Value>>> {
        comps
            .iter()
            .map(|c| match c {
                Comp::Lane => Ok(None),
                Comp::Uniform(c) => g.scalar(*c).map(Some),
            })
            .collect()
    }

    /// Checks the components `range` of an index `parts` of `base` that come after the lane's
    /// (which is checked before the segment runs): out of bounds, the group runs as scalar code.
    fn check(
        &mut self,
        g: &mut Gen,
        base: VarId,
        parts: &[Option<Value>],
        range: std::ops::Range<usize>,
    ) -> Res<()> {
        let first = parts.iter().position(Option::is_none).map_or(0, |a| a + 1);
        let checked = range.start.max(first)..range.end;
        if checked.is_empty() {
            return Ok(());
        }
        let view = g.view(base)?;
        let mut ok = None;
        for k in checked {
            let Some(c) = parts[k] else { continue };
            let inside = g.b.ins().icmp(IntCC::UnsignedLessThan, c, view.dims[k]);
            ok = Some(match ok {
                Some(ok) => g.b.ins().band(ok, inside),
                None => inside,
            });
        }
        if let Some(ok) = ok {
            self.bail_unless(g, ok);
        }
        Ok(())
    }

    /// The element of `base` at `parts` (see [`Lanes::read`]), whose components are in bounds.
    fn load(&mut self, g: &mut Gen, base: VarId, parts: &[Option<Value>]) -> Res<Value> {
        let view = g.view(base)?;
        let size = elem_size(view.elem);
        let at = parts.iter().position(Option::is_none);
        // The element offset of the first lane's element.
        let mut offset = at.map(|a| g.b.ins().imul(self.i, view.strides[a]));
        for (c, stride) in parts.iter().zip(&view.strides) {
            let Some(c) = c else { continue };
            let part = g.b.ins().imul(*c, *stride);
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
        if at + 1 == parts.len() {
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

    /// Checks an `iota`'s size (of the lanes of the execution mask): an error when negative,
    /// and made by the scalar code, which may fail to allocate it, when above [`MAX_IOTA`].
    /// Outside `0..=MAX_IOTA` the group runs as scalar code.
    fn iota_size(&mut self, g: &mut Gen, n: SubExp) -> Res<()> {
        let ok = if self.is_lane(n) {
            let n = self.operand(g, n)?;
            let max = g.b.ins().iconst(clif_type(self.width.int()), MAX_IOTA);
            let max = g.b.ins().splat(self.width.mask(), max);
            let inside = g.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, n, max);
            let inside = match self.mask {
                Some(m) => {
                    let off = g.b.ins().bnot(m);
                    g.b.ins().bor(inside, off)
                }
                None => inside,
            };
            g.b.ins().vall_true(inside)
        } else {
            let n = g.scalar(n)?;
            g.b.ins()
                .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, n, MAX_IOTA)
        };
        self.bail_unless(g, ok);
        Ok(())
    }

    /// Goes on when `ok` (a scalar truth value) holds, else leaves the group to the scalar code.
    pub(super) fn bail_unless(&self, g: &mut Gen, ok: Value) {
        let next = g.b.create_block();
        g.b.ins().brif(ok, next, &[], self.bail, &[]);
        g.b.switch_to_block(next);
        g.b.seal_block(next);
    }

    fn binop(g: &mut Gen, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let float = t.is_float();
        let ins = g.b.ins();
        if op.is_comparison() {
            // Integers and bool masks compare signed.
            return if float {
                ins.fcmp(float_cc(op), x, y)
            } else {
                ins.icmp(int_cc(op, true), x, y)
            };
        }
        match (op, float) {
            (BinOp::Add, true) => ins.fadd(x, y),
            (BinOp::Sub, true) => ins.fsub(x, y),
            (BinOp::Mul, true) => ins.fmul(x, y),
            (_, true) => ins.fdiv(x, y),
            (BinOp::Add, false) => ins.iadd(x, y),
            (BinOp::Sub, false) => ins.isub(x, y),
            (BinOp::Mul, false) => ins.imul(x, y),
            (BinOp::BitAnd, false) => ins.band(x, y),
            (BinOp::BitOr, false) => ins.bor(x, y),
            _ => ins.bxor(x, y),
        }
    }

    fn math(&mut self, g: &mut Gen, f: MathFn, t: PrimType, args: &[Value]) -> Value {
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
        if !is_inline_float_math(f) {
            // The scalar code's helper call, lane by lane.
            return self.per_lane(g, args, self.width.vector(t), &|g, xs| g.math(f, t, xs));
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
                let inf = g.float_const(t, f64::INFINITY);
                let inf = g.b.ins().splat(self.width.vector(t), inf);
                g.b.ins().fcmp(FloatCC::Equal, a, inf)
            }
            _ => float_min_max(g, f, x, args[1], Self::select),
        }
    }
}

/// The power-of-two rewrite's steps (`back/steps.rs`) on vectors of `width`.
struct LaneBits<'a, 'g> {
    g: &'a mut Gen<'g>,
    width: Width,
}

impl Target for LaneBits<'_, '_> {
    type V = Value;
}

impl Bits for LaneBits<'_, '_> {
    /// The scalar code's shift: CLIF's shifts by an immediate take vectors too.
    fn shr_imm(&mut self, t: PrimType, x: Value, k: u32) -> Value {
        self.g.shr_imm(t, x, k)
    }
    /// The mask splatted (vector instructions take no immediates).
    fn and_imm(&mut self, t: PrimType, x: Value, m: i64) -> Value {
        let low = self.g.b.ins().iconst(clif_type(t), m);
        let low = self.g.b.ins().splat(self.width.vector(t), low);
        self.g.b.ins().band(x, low)
    }
}

/// The integer constant `v` holds in every lane (of integer type `t`), when it is a splat of
/// one.
fn splatted(g: &Gen, t: PrimType, v: Value) -> Option<i64> {
    let dfg = &g.b.func.dfg;
    let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
        return None;
    };
    let InstructionData::Unary {
        opcode: Opcode::Splat,
        arg,
    } = dfg.insts[inst]
    else {
        return None;
    };
    g.int_constant(t, arg)
}
