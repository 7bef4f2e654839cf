//! Lowering of expressions (everything but applications of functions and built-ins, which are
//! in `apply` and `builtins`).

use super::{Callee, Closure, LVal, Lowerer, Res, prim_of};
use crate::syntax::ast::{self, Expr, ExprKind};
use crate::typeck::Resolution;
use ogham_ir::op::BinOp;
use ogham_ir::types::{self, PrimType};
use ogham_ir::{Const, DimIndex, Exp, SubExp, Type, VarId, scalar};
use std::rc::Rc;

mod index;
mod loops;

impl<'p> Lowerer<'p> {
    pub(super) fn expr(&mut self, e: &'p Expr) -> Res<LVal<'p>> {
        let saved = self.loc;
        self.loc = e.span;
        let result = self.expr_kind(e);
        self.loc = saved;
        result
    }

    /// The source type of an expression, in the instance being lowered.
    fn source_type(&self, e: &Expr) -> std::borrow::Cow<'p, types::Type> {
        self.checked.type_of(e.id, &self.types)
    }

    pub(super) fn scalar(&mut self, e: &'p Expr) -> Res<SubExp> {
        match self.expr(e)? {
            LVal::Leaf(se) => Ok(se),
            _ => Err(self.internal("expected a scalar")),
        }
    }

