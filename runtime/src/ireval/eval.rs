//! Statement-by-statement execution of IR bodies (see the module header in `mod.rs`).

use crate::error::{R_COERCE, R_DIV_ZERO, R_INTERNAL, R_NEG_SIZE, R_SIZE, Res, error};
use crate::index::{self, IdxArg};
use crate::memory;
use crate::scalar::{self, OpError};
use crate::value::{ArrayData, Scalar};
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::{HostOp, SegOp, ThresholdId};
use ogham_ir::sizes;
use ogham_ir::source::Span;
use ogham_ir::{
    AssertKind, Body, DimIndex, Exp, Form, Function, LoopForm, Stmt, SubExp, Type, VarId, VarInfo,
};
use std::collections::HashMap;
use std::convert::Infallible;

mod soac;

/// A value during evaluation: a scalar or an array (`crate::val`; compiled code has no function
/// values and no records).
pub type Val = crate::val::Val<'static, Infallible>;
pub type Array = crate::val::Array<'static, Infallible>;
pub type Store = crate::val::Store<'static, Infallible>;

/// A point in a device's queues (the performance model's clock, in seconds; 0 where the device
/// keeps none), to order the side's copies against the kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Mark(pub f64);

/// Copies beside the kernels ([`Launcher::side`], for a run in parts of rows: `parts.rs`), made on a thread of their own.
pub trait Side: Send {
    /// Prepares the calling thread (makes the device current on it).
    fn bind(&self) -> Res<()>;
    /// Puts `data`'s elements where the kernels read them (and attaches the copy, so that the
    /// kernels find it); returns when done, with the mark of its end.
    fn upload(&self, data: &ArrayData) -> Res<Mark>;
    /// Copies `data`'s elements into `dst` (exactly their bytes), once the kernels have reached
    /// `after` (where the ones that made `data` finished); returns when done.
    fn download(&self, data: &ArrayData, dst: &mut [u8], after: Mark) -> Res<()>;
}

/// Runs kernels in place of the evaluator (the CPU backend's compiled kernels).
pub trait Launcher {
    /// Runs kernel `seg` (bound to `pat`), taking its operands from `ev`; `None` when this
    /// launcher has no code for it (the evaluator then runs it).
    fn launch(&self, ev: &mut Evaluator, seg: &SegOp, pat: &[VarId]) -> Option<Res<Vec<Val>>>;

    /// Makes `replicate(n, v)`, with elements of type `elem`, where the kernels run (the CUDA
    /// executor: in the GPU's memory, for the kernels that read it); `None` leaves it to the
    /// evaluator.
    fn replicate(
        &self,
        _n: usize,
        _v: &Val,
        _elem: ogham_ir::types::PrimType,
    ) -> Option<Res<Array>> {
        None
    }

    /// Makes `iota(n)` where the kernels run; `None` leaves it to the evaluator.
    fn iota(&self, _n: usize) -> Option<Res<Array>> {
        None
    }

    /// Makes a fresh copy of `a` where the kernels run; `None` leaves it to the evaluator.
    fn copy(&self, _a: &Array) -> Option<Res<Array>> {
        None
    }

    /// Makes `a` with its axes permuted by `perm` (result axis `k` is `a`'s axis `perm[k]`)
    /// where the kernels run; `None` leaves it to the evaluator.
    fn rearrange(&self, _a: &Array, _perm: &[usize]) -> Option<Res<Array>> {
        None
    }

    /// Makes the concatenation of `parts` (of the same row shape), of shape `shape`, where the
    /// kernels run; `None` leaves it to the evaluator.
    fn concat(&self, _parts: &[Array], _shape: &[usize]) -> Option<Res<Array>> {
        None
    }

    /// The rows the kernels run in one round (a grid's worth of rows); a run in parts of rows
    /// chosen by the executor makes its parts whole multiples of it, so that the parts' last
    /// rounds are not partly idle more often than the whole run's last round (`parts.rs`).
    fn row_granule(&self) -> usize {
        1
    }

    /// The rows that fill the device with thread-level kernel `seg` when it runs one thread per
    /// row (a wave: the threads of its blocks that every multiprocessor holds at once); `None`
    /// when fewer rows cost no more time than they take (a CPU's cores). An executor's own plan
    /// of parts never cuts the rows of an entry point that launches such kernels
    /// ([`ogham_ir::rows::RowSplit::threads_per_row`]) into more than a quarter more waves of
    /// any of them in all than the whole run takes (`parts.rs`).
    fn rows_per_wave(&self, _seg: &SegOp) -> Option<usize> {
        None
    }

