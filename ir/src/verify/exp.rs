//! The typing rule of each non-SOAC expression of the core and kernel IR: given a statement,
//! checks its operands and returns the types it produces (`None` after an error already
//! reported, so that one mistake is not reported again downstream).
//!
//! Invariants: operands are used through [`Checker::use_subexp`] and friends, which report
//! unbound or consumed variables; consuming forms (`Update`) go through [`Checker::consume`].

use super::Checker;
use crate::kir::HostOp;
use crate::math::MathFn;
use crate::op::{BinOp, UnOp};
use crate::print::print_subexp;
use crate::traverse::Subst;
use crate::types::PrimType;
use crate::{Body, DimIndex, Exp, Form, Stmt, SubExp, Type, VarId};

impl<'a, F: Form> Checker<'a, F> {
    /// Checks the expression of `stmt`; returns the types it produces (`None` when they cannot
    /// be determined because of an error already reported).
    pub(super) fn exp<H: Form>(&mut self, stmt: &'a Stmt<H>) -> Option<Vec<Type>> {
        let one = |t: Type| Some(vec![t]);
        match &stmt.exp {
            Exp::SubExp(se) => one(self.use_subexp(*se)?),
            Exp::BinOp(op, a, b) => self.binop(*op, *a, *b),
            Exp::UnOp(op, a) => self.unop(*op, *a),
            Exp::Math(op, ty, args) => self.math(*op, *ty, args),
            Exp::Convert(to, a) => {
                let t = self.use_subexp(*a)?;
                if t.rank() != 0 {
                    self.error(format!("conversion of the array {}", self.show(&t)));
                }
                one(Type::Prim(*to))
            }
            Exp::Index(v, idx) => {
                let t = self.use_array(*v, "indexed value")?;
                one(self.slice_type(&t, idx)?)
            }
            Exp::Update(v, idx, value) => {
                let t = self.use_array(*v, "updated value")?;
                let slice = self.slice_type(&t, idx);
                // Sizes are checked at run time (a mismatch is the program's error, R0704).
                if let (Some(slice), Some(vt)) = (slice, self.use_subexp(*value))
                    && (slice.elem() != vt.elem() || slice.rank() != vt.rank())
                {
                    self.expect_fits("the new value", &slice, &vt, true);
                }
                self.consume(*v);
                one(t)
            }
            Exp::Iota(n) => {
                self.expect_prim(*n, PrimType::I64, "iota size");
                one(Type::Array {
                    elem: PrimType::I64,
                    shape: vec![*n],
                })
            }
            Exp::Replicate(n, v) => {
                self.expect_prim(*n, PrimType::I64, "replicate count");
                one(self.use_subexp(*v)?.array_of(*n))
            }
            Exp::ArrayLit(elems, elem_ty) => {
                self.check_type_dims(elem_ty, "the element type");
                for (i, &e) in elems.iter().enumerate() {
                    if let Some(t) = self.use_subexp(e) {
                        self.expect_fits(&format!("element {i}"), elem_ty, &t, true);
                    }
                }
                one(elem_ty.array_of(SubExp::i64(elems.len() as i64)))
            }
            Exp::Rearrange(v, perm) => self.rearrange(*v, perm),
            Exp::Reshape(v, shape) => {
                let t = self.use_array(*v, "reshaped value")?;
                for &d in shape {
                    self.expect_prim(d, PrimType::I64, "new dimension");
                }
                if shape.is_empty() {
                    self.error("reshape to no dimensions".to_string());
                    return None;
                }
                one(Type::with_shape(t.elem(), shape.clone()))
            }
            Exp::Concat(vs) => self.concat(stmt, vs),
            Exp::Copy(v) => one(self.use_array(*v, "copied value")?),
            Exp::Assert { cond, .. } => {
                self.expect_prim(*cond, PrimType::Bool, "assertion");
                Some(vec![])
            }
            Exp::Trace { value, .. } => {
                self.use_subexp(*value)?;
                Some(vec![])
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => self.if_(stmt, *cond, then_body, else_body, ret),
            Exp::Loop { params, form, body } => self.loop_(stmt, params, form, body),
            Exp::Soac(soac) => self.soac(soac),
            Exp::Host(host) => match host.host() {
                HostOp::Seg(seg) => self.seg(seg),
                HostOp::Threshold { id, size } => {
                    if !self.thresholds.contains(id) {
                        self.error(format!("threshold {id} is not declared"));
                    }
                    self.expect_prim(*size, PrimType::I64, "threshold size");
                    one(Type::Prim(PrimType::Bool))
                }
            },
        }
    }

    fn binop(&mut self, op: BinOp, a: SubExp, b: SubExp) -> Option<Vec<Type>> {
        let (ta, tb) = (self.use_subexp(a)?, self.use_subexp(b)?);
        if ta != tb || ta.rank() != 0 {
            self.error(format!(
                "operands of {} have types {} and {}",
                op.symbol(),
                self.show(&ta),
                self.show(&tb)
            ));
            return None;
        }
        match op.result_type(ta.elem()) {
            Some(t) => Some(vec![Type::Prim(t)]),
            None => {
                self.error(format!(
                    "operator {} does not apply to {}",
                    op.symbol(),
                    ta.elem()
                ));
                None
            }
        }
    }

    fn unop(&mut self, op: UnOp, a: SubExp) -> Option<Vec<Type>> {
        let t = self.use_subexp(a)?;
        let ok = t.rank() == 0 && op.applies_to(t.elem());
        if !ok {
            self.error(format!("unary {op:?} does not apply to {}", self.show(&t)));
            return None;
        }
        Some(vec![t])
    }

    fn rearrange(&mut self, v: VarId, perm: &[usize]) -> Option<Vec<Type>> {
        let t = self.use_array(v, "rearranged value")?;
        let mut sorted = perm.to_vec();
        sorted.sort_unstable();
        if sorted != (0..t.rank()).collect::<Vec<_>>() {
            self.error(format!(
                "{perm:?} is not a permutation of the {} dimensions",
                t.rank()
            ));
            return None;
        }
        let shape = perm.iter().map(|&d| t.shape()[d]).collect();
        Some(vec![Type::with_shape(t.elem(), shape)])
    }

    /// An `if`: the two branches are checked separately for consumption (what one consumes the
    /// other may use), then what either consumed is consumed.
    fn if_<H: Form>(
        &mut self,
        stmt: &'a Stmt<H>,
        cond: SubExp,
        then_body: &'a Body<H>,
        else_body: &'a Body<H>,
        ret: &[Type],
    ) -> Option<Vec<Type>> {
        self.expect_prim(cond, PrimType::Bool, "condition");
        // The declared types may refer to the pattern's existential sizes: compare the
        // branch results with them after substituting each branch's own results.
        let before = self.consumed.clone();
        let then_subst = self.result_subst(&stmt.pat, &then_body.result);
        self.body_against("the then branch", then_body, ret, &then_subst);
        let after_then = std::mem::replace(&mut self.consumed, before);
        let else_subst = self.result_subst(&stmt.pat, &else_body.result);
        self.body_against("the else branch", else_body, ret, &else_subst);
        self.consumed.extend(after_then);
        Some(ret.to_vec())
    }

    /// `pat[i] -> result[i]`, for comparing results with types that refer to the pattern.
    pub(super) fn result_subst(&self, pat: &[VarId], result: &[SubExp]) -> Subst {
        pat.iter().copied().zip(result.iter().copied()).collect()
    }

    fn math(&mut self, op: MathFn, ty: PrimType, args: &[SubExp]) -> Option<Vec<Type>> {
        if ty == PrimType::Bool || (op.float_only() && !ty.is_float()) {
            self.error(format!("{op:?} does not apply to {ty}"));
        }
        if args.len() != op.arity() {
            self.error(format!(
                "{op:?} takes {} arguments, given {}",
                op.arity(),
                args.len()
            ));
        }
        for &a in args {
            self.expect_prim(a, ty, "argument");
        }
        let result = if op.returns_bool() {
            PrimType::Bool
        } else {
            ty
        };
        Some(vec![Type::Prim(result)])
    }

    /// The type of `array[idx]`.
    fn slice_type(&mut self, array: &Type, idx: &[DimIndex]) -> Option<Type> {
        if idx.len() > array.rank() {
            self.error(format!(
                "{} indices into an array of rank {}",
                idx.len(),
                array.rank()
            ));
            return None;
        }
        let mut shape = Vec::new();
        for d in idx {
            match d {
                DimIndex::Fix(i) => self.expect_prim(*i, PrimType::I64, "index"),
                DimIndex::Slice { start, len, stride } => {
                    self.expect_prim(*start, PrimType::I64, "slice start");
                    self.expect_prim(*len, PrimType::I64, "slice length");
                    self.expect_prim(*stride, PrimType::I64, "slice stride");
                    shape.push(*len);
                }
            }
        }
        shape.extend_from_slice(&array.shape()[idx.len()..]);
        Some(Type::with_shape(array.elem(), shape))
    }

    fn concat<H: Form>(&mut self, stmt: &'a Stmt<H>, vs: &[VarId]) -> Option<Vec<Type>> {
        let mut types = Vec::new();
        for &v in vs {
            types.push(self.use_array(v, "concatenated value")?);
        }
        let Some(first) = types.first().cloned() else {
            self.error("concatenation of no arrays".to_string());
            return None;
        };
        for t in &types[1..] {
            self.expect_fits("a concatenated array's row", &first.row(), &t.row(), true);
        }
        // The outer size is the sum of the operands' sizes, which no single dimension denotes:
        // the pattern's outer dimension is taken as declared, and (exact) must be that sum.
        let outer = stmt
            .pat
            .first()
            .filter(|&&v| self.known(v))
            .and_then(|&v| self.f.ty(v).shape().first().copied())?;
        let parts: Vec<SubExp> = types.iter().map(|t| t.shape()[0]).collect();
        if self.exact && !self.is_sum(outer, &parts) {
            self.error(format!(
                "the concatenation's size {} is not the sum of its operands' sizes",
                print_subexp(self.f, outer)
            ));
        }
        Some(vec![first.row().array_of(outer)])
    }
}
