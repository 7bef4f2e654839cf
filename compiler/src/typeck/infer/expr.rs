//! Inference for the kinds of expression that take more than a line, one method each,
//! dispatched from `Checker::infer_kind` (operators, application and pipes, records and
//! arrays, lambdas and `let`s, `if`, `:>`).
//!
//! Invariants: as the parent module's: every subexpression goes through [`Checker::infer`]
//! (which records its type), in source order, so that an error points at the first wrong
//! argument; a binding's locals are truncated back to the mark taken before it.

use super::BOOL;
use crate::syntax::ast::{
    BinOp, Expr, ExprKind, Ident, IndexArg, LocalFun, Pattern, TypeExp, UnOp,
};
use crate::typeck::unify::{Constraint, PrimSet, Sz, Ty};
use crate::typeck::{Checker, result_expr};
use ogham_ir::diag::Diagnostic;
use std::collections::BTreeMap;
use std::rc::Rc;

impl Checker<'_> {
    /// `{ name = value, ... }`.
    pub(super) fn infer_record(&mut self, fields: &[(Ident, Expr)]) -> Ty {
        let typed: Vec<(&Ident, Ty)> = fields
            .iter()
            .map(|(name, value)| (name, self.infer(value)))
            .collect();
        self.record_type(typed)
    }

    /// `[a, b, ...]`: every element has the type of the first.
    pub(super) fn infer_array_lit(&mut self, e: &Expr, es: &[Expr]) -> Ty {
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

    /// `r.field` on a record.
    pub(super) fn infer_field(&mut self, inner: &Expr, field: &Ident) -> Ty {
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

    /// `f a b ...`: the arguments are inferred before the callee's parameters are unified.
    pub(super) fn infer_apply(&mut self, f: &Expr, args: &[Expr]) -> Ty {
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

    /// `x |> f`.
    pub(super) fn infer_pipe_right(&mut self, x: &Expr, f: &Expr) -> Ty {
        let tx = self.infer(x);
        let tf = self.infer(f);
        let args = [(x, tx)];
        let callee = self.arity_instance(f, &args).unwrap_or(tf.into());
        self.apply(f.span, callee, &args)
    }

    /// `f <| x`.
    pub(super) fn infer_pipe_left(&mut self, f: &Expr, x: &Expr) -> Ty {
        let tf = self.infer(f);
        let args = [(x, self.infer(x))];
        let callee = self.arity_instance(f, &args).unwrap_or(tf.into());
        self.apply(f.span, callee, &args)
    }

    /// `l op r` (other than the pipes).
    pub(super) fn infer_binop(&mut self, e: &Expr, op: &BinOp, l: &Expr, r: &Expr) -> Ty {
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

    /// `-x` and `!x`.
    pub(super) fn infer_unop(&mut self, e: &Expr, op: &UnOp, x: &Expr) -> Ty {
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

    /// `(x op)`.
    pub(super) fn infer_left_section(&mut self, e: &Expr, op: &BinOp, x: &Expr) -> Ty {
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

    /// `(op y)`.
    pub(super) fn infer_right_section(&mut self, e: &Expr, op: &BinOp, y: &Expr) -> Ty {
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

    /// `\p1 p2 ... : ret -> body`.
    pub(super) fn infer_lambda(
        &mut self,
        params: &[Pattern],
        ret: Option<&TypeExp>,
        body: &Expr,
    ) -> Ty {
        let mark = self.locals.len();
        let mut tys = Vec::new();
        for p in params {
            let t = self.subst.fresh(Constraint::None, p.span());
            self.bind_pattern(p, &t, None);
            tys.push(t);
        }
        let ty = self.function_type(tys, ret, body);
        self.locals.truncate(mark);
        ty
    }

    /// The type of a function of parameter types `params` and body `body` (checked against the
    /// declared result type `ret`), its parameters in scope.
    pub(super) fn function_type(
        &mut self,
        params: Vec<Ty>,
        ret: Option<&TypeExp>,
        body: &Expr,
    ) -> Ty {
        let tb = self.infer(body);
        let result = match ret {
            Some(r) => self.check_result(r, &tb, body),
            None => tb,
        };
        params.into_iter().rev().fold(result, |r, p| Ty::fun(p, r))
    }

    /// `let pat = value in body`.
    pub(super) fn infer_let(&mut self, pat: &Pattern, value: &Expr, body: &Expr) -> Ty {
        let tv = self.infer(value);
        let size = self.size_alias(value);
        let mark = self.locals.len();
        self.bind_pattern(pat, &tv, size);
        let tb = self.infer(body);
        self.locals.truncate(mark);
        tb
    }

    /// `let f params = ... in body`: `f` is generalised.
    pub(super) fn infer_let_fun(&mut self, fun: &LocalFun, body: &Expr) -> Ty {
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

    /// `let name[idx] = value in body` (only local arrays).
    pub(super) fn infer_let_with(
        &mut self,
        e: &Expr,
        name: &Ident,
        idx: &[IndexArg],
        value: &Expr,
        body: &Expr,
    ) -> Ty {
        let t = match self.locals.iter().rev().find(|l| l.name == name.name) {
            Some(local) => {
                let (id, t) = (local.id, local.ty.clone());
                self.uses.insert(e.id, id);
                t
            }
            None => {
                self.error(
                    Diagnostic::error("E0211", format!("`{}` is not a local variable", name.name))
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

    /// `if c then t else f`: the branches' sizes may differ.
    pub(super) fn infer_if(&mut self, c: &Expr, t: &Expr, f: &Expr) -> Ty {
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

    /// `r with a.b = value`.
    pub(super) fn infer_record_update(&mut self, r: &Expr, path: &[Ident], value: &Expr) -> Ty {
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

    /// `x :> t`: sizes are compared leniently.
    pub(super) fn infer_coerce(&mut self, x: &Expr, t: &TypeExp) -> Ty {
        let tx = self.infer(x);
        let tt = self.convert_type(t);
        let why = Some((t.span(), "expected because of this coercion".to_string()));
        let old = std::mem::replace(&mut self.subst.coercing, true);
        self.lenient(|c| c.expect(&tt, &tx, x.span, why));
        self.subst.coercing = old;
        tt
    }
}