    /// Copies beside the kernels, for a run in parts of rows (`parts.rs`): the next part's
    /// input goes up and a finished part's outputs come back while a part's kernels run.
    /// `None`: the parts run one after the other.
    fn side(&self) -> Option<Box<dyn Side + '_>> {
        None
    }

    /// Waits until the kernels launched so far have finished (a part's last); the mark of that
    /// point, after which the side may read their results.
    fn finish_part(&self) -> Res<Mark> {
        Ok(Mark::default())
    }

    /// The kernels launched from now on go on only after `mark` (a side upload they read).
    fn wait_for(&self, _mark: Mark) {}

    /// Reports the failure of a kernel launched without waiting for its checks, if one failed
    /// (the CUDA executors read their failure record here rather than after each launch). The
    /// evaluator calls it before the host reads elements of arrays (which kernels may have
    /// made from a failed kernel's results) and when the run's body ends.
    fn settle(&self, _ev: &mut Evaluator) -> Res<()> {
        Ok(())
    }

    /// Whether a part of rows that failed (or the whole run after parts) should be evaluated
    /// once more: the launcher found that it must wait where it did not (the CUDA executors,
    /// after a launch not waited for ran out of arena). Asking clears it.
    fn rerun(&self) -> bool {
        false
    }
}

/// Runs the code of one function, core or kernel IR.
pub struct Evaluator<'f> {
    /// The function's variables.
    vars: &'f [VarInfo],
    thresholds: &'f HashMap<ThresholdId, i64>,
    launcher: Option<&'f dyn Launcher>,
    /// The value of every variable bound so far, by arena index.
    env: Vec<Option<Val>>,
    /// The location of the statement being executed.
    pub(crate) loc: Span,
}

