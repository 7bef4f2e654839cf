//! Inference for expressions, patterns and function definitions.
//!
//! Every visited expression gets its (not yet resolved) type in `Checker::pending`; the
//! definition's end (`Checker::finish_def_exprs`) resolves and exports them. Arguments of an
//! application are inferred before the function's parameter types are unified with them, so
//! the error for a wrong argument points at that argument.

use super::Checker;
use super::unify::{Constraint, PrimSet, Sz, Ty};
use crate::builtins::{ArrayFn, Builtin};
use crate::syntax::ast::{BinOp, Expr, ExprKind, Ident, IndexArg, LitValue, Pattern};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;

mod apply;
mod binding;
mod expr;
mod type_params;

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
            ExprKind::Record(fields) => self.infer_record(fields),
            ExprKind::ArrayLit(es) => self.infer_array_lit(e, es),
            ExprKind::Field(inner, field) if self.param_module(inner).is_some() => {
                let param = self.param_module(inner).unwrap_or_default();
                self.record(inner, &Ty::unit());
                self.param_member(e, param, field)
            }
            ExprKind::Field(inner, field) => self.infer_field(inner, field),
            ExprKind::Index(arr, args) => {
                let t = self.infer(arr);
                self.index(&t, args, arr.span).0
            }
            ExprKind::Apply(f, args) => self.infer_apply(f, args),
            ExprKind::BinOp(BinOp::PipeRight, x, f) => self.infer_pipe_right(x, f),
            ExprKind::BinOp(BinOp::PipeLeft, f, x) => self.infer_pipe_left(f, x),
            ExprKind::BinOp(op, l, r) => self.infer_binop(e, op, l, r),
            ExprKind::UnOp(op, x) => self.infer_unop(e, op, x),
            ExprKind::OpSection(op) => {
                let (l, r, res) = self.op_signature(*op, e.span);
                Ty::fun(l, Ty::fun(r, res))
            }
            ExprKind::LeftSection(op, x) => self.infer_left_section(e, op, x),
            ExprKind::RightSection(op, y) => self.infer_right_section(e, op, y),
            ExprKind::Lambda(params, ret, body) => self.infer_lambda(params, ret.as_ref(), body),
            ExprKind::Let(pat, value, body) => self.infer_let(pat, value, body),
            ExprKind::LetFun(fun, body) => self.infer_let_fun(fun, body),
            ExprKind::LetWith(name, idx, value, body) => {
                self.infer_let_with(e, name, idx, value, body)
            }
            ExprKind::Assert(c, _, x) => {
                let tc = self.infer(c);
                self.expect(&BOOL, &tc, c.span, None);
                self.infer(x)
            }
            ExprKind::Trace(_, x) => self.infer_trace(x),
            ExprKind::If(c, t, f) => self.infer_if(c, t, f),
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
            ExprKind::RecordUpdate(r, path, value) => self.infer_record_update(r, path, value),
            ExprKind::Ascribe(x, t) => {
                let tx = self.infer(x);
                let tt = self.convert_type(t);
                let why = Some((t.span(), "expected because of this annotation".to_string()));
                self.expect(&tt, &tx, x.span, why);
                tx
            }
            ExprKind::Coerce(x, t) => self.infer_coerce(x, t),
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
}

/// The variable a parameter pattern binds directly (`x` or `(x: t)`), if any.
pub(super) fn pattern_var(p: &Pattern) -> Option<&Ident> {
    match p {
        Pattern::Var(id) => Some(id),
        Pattern::Ascribed(inner, _, _) => pattern_var(inner),
        _ => None,
    }
}
