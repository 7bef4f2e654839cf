//! Lowering of `loop`s: `for i < n`, `for i in lo..hi`, `for x in xs` and `while` become the
//! IR's `Loop` (counted or with a condition parameter), with the loop parameters' sizes found
//! by retrying: a dimension the body changes becomes a size parameter of the loop.
//!
//! Invariants: each attempt's statements are truncated away before a retry, so only the last
//! attempt is emitted; every retry adds a dimension, so the retries end. The environment is
//! restored after the body.

use crate::lower::{LVal, Lowerer, Res};
use crate::syntax::ast::{self, Expr};
use ogham_ir::op::BinOp;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, DimIndex, Exp, LoopForm, SubExp, Type, VarId};
use std::rc::Rc;

/// Dimensions of loop parameters, as (parameter, dimension) positions.
type LoopDims = Vec<(usize, usize)>;

impl<'p> Lowerer<'p> {
    pub(super) fn loop_expr(
        &mut self,
        pat: &'p ast::Pattern,
        init: Option<&'p Expr>,
        form: &'p ast::LoopForm,
        body: &'p Expr,
    ) -> Res<LVal<'p>> {
        let init_value = match init {
            Some(e) => self.expr(e)?,
            None => self.pattern_value(pat)?,
        };
        let mut inits = Vec::new();
        self.leaves(&init_value, &mut inits)?;
        // First attempt: parameters keep the initial sizes; if the body changes a size, retry
        // with that dimension as a size parameter of the loop. Every retry adds at least one
        // dimension, so this ends after at most one attempt per dimension.
        let mut variable_dims: LoopDims = Vec::new();
        loop {
            let checkpoint = self.stmts.len();
            match self.try_loop(pat, &init_value, &inits, form, body, &variable_dims)? {
                Ok(value) => return Ok(value),
                Err(changed) => {
                    self.stmts.truncate(checkpoint);
                    variable_dims.extend(changed);
                }
            }
        }
    }

    /// The current value of a pattern's variables (for `loop p for ...` without `= init`).
    fn pattern_value(&self, pat: &ast::Pattern) -> Res<LVal<'p>> {
        match pat {
            ast::Pattern::Var(id) => self
                .env
                .get(&id.name)
                .cloned()
                .ok_or_else(|| self.internal(format!("`{}` is not in scope", id.name))),
            ast::Pattern::Tuple(ps, _) if ps.len() == 1 => self.pattern_value(&ps[0]),
            ast::Pattern::Tuple(ps, _) => Ok(LVal::Tuple(
                ps.iter()
                    .map(|p| self.pattern_value(p))
                    .collect::<Res<_>>()?,
            )),
            ast::Pattern::Ascribed(p, _, _) => self.pattern_value(p),
            _ => Err(self.unsupported("this loop pattern without an initial value")),
        }
    }

    /// Emits the loop with the given variable dimensions `(parameter, dimension)`; returns
    /// `Err(changed)` if the body changes other dimensions.
    fn try_loop(
        &mut self,
        pat: &'p ast::Pattern,
        init_value: &LVal<'p>,
        inits: &[SubExp],
        form: &'p ast::LoopForm,
        body: &'p Expr,
        variable_dims: &[(usize, usize)],
    ) -> Res<Result<LVal<'p>, LoopDims>> {
        let mut params: Vec<(VarId, SubExp)> = Vec::new();
        let mut size_params: Vec<(usize, usize, VarId)> = Vec::new();
        for &(p, d) in variable_dims {
            let size = self.new_var("n", Type::Prim(PrimType::I64));
            let init_dim = self.ty(inits[p]).shape()[d];
            params.push((size, init_dim));
            size_params.push((p, d, size));
        }
        let mut value_params = Vec::new();
        for (p, init) in inits.iter().enumerate() {
            let ty = self.ty(*init);
            let mut shape = ty.shape().to_vec();
            for &(sp, d, size) in &size_params {
                if sp == p {
                    shape[d] = SubExp::Var(size);
                }
            }
            let v = self.new_var("acc", Type::with_shape(ty.elem(), shape));
            value_params.push(v);
            params.push((v, *init));
        }
        let param_value = Self::rebuild(
            init_value,
            &mut value_params.iter().map(|v| SubExp::Var(*v)),
        );
        let env = self.env.clone();
        let (loop_form, result) = match form {
            ast::LoopForm::For(i, bound) => self.counted_loop(i, bound, pat, &param_value, body)?,
            ast::LoopForm::Range(i, lo, hi) => {
                self.range_loop(&i.name, (lo, hi), pat, &param_value, body)?
            }
            ast::LoopForm::ForIn(xpat, xs) => {
                self.for_in_loop(xpat, xs, pat, &param_value, body)?
            }
            ast::LoopForm::While(cond) => {
                self.while_loop(cond, pat, init_value, &param_value, body, &mut params)?
            }
        };
        self.env = env;
        let mut result = result;
        // Check the sizes the body returns against the parameters'.
        let offset = usize::from(matches!(loop_form, LoopForm::While { .. }));
        let values = result.result[offset..].to_vec();
        let mut changed = Vec::new();
        for (p, (v, param)) in values.iter().zip(&value_params).enumerate() {
            let got = self.ty(*v);
            let want = self.function.ty(*param).clone();
            for (d, (g, w)) in got.shape().iter().zip(want.shape()).enumerate() {
                if g != w && !size_params.iter().any(|&(sp, sd, _)| sp == p && sd == d) {
                    changed.push((p, d));
                }
            }
        }
        if !changed.is_empty() {
            return Ok(Err(changed));
        }
        // Size parameters come first in the body's results, in `size_params` order.
        for (k, &(p, d, _)) in size_params.iter().enumerate() {
            let dim = self.ty(values[p]).shape()[d];
            result.result.insert(offset + k, dim);
        }
        let outs: Vec<VarId> = params
            .iter()
            .map(|(v, _)| {
                let info = self.function.var(*v).clone();
                self.new_var(&info.name, info.ty)
            })
            .collect();
        // Result types refer to the loop's own size parameters: rename them to the outputs.
        let subst: ogham_ir::traverse::Subst = params
            .iter()
            .zip(&outs)
            .map(|((p, _), o)| (*p, SubExp::Var(*o)))
            .collect();
        for o in &outs {
            let ty = ogham_ir::traverse::substitute_type(self.function.ty(*o), &subst);
            self.function.vars[o.index()].ty = ty;
        }
        self.emit(
            outs.clone(),
            Exp::Loop {
                params,
                form: loop_form,
                body: result,
            },
        );
        let skip = offset + size_params.len();
        Ok(Ok(Self::rebuild(
            init_value,
            &mut outs[skip..].iter().map(|v| SubExp::Var(*v)),
        )))
    }

    /// `for i < bound`: its form and body.
    fn counted_loop(
        &mut self,
        i: &ast::Ident,
        bound: &'p Expr,
        pat: &'p ast::Pattern,
        param_value: &LVal<'p>,
        body: &'p Expr,
    ) -> Res<(LoopForm, Body)> {
        let bound = self.scalar(bound)?;
        let bound = self.as_i64(bound);
        let index = self.new_var(&i.name, Type::Prim(PrimType::I64));
        let (_, body_ir) = self.body_of(|this| {
            Rc::make_mut(&mut this.env).insert(i.name.clone(), LVal::Leaf(SubExp::Var(index)));
            this.bind_pattern(pat, param_value.clone())?;
            this.expr(body)
        })?;
        Ok((LoopForm::For { index, bound }, body_ir))
    }

    /// `for x in xs`: a counted loop over the rows of `xs`; its form and body.
    fn for_in_loop(
        &mut self,
        xpat: &'p ast::Pattern,
        xs: &'p Expr,
        pat: &'p ast::Pattern,
        param_value: &LVal<'p>,
        body: &'p Expr,
    ) -> Res<(LoopForm, Body)> {
        let xs = self.expr(xs)?;
        let mut leaves = Vec::new();
        self.leaves(&xs, &mut leaves)?;
        let bound = leaves
            .first()
            .map(|l| self.ty(*l).shape()[0])
            .ok_or_else(|| self.unsupported("`for x in` over a value with no arrays"))?;
        let index = self.new_var("i", Type::Prim(PrimType::I64));
        let (_, body_ir) = self.body_of(|this| {
            let x = this.map_leaves(&xs, &mut |this, se| {
                let v = se
                    .as_var()
                    .ok_or_else(|| this.internal("for-in over a constant"))?;
                let ty = this.function.ty(v).row();
                Ok(this.bind(
                    "x",
                    ty,
                    Exp::Index(v, vec![DimIndex::Fix(SubExp::Var(index))]),
                ))
            })?;
            this.bind_pattern(xpat, x)?;
            this.bind_pattern(pat, param_value.clone())?;
            this.expr(body)
        })?;
        Ok((LoopForm::For { index, bound }, body_ir))
    }

    /// `while cond`: its form and body; the condition's parameter goes first in `params`.
    fn while_loop(
        &mut self,
        cond: &'p Expr,
        pat: &'p ast::Pattern,
        init_value: &LVal<'p>,
        param_value: &LVal<'p>,
        body: &'p Expr,
        params: &mut Vec<(VarId, SubExp)>,
    ) -> Res<(LoopForm, Body)> {
        // A `bool` parameter holds the condition, computed before the first iteration
        // and at the end of each.
        let first = self.nested(|this| {
            this.bind_pattern(pat, init_value.clone())?;
            this.scalar(cond)
        })?;
        self.stmts.extend(first.1);
        let c = self.new_var("cond", Type::Prim(PrimType::Bool));
        params.insert(0, (c, first.0));
        let (_, mut body_ir) = self.body_of(|this| {
            this.bind_pattern(pat, param_value.clone())?;
            this.expr(body)
        })?;
        let (next, cond_stmts) = self.nested(|this| {
            let after = Self::rebuild(init_value, &mut body_ir.result.clone().into_iter());
            this.bind_pattern(pat, after)?;
            this.scalar(cond)
        })?;
        body_ir.stmts.extend(cond_stmts);
        body_ir.result.insert(0, next);
        Ok((LoopForm::While { cond: c }, body_ir))
    }

    /// `for i in lo..hi` as a counted loop: its iteration count `hi - lo` (in `i64`; a negative
    /// count runs no iteration), `lo` as `i64`, and the bounds' type (the counter's).
    fn range_count(&mut self, lo: &'p Expr, hi: &'p Expr) -> Res<(SubExp, SubExp, PrimType)> {
        let lo = self.scalar(lo)?;
        let hi = self.scalar(hi)?;
        let Type::Prim(ty) = self.ty(lo) else {
            return Err(self.internal("a range bound of no scalar type"));
        };
        let (lo, hi) = (self.as_i64(lo), self.as_i64(hi));
        Ok((self.binop(BinOp::Sub, hi, lo), lo, ty))
    }

    /// `for i in lo..hi` (counter `name`, loop parameters `pat` with value `param`) as the
    /// counted loop `for k < hi - lo` with `i = lo + k`: its form and body.
    fn range_loop(
        &mut self,
        name: &str,
        (lo, hi): (&'p Expr, &'p Expr),
        pat: &'p ast::Pattern,
        param: &LVal<'p>,
        body: &'p Expr,
    ) -> Res<(LoopForm, Body)> {
        let (bound, start, ty) = self.range_count(lo, hi)?;
        let index = self.new_var("k", Type::Prim(PrimType::I64));
        let (_, body_ir) = self.body_of(|this| {
            let at = this.range_counter(start, index, ty);
            Rc::make_mut(&mut this.env).insert(name.to_string(), LVal::Leaf(at));
            this.bind_pattern(pat, param.clone())?;
            this.expr(body)
        })?;
        Ok((LoopForm::For { index, bound }, body_ir))
    }

    /// The counter of a range loop from `start` (in `i64`) in iteration `k`, at type `ty`.
    fn range_counter(&mut self, start: SubExp, k: VarId, ty: PrimType) -> SubExp {
        let at = self.binop(BinOp::Add, start, SubExp::Var(k));
        match ty {
            PrimType::I64 => at,
            _ => self.bind("i", Type::Prim(ty), Exp::Convert(ty, at)),
        }
    }
}
