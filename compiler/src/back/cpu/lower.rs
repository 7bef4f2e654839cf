//! The CPU backend's side of the shared lowering ([`crate::back::lower`]): [`Lower`] for the
//! CLIF builder [`Gen`], and what the CPU does its own way: `if`s whose branches are cheap become
//! selects (no branch to mispredict), the conditions of the branches being emitted are kept for
//! the bounds proofs (`lower/bounds.rs`), a SOAC's input rows are walked by pointers, maps of
//! reductions are interleaved (`interleave.rs`), and arrays a SOAC makes are placed where their
//! consumer wants them (`Gen::result_slots`).

use super::codegen::{Cursor, Gen, View, clif_type, elem_size, made_by_soac};
use super::early_calls;
use super::helpers::{HelperId, is_inline_float_math};
use super::interleave;
use super::jam;
use super::reclaim;
use super::scalar::is_float;
use super::simd::{elementwise, stream};
use super::skip;
use super::unswitch;
use crate::back::lower::bounds::Proofs;
use crate::back::lower::{self, Checks, Lower, Place, Res};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I8, I64};
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::Variable;
use ogham_ir::abi::Failure;
use ogham_ir::kir::Plan;
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, DimIndex, Exp, Lambda, LoopForm, Soac, SubExp, VarId};

/// The most statements an `if` branch may have to be computed unconditionally (see
/// `Gen::speculable`).
const SPECULATION_BUDGET: usize = 6;

impl Gen<'_> {
    /// Whether both branches of an `if` may run whatever the condition (see `speculable`):
    /// together at most `SPECULATION_BUDGET` statements.
    fn selectable(&self, then_body: &Body, else_body: &Body) -> bool {
        let mut budget = SPECULATION_BUDGET;
        self.speculable(then_body, &mut budget) && self.speculable(else_body, &mut budget)
    }

    /// Whether `body` may run although its branch is not taken: at most `budget` statements
    /// (nested `if`s included) of scalar operations that Cranelift does inline and that can
    /// neither fail nor have an effect (no integer division, helper calls or loops), and reads
    /// of one element whose every index is proven in range here, outside the branch (`xs[i]`
    /// of a masked sum `if kept[i] then s + xs[i] else s` in `for i < n` over `xs: [n]f64`; not
    /// an index proven only by the branch's own condition, and not one merely unchecked).
    fn speculable(&self, body: &Body, budget: &mut usize) -> bool {
        crate::plan::scalar_statements(body, budget, &|stmt| match &stmt.exp {
            Exp::SubExp(_) | Exp::UnOp(..) => true,
            Exp::Index(a, idx) => {
                let shape = self.f.ty(*a).shape();
                idx.len() == shape.len()
                    && idx.iter().zip(shape).all(|(d, dim)| match d {
                        DimIndex::Fix(i) => self.proofs.within(*i, *dim),
                        DimIndex::Slice { .. } => false,
                    })
            }
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
            _ => false,
        })
    }
}

