//! Lowering of the array construction and shape built-ins (`iota`, `replicate`, `length`,
//! `copy`, `transpose`, `flatten`, `unflatten`, `concat`, `reverse`, `rotate`) to the IR's array
//! operations, applied to each leaf array of a lowered value.
//!
//! Invariants: the arguments are lowered values whose leaves are array variables (a constant
//! leaf is an internal error); every result is bound to a fresh variable of the exact type the
//! operation produces.

use super::I64;
use crate::lower::{LVal, Lowerer, Res};
use ogham_ir::op::BinOp;
use ogham_ir::{DimIndex, Exp, SubExp, Type, VarId};

impl<'p> Lowerer<'p> {
    pub(super) fn iota(&mut self, n: LVal<'p>) -> Res<LVal<'p>> {
        let LVal::Leaf(n) = n else {
            return Err(self.internal("iota of a non-scalar"));
        };
        let n = self.as_i64(n);
        Ok(LVal::Leaf(self.bind("iota", I64.array_of(n), Exp::Iota(n))))
    }

    pub(super) fn replicate(&mut self, n: LVal<'p>, x: &LVal<'p>) -> Res<LVal<'p>> {
        let LVal::Leaf(n) = n else {
            return Err(self.internal("replicate count is not a scalar"));
        };
        let n = self.as_i64(n);
        self.map_leaves(x, &mut |this, se| {
            let ty = this.ty(se).array_of(n);
            Ok(this.bind("rep", ty, Exp::Replicate(n, se)))
        })
    }

