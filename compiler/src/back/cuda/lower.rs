//! The CUDA backend's side of the shared lowering ([`crate::back::lower`]): [`Lower`] for the C
//! writer [`Emit`]. Values are C expressions (scalars) and view names (arrays); conditions are
//! written out as C, so conjunctions and sums are joined into one expression. At block level,
//! array-making statements share their loops out across the block's threads and SOACs run in
//! parallel (`block.rs`).

use super::Counting;
use super::block;
use super::emit::{CView, Emit, ctype, type_str, var, view_type};
use super::scalar::{self, Cost};
use super::{interleave, jam, reclaim};
use crate::back::lower::bounds::Proofs;
use crate::back::lower::{self, Checks, Lower, Place, Res};
use crate::plan::{self, unswitch};
use ogham_ir::abi::Failure;
use ogham_ir::kir::Plan;
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Lambda, LoopForm, Soac, SubExp, VarId};

/// An index being written: the offset's terms and the extents and strides kept.
#[derive(Default)]
pub struct Indexed {
    offset: Vec<String>,
    dims: Vec<String>,
    strides: Vec<String>,
}

impl Emit<'_> {
    /// `c`, wrapped in the model's counter of its cost when kernels count their operations.
    fn counted(&self, cost: Cost, c: String) -> String {
        match (self.counting, cost) {
            (Counting::Counted, Cost::Flop) => format!("og_flop({c})"),
            (Counting::Counted, Cost::Special) => format!("og_special({c})"),
            _ => c,
        }
    }

    /// Emits `body`, the branch of an `if` on `cond` taken when `cond` is `taken`, and assigns
    /// its results to the (declared) variables `pat`.
    fn assign_results(&mut self, pat: &[VarId], cond: SubExp, taken: bool, body: &Body) -> Res<()> {
        let vals = lower::branch(self, cond, taken, body)?;
        for (v, val) in pat.iter().zip(vals) {
            self.line(format!("{} = {val};", var(*v)));
        }
        Ok(())
    }
}