    fn expr_kind(&mut self, e: &'p Expr) -> Res<LVal<'p>> {
        match &e.kind {
            ExprKind::Lit(lit) => self.lit(e, lit),
            ExprKind::Var(name) => self.variable(e, name),
            ExprKind::Tuple(es) => Ok(LVal::Tuple(
                es.iter().map(|e| self.expr(e)).collect::<Res<_>>()?,
            )),
            ExprKind::Record(fields) => self.record(fields),
            ExprKind::ArrayLit(es) => self.array_literal(e, es),
            ExprKind::Field(..)
                if let Some(Resolution::Builtin(b)) =
                    &self.checked.resolutions[e.id.0 as usize] =>
            {
                self.builtin_use(e, *b)
            }
            ExprKind::Field(inner, field) => {
                let v = self.expr(inner)?;
                let position = self.field_position(inner, &field.name)?;
                match v {
                    LVal::Tuple(mut vs) if position < vs.len() => Ok(vs.swap_remove(position)),
                    _ => Err(self.internal("field of a non-record")),
                }
            }
            ExprKind::Index(array, args) => self.index(array, args),
            ExprKind::Apply(f, args) => {
                let f = self.expr(f)?;
                let args = args.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
                self.apply(f, args)
            }
            ExprKind::BinOp(ast::BinOp::PipeRight, x, f) => {
                let x = self.expr(x)?;
                let f = self.expr(f)?;
                self.apply(f, vec![x])
            }
            ExprKind::BinOp(ast::BinOp::PipeLeft, f, x) => {
                let f = self.expr(f)?;
                let x = self.expr(x)?;
                self.apply(f, vec![x])
            }
            ExprKind::BinOp(op @ (ast::BinOp::And | ast::BinOp::Or), a, b) => {
                self.short_circuit(*op, a, b)
            }
            ExprKind::BinOp(op, a, b) => {
                let op = op
                    .ir()
                    .ok_or_else(|| self.internal("a pipe as a scalar operator"))?;
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                Ok(LVal::Leaf(self.binop(op, a, b)))
            }
            ExprKind::UnOp(op, a) => self.unop(*op, a),
            ExprKind::OpSection(op) => Ok(self.closure(Callee::Op(*op, None, None, e.span))),
            ExprKind::LeftSection(op, x) => {
                let x = self.expr(x)?;
                Ok(self.closure(Callee::Op(*op, Some(Box::new(x)), None, e.span)))
            }
            ExprKind::RightSection(op, y) => {
                let y = self.expr(y)?;
                Ok(self.closure(Callee::Op(*op, None, Some(Box::new(y)), e.span)))
            }
            ExprKind::Lambda(..) => {
                Ok(self.closure(Callee::Lambda(e, self.env.clone(), self.types.clone())))
            }
            ExprKind::Let(p, value, body) => {
                let v = self.expr(value)?;
                let env = self.env.clone();
                self.bind_pattern(p, v)?;
                let result = self.expr(body);
                self.env = env;
                result
            }
            ExprKind::LetFun(fun, body) => {
                let closure =
                    self.closure(Callee::Local(fun, self.env.clone(), self.types.clone()));
                let env = self.env.clone();
                Rc::make_mut(&mut self.env).insert(fun.name.name.clone(), closure);
                let result = self.expr(body);
                self.env = env;
                result
            }
            ExprKind::LetWith(name, args, value, body) => self.let_with(name, args, value, body),
            ExprKind::If(c, t, f) => {
                let cond = self.scalar(c)?;
                let (then_value, then_body) = self.body_of(|this| this.expr(t))?;
                let (_, else_body) = self.body_of(|this| this.expr(f))?;
                let results = self.branch_results(cond, then_body, else_body)?;
                Ok(Self::rebuild(&then_value, &mut results.into_iter()))
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.loop_expr(pat, init.as_deref(), form, body),
            ExprKind::Update(array, args, value) => {
                let a = self.expr(array)?;
                self.update(a, args, value)
            }
            ExprKind::RecordUpdate(record, path, value) => {
                let r = self.expr(record)?;
                let v = self.expr(value)?;
                self.record_update(record, r, path, v)
            }
            ExprKind::Ascribe(inner, _) => self.expr(inner),
            ExprKind::Assert(cond, message, inner) => self.assert(cond, message, inner),
            ExprKind::Trace(label, inner) => self.trace(label, inner),
            ExprKind::Coerce(inner, _) => {
                let v = self.expr(inner)?;
                self.coerce(&self.source_type(e), v)
            }
        }
    }

    /// A literal at the type the checker gave it.
    fn lit(&mut self, e: &Expr, lit: &ast::Literal) -> Res<LVal<'p>> {
        let ty = prim_of(&self.source_type(e))
            .ok_or_else(|| self.unsupported("a literal of a polymorphic type"))?;
        let c =
            super::surface::literal(lit.value, ty).ok_or_else(|| self.internal("bad literal"))?;
        Ok(LVal::Leaf(SubExp::Const(c)))
    }

    /// A record: a tuple of its fields in name order.
    fn record(&mut self, fields: &'p [(ast::Ident, Expr)]) -> Res<LVal<'p>> {
        let mut sorted: Vec<&(ast::Ident, Expr)> = fields.iter().collect();
        sorted.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        Ok(LVal::Tuple(
            sorted
                .into_iter()
                .map(|(_, e)| self.expr(e))
                .collect::<Res<_>>()?,
        ))
    }

    /// `a && b` and `a || b`: `b` is evaluated only when needed (an `if`).
    fn short_circuit(&mut self, op: ast::BinOp, a: &'p Expr, b: &'p Expr) -> Res<LVal<'p>> {
        let a = self.scalar(a)?;
        let (_, then_body) = self.body_of(|this| this.expr(b))?;
        let constant = super::Body {
            stmts: Vec::new(),
            result: vec![SubExp::Const(Const::Bool(op == ast::BinOp::Or))],
        };
        let (then_body, else_body) = if op == ast::BinOp::And {
            (then_body, constant)
        } else {
            (constant, then_body)
        };
        Ok(LVal::Leaf(self.bind(
            "b",
            Type::Prim(PrimType::Bool),
            Exp::If {
                cond: a,
                then_body,
                else_body,
                ret: vec![Type::Prim(PrimType::Bool)],
            },
        )))
    }

    /// `-a` and `!a`, folded when `a` is a constant.
    fn unop(&mut self, op: ast::UnOp, a: &'p Expr) -> Res<LVal<'p>> {
        let op = super::surface::unop(op);
        let a = self.scalar(a)?;
        // Negative literals are constants (slice strides rely on it).
        if let SubExp::Const(c) = a
            && let Ok(folded) = scalar::unop(op, c)
        {
            return Ok(LVal::Leaf(SubExp::Const(folded)));
        }
        let ty = self.ty(a);
        Ok(LVal::Leaf(self.bind("x", ty, Exp::UnOp(op, a))))
    }

    /// `assert cond inner`: an `Assert` statement, then `inner`.
    fn assert(&mut self, cond: &'p Expr, message: &str, inner: &'p Expr) -> Res<LVal<'p>> {
        let c = self.scalar(cond)?;
        self.emit(
            vec![],
            Exp::Assert {
                cond: c,
                message: message.to_string(),
                kind: ogham_ir::AssertKind::User,
            },
        );
        self.expr(inner)
    }

    /// `#[trace]`: a `Trace` statement of the scalar `inner`.
    fn trace(&mut self, label: &str, inner: &'p Expr) -> Res<LVal<'p>> {
        let value = self.scalar(inner)?;
        self.emit(
            vec![],
            Exp::Trace {
                label: label.to_string(),
                value,
            },
        );
        Ok(LVal::Leaf(value))
    }

    pub(super) fn closure(&self, callee: Callee<'p>) -> LVal<'p> {
        LVal::Fun(Rc::new(Closure {
            callee,
            args: Vec::new(),
        }))
    }

    fn variable(&mut self, e: &'p Expr, name: &ast::QualName) -> Res<LVal<'p>> {
        match &self.checked.resolutions[e.id.0 as usize] {
            Some(Resolution::Local) | None => {
                let value = self
                    .env
                    .get(&name.name)
                    .cloned()
                    .ok_or_else(|| self.internal(format!("`{name}` is not in scope")))?;
                // A use of a polymorphic local function: its body sees the type arguments
                // of this use besides those of the scope it was defined in.
                match value {
                    LVal::Fun(closure) if self.checked.instantiations.contains_key(&e.id) => {
                        let Callee::Local(fun, env, types) = &closure.callee else {
                            return Ok(LVal::Fun(closure));
                        };
                        let mut types = (**types).clone();
                        types.extend(self.checked.type_args_at(e.id, &self.types));
                        Ok(LVal::Fun(Rc::new(Closure {
                            callee: Callee::Local(fun, env.clone(), Rc::new(types)),
                            args: closure.args.clone(),
                        })))
                    }
                    value => Ok(value),
                }
            }
            Some(Resolution::Def { module, decl }) => {
                let def = match &self.program.modules[*module].decls[*decl] {
                    ast::Decl::Def(d) => d,
                    _ => return Err(self.internal("reference to a non-definition")),
                };
                let types = Rc::new(self.checked.type_args_at(e.id, &self.types));
                if def.params.is_empty() {
                    // A constant definition: its body, in the global scope.
                    let env = std::mem::take(&mut self.env);
                    let outer = std::mem::replace(&mut self.types, types);
                    let result = self.expr(&def.body);
                    self.env = env;
                    self.types = outer;
                    result
                } else {
                    Ok(self.closure(Callee::Def(*module, *decl, types)))
                }
            }
            Some(Resolution::Builtin(b)) => self.builtin_use(e, *b),
        }
    }

    /// A use of a built-in (a name, or `t.member` of a type parameter `t`); a generic one is
    /// made concrete with the use's type in this instance.
    fn builtin_use(&mut self, e: &Expr, b: crate::builtins::Builtin) -> Res<LVal<'p>> {
        let b = b
            .specialise(&self.source_type(e))
            .ok_or_else(|| self.internal("a generic built-in at a non-primitive type"))?;
        match b {
            crate::builtins::Builtin::Const { op, ty } => {
                let c = scalar::constant(op, ty)
                    .ok_or_else(|| self.internal(format!("no constant {ty}.{op:?}")))?;
                Ok(LVal::Leaf(SubExp::Const(c)))
            }
            b => Ok(self.closure(Callee::Builtin(b, e.id))),
        }
    }

    /// A scalar binary operation (not `&&`, `||`, pipes).
    pub(super) fn binop(&mut self, op: BinOp, a: SubExp, b: SubExp) -> SubExp {
        let ty = if op.is_comparison() {
            Type::Prim(PrimType::Bool)
        } else {
            self.ty(a)
        };
        self.bind("x", ty, Exp::BinOp(op, a, b))
    }

    /// Applies `f` to every leaf of `v`, keeping the structure.
    pub(super) fn map_leaves(
        &mut self,
        v: &LVal<'p>,
        f: &mut impl FnMut(&mut Self, SubExp) -> Res<SubExp>,
    ) -> Res<LVal<'p>> {
        match v {
            LVal::Leaf(se) => Ok(LVal::Leaf(f(self, *se)?)),
            LVal::Tuple(vs) => Ok(LVal::Tuple(
                vs.iter()
                    .map(|v| self.map_leaves(v, f))
                    .collect::<Res<_>>()?,
            )),
            LVal::Fun(_) => Err(self.unsupported("an array of functions")),
        }
    }

    fn array_literal(&mut self, e: &'p Expr, es: &'p [Expr]) -> Res<LVal<'p>> {
        let elems = es.iter().map(|e| self.expr(e)).collect::<Res<Vec<_>>>()?;
        let Some(first) = elems.first().cloned() else {
            return self.empty_array(&self.source_type(e));
        };
        let mut columns: Vec<Vec<SubExp>> = Vec::new();
        for el in &elems {
            let mut flat = Vec::new();
            self.leaves(el, &mut flat)?;
            if columns.is_empty() {
                columns = vec![Vec::new(); flat.len()];
            }
            for (c, se) in columns.iter_mut().zip(flat) {
                c.push(se);
            }
        }
        let mut arrays = Vec::new();
        for column in columns {
            let elem_ty = self.ty(column[0]);
            let ty = elem_ty.array_of(SubExp::i64(column.len() as i64));
            arrays.push(self.bind("arr", ty, Exp::ArrayLit(column, elem_ty)));
        }
        Ok(Self::rebuild(&first, &mut arrays.into_iter()))
    }

    /// An empty array of source type `t` (`[0]...`, inner constant sizes or 0).
    fn empty_array(&mut self, t: &types::Type) -> Res<LVal<'p>> {
        let types::Type::Array(elem, _) = t else {
            return Err(self.internal("array literal of a non-array type"));
        };
        self.empty_of(elem)
    }