impl<'f> Evaluator<'f> {
    pub fn new<F: Form>(
        function: &'f Function<F>,
        thresholds: &'f HashMap<ThresholdId, i64>,
        launcher: Option<&'f dyn Launcher>,
    ) -> Evaluator<'f> {
        Evaluator {
            vars: &function.vars,
            thresholds,
            launcher,
            env: vec![None; function.vars.len()],
            loc: Span::default(),
        }
    }

    /// Binds the parameters (and size parameters) and runs the function's body.
    pub fn run<F: Form>(&mut self, body: &Body<F>, params: Vec<(VarId, Val)>) -> Res<Vec<Val>> {
        for (v, val) in params {
            self.bind(v, val);
        }
        let results = self.body(body);
        // A kernel that failed before the body's own error comes first, as in the interpreter.
        self.settle()?;
        results
    }

    /// Reports a failure of the kernels launched so far ([`Launcher::settle`]).
    fn settle(&mut self) -> Res<()> {
        match self.launcher {
            Some(launcher) => launcher.settle(self),
            None => Ok(()),
        }
    }

    /// The type of a variable of the function.
    pub(crate) fn ty(&self, v: VarId) -> &'f Type {
        &self.vars[v.index()].ty
    }

    fn internal(&self, what: impl Into<String>) -> Box<Diagnostic> {
        error(R_INTERNAL, self.loc, what)
    }

    fn bind(&mut self, v: VarId, val: Val) {
        self.env[v.index()] = Some(val);
    }

    pub(crate) fn var(&self, v: VarId) -> Res<Val> {
        self.env[v.index()].clone().ok_or_else(|| {
            let name = &self.vars[v.index()].name;
            self.internal(format!("variable {name}_{} used before it is bound", v.0))
        })
    }

    /// Takes a consumed array out of the environment, so that updating it does not copy.
    pub(crate) fn consume(&mut self, v: VarId) -> Res<Array> {
        match self.env[v.index()].take() {
            Some(Val::Array(a)) => Ok(a),
            _ => Err(self.internal("consumed operand is not a bound array")),
        }
    }

    pub(crate) fn operand(&self, se: SubExp) -> Res<Val> {
        match se {
            SubExp::Const(c) => Ok(Val::Prim(c.into())),
            SubExp::Var(v) => self.var(v),
        }
    }

    pub(crate) fn scalar(&self, se: SubExp) -> Res<Scalar> {
        match self.operand(se)? {
            Val::Prim(s) => Ok(s),
            _ => Err(self.internal("expected a scalar operand")),
        }
    }

    pub(crate) fn int(&self, se: SubExp) -> Res<i64> {
        match self.scalar(se)? {
            Scalar::I64(n) => Ok(n),
            _ => Err(self.internal("expected an i64 operand")),
        }
    }

    fn boolean(&self, se: SubExp) -> Res<bool> {
        match self.scalar(se)? {
            Scalar::Bool(b) => Ok(b),
            _ => Err(self.internal("expected a bool operand")),
        }
    }

    fn array(&self, v: VarId) -> Res<Array> {
        match self.var(v)? {
            Val::Array(a) => Ok(a),
            _ => Err(self.internal("expected an array operand")),
        }
    }

    /// A size operand: a non-negative `i64`.
    pub(crate) fn size(&self, se: SubExp, what: &str) -> Res<usize> {
        let n = self.int(se)?;
        usize::try_from(n)
            .map_err(|_| error(R_NEG_SIZE, self.loc, format!("{what}: negative size {n}")))
    }

    /// A count of elements (`iota`, `replicate`): the interpreter's check ([`sizes::count`],
    /// error `R0706`).
    fn count(&self, se: SubExp, what: &str) -> Res<usize> {
        sizes::count(self.int(se)?).map_err(|e| error(R_NEG_SIZE, self.loc, e.message(what)))
    }

    /// The shape of a type, its dimensions evaluated.
    pub(crate) fn shape(&self, ty: &Type) -> Res<Vec<usize>> {
        ty.shape().iter().map(|d| self.size(*d, "array")).collect()
    }

    pub fn body<H: Form>(&mut self, body: &Body<H>) -> Res<Vec<Val>> {
        for stmt in &body.stmts {
            self.stmt(stmt)?;
        }
        body.result.iter().map(|se| self.operand(*se)).collect()
    }

    fn stmt<H: Form>(&mut self, stmt: &Stmt<H>) -> Res<()> {
        if reads_elements(&stmt.exp) {
            self.settle()?;
        }
        self.loc = stmt.loc;
        let vals = self.exp(&stmt.exp, &stmt.pat)?;
        if vals.len() != stmt.pat.len() {
            return Err(self.internal(format!(
                "statement returned {} values for {} variables",
                vals.len(),
                stmt.pat.len()
            )));
        }
        for (v, val) in stmt.pat.iter().zip(vals) {
            self.bind(*v, val);
        }
        Ok(())
    }

    fn op_error(&self, e: OpError, symbol: &str) -> Box<Diagnostic> {
        match e {
            OpError::DivByZero => div_by_zero(self.loc, symbol),
            OpError::IllTyped => self.internal("ill-typed operand"),
        }
    }

    fn exp<H: Form>(&mut self, exp: &Exp<H>, pat: &[VarId]) -> Res<Vec<Val>> {
        let one = |v: Val| Ok(vec![v]);
        match exp {
            Exp::SubExp(se) => one(self.operand(*se)?),
            Exp::BinOp(op, a, b) => {
                let (a, b) = (self.scalar(*a)?, self.scalar(*b)?);
                let r = scalar::binop(*op, a, b).map_err(|e| self.op_error(e, op.symbol()))?;
                one(Val::Prim(r))
            }
            Exp::UnOp(op, a) => {
                let r = scalar::unop(*op, self.scalar(*a)?)
                    .map_err(|e| self.op_error(e, op.symbol()))?;
                one(Val::Prim(r))
            }
            Exp::Math(f, _, args) => {
                let args: Vec<Scalar> = args.iter().map(|a| self.scalar(*a)).collect::<Res<_>>()?;
                let r = scalar::math(*f, &args).map_err(|e| self.op_error(e, "math"))?;
                one(Val::Prim(r))
            }
            Exp::Convert(to, a) => one(Val::Prim(scalar::convert(self.scalar(*a)?, *to))),
            Exp::Index(a, idx) => {
                let a = self.array(*a)?;
                let args = self.index_args(idx)?;
                one(index::index(&a, &args).map_err(|e| error(e.code, self.loc, e.message))?)
            }
            Exp::Update(a, idx, v) => {
                let args = self.index_args(idx)?;
                let value = self.operand(*v)?;
                let a = self.consume(*a)?;
                let a = index::update(a, &args, value)
                    .map_err(|e| error(e.code, self.loc, e.message))?;
                one(Val::Array(a))
            }
            Exp::Iota(n) => {
                let n = self.count(*n, "iota")?;
                if let Some(made) = self.launcher.and_then(|l| l.iota(n)) {
                    return one(Val::Array(made?));
                }
                memory::reserve(n, 8, "iota", self.loc)?;
                let data = ArrayData::I64((0..n as i64).collect());
                one(Val::Array(Array::new(vec![n], Store::Prim(data))))
            }
            Exp::Replicate(n, v) => one(Val::Array(self.replicate_exp(*n, *v, pat)?)),
            Exp::ArrayLit(elems, elem_ty) => {
                let rows: Vec<Val> = elems.iter().map(|e| self.operand(*e)).collect::<Res<_>>()?;
                let mut shape = vec![rows.len()];
                shape.extend(self.shape(elem_ty)?);
                one(Val::Array(self.build(shape, elem_ty.elem(), rows)?))
            }
            Exp::Rearrange(a, perm) => {
                let a = self.array(*a)?;
                if let Some(made) = self.launcher.and_then(|l| l.rearrange(&a, perm)) {
                    return one(Val::Array(made?));
                }
                self.settle()?;
                one(Val::Array(self.rearrange(&a, perm)?))
            }
            Exp::Reshape(a, dims) => {
                let a = self.array(*a)?;
                let shape: Vec<usize> = dims
                    .iter()
                    .map(|d| self.size(*d, "reshape"))
                    .collect::<Res<_>>()?;
                self.check_reshape(a.shape(), dims, &shape)?;
                one(Val::Array(a.reshape(shape)))
            }
            Exp::Concat(arrays) => one(Val::Array(self.concat(arrays)?)),
            Exp::Copy(a) => {
                let a = self.array(*a)?;
                if let Some(made) = self.launcher.and_then(|l| l.copy(&a)) {
                    return one(Val::Array(made?));
                }
                self.settle()?;
                one(Val::Array(Array::new(a.shape().to_vec(), a.to_store())))
            }
            Exp::Assert {
                cond,
                message,
                kind,
            } => {
                if self.boolean(*cond)? {
                    Ok(vec![])
                } else {
                    Err(assert_failed(self.loc, message, *kind))
                }
            }
            Exp::Trace { label, value } => {
                let elem = match value {
                    SubExp::Const(c) => c.prim_type(),
                    SubExp::Var(v) => self.ty(*v).elem(),
                };
                crate::trace::emit(label, self.loc, &self.operand(*value)?, elem);
                Ok(vec![])
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                if self.boolean(*cond)? {
                    self.body(then_body)
                } else {
                    self.body(else_body)
                }
            }
            Exp::Loop { params, form, body } => self.run_loop(params, form, body),
            Exp::Soac(soac) => self.soac(soac, pat),
            Exp::Host(host) => match host.host() {
                HostOp::Seg(seg) => {
                    if let Some(launched) = self.launcher.and_then(|l| l.launch(self, seg, pat)) {
                        return launched;
                    }
                    self.settle()?;
                    self.seg(seg, pat)
                }
                HostOp::Threshold { id, size } => {
                    let size = self.int(*size)?;
                    let limit = *self
                        .thresholds
                        .get(id)
                        .ok_or_else(|| self.internal(format!("unknown threshold `{id}`")))?;
                    one(Val::Prim(Scalar::Bool(size >= limit)))
                }
            },
        }
    }

    /// `replicate n v`, its size checked and its memory reserved first.
    fn replicate_exp(&mut self, n: SubExp, v: SubExp, pat: &[VarId]) -> Res<Array> {
        let n = self.count(n, "replicate")?;
        let v = self.operand(v)?;
        let elem = self.ty(pat[0]).elem();
        let row = match &v {
            Val::Array(a) => a.elem_count(),
            _ => 1,
        };
        let total = sizes::replicated(n, row)
            .ok_or_else(|| error(R_NEG_SIZE, self.loc, "replicate: the result is too large"))?;
        memory::reserve(total, elem.byte_size(), "replicate", self.loc)?;
        if let Some(made) = self.launcher.and_then(|l| l.replicate(n, &v, elem)) {
            return made;
        }
        self.settle()?;
        self.replicate(n, &v, elem)
    }

    /// `concat` of arrays whose rows have the same shape.
    fn concat(&mut self, arrays: &[VarId]) -> Res<Array> {
        let parts: Vec<Array> = arrays.iter().map(|a| self.array(*a)).collect::<Res<_>>()?;
        let row_shape = parts[0].shape()[1..].to_vec();
        for p in &parts {
            if p.shape()[1..] != row_shape[..] {
                return Err(error(
                    R_SIZE,
                    self.loc,
                    format!(
                        "cannot concatenate arrays of shapes {} and {}",
                        shape_text(parts[0].shape()),
                        shape_text(p.shape())
                    ),
                ));
            }
        }
        let mut shape = vec![parts.iter().map(|p| p.len()).sum()];
        shape.extend(row_shape);
        if let Some(made) = self.launcher.and_then(|l| l.concat(&parts, &shape)) {
            return made;
        }
        self.settle()?;
        let mut store = parts[0].store().empty_like();
        for p in &parts {
            store
                .extend_from(p.store(), p.range())
                .map_err(|()| self.internal("concatenation of different types"))?;
        }
        Ok(Array::new(shape, store))
    }

    /// The run-time check of `Reshape`, with the interpreter's messages: a reshape to the same
    /// rank is a size coercion (`:>`, every dimension must match); one more dimension is an
    /// `unflatten` (the element counts must match).
    pub(crate) fn check_reshape(
        &self,
        from: &[usize],
        dims: &[SubExp],
        shape: &[usize],
    ) -> Res<()> {
        if from.len() == shape.len() {
            for (d, (&have, &want)) in from.iter().zip(shape).enumerate() {
                if have != want {
                    let size = match dims[d] {
                        SubExp::Var(v) => format!("`{}` = {want}", self.vars[v.index()].name),
                        SubExp::Const(_) => want.to_string(),
                    };
                    return Err(error(
                        R_COERCE,
                        self.loc,
                        format!(
                            "value of shape {} cannot be coerced to size {size}",
                            shape_text(from)
                        ),
                    ));
                }
            }
            return Ok(());
        }
        if sizes::product(shape).is_none_or(|n| Some(n) != sizes::product(from)) {
            let message = match shape {
                [n, m, ..] if shape.len() == from.len() + 1 => format!(
                    "unflatten {n} {m}: the array has {} elements, not {n}×{m}",
                    from[0]
                ),
                _ => format!(
                    "cannot give an array of shape {} the shape {}",
                    shape_text(from),
                    shape_text(shape)
                ),
            };
            return Err(error(R_SIZE, self.loc, message));
        }
        Ok(())
    }

    fn index_args(&self, idx: &[DimIndex]) -> Res<Vec<IdxArg>> {
        idx.iter()
            .map(|d| match d {
                DimIndex::Fix(i) => Ok(IdxArg::At(self.int(*i)?)),
                DimIndex::Slice { start, len, stride } => Ok(slice_arg(
                    self.int(*start)?,
                    self.int(*len)?,
                    self.int(*stride)?,
                )),
            })
            .collect()
    }

    /// An array of the given shape from its rows (scalars or arrays of the row shape).
    fn build(
        &self,
        shape: Vec<usize>,
        elem: ogham_ir::types::PrimType,
        rows: impl IntoIterator<Item = Val>,
    ) -> Res<Array> {
        let mut store = Store::Prim(ArrayData::with_capacity(elem, 0));
        for row in rows {
            match (&mut store, row) {
                (Store::Prim(d), Val::Prim(s)) => d
                    .push(s)
                    .ok_or_else(|| self.internal("row of another type"))?,
                (store, Val::Array(a)) => {
                    if a.shape() != &shape[1..] {
                        return Err(error(
                            crate::error::R_IRREGULAR,
                            self.loc,
                            format!(
                                "irregular array: rows of shapes {} and {}",
                                shape_text(&shape[1..]),
                                shape_text(a.shape())
                            ),
                        ));
                    }
                    store
                        .extend_from(a.store(), a.range())
                        .map_err(|()| self.internal("row of another type"))?
                }
                _ => return Err(self.internal("row of another kind")),
            }
        }
        Ok(Array::new(shape, store))
    }

    fn replicate(&self, n: usize, v: &Val, elem: ogham_ir::types::PrimType) -> Res<Array> {
        let mut shape = vec![n];
        if let Val::Array(a) = v {
            shape.extend_from_slice(a.shape());
            if a.elem_count() == 0 {
                // No data: no loop over (and no list of) up to 2^32 empty rows.
                return Ok(Array::new(
                    shape,
                    Store::Prim(ArrayData::with_capacity(elem, 0)),
                ));
            }
        }
        self.build(shape, elem, std::iter::repeat_n(v.clone(), n))
    }

    fn rearrange(&self, a: &Array, perm: &[usize]) -> Res<Array> {
        let shape = a.shape();
        let new_shape: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
        Ok(Array::new(
            new_shape,
            a.store().permuted(a.range(), shape, perm),
        ))
    }

    fn run_loop<H: Form>(
        &mut self,
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body<H>,
    ) -> Res<Vec<Val>> {
        let mut state: Vec<Val> = params
            .iter()
            .map(|(_, init)| self.operand(*init))
            .collect::<Res<_>>()?;
        let mut iteration = 0i64;
        loop {
            for ((p, _), val) in params.iter().zip(state.drain(..)) {
                self.bind(*p, val);
            }
            let go = match form {
                LoopForm::For { index, bound } => {
                    let go = iteration < self.int(*bound)?;
                    self.bind(*index, Val::Prim(Scalar::I64(iteration)));
                    go
                }
                LoopForm::While { cond } => self.boolean(SubExp::Var(*cond))?,
            };
            if !go {
                return params.iter().map(|(p, _)| self.var(*p)).collect();
            }
            state = self.body(body)?;
            iteration += 1;
        }
    }
}

