//! Inference for expressions, patterns and function definitions.
//!
//! Every visited expression gets its (not yet resolved) type in `Checker::pending`; the
//! definition's end (`Checker::finish_def_exprs`) resolves and exports them. Arguments of an
//! application are inferred before the function's parameter types are unified with them, so
//! the error for a wrong argument points at that argument.

use super::names::Instance;
use super::unify::{Constraint, PrimSet, Sz, Ty};
use super::{Checker, Resolution, Scheme, result_expr};
use crate::builtins::{self, ArrayFn, Builtin, GenericFn};
use crate::syntax::ast::{
    BinOp, Expr, ExprKind, Ident, IndexArg, LitValue, LocalFun, LoopForm, Pattern, TypeExp,
    TypeParam, UnOp,
};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;
use std::collections::BTreeMap;
use std::rc::Rc;

const I64: Ty = Ty::Prim(PrimType::I64);
const BOOL: Ty = Ty::Prim(PrimType::Bool);

impl Checker<'_> {
    /// Infers the type of `e` and records it.
    pub(super) fn infer(&mut self, e: &Expr) -> Ty {
        let t = self.infer_kind(e);
        self.record(e, &t);
        t
    }

    fn record(&mut self, e: &Expr, t: &Ty) {
        if let Some(slot) = self.pending.get_mut(e.id.0 as usize) {
            *slot = Some(t.clone());
            self.def_exprs.push(e.id);
        }
    }

    fn infer_kind(&mut self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Lit(lit) => self.infer_literal(e, lit.value, lit.suffix),
            ExprKind::Var(name) => self.lookup_var(e, name).ty,
            ExprKind::Tuple(es) => Ty::Tuple(es.iter().map(|e| self.infer(e)).collect()),
            ExprKind::Record(fields) => {
                let typed: Vec<(&Ident, Ty)> = fields
                    .iter()
                    .map(|(name, value)| (name, self.infer(value)))
                    .collect();
                self.record_type(typed)
            }
            ExprKind::ArrayLit(es) => {
                let elem = self.subst.fresh(Constraint::None, e.span);
                for (i, x) in es.iter().enumerate() {
                    let t = self.infer(x);
                    let why = (i > 0).then(|| {
                        (
                            es[0].span,
                            "expected because of the first element".to_string(),
                        )
                    });
                    self.expect(&elem, &t, x.span, why);
                }
                Ty::array(elem, Sz::Const(es.len() as u64))
            }
            ExprKind::Field(inner, field) if self.param_module(inner).is_some() => {
                let param = self.param_module(inner).unwrap_or_default();
                self.record(inner, &Ty::unit());
                self.param_member(e, param, field)
            }
            ExprKind::Field(inner, field) => {
                let t = self.infer(inner);
                let ft = self.subst.fresh(Constraint::None, field.span);
                let fields = BTreeMap::from([(field.name.clone(), ft.clone())]);
                let rec = self.subst.fresh(Constraint::Fields(fields), field.span);
                match self.subst.unify(&rec, &t) {
                    Ok(()) => ft,
                    Err(m) => {
                        let d = self.mismatch(m, &rec, &t, inner.span);
                        self.error(d);
                        Ty::Error
                    }
                }
            }
            ExprKind::Index(arr, args) => {
                let t = self.infer(arr);
                self.index(&t, args, arr.span).0
            }
            ExprKind::Apply(f, args) => {
                let callee = match &f.kind {
                    ExprKind::Var(name) => {
                        let inst = self.lookup_var(f, name);
                        self.record(f, &inst.ty);
                        inst
                    }
                    _ => self.infer(f).into(),
                };
                let args: Vec<(&Expr, Ty)> = args.iter().map(|a| (a, self.infer(a))).collect();
                let callee = self.arity_instance(f, &args).unwrap_or(callee);
                self.apply(f.span, callee, &args)
            }
            ExprKind::BinOp(BinOp::PipeRight, x, f) => {
                let tx = self.infer(x);
                let tf = self.infer(f);
                let args = [(&**x, tx)];
                let callee = self.arity_instance(f, &args).unwrap_or(tf.into());
                self.apply(f.span, callee, &args)
            }
            ExprKind::BinOp(BinOp::PipeLeft, f, x) => {
                let tf = self.infer(f);
                let args = [(&**x, self.infer(x))];
                let callee = self.arity_instance(f, &args).unwrap_or(tf.into());
                self.apply(f.span, callee, &args)
            }
            ExprKind::BinOp(op, l, r) => {
                let (lt, rt, res) = self.op_signature(*op, e.span);
                let tl = self.infer(l);
                let tr = self.infer(r);
                let why = format!("required by `{}`", op.symbol());
                let ok = self.expect(&lt, &tl, l.span, Some((e.span, why)));
                let shown = self.subst.show(&tl);
                let why = Some((l.span, format!("the left operand has type `{shown}`")));
                if ok && self.expect(&rt, &tr, r.span, why) {
                    res
                } else {
                    Ty::Error
                }
            }
            ExprKind::UnOp(op, x) => {
                let set = match op {
                    UnOp::Neg => PrimSet::numeric(),
                    UnOp::Not => PrimSet::bool_or_int(),
                };
                let a = self.subst.fresh(Constraint::Prims(set), e.span);
                let tx = self.infer(x);
                let sym = if *op == UnOp::Neg { "-" } else { "!" };
                if self.expect(
                    &a,
                    &tx,
                    x.span,
                    Some((e.span, format!("required by `{sym}`"))),
                ) {
                    a
                } else {
                    Ty::Error
                }
            }
            ExprKind::OpSection(op) => {
                let (l, r, res) = self.op_signature(*op, e.span);
                Ty::fun(l, Ty::fun(r, res))
            }
            ExprKind::LeftSection(op, x) => {
                let (l, r, res) = self.op_signature(*op, e.span);
                let tx = self.infer(x);
                self.expect(
                    &l,
                    &tx,
                    x.span,
                    Some((e.span, format!("required by `{}`", op.symbol()))),
                );
                Ty::fun(r, res)
            }
            ExprKind::RightSection(op, y) => {
                let (l, r, res) = self.op_signature(*op, e.span);
                let ty = self.infer(y);
                self.expect(
                    &r,
                    &ty,
                    y.span,
                    Some((e.span, format!("required by `{}`", op.symbol()))),
                );
                Ty::fun(l, res)
            }
            ExprKind::Lambda(params, ret, body) => {
                let mark = self.locals.len();
                let mut tys = Vec::new();
                for p in params {
                    let t = self.subst.fresh(Constraint::None, p.span());
                    self.bind_pattern(p, &t, None);
                    tys.push(t);
                }
                let tb = self.infer(body);
                let result = match ret {
                    Some(r) => self.check_result(r, &tb, body),
                    None => tb,
                };
                self.locals.truncate(mark);
                tys.into_iter().rev().fold(result, |r, p| Ty::fun(p, r))
            }
            ExprKind::Let(pat, value, body) => {
                let tv = self.infer(value);
                let size = self.size_alias(value);
                let mark = self.locals.len();
                self.bind_pattern(pat, &tv, size);
                let tb = self.infer(body);
                self.locals.truncate(mark);
                tb
            }
            ExprKind::LetFun(fun, body) => {
                let scheme = Rc::new(self.check_local_fun(fun));
                let mark = self.locals.len();
                let id = self.bind_local(&fun.name, scheme.ty.clone(), None);
                if let Some(local) = self.locals.last_mut() {
                    local.scheme = Some(Rc::clone(&scheme));
                }
                self.local_funs.insert(id, scheme);
                let tb = self.infer(body);
                self.locals.truncate(mark);
                tb
            }
            ExprKind::LetWith(name, idx, value, body) => {
                let t = match self.locals.iter().rev().find(|l| l.name == name.name) {
                    Some(local) => {
                        let (id, t) = (local.id, local.ty.clone());
                        self.uses.insert(e.id, id);
                        t
                    }
                    None => {
                        self.error(
                            Diagnostic::error(
                                "E0211",
                                format!("`{}` is not a local variable", name.name),
                            )
                            .with_primary(name.span, "only local arrays can be updated in place")
                            .with_help(format!(
                                "bind a copy first: `let {0} = copy {0}`",
                                name.name
                            )),
                        );
                        Ty::Error
                    }
                };
                self.update(&t, idx, value, name.span);
                let mark = self.locals.len();
                self.bind_local(name, t, None);
                let tb = self.infer(body);
                self.locals.truncate(mark);
                tb
            }
            ExprKind::Assert(c, _, x) => {
                let tc = self.infer(c);
                self.expect(&BOOL, &tc, c.span, None);
                self.infer(x)
            }
            ExprKind::Trace(_, x) => self.infer_trace(x),
            ExprKind::If(c, t, f) => {
                let tc = self.infer(c);
                self.expect(&BOOL, &tc, c.span, None);
                let tt = self.infer(t);
                let tf = self.infer(f);
                let why = Some((
                    result_expr(t).span,
                    "expected because of the `then` branch".to_string(),
                ));
                self.lenient(|c| c.expect(&tt, &tf, result_expr(f).span, why));
                self.join(&tt, &tf)
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.infer_loop(e, pat, init.as_deref(), form, body),
            ExprKind::Update(arr, idx, value) => {
                let t = self.infer(arr);
                self.update(&t, idx, value, arr.span);
                t
            }
            ExprKind::RecordUpdate(r, path, value) => {
                let tr = self.infer(r);
                let tv = self.infer(value);
                let mut expected = tv;
                for field in path.iter().rev() {
                    let fields = BTreeMap::from([(field.name.clone(), expected)]);
                    expected = self.subst.fresh(Constraint::Fields(fields), field.span);
                }
                if let Err(m) = self.subst.unify(&expected, &tr) {
                    let d = self.mismatch(m, &expected, &tr, r.span);
                    self.error(d);
                }
                tr
            }
            ExprKind::Ascribe(x, t) => {
                let tx = self.infer(x);
                let tt = self.convert_type(t);
                let why = Some((t.span(), "expected because of this annotation".to_string()));
                self.expect(&tt, &tx, x.span, why);
                tx
            }
            ExprKind::Coerce(x, t) => {
                let tx = self.infer(x);
                let tt = self.convert_type(t);
                let why = Some((t.span(), "expected because of this coercion".to_string()));
                let old = std::mem::replace(&mut self.subst.coercing, true);
                self.lenient(|c| c.expect(&tt, &tx, x.span, why));
                self.subst.coercing = old;
                tt
            }
        }
    }

    /// Unifies without reporting (where failure is impossible or reported elsewhere).
    fn infer_ok(&mut self, a: &Ty, b: &Ty) {
        let _ = self.subst.unify(a, b);
    }

    /// Runs `f` with size comparisons switched off (`:>`, branches and loops, whose sizes may
    /// differ: the result gets an unknown size where they do, see [`Checker::join`]).
    fn lenient<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let old = std::mem::replace(&mut self.subst.lenient_sizes, true);
        let r = f(self);
        self.subst.lenient_sizes = old;
        r
    }

    /// The type of a value that is either of type `a` or of type `b` (which unify up to sizes):
    /// sizes on which they disagree become unknown.
    fn join(&mut self, a: &Ty, b: &Ty) -> Ty {
        match (self.subst.shallow(a), self.subst.shallow(b)) {
            (Ty::Array(x, s), Ty::Array(y, t)) => {
                let (s, t) = (self.subst.shallow_size(s), self.subst.shallow_size(t));
                let size = if s == t {
                    s
                } else {
                    self.subst.fresh_unknown()
                };
                Ty::array(self.join(&x, &y), size)
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                Ty::Tuple(xs.iter().zip(&ys).map(|(x, y)| self.join(x, y)).collect())
            }
            (Ty::Record(xs), Ty::Record(ys)) if xs.len() == ys.len() => Ty::Record(
                xs.iter()
                    .zip(&ys)
                    .map(|((n, x), (_, y))| (n.clone(), self.join(x, y)))
                    .collect(),
            ),
            (a, _) => a,
        }
    }

    fn infer_literal(&mut self, e: &Expr, value: LitValue, suffix: Option<PrimType>) -> Ty {
        match (value, suffix) {
            (LitValue::Bool(_), _) => BOOL,
            (LitValue::Int(v), None) => {
                self.int_lits.push((e.id, v, e.span));
                self.subst
                    .fresh(Constraint::Prims(PrimSet::numeric()), e.span)
            }
            (LitValue::Int(v), Some(p)) if p != PrimType::Bool => {
                if p.is_int() && p.byte_size() < 8 && v >= 1u64 << (8 * p.byte_size()) {
                    self.error(
                        Diagnostic::error("E0302", format!("literal out of range for `{p}`"))
                            .with_primary(e.span, format!("`{v}` does not fit in `{p}`")),
                    );
                }
                Ty::Prim(p)
            }
            (_, None) => self
                .subst
                .fresh(Constraint::Prims(PrimSet::float()), e.span),
            (_, Some(p)) if p.is_float() => Ty::Prim(p),
            (_, Some(p)) => {
                self.error(
                    Diagnostic::error("E0302", format!("this literal cannot have type `{p}`"))
                        .with_primary(e.span, format!("not a valid `{p}`")),
                );
                Ty::Error
            }
        }
    }

    /// Parameter, parameter and result types of a binary operator.
    fn op_signature(&mut self, op: BinOp, span: Span) -> (Ty, Ty, Ty) {
        let mut constrained = |set| self.subst.fresh(Constraint::Prims(set), span);
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow => {
                let a = constrained(PrimSet::numeric());
                (a.clone(), a.clone(), a)
            }
            BinOp::Quot
            | BinOp::Rem
            | BinOp::BitOr
            | BinOp::BitXor
            | BinOp::BitAnd
            | BinOp::Shl
            | BinOp::Shr => {
                let a = constrained(PrimSet::int());
                (a.clone(), a.clone(), a)
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let a = constrained(PrimSet::any());
                (a.clone(), a, BOOL)
            }
            BinOp::And | BinOp::Or => (BOOL, BOOL, BOOL),
            BinOp::PipeRight | BinOp::PipeLeft => {
                let a = self.subst.fresh(Constraint::None, span);
                let b = self.subst.fresh(Constraint::None, span);
                let f = Ty::fun(a.clone(), b.clone());
                if op == BinOp::PipeRight {
                    (a, f, b)
                } else {
                    (f, a, b)
                }
            }
        }
    }

    /// Applies a function of type `callee.ty` (the expression at `callee_span`) to arguments
    /// whose types are already inferred.
    fn apply(&mut self, callee_span: Span, callee: Instance, args: &[(&Expr, Ty)]) -> Ty {
        let mut ty = callee.ty;
        let mut adjacency = self.adjacency_hint(callee_span, args);
        for (i, (arg, at)) in args.iter().enumerate() {
            for &(_, s) in callee.deps.iter().filter(|(k, _)| *k == i) {
                let size = self.size_of(arg);
                if let Err(m) = self.subst.unify_size(s, size) {
                    let d = self.mismatch(m, &I64, &I64, arg.span);
                    self.error(d.with_note(
                        "this argument is the size of an array argument or of the result",
                    ));
                }
            }
            let (p, r) = match self.subst.shallow(&ty) {
                Ty::Fun(p, r) => (*p, *r),
                Ty::Error => return Ty::Error,
                Ty::Var(v) if self.subst.tvars[v as usize].constraint == Constraint::None => {
                    if i == 0 {
                        self.note_spaced_call(callee_span, arg);
                    }
                    let p = self.subst.fresh(Constraint::None, arg.span);
                    let r = self.subst.fresh(Constraint::None, arg.span);
                    self.infer_ok(&ty, &Ty::fun(p.clone(), r.clone()));
                    (p, r)
                }
                other => {
                    let shown = self.subst.show(&other);
                    let d = if i == 0 {
                        let spaced = self.spaced_index(callee_span, arg);
                        adjacency = spaced.or(adjacency);
                        Diagnostic::error("E0305", "this is not a function")
                            .with_primary(callee_span, format!("has type `{shown}`"))
                            .with_secondary(arg.span, "applied to this argument")
                    } else {
                        Diagnostic::error(
                            "E0305",
                            format!("too many arguments: the function takes {i}"),
                        )
                        .with_primary(arg.span, "unexpected argument")
                        .with_secondary(
                            callee_span,
                            format!("after {i} arguments this is `{shown}`"),
                        )
                    };
                    self.error(match adjacency.take() {
                        Some(help) => d.with_help(help),
                        None => d,
                    });
                    return Ty::Error;
                }
            };
            if let Err(m) = self.subst.unify(&p, at) {
                let size_mismatch = match &m {
                    super::Mismatch::Sizes(s, _) => Some(*s),
                    _ => None,
                };
                let mut d = self.mismatch(m, &p, at, arg.span);
                let shown = self.subst.show(&p);
                d = d.with_secondary(
                    callee_span,
                    format!("argument {} of this function has type `{shown}`", i + 1),
                );
                if let Some(s) = size_mismatch {
                    for (prev, pt) in &args[..i] {
                        if self.mentions_size(pt, s) {
                            let name = self.subst.show_size(s);
                            d = d.with_secondary(prev.span, format!("this has size `{name}`"));
                        }
                    }
                }
                if let Some(help) = adjacency.take() {
                    d = d.with_help(help);
                }
                self.error(d);
            }
            ty = r;
        }
        ty
    }

    /// Whether `s` occurs in `t` (after resolution).
    fn mentions_size(&self, t: &Ty, s: Sz) -> bool {
        match self.subst.shallow(t) {
            Ty::Array(e, t) => self.subst.shallow_size(t) == s || self.mentions_size(&e, s),
            Ty::Tuple(ts) => ts.iter().any(|t| self.mentions_size(t, s)),
            Ty::Record(fs) => fs.iter().any(|(_, t)| self.mentions_size(t, s)),
            _ => false,
        }
    }

    /// The size an `i64` expression denotes when used as one (`iota n`): the size a variable
    /// stands for, a literal, `length xs`, or else an unknown size.
    fn size_of(&mut self, e: &Expr) -> Sz {
        match self.size_alias(e) {
            Some(s) => s,
            None => self.subst.fresh_unknown(),
        }
    }

    /// Like [`Checker::size_of`], `None` where the size is not known statically.
    fn size_alias(&mut self, e: &Expr) -> Option<Sz> {
        match &e.kind {
            ExprKind::Lit(lit) => match lit.value {
                LitValue::Int(v) => Some(Sz::Const(v)),
                _ => None,
            },
            ExprKind::Var(_) => {
                let id = self.uses.get(&e.id)?;
                self.locals
                    .iter()
                    .rev()
                    .find(|l| l.id == *id)
                    .map(|l| l.size)
            }
            ExprKind::Apply(f, args) if args.len() == 1 => {
                let is_length = matches!(
                    self.resolutions.get(f.id.0 as usize),
                    Some(Some(super::Resolution::Builtin(Builtin::Array(
                        ArrayFn::Length
                    ))))
                );
                let t = self.pending.get(args[0].id.0 as usize)?.as_ref()?;
                match (is_length, self.subst.shallow(t)) {
                    (true, Ty::Array(_, s)) => Some(self.subst.shallow_size(s)),
                    _ => None,
                }
            }
            ExprKind::Ascribe(x, _) => self.size_alias(x),
            _ => None,
        }
    }

    /// Checks index arguments against an array type; returns the type of `arr[args]`.
    fn index(&mut self, t: &Ty, args: &[IndexArg], arr_span: Span) -> (Ty, bool) {
        let mut dims = Vec::new();
        for arg in args {
            match arg {
                IndexArg::Index(i) => {
                    let ti = self.infer(i);
                    self.expect(&I64, &ti, i.span, None);
                }
                IndexArg::Slice {
                    start, end, stride, ..
                } => {
                    for part in [start, end, stride].into_iter().flatten() {
                        let tp = self.infer(part);
                        self.expect(&I64, &tp, part.span, None);
                    }
                }
            }
            dims.push(self.subst.fresh_size());
        }
        let elem = self.subst.fresh(Constraint::None, arr_span);
        let expected = dims
            .iter()
            .rev()
            .fold(elem.clone(), |t, s| Ty::array(t, *s));
        if let Err(
            super::Mismatch::Types(..)
            | super::Mismatch::NotIn { .. }
            | super::Mismatch::NoField { .. },
        ) = self.subst.unify(&expected, t)
        {
            let shown = self.subst.show(t);
            let rank = self.subst.resolve(t);
            let msg = if matches!(rank, Ty::Array(..)) {
                format!("too many indices for a value of type `{shown}`")
            } else {
                format!("cannot index into a value of type `{shown}`")
            };
            self.error(
                Diagnostic::error("E0304", msg)
                    .with_primary(arr_span, format!("this has type `{shown}`"))
                    .with_note(format!("{} index argument(s) given", args.len())),
            );
            return (Ty::Error, false);
        }
        let mut result = elem;
        for (arg, s) in args.iter().zip(dims).rev() {
            if let IndexArg::Slice {
                start, end, stride, ..
            } = arg
            {
                let whole = start.is_none() && end.is_none() && stride.is_none();
                let size = if whole { s } else { self.subst.fresh_unknown() };
                result = Ty::array(result, size);
            }
        }
        (result, true)
    }

    /// Checks `arr with [idx] = value` for an array of type `t`.
    fn update(&mut self, t: &Ty, idx: &[IndexArg], value: &Expr, arr_span: Span) {
        let (target, ok) = self.index(t, idx, arr_span);
        let tv = self.infer(value);
        if ok {
            // The shape of a value written into a slice is checked at run time.
            let why = Some((
                arr_span,
                "expected because of the updated array's type".to_string(),
            ));
            self.lenient(|c| c.expect(&target, &tv, value.span, why));
        }
    }

    fn infer_loop(
        &mut self,
        e: &Expr,
        pat: &Pattern,
        init: Option<&Expr>,
        form: &LoopForm,
        body: &Expr,
    ) -> Ty {
        let ti = match init {
            Some(init) => self.infer(init),
            None => self.pattern_value(e, pat),
        };
        // The bound and the iterated array are outside the loop parameter's scope.
        let form_ty = match form {
            LoopForm::For(_, n) => {
                let tn = self.infer(n);
                let a = self.subst.fresh(Constraint::Prims(PrimSet::int()), n.span);
                self.expect(&a, &tn, n.span, None);
                Some(a)
            }
            LoopForm::ForIn(_, xs) => {
                let tx = self.infer(xs);
                let elem = self.subst.fresh(Constraint::None, xs.span);
                let size = self.subst.fresh_size();
                self.expect(&Ty::array(elem.clone(), size), &tx, xs.span, None);
                Some(elem)
            }
            LoopForm::Range(_, lo, hi) => {
                let (tl, th) = (self.infer(lo), self.infer(hi));
                let a = self.subst.fresh(Constraint::Prims(PrimSet::int()), lo.span);
                let ok = self.expect(&a, &tl, lo.span, None) && {
                    let why = (lo.span, "the range starts here".to_string());
                    self.expect(&a, &th, hi.span, Some(why))
                };
                if let (false, Some(d)) = (ok, self.diags.last_mut())
                    && d.help.is_none()
                {
                    d.help = Some(
                        "a range loop counts over integers; for other steps count with an \
                         integer `k` and compute the value from it (`f64.i64 k * 0.5`)"
                            .to_string(),
                    );
                }
                Some(a)
            }
            LoopForm::While(_) => None,
        };
        let mark = self.locals.len();
        let acc = self.subst.fresh(Constraint::None, pat.span());
        self.lenient(|c| c.infer_ok(&acc, &ti));
        self.bind_pattern(pat, &acc, None);
        match (form, form_ty) {
            (LoopForm::For(i, _) | LoopForm::Range(i, ..), Some(t)) => {
                self.bind_local(i, t, None);
            }
            (LoopForm::ForIn(p, _), Some(t)) => self.bind_pattern(p, &t, None),
            (LoopForm::While(c), _) => {
                let tc = self.infer(c);
                self.expect(&BOOL, &tc, c.span, None);
            }
            _ => {}
        }
        let tb = self.infer(body);
        let why = Some((
            pat.span(),
            "expected because of the loop parameter".to_string(),
        ));
        self.lenient(|c| c.expect(&acc, &tb, result_expr(body).span, why));
        self.locals.truncate(mark);
        self.join(&acc, &tb)
    }

    /// The value of `loop (a, b) for ...` without `= init`: the variables of the pattern.
    fn pattern_value(&mut self, e: &Expr, pat: &Pattern) -> Ty {
        match pat {
            Pattern::Var(name) => match self.locals.iter().rev().find(|l| l.name == name.name) {
                Some(local) => {
                    let (id, t) = (local.id, local.ty.clone());
                    self.loop_sources.entry(e.id).or_default().push(id);
                    t
                }
                None => {
                    self.error(
                        Diagnostic::error(
                            "E0204",
                            format!("cannot find `{}` in this scope", name.name),
                        )
                        .with_primary(
                            name.span,
                            "a loop without `= init` starts from this variable",
                        )
                        .with_help("give the initial value: `loop x = init for ...`"),
                    );
                    Ty::Error
                }
            },
            Pattern::Tuple(ps, _) => {
                Ty::Tuple(ps.iter().map(|p| self.pattern_value(e, p)).collect())
            }
            Pattern::Ascribed(p, _, _) => self.pattern_value(e, p),
            Pattern::Wildcard(span) | Pattern::Record(_, span) => {
                self.error(
                    Diagnostic::error("E0305", "this loop parameter needs an initial value")
                        .with_primary(*span, "no variable to start from")
                        .with_help("give the initial value: `loop p = init for ...`"),
                );
                Ty::Error
            }
        }
    }

    /// Binds the variables of `pat` to the parts of a value of type `t`. `size` is what a plain
    /// variable pattern denotes as a size (see [`Checker::size_alias`]).
    pub(super) fn bind_pattern(&mut self, pat: &Pattern, t: &Ty, size: Option<Sz>) {
        let mut seen = Vec::new();
        self.bind_pat(pat, t, size, &mut seen);
    }

    fn bind_pat(&mut self, pat: &Pattern, t: &Ty, size: Option<Sz>, seen: &mut Vec<String>) {
        match pat {
            Pattern::Var(name) => {
                if seen.contains(&name.name) {
                    self.error(
                        Diagnostic::error(
                            "E0207",
                            format!("`{}` is bound twice in this pattern", name.name),
                        )
                        .with_primary(name.span, "bound again here"),
                    );
                }
                seen.push(name.name.clone());
                self.bind_local(name, t.clone(), size);
            }
            Pattern::Wildcard(_) => {}
            Pattern::Tuple(ps, span) => {
                let parts: Vec<Ty> = ps
                    .iter()
                    .map(|p| self.subst.fresh(Constraint::None, p.span()))
                    .collect();
                let ok = self.expect(&Ty::Tuple(parts.clone()), t, *span, None);
                for (p, pt) in ps.iter().zip(parts) {
                    self.bind_pat(p, if ok { &pt } else { &Ty::Error }, None, seen);
                }
            }
            Pattern::Record(fields, span) => {
                let mut parts: Vec<(String, Ty)> = Vec::new();
                for (name, p) in fields {
                    if parts.iter().any(|(n, _)| *n == name.name) {
                        self.error(
                            Diagnostic::error(
                                "E0303",
                                format!("field `{}` is given twice", name.name),
                            )
                            .with_primary(name.span, "duplicate field"),
                        );
                    } else {
                        parts.push((
                            name.name.clone(),
                            self.subst.fresh(Constraint::None, p.span()),
                        ));
                    }
                }
                let mut sorted = parts.clone();
                sorted.sort_by(|a, b| a.0.cmp(&b.0));
                let ok = self.expect(&Ty::Record(sorted), t, *span, None);
                for ((_, p), (_, pt)) in fields.iter().zip(parts) {
                    self.bind_pat(p, if ok { &pt } else { &Ty::Error }, None, seen);
                }
            }
            Pattern::Ascribed(inner, texp, span) => {
                let ta = self.convert_type(texp);
                let why = Some((
                    texp.span(),
                    "expected because of this annotation".to_string(),
                ));
                self.expect(&ta, t, *span, why);
                self.bind_pat(inner, &ta, size, seen);
            }
        }
    }

    /// Checks a body's type `tb` against a written result type; returns the written type.
    fn check_result(&mut self, ret: &TypeExp, tb: &Ty, body: &Expr) -> Ty {
        let rt = self.convert_type(ret);
        let why = Some((
            ret.span(),
            "expected because of the return type".to_string(),
        ));
        self.expect(&rt, tb, result_expr(body).span, why);
        rt
    }

    /// Checks a function (top-level or local): binds its type and size parameters and its
    /// parameters, infers the body. The result is not generalised yet.
    pub(super) fn check_function(
        &mut self,
        type_params: &[TypeParam],
        params: &[Pattern],
        ret: Option<&TypeExp>,
        body: &Expr,
    ) -> Scheme {
        let (mark, tmark) = (self.locals.len(), self.type_params.len());
        let mut tparams = Vec::new();
        let mut sparams = Vec::new();
        for tp in type_params {
            match tp {
                TypeParam::Type(id) | TypeParam::Constrained(id, _) => {
                    let class = match tp {
                        TypeParam::Constrained(_, class) => self.class_of(class),
                        _ => None,
                    };
                    // Constrained parameters' names are distinct within a definition, so
                    // `Subst::param_classes` can key them by name.
                    let clash = self.subst.param_classes.contains_key(&id.name)
                        || (class.is_some() && self.used_param_names.contains(&id.name));
                    if self.type_params.contains(&id.name) || clash {
                        self.error(
                            Diagnostic::error(
                                "E0207",
                                format!("type parameter `{}` is declared twice", id.name),
                            )
                            .with_primary(id.span, "already declared in this definition"),
                        );
                    } else if let Some(class) = class {
                        self.subst.param_classes.insert(id.name.clone(), class);
                    }
                    self.type_params.push(id.name.clone());
                    self.used_param_names.insert(id.name.clone());
                    tparams.push((id.name.clone(), class));
                }
                TypeParam::Size(id) => {
                    let b = self.bind_local(id, I64, None);
                    sparams.push((b, None));
                }
            }
        }
        let mut tys = Vec::new();
        let mut consumes = Vec::new();
        let mut seen = Vec::new();
        for (i, p) in params.iter().enumerate() {
            let t = self.subst.fresh(Constraint::None, p.span());
            self.bind_pat(p, &t, None, &mut seen);
            if let Some(name) = pattern_var(p)
                && let Some(&b) = self.binders.get(&name.span)
            {
                sparams.push((b, Some(i)));
            }
            consumes.push(matches!(p, Pattern::Ascribed(_, TypeExp::Unique(..), _)));
            tys.push(t);
        }
        let tb = self.infer(body);
        let result = match ret {
            Some(r) => self.check_result(r, &tb, body),
            None => tb,
        };
        self.locals.truncate(mark);
        self.type_params.truncate(tmark);
        let ty = tys.into_iter().rev().fold(result, |r, p| Ty::fun(p, r));
        Scheme {
            tparams,
            sparams,
            existentials: Vec::new(),
            ty,
            consumes,
        }
    }

    /// Checks a local function and generalises it over its unconstrained type variables that
    /// are not free in the enclosing scope.
    fn check_local_fun(&mut self, fun: &LocalFun) -> Scheme {
        let mut scheme =
            self.check_function(&fun.type_params, &fun.params, fun.ret.as_ref(), &fun.body);
        let (mut env, mut env_sizes) = (Vec::new(), Vec::new());
        for local in &self.locals {
            self.subst.free_vars(&local.ty, &mut env);
            self.subst.free_size_vars(&local.ty, &mut env_sizes);
        }
        for id in self.generalize_sizes(&scheme.ty, &env_sizes) {
            scheme.sparams.push((id, None));
        }
        scheme.existentials = self.escaping_sizes(&scheme);
        let mut vars = Vec::new();
        self.subst.free_vars(&scheme.ty, &mut vars);
        for v in vars {
            if !env.contains(&v) && self.subst.tvars[v as usize].constraint == Constraint::None {
                let name = self.fresh_param_name();
                self.subst.set(v, Ty::Param(name.clone()));
                scheme.tparams.push((name, None));
            }
        }
        scheme
    }
}

