//! CLIF for the statements of a kernel body: scalar code, arrays as strided views, sequential
//! loops, `if`s and sequential SOACs (see the module header in `mod.rs` for the conventions).
//!
//! Every IR variable lives in cranelift-frontend `Variable`s (a scalar in one; an array of rank
//! `r` in `1 + 2r`: its element pointer, extents and strides in elements), so loops and `if`s need
//! no explicit SSA plumbing. Arrays created in a kernel come from the worker's arena (helper
//! `ogham_alloc`). Run-time checks branch to a cold block that records an [`ErrorSite`] and the
//! values its message needs in the context record, then returns 1.

use super::bounds::{Guard, Ranges};
use super::helpers::{
    HelperId, binop_code, has_libm_helper, is_inline_float_math, math_code, prim_code,
};
use super::interleave;
use super::{CTX_DETAILS, CTX_SITE, ErrorSite, Failure, MAX_DETAILS, Unsupported};
use crate::builtins::MathFn;
use crate::ir::op::{BinOp, UnOp};
use crate::ir::{self, Body, Const, DimIndex, Exp, Lambda, LoopForm, Soac, Stmt, SubExp, VarId};
use crate::source::Span;
use crate::types::PrimType;
use cranelift_codegen::ir::condcodes::{CondCode, FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F64, I8, I16, I32, I64};
use cranelift_codegen::ir::{
    ExtFuncData, ExternalName, FuncRef, InstBuilder, InstructionData, MemFlagsData, Type,
    UserExternalName, Value, ValueDef,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use std::collections::{BTreeMap, HashMap};

pub type Res<T> = Result<T, Unsupported>;

/// The most statements an `if` branch may have to be computed unconditionally (see
/// `Gen::speculable`).
const SPECULATION_BUDGET: usize = 6;

/// The machine type of a scalar (`bool` is a byte holding 0 or 1).
pub fn clif_type(p: PrimType) -> Type {
    match p {
        PrimType::Bool | PrimType::I8 | PrimType::U8 => I8,
        PrimType::I16 => I16,
        PrimType::I32 => I32,
        PrimType::I64 => I64,
        PrimType::F32 => F32,
        PrimType::F64 => F64,
    }
}

/// Float `min`/`max` (`f`) with Rust's semantics, the interpreter's: a NaN operand yields the
/// other one. `select(g, c, a, b)` is `c ? a : b` for the comparison results `c` (scalars or
/// lane masks).
pub fn float_min_max(
    g: &mut Gen,
    f: MathFn,
    x: Value,
    y: Value,
    select: fn(&mut Gen, Value, Value, Value) -> Value,
) -> Value {
    let cc = if f == MathFn::Min {
        FloatCC::LessThan
    } else {
        FloatCC::GreaterThan
    };
    let y_wins = g.b.ins().fcmp(cc, y, x);
    let picked = select(g, y_wins, y, x);
    let x_nan = g.b.ins().fcmp(FloatCC::Unordered, x, x);
    select(g, x_nan, y, picked)
}

pub fn elem_size(p: PrimType) -> i64 {
    clif_type(p).bytes() as i64
}

fn is_float(p: PrimType) -> bool {
    matches!(p, PrimType::F32 | PrimType::F64)
}

fn is_signed(p: PrimType) -> bool {
    matches!(
        p,
        PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64
    )
}

/// An array value: element pointer, extents and strides (in elements), outermost first.
#[derive(Clone, Debug)]
pub struct View {
    pub ptr: Value,
    pub dims: Vec<Value>,
    pub strides: Vec<Value>,
    pub elem: PrimType,
}

impl View {
    fn rank(&self) -> usize {
        self.dims.len()
    }

    fn values(&self) -> Vec<Value> {
        let mut v = vec![self.ptr];
        v.extend(&self.dims);
        v.extend(&self.strides);
        v
    }

    fn from_values(vals: &[Value], elem: PrimType) -> View {
        let r = (vals.len() - 1) / 2;
        View {
            ptr: vals[0],
            dims: vals[1..=r].to_vec(),
            strides: vals[r + 1..].to_vec(),
            elem,
        }
    }
}

/// Whether `v` is bound by a `Screma` statement of `body` (not nested deeper): an array such a
/// SOAC makes can be placed where its consumer wants it (`Gen::result_slots`).
pub fn made_by_soac(body: &Body, v: VarId) -> bool {
    body.stmts
        .iter()
        .any(|s| matches!(s.exp, Exp::Soac(Soac::Screma { .. })) && s.pat.contains(&v))
}

/// Whether running `body` may allocate arena memory (then each point resets the arena).
pub fn allocates(body: &Body) -> bool {
    let mut found = false;
    ir::traverse::for_each_stmt(body, &mut |stmt: &Stmt| {
        found |= match &stmt.exp {
            Exp::Iota(_)
            | Exp::Replicate(..)
            | Exp::ArrayLit(..)
            | Exp::Reshape(..)
            | Exp::Concat(_)
            | Exp::Copy(_) => true,
            // A reduction-only `redomap` keeps its accumulators in registers.
            Exp::Soac(Soac::Screma { scans, reds, .. }) => {
                let reduced: usize = reds.iter().map(|r| r.neutral.len()).sum();
                !scans.is_empty() || stmt.pat.len() > reduced
            }
            _ => false,
        };
    });
    found
}

/// The code generator of one CLIF function.
pub struct Gen<'a> {
    pub f: &'a ir::Function,
    pub b: FunctionBuilder<'a>,
    vars: HashMap<VarId, Vec<Variable>>,
    /// The context record (first parameter of every generated function).
    pub ctx: Value,
    pub sites: Vec<ErrorSite>,
    /// The number of the first site this function records (sites are numbered per kernel).
    pub first_site: usize,
    /// Imported helpers by function id.
    helpers: BTreeMap<usize, FuncRef>,
    /// The source location of the statement being emitted (for error sites).
    pub(super) loc: Span,
    /// Source ranges whose bounds checks are omitted (`#[unsafe]` definitions).
    unchecked: &'a [Span],
    /// Indices proven in range, whose bounds checks are omitted (`bounds.rs`).
    ranges: Ranges,
    /// The conditions of the `if` branches being emitted, innermost last (`bounds.rs`).
    guards: Vec<Guard>,
    /// Arrays that are a map kernel's results at the current point, or the rows a sequential
    /// map's lambda returns at the current iteration: where their elements go (in the kernel's
    /// output, or the map's result) and how many there must be. A SOAC making one of them writes
    /// there directly (when the count fits) instead of into the arena, so no copy is needed.
    pub result_slots: HashMap<VarId, (Value, Value)>,
    /// `(sin x, cos x)` computed in a block, by (block, x): `sin` and `cos` of one value (as in
    /// `e^{jx}`) cost one helper call.
    sin_cos: HashMap<(cranelift_codegen::ir::Block, Value), (Value, Value)>,
}

