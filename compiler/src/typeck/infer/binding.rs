//! Inference for what binds names: patterns (with their sizes), `loop`s, and function
//! definitions, top-level and local (the latter generalised).
//!
//! Invariants: every binding pushes onto `Checker::locals` and its scope ends by truncating
//! back to the mark taken before it; a pattern binds each name once (E0207 otherwise).

use super::{BOOL, I64, pattern_var};
use crate::syntax::ast::{Expr, LocalFun, LoopForm, Pattern, TypeExp, TypeParam};
use crate::typeck::unify::{Constraint, PrimSet, Sz, Ty};
use crate::typeck::{Checker, Scheme, result_expr};
use ogham_ir::diag::Diagnostic;

impl Checker<'_> {
    pub(super) fn infer_loop(
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
    pub(in crate::typeck) fn bind_pattern(&mut self, pat: &Pattern, t: &Ty, size: Option<Sz>) {
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
    pub(super) fn check_result(&mut self, ret: &TypeExp, tb: &Ty, body: &Expr) -> Ty {
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
    pub(in crate::typeck) fn check_function(
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
        let ty = self.function_type(tys, ret, body);
        self.locals.truncate(mark);
        self.type_params.truncate(tmark);
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
    pub(super) fn check_local_fun(&mut self, fun: &LocalFun) -> Scheme {
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