impl Lower for Emit<'_> {
    type S = String;
    type Val = String;
    type View = CView;
    /// An lvalue: the element, or the row's view.
    type Elem = String;
    type At = Indexed;
    type Conj = Vec<String>;
    type Sum = Vec<String>;
    type Acc = String;
    type Loop = String;
    type Rows = Vec<CView>;
    /// The variables that receive the lambda's results.
    type Frame = Vec<String>;
    type Placed = ();

    fn f(&self) -> &ogham_ir::kir::Function {
        self.f
    }

    fn checks(&mut self) -> &mut Checks {
        &mut self.checks
    }

    fn unchecked(&self) -> &[Span] {
        self.unchecked
    }

    fn operand(&mut self, se: SubExp) -> Res<String> {
        Ok(Emit::operand(self, se))
    }

    fn scalar(&mut self, se: SubExp) -> Res<String> {
        Ok(Emit::operand(self, se))
    }

    fn val(s: String) -> String {
        s
    }

    fn scalar_of(&self, v: &String) -> String {
        v.clone()
    }

    fn int(&mut self, n: i64) -> String {
        n.to_string()
    }

    fn bind(&mut self, v: VarId, val: String) {
        self.declare(v, &val);
    }

    fn view(&mut self, v: VarId) -> Res<CView> {
        let ty = self.f.ty(v);
        Ok(CView {
            name: var(v),
            rank: ty.rank(),
            elem: ty.elem(),
        })
    }

    fn as_view(&self, val: &String, elem: PrimType, rank: usize) -> CView {
        CView {
            name: val.clone(),
            rank,
            elem,
        }
    }

    fn values(&self, view: &CView) -> String {
        view.name.clone()
    }

    fn dims(&self, view: &CView) -> Vec<String> {
        Emit::dims(&view.name, view.rank)
    }

    fn strides(&self, view: &CView) -> Vec<String> {
        (0..view.rank)
            .map(|k| format!("{}.s[{k}]", view.name))
            .collect()
    }

    fn view_of(
        &mut self,
        name: &str,
        of: &CView,
        dims: Vec<String>,
        strides: Vec<String>,
    ) -> CView {
        let n = format!("og_{name}");
        let rank = dims.len();
        self.line(format!("View<{}, {rank}> {n};", ctype(of.elem)));
        self.line(format!("{n}.p = {}.p;", of.name));
        for (k, (d, s)) in dims.iter().zip(&strides).enumerate() {
            self.line(format!("{n}.d[{k}] = {d}; {n}.s[{k}] = {s};"));
        }
        CView {
            name: n,
            rank,
            elem: of.elem,
        }
    }

    fn rank(view: &CView) -> usize {
        view.rank
    }

    fn elem(view: &CView) -> PrimType {
        view.elem
    }

    fn binop(&mut self, op: BinOp, t: PrimType, x: &String, y: &String) -> Res<String> {
        let c = scalar::binop(op, t, x, y)?;
        Ok(self.counted(scalar::binop_cost(op, t), c))
    }

    fn unop(&mut self, op: UnOp, t: PrimType, x: &String) -> String {
        let c = scalar::unop(op, t, x);
        self.counted(scalar::unop_cost(op, t), c)
    }

    fn math(&mut self, f: MathFn, t: PrimType, args: &[String]) -> String {
        let c = scalar::math(f, t, args);
        self.counted(scalar::math_cost(f, t), c)
    }

    fn convert(&mut self, from: PrimType, to: PrimType, x: &String) -> String {
        scalar::convert(from, to, x)
    }

    fn nonzero(&mut self, x: &String) -> String {
        format!("{x} != 0")
    }

    fn equal(&mut self, x: &String, y: &String) -> String {
        format!("{x} == {y}")
    }

    fn mul_add(&mut self, a: &String, b: &String, c: &String) -> String {
        format!("{a} * {b} + {c}")
    }

    fn in_bounds(&mut self, i: &String, n: &String) -> String {
        format!("(u64){i} < (u64){n}")
    }

    fn count_ok(&mut self, n: &String) -> String {
        format!("(u64)({n}) <= (u64){}LL", ogham_ir::sizes::MAX_ELEMS)
    }

    fn same_count(&mut self, view: &CView, dims: &[String]) -> String {
        format!("og_count({}) == ({})", view.name, dims.join(" * "))
    }

    fn conj(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn conj_add(&mut self, conj: &mut Vec<String>, c: String) {
        conj.push(c);
    }

    fn conj_end(&mut self, conj: Vec<String>) -> String {
        if conj.is_empty() {
            "true".to_string()
        } else {
            conj.join(" && ")
        }
    }

    fn sum(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn sum_add(&mut self, sum: &mut Vec<String>, x: &String) {
        sum.push(x.clone());
    }

    fn sum_end(&mut self, sum: Vec<String>) -> String {
        format!("({})", sum.join(" + "))
    }

    fn product(&mut self, xs: &[String]) -> String {
        format!("({})", xs.join(" * "))
    }

    fn check(&mut self, ok: String, failure: Failure, details: &[String]) -> Res<()> {
        Emit::check(self, &ok, failure, details)
    }

    fn proofs(&mut self) -> &mut Proofs {
        &mut self.proofs
    }

    fn index_start(&mut self, _view: &CView) -> Indexed {
        Indexed::default()
    }

    fn index_in_bounds(&mut self, view: &CView, k: usize, i: &String) -> String {
        format!("(u64)({i}) < (u64){}.d[{k}]", view.name)
    }

    fn index_fix(&mut self, at: &mut Indexed, view: &CView, k: usize, i: &String) {
        at.offset.push(format!("({i}) * {}.s[{k}]", view.name));
    }

    fn slice_ok(&mut self, view: &CView, k: usize, slice: &[String; 3]) -> String {
        let [s, n, st] = slice;
        format!("og_slice_ok({}.d[{k}], {s}, {n}, {st})", view.name)
    }

    fn index_slice(&mut self, at: &mut Indexed, view: &CView, k: usize, slice: &[String; 3]) {
        let [s, n, st] = slice;
        let v = &view.name;
        at.offset.push(format!("({s}) * {v}.s[{k}]"));
        at.dims.push(n.clone());
        at.strides.push(format!("{v}.s[{k}] * ({st})"));
    }

    fn index_end(&mut self, mut at: Indexed, view: &CView, fixed: usize) -> Place<String, CView> {
        let v = &view.name;
        let offset = if at.offset.is_empty() {
            "0".to_string()
        } else {
            at.offset.join(" + ")
        };
        for k in fixed..view.rank {
            at.dims.push(format!("{v}.d[{k}]"));
            at.strides.push(format!("{v}.s[{k}]"));
        }
        if at.dims.is_empty() {
            return Place::Element(format!("{v}.p[{offset}]"));
        }
        let name = self.temp("ix");
        self.line(format!("{} {name};", view_type(view.elem, at.dims.len())));
        self.line(format!("{name}.p = {v}.p + ({offset});"));
        for (k, (d, s)) in at.dims.iter().zip(&at.strides).enumerate() {
            self.line(format!("{name}.d[{k}] = {d}; {name}.s[{k}] = {s};"));
        }
        Place::View(CView {
            name,
            rank: at.dims.len(),
            elem: view.elem,
        })
    }

    fn before_update(&mut self) {
        // Earlier reads of the array by other threads of the block come first.
        self.barrier();
    }

    fn alloc(&mut self, elem: PrimType, dims: Vec<String>) -> Res<CView> {
        let name = Emit::alloc(self, elem, &dims)?;
        Ok(CView {
            name,
            rank: dims.len(),
            elem,
        })
    }

    fn result_array(&mut self, _v: VarId, elem: PrimType, dims: Vec<String>) -> Res<CView> {
        Lower::alloc(self, elem, dims)
    }

    fn load(&mut self, elem: &String) -> String {
        elem.clone()
    }

    fn store(&mut self, elem: &String, val: &String) {
        let write = format!("{elem} = {val};");
        if self.cooperative() {
            self.line(format!("if (threadIdx.x == 0) {write}"));
        } else {
            self.line(write);
        }
        self.barrier();
    }

    fn row_place(&mut self, view: &CView, i: &String) -> String {
        Emit::row(&view.name, view.rank, i)
    }

    fn row_view(&mut self, place: &String, _view: &CView) -> String {
        place.clone()
    }

    fn copy_row(&mut self, src: &CView, _dst: &CView, place: &String) -> Res<()> {
        self.line(format!("og_copy({place}, {});", src.name));
        Ok(())
    }

    fn copy(&mut self, src: &CView, dst: &CView) -> Res<()> {
        Emit::copy(self, &dst.name, &src.name);
        Ok(())
    }

    fn copy_parts(&mut self, out: &CView, parts: &[CView]) -> Res<()> {
        let out = &out.name;
        let at = self.temp("at");
        self.line(format!("i64 {at} = 0;"));
        for v in parts {
            let v = &v.name;
            let part = self.temp("part");
            self.line(format!(
                "auto {part} = {out}; {part}.p += {at} * {out}.s[0]; {part}.d[0] = {v}.d[0];"
            ));
            Emit::copy(self, &part, v);
            self.line(format!("{at} += {v}.d[0];"));
        }
        Ok(())
    }

    fn fill_iota(&mut self, out: &CView, n: &String) -> Res<()> {
        let (first, step) = self.par(n);
        let element = Emit::row(&out.name, 1, "k");
        self.line(format!(
            "for (i64 k = {first}; k < {n}; k += {step}) {element} = k;"
        ));
        self.barrier();
        Ok(())
    }

    fn fill_rows(&mut self, out: &CView, n: &String, val: &String) -> Res<()> {
        let (first, step) = self.par(n);
        self.line(format!("og_fill({}, {val}, {first}, {step});", out.name));
        self.barrier();
        Ok(())
    }

    fn reshaped(&mut self, copy: &CView, dims: &[String]) -> String {
        self.arena_view(copy.elem, &format!("{}.p", copy.name), dims)
    }

    fn rearrange(&mut self, v: VarId, arr: VarId, perm: &[usize]) -> Res<()> {
        let a = var(arr);
        self.declare(v, &a);
        let v = var(v);
        for (k, &d) in perm.iter().enumerate() {
            self.line(format!("{v}.d[{k}] = {a}.d[{d}]; {v}.s[{k}] = {a}.s[{d}];"));
        }
        Ok(())
    }

    fn new_loop(&mut self) -> String {
        self.temp("i")
    }

    fn for_range(
        &mut self,
        var: &String,
        start: String,
        end: String,
        body: &mut dyn FnMut(&mut Self, String) -> Res<()>,
    ) -> Res<()> {
        self.open_loop(format!("for (i64 {var} = {start}; {var} < {end}; {var}++)"));
        body(self, var.clone())?;
        self.close();
        Ok(())
    }

    fn when(&mut self, cond: String, then: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()> {
        self.open(format!("if ({cond})"));
        then(self)?;
        self.close();
        Ok(())
    }

    fn single(&mut self, body: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()> {
        Emit::single(self, body)
    }

    fn if_else(
        &mut self,
        pat: &[VarId],
        cond: SubExp,
        then_body: &Body,
        else_body: &Body,
        _ret: &[ogham_ir::Type],
    ) -> Res<()> {
        for v in pat {
            let ty = type_str(self.f.ty(*v));
            self.line(format!("{ty} {};", var(*v)));
        }
        if let SubExp::Var(c) = cond
            && let Some(&taken) = self.unswitched.get(&c)
        {
            // A copy of an unswitched loop (`plan/unswitch.rs`): the branch its condition takes.
            return self.assign_results(
                pat,
                cond,
                taken,
                if taken { then_body } else { else_body },
            );
        }
        let c = Emit::operand(self, cond);
        self.open(format!("if ({c})"));
        self.assign_results(pat, cond, true, then_body)?;
        self.else_branch();
        self.assign_results(pat, cond, false, else_body)?;
        self.close();
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
            let x = Emit::operand(self, *init);
            self.declare(*p, &x);
        }
        let mark = reclaim::before_loop(self);
        match form {
            LoopForm::For { index, bound } => {
                let i = var(*index);
                let n = Emit::operand(self, *bound);
                self.open_loop(format!("for (i64 {i} = 0; {i} < {n}; {i}++)"));
            }
            LoopForm::While { cond } => self.open_loop(format!("while ({})", var(*cond))),
        }
        let vals = lower::body(self, body)?;
        // What the iteration made and does not carry is given back (`reclaim.rs`).
        let vals = reclaim::iteration_end(self, mark, params, vals)?;
        // The new values may read the old ones: through temporaries.
        let temps: Vec<String> = params
            .iter()
            .zip(&vals)
            .map(|((p, _), val)| {
                let t = self.temp("next");
                self.line(format!("{} {t} = {val};", type_str(self.f.ty(*p))));
                t
            })
            .collect();
        for ((p, _), t) in params.iter().zip(temps) {
            self.line(format!("{} = {t};", var(*p)));
        }
        self.close();
        for (v, (p, _)) in pat.iter().zip(params) {
            self.declare(*v, &var(*p));
        }
        Ok(())
    }

    fn soac(&mut self, soac: &Soac, pat: &[VarId]) -> Res<()> {
        if self.cooperative() {
            block::soac(self, soac, pat)
        } else {
            lower::sequential(self, soac, pat)
        }
    }

    fn enter_lambda(&mut self, ret: &[ogham_ir::Type]) -> Vec<String> {
        // The results, declared outside the lambda's own C block.
        let results = ret
            .iter()
            .map(|t| {
                let name = self.temp("r");
                self.line(format!("{} {name};", type_str(t)));
                name
            })
            .collect();
        self.open("");
        self.lambdas += 1;
        results
    }

    fn leave_lambda(&mut self, results: Vec<String>, vals: Vec<String>) -> Vec<String> {
        for (r, v) in results.iter().zip(vals) {
            self.line(format!("{r} = {v};"));
        }
        self.lambdas -= 1;
        self.close();
        results
    }

    fn new_acc(&mut self, t: PrimType, init: String) -> String {
        let name = self.temp("acc");
        self.line(format!("{} {name} = {init};", ctype(t)));
        name
    }

    fn acc_get(&mut self, acc: &String) -> String {
        acc.clone()
    }

    fn acc_set(&mut self, acc: &String, v: String) {
        self.line(format!("{acc} = {v};"));
    }

    fn rows(&mut self, inputs: &[CView]) -> Vec<CView> {
        inputs.to_vec()
    }

    fn current_rows(&mut self, rows: &Vec<CView>, i: &String) -> Vec<String> {
        rows.iter().map(|v| Emit::row(&v.name, v.rank, i)).collect()
    }

    fn next_rows(&mut self, _rows: &Vec<CView>) {}

    fn screma_start(
        &mut self,
        (pat, soac): (&[VarId], &Soac),
        width: &String,
        rows: &Vec<CView>,
        arrays: &[CView],
        _accs: &[Vec<Self::Acc>],
    ) -> Res<String> {
        // Maps of dot products the `jam` pass planned run in register tiles (`jam.rs`), maps of
        // reductions the `interleave` pass planned several iterations together
        // (`interleave.rs`).
        match pat.first().and_then(|v| self.plans.get(v)) {
            Some(Plan::Jam) => match (plan::jam::shape(self.f, soac), soac) {
                (Some(shape), Soac::Screma { map, .. }) => {
                    jam::emit(self, &shape, (soac.inputs(), map), width, rows, arrays)
                }
                _ => Ok("0".to_string()),
            },
            Some(Plan::Interleave) => match plan::interleave::shape(self.f, soac) {
                Some(shape) => interleave::emit(self, &shape, width, rows, arrays),
                None => Ok("0".to_string()),
            },
            _ => Ok("0".to_string()),
        }
    }

    fn unswitched(
        &mut self,
        pat: &[VarId],
        map: &Lambda,
        emit_loop: &mut dyn FnMut(&mut Self) -> Res<()>,
    ) -> Res<()> {
        let planned = unswitch::planned(self.plans, pat, map);
        let Some(cond) = planned.filter(|c| !self.unswitched.contains_key(c)) else {
            return emit_loop(self);
        };
        // The loop once per value of the condition (`plan/unswitch.rs`).
        let c = Emit::operand(self, SubExp::Var(cond));
        self.open(format!("if ({c})"));
        for taken in [true, false] {
            if !taken {
                self.else_branch();
            }
            self.unswitched.insert(cond, taken);
            let emitted = emit_loop(self);
            self.unswitched.remove(&cond);
            emitted?;
        }
        self.close();
        Ok(())
    }

    fn rows_in_place(
        &mut self,
        _map: &Lambda,
        _results: &[SubExp],
        _arrays: &[CView],
        _i: &String,
    ) {
    }

    fn rows_placed(&mut self, _placed: ()) {}
}