impl Lower for Gen<'_> {
    type S = Value;
    type Val = Vec<Value>;
    type View = View;
    /// The address and element type.
    type Elem = (Value, PrimType);
    /// The address reached and the extents and strides kept.
    type At = View;
    type Conj = Value;
    type Sum = Value;
    type Acc = Variable;
    type Loop = ();
    type Rows = Vec<Cursor>;
    type Frame = ();
    type Placed = Vec<VarId>;

    fn f(&self) -> &ogham_ir::kir::Function {
        self.f
    }

    fn order(&self, body: &Body) -> Option<Vec<usize>> {
        early_calls::order(self.f, body)
    }

    fn checks(&mut self) -> &mut Checks {
        &mut self.checks
    }

    fn unchecked(&self) -> &[Span] {
        self.unchecked
    }

    fn operand(&mut self, se: SubExp) -> Res<Vec<Value>> {
        Gen::operand(self, se)
    }

    fn scalar(&mut self, se: SubExp) -> Res<Value> {
        Gen::scalar(self, se)
    }

    fn val(s: Value) -> Vec<Value> {
        vec![s]
    }

    fn scalar_of(&self, v: &Vec<Value>) -> Value {
        v[0]
    }

    fn int(&mut self, n: i64) -> Value {
        self.iconst(n)
    }

    fn bind(&mut self, v: VarId, val: Vec<Value>) {
        Gen::bind(self, v, &val);
    }

    fn view(&mut self, v: VarId) -> Res<View> {
        Gen::view(self, v)
    }

    fn as_view(&self, val: &Vec<Value>, elem: PrimType, _rank: usize) -> View {
        View::from_values(val, elem)
    }

    fn values(&self, view: &View) -> Vec<Value> {
        view.values()
    }

    fn dims(&self, view: &View) -> Vec<Value> {
        view.dims.clone()
    }

    fn strides(&self, view: &View) -> Vec<Value> {
        view.strides.clone()
    }

    fn view_of(&mut self, _name: &str, of: &View, dims: Vec<Value>, strides: Vec<Value>) -> View {
        View {
            ptr: of.ptr,
            dims,
            strides,
            elem: of.elem,
        }
    }

    fn rank(view: &View) -> usize {
        view.rank()
    }

    fn elem(view: &View) -> PrimType {
        view.elem
    }

    fn binop(&mut self, op: BinOp, t: PrimType, x: &Value, y: &Value) -> Res<Value> {
        Ok(Gen::binop(self, op, t, *x, *y))
    }

    fn unop(&mut self, op: UnOp, t: PrimType, x: &Value) -> Value {
        Gen::unop(self, op, t, *x)
    }

    fn math(&mut self, f: MathFn, t: PrimType, args: &[Value]) -> Value {
        Gen::math(self, f, t, args)
    }

    fn convert(&mut self, from: PrimType, to: PrimType, x: &Value) -> Value {
        Gen::convert(self, from, to, *x)
    }

    fn nonzero(&mut self, x: &Value) -> Value {
        self.b.ins().icmp_imm_s(IntCC::NotEqual, *x, 0)
    }

    fn equal(&mut self, x: &Value, y: &Value) -> Value {
        self.b.ins().icmp(IntCC::Equal, *x, *y)
    }

    fn mul_add(&mut self, a: &Value, b: &Value, c: &Value) -> Value {
        let ab = self.b.ins().imul(*a, *b);
        self.b.ins().iadd(ab, *c)
    }

    fn in_bounds(&mut self, i: &Value, n: &Value) -> Value {
        Gen::in_bounds(self, *i, *n)
    }

    fn count_ok(&mut self, n: &Value) -> Value {
        // One unsigned comparison.
        self.b.ins().icmp_imm_s(
            IntCC::UnsignedLessThanOrEqual,
            *n,
            ogham_ir::sizes::MAX_ELEMS as i64,
        )
    }

    fn same_count(&mut self, view: &View, dims: &[Value]) -> Value {
        let have = self.product(&view.dims);
        let (want, valid) = self.checked_product(dims);
        let equal = self.b.ins().icmp(IntCC::Equal, have, want);
        self.b.ins().band(equal, valid)
    }

    fn conj(&mut self) -> Value {
        self.b.ins().iconst(I8, 1)
    }

    fn conj_add(&mut self, conj: &mut Value, c: Value) {
        *conj = self.b.ins().band(*conj, c);
    }

    fn conj_end(&mut self, conj: Value) -> Value {
        conj
    }

    fn sum(&mut self) -> Value {
        self.iconst(0)
    }

    fn sum_add(&mut self, sum: &mut Value, x: &Value) {
        *sum = self.b.ins().iadd(*sum, *x);
    }

    fn sum_end(&mut self, sum: Value) -> Value {
        sum
    }

    fn product(&mut self, xs: &[Value]) -> Value {
        let mut p = self.iconst(1);
        for x in xs {
            p = self.b.ins().imul(p, *x);
        }
        p
    }

    fn check(&mut self, ok: Value, failure: Failure, details: &[Value]) -> Res<()> {
        Gen::check(self, ok, failure, details)
    }

    fn proofs(&mut self) -> &mut Proofs {
        &mut self.proofs
    }

    fn index_start(&mut self, view: &View) -> View {
        View {
            ptr: view.ptr,
            dims: Vec::new(),
            strides: Vec::new(),
            elem: view.elem,
        }
    }

    fn index_in_bounds(&mut self, view: &View, k: usize, i: &Value) -> Value {
        Gen::in_bounds(self, *i, view.dims[k])
    }

    fn index_fix(&mut self, at: &mut View, view: &View, k: usize, i: &Value) {
        let off = self.b.ins().imul(*i, view.strides[k]);
        let bytes = self.b.ins().imul_imm_s(off, elem_size(view.elem));
        at.ptr = self.b.ins().iadd(at.ptr, bytes);
    }

    fn slice_ok(&mut self, view: &View, k: usize, slice: &[Value; 3]) -> Value {
        let [start, len, stride] = *slice;
        let valid = self
            .call(HelperId::SliceOk, &[view.dims[k], start, len, stride])
            .expect("slice_ok returns");
        self.b.ins().ireduce(I8, valid)
    }

    fn index_slice(&mut self, at: &mut View, view: &View, k: usize, slice: &[Value; 3]) {
        let [start, len, stride] = *slice;
        let s = view.strides[k];
        let off = self.b.ins().imul(start, s);
        let bytes = self.b.ins().imul_imm_s(off, elem_size(view.elem));
        at.ptr = self.b.ins().iadd(at.ptr, bytes);
        at.dims.push(len);
        at.strides.push(self.b.ins().imul(s, stride));
    }

    fn index_end(
        &mut self,
        mut at: View,
        view: &View,
        fixed: usize,
    ) -> Place<(Value, PrimType), View> {
        at.dims.extend(&view.dims[fixed..]);
        at.strides.extend(&view.strides[fixed..]);
        if at.dims.is_empty() {
            Place::Element((at.ptr, at.elem))
        } else {
            Place::View(at)
        }
    }

    fn alloc(&mut self, elem: PrimType, dims: Vec<Value>) -> Res<View> {
        self.alloc_array(elem, dims)
    }

    fn result_array(&mut self, v: VarId, elem: PrimType, dims: Vec<Value>) -> Res<View> {
        match self.result_slots.get(&v).copied() {
            Some(slot) => self.slot_array(elem, dims, slot),
            None => self.alloc_array(elem, dims),
        }
    }

    fn load(&mut self, elem: &(Value, PrimType)) -> Vec<Value> {
        vec![Gen::load(self, elem.1, elem.0)]
    }

    fn store(&mut self, elem: &(Value, PrimType), val: &Vec<Value>) {
        Gen::store(self, val[0], elem.0);
    }

    fn row_place(&mut self, view: &View, i: &Value) -> (Value, PrimType) {
        (self.elem_addr(view, &[*i]), view.elem)
    }

    fn row_view(&mut self, place: &(Value, PrimType), view: &View) -> Vec<Value> {
        View {
            ptr: place.0,
            dims: view.dims[1..].to_vec(),
            strides: view.strides[1..].to_vec(),
            elem: view.elem,
        }
        .values()
    }

    fn copy_row(&mut self, src: &View, dst: &View, place: &(Value, PrimType)) -> Res<()> {
        let row = View {
            ptr: place.0,
            dims: dst.dims[1..].to_vec(),
            strides: dst.strides[1..].to_vec(),
            elem: dst.elem,
        };
        // A row made in place (see `result_slots`) is already there.
        let elsewhere = self.b.ins().icmp(IntCC::NotEqual, src.ptr, row.ptr);
        self.when(elsewhere, &mut |g| g.copy_view(src, &row))
    }

    fn copy(&mut self, src: &View, dst: &View) -> Res<()> {
        self.copy_view(src, dst)
    }

    fn copy_parts(&mut self, out: &View, parts: &[View]) -> Res<()> {
        let mut at = self.iconst(0);
        for v in parts {
            let start = self.elem_addr(out, &[at]);
            let mut part = out.clone();
            part.ptr = start;
            part.dims[0] = v.dims[0];
            self.copy_view(v, &part)?;
            at = self.b.ins().iadd(at, v.dims[0]);
        }
        Ok(())
    }

    fn fill_iota(&mut self, out: &View, n: &Value) -> Res<()> {
        self.for_loop(*n, &mut |g, i| {
            let addr = g.elem_addr(out, &[i]);
            Gen::store(g, i, addr);
            Ok(())
        })
    }

    /// A vector fill (`fill.rs`) of a one-dimensional array, row by row otherwise.
    fn fill_rows(&mut self, out: &View, n: &Value, val: &Vec<Value>) -> Res<()> {
        if out.rank() == 1 {
            self.fill(out.ptr, *n, val[0], out.elem)
        } else {
            self.for_loop(*n, &mut |g, i| lower::write_row(g, out, &i, val))
        }
    }

    fn reshaped(&mut self, copy: &View, dims: &[Value]) -> Vec<Value> {
        self.contiguous(copy.ptr, dims.to_vec(), copy.elem).values()
    }

    fn rearrange(&mut self, v: VarId, arr: VarId, perm: &[usize]) -> Res<()> {
        let view = Gen::view(self, arr)?;
        let permuted = View {
            ptr: view.ptr,
            dims: perm.iter().map(|&d| view.dims[d]).collect(),
            strides: perm.iter().map(|&d| view.strides[d]).collect(),
            elem: view.elem,
        };
        Gen::bind(self, v, &permuted.values());
        Ok(())
    }

    fn new_loop(&mut self) {}

    fn for_range(
        &mut self,
        _var: &(),
        start: Value,
        end: Value,
        body: &mut dyn FnMut(&mut Self, Value) -> Res<()>,
    ) -> Res<()> {
        Gen::for_range(self, start, end, body)
    }

    fn when(&mut self, cond: Value, then: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()> {
        Gen::when(self, cond, then)
    }

    fn single(&mut self, body: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()> {
        body(self)
    }

    fn if_else(
        &mut self,
        pat: &[VarId],
        cond: SubExp,
        then_body: &Body,
        else_body: &Body,
        ret: &[ogham_ir::Type],
    ) -> Res<()> {
        if let SubExp::Var(c) = cond
            && let Some(&taken) = self.unswitched.get(&c)
        {
            // A copy of an unswitched loop (`unswitch.rs`): the branch its condition takes.
            let vals = lower::branch(self, cond, taken, if taken { then_body } else { else_body });
            for (v, val) in pat.iter().zip(vals?) {
                Gen::bind(self, *v, &val);
            }
            return Ok(());
        }
        let vals = if ret.iter().all(|t| t.rank() == 0) && self.selectable(then_body, else_body) {
            // Both branches are a few cheap operations that cannot fail: computed both and
            // selected, with no branch to mispredict on data-dependent conditions (but with a
            // jump over a move, predictable, for floats on a carried condition: `carried.rs`).
            let c = Gen::scalar(self, cond)?;
            let carried = matches!(cond, SubExp::Var(v) if self.carried.contains(&v));
            let then_vals = lower::body(self, then_body)?;
            let else_vals = lower::body(self, else_body)?;
            then_vals
                .iter()
                .zip(&else_vals)
                .map(|(t, e)| {
                    vec![if carried {
                        self.b.ins().select(c, t[0], e[0])
                    } else {
                        self.select_without_branch(c, t[0], e[0])
                    }]
                })
                .collect()
        } else {
            let c = Gen::scalar(self, cond)?;
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
                let vals = lower::branch(self, cond, taken, body)?;
                for (v, val) in pat.iter().zip(vals) {
                    Gen::bind(self, *v, &val);
                }
                self.b.ins().jump(merge, &[]);
            }
            self.b.switch_to_block(merge);
            self.b.seal_block(merge);
            pat.iter()
                .map(|v| self.use_var(*v))
                .collect::<Res<Vec<_>>>()?
        };
        for (v, val) in pat.iter().zip(vals) {
            Gen::bind(self, *v, &val);
        }
        Ok(())
    }

    fn run_loop(
        &mut self,
        pat: &[VarId],
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body,
    ) -> Res<()> {
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
        // Idle iterations of a filtering loop skipped a vector at a time where the `skip-idle`
        // pass planned it (`skip.rs`).
        let skip = match (form, counter) {
            (LoopForm::For { bound, .. }, Some(i)) => {
                match skip::planned(self, pat, params, form, body) {
                    Some(s) => {
                        let bound = self.scalar(*bound)?;
                        let limit = skip::limit(self, &s, bound)?;
                        Some((s, i, limit, bound))
                    }
                    None => None,
                }
            }
            _ => None,
        };
        // A stream loop's steps in vectors first (`simd/stream.rs`).
        if let (None, LoopForm::For { bound, .. }, Some(i)) = (&skip, form, counter)
            && let Some(stream) = stream::plan(self.f, params, form, body)
        {
            let bound = self.scalar(*bound)?;
            stream.emit(self, i, bound)?;
        }
        // What the iterations make is given back (`reclaim.rs`).
        let mark = reclaim::before_loop(self, body);
        let go = test(self)?;
        self.loop_branch(go, inner, exit);
        self.b.switch_to_block(inner);
        if let Some((s, i, limit, bound)) = &skip {
            skip::emit(self, s, *i, *limit, *bound, (inner, exit))?;
        }
        if let (LoopForm::For { index, .. }, Some(i)) = (form, counter) {
            let i = self.b.use_var(i);
            self.bind(*index, &[i]);
        }
        let results = lower::body(self, body)?;
        for ((p, _), val) in params.iter().zip(results) {
            self.bind(*p, &val);
        }
        if let Some(mark) = mark {
            reclaim::iteration_end(self, mark, params)?;
        }
        if let Some(i) = counter {
            let iv = self.b.use_var(i);
            let next = self.b.ins().iadd_imm_s(iv, 1);
            self.b.def_var(i, next);
        }
        let go = test(self)?;
        self.close_loop(go, inner, exit);
        // A `while` loop ends when its condition is false: the condition's final value is that
        // constant, not a value carried out of the loop (which would keep the comparison
        // materialised as a `bool` in every iteration, beside the branch on it).
        let vals = params
            .iter()
            .map(|(p, _)| match form {
                LoopForm::While { cond } if cond == p => Ok(vec![self.b.ins().iconst(I8, 0)]),
                _ => self.use_var(*p),
            })
            .collect::<Res<Vec<_>>>()?;
        for (v, val) in pat.iter().zip(vals) {
            Gen::bind(self, *v, &val);
        }
        Ok(())
    }

    fn soac(&mut self, soac: &Soac, pat: &[VarId]) -> Res<()> {
        lower::sequential(self, soac, pat)
    }

    fn enter_lambda(&mut self, _ret: &[ogham_ir::Type]) {}

    fn leave_lambda(&mut self, _frame: (), vals: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
        vals
    }

    fn new_acc(&mut self, t: PrimType, init: Value) -> Variable {
        let var = self.b.declare_var(clif_type(t));
        self.b.def_var(var, init);
        var
    }

    fn acc_get(&mut self, acc: &Variable) -> Value {
        self.b.use_var(*acc)
    }

    fn acc_set(&mut self, acc: &Variable, v: Value) {
        self.b.def_var(*acc, v);
    }

    fn rows(&mut self, inputs: &[View]) -> Vec<Cursor> {
        self.cursors(inputs)
    }

    fn current_rows(&mut self, rows: &Vec<Cursor>, i: &Value) -> Vec<Vec<Value>> {
        // A copy of an unswitched loop loads only the rows it reads (`unswitch.rs`).
        let unread = self.unread_rows.clone();
        rows.iter()
            .enumerate()
            .map(|(k, c)| {
                if unread.contains(&k) {
                    Vec::new()
                } else {
                    self.cursor_rows(std::slice::from_ref(c), *i).concat()
                }
            })
            .collect()
    }

    fn next_rows(&mut self, rows: &Vec<Cursor>) {
        self.advance(rows);
    }

    fn screma_start(
        &mut self,
        (pat, soac): (&[VarId], &Soac),
        width: &Value,
        rows: &Vec<Cursor>,
        arrays: &[View],
        accs: &[Vec<Variable>],
    ) -> Res<Value> {
        // Maps of maps of dot products run several outer iterations together first
        // (`jam.rs`); maps of reductions or fold loops, and maps of maps of fold loops, several
        // iterations together (`interleave.rs`), as the kernel's plans say; elementwise maps
        // several iterations per vector (`simd/elementwise.rs`).
        let map = soac.map_lambda();
        let planned = pat.first().and_then(|v| self.plans.get(v)).copied();
        if planned == Some(Plan::Jam)
            && let Some(plan) = jam::plan(self, soac)
        {
            return jam::emit(self, &plan, map, *width, rows, arrays);
        }
        if planned == Some(Plan::Interleave) {
            if let Some(shape) = crate::plan::interleave::shape_or_fold(self.f, soac) {
                return interleave::emit(self, &shape, *width, rows, arrays);
            }
            if let Some(nested) = crate::plan::interleave::nested(self.f, soac) {
                return interleave::emit_nested(self, &nested, *width, rows, arrays);
            }
        }
        match elementwise::plan(self.f, soac) {
            Some(vector) => vector.emit(self, *width, rows, arrays, accs),
            None => Ok(self.iconst(0)),
        }
    }

    fn unswitched(
        &mut self,
        pat: &[VarId],
        map: &Lambda,
        emit_loop: &mut dyn FnMut(&mut Self) -> Res<()>,
    ) -> Res<()> {
        match unswitch::planned(self, pat, map) {
            Some(c) => unswitch::emit(self, map, c, emit_loop),
            None => emit_loop(self),
        }
    }

    fn rows_in_place(
        &mut self,
        map: &Lambda,
        results: &[SubExp],
        arrays: &[View],
        i: &Value,
    ) -> Vec<VarId> {
        // Array rows a SOAC of the lambda makes go straight into their row of the result (see
        // `result_slots`); `write_row` then finds them in place.
        let mut placed = Vec::new();
        for (r, dst) in results.iter().zip(arrays) {
            let SubExp::Var(v) = r else { continue };
            if dst.rank() < 2 || !made_by_soac(&map.body, *v) {
                continue;
            }
            let addr = self.elem_addr(dst, &[*i]);
            let count = self.product(&dst.dims[1..]);
            self.result_slots.insert(*v, (addr, count));
            placed.push(*v);
        }
        placed
    }

    fn rows_placed(&mut self, placed: Vec<VarId>) {
        for v in placed {
            self.result_slots.remove(&v);
        }
    }
}
