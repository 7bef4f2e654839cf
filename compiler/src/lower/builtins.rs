//! Lowering of applications of built-in functions: SOACs become `Screma`/`Scatter`/`Hist`
//! nodes (filter and partition a scan of flags plus a scatter), shape functions become the IR's
//! array operations (`shape`), and `zip`/`unzip` disappear (arrays of tuples are tuples of
//! arrays). One arm per built-in of the table (`crate::builtins`); run-time checks name the
//! built-in as the interpreter does (`ArrayFn::name`).

use super::{LVal, Lowerer, Res};
use crate::builtins::{ArrayFn, Builtin};
use crate::syntax::ast::ExprId;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::types::PrimType;
use ogham_ir::{
    AssertKind, Const, DimIndex, Exp, HistOp, Lambda, RedOp, ScanOp, Soac, SubExp, Type, VarId,
};

mod shape;

const I64: Type = Type::Prim(PrimType::I64);

impl<'p> Lowerer<'p> {
    pub(super) fn builtin(
        &mut self,
        b: Builtin,
        _id: ExprId,
        args: Vec<LVal<'p>>,
    ) -> Res<LVal<'p>> {
        match b {
            Builtin::Array(f) => self.array_fn(f, args),
            Builtin::Math { op, .. } => {
                let args: Vec<SubExp> = args
                    .into_iter()
                    .map(|a| match a {
                        LVal::Leaf(se) => Ok(se),
                        _ => Err(self.internal("math on a non-scalar")),
                    })
                    .collect::<Res<_>>()?;
                let ty = self.ty(args[0]);
                let result = if op.returns_bool() {
                    Type::Prim(PrimType::Bool)
                } else {
                    ty.clone()
                };
                Ok(LVal::Leaf(self.bind(
                    "x",
                    result,
                    Exp::Math(op, ty.elem(), args),
                )))
            }
            Builtin::Convert { to, .. } => match args.as_slice() {
                [LVal::Leaf(x)] => Ok(LVal::Leaf(self.bind(
                    "x",
                    Type::Prim(to),
                    Exp::Convert(to, *x),
                ))),
                _ => Err(self.internal("conversion of a non-scalar")),
            },
            Builtin::Const { .. } => Err(self.internal("constant applied")),
            Builtin::Generic(_) => Err(self.internal("generic built-in not specialised")),
        }
    }

    /// The array variables of a value (an array or an array of tuples).
    fn arrays(&self, v: &LVal<'p>) -> Res<Vec<VarId>> {
        let mut leaves = Vec::new();
        self.leaves(v, &mut leaves)?;
        leaves
            .into_iter()
            .map(|l| l.as_var().ok_or_else(|| self.internal("expected an array")))
            .collect()
    }

    fn outer_size(&self, arrays: &[VarId]) -> Res<SubExp> {
        arrays
            .first()
            .and_then(|a| self.function.ty(*a).shape().first().copied())
            .ok_or_else(|| self.unsupported("a SOAC over a value with no arrays"))
    }

    fn row_types(&self, arrays: &[VarId]) -> Vec<Type> {
        arrays.iter().map(|a| self.function.ty(*a).row()).collect()
    }

    /// Asserts that the arrays of `values` all have outer size `n` (the interpreter's check).
    fn same_lengths(&mut self, fname: &str, n: SubExp, values: &[&LVal<'p>]) -> Res<()> {
        for v in values {
            for a in self.arrays(v)? {
                let m = self.function.ty(a).shape()[0];
                if m != n {
                    let same = self.binop(BinOp::Eq, n, m);
                    self.emit(
                        vec![],
                        Exp::Assert {
                            cond: same,
                            message: format!("{fname}: arrays of different lengths"),
                            kind: AssertKind::Size,
                        },
                    );
                }
            }
        }
        Ok(())
    }

    /// Binds fresh variables of the given types with one statement and returns them.
    fn emit_soac(&mut self, types: Vec<Type>, soac: Soac) -> Vec<SubExp> {
        let vars: Vec<VarId> = types.into_iter().map(|t| self.new_var("r", t)).collect();
        self.emit(vars.clone(), Exp::Soac(soac));
        vars.into_iter().map(SubExp::Var).collect()
    }

    /// An associative operator as a lambda over `2k` scalars/arrays of the given types.
    fn operator_lambda(
        &mut self,
        op: &LVal<'p>,
        width: SubExp,
        ne: &LVal<'p>,
        types: &[Type],
    ) -> Res<Lambda> {
        let (lambda, _) = self.lambda(
            op,
            width,
            &[ne.clone(), ne.clone()],
            &[types.to_vec(), types.to_vec()],
        )?;
        Ok(lambda)
    }

    fn neutral(&self, ne: &LVal<'p>) -> Res<Vec<SubExp>> {
        let mut flat = Vec::new();
        self.leaves(ne, &mut flat)?;
        Ok(flat)
    }

    fn array_fn(&mut self, f: ArrayFn, args: Vec<LVal<'p>>) -> Res<LVal<'p>> {
        let mut args = args.into_iter();
        let mut next = || args.next().ok_or_else(|| self.internal("missing argument"));
        match f {
            ArrayFn::Map(k) => {
                let func = next()?;
                let xss: Vec<LVal<'p>> = (0..k).map(|_| next()).collect::<Res<_>>()?;
                self.map(&func, &xss, &f.name())
            }
            ArrayFn::Reduce | ArrayFn::ReduceComm | ArrayFn::Scan => {
                let (op, ne, xs) = (next()?, next()?, next()?);
                self.reduce_or_scan(f, &op, &ne, &xs)
            }
            ArrayFn::Scatter => {
                let (dest, is, vs) = (next()?, next()?, next()?);
                let dests = self.arrays(&dest)?;
                self.scatter(&dest, dests, &is, &vs)
            }
            ArrayFn::Hist => {
                let (op, ne, k, is, vs) = (next()?, next()?, next()?, next()?, next()?);
                self.hist(&op, &ne, k, &is, &vs)
            }
            ArrayFn::ReduceByIndex => {
                let (dest, op, ne, is, vs) = (next()?, next()?, next()?, next()?, next()?);
                self.reduce_by_index(dest, &op, &ne, &is, &vs)
            }
            ArrayFn::Filter => {
                let (p, xs) = (next()?, next()?);
                self.filter(&p, &xs, false)
            }
            ArrayFn::Partition => {
                let (p, xs) = (next()?, next()?);
                let yes = self.filter(&p, &xs, false)?;
                let no = self.filter(&p, &xs, true)?;
                Ok(LVal::Tuple(vec![yes, no]))
            }
            ArrayFn::Iota => self.iota(next()?),
            ArrayFn::Replicate => {
                let (n, x) = (next()?, next()?);
                self.replicate(n, &x)
            }
            ArrayFn::Zip(k) => {
                let xss: Vec<LVal<'p>> = (0..k).map(|_| next()).collect::<Res<_>>()?;
                self.zip(k, xss)
            }
            ArrayFn::Unzip(_) => next(),
            ArrayFn::Transpose => self.transpose(&next()?),
            ArrayFn::Flatten => self.flatten(&next()?),
            ArrayFn::Unflatten => {
                let (n, m, xs) = (next()?, next()?, next()?);
                self.unflatten(n, m, &xs)
            }
            ArrayFn::Concat => {
                let (xs, ys) = (next()?, next()?);
                self.concat(&xs, &ys)
            }
            ArrayFn::Reverse => self.reverse(&next()?),
            ArrayFn::Rotate => {
                let (r, xs) = (next()?, next()?);
                self.rotate(r, &xs)
            }
            ArrayFn::Length => self.length(&next()?),
            ArrayFn::Copy => self.copy(&next()?),
        }
    }

    /// `reduce`, `reduce_comm` and `scan` as a `Screma` with one operator.
    fn reduce_or_scan(
        &mut self,
        f: ArrayFn,
        op: &LVal<'p>,
        ne: &LVal<'p>,
        xs: &LVal<'p>,
    ) -> Res<LVal<'p>> {
        let inputs = self.arrays(xs)?;
        let width = self.outer_size(&inputs)?;
        let types = self.row_types(&inputs);
        let lambda = self.operator_lambda(op, width, ne, &types)?;
        let neutral = self.neutral(ne)?;
        let params: Vec<VarId> = types.iter().map(|t| self.new_var("x", t.clone())).collect();
        let map = Lambda {
            body: Self::identity(&params),
            params,
            ret: types.clone(),
        };
        let (scans, reds, result_types) = if f == ArrayFn::Scan {
            let arrays = types.iter().map(|t| t.array_of(width)).collect();
            (vec![ScanOp { lambda, neutral }], vec![], arrays)
        } else {
            let red = RedOp {
                lambda,
                neutral,
                commutative: f == ArrayFn::ReduceComm,
            };
            (vec![], vec![red], types.clone())
        };
        let results = self.emit_soac(
            result_types,
            Soac::Screma {
                width,
                inputs,
                map,
                scans,
                reds,
            },
        );
        Ok(Self::rebuild(ne, &mut results.into_iter()))
    }

    /// `hist op ne k is vs`: `reduce_by_index` into `k` copies of `ne`.
    fn hist(
        &mut self,
        op: &LVal<'p>,
        ne: &LVal<'p>,
        k: LVal<'p>,
        is: &LVal<'p>,
        vs: &LVal<'p>,
    ) -> Res<LVal<'p>> {
        let LVal::Leaf(k) = k else {
            return Err(self.internal("histogram size is not a scalar"));
        };
        let k = self.as_i64(k);
        let dest = self.map_leaves(ne, &mut |this, se| {
            let ty = this.ty(se).array_of(k);
            Ok(this.bind("hist", ty, Exp::Replicate(k, se)))
        })?;
        self.reduce_by_index(dest, op, ne, is, vs)
    }

    /// `zip` and `zipK`: the arrays themselves (an array of tuples is a tuple of arrays), once
    /// their lengths are checked equal.
    fn zip(&mut self, k: u8, xss: Vec<LVal<'p>>) -> Res<LVal<'p>> {
        let first = self.arrays(&xss[0])?;
        let n = self.outer_size(&first)?;
        let refs: Vec<&LVal<'p>> = xss.iter().collect();
        self.same_lengths(&ArrayFn::Zip(k).name(), n, &refs)?;
        Ok(LVal::Tuple(xss))
    }

    fn map(&mut self, func: &LVal<'p>, xss: &[LVal<'p>], fname: &str) -> Res<LVal<'p>> {
        let mut inputs = Vec::new();
        let mut arg_types = Vec::new();
        for xs in xss {
            let arrays = self.arrays(xs)?;
            arg_types.push(self.row_types(&arrays));
            inputs.extend(arrays);
        }
        let width = self.outer_size(&inputs)?;
        let refs: Vec<&LVal<'p>> = xss.iter().collect();
        self.same_lengths(fname, width, &refs)?;
        let shapes: Vec<LVal<'p>> = xss.to_vec();
        let (map, value) = self.lambda(func, width, &shapes, &arg_types)?;
        let types = map.ret.iter().map(|t| t.array_of(width)).collect();
        let results = self.emit_soac(
            types,
            Soac::Screma {
                width,
                inputs,
                map,
                scans: vec![],
                reds: vec![],
            },
        );
        Ok(Self::rebuild(&value, &mut results.into_iter()))
    }

    fn scatter(
        &mut self,
        dest: &LVal<'p>,
        dests: Vec<VarId>,
        is: &LVal<'p>,
        vs: &LVal<'p>,
    ) -> Res<LVal<'p>> {
        let index_arrays = self.arrays(is)?;
        let value_arrays = self.arrays(vs)?;
        let width = self.outer_size(&index_arrays)?;
        self.same_lengths(&ArrayFn::Scatter.name(), width, &[vs])?;
        let i = self.new_var("i", I64);
        let params_v: Vec<VarId> = self
            .row_types(&value_arrays)
            .into_iter()
            .map(|t| self.new_var("v", t))
            .collect();
        let mut result = Vec::new();
        let mut ret = Vec::new();
        for p in &params_v {
            result.push(SubExp::Var(i));
            result.push(SubExp::Var(*p));
            ret.push(I64);
            ret.push(self.function.ty(*p).clone());
        }
        let mut params = vec![i];
        params.extend(&params_v);
        let mut inputs = index_arrays;
        inputs.extend(value_arrays);
        let map = Lambda {
            params,
            body: ogham_ir::Body {
                stmts: vec![],
                result,
            },
            ret,
        };
        let types = dests.iter().map(|d| self.function.ty(*d).clone()).collect();
        let results = self.emit_soac(
            types,
            Soac::Scatter {
                width,
                inputs,
                map,
                dests,
            },
        );
        Ok(Self::rebuild(dest, &mut results.into_iter()))
    }

    fn reduce_by_index(
        &mut self,
        dest: LVal<'p>,
        op: &LVal<'p>,
        ne: &LVal<'p>,
        is: &LVal<'p>,
        vs: &LVal<'p>,
    ) -> Res<LVal<'p>> {
        let dests = self.arrays(&dest)?;
        let index_arrays = self.arrays(is)?;
        let value_arrays = self.arrays(vs)?;
        let width = self.outer_size(&index_arrays)?;
        self.same_lengths(&ArrayFn::ReduceByIndex.name(), width, &[vs])?;
        let num_bins = self.outer_size(&dests)?;
        let types = self.row_types(&value_arrays);
        let lambda = self.operator_lambda(op, width, ne, &types)?;
        let i = self.new_var("i", I64);
        let params_v: Vec<VarId> = types.iter().map(|t| self.new_var("v", t.clone())).collect();
        let mut params = vec![i];
        params.extend(&params_v);
        let mut ret = vec![I64];
        ret.extend(types);
        let map = Lambda {
            body: Self::identity(&params),
            params,
            ret,
        };
        let mut inputs = index_arrays;
        inputs.extend(value_arrays);
        let result_types = dests.iter().map(|d| self.function.ty(*d).clone()).collect();
        let neutral = self.neutral(ne)?;
        let results = self.emit_soac(
            result_types,
            Soac::Hist {
                width,
                inputs,
                map,
                hists: vec![HistOp {
                    num_bins,
                    dests,
                    op: lambda,
                    neutral,
                }],
            },
        );
        Ok(Self::rebuild(&dest, &mut results.into_iter()))
    }

    /// `filter p xs` (or `filter (not . p) xs` when `negate`): the inclusive scan of 0/1 flags
    /// (the target positions; the last one is the count), then a scatter into a fresh array.
    /// Element `i` is kept when its position exceeds the one before it, so the flags themselves
    /// are never stored.
    fn filter(&mut self, p: &LVal<'p>, xs: &LVal<'p>, negate: bool) -> Res<LVal<'p>> {
        let inputs = self.arrays(xs)?;
        let width = self.outer_size(&inputs)?;
        let types = self.row_types(&inputs);
        let (pred, _) = self.lambda(
            p,
            width,
            std::slice::from_ref(xs),
            std::slice::from_ref(&types),
        )?;
        // Turn the predicate's bool into a 0/1 flag for the scan.
        let mut map = pred;
        let keep = map.body.result[0];
        let keep = if negate {
            let v = self.new_var("keep", Type::Prim(PrimType::Bool));
            map.body.stmts.push(ogham_ir::Stmt {
                pat: vec![v],
                exp: Exp::UnOp(UnOp::Not, keep),
                loc: self.loc,
            });
            SubExp::Var(v)
        } else {
            keep
        };
        let flag = self.new_var("flag", I64);
        map.body.stmts.push(ogham_ir::Stmt {
            pat: vec![flag],
            exp: Exp::Convert(PrimType::I64, keep),
            loc: self.loc,
        });
        map.body.result = vec![SubExp::Var(flag)];
        map.ret = vec![I64];
        let plus = self.plus_lambda();
        let zero = SubExp::i64(0);
        let offsets = self.emit_soac(
            vec![I64.array_of(width)],
            Soac::Screma {
                width,
                inputs: inputs.clone(),
                map,
                scans: vec![ScanOp {
                    lambda: plus,
                    neutral: vec![zero],
                }],
                reds: vec![],
            },
        )[0];
        let offsets_var = offsets.as_var().expect("a fresh variable");
        // The count: the last position, 0 when there are no elements.
        let count = self.inclusive_before("count", offsets_var, width)?;
        // Destinations: arrays of `count` rows of zeros.
        let mut dests = Vec::new();
        for t in &types {
            let zero = SubExp::Const(Const::zero(t.elem()));
            let mut value = zero;
            let mut row_type = Type::Prim(t.elem());
            for d in t.shape().iter().rev() {
                row_type = row_type.array_of(*d);
                value = self.bind("zeros", row_type.clone(), Exp::Replicate(*d, value));
            }
            let ty = t.array_of(count);
            let dest = self.bind("dest", ty, Exp::Replicate(count, value));
            dests.push(dest.as_var().expect("a fresh variable"));
        }
        // Each kept row goes to its position - 1; the others to -1 (ignored).
        let o = self.new_var("o", I64);
        let i = self.new_var("i", I64);
        let rows: Vec<VarId> = types.iter().map(|t| self.new_var("x", t.clone())).collect();
        let (idx, stmts) = self.nested(|l| {
            let before = l.inclusive_before("before", offsets_var, SubExp::Var(i))?;
            let kept = l.binop(BinOp::Gt, SubExp::Var(o), before);
            let f = l.bind("f", I64, Exp::Convert(PrimType::I64, kept));
            let of = l.binop(BinOp::Mul, SubExp::Var(o), f);
            Ok(l.binop(BinOp::Sub, of, SubExp::i64(1)))
        })?;
        let mut result = Vec::new();
        let mut ret = Vec::new();
        for (r, t) in rows.iter().zip(&types) {
            result.push(idx);
            result.push(SubExp::Var(*r));
            ret.push(I64);
            ret.push(t.clone());
        }
        let mut params = vec![o, i];
        params.extend(&rows);
        let indices = self.bind("iota", I64.array_of(width), Exp::Iota(width));
        let mut scatter_inputs = vec![offsets_var, indices.as_var().expect("a fresh variable")];
        scatter_inputs.extend(inputs);
        let result_types = dests.iter().map(|d| self.function.ty(*d).clone()).collect();
        let results = self.emit_soac(
            result_types,
            Soac::Scatter {
                width,
                inputs: scatter_inputs,
                map: Lambda {
                    params,
                    body: ogham_ir::Body { stmts, result },
                    ret,
                },
                dests,
            },
        );
        Ok(Self::rebuild(xs, &mut results.into_iter()))
    }

    /// `offsets[pos - 1]`, or 0 when `pos` is 0: the inclusive prefix sum of the elements before
    /// position `pos`, bound to a variable called `name`.
    fn inclusive_before(&mut self, name: &str, offsets: VarId, pos: SubExp) -> Res<SubExp> {
        let zero = SubExp::i64(0);
        let first = self.binop(BinOp::Eq, pos, zero);
        let (before, before_stmts) = self.nested(|l| {
            let j = l.binop(BinOp::Sub, pos, SubExp::i64(1));
            Ok(l.bind("prev", I64, Exp::Index(offsets, vec![DimIndex::Fix(j)])))
        })?;
        Ok(self.bind(
            name,
            I64,
            Exp::If {
                cond: first,
                then_body: ogham_ir::Body {
                    stmts: vec![],
                    result: vec![zero],
                },
                else_body: ogham_ir::Body {
                    stmts: before_stmts,
                    result: vec![before],
                },
                ret: vec![I64],
            },
        ))
    }

    /// `\a b -> a + b` on `i64`.
    fn plus_lambda(&mut self) -> Lambda {
        let a = self.new_var("a", I64);
        let b = self.new_var("b", I64);
        let s = self.new_var("s", I64);
        Lambda {
            params: vec![a, b],
            body: ogham_ir::Body {
                stmts: vec![ogham_ir::Stmt {
                    pat: vec![s],
                    exp: Exp::BinOp(BinOp::Add, SubExp::Var(a), SubExp::Var(b)),
                    loc: self.loc,
                }],
                result: vec![SubExp::Var(s)],
            },
            ret: vec![I64],
        }
    }
}