    fn empty_of(&mut self, elem: &types::Type) -> Res<LVal<'p>> {
        match elem {
            types::Type::Tuple(ts) => Ok(LVal::Tuple(
                ts.iter().map(|t| self.empty_of(t)).collect::<Res<_>>()?,
            )),
            types::Type::Record(fs) => Ok(LVal::Tuple(
                fs.iter()
                    .map(|(_, t)| self.empty_of(t))
                    .collect::<Res<_>>()?,
            )),
            _ => {
                let mut shape = Vec::new();
                let mut t = elem;
                while let types::Type::Array(inner, size) = t {
                    shape.push(SubExp::i64(match size {
                        types::Size::Const(n) => *n as i64,
                        _ => 0,
                    }));
                    t = inner;
                }
                let p = prim_of(t)
                    .ok_or_else(|| self.unsupported("an empty array of a polymorphic type"))?;
                let elem_ty = Type::with_shape(p, shape);
                let ty = elem_ty.array_of(SubExp::i64(0));
                Ok(LVal::Leaf(self.bind(
                    "arr",
                    ty,
                    Exp::ArrayLit(Vec::new(), elem_ty),
                )))
            }
        }
    }

    /// `i` as an `i64`.
    pub(super) fn as_i64(&mut self, i: SubExp) -> SubExp {
        match (self.ty(i), i) {
            (Type::Prim(PrimType::I64), _) => i,
            (_, SubExp::Const(c)) => SubExp::Const(scalar::convert(c, PrimType::I64)),
            _ => self.bind(
                "i",
                Type::Prim(PrimType::I64),
                Exp::Convert(PrimType::I64, i),
            ),
        }
    }

    /// `v :> t` where `t` is the coercion's type as the type checker resolved it (type aliases
    /// expanded, tuples and records included): every array whose dimensions differ from the
    /// sizes of `t` is reshaped, which checks them at run time.
    fn coerce(&mut self, target: &types::Type, v: LVal<'p>) -> Res<LVal<'p>> {
        self.coerce_dims(target, v, &mut Vec::new())
    }

    /// Coerces `v` of source type `target` inside arrays whose dimensions are `outer`
    /// (`None`: a size the coercion leaves alone).
    fn coerce_dims(
        &mut self,
        target: &types::Type,
        v: LVal<'p>,
        outer: &mut Vec<Option<SubExp>>,
    ) -> Res<LVal<'p>> {
        match (target, v) {
            (types::Type::Array(elem, size), v) => {
                outer.push(self.size_operand(size));
                let result = self.coerce_dims(elem, v, outer);
                outer.pop();
                result
            }
            (types::Type::Tuple(ts), LVal::Tuple(vs)) if ts.len() == vs.len() => Ok(LVal::Tuple(
                ts.iter()
                    .zip(vs)
                    .map(|(t, v)| self.coerce_dims(t, v, outer))
                    .collect::<Res<_>>()?,
            )),
            (types::Type::Record(fs), LVal::Tuple(vs)) if fs.len() == vs.len() => Ok(LVal::Tuple(
                fs.iter()
                    .zip(vs)
                    .map(|((_, t), v)| self.coerce_dims(t, v, outer))
                    .collect::<Res<_>>()?,
            )),
            (_, LVal::Leaf(SubExp::Var(var))) if !outer.is_empty() => {
                let ty = self.function.ty(var).clone();
                let mut shape = ty.shape().to_vec();
                let mut changed = false;
                for (dim, want) in shape.iter_mut().zip(outer.iter()) {
                    if let Some(want) = want
                        && dim != want
                    {
                        *dim = *want;
                        changed = true;
                    }
                }
                if !changed {
                    return Ok(LVal::Leaf(SubExp::Var(var)));
                }
                let new_ty = Type::with_shape(ty.elem(), shape.clone());
                Ok(LVal::Leaf(self.bind(
                    "coerced",
                    new_ty,
                    Exp::Reshape(var, shape),
                )))
            }
            (_, v) => Ok(v),
        }
    }

    /// The operand of a size of the type checker: a constant, or the `i64` variable in scope
    /// under that name (`None` for an unknown size).
    fn size_operand(&self, size: &types::Size) -> Option<SubExp> {
        match size {
            types::Size::Const(n) => Some(SubExp::i64(*n as i64)),
            types::Size::Var(name) => match self.env.get(name) {
                Some(LVal::Leaf(se)) if self.ty(*se) == Type::Prim(PrimType::I64) => Some(*se),
                _ => None,
            },
            types::Size::Unknown(_) => None,
        }
    }

    /// Emits an `if` whose branches compute `then_body`/`else_body` (same flat structure);
    /// dimensions that differ between the branches become existential sizes.
    pub(super) fn branch_results(
        &mut self,
        cond: SubExp,
        mut then_body: super::Body,
        mut else_body: super::Body,
    ) -> Res<Vec<SubExp>> {
        if then_body.result.len() != else_body.result.len() {
            return Err(self.internal("branches with different numbers of values"));
        }
        let mut pat_sizes: Vec<VarId> = Vec::new();
        let mut ret = Vec::new();
        let mut types = Vec::new();
        for (t, f) in then_body
            .result
            .clone()
            .iter()
            .zip(else_body.result.clone())
        {
            let (tt, ft) = (self.ty(*t), self.ty(f));
            let mut shape = Vec::new();
            for (dt, df) in tt.shape().iter().zip(ft.shape()) {
                if dt == df && !self.bound_in(&then_body, *dt) && !self.bound_in(&else_body, *df) {
                    shape.push(*dt);
                } else {
                    let size = self.new_var("d", Type::Prim(PrimType::I64));
                    pat_sizes.push(size);
                    then_body.result.insert(pat_sizes.len() - 1, *dt);
                    else_body.result.insert(pat_sizes.len() - 1, *df);
                    shape.push(SubExp::Var(size));
                }
            }
            types.push(Type::with_shape(tt.elem(), shape));
        }
        for s in &pat_sizes {
            ret.push(self.function.ty(*s).clone());
        }
        ret.extend(types.iter().cloned());
        let values: Vec<VarId> = types.into_iter().map(|t| self.new_var("r", t)).collect();
        let mut pat = pat_sizes;
        pat.extend(values.iter().copied());
        self.emit(
            pat,
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            },
        );
        Ok(values.into_iter().map(SubExp::Var).collect())
    }

    /// Whether operand `se` is a variable bound by a statement of `body` (not visible after it).
    pub(super) fn bound_in(&self, body: &super::Body, se: SubExp) -> bool {
        let SubExp::Var(v) = se else { return false };
        let mut found = false;
        ogham_ir::traverse::for_each_stmt(body, &mut |s| found |= s.pat.contains(&v));
        found
    }
}

/// The type of `a[idx]` for an array of type `ty`.
pub(super) fn index_type(ty: &Type, idx: &[DimIndex]) -> Type {
    let mut shape = Vec::new();
    for (d, dim) in ty.shape().iter().enumerate() {
        match idx.get(d) {
            Some(DimIndex::Fix(_)) => {}
            Some(DimIndex::Slice { len, .. }) => shape.push(*len),
            None => shape.push(*dim),
        }
    }
    Type::with_shape(ty.elem(), shape)
}
