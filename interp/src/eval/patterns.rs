//! Binding values to patterns and running `loop`s: a pattern destructures a value into the
//! environment, a loop rebinds its pattern each iteration.
//!
//! Invariants: the checker guarantees a value's structure matches its pattern (a mismatch is an
//! internal error); loops iterate rather than recurse, so their depth does not use the stack.

use super::super::value::{Env, Val};
use super::{Interp, as_array};
use ogham_compiler::syntax::ast::{Expr, LoopForm, Pattern};
use ogham_ir::source::Span;
use ogham_runtime::error::{R_INTERNAL, Res, error};
use ogham_runtime::scalar::{self};
use ogham_runtime::value::Scalar;

impl<'a> Interp<'a> {
    /// Binds the variables of `pat` to the parts of `v`.
    pub fn bind(&self, pat: &'a Pattern, v: Val<'a>, env: &Env<'a>) -> Res<Env<'a>> {
        match (pat, v) {
            (Pattern::Var(id), v) => Ok(env.bind(&id.name, v)),
            (Pattern::Wildcard(_), _) => Ok(env.clone()),
            (Pattern::Ascribed(p, _, _), v) => self.bind(p, v, env),
            (Pattern::Tuple(ps, _), Val::Tuple(vs)) if ps.len() == vs.len() => {
                let mut env = env.clone();
                for (p, v) in ps.iter().zip(vs.iter()) {
                    env = self.bind(p, v.clone(), &env)?;
                }
                Ok(env)
            }
            (Pattern::Record(fs, _), Val::Record(vs)) => {
                let mut env = env.clone();
                for (name, p) in fs {
                    let v = vs
                        .iter()
                        .find(|(n, _)| *n == name.name)
                        .map(|(_, v)| v.clone());
                    let v =
                        v.ok_or_else(|| error(R_INTERNAL, name.span, "record has no such field"))?;
                    env = self.bind(p, v, &env)?;
                }
                Ok(env)
            }
            (p, v) => Err(error(
                R_INTERNAL,
                p.span(),
                format!("pattern does not match a value of type {}", v.describe()),
            )),
        }
    }

    /// The current value of the variables of a loop pattern without initialiser.
    fn pattern_value(&self, pat: &'a Pattern, env: &Env<'a>) -> Res<Val<'a>> {
        match pat {
            Pattern::Var(id) => self.lookup(&id.name, env, id.span),
            Pattern::Ascribed(p, _, _) => self.pattern_value(p, env),
            Pattern::Tuple(ps, _) => Ok(Val::tuple(
                ps.iter()
                    .map(|p| self.pattern_value(p, env))
                    .collect::<Res<_>>()?,
            )),
            Pattern::Record(fs, _) => Ok(Val::record(
                fs.iter()
                    .map(|(n, p)| Ok((n.name.as_str(), self.pattern_value(p, env)?)))
                    .collect::<Res<_>>()?,
            )),
            Pattern::Wildcard(s) => Err(error(
                R_INTERNAL,
                *s,
                "a loop without initial value binds `_`",
            )),
        }
    }

    pub(super) fn eval_loop(
        &self,
        pat: &'a Pattern,
        init: Option<&'a Expr>,
        form: &'a LoopForm,
        body: &'a Expr,
        env: &Env<'a>,
        span: Span,
    ) -> Res<Val<'a>> {
        let mut acc = match init {
            Some(e) => self.eval(e, env)?,
            None => self.pattern_value(pat, env)?,
        };
        match form {
            LoopForm::For(i, bound) => {
                let n = self.loop_bound(bound, env)?;
                for k in 0..n.as_i64().max(0) {
                    let inner = self.bind(pat, acc, env)?.bind(
                        &i.name,
                        Val::Prim(scalar::convert(Scalar::I64(k), n.prim_type())),
                    );
                    acc = self.eval(body, &inner)?;
                }
            }
            LoopForm::Range(i, lo, hi) => {
                // As lowered: `hi - lo` iterations (in `i64`), the counter `lo + k`.
                let (lo, hi) = (self.loop_bound(lo, env)?, self.loop_bound(hi, env)?);
                for k in 0..hi.as_i64().wrapping_sub(lo.as_i64()).max(0) {
                    let at = Scalar::I64(lo.as_i64().wrapping_add(k));
                    let inner = self
                        .bind(pat, acc, env)?
                        .bind(&i.name, Val::Prim(scalar::convert(at, lo.prim_type())));
                    acc = self.eval(body, &inner)?;
                }
            }
            LoopForm::ForIn(x, xs) => {
                let xs = as_array(self.eval(xs, env)?, span)?;
                for k in 0..xs.len() {
                    let inner = self.bind(pat, acc, env)?;
                    let inner = self.bind(x, xs.row(k), &inner)?;
                    acc = self.eval(body, &inner)?;
                }
            }
            LoopForm::While(cond) => loop {
                // The copy keeps the loop's value for the result; it is dropped before the
                // body runs so that in-place updates in the body stay O(1).
                let kept = acc.clone();
                let inner = self.bind(pat, acc, env)?;
                if !self.eval_bool(cond, &inner)? {
                    return Ok(kept);
                }
                drop(kept);
                acc = self.eval(body, &inner)?;
            },
        }
        Ok(acc)
    }

    /// The value of a loop bound, an integer.
    fn loop_bound(&self, bound: &'a Expr, env: &Env<'a>) -> Res<Scalar> {
        match self.eval(bound, env)? {
            Val::Prim(s) if s.prim_type().is_int() => Ok(s),
            _ => Err(error(
                R_INTERNAL,
                bound.span,
                "loop bound is not an integer",
            )),
        }
    }
}