/// Whether evaluating `exp` on the host reads elements of arrays, not only their shapes: the
/// kernels launched so far must then have settled ([`Launcher::settle`]). Data steps that a
/// launcher may make on its device settle where the evaluator makes them itself instead; control
/// flow settles statement by statement.
fn reads_elements<H: Form>(exp: &Exp<H>) -> bool {
    match exp {
        Exp::Index(..) | Exp::Update(..) | Exp::ArrayLit(..) | Exp::Trace { .. } | Exp::Soac(_) => {
            true
        }
        Exp::SubExp(_)
        | Exp::BinOp(..)
        | Exp::UnOp(..)
        | Exp::Math(..)
        | Exp::Convert(..)
        | Exp::Iota(_)
        | Exp::Replicate(..)
        | Exp::Rearrange(..)
        | Exp::Reshape(..)
        | Exp::Concat(_)
        | Exp::Copy(_)
        | Exp::Assert { .. }
        | Exp::If { .. }
        | Exp::Loop { .. }
        | Exp::Host(_) => false,
    }
}

/// The error of a failed [`Exp::Assert`] (the interpreter's: `R0704` for sizes, `R0710` for
/// a source `assert`).
pub(crate) fn assert_failed(loc: Span, message: &str, kind: AssertKind) -> Box<Diagnostic> {
    match kind {
        AssertKind::Size => error(R_SIZE, loc, message.to_string()),
        AssertKind::User => crate::error::assertion_failed(loc, message),
    }
}

