//! The verifier's walk over functions, bodies and statements: binds each pattern in its scope,
//! checks each statement's types against its pattern, records the equalities and sums that
//! exact size comparison may use, and tracks aliases for consumption; `loop` bodies too.
//!
//! Invariants: relies on [`Checker`]'s scope stack (a scope is left by truncating it to the
//! mark taken on entry) and on each expression's types coming from [`Checker::exp`].

use super::{Checker, Context};
use crate::print::size_params;
use crate::traverse::{Subst, substitute_type};
use crate::types::PrimType;
use crate::{Body, Exp, Form, LoopForm, Stmt, SubExp, Type, VarId};

impl<'a, F: Form> Checker<'a, F> {
    pub(super) fn function(&mut self) {
        self.context = Context::Parameters;
        for size in size_params(self.f) {
            self.bind(size);
            if self.known(size) && *self.f.ty(size) != Type::Prim(PrimType::I64) {
                self.error(format!("size parameter {} is not an i64", self.name(size)));
            }
        }
        for param in &self.f.params {
            self.bind(param.var);
        }
        self.context = Context::Result;
        self.body(&self.f.body);
    }

    /// Checks a body in a scope of its own; returns the types of its results. Errors in the
    /// results are reported against the enclosing statement.
    fn body<H: Form>(&mut self, body: &'a Body<H>) -> Vec<Option<Type>> {
        let context = self.context;
        let mark = self.scope.len();
        for stmt in &body.stmts {
            self.stmt(stmt);
        }
        self.context = context;
        let types = body.result.iter().map(|&r| self.use_subexp(r)).collect();
        self.leave_scope(mark);
        types
    }

    /// Checks a body's results against declared types, with `subst` applied to the latter.
    pub(super) fn body_against<H: Form>(
        &mut self,
        what: &str,
        body: &'a Body<H>,
        declared: &[Type],
        subst: &Subst,
    ) {
        // What the body's statements prove holds for its results, and not after the body.
        let facts = self.equal.len();
        let results = self.body(body);
        if results.len() != declared.len() {
            self.error(format!(
                "{what} returns {} values, expected {}",
                results.len(),
                declared.len()
            ));
        } else {
            for (i, (actual, expected)) in results.iter().zip(declared).enumerate() {
                if let Some(actual) = actual {
                    let expected = substitute_type(expected, subst);
                    self.expect_fits(&format!("result {i} of {what}"), &expected, actual, true);
                }
            }
        }
        self.equal.truncate(facts);
    }

    /// Records the equalities of sizes that hold after `stmt`: `let x = y` of an `i64`, and an
    /// `assert` of `a == b` (`a`, `b` `i64`s); and the sums `x = a + b` of `i64`s.
    fn record_equalities<H: Form>(&mut self, stmt: &'a Stmt<H>) {
        let i64 = Type::Prim(PrimType::I64);
        let is_i64 = |se: SubExp| match se {
            SubExp::Const(c) => c.prim_type() == PrimType::I64,
            SubExp::Var(v) => self.known(v) && *self.f.ty(v) == i64,
        };
        match (&stmt.exp, &stmt.pat[..]) {
            (Exp::SubExp(se), [x]) if is_i64(*se) && is_i64(SubExp::Var(*x)) => {
                self.equal.push((SubExp::Var(*x), *se));
            }
            (Exp::BinOp(crate::op::BinOp::Eq, a, b), [c]) if is_i64(*a) && is_i64(*b) => {
                self.equalities.insert(*c, (*a, *b));
            }
            (Exp::BinOp(crate::op::BinOp::Add, a, b), [c]) if is_i64(*a) && is_i64(*b) => {
                self.sums.insert(*c, (*a, *b));
            }
            (
                Exp::Assert {
                    cond: SubExp::Var(c),
                    ..
                },
                [],
            ) => {
                if let Some(&fact) = self.equalities.get(c) {
                    self.equal.push(fact);
                }
            }
            _ => {}
        }
    }

