//! The CLIF builder of a kernel body: variables, arrays as strided views, arena allocation,
//! run-time checks, counted loops and branches (see the module header in `mod.rs` for the
//! conventions). What the statements become is decided by the shared walk
//! ([`crate::back::lower`]), which drives this builder through `lower.rs`; scalar operations are
//! in `scalar.rs`.
//!
//! Every IR variable lives in cranelift-frontend `Variable`s (a scalar in one; an array of rank
//! `r` in `1 + 2r`: its element pointer, extents and strides in elements), so loops and `if`s need
//! no explicit SSA plumbing. Arrays created in a kernel come from the worker's arena (helper
//! `ogham_alloc`). Run-time checks branch to a cold block that records an [`ErrorSite`] and the
//! values its message needs in the context record, then returns 1.

use super::Unsupported;
use super::helpers::HelperId;
use crate::back::lower::Checks;
pub use crate::back::lower::Res;
use crate::back::lower::bounds::Proofs;
use cranelift_codegen::cursor::{Cursor as _, FuncCursor};
use cranelift_codegen::ir::condcodes::{CondCode, FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F64, I8, I16, I32, I64};
use cranelift_codegen::ir::{
    ExtFuncData, ExternalName, FuncRef, InstBuilder, InstructionData, MemFlagsData, Type,
    UserExternalName, Value, ValueDef,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use ogham_ir::abi::Failure;
use ogham_ir::kir::Plans;
use ogham_ir::math::MathFn;
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Const, Exp, Soac, SubExp, VarId};
use std::collections::{BTreeMap, HashMap, HashSet};

mod checks;

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

/// A SOAC input being walked ([`Gen::cursors`]): its view, the bytes from one row to the next
/// and, for a rank of 2 or more, the variable holding the current row's address.
pub struct Cursor {
    view: View,
    step: Value,
    walk: Option<Variable>,
}

impl Cursor {
    /// The array whose rows the cursor walks.
    pub(super) fn view(&self) -> &View {
        &self.view
    }
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
    pub(super) fn rank(&self) -> usize {
        self.dims.len()
    }

    pub(super) fn values(&self) -> Vec<Value> {
        let mut v = vec![self.ptr];
        v.extend(&self.dims);
        v.extend(&self.strides);
        v
    }

