//! Application of function values: arguments accumulate in the closure until it has as many as
//! its callee takes; then the callee's body is lowered in place (inlining), and any remaining
//! arguments are applied to the result.

use super::{Callee, Closure, LVal, Lowerer, Res};
use crate::syntax::ast::{self, Decl, ExprKind};
use ogham_ir::op::BinOp;
use ogham_ir::types::TypeArgs;
use ogham_ir::{Body, Const, Lambda, SubExp, Type, VarId, traverse};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

impl<'p> Lowerer<'p> {
    pub(super) fn apply(&mut self, f: LVal<'p>, mut args: Vec<LVal<'p>>) -> Res<LVal<'p>> {
        let LVal::Fun(closure) = f else {
            return Err(self.internal("application of a non-function"));
        };
        let arity = self.arity(&closure.callee)?;
        let mut have = closure.args.clone();
        let needed = arity - have.len();
        if args.len() < needed {
            have.extend(args);
            return Ok(LVal::Fun(Rc::new(Closure {
                callee: closure.callee.clone(),
                args: have,
            })));
        }
        let rest = args.split_off(needed);
        have.extend(args);
        let result = self.call(&closure.callee, have)?;
        if rest.is_empty() {
            Ok(result)
        } else {
            self.apply(result, rest)
        }
    }

    fn arity(&self, callee: &Callee<'p>) -> Res<usize> {
        Ok(match callee {
            Callee::Def(m, d, _) => match &self.program.modules[*m].decls[*d] {
                Decl::Def(def) => def.params.len(),
                _ => return Err(self.internal("call of a non-definition")),
            },
            Callee::Local(fun, ..) => fun.params.len(),
            Callee::Lambda(e, ..) => match &e.kind {
                ExprKind::Lambda(params, _, _) => params.len(),
                _ => return Err(self.internal("lambda closure of a non-lambda")),
            },
            Callee::Builtin(b, _) => b.arity(),
            Callee::Op(_, left, right, _) => 2 - left.is_some() as usize - right.is_some() as usize,
        })
    }

    /// Lowers the body of `callee` applied to exactly its number of arguments.
    fn call(&mut self, callee: &Callee<'p>, args: Vec<LVal<'p>>) -> Res<LVal<'p>> {
        match callee {
            Callee::Def(m, d, types) => {
                let Decl::Def(def) = &self.program.modules[*m].decls[*d] else {
                    return Err(self.internal("call of a non-definition"));
                };
                // Size parameters `[n]`: from the definition's type, matched with the
                // arguments' dimensions (annotations may hide them behind type aliases).
                let mut sizes = HashMap::new();
                if let Some(mut t) = self.checked.def_types.get(&(*m, *d)) {
                    for a in &args {
                        let ogham_ir::types::Type::Fun(param, rest) = t else {
                            break;
                        };
                        self.size_names(param, a, &mut sizes);
                        t = rest;
                    }
                }
                self.inline(
                    &def.params,
                    &def.body,
                    (Rc::new(sizes), types.clone()),
                    args,
                )
            }
            Callee::Local(fun, env, types) => {
                // The local function is in scope in its own body only through its definition
                // environment; Ogham has no recursion.
                let scope = (env.clone(), types.clone());
                self.inline(&fun.params, &fun.body, scope, args)
            }
            Callee::Lambda(e, env, types) => match &e.kind {
                ExprKind::Lambda(params, _, body) => {
                    self.inline(params, body, (env.clone(), types.clone()), args)
                }
                _ => Err(self.internal("lambda closure of a non-lambda")),
            },
            Callee::Builtin(b, id) => self.builtin(*b, *id, args),
            Callee::Op(op, left, right, span) => {
                let mut args = args.into_iter();
                let a = match left {
                    Some(l) => (**l).clone(),
                    None => args.next().ok_or_else(|| self.internal("operator arity"))?,
                };
                let b = match right {
                    Some(r) => (**r).clone(),
                    None => args.next().ok_or_else(|| self.internal("operator arity"))?,
                };
                let saved = self.loc;
                self.loc = *span;
                let result = match (a, b) {
                    (LVal::Leaf(a), LVal::Leaf(b)) => self.operator(*op, a, b),
                    _ => Err(self.internal("operator on non-scalars")),
                };
                self.loc = saved;
                result.map(LVal::Leaf)
            }
        }
    }

    /// A binary operator as a function (sections): `&&`/`||` evaluate both operands here.
    fn operator(&mut self, op: ast::BinOp, a: SubExp, b: SubExp) -> Res<SubExp> {
        let op = op
            .ir()
            .ok_or_else(|| self.internal("pipe operator section"))?;
        Ok(self.binop(op, a, b))
    }

    /// Lowers `body` with `params` bound to `args` in `scope`: the environment and the type
    /// arguments of the instance.
    fn inline(
        &mut self,
        params: &'p [ast::Pattern],
        body: &'p ast::Expr,
        scope: (super::Env<'p>, Rc<TypeArgs>),
        args: Vec<LVal<'p>>,
    ) -> Res<LVal<'p>> {
        let saved = std::mem::replace(&mut self.env, scope.0);
        let saved_types = std::mem::replace(&mut self.types, scope.1);
        let result = (|| {
            for (p, a) in params.iter().zip(args) {
                self.bind_pattern(p, a)?;
            }
            self.expr(body)
        })();
        self.env = saved;
        self.types = saved_types;
        result
    }

    /// The named sizes of source type `t` bound to the dimensions of `value`'s arrays.
    fn size_names(
        &self,
        t: &ogham_ir::types::Type,
        value: &LVal<'p>,
        sizes: &mut HashMap<String, LVal<'p>>,
    ) {
        use ogham_ir::types::{Size, Type as T};
        match (t, value) {
            (T::Tuple(ts), LVal::Tuple(vs)) if ts.len() == vs.len() => {
                for (t, v) in ts.iter().zip(vs) {
                    self.size_names(t, v, sizes);
                }
            }
            (T::Record(fs), LVal::Tuple(vs)) if fs.len() == vs.len() => {
                for ((_, t), v) in fs.iter().zip(vs) {
                    self.size_names(t, v, sizes);
                }
            }
            (T::Array(..), _) => {
                let mut leaves = Vec::new();
                if self.leaves(value, &mut leaves).is_err() {
                    return;
                }
                let Some(first) = leaves.first() else { return };
                let shape = self.ty(*first).shape().to_vec();
                let mut t = t;
                let mut d = 0;
                while let T::Array(inner, size) = t {
                    if let (Size::Var(name), Some(dim)) = (size, shape.get(d)) {
                        sizes.entry(name.clone()).or_insert(LVal::Leaf(*dim));
                    }
                    d += 1;
                    t = inner;
                }
            }
            _ => {}
        }
    }

    /// A lambda for a SOAC of `width` elements: `f` applied to parameters of the given types
    /// (grouped as `shape`'s structure per argument), with its body and result types.
    pub(super) fn lambda(
        &mut self,
        f: &LVal<'p>,
        width: SubExp,
        arg_shapes: &[LVal<'p>],
        arg_types: &[Vec<Type>],
    ) -> Res<(Lambda, LVal<'p>)> {
        let mut params: Vec<VarId> = Vec::new();
        let mut args = Vec::new();
        for (shape, types) in arg_shapes.iter().zip(arg_types) {
            let vars: Vec<VarId> = types.iter().map(|t| self.new_var("p", t.clone())).collect();
            params.extend(&vars);
            args.push(Self::rebuild(shape, &mut vars.into_iter().map(SubExp::Var)));
        }
        let (value, body) = self.body_of(|this| this.apply(f.clone(), args))?;
        let ret = body.result.iter().map(|se| self.ty(*se)).collect();
        let mut lambda = Lambda { params, body, ret };
        self.hoist_result_sizes(&mut lambda, width)?;
        self.check_lambda_sizes(&lambda)?;
        Ok((lambda, value))
    }

    /// Moves the statements computing the lambda's result sizes in front of the SOAC when they
    /// do not depend on its parameters (`map (\xs -> xs[1:]) xss`: every row's slice has
    /// length `m - 1`, computed once), so that the result types are known before the SOAC runs.
    ///
    /// The lambda may run zero times, so statements that can fail (`xs[m / k:]`) must not run
    /// when `width` is 0: if they compute only scalars they move into an `if width != 0` that
    /// returns them (sizes 0 otherwise, matching the interpreter's empty results); otherwise
    /// they stay, and [`Self::check_lambda_sizes`] rejects the lambda.
    fn hoist_result_sizes(&mut self, lambda: &mut Lambda, width: SubExp) -> Res<()> {
        let binder: HashMap<VarId, usize> = lambda
            .body
            .stmts
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.pat.iter().map(move |v| (*v, i)))
            .collect();
        let mut safe: BTreeSet<usize> = BTreeSet::new();
        let mut guarded: BTreeSet<usize> = BTreeSet::new();
        for t in &lambda.ret {
            for d in t.shape() {
                let Some(&i) = d.as_var().and_then(|v| binder.get(&v)) else {
                    continue;
                };
                // The statements computing `d`, unless one depends on the parameters.
                let mut needed = BTreeSet::new();
                let mut work = vec![i];
                let mut independent = true;
                while let Some(i) = work.pop() {
                    if !needed.insert(i) {
                        continue;
                    }
                    let stmt = &lambda.body.stmts[i];
                    for v in traverse::free_vars_stmt(&self.function, stmt) {
                        independent &= !lambda.params.contains(&v);
                        work.extend(binder.get(&v));
                    }
                }
                let stmts = || needed.iter().map(|&i| &lambda.body.stmts[i]);
                if !independent {
                    continue;
                } else if stmts().all(|s| s.exp.cannot_fail()) {
                    safe.extend(needed);
                } else if stmts().all(|s| s.pat.iter().all(|v| self.function.ty(*v).rank() == 0)) {
                    guarded.extend(needed);
                }
            }
        }
        let mut guarded_stmts = Vec::new();
        for (i, stmt) in std::mem::take(&mut lambda.body.stmts)
            .into_iter()
            .enumerate()
        {
            if safe.contains(&i) {
                self.stmts.push(stmt);
            } else if guarded.contains(&i) {
                guarded_stmts.push(stmt);
            } else {
                lambda.body.stmts.push(stmt);
            }
        }
        if guarded_stmts.is_empty() {
            return Ok(());
        }
        let inner: Vec<VarId> = guarded_stmts.iter().flat_map(|s| s.pat.clone()).collect();
        let types: Vec<Type> = inner.iter().map(|v| self.function.ty(*v).clone()).collect();
        let zeros = types
            .iter()
            .map(|t| SubExp::Const(Const::zero(t.elem())))
            .collect();
        let nonempty = self.binop(BinOp::Ne, width, SubExp::i64(0));
        let outer = self.branch_results(
            nonempty,
            Body {
                stmts: guarded_stmts,
                result: inner.iter().map(|v| SubExp::Var(*v)).collect(),
            },
            Body {
                stmts: Vec::new(),
                result: zeros,
            },
        )?;
        let subst: traverse::Subst = inner.into_iter().zip(outer).collect();
        traverse::substitute_body(&mut lambda.body, &subst);
        for t in &mut lambda.ret {
            *t = traverse::substitute_type(t, &subst);
        }
        traverse::substitute_arena_types(&mut self.function, &subst);
        Ok(())
    }

    /// Result sizes of a lambda must not depend on its own variables (irregular arrays).
    fn check_lambda_sizes(&self, lambda: &Lambda) -> Res<()> {
        for t in &lambda.ret {
            for d in t.shape() {
                if self.bound_in(&lambda.body, *d)
                    || d.as_var().is_some_and(|v| lambda.params.contains(&v))
                {
                    return Err(self.unsupported(
                        "a function given to a SOAC that returns arrays whose size depends on \
                         its argument (the result could be irregular)",
                    ));
                }
            }
        }
        Ok(())
    }

    /// An identity body over `params`.
    pub(super) fn identity(params: &[VarId]) -> Body {
        Body {
            stmts: Vec::new(),
            result: params.iter().map(|v| SubExp::Var(*v)).collect(),
        }
    }
}