    fn stmt<H: Form>(&mut self, stmt: &'a Stmt<H>) {
        let context = Context::Let(&stmt.pat);
        self.context = context;
        if H::HOST && matches!(stmt.exp, Exp::Soac(_)) {
            self.error("a SOAC at host level in kernel IR".to_string());
        }
        let expected = self.exp(stmt);
        self.context = context;
        for &v in &stmt.pat {
            self.bind(v);
        }
        let Some(expected) = expected else { return };
        if expected.len() != stmt.pat.len() {
            self.error(format!(
                "the pattern binds {} values but the expression returns {}",
                stmt.pat.len(),
                expected.len()
            ));
            return;
        }
        for (&v, ty) in stmt.pat.iter().zip(&expected) {
            if self.known(v) && !self.fits(ty, self.f.ty(v), false) {
                self.error(format!(
                    "{} has type {}, but the expression returns {}",
                    self.name(v),
                    self.show(self.f.ty(v)),
                    self.show(ty)
                ));
            }
        }
        self.record_aliases(stmt);
        self.record_equalities(stmt);
    }

    /// Views and copies of an array alias it (and what it aliases).
    fn record_aliases<H: Form>(&mut self, stmt: &'a Stmt<H>) {
        let source = match &stmt.exp {
            Exp::SubExp(SubExp::Var(v))
            | Exp::Index(v, _)
            | Exp::Rearrange(v, _)
            | Exp::Reshape(v, _) => *v,
            _ => return,
        };
        let [target] = stmt.pat[..] else { return };
        if !self.known(source) || !self.known(target) || self.f.ty(target).rank() == 0 {
            return;
        }
        let mut aliases = self.aliases[source.index()].clone();
        aliases.push(source);
        self.aliases[target.index()] = aliases;
    }

    pub(super) fn loop_<H: Form>(
        &mut self,
        stmt: &'a Stmt<H>,
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &'a Body<H>,
    ) -> Option<Vec<Type>> {
        let inits: Vec<Option<Type>> = params.iter().map(|&(_, i)| self.use_subexp(i)).collect();
        if let LoopForm::For { bound, .. } = form {
            self.expect_prim(*bound, PrimType::I64, "loop bound");
        }
        let mark = self.scope.len();
        self.frame += 1;
        for &(p, _) in params {
            self.bind(p);
        }
        let param_types: Vec<Type> = params
            .iter()
            .filter(|&&(p, _)| self.known(p))
            .map(|&(p, _)| self.f.ty(p).clone())
            .collect();
        if param_types.len() != params.len() {
            self.frame -= 1;
            self.leave_scope(mark);
            return None;
        }
        let pvars: Vec<VarId> = params.iter().map(|&(p, _)| p).collect();
        let init_values: Vec<SubExp> = params.iter().map(|&(_, i)| i).collect();
        let init_subst = self.result_subst(&pvars, &init_values);
        for (i, (init, ty)) in inits.iter().zip(&param_types).enumerate() {
            if let Some(init) = init {
                let expected = substitute_type(ty, &init_subst);
                self.expect_fits(&format!("initial value {i}"), &expected, init, true);
            }
        }
        match form {
            LoopForm::For { index, .. } => {
                self.bind(*index);
                if self.known(*index) && *self.f.ty(*index) != Type::Prim(PrimType::I64) {
                    self.error(format!("loop index {} is not an i64", self.name(*index)));
                }
            }
            LoopForm::While { cond } => {
                let is_param = pvars.contains(cond);
                if !is_param || *self.f.ty(*cond) != Type::Prim(PrimType::Bool) {
                    self.error(format!(
                        "while condition {} is not a bool loop parameter",
                        self.name(*cond)
                    ));
                }
            }
        }
        let body_subst = self.result_subst(&pvars, &body.result);
        self.body_against("the loop body", body, &param_types, &body_subst);
        self.frame -= 1;
        self.leave_scope(mark);
        // A parameter consumed by the body consumes its initial value.
        for &(p, init) in params {
            if self.consumed.remove(&p).is_some()
                && let SubExp::Var(v) = init
            {
                self.consume(v);
            }
        }
        let pattern_subst = self.result_subst(
            &pvars,
            &stmt.pat.iter().map(|&v| SubExp::Var(v)).collect::<Vec<_>>(),
        );
        Some(
            param_types
                .iter()
                .map(|t| substitute_type(t, &pattern_subst))
                .collect(),
        )
    }
}