impl<'a> Gen<'a> {
    pub fn new(
        f: &'a ir::Function,
        b: FunctionBuilder<'a>,
        ctx: Value,
        unchecked: &'a [Span],
    ) -> Gen<'a> {
        Gen {
            f,
            b,
            vars: HashMap::new(),
            ctx,
            sites: Vec::new(),
            first_site: 0,
            helpers: BTreeMap::new(),
            loc: Span::default(),
            unchecked,
            ranges: Ranges::of(f),
            guards: Vec::new(),
            result_slots: HashMap::new(),
            sin_cos: HashMap::new(),
        }
    }

    // ----- variables and operands -----

    fn var_types(&self, v: VarId) -> Vec<Type> {
        match self.f.ty(v) {
            ir::Type::Prim(p) => vec![clif_type(*p)],
            ir::Type::Array { shape, .. } => vec![I64; 1 + 2 * shape.len()],
        }
    }

    /// Binds IR variable `v` to `vals` (one value for a scalar, a view's values for an array).
    pub fn bind(&mut self, v: VarId, vals: &[Value]) {
        if !self.vars.contains_key(&v) {
            let vs = self
                .var_types(v)
                .into_iter()
                .map(|t| self.b.declare_var(t))
                .collect();
            self.vars.insert(v, vs);
        }
        let vs = self.vars[&v].clone();
        for (var, val) in vs.into_iter().zip(vals) {
            self.b.def_var(var, *val);
        }
    }

    pub(super) fn use_var(&mut self, v: VarId) -> Res<Vec<Value>> {
        let vs = self.vars.get(&v).cloned().ok_or_else(|| {
            Unsupported(format!(
                "variable {}_{} is used before it is bound",
                self.f.var(v).name,
                v.0
            ))
        })?;
        Ok(vs.into_iter().map(|var| self.b.use_var(var)).collect())
    }

    pub fn constant(&mut self, c: Const) -> Value {
        let ins = self.b.ins();
        match c {
            Const::Bool(x) => ins.iconst(I8, x as i64),
            Const::I8(x) => ins.iconst(I8, x as i64),
            Const::U8(x) => ins.iconst(I8, x as i64),
            Const::I16(x) => ins.iconst(I16, x as i64),
            Const::I32(x) => ins.iconst(I32, x as i64),
            Const::I64(x) => ins.iconst(I64, x),
            Const::F32(x) => ins.f32const(x),
            Const::F64(x) => ins.f64const(x),
        }
    }

    pub fn operand(&mut self, se: SubExp) -> Res<Vec<Value>> {
        match se {
            SubExp::Const(c) => Ok(vec![self.constant(c)]),
            SubExp::Var(v) => self.use_var(v),
        }
    }

    pub fn scalar(&mut self, se: SubExp) -> Res<Value> {
        Ok(self.operand(se)?[0])
    }

    pub fn view(&mut self, v: VarId) -> Res<View> {
        let vals = self.use_var(v)?;
        Ok(View::from_values(&vals, self.f.ty(v).elem()))
    }

    fn prim_of(&self, se: SubExp) -> PrimType {
        self.f.subexp_type(se).elem()
    }

    pub fn iconst(&mut self, n: i64) -> Value {
        self.b.ins().iconst(I64, n)
    }

    fn helper(&mut self, id: HelperId) -> FuncRef {
        if let Some(r) = self.helpers.get(&id.index()) {
            return *r;
        }
        let sig = self.b.func.import_signature(id.helper().signature());
        let name = self
            .b
            .func
            .declare_imported_user_function(UserExternalName::new(0, id.index() as u32));
        let r = self.b.func.import_function(ExtFuncData {
            name: ExternalName::user(name),
            signature: sig,
            colocated: false,
            patchable: false,
        });
        self.helpers.insert(id.index(), r);
        r
    }

    pub fn call(&mut self, id: HelperId, args: &[Value]) -> Option<Value> {
        let r = self.helper(id);
        let inst = self.b.ins().call(r, args);
        self.b.inst_results(inst).first().copied()
    }

    // ----- checks -----

    /// Continues when `ok` (a `bool`) holds; otherwise records `failure` with `details` (each
    /// widened to 64 bits) and returns 1 from the generated function.
    pub fn check(&mut self, ok: Value, failure: Failure, details: &[Value]) -> Res<()> {
        if details.len() > MAX_DETAILS {
            return Err(Unsupported(format!(
                "a run-time check needs {} values (at most {MAX_DETAILS})",
                details.len()
            )));
        }
        let site = (self.first_site + self.sites.len()) as i64;
        self.sites.push(ErrorSite {
            loc: self.loc,
            failure,
        });
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, cont, &[], fail, &[]);
        self.b.switch_to_block(fail);
        self.b.seal_block(fail);
        let flags = MemFlagsData::trusted();
        let site = self.iconst(site);
        self.b.ins().store(flags, site, self.ctx, CTX_SITE);
        for (k, d) in details.iter().enumerate() {
            let d = self.widen(*d);
            self.b
                .ins()
                .store(flags, d, self.ctx, CTX_DETAILS + 8 * k as i32);
        }
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().return_(&[one]);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
        Ok(())
    }

    /// A value as 64 bits (integers sign-extended, floats as their bit pattern).
    fn widen(&mut self, v: Value) -> Value {
        let t = self.b.func.dfg.value_type(v);
        match t {
            I64 => v,
            F64 => self.b.ins().bitcast(I64, MemFlagsData::new(), v),
            F32 => {
                let bits = self.b.ins().bitcast(I32, MemFlagsData::new(), v);
                self.b.ins().uextend(I64, bits)
            }
            _ => self.b.ins().sextend(I64, v),
        }
    }

    /// `0 <= i < n` (one unsigned comparison).
    fn in_bounds(&mut self, i: Value, n: Value) -> Value {
        self.b.ins().icmp(IntCC::UnsignedLessThan, i, n)
    }

    /// `0 <= n <= MAX_ELEMS` (one unsigned comparison; see `crate::sizes::count`).
    fn check_size(&mut self, n: Value, what: &str) -> Res<()> {
        let ok = self.b.ins().icmp_imm_s(
            IntCC::UnsignedLessThanOrEqual,
            n,
            crate::sizes::MAX_ELEMS as i64,
        );
        self.check(
            ok,
            Failure::NegativeSize {
                what: what.to_string(),
            },
            &[n],
        )
    }

    // ----- memory -----

    fn elem_addr(&mut self, view: &View, idx: &[Value]) -> Value {
        let mut off = None;
        for (i, s) in idx.iter().zip(&view.strides) {
            let t = self.b.ins().imul(*i, *s);
            off = Some(match off {
                None => t,
                Some(o) => self.b.ins().iadd(o, t),
            });
        }
        match off {
            None => view.ptr,
            Some(o) => {
                let bytes = self.b.ins().imul_imm_s(o, elem_size(view.elem));
                self.b.ins().iadd(view.ptr, bytes)
            }
        }
    }

    fn load(&mut self, elem: PrimType, addr: Value) -> Value {
        self.b
            .ins()
            .load(clif_type(elem), MemFlagsData::trusted(), addr, 0)
    }

    fn store(&mut self, v: Value, addr: Value) {
        self.b.ins().store(MemFlagsData::trusted(), v, addr, 0);
    }

    /// Cursors over the rows of `inputs`: per input a variable holding its current row's
    /// address (starting at row 0) and the bytes from one row to the next.
    pub(super) fn cursors(&mut self, inputs: &[View]) -> Vec<(View, Variable, Value)> {
        inputs
            .iter()
            .map(|v| {
                let var = self.b.declare_var(I64);
                self.b.def_var(var, v.ptr);
                let step = self.b.ins().imul_imm_s(v.strides[0], elem_size(v.elem));
                (v.clone(), var, step)
            })
            .collect()
    }

    /// The current rows of the cursors: scalars for rank 1, else views.
    pub(super) fn cursor_rows(&mut self, cursors: &[(View, Variable, Value)]) -> Vec<Vec<Value>> {
        cursors
            .iter()
            .map(|(v, var, _)| {
                let addr = self.b.use_var(*var);
                self.row_at(v, addr)
            })
            .collect()
    }

    /// Moves every cursor to its next row.
    pub(super) fn advance(&mut self, cursors: &[(View, Variable, Value)]) {
        for (_, var, step) in cursors {
            let p = self.b.use_var(*var);
            let next = self.b.ins().iadd(p, *step);
            self.b.def_var(*var, next);
        }
    }

    /// Row `i` of `view` (unchecked): a scalar for rank 1, else a view.
    pub fn row(&mut self, view: &View, i: Value) -> Vec<Value> {
        let addr = self.elem_addr(view, &[i]);
        self.row_at(view, addr)
    }

    /// The row of `view` that starts at `addr`: a scalar for rank 1, else a view.
    fn row_at(&mut self, view: &View, addr: Value) -> Vec<Value> {
        if view.rank() == 1 {
            vec![self.load(view.elem, addr)]
        } else {
            View {
                ptr: addr,
                dims: view.dims[1..].to_vec(),
                strides: view.strides[1..].to_vec(),
                elem: view.elem,
            }
            .values()
        }
    }

    fn row_major_strides(&mut self, dims: &[Value]) -> Vec<Value> {
        let mut strides = vec![self.iconst(1); dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            strides[d] = self.b.ins().imul(strides[d + 1], dims[d + 1]);
        }
        strides
    }

    /// A contiguous view of the given extents over memory at `ptr`.
    pub fn contiguous(&mut self, ptr: Value, dims: Vec<Value>, elem: PrimType) -> View {
        let strides = self.row_major_strides(&dims);
        View {
            ptr,
            dims,
            strides,
            elem,
        }
    }

    fn product(&mut self, dims: &[Value]) -> Value {
        let mut n = self.iconst(1);
        for d in dims {
            n = self.b.ins().imul(n, *d);
        }
        n
    }

    /// The product of extents that may be invalid (negative, or with a product of 2^63 or
    /// more), and whether it is valid (an `I8`): checked size arithmetic, never wrapping.
    fn checked_product(&mut self, dims: &[Value]) -> (Value, Value) {
        let mut n = self.iconst(1);
        let mut ok = self.b.ins().iconst(I8, 1);
        for d in dims {
            let nonneg = self
                .b
                .ins()
                .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, *d, 0);
            let (p, overflow) = self.b.ins().smul_overflow(n, *d);
            let fits = self.b.ins().bxor_imm_u(overflow, 1);
            ok = self.b.ins().band(ok, nonneg);
            ok = self.b.ins().band(ok, fits);
            n = p;
        }
        (n, ok)
    }

    /// A fresh array of the given extents from the worker's arena (an impossible size asks
    /// for `i64::MAX` bytes, which fails as out of memory).
    pub fn alloc_array(&mut self, elem: PrimType, dims: Vec<Value>) -> Res<View> {
        let (count, fits) = self.checked_product(&dims);
        let size = self.iconst(elem_size(elem));
        let (bytes, overflow) = self.b.ins().smul_overflow(count, size);
        let fits_bytes = self.b.ins().bxor_imm_u(overflow, 1);
        let fits = self.b.ins().band(fits, fits_bytes);
        let impossible = self.iconst(i64::MAX);
        let bytes = self.b.ins().select(fits, bytes, impossible);
        let ctx = self.ctx;
        let ptr = self
            .call(HelperId::Alloc, &[ctx, bytes])
            .expect("alloc returns a pointer");
        let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, ptr, 0);
        self.check(ok, Failure::OutOfMemory, &[bytes])?;
        Ok(self.contiguous(ptr, dims, elem))
    }

    /// An array of a kernel's result slot `(addr, count)`: at `addr` when it has `count`
    /// elements, otherwise (the kernel's result check will then fail) from the arena.
    fn result_array(
        &mut self,
        elem: PrimType,
        dims: Vec<Value>,
        slot: (Value, Value),
    ) -> Res<View> {
        let (addr, count) = slot;
        let have = self.product(&dims);
        let ptr = self.b.declare_var(I64);
        self.b.def_var(ptr, addr);
        let misfit = self.b.ins().icmp(IntCC::NotEqual, have, count);
        self.when(misfit, &mut |g| {
            let view = g.alloc_array(elem, dims.clone())?;
            g.b.def_var(ptr, view.ptr);
            Ok(())
        })?;
        let ptr = self.b.use_var(ptr);
        Ok(self.contiguous(ptr, dims, elem))
    }

    /// A counted loop `for i in 0..n`; `body` emits the loop body.
    pub fn for_loop(
        &mut self,
        n: Value,
        body: &mut dyn FnMut(&mut Self, Value) -> Res<()>,
    ) -> Res<()> {
        let zero = self.iconst(0);
        self.for_range(zero, n, body)
    }

    /// A counted loop `for i in start..end`.
    pub fn for_range(
        &mut self,
        start: Value,
        end: Value,
        body: &mut dyn FnMut(&mut Self, Value) -> Res<()>,
    ) -> Res<()> {
        let i = self.b.declare_var(I64);
        self.b.def_var(i, start);
        let inner = self.b.create_block();
        let exit = self.b.create_block();
        let go = self.b.ins().icmp(IntCC::SignedLessThan, start, end);
        self.loop_branch(go, inner, exit);
        self.b.switch_to_block(inner);
        let iv = self.b.use_var(i);
        body(self, iv)?;
        let next = self.b.ins().iadd_imm_s(iv, 1);
        self.b.def_var(i, next);
        let go = self.b.ins().icmp(IntCC::SignedLessThan, next, end);
        self.close_loop(go, inner, exit);
        Ok(())
    }

    /// The test of a loop (before it, and at the end of its body when it is rotated): into
    /// `inner` while `go` (a `bool`) holds, else to `exit`. Emitted as a branch to `exit` when
    /// `go` is false, with `inner` as the second successor: Cranelift lays out a function's
    /// blocks in reverse postorder of a depth-first walk that visits a block's first successor
    /// first, so with `inner` first every loop body would be placed after all the code that
    /// follows the loop. Its values would then be live, in the linear order the register
    /// allocator works on, across everything after the loop, and be reloaded and spilled in
    /// every iteration; with `exit` first the body follows the test.
    pub fn loop_branch(
        &mut self,
        go: Value,
        inner: cranelift_codegen::ir::Block,
        exit: cranelift_codegen::ir::Block,
    ) {
        let stop = self.negation(go);
        self.b.ins().brif(stop, exit, &[], inner, &[]);
    }

    /// `!c` for a `bool` `c`: the complementary comparison when `c` is one (a branch on it then
    /// compiles to one compare and jump, as Cranelift does not fold `!` into a float
    /// comparison; `c` itself is left unused unless used elsewhere), else `c == 0`.
    fn negation(&mut self, c: Value) -> Value {
        let dfg = &self.b.func.dfg;
        if let ValueDef::Result(inst, 0) = dfg.value_def(c) {
            match dfg.insts[inst] {
                InstructionData::IntCompare { cond, args, .. } => {
                    return self.b.ins().icmp(cond.complement(), args[0], args[1]);
                }
                InstructionData::FloatCompare { cond, args, .. } => {
                    return self.b.ins().fcmp(cond.complement(), args[0], args[1]);
                }
                _ => {}
            }
        }
        self.b.ins().icmp_imm_u(IntCC::Equal, c, 0)
    }

    /// Ends the body of a rotated loop: the test `go` (a `bool`) of the next iteration branches
    /// back to the body's first block `inner` (now sealed: its last predecessor is known) or
    /// on to `exit`, where code continues. A loop is emitted as one test before it, into `inner`
    /// or past the loop, and one at the end of its body, so an iteration executes one
    /// conditional branch and no jump.
    fn close_loop(
        &mut self,
        go: Value,
        inner: cranelift_codegen::ir::Block,
        exit: cranelift_codegen::ir::Block,
    ) {
        self.loop_branch(go, inner, exit);
        self.b.seal_block(inner);
        self.b.switch_to_block(exit);
        self.b.seal_block(exit);
    }

    /// Copies every element of `src` to the same position of `dst` (same extents).
    pub fn copy_view(&mut self, src: &View, dst: &View) -> Res<()> {
        fn go(g: &mut Gen, src: &View, dst: &View, idx: &mut Vec<Value>) -> Res<()> {
            let d = idx.len();
            if d == src.rank() {
                let from = g.elem_addr(src, idx);
                let v = g.load(src.elem, from);
                let to = g.elem_addr(dst, idx);
                g.store(v, to);
                return Ok(());
            }
            g.for_loop(src.dims[d], &mut |g, i| {
                idx.push(i);
                go(g, src, dst, idx)?;
                idx.pop();
                Ok(())
            })
        }
        go(self, src, dst, &mut Vec::new())
    }

    /// Checks that `actual` has the extents `expected` (a result or row of a known shape).
    pub(super) fn check_same_shape(
        &mut self,
        actual: &[Value],
        expected: &[Value],
        what: &str,
    ) -> Res<()> {
        let mut ok = self.b.ins().iconst(I8, 1);
        for (a, e) in actual.iter().zip(expected) {
            let eq = self.b.ins().icmp(IntCC::Equal, *a, *e);
            ok = self.b.ins().band(ok, eq);
        }
        let mut details = actual.to_vec();
        details.extend(expected);
        self.check(
            ok,
            Failure::ShapeMismatch {
                what: what.to_string(),
                rank: actual.len(),
            },
            &details,
        )
    }

    /// Writes `val` (a scalar, or a view of the row's extents) as row `i` of `dst`.
    pub fn write_row(&mut self, dst: &View, i: Value, val: &[Value]) -> Res<()> {
        let addr = self.elem_addr(dst, &[i]);
        if dst.rank() == 1 {
            self.store(val[0], addr);
            return Ok(());
        }
        let src = View::from_values(val, dst.elem);
        let row = View {
            ptr: addr,
            dims: dst.dims[1..].to_vec(),
            strides: dst.strides[1..].to_vec(),
            elem: dst.elem,
        };
        self.check_same_shape(&src.dims, &row.dims, "row")?;
        // A row made in place (see `result_slots`) is already there.
        let elsewhere = self.b.ins().icmp(IntCC::NotEqual, src.ptr, row.ptr);
        self.when(elsewhere, &mut |g| g.copy_view(&src, &row))
    }

    /// The extents of a type (its dimensions evaluated).
    fn dims_of(&mut self, ty: &ir::Type) -> Res<Vec<Value>> {
        ty.shape().iter().map(|d| self.scalar(*d)).collect()
    }

    // ----- statements -----

    pub fn body(&mut self, body: &Body) -> Res<Vec<Vec<Value>>> {
        for stmt in &body.stmts {
            self.stmt(stmt)?;
        }
        body.result.iter().map(|se| self.operand(*se)).collect()
    }

    pub fn apply(&mut self, lambda: &Lambda, args: &[Vec<Value>]) -> Res<Vec<Vec<Value>>> {
        for (p, a) in lambda.params.iter().zip(args) {
            self.bind(*p, a);
        }
        self.body(&lambda.body)
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt) -> Res<()> {
        self.loc = stmt.loc;
        let vals = self.exp(&stmt.exp, &stmt.pat)?;
        for (v, val) in stmt.pat.iter().zip(vals) {
            self.bind(*v, &val);
        }
        Ok(())
    }

    fn exp(&mut self, exp: &Exp, pat: &[VarId]) -> Res<Vec<Vec<Value>>> {
        let one = |v: Value| Ok(vec![vec![v]]);
        match exp {
            Exp::SubExp(se) => Ok(vec![self.operand(*se)?]),
            Exp::BinOp(op, a, b) => {
                let t = self.prim_of(*a);
                let (x, y) = (self.scalar(*a)?, self.scalar(*b)?);
                one(self.binop(*op, t, x, y)?)
            }
            Exp::UnOp(op, a) => {
                let t = self.prim_of(*a);
                let x = self.scalar(*a)?;
                one(match (op, t) {
                    (UnOp::Neg, t) if is_float(t) => self.b.ins().fneg(x),
                    (UnOp::Neg, _) => self.b.ins().ineg(x),
                    (UnOp::Not, PrimType::Bool) => self.negation(x),
                    (UnOp::Not, _) => self.b.ins().bnot(x),
                })
            }
            Exp::Math(f, t, args) => {
                let args: Vec<Value> = args.iter().map(|a| self.scalar(*a)).collect::<Res<_>>()?;
                one(self.math(*f, *t, &args))
            }
            Exp::Convert(to, a) => {
                let from = self.prim_of(*a);
                let x = self.scalar(*a)?;
                one(self.convert(from, *to, x))
            }
            Exp::Index(a, idx) => {
                let view = self.view(*a)?;
                Ok(vec![self.index(*a, &view, idx, false)?])
            }
            Exp::Update(a, idx, v) => {
                let view = self.view(*a)?;
                let val = self.operand(*v)?;
                let target = self.index(*a, &view, idx, true)?;
                let element =
                    idx.len() == view.rank() && idx.iter().all(|d| matches!(d, DimIndex::Fix(_)));
                if element {
                    // `index` returned the element's address.
                    self.store(val[0], target[0]);
                } else {
                    let ir::Type::Array { elem, .. } = self.f.subexp_type(*v) else {
                        return Err(Unsupported("an update of a slice by a scalar".to_string()));
                    };
                    let dst = View::from_values(&target, view.elem);
                    let src = View::from_values(&val, elem);
                    self.check_same_shape(&src.dims, &dst.dims, "update")?;
                    self.copy_view(&src, &dst)?;
                }
                Ok(vec![view.values()])
            }
            Exp::Iota(n) => {
                let n = self.scalar(*n)?;
                self.check_size(n, "iota")?;
                let out = self.alloc_array(PrimType::I64, vec![n])?;
                self.for_loop(n, &mut |g, i| {
                    let addr = g.elem_addr(&out, &[i]);
                    g.store(i, addr);
                    Ok(())
                })?;
                Ok(vec![out.values()])
            }
            Exp::Replicate(n, v) => {
                let n = self.scalar(*n)?;
                self.check_size(n, "replicate")?;
                let val = self.operand(*v)?;
                let elem = self.f.ty(pat[0]).elem();
                let mut dims = vec![n];
                if let ir::Type::Array { .. } = self.f.subexp_type(*v) {
                    dims.extend(View::from_values(&val, elem).dims);
                }
                let out = self.alloc_array(elem, dims)?;
                if out.rank() == 1 {
                    self.fill(out.ptr, n, val[0], elem)?;
                } else {
                    self.for_loop(n, &mut |g, i| g.write_row(&out, i, &val))?;
                }
                Ok(vec![out.values()])
            }
            Exp::ArrayLit(elems, elem_ty) => {
                let n = self.iconst(elems.len() as i64);
                let mut dims = vec![n];
                dims.extend(self.dims_of(elem_ty)?);
                let out = self.alloc_array(elem_ty.elem(), dims)?;
                for (k, e) in elems.iter().enumerate() {
                    let val = self.operand(*e)?;
                    let i = self.iconst(k as i64);
                    self.write_row(&out, i, &val)?;
                }
                Ok(vec![out.values()])
            }
            Exp::Rearrange(a, perm) => {
                let view = self.view(*a)?;
                let permuted = View {
                    ptr: view.ptr,
                    dims: perm.iter().map(|&d| view.dims[d]).collect(),
                    strides: perm.iter().map(|&d| view.strides[d]).collect(),
                    elem: view.elem,
                };
                Ok(vec![permuted.values()])
            }
            Exp::Reshape(a, dims) => {
                let view = self.view(*a)?;
                let target: Vec<Value> =
                    dims.iter().map(|d| self.scalar(*d)).collect::<Res<_>>()?;
                let ok = if target.len() == view.rank() {
                    let mut ok = self.b.ins().iconst(I8, 1);
                    for (x, y) in view.dims.iter().zip(&target) {
                        let eq = self.b.ins().icmp(IntCC::Equal, *x, *y);
                        ok = self.b.ins().band(ok, eq);
                    }
                    ok
                } else {
                    let have = self.product(&view.dims);
                    let (want, valid) = self.checked_product(&target);
                    let equal = self.b.ins().icmp(IntCC::Equal, have, want);
                    self.b.ins().band(equal, valid)
                };
                let mut details = view.dims.clone();
                details.extend(&target);
                self.check(
                    ok,
                    Failure::Reshape {
                        array: *a,
                        dims: dims.clone(),
                    },
                    &details,
                )?;
                let copy = self.alloc_array(view.elem, view.dims.clone())?;
                self.copy_view(&view, &copy)?;
                Ok(vec![self.contiguous(copy.ptr, target, view.elem).values()])
            }
            Exp::Concat(arrays) => {
                let views: Vec<View> = arrays.iter().map(|a| self.view(*a)).collect::<Res<_>>()?;
                let mut total = self.iconst(0);
                for v in &views {
                    self.check_same_shape(&v.dims[1..], &views[0].dims[1..], "concatenation")?;
                    total = self.b.ins().iadd(total, v.dims[0]);
                }
                let mut dims = vec![total];
                dims.extend(&views[0].dims[1..]);
                let out = self.alloc_array(views[0].elem, dims)?;
                let mut at = self.iconst(0);
                for v in &views {
                    let start = self.elem_addr(&out, &[at]);
                    let mut part = out.clone();
                    part.ptr = start;
                    part.dims[0] = v.dims[0];
                    self.copy_view(v, &part)?;
                    at = self.b.ins().iadd(at, v.dims[0]);
                }
                Ok(vec![out.values()])
            }
            Exp::Copy(a) => {
                let view = self.view(*a)?;
                let out = self.alloc_array(view.elem, view.dims.clone())?;
                self.copy_view(&view, &out)?;
                Ok(vec![out.values()])
            }
            Exp::Assert {
                cond,
                message,
                kind,
            } => {
                let ok = self.scalar(*cond)?;
                self.check(
                    ok,
                    Failure::Assert {
                        message: message.clone(),
                        kind: *kind,
                    },
                    &[],
                )?;
                Ok(vec![])
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } if ret.iter().all(|t| t.rank() == 0) && self.selectable(then_body, else_body) => {
                // Both branches are a few cheap operations that cannot fail: computed both and
                // selected, with no branch to mispredict on data-dependent conditions.
                let c = self.scalar(*cond)?;
                let then_vals = self.body(then_body)?;
                let else_vals = self.body(else_body)?;
                Ok(then_vals
                    .iter()
                    .zip(&else_vals)
                    .map(|(t, e)| vec![self.b.ins().select(c, t[0], e[0])])
                    .collect())
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let c = self.scalar(*cond)?;
                let then_block = self.b.create_block();
                let else_block = self.b.create_block();
                let merge = self.b.create_block();
                self.b.ins().brif(c, then_block, &[], else_block, &[]);
                for (block, body, taken) in [
                    (then_block, then_body, true),
                    (else_block, else_body, false),
                ] {
                    self.b.switch_to_block(block);
                    self.b.seal_block(block);
                    if let SubExp::Var(c) = cond {
                        self.guards.push((*c, taken));
                    }
                    let vals = self.body(body);
                    if let SubExp::Var(_) = cond {
                        self.guards.pop();
                    }
                    let vals = vals?;
                    for (v, val) in pat.iter().zip(vals) {
                        self.bind(*v, &val);
                    }
                    self.b.ins().jump(merge, &[]);
                }
                self.b.switch_to_block(merge);
                self.b.seal_block(merge);
                pat.iter().map(|v| self.use_var(*v)).collect()
            }
            Exp::Loop { params, form, body } => self.run_loop(params, form, body),
            Exp::Soac(soac) => self.soac(soac, pat),
            Exp::Seg(_) => Err(Unsupported("a kernel inside a kernel".to_string())),
            Exp::Threshold { .. } => Err(Unsupported("a threshold inside a kernel".to_string())),
        }
    }

    /// Whether both branches of an `if` may run whatever the condition (see `speculable`):
    /// together at most `SPECULATION_BUDGET` statements.
    fn selectable(&self, then_body: &Body, else_body: &Body) -> bool {
        let mut budget = SPECULATION_BUDGET;
        self.speculable(then_body, &mut budget) && self.speculable(else_body, &mut budget)
    }

    /// Whether `body` may run although its branch is not taken: at most `budget` statements
    /// (nested `if`s included) of scalar operations that Cranelift does inline and that can
    /// neither fail nor have an effect (no indexing, integer division, helper calls or loops).
    fn speculable(&self, body: &Body, budget: &mut usize) -> bool {
        body.stmts.iter().all(|stmt| {
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            match &stmt.exp {
                Exp::SubExp(_) | Exp::UnOp(..) => true,
                Exp::BinOp(op, a, _) => {
                    let t = self.prim_of(*a);
                    match op {
                        BinOp::Add
                        | BinOp::Sub
                        | BinOp::Mul
                        | BinOp::Eq
                        | BinOp::Ne
                        | BinOp::Lt
                        | BinOp::Le
                        | BinOp::Gt
                        | BinOp::Ge => true,
                        BinOp::Div => is_float(t),
                        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => !is_float(t),
                        _ => false,
                    }
                }
                Exp::Math(f, t, _) => is_float(*t) && is_inline_float_math(*f),
                Exp::Convert(to, a) => {
                    let from = self.prim_of(*a);
                    !is_float(from) || is_float(*to) || matches!(to, PrimType::I32 | PrimType::I64)
                }
                Exp::If {
                    then_body,
                    else_body,
                    ret,
                    ..
                } => {
                    ret.iter().all(|t| t.rank() == 0)
                        && self.speculable(then_body, budget)
                        && self.speculable(else_body, budget)
                }
                _ => false,
            }
        })
    }

    /// An index of array `arr`: the element (or, for an update, its address) when every
    /// dimension is fixed, otherwise a view. Checks the bounds as the interpreter does, except
    /// for indices proven in range (`bounds.rs`).
    fn index(
        &mut self,
        arr: VarId,
        view: &View,
        idx: &[DimIndex],
        for_update: bool,
    ) -> Res<Vec<Value>> {
        let mut ok = self.b.ins().iconst(I8, 1);
        let mut checked = false;
        let mut details = view.dims.clone();
        let mut ptr = view.ptr;
        let mut dims = Vec::new();
        let mut strides = Vec::new();
        for (k, d) in idx.iter().enumerate() {
            let (n, s) = (view.dims[k], view.strides[k]);
            match d {
                DimIndex::Fix(se) => {
                    let i = self.scalar(*se)?;
                    let dim = self.f.ty(arr).shape().get(k).copied();
                    if !dim.is_some_and(|d| self.ranges.within(*se, d, &self.guards)) {
                        let inb = self.in_bounds(i, n);
                        ok = self.b.ins().band(ok, inb);
                        checked = true;
                    }
                    details.push(i);
                    let off = self.b.ins().imul(i, s);
                    let bytes = self.b.ins().imul_imm_s(off, elem_size(view.elem));
                    ptr = self.b.ins().iadd(ptr, bytes);
                }
                DimIndex::Slice { start, len, stride } => {
                    let (start, len, stride) = (
                        self.scalar(*start)?,
                        self.scalar(*len)?,
                        self.scalar(*stride)?,
                    );
                    let valid = self
                        .call(HelperId::SliceOk, &[n, start, len, stride])
                        .expect("slice_ok returns");
                    let valid = self.b.ins().ireduce(I8, valid);
                    ok = self.b.ins().band(ok, valid);
                    checked = true;
                    details.extend([start, len, stride]);
                    let off = self.b.ins().imul(start, s);
                    let bytes = self.b.ins().imul_imm_s(off, elem_size(view.elem));
                    ptr = self.b.ins().iadd(ptr, bytes);
                    dims.push(len);
                    strides.push(self.b.ins().imul(s, stride));
                }
            }
        }
        let loc = self.loc;
        let unchecked = self
            .unchecked
            .iter()
            .any(|r| r.file == loc.file && r.start <= loc.start && loc.end <= r.end);
        if checked && !unchecked {
            self.check(
                ok,
                Failure::Index {
                    rank: view.rank(),
                    idx: idx.to_vec(),
                    update: for_update,
                },
                &details,
            )?;
        }
        dims.extend(&view.dims[idx.len()..]);
        strides.extend(&view.strides[idx.len()..]);
        if dims.is_empty() {
            return Ok(if for_update {
                vec![ptr]
            } else {
                vec![self.load(view.elem, ptr)]
            });
        }
        Ok(View {
            ptr,
            dims,
            strides,
            elem: view.elem,
        }
        .values())
    }

    fn run_loop(
        &mut self,
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body,
    ) -> Res<Vec<Vec<Value>>> {
        for (p, init) in params {
            let v = self.operand(*init)?;
            self.bind(*p, &v);
        }
        let inner = self.b.create_block();
        let exit = self.b.create_block();
        let counter = match form {
            LoopForm::For { .. } => {
                let i = self.b.declare_var(I64);
                let zero = self.iconst(0);
                self.b.def_var(i, zero);
                Some(i)
            }
            LoopForm::While { .. } => None,
        };
        // Whether the loop runs (again), before it and at the end of its body.
        let test = |g: &mut Self| -> Res<Value> {
            match form {
                LoopForm::For { bound, .. } => {
                    let i = g.b.use_var(counter.expect("for loops count"));
                    let bound = g.scalar(*bound)?;
                    Ok(g.b.ins().icmp(IntCC::SignedLessThan, i, bound))
                }
                LoopForm::While { cond } => g.scalar(SubExp::Var(*cond)),
            }
        };
        let go = test(self)?;
        self.loop_branch(go, inner, exit);
        self.b.switch_to_block(inner);
        if let (LoopForm::For { index, .. }, Some(i)) = (form, counter) {
            let i = self.b.use_var(i);
            self.bind(*index, &[i]);
        }
        let results = self.body(body)?;
        for ((p, _), val) in params.iter().zip(results) {
            self.bind(*p, &val);
        }
        if let Some(i) = counter {
            let iv = self.b.use_var(i);
            let next = self.b.ins().iadd_imm_s(iv, 1);
            self.b.def_var(i, next);
        }
        let go = test(self)?;
        self.close_loop(go, inner, exit);
        params.iter().map(|(p, _)| self.use_var(*p)).collect()
    }

    // ----- SOACs (sequential inside a kernel) -----

    fn soac(&mut self, soac: &Soac, pat: &[VarId]) -> Res<Vec<Vec<Value>>> {
        let width = self.scalar(soac.width())?;
        let inputs: Vec<View> = soac
            .inputs()
            .iter()
            .map(|v| self.view(*v))
            .collect::<Res<_>>()?;
        for input in &inputs {
            self.check_same_shape(&input.dims[..1], &[width], "SOAC input")?;
        }
        // The inputs' rows are walked by pointers advanced after each iteration.
        let cursors = self.cursors(&inputs);
        match soac {
            Soac::Screma {
                map, scans, reds, ..
            } => {
                let n_scan: usize = scans.iter().map(|s| s.neutral.len()).sum();
                let n_red: usize = reds.iter().map(|r| r.neutral.len()).sum();
                let mut arrays = Vec::new();
                for (j, v) in pat.iter().enumerate() {
                    if j >= n_scan && j < n_scan + n_red {
                        continue;
                    }
                    let ty = self.f.ty(*v).clone();
                    let dims = self.dims_of(&ty)?;
                    let array = match self.result_slots.get(v).copied() {
                        Some(slot) => self.result_array(ty.elem(), dims, slot)?,
                        None => self.alloc_array(ty.elem(), dims)?,
                    };
                    arrays.push(array);
                }
                let ops = ir::screma_operators(scans, reds);
                let accs = self.accumulators(&ops)?;
                // Maps of reductions run several iterations together first (`interleave.rs`).
                let start = match interleave::plan(self, map, n_scan, n_red) {
                    Some(plan) => interleave::emit(self, &plan, map, width, &cursors, &arrays)?,
                    None => self.iconst(0),
                };
                self.for_range(start, width, &mut |g, i| {
                    let args = g.cursor_rows(&cursors);
                    // Array rows a SOAC of the lambda makes go straight into their row of the
                    // result (see `result_slots`); `write_row` then finds them in place.
                    let mut slotted = Vec::new();
                    let mapped = &map.body.result[n_scan + n_red..];
                    for (r, dst) in mapped.iter().zip(&arrays[n_scan..]) {
                        let SubExp::Var(v) = r else { continue };
                        if dst.rank() < 2 || !made_by_soac(&map.body, *v) {
                            continue;
                        }
                        let addr = g.elem_addr(dst, &[i]);
                        let count = g.product(&dst.dims[1..]);
                        g.result_slots.insert(*v, (addr, count));
                        slotted.push(*v);
                    }
                    let vals = g.apply(map, &args)?;
                    for v in slotted {
                        g.result_slots.remove(&v);
                    }
                    let mut k = 0;
                    for (j, (op, neutral)) in ops.iter().enumerate() {
                        let m = neutral.len();
                        g.accumulate(op, &accs[j], &vals[k..k + m])?;
                        if k < n_scan {
                            for (c, var) in accs[j].iter().enumerate() {
                                let v = g.b.use_var(*var);
                                let dst = arrays[k + c].clone();
                                g.write_row(&dst, i, &[v])?;
                            }
                        }
                        k += m;
                    }
                    for (c, val) in vals[k..].iter().enumerate() {
                        let dst = arrays[n_scan + c].clone();
                        g.write_row(&dst, i, val)?;
                    }
                    g.advance(&cursors);
                    Ok(())
                })?;
                let mut out: Vec<Vec<Value>> = arrays[..n_scan].iter().map(View::values).collect();
                for acc in accs.iter().skip(scans.len()) {
                    for var in acc {
                        out.push(vec![self.b.use_var(*var)]);
                    }
                }
                out.extend(arrays[n_scan..].iter().map(View::values));
                Ok(out)
            }
            Soac::Scatter { map, dests, .. } => {
                let dests: Vec<View> = dests.iter().map(|d| self.view(*d)).collect::<Res<_>>()?;
                self.for_loop(width, &mut |g, _| {
                    let args = g.cursor_rows(&cursors);
                    let vals = g.apply(map, &args)?;
                    for (dest, pair) in dests.iter().zip(vals.chunks(2)) {
                        let at = pair[0][0];
                        let inside = g.in_bounds(at, dest.dims[0]);
                        g.when(inside, &mut |g| g.write_row(dest, at, &pair[1]))?;
                    }
                    g.advance(&cursors);
                    Ok(())
                })?;
                Ok(dests.iter().map(View::values).collect())
            }
            Soac::Hist { map, hists, .. } => {
                let dests: Vec<Vec<View>> = hists
                    .iter()
                    .map(|h| h.dests.iter().map(|d| self.view(*d)).collect())
                    .collect::<Res<_>>()?;
                self.for_loop(width, &mut |g, _| {
                    let args = g.cursor_rows(&cursors);
                    let vals = g.apply(map, &args)?;
                    let mut k = 0;
                    for (h, dest) in hists.iter().zip(&dests) {
                        let bins = g.scalar(h.num_bins)?;
                        let bin = vals[k][0];
                        let inside = g.in_bounds(bin, bins);
                        let new = &vals[k + 1..k + 1 + dest.len()];
                        g.when(inside, &mut |g| g.combine_into(&h.op, dest, bin, new))?;
                        k += 1 + dest.len();
                    }
                    g.advance(&cursors);
                    Ok(())
                })?;
                Ok(dests.iter().flatten().map(View::values).collect())
            }
        }
    }

    /// `dest[row] = op(dest[row], vals)` (rows are scalars or arrays).
    pub fn combine_into(
        &mut self,
        op: &Lambda,
        dest: &[View],
        row: Value,
        vals: &[Vec<Value>],
    ) -> Res<()> {
        let mut args: Vec<Vec<Value>> = dest.iter().map(|d| self.row(d, row)).collect();
        args.extend(vals.iter().cloned());
        let new = self.apply(op, &args)?;
        for (d, v) in dest.iter().zip(new) {
            self.write_row(d, row, &v)?;
        }
        Ok(())
    }

    /// Runs `then` only when `cond` holds.
    pub fn when(&mut self, cond: Value, then: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()> {
        let yes = self.b.create_block();
        let merge = self.b.create_block();
        self.b.ins().brif(cond, yes, &[], merge, &[]);
        self.b.switch_to_block(yes);
        self.b.seal_block(yes);
        then(self)?;
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        Ok(())
    }

    /// One variable per component of each operator's accumulator, set to the neutral element.
    pub fn accumulators(&mut self, ops: &[(&Lambda, &[SubExp])]) -> Res<Vec<Vec<Variable>>> {
        let mut accs = Vec::new();
        for (_, neutral) in ops {
            let mut vars = Vec::new();
            for n in neutral.iter() {
                if self.f.subexp_type(*n).rank() > 0 {
                    return Err(Unsupported(
                        "a reduction or scan of arrays in a kernel".to_string(),
                    ));
                }
                let v = self.scalar(*n)?;
                let var = self.b.declare_var(clif_type(self.prim_of(*n)));
                self.b.def_var(var, v);
                vars.push(var);
            }
            accs.push(vars);
        }
        Ok(accs)
    }

    /// `acc = op(acc, vals)`.
    pub fn accumulate(&mut self, op: &Lambda, acc: &[Variable], vals: &[Vec<Value>]) -> Res<()> {
        let mut args: Vec<Vec<Value>> = acc.iter().map(|v| vec![self.b.use_var(*v)]).collect();
        args.extend(vals.iter().cloned());
        let new = self.apply(op, &args)?;
        for (var, v) in acc.iter().zip(new) {
            self.b.def_var(*var, v[0]);
        }
        Ok(())
    }

    // ----- scalar operations -----

    fn binop(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Res<Value> {
        let ins = self.b.ins();
        if is_float(t) {
            let cc = |c| Some(c);
            let cmp = match op {
                BinOp::Eq => cc(FloatCC::Equal),
                BinOp::Ne => cc(FloatCC::NotEqual),
                BinOp::Lt => cc(FloatCC::LessThan),
                BinOp::Le => cc(FloatCC::LessThanOrEqual),
                BinOp::Gt => cc(FloatCC::GreaterThan),
                BinOp::Ge => cc(FloatCC::GreaterThanOrEqual),
                _ => None,
            };
            if let Some(c) = cmp {
                return Ok(ins.fcmp(c, x, y));
            }
            return Ok(match op {
                BinOp::Add => ins.fadd(x, y),
                BinOp::Sub => ins.fsub(x, y),
                BinOp::Mul => ins.fmul(x, y),
                BinOp::Div => ins.fdiv(x, y),
                BinOp::Pow => self
                    .call(HelperId::Libm(MathFn::Pow, t), &[x, y])
                    .expect("pow returns"),
                _ => {
                    let code = self.iconst(binop_code(op));
                    let id = if t == PrimType::F32 {
                        HelperId::F32Op
                    } else {
                        HelperId::F64Op
                    };
                    self.call(id, &[code, x, y]).expect("float ops return")
                }
            });
        }
        let signed = is_signed(t);
        let pick = |s: IntCC, u: IntCC| if signed { s } else { u };
        Ok(match op {
            BinOp::Eq => ins.icmp(IntCC::Equal, x, y),
            BinOp::Ne => ins.icmp(IntCC::NotEqual, x, y),
            BinOp::Lt => ins.icmp(pick(IntCC::SignedLessThan, IntCC::UnsignedLessThan), x, y),
            BinOp::Le => ins.icmp(
                pick(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
                x,
                y,
            ),
            BinOp::Gt => ins.icmp(
                pick(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
                x,
                y,
            ),
            BinOp::Ge => ins.icmp(
                pick(
                    IntCC::SignedGreaterThanOrEqual,
                    IntCC::UnsignedGreaterThanOrEqual,
                ),
                x,
                y,
            ),
            BinOp::Add => ins.iadd(x, y),
            BinOp::Sub => ins.isub(x, y),
            BinOp::Mul => ins.imul(x, y),
            BinOp::BitAnd => ins.band(x, y),
            BinOp::BitOr => ins.bor(x, y),
            BinOp::BitXor => ins.bxor(x, y),
            BinOp::Div
            | BinOp::Mod
            | BinOp::Quot
            | BinOp::Rem
            | BinOp::Pow
            | BinOp::Shl
            | BinOp::Shr => {
                if op.is_division() {
                    let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, y, 0);
                    self.check(nonzero, Failure::DivByZero { op }, &[])?;
                    return Ok(self.division(op, t, x, y));
                }
                let args = [self.iconst(binop_code(op)), self.iconst(prim_code(t))];
                let (wx, wy) = (self.widen_int(t, x), self.widen_int(t, y));
                let r = self
                    .call(HelperId::IntOp, &[args[0], args[1], wx, wy])
                    .expect("int ops return");
                self.narrow_int(t, r)
            }
        })
    }

    /// Integer `/` and `%` (floored, as Futhark's), `//` and `%%` (truncated), wrapping like
    /// the interpreter (`MIN / -1 = MIN`); the divisor is known to be non-zero.
    fn division(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let ins = self.b.ins();
        if !is_signed(t) {
            // Unsigned: floored and truncated division coincide.
            return match op {
                BinOp::Div | BinOp::Quot => ins.udiv(x, y),
                _ => ins.urem(x, y),
            };
        }
        // `sdiv`/`srem` trap on MIN / -1: divide by 1 instead and fix the result up.
        let ty = clif_type(t);
        let minus_one = ins.icmp_imm_s(IntCC::Equal, y, -1);
        let one = self.b.ins().iconst(ty, 1);
        let divisor = self.b.ins().select(minus_one, one, y);
        let q = self.b.ins().sdiv(x, divisor);
        let r = self.b.ins().srem(x, divisor);
        // Floored: when the remainder is non-zero and its sign differs from the divisor's.
        let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
        let signs = self.b.ins().bxor(r, y);
        let differ = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, signs, 0);
        let adjust = self.b.ins().band(nonzero, differ);
        match op {
            BinOp::Div => {
                let down = self.b.ins().iadd_imm_s(q, -1);
                let floored = self.b.ins().select(adjust, down, q);
                let negated = self.b.ins().ineg(x);
                self.b.ins().select(minus_one, negated, floored)
            }
            BinOp::Quot => {
                let negated = self.b.ins().ineg(x);
                self.b.ins().select(minus_one, negated, q)
            }
            BinOp::Mod => {
                let up = self.b.ins().iadd(r, y);
                self.b.ins().select(adjust, up, r)
            }
            _ => r,
        }
    }

    fn widen_int(&mut self, t: PrimType, x: Value) -> Value {
        match t {
            PrimType::I64 => x,
            PrimType::U8 | PrimType::Bool => self.b.ins().uextend(I64, x),
            _ => self.b.ins().sextend(I64, x),
        }
    }

    fn narrow_int(&mut self, t: PrimType, x: Value) -> Value {
        match clif_type(t) {
            I64 => x,
            ty => self.b.ins().ireduce(ty, x),
        }
    }

    fn math(&mut self, f: MathFn, t: PrimType, args: &[Value]) -> Value {
        let x = args[0];
        if is_float(t) {
            let ins = self.b.ins();
            match f {
                MathFn::Sqrt => return ins.sqrt(x),
                MathFn::Abs => return ins.fabs(x),
                MathFn::Floor => return ins.floor(x),
                MathFn::Ceil => return ins.ceil(x),
                MathFn::Trunc => return ins.trunc(x),
                MathFn::Round => return ins.nearest(x),
                MathFn::IsNan => return ins.fcmp(FloatCC::Unordered, x, x),
                MathFn::Min | MathFn::Max => {
                    return float_min_max(self, f, x, args[1], |g, c, a, b| {
                        g.b.ins().select(c, a, b)
                    });
                }
                MathFn::IsInf => {
                    let a = ins.fabs(x);
                    let inf = if t == PrimType::F32 {
                        self.b.ins().f32const(f32::INFINITY)
                    } else {
                        self.b.ins().f64const(f64::INFINITY)
                    };
                    return self.b.ins().fcmp(FloatCC::Equal, a, inf);
                }
                _ => {}
            }
            if let MathFn::Sin | MathFn::Cos = f {
                let (sin, cos) = self.sin_cos(t, x);
                return if f == MathFn::Sin { sin } else { cos };
            }
            if has_libm_helper(f) {
                return self
                    .call(HelperId::Libm(f, t), args)
                    .expect("math functions return");
            }
            let y = args.get(1).copied().unwrap_or(x);
            let code = self.iconst(math_code(f));
            let id = if t == PrimType::F32 {
                HelperId::F32Math
            } else {
                HelperId::F64Math
            };
            return self.call(id, &[code, x, y]).expect("math returns");
        }
        if let (MathFn::Min | MathFn::Max, [_, y]) = (f, args) {
            // The interpreter's: `x` when `x <= y` (min) or `x >= y` (max), else `y`.
            let op = if f == MathFn::Min {
                BinOp::Le
            } else {
                BinOp::Ge
            };
            let x_wins = self
                .binop(op, t, x, *y)
                .expect("comparisons need no run-time check");
            return self.b.ins().select(x_wins, x, *y);
        }
        let y = args.get(1).copied().unwrap_or(x);
        let (wx, wy) = (self.widen_int(t, x), self.widen_int(t, y));
        let code = self.iconst(math_code(f));
        let ty = self.iconst(prim_code(t));
        let r = self
            .call(HelperId::IntMath, &[code, ty, wx, wy])
            .expect("math returns");
        self.narrow_int(t, r)
    }

    /// `sin x` and `cos x` by one helper call, reused within the current block.
    fn sin_cos(&mut self, t: PrimType, x: Value) -> (Value, Value) {
        let block = self
            .b
            .current_block()
            .expect("code is emitted into a block");
        if let Some(both) = self.sin_cos.get(&(block, x)) {
            return *both;
        }
        let slot = self
            .b
            .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                16,
                3,
            ));
        let out = self.b.ins().stack_addr(I64, slot, 0);
        self.call(HelperId::SinCos(t), &[x, out]);
        let ty = clif_type(t);
        let sin = self.b.ins().load(ty, MemFlagsData::trusted(), out, 0);
        let cos = self.b.ins().load(ty, MemFlagsData::trusted(), out, 8);
        self.sin_cos.insert((block, x), (sin, cos));
        (sin, cos)
    }

    fn convert(&mut self, from: PrimType, to: PrimType, x: Value) -> Value {
        use PrimType as P;
        let ins = self.b.ins();
        let (ft, tt) = (clif_type(from), clif_type(to));
        match (from, to) {
            _ if from == to => x,
            (P::F32, P::F64) => ins.fpromote(F64, x),
            (P::F64, P::F32) => ins.fdemote(F32, x),
            (P::I8 | P::I16 | P::I32 | P::I64, P::F32 | P::F64) => ins.fcvt_from_sint(tt, x),
            (P::U8 | P::Bool, P::F32 | P::F64) => ins.fcvt_from_uint(tt, x),
            (P::F32 | P::F64, P::I32 | P::I64) => ins.fcvt_to_sint_sat(tt, x),
            (P::I8 | P::I16 | P::I32 | P::I64 | P::U8, P::Bool) => {
                ins.icmp_imm_s(IntCC::NotEqual, x, 0)
            }
            (P::I8 | P::I16 | P::I32 | P::I64 | P::U8 | P::Bool, _) if !is_float(to) => {
                if tt.bits() < ft.bits() {
                    ins.ireduce(tt, x)
                } else if tt.bits() == ft.bits() {
                    x
                } else if is_signed(from) {
                    ins.sextend(tt, x)
                } else {
                    ins.uextend(tt, x)
                }
            }
            _ => {
                let bits = self.widen(x);
                let (f, t) = (self.iconst(prim_code(from)), self.iconst(prim_code(to)));
                let r = self
                    .call(HelperId::Convert, &[f, t, bits])
                    .expect("convert returns");
                match tt {
                    F32 => {
                        let b32 = self.b.ins().ireduce(I32, r);
                        self.b.ins().bitcast(F32, MemFlagsData::new(), b32)
                    }
                    F64 => self.b.ins().bitcast(F64, MemFlagsData::new(), r),
                    I64 => r,
                    t => self.b.ins().ireduce(t, r),
                }
            }
        }
    }
}