    pub(super) fn from_values(vals: &[Value], elem: PrimType) -> View {
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

/// The code generator of one CLIF function.
pub struct Gen<'a> {
    pub f: &'a ogham_ir::kir::Function,
    /// The plans of the kernel being emitted (`SegOp::plans`, chosen by the kernel-IR target
    /// passes), by the first variable of the statement each plans.
    pub plans: &'a Plans,
    pub b: FunctionBuilder<'a>,
    vars: HashMap<VarId, Vec<Variable>>,
    /// The context record (first parameter of every generated function).
    pub ctx: Value,
    /// The checks recorded so far and the location of the statement being emitted.
    pub checks: Checks,
    /// Imported helpers by function id.
    helpers: BTreeMap<usize, FuncRef>,
    /// Source ranges whose bounds checks are omitted (`#[unsafe]` definitions).
    pub(super) unchecked: &'a [Span],
    /// Indices proven in range, whose bounds checks are omitted (`lower/bounds.rs`).
    pub(super) proofs: Proofs,
    /// The variables that depend on a value carried from one iteration to the next
    /// (`carried.rs`): a cheap `if` on one of them branches instead of selecting by masks.
    pub(super) carried: HashSet<VarId>,
    /// Arrays that are a map kernel's results at the current point, or the rows a sequential
    /// map's lambda returns at the current iteration: where their elements go (in the kernel's
    /// output, or the map's result) and how many there must be. A SOAC making one of them writes
    /// there directly (when the count fits) instead of into the arena, so no copy is needed.
    pub result_slots: HashMap<VarId, (Value, Value)>,
    /// The sines and cosines computed in a block, by (block, x) (`scalar.rs`, `Gen::sin_or_cos`).
    pub(super) sin_cos: HashMap<(cranelift_codegen::ir::Block, Value), SinCos>,
    /// The `i64` constants made so far, each defined once at the top of the entry block
    /// ([`Gen::iconst`]).
    consts: HashMap<i64, Value>,
    /// Conditions fixed while a copy of an unswitched loop is emitted (`unswitch.rs`): an `if`
    /// on one of them emits only the branch it takes.
    pub(super) unswitched: HashMap<VarId, bool>,
    /// The inputs of the SOAC whose copy of an unswitched loop is being emitted that the copy
    /// does not read, by position: their rows are not loaded (`unswitch.rs`).
    pub(super) unread_rows: Vec<usize>,
    /// The failure exits made so far, with their parameters' types ([`Gen::check`]).
    failures: Vec<(cranelift_codegen::ir::Block, Vec<Type>)>,
    /// The block that the entry block branches to, never at run time, and that branches on to
    /// every failure exit ([`Gen::check`], [`Gen::finish`]).
    dispatch: cranelift_codegen::ir::Block,
    /// The conditions checked on the current straight-line path ([`Gen::check`]): the block
    /// where the last check continued, and the conditions checked since code last continued in
    /// another block. Each of them dominates the point where that block continues.
    checked: (Option<cranelift_codegen::ir::Block>, HashSet<Condition>),
}

/// What a block has computed of `sin x` and `cos x` for one `x` ([`Gen::sin_cos`]).
#[derive(Clone, Copy)]
pub(super) enum SinCos {
    /// One of the two (`MathFn::Sin` or `MathFn::Cos`): its helper's call and result.
    One(MathFn, cranelift_codegen::ir::Inst, Value),
    /// Both, from one call (`sin x`, `cos x`).
    Both(Value, Value),
}

/// A conjunct of a checked condition, as [`Gen::check`] compares them: an integer comparison by
/// its operands, anything else by its value.
#[derive(PartialEq, Eq, Hash)]
enum Condition {
    Compare(IntCC, Value, Value),
    Other(Value),
}

impl<'a> Gen<'a> {
    pub fn new(
        (f, seg): (&'a ogham_ir::kir::Function, &'a ogham_ir::kir::SegOp),
        mut b: FunctionBuilder<'a>,
        ctx: Value,
        unchecked: &'a [Span],
    ) -> Gen<'a> {
        let dispatch = b.create_block();
        let start = b.create_block();
        b.set_cold_block(dispatch);
        // The context pointer is never null.
        let never = b.ins().icmp_imm_u(IntCC::Equal, ctx, 0);
        b.ins().brif(never, dispatch, &[], start, &[]);
        b.switch_to_block(start);
        b.seal_block(start);
        Gen {
            failures: Vec::new(),
            dispatch,
            f,
            plans: &seg.plans,
            b,
            vars: HashMap::new(),
            ctx,
            checks: Checks::default(),
            helpers: BTreeMap::new(),
            unchecked,
            proofs: Proofs::of(f, seg),
            carried: super::carried::of(f, seg),
            result_slots: HashMap::new(),
            sin_cos: HashMap::new(),
            consts: HashMap::new(),
            unswitched: HashMap::new(),
            unread_rows: Vec::new(),
            checked: (None, HashSet::new()),
        }
    }

    // ----- variables and operands -----

