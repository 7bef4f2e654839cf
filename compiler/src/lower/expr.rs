//! Lowering of expressions (everything but applications of functions and built-ins, which are
//! in `apply` and `builtins`).

use super::{Callee, Closure, LVal, Lowerer, Res, prim_of};
use crate::syntax::ast::{self, Expr, ExprKind, IndexArg};
use crate::typeck::Resolution;
use ogham_ir::op::BinOp;
use ogham_ir::types::{self, PrimType};
use ogham_ir::{Const, DimIndex, Exp, LoopForm, SubExp, Type, VarId, scalar};
use std::rc::Rc;

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
            ExprKind::Lit(lit) => {
                let ty = prim_of(&self.source_type(e))
                    .ok_or_else(|| self.unsupported("a literal of a polymorphic type"))?;
                let c = super::surface::literal(lit.value, ty)
                    .ok_or_else(|| self.internal("bad literal"))?;
                Ok(LVal::Leaf(SubExp::Const(c)))
            }
            ExprKind::Var(name) => self.variable(e, name),
            ExprKind::Tuple(es) => Ok(LVal::Tuple(
                es.iter().map(|e| self.expr(e)).collect::<Res<_>>()?,
            )),
            ExprKind::Record(fields) => {
                let mut sorted: Vec<&(ast::Ident, Expr)> = fields.iter().collect();
                sorted.sort_by(|a, b| a.0.name.cmp(&b.0.name));
                Ok(LVal::Tuple(
                    sorted
                        .into_iter()
                        .map(|(_, e)| self.expr(e))
                        .collect::<Res<_>>()?,
                ))
            }
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
            ExprKind::Index(array, args) => {
                let a = self.expr(array)?;
                let idx = self.index_args(&a, args)?;
                self.map_leaves(&a, &mut |this, se| {
                    let v = se
                        .as_var()
                        .ok_or_else(|| this.internal("index of a constant"))?;
                    let ty = index_type(this.function.ty(v), &idx);
                    Ok(this.bind("x", ty, Exp::Index(v, idx.clone())))
                })
            }
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
                let a = self.scalar(a)?;
                let (_, then_body) = self.body_of(|this| this.expr(b))?;
                let constant = super::Body {
                    stmts: Vec::new(),
                    result: vec![SubExp::Const(Const::Bool(*op == ast::BinOp::Or))],
                };
                let (then_body, else_body) = if *op == ast::BinOp::And {
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
            ExprKind::BinOp(op, a, b) => {
                let op = super::surface::binop(*op)
                    .ok_or_else(|| self.internal("a pipe as a scalar operator"))?;
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                Ok(LVal::Leaf(self.binop(op, a, b)))
            }
            ExprKind::UnOp(op, a) => {
                let op = super::surface::unop(*op);
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
            ExprKind::LetWith(name, args, value, body) => {
                let array = self
                    .env
                    .get(&name.name)
                    .cloned()
                    .ok_or_else(|| self.internal(format!("`{}` is not in scope", name.name)))?;
                let updated = self.update(array, args, value)?;
                let env = self.env.clone();
                Rc::make_mut(&mut self.env).insert(name.name.clone(), updated);
                let result = self.expr(body);
                self.env = env;
                result
            }
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
            ExprKind::Assert(cond, message, inner) => {
                let c = self.scalar(cond)?;
                self.emit(
                    vec![],
                    Exp::Assert {
                        cond: c,
                        message: message.clone(),
                        kind: ogham_ir::AssertKind::User,
                    },
                );
                self.expr(inner)
            }
            ExprKind::Trace(label, inner) => {
                let value = self.scalar(inner)?;
                self.emit(
                    vec![],
                    Exp::Trace {
                        label: label.clone(),
                        value,
                    },
                );
                Ok(LVal::Leaf(value))
            }
            ExprKind::Coerce(inner, _) => {
                let v = self.expr(inner)?;
                self.coerce(&self.source_type(e), v)
            }
        }
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

    /// The position of `field` (a tuple index or a record field name) among the components of
    /// `record`'s value.
    fn field_position(&self, record: &Expr, field: &str) -> Res<usize> {
        if let Ok(i) = field.parse::<usize>() {
            return Ok(i);
        }
        let ty = self.source_type(record);
        let mut t = &*ty;
        while let types::Type::Array(inner, _) = t {
            t = inner;
        }
        match t {
            types::Type::Record(fields) => fields
                .iter()
                .position(|(name, _)| name == field)
                .ok_or_else(|| self.internal(format!("no field `{field}`"))),
            _ => Err(self.internal("field of a non-record")),
        }
    }

    /// The IR index of `a[args]` (`a` gives the dimensions of the array indexed).
    fn index_args(&mut self, a: &LVal<'p>, args: &'p [IndexArg]) -> Res<Vec<DimIndex>> {
        let mut leaves = Vec::new();
        self.leaves(a, &mut leaves)?;
        let shape = leaves
            .first()
            .map(|l| self.ty(*l).shape().to_vec())
            .unwrap_or_default();
        let mut idx = Vec::new();
        for (d, arg) in args.iter().enumerate() {
            let n = *shape
                .get(d)
                .ok_or_else(|| self.internal("more indices than dimensions"))?;
            idx.push(match arg {
                IndexArg::Index(i) => {
                    let i = self.scalar(i)?;
                    DimIndex::Fix(self.as_i64(i))
                }
                IndexArg::Slice {
                    start, end, stride, ..
                } => self.slice(n, start.as_ref(), end.as_ref(), stride.as_ref())?,
            });
        }
        Ok(idx)
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
    ) -> Res<(LoopForm, super::Body)> {
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

    /// A slice `start:end:stride` of a dimension of size `n`, with the interpreter's defaults
    /// (`0:n` for a positive stride, `n-1:-1` for a negative one). The bounds and the stride are
    /// evaluated left to right, as the interpreter does (the first that fails is the error).
    ///
    /// The length is `ceil((end - start) / stride)`. Reversed bounds (`3:1`) get a negative
    /// length, from which the evaluator's index check recovers an invalid slice and fails as the
    /// interpreter does (with the exact bounds when the stride is 1 or -1).
    fn slice(
        &mut self,
        n: SubExp,
        start: Option<&'p Expr>,
        end: Option<&'p Expr>,
        stride: Option<&'p Expr>,
    ) -> Res<DimIndex> {
        let start = start.map(|e| self.index_operand(e)).transpose()?;
        let end = end.map(|e| self.index_operand(e)).transpose()?;
        let stride = match stride {
            Some(s) => self.index_operand(s)?,
            None => SubExp::i64(1),
        };
        let i64_ty = Type::Prim(PrimType::I64);
        // The default bounds and the rounding term of the length depend on the stride's sign.
        let (default_start, default_end, round) = match stride {
            SubExp::Const(Const::I64(s)) if s < 0 => {
                let last = self.binop(BinOp::Sub, n, SubExp::i64(1));
                (last, SubExp::i64(-1), SubExp::i64(1))
            }
            SubExp::Const(_) => (SubExp::i64(0), n, SubExp::i64(-1)),
            SubExp::Var(_) => {
                let negative = self.binop(BinOp::Lt, stride, SubExp::i64(0));
                let (last, stmts) =
                    self.nested(|this| Ok(this.binop(BinOp::Sub, n, SubExp::i64(1))))?;
                let defaults = self.branch_results(
                    negative,
                    super::Body {
                        stmts,
                        result: vec![last, SubExp::i64(-1), SubExp::i64(1)],
                    },
                    super::Body {
                        stmts: Vec::new(),
                        result: vec![SubExp::i64(0), n, SubExp::i64(-1)],
                    },
                )?;
                (defaults[0], defaults[1], defaults[2])
            }
        };
        let start = start.unwrap_or(default_start);
        let end = end.unwrap_or(default_end);
        let span = self.binop(BinOp::Sub, end, start);
        let len = match stride {
            SubExp::Const(Const::I64(0)) => SubExp::i64(0),
            SubExp::Const(Const::I64(1)) => span,
            SubExp::Const(Const::I64(-1)) => self.binop(BinOp::Sub, start, end),
            _ => {
                let divisor = match stride {
                    SubExp::Const(_) => stride,
                    // A zero stride is the index check's error; any divisor will do until then.
                    SubExp::Var(_) => {
                        let zero = self.binop(BinOp::Eq, stride, SubExp::i64(0));
                        let results = self.branch_results(
                            zero,
                            super::Body {
                                stmts: Vec::new(),
                                result: vec![SubExp::i64(1)],
                            },
                            super::Body {
                                stmts: Vec::new(),
                                result: vec![stride],
                            },
                        )?;
                        results[0]
                    }
                };
                // `(span + round) / stride + 1` (rounding `span` toward zero first, so that
                // nothing overflows even for a stride near `i64.max`) is the length when
                // `span` is non-zero and has the stride's sign.
                let rounded = self.binop(BinOp::Add, span, round);
                let quot = self.binop(BinOp::Quot, rounded, divisor);
                let count = self.binop(BinOp::Add, quot, SubExp::i64(1));
                // Reversed bounds make it -1 (`count - reversed * (count + 1)`) so that the
                // index check still sees them; an empty span makes it 0.
                let span_negative = self.binop(BinOp::Lt, span, SubExp::i64(0));
                let stride_negative = self.binop(BinOp::Lt, stride, SubExp::i64(0));
                let nonempty = self.binop(BinOp::Ne, span, SubExp::i64(0));
                let opposite = self.binop(BinOp::Ne, span_negative, stride_negative);
                let reversed = self.binop(BinOp::BitAnd, nonempty, opposite);
                let reversed =
                    self.bind("rev", i64_ty.clone(), Exp::Convert(PrimType::I64, reversed));
                let count_plus = self.binop(BinOp::Add, count, SubExp::i64(1));
                let correction = self.binop(BinOp::Mul, reversed, count_plus);
                let len = self.binop(BinOp::Sub, count, correction);
                let nonempty = self.bind("ne", i64_ty, Exp::Convert(PrimType::I64, nonempty));
                self.binop(BinOp::Mul, nonempty, len)
            }
        };
        Ok(DimIndex::Slice { start, len, stride })
    }

    /// An index, slice bound or stride, as an `i64`.
    fn index_operand(&mut self, e: &'p Expr) -> Res<SubExp> {
        let v = self.scalar(e)?;
        Ok(self.as_i64(v))
    }

    fn update(&mut self, array: LVal<'p>, args: &'p [IndexArg], value: &'p Expr) -> Res<LVal<'p>> {
        let idx = self.index_args(&array, args)?;
        let v = self.expr(value)?;
        let mut arrays = Vec::new();
        self.leaves(&array, &mut arrays)?;
        let mut values = Vec::new();
        self.leaves(&v, &mut values)?;
        let mut updated = Vec::new();
        for (a, v) in arrays.into_iter().zip(values) {
            let var = a
                .as_var()
                .ok_or_else(|| self.internal("update of a constant"))?;
            let ty = self.function.ty(var).clone();
            updated.push(self.bind("upd", ty, Exp::Update(var, idx.clone(), v)));
        }
        Ok(Self::rebuild(&array, &mut updated.into_iter()))
    }

    fn record_update(
        &mut self,
        record: &'p Expr,
        r: LVal<'p>,
        path: &[ast::Ident],
        v: LVal<'p>,
    ) -> Res<LVal<'p>> {
        let Some((field, rest)) = path.split_first() else {
            return Ok(v);
        };
        let record_type = self.source_type(record);
        let position = self.field_position_in(&record_type, &field.name)?;
        let LVal::Tuple(mut vs) = r else {
            return Err(self.internal("record update of a non-record"));
        };
        let inner_type = match &*record_type {
            types::Type::Record(fs) => fs.get(position).map(|(_, t)| t.clone()),
            types::Type::Tuple(ts) => ts.get(position).cloned(),
            _ => None,
        }
        .ok_or_else(|| self.internal("record update of a missing field"))?;
        let old = std::mem::replace(&mut vs[position], LVal::Tuple(Vec::new()));
        vs[position] = self.record_update_typed(&inner_type, old, rest, v)?;
        Ok(LVal::Tuple(vs))
    }

    fn record_update_typed(
        &mut self,
        ty: &types::Type,
        r: LVal<'p>,
        path: &[ast::Ident],
        v: LVal<'p>,
    ) -> Res<LVal<'p>> {
        let Some((field, rest)) = path.split_first() else {
            return Ok(v);
        };
        let position = self.field_position_in(ty, &field.name)?;
        let inner = match ty {
            types::Type::Record(fs) => fs.get(position).map(|(_, t)| t.clone()),
            types::Type::Tuple(ts) => ts.get(position).cloned(),
            _ => None,
        }
        .ok_or_else(|| self.internal("record update of a missing field"))?;
        let LVal::Tuple(mut vs) = r else {
            return Err(self.internal("record update of a non-record"));
        };
        let old = std::mem::replace(&mut vs[position], LVal::Tuple(Vec::new()));
        vs[position] = self.record_update_typed(&inner, old, rest, v)?;
        Ok(LVal::Tuple(vs))
    }

    fn field_position_in(&self, ty: &types::Type, field: &str) -> Res<usize> {
        if let Ok(i) = field.parse::<usize>() {
            return Ok(i);
        }
        match ty {
            types::Type::Record(fields) => fields
                .iter()
                .position(|(name, _)| name == field)
                .ok_or_else(|| self.internal(format!("no field `{field}`"))),
            _ => Err(self.internal("field of a non-record")),
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

    fn loop_expr(
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
            ast::LoopForm::For(i, bound) => {
                let bound = self.scalar(bound)?;
                let bound = self.as_i64(bound);
                let index = self.new_var(&i.name, Type::Prim(PrimType::I64));
                let (_, body_ir) = self.body_of(|this| {
                    Rc::make_mut(&mut this.env)
                        .insert(i.name.clone(), LVal::Leaf(SubExp::Var(index)));
                    this.bind_pattern(pat, param_value.clone())?;
                    this.expr(body)
                })?;
                (LoopForm::For { index, bound }, body_ir)
            }
            ast::LoopForm::Range(i, lo, hi) => {
                self.range_loop(&i.name, (lo, hi), pat, &param_value, body)?
            }
            ast::LoopForm::ForIn(xpat, xs) => {
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
                (LoopForm::For { index, bound }, body_ir)
            }
            ast::LoopForm::While(cond) => {
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
                (LoopForm::While { cond: c }, body_ir)
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
}

/// Dimensions of loop parameters, as (parameter, dimension) positions.
type LoopDims = Vec<(usize, usize)>;

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