    pub(super) fn length(&mut self, xs: &LVal<'p>) -> Res<LVal<'p>> {
        let arrays = self.arrays(xs)?;
        Ok(LVal::Leaf(self.outer_size(&arrays)?))
    }

    /// `copy x`: a fresh copy of each array of `x` (scalars are values already).
    pub(super) fn copy(&mut self, x: &LVal<'p>) -> Res<LVal<'p>> {
        self.map_leaves(x, &mut |this, se| match se {
            SubExp::Var(v) if this.function.ty(v).rank() > 0 => {
                let ty = this.function.ty(v).clone();
                Ok(this.bind("copy", ty, Exp::Copy(v)))
            }
            se => Ok(se),
        })
    }

    pub(super) fn transpose(&mut self, xs: &LVal<'p>) -> Res<LVal<'p>> {
        self.map_leaves(xs, &mut |this, se| {
            let v = se
                .as_var()
                .ok_or_else(|| this.internal("transpose of a constant"))?;
            let ty = this.function.ty(v).clone();
            let rank = ty.rank();
            let mut perm: Vec<usize> = (0..rank).collect();
            perm.swap(0, 1);
            let shape = perm.iter().map(|&d| ty.shape()[d]).collect();
            Ok(this.bind(
                "tr",
                Type::with_shape(ty.elem(), shape),
                Exp::Rearrange(v, perm),
            ))
        })
    }

    pub(super) fn flatten(&mut self, xs: &LVal<'p>) -> Res<LVal<'p>> {
        self.map_leaves(xs, &mut |this, se| {
            let v = se
                .as_var()
                .ok_or_else(|| this.internal("flatten of a constant"))?;
            let ty = this.function.ty(v).clone();
            let n = this.binop(BinOp::Mul, ty.shape()[0], ty.shape()[1]);
            let mut shape = vec![n];
            shape.extend_from_slice(&ty.shape()[2..]);
            Ok(this.bind(
                "flat",
                Type::with_shape(ty.elem(), shape.clone()),
                Exp::Reshape(v, shape),
            ))
        })
    }

    /// `unflatten n m xs`.
    pub(super) fn unflatten(&mut self, n: LVal<'p>, m: LVal<'p>, xs: &LVal<'p>) -> Res<LVal<'p>> {
        let (LVal::Leaf(n), LVal::Leaf(m)) = (n, m) else {
            return Err(self.internal("unflatten sizes are not scalars"));
        };
        let (n, m) = (self.as_i64(n), self.as_i64(m));
        self.map_leaves(xs, &mut |this, se| {
            let v = se
                .as_var()
                .ok_or_else(|| this.internal("unflatten of a constant"))?;
            let ty = this.function.ty(v).clone();
            let mut shape = vec![n, m];
            shape.extend_from_slice(&ty.shape()[1..]);
            Ok(this.bind(
                "unflat",
                Type::with_shape(ty.elem(), shape.clone()),
                Exp::Reshape(v, shape),
            ))
        })
    }

    /// `concat xs ys`, leaf by leaf.
    pub(super) fn concat(&mut self, xs: &LVal<'p>, ys: &LVal<'p>) -> Res<LVal<'p>> {
        let (a, b) = (self.arrays(xs)?, self.arrays(ys)?);
        let mut out = Vec::new();
        for (x, y) in a.into_iter().zip(b) {
            let (tx, ty) = (self.function.ty(x).clone(), self.function.ty(y).clone());
            let n = self.binop(BinOp::Add, tx.shape()[0], ty.shape()[0]);
            let mut shape = vec![n];
            shape.extend_from_slice(&tx.shape()[1..]);
            out.push(self.bind(
                "cat",
                Type::with_shape(tx.elem(), shape),
                Exp::Concat(vec![x, y]),
            ));
        }
        Ok(Self::rebuild(xs, &mut out.into_iter()))
    }

    /// `reverse xs`: a copy of the view with stride -1.
    pub(super) fn reverse(&mut self, xs: &LVal<'p>) -> Res<LVal<'p>> {
        self.map_leaves(xs, &mut |this, se| {
            let v = se
                .as_var()
                .ok_or_else(|| this.internal("reverse of a constant"))?;
            let ty = this.function.ty(v).clone();
            let n = ty.shape()[0];
            let last = this.binop(BinOp::Sub, n, SubExp::i64(1));
            let idx = vec![DimIndex::Slice {
                start: last,
                len: n,
                stride: SubExp::i64(-1),
            }];
            let view = this.bind("rev", ty.clone(), Exp::Index(v, idx));
            let view = view.as_var().expect("a fresh variable");
            Ok(this.bind("rev", ty, Exp::Copy(view)))
        })
    }
    pub(super) fn rotate(&mut self, r: LVal<'p>, xs: &LVal<'p>) -> Res<LVal<'p>> {
        let LVal::Leaf(r) = r else {
            return Err(self.internal("rotation is not a scalar"));
        };
        let r = self.as_i64(r);
        self.map_leaves(xs, &mut |this, se| this.rotate_array(r, se))
    }

    /// `rotate r xs`: `xs[s:] ++ xs[:s]` with `s = r mod n` (`xs` itself when empty).
    fn rotate_array(&mut self, r: SubExp, se: SubExp) -> Res<SubExp> {
        let v = se
            .as_var()
            .ok_or_else(|| self.internal("rotate of a constant"))?;
        let ty = self.function.ty(v).clone();
        let n = ty.shape()[0];
        let empty = self.binop(BinOp::Eq, n, SubExp::i64(0));
        let safe_n = self.bind(
            "n",
            I64,
            Exp::If {
                cond: empty,
                then_body: ogham_ir::Body {
                    stmts: vec![],
                    result: vec![SubExp::i64(1)],
                },
                else_body: ogham_ir::Body {
                    stmts: vec![],
                    result: vec![n],
                },
                ret: vec![I64],
            },
        );
        let s = self.binop(BinOp::Mod, r, safe_n);
        let rest = self.binop(BinOp::Sub, n, s);
        let tail = self.rows_of("tail", v, &ty, s, rest);
        let head = self.rows_of("head", v, &ty, SubExp::i64(0), s);
        let total = self.binop(BinOp::Add, rest, s);
        let out_ty = ty.row().array_of(total);
        let rotated = self.bind(
            "rot",
            out_ty,
            Exp::Concat(vec![
                tail.as_var().expect("var"),
                head.as_var().expect("var"),
            ]),
        );
        // The result has the input's size.
        let rv = rotated.as_var().expect("var");
        let shape = ty.shape().to_vec();
        Ok(self.bind("rot", ty, Exp::Reshape(rv, shape)))
    }

    /// `v[start:start+len]`: `len` rows, from row `start`, of array `v` of type `ty`.
    fn rows_of(&mut self, name: &str, v: VarId, ty: &Type, start: SubExp, len: SubExp) -> SubExp {
        let rows = vec![DimIndex::Slice {
            start,
            len,
            stride: SubExp::i64(1),
        }];
        self.bind(name, ty.row().array_of(len), Exp::Index(v, rows))
    }
}
