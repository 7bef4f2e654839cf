//! Application: arguments are evaluated left to right (a unique argument moved out of its
//! binding), collected into curried closures, and the callee is invoked once it is saturated;
//! surplus arguments are applied to its result. Also the binary operators.
//!
//! Invariants: a callee's size parameters are bound from its arguments' shapes before its body
//! runs (see `sizes`); a consumed argument is never read again (the checker guarantees it).

use super::super::value::{Callee, Closure, Env, Val};
use super::{Interp, is_unique};
use ogham_compiler::syntax::ast::{BinOp, Decl, Expr, TypeParam};
use ogham_compiler::typeck::Resolution;
use ogham_ir::source::Span;
use ogham_runtime::error::{R_DIV_ZERO, R_INTERNAL, Res, error};
use ogham_runtime::scalar::{self, OpError};
use ogham_runtime::value::Scalar;
use std::rc::Rc;

impl<'a> Interp<'a> {
    pub(super) fn eval_apply(
        &self,
        e: &'a Expr,
        f: &'a Expr,
        args: &'a [Expr],
        env: &Env<'a>,
    ) -> Res<Val<'a>> {
        let consumes = |i: usize| match self.resolution(f) {
            Some(Resolution::Builtin(b)) => b.consumes(i),
            Some(Resolution::Def { module, decl }) => {
                match self
                    .program
                    .modules
                    .get(*module)
                    .and_then(|m| m.decls.get(*decl))
                {
                    Some(Decl::Def(d)) => d.params.get(i).is_some_and(is_unique),
                    _ => false,
                }
            }
            _ => false,
        };
        let fv = self.eval(f, env)?;
        // Arguments are evaluated left to right (the reference order, which compiled code
        // follows: of two failing arguments the first one's error is reported), but a consumed
        // local variable is moved out of its binding last, after the other arguments used it.
        let mut vals = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            vals.push(if self.is_local(a) && consumes(i) {
                None
            } else {
                Some(self.eval(a, env)?)
            });
        }
        for (i, a) in args.iter().enumerate() {
            if vals[i].is_none() {
                vals[i] = Some(self.eval_consumed(a, env)?);
            }
        }
        self.apply(fv, vals.into_iter().flatten().collect(), e.span)
    }

    /// Applies a function value to arguments; `span` is the application (for errors).
    pub fn apply(&self, f: Val<'a>, args: Vec<Val<'a>>, span: Span) -> Res<Val<'a>> {
        let mut f = f;
        let mut args = args;
        loop {
            if args.is_empty() {
                return Ok(f);
            }
            let Val::Fun(clo) = f else {
                return Err(error(
                    R_INTERNAL,
                    span,
                    "application of a value that is not a function",
                ));
            };
            let arity = clo.callee.arity();
            let have = clo.args.len();
            if have + args.len() < arity {
                let mut all = clo.args.clone();
                all.extend(args);
                return Ok(Val::Fun(Rc::new(Closure {
                    callee: clo.callee.clone(),
                    args: all,
                })));
            }
            let rest = args.split_off(arity - have);
            let full = if have == 0 {
                args
            } else {
                let mut all = clo.args.clone();
                all.extend(args);
                all
            };
            let result = self.invoke(&clo.callee, full, span)?;
            if rest.is_empty() {
                return Ok(result);
            }
            f = result;
            args = rest;
        }
    }

    /// Calls a callee with exactly its number of arguments.
    fn invoke(&self, callee: &Callee<'a>, args: Vec<Val<'a>>, span: Span) -> Res<Val<'a>> {
        match callee {
            Callee::Code {
                type_params,
                params,
                body,
                module,
                env,
            } => {
                let mut env = env.clone();
                if type_params.iter().any(|p| matches!(p, TypeParam::Size(_))) {
                    env = self.bind_size_params(type_params, params, &args, *module, env, span)?;
                }
                for (p, a) in params.iter().zip(args) {
                    env = self.bind(p, a, &env)?;
                }
                self.eval(body, &env)
            }
            Callee::Builtin(b, ty, env) => self.call_builtin(*b, ty, env, args, span),
            Callee::Op(op) => {
                let mut it = args.into_iter();
                match (it.next(), it.next()) {
                    (Some(a), Some(b)) => self.binop(*op, a, b, span),
                    _ => Err(error(
                        R_INTERNAL,
                        span,
                        "operator applied to too few arguments",
                    )),
                }
            }
            Callee::LeftSection(op, a) => {
                let b = args.into_iter().next().unwrap_or_else(Val::unit);
                self.binop(*op, a.clone(), b, span)
            }
            Callee::RightSection(op, b) => {
                let a = args.into_iter().next().unwrap_or_else(Val::unit);
                self.binop(*op, a, b.clone(), span)
            }
        }
    }

    /// `a op b` on values (operators applied in sections and in expressions).
    pub fn binop(&self, op: BinOp, a: Val<'a>, b: Val<'a>, span: Span) -> Res<Val<'a>> {
        match (op, a, b) {
            (BinOp::PipeRight, x, f) | (BinOp::PipeLeft, f, x) => self.apply(f, vec![x], span),
            (BinOp::Eq, a, b) => Ok(Val::Prim(Scalar::Bool(a.equals(&b)))),
            (BinOp::Ne, a, b) => Ok(Val::Prim(Scalar::Bool(!a.equals(&b)))),
            (op, Val::Prim(x), Val::Prim(y)) => {
                let scalar_op = op.ir().ok_or(OpError::IllTyped);
                scalar_op
                    .and_then(|o| scalar::binop(o, x, y))
                    .map(Val::Prim)
                    .map_err(|err| match err {
                        OpError::DivByZero => Box::new(
                            error(
                                R_DIV_ZERO,
                                span,
                                format!("division by zero (`{}`)", op.symbol()),
                            )
                            .with_help("guard the divisor, e.g. `if d == 0 then ... else x / d`"),
                        ),
                        OpError::IllTyped => error(
                            R_INTERNAL,
                            span,
                            format!("ill-typed operands of `{}`", op.symbol()),
                        ),
                    })
            }
            (op, a, b) => Err(error(
                R_INTERNAL,
                span,
                format!(
                    "`{}` applied to {} and {}",
                    op.symbol(),
                    a.describe(),
                    b.describe()
                ),
            )),
        }
    }
}