    fn var_types(&self, v: VarId) -> Vec<Type> {
        match self.f.ty(v) {
            ogham_ir::Type::Prim(p) => vec![clif_type(*p)],
            ogham_ir::Type::Array { shape, .. } => vec![I64; 1 + 2 * shape.len()],
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
            Const::I64(x) => self.iconst(x),
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

    pub(super) fn prim_of(&self, se: SubExp) -> PrimType {
        self.f.subexp_type(se).elem()
    }

    /// The `i64` constant `n`: one value per constant and function, defined at the top of the
    /// entry block. A variable (an array's stride, a loop's bound) that holds the same constant
    /// on every path into a loop or a join then holds the same value, which Cranelift's
    /// constant-phi removal recognises (two `iconst 1` would be two values), so it needs no
    /// block parameter and its uses see the constant: a row-major array's last stride of 1
    /// stays a known 1 through loops that replace the array (element addresses fold into
    /// addressing modes) and fewer values are live around loops. Cranelift rematerialises
    /// constants where they are used, so defining them early costs no registers.
    pub fn iconst(&mut self, n: i64) -> Value {
        if let Some(v) = self.consts.get(&n) {
            return *v;
        }
        let Some(entry) = self.b.func.layout.entry_block() else {
            return self.b.ins().iconst(I64, n);
        };
        let v = FuncCursor::new(self.b.func)
            .at_first_insertion_point(entry)
            .ins()
            .iconst(I64, n);
        self.consts.insert(n, v);
        v
    }

    pub(super) fn helper(&mut self, id: HelperId) -> FuncRef {
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

    /// A value as 64 bits (integers sign-extended, floats as their bit pattern).
    pub(super) fn widen(&mut self, v: Value) -> Value {
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

    /// `c ? t : e` without a branch. Cranelift lowers a `select` of floats on x86-64 to a jump
    /// over a move, a branch that data-dependent conditions (the mask of a masked sum)
    /// mispredict; here the float's bits are masked instead (`e ^ ((t ^ e) & m)`, `m` all ones
    /// when `c` holds), which gives `t` or `e` bit for bit. Integers keep `select` (a `cmov`).
    pub(super) fn select_without_branch(&mut self, c: Value, t: Value, e: Value) -> Value {
        let ty = self.b.func.dfg.value_type(t);
        if !ty.is_float() {
            return self.b.ins().select(c, t, e);
        }
        let ones = self.b.ins().bmask(ty.as_int(), c);
        let m = self.b.ins().bitcast(ty, MemFlagsData::new(), ones);
        let differ = self.b.ins().bxor(t, e);
        let flip = self.b.ins().band(differ, m);
        self.b.ins().bxor(e, flip)
    }

    /// `0 <= i < n` (one unsigned comparison).
    pub(super) fn in_bounds(&mut self, i: Value, n: Value) -> Value {
        self.b.ins().icmp(IntCC::UnsignedLessThan, i, n)
    }

    // ----- memory -----

    pub(super) fn elem_addr(&mut self, view: &View, idx: &[Value]) -> Value {
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

    pub(super) fn load(&mut self, elem: PrimType, addr: Value) -> Value {
        self.b
            .ins()
            .load(clif_type(elem), MemFlagsData::trusted(), addr, 0)
    }

    pub(super) fn store(&mut self, v: Value, addr: Value) {
        self.b.ins().store(MemFlagsData::trusted(), v, addr, 0);
    }

    /// Cursors over the rows of `inputs`: per input its view, the bytes from one row to the
    /// next and, for an input of rank 2 or more, a variable holding its current row's address
    /// (advanced after each iteration by [`Gen::advance`]). The elements of a rank-1 input are
    /// addressed from the loop's counter (`ptr + i * step`) instead of by a pointer advanced in
    /// every iteration: with a constant step (a contiguous array) the offset folds into the
    /// load's addressing mode and the inputs share the counter, so a loop reading `k` of them
    /// saves `k` additions per iteration; with a variable step the inputs with the same step
    /// share one multiplication. A row of a higher rank is the base of the inner loops over it,
    /// so it stays a variable, computed once per iteration.
    pub(super) fn cursors(&mut self, inputs: &[View]) -> Vec<Cursor> {
        inputs
            .iter()
            .map(|v| {
                let step = self.b.ins().imul_imm_s(v.strides[0], elem_size(v.elem));
                let walk = (v.rank() > 1).then(|| {
                    let var = self.b.declare_var(I64);
                    self.b.def_var(var, v.ptr);
                    var
                });
                Cursor {
                    view: v.clone(),
                    step,
                    walk,
                }
            })
            .collect()
    }

    /// Row `i` of every cursor (the current one of a walked cursor): scalars for rank 1, else
    /// views.
    pub(super) fn cursor_rows(&mut self, cursors: &[Cursor], i: Value) -> Vec<Vec<Value>> {
        cursors
            .iter()
            .map(|c| {
                let addr = match c.walk {
                    Some(var) => self.b.use_var(var),
                    None => {
                        let offset = self.b.ins().imul(i, c.step);
                        self.b.ins().iadd(c.view.ptr, offset)
                    }
                };
                self.row_at(&c.view, addr)
            })
            .collect()
    }

    /// Moves every walked cursor to its next row.
    pub(super) fn advance(&mut self, cursors: &[Cursor]) {
        for c in cursors {
            if let Some(var) = c.walk {
                let p = self.b.use_var(var);
                let next = self.b.ins().iadd(p, c.step);
                self.b.def_var(var, next);
            }
        }
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

    pub(super) fn product(&mut self, dims: &[Value]) -> Value {
        let mut n = self.iconst(1);
        for d in dims {
            n = self.b.ins().imul(n, *d);
        }
        n
    }

    /// The product of extents that may be invalid (negative, or with a product of 2^63 or
    /// more), and whether it is valid (an `I8`): checked size arithmetic, never wrapping.
    pub(super) fn checked_product(&mut self, dims: &[Value]) -> (Value, Value) {
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
        self.alloc_from(HelperId::Alloc, elem, dims)
    }

    /// An array from the arena that helper `from` hands out ([`HelperId::Alloc`] or
    /// [`HelperId::ScratchAlloc`]), checked like [`Gen::alloc_array`].
    pub(super) fn alloc_from(
        &mut self,
        from: HelperId,
        elem: PrimType,
        dims: Vec<Value>,
    ) -> Res<View> {
        let (count, fits) = self.checked_product(&dims);
        let size = self.iconst(elem_size(elem));
        let (bytes, overflow) = self.b.ins().smul_overflow(count, size);
        let fits_bytes = self.b.ins().bxor_imm_u(overflow, 1);
        let fits = self.b.ins().band(fits, fits_bytes);
        let impossible = self.iconst(i64::MAX);
        let bytes = self.b.ins().select(fits, bytes, impossible);
        let ctx = self.ctx;
        let ptr = self
            .call(from, &[ctx, bytes])
            .expect("alloc returns a pointer");
        let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, ptr, 0);
        self.check(ok, Failure::OutOfMemory, &[bytes])?;
        Ok(self.contiguous(ptr, dims, elem))
    }

    /// An array of a kernel's result slot `(addr, count)`: at `addr` when it has `count`
    /// elements, otherwise (the kernel's result check will then fail) from the arena.
    pub(super) fn slot_array(
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

    /// A loop of `steps` (`>= 0`) iterations over addresses: `body` gets the addresses of the
    /// iteration, which start at `starts` and advance by `stride` bytes each time, and the loop
    /// stops when the first reaches `starts[0] + steps * stride` (no counter). The addresses
    /// are variables of the loop: a loop that offsets pointers defined before it instead keeps
    /// them live inside it, and when they are also live past later helper calls, which puts them
    /// in stack slots, the register allocator reloads them in every iteration (and stores them
    /// back on the back edge).
    pub(super) fn address_loop(
        &mut self,
        starts: &[Value],
        stride: i64,
        steps: Value,
        body: &mut dyn FnMut(&mut Self, &[Value]),
    ) {
        let bytes = self.b.ins().imul_imm_s(steps, stride);
        let end = self.b.ins().iadd(starts[0], bytes);
        let vars: Vec<Variable> = starts
            .iter()
            .map(|&start| {
                let var = self.b.declare_var(I64);
                self.b.def_var(var, start);
                var
            })
            .collect();
        let inner = self.b.create_block();
        let exit = self.b.create_block();
        let go = self.b.ins().icmp(IntCC::UnsignedLessThan, starts[0], end);
        self.loop_branch(go, inner, exit);
        self.b.switch_to_block(inner);
        let at: Vec<Value> = vars.iter().map(|&v| self.b.use_var(v)).collect();
        body(self, &at);
        for (&var, &addr) in vars.iter().zip(&at) {
            let next = self.b.ins().iadd_imm_s(addr, stride);
            self.b.def_var(var, next);
        }
        let next = self.b.use_var(vars[0]);
        let go = self.b.ins().icmp(IntCC::UnsignedLessThan, next, end);
        self.close_loop(go, inner, exit);
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
    pub(super) fn negation(&mut self, c: Value) -> Value {
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
    pub(super) fn close_loop(
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

    /// Runs `then` when `cond` holds and `otherwise` when it does not (in that order in the
    /// function's layout), both continuing at one block.
    pub fn if_else(
        &mut self,
        cond: Value,
        then: &mut dyn FnMut(&mut Self) -> Res<()>,
        otherwise: &mut dyn FnMut(&mut Self) -> Res<()>,
    ) -> Res<()> {
        let (yes, no, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(cond, yes, &[], no, &[]);
        self.b.switch_to_block(yes);
        self.b.seal_block(yes);
        then(self)?;
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(no);
        self.b.seal_block(no);
        otherwise(self)?;
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        Ok(())
    }

    /// Copies every element of `src` to the same position of `dst` (same extents, no overlap);
    /// a rank-1 copy in vectors where both have unit stride (`copy.rs`).
    pub fn copy_view(&mut self, src: &View, dst: &View) -> Res<()> {
        if src.rank() == 1 {
            return self.copy_run(src, dst);
        }
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
}