impl Checker<'_> {
    /// The class a constrained type parameter declares (`num`, `int`, `float`); an unknown
    /// class is reported (E0312) and leaves the parameter unconstrained.
    fn class_of(&mut self, class: &Ident) -> Option<PrimSet> {
        let set = PrimSet::class(&class.name);
        if set.is_none() {
            let d = Diagnostic::error("E0312", format!("unknown type class `{}`", class.name))
                .with_primary(class.span, "not a class")
                .with_help(
                    "the classes are `num` (every numeric type), `int` (the integer types) and \
                     `float` (`f32`, `f64`)",
                );
            self.error(d);
        }
        set
    }

    /// The constrained type parameter `t` that `inner` names in `t.member`, unless a variable
    /// of that name is in scope.
    fn param_module(&self, inner: &Expr) -> Option<String> {
        let ExprKind::Var(name) = &inner.kind else {
            return None;
        };
        let n = &name.name;
        let is_param = name.qualifier.is_none()
            && self.type_params.contains(n)
            && self.subst.param_classes.contains_key(n);
        let shadowed = self.locals.iter().any(|l| l.name == *n) || self.globals.contains_key(n);
        (is_param && !shadowed).then(|| n.clone())
    }

    /// The instance of plain `zip` or `unzip` for the arity its arguments show, when that is
    /// not the pair the name alone denotes: `zip xs ys zs` is `zip3`, and `unzip` of an array
    /// of 5-tuples is `unzip5` (only if the argument's type is already known to be one; else
    /// `unzip` stays the pair version). The resolution and type of `f` are updated.
    fn arity_instance(&mut self, f: &Expr, args: &[(&Expr, Ty)]) -> Option<Instance> {
        let ExprKind::Var(name) = &f.kind else {
            return None;
        };
        let Some(Some(Resolution::Builtin(Builtin::Array(pair)))) =
            self.resolutions.get(f.id.0 as usize)
        else {
            return None;
        };
        let arity = match (name.qualifier.is_none(), name.name.as_str(), pair) {
            (true, "zip", ArrayFn::Zip(2)) => args.len(),
            (true, "unzip", ArrayFn::Unzip(2)) => {
                let (_, arg) = args.first()?;
                let Ty::Array(elem, _) = self.subst.shallow(arg) else {
                    return None;
                };
                match self.subst.shallow(&elem) {
                    Ty::Tuple(ts) => ts.len(),
                    _ => return None,
                }
            }
            _ => return None,
        };
        let arity = u8::try_from(arity).ok().filter(|&k| k > 2)?;
        let builtin = Builtin::Array(match pair {
            ArrayFn::Zip(_) => ArrayFn::Zip(arity),
            _ => ArrayFn::Unzip(arity),
        });
        self.resolutions[f.id.0 as usize] = Some(Resolution::Builtin(builtin));
        let inst = self.builtin_instance(builtin, f.span);
        self.record(f, &inst.ty);
        Some(inst)
    }

    /// `t.member` for a constrained type parameter `t`: a conversion to `t` (`t.i64`, `t.u`),
    /// a math function (`t.sqrt`) or a constant (`t.nan`), as for a primitive type's module.
    fn param_member(&mut self, e: &Expr, param: String, member: &Ident) -> Ty {
        let class = self.subst.param_classes[&param];
        let t = Ty::Param(param.clone());
        let from = if let Some(p) = PrimType::from_name(&member.name) {
            Some(Ty::Prim(p))
        } else if self.subst.param_classes.contains_key(&member.name)
            && self.type_params.contains(&member.name)
        {
            Some(Ty::Param(member.name.clone()))
        } else {
            None
        };
        let (builtin, ty, float_only) = match (from, builtins::module_member(&member.name)) {
            (Some(from), _) => (
                Builtin::Generic(GenericFn::Convert),
                Ty::fun(from, t.clone()),
                false,
            ),
            (None, Some(Ok(op))) => {
                let result = if op.returns_bool() { BOOL } else { t.clone() };
                let ty = (0..op.arity()).fold(result, |r, _| Ty::fun(t.clone(), r));
                (Builtin::Math { op, ty: None }, ty, op.float_only())
            }
            (None, Some(Err(op))) => (
                Builtin::Generic(GenericFn::Const(op)),
                t.clone(),
                op.float_only(),
            ),
            (None, None) => {
                let d = Diagnostic::error(
                    "E0208",
                    format!("`{param}` has no member `{}`", member.name),
                )
                .with_primary(member.span, "not a built-in")
                .with_help(format!(
                    "a type parameter's module has the members of `f32`'s: conversions \
                     (`{param}.i64`), math functions (`{param}.sqrt`) and constants \
                     (`{param}.nan`)"
                ));
                self.error(d);
                return Ty::Error;
            }
        };
        if float_only && !class.is_subset(PrimSet::float()) {
            let d = Diagnostic::error(
                "E0308",
                format!(
                    "`{param}.{}` needs a floating-point type, found `{param}`",
                    member.name
                ),
            )
            .with_primary(e.span, format!("`{param}` may be an integer type"))
            .with_help(format!("declare `('{param}: float)`"));
            self.error(d);
            return Ty::Error;
        }
        self.resolutions[e.id.0 as usize] = Some(Resolution::Builtin(builtin));
        ty
    }
}

/// The variable a parameter pattern binds directly (`x` or `(x: t)`), if any.
pub(super) fn pattern_var(p: &Pattern) -> Option<&Ident> {
    match p {
        Pattern::Var(id) => Some(id),
        Pattern::Ascribed(inner, _, _) => pattern_var(inner),
        _ => None,
    }
}
