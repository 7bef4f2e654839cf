//! Lowering of indexing, slicing and updates (`a[i, j:k]`, `a with [i] = v`, `let a[i] = v`)
//! and of record fields and record updates (records are tuples in field-name order).
//!
//! Invariants: bounds, strides and indices are evaluated left to right as the interpreter does;
//! the IR's index check reproduces the interpreter's errors (see `slice`).

use super::index_type;
use crate::lower::{LVal, Lowerer, Res};
use crate::syntax::ast::{self, Expr, IndexArg};
use ogham_ir::op::BinOp;
use ogham_ir::types::{self, PrimType};
use ogham_ir::{Body, Const, DimIndex, Exp, SubExp, Type};
use std::rc::Rc;

impl<'p> Lowerer<'p> {
    /// `array[args]`, leaf by leaf.
    pub(super) fn index(&mut self, array: &'p Expr, args: &'p [IndexArg]) -> Res<LVal<'p>> {
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

    /// The position of `field` (a tuple index or a record field name) among the components of
    /// `record`'s value.
    pub(super) fn field_position(&self, record: &Expr, field: &str) -> Res<usize> {
        let ty = self.source_type(record);
        let mut t = &*ty;
        while let types::Type::Array(inner, _) = t {
            t = inner;
        }
        self.field_position_in(t, field)
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
                    Body {
                        stmts,
                        result: vec![last, SubExp::i64(-1), SubExp::i64(1)],
                    },
                    Body {
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
                            Body {
                                stmts: Vec::new(),
                                result: vec![SubExp::i64(1)],
                            },
                            Body {
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

    pub(super) fn update(
        &mut self,
        array: LVal<'p>,
        args: &'p [IndexArg],
        value: &'p Expr,
    ) -> Res<LVal<'p>> {
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

    /// `let name[args] = value in body`.
    pub(super) fn let_with(
        &mut self,
        name: &ast::Ident,
        args: &'p [IndexArg],
        value: &'p Expr,
        body: &'p Expr,
    ) -> Res<LVal<'p>> {
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

    /// `record with path = v`, where `r` is `record`'s value.
    pub(super) fn record_update(
        &mut self,
        record: &'p Expr,
        r: LVal<'p>,
        path: &[ast::Ident],
        v: LVal<'p>,
    ) -> Res<LVal<'p>> {
        let record_type = self.source_type(record);
        self.record_update_typed(&record_type, r, path, v)
    }

    /// `r with path = v`, where `r` is a value of source type `ty`.
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

    /// The position of `field` (a tuple index or a record field name) in a value of type `ty`.
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
}