/// The error of an integer division by zero.
pub(crate) fn div_by_zero(loc: Span, symbol: &str) -> Box<Diagnostic> {
    Box::new(
        error(R_DIV_ZERO, loc, format!("division by zero (`{symbol}`)"))
            .with_help("guard the divisor, e.g. `if d == 0 then ... else x / d`"),
    )
}

/// The interpreter's form of the IR slice `start`, `len` elements, `stride`.
pub(crate) fn slice_arg(start: i64, len: i64, stride: i64) -> IdxArg {
    // One past the last element taken (a negative `len` comes from reversed bounds and gives
    // them back, for the interpreter's check to reject).
    let end = if len > 0 {
        let last = start.wrapping_add((len - 1).wrapping_mul(stride));
        last.wrapping_add(stride.signum())
    } else {
        start.wrapping_add(len.wrapping_mul(stride))
    };
    IdxArg::Slice {
        start: Some(start),
        end: Some(end),
        // The interpreter's messages show a unit stride as omitted.
        stride: (stride != 1).then_some(stride),
    }
}

/// The number of points of a kernel's space; error `R0709` when it exceeds any memory (its
/// results could not be stored).
pub(crate) fn kernel_points(space: &[usize], loc: Span) -> Res<usize> {
    sizes::product(space).ok_or_else(|| {
        error(
            crate::error::R_OUT_OF_MEMORY,
            loc,
            format!(
                "out of memory: a parallel operation over {} points",
                shape_text(space)
            ),
        )
    })
}

fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}
