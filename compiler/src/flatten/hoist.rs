//! Hoisting out of a distributed map: code that is the same at every point of the nest and
//! cannot fail (sizes, `iota`, `replicate`, `transpose` of host arrays) moves to the host
//! before the kernels; cheap scalars are recomputed by each kernel that needs them.
//!
//! Invariants: only statements that cannot fail are hoisted, so hoisting never makes a program
//! fail that would not have; an `iota` or `replicate` of an inner width counts as infallible
//! only when that width is among [`Flattener::assumable`] (the distributed version checks it).

use super::nest::Nest;
use super::{Flattener, stmt, updates_in_place};
use ogham_ir::kir::HostStmt;
use ogham_ir::op::BinOp;
use ogham_ir::traverse::free_vars_stmt;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Const, Exp, Stmt, SubExp};

impl Flattener<'_> {
    /// Moves the statements of `body` that compute the same value at every point of the nest
    /// (and cannot fail, so that running them once even for an empty nest is safe) to the
    /// host, before the kernels; returns the rest. Expanding them instead would compute and
    /// store one copy per point. Arrays stay per point when the body updates arrays in place
    /// (each point may need its own copy).
    pub(super) fn hoist_invariant(
        &mut self,
        nest: &mut Nest,
        body: &Body,
        out: &mut Vec<HostStmt>,
    ) -> Body {
        let updates = updates_in_place(body);
        let widths = self.assumable.clone();
        let mut rest = Vec::new();
        for s in &body.stmts {
            let invariant = free_vars_stmt(&self.f, s)
                .into_iter()
                .all(|v| !nest.is_variant(SubExp::Var(v)));
            let shared = !updates || s.pat.iter().all(|&v| self.f.ty(v).rank() == 0);
            // What cannot fail is flat, so it is host code as it is.
            let hoisted = (invariant && shared && self.cannot_fail(nest, &widths, &s.exp))
                .then(|| s.exp.clone().flat().ok())
                .flatten();
            if let Some(exp) = hoisted {
                if let Exp::Iota(size) | Exp::Replicate(size, _) = s.exp
                    && !self.is_size(nest, size)
                    && !self.assumed.contains(&size)
                {
                    self.assumed.push(size);
                }
                out.push(stmt(s.pat.clone(), exp, s.loc));
                s.pat.iter().for_each(|&v| nest.hoist(v));
            } else {
                rest.push(s.clone());
            }
        }
        Body {
            stmts: rest,
            result: body.result.clone(),
        }
    }

    /// Whether `s` binds one scalar by an expression that cannot fail (cheaper to compute again
    /// in every kernel that needs it than to store per point).
    pub(super) fn is_cheap_scalar(&self, nest: &Nest, s: &Stmt) -> bool {
        matches!(s.pat[..], [v] if self.f.ty(v).rank() == 0)
            && !matches!(s.exp, Exp::Iota(_) | Exp::Replicate(..) | Exp::ArrayLit(..))
            && self.cannot_fail(nest, &[], &s.exp)
    }

    /// Whether evaluating `exp` in the nest can neither fail nor run long (no checks, no
    /// division, no nested code, no array of a size that might be invalid; `sizes` may be
    /// assumed to be valid sizes).
    fn cannot_fail(&self, nest: &Nest, sizes: &[SubExp], exp: &Exp) -> bool {
        match exp {
            Exp::SubExp(_)
            | Exp::UnOp(..)
            | Exp::Convert(..)
            | Exp::Math(..)
            | Exp::Rearrange(..)
            | Exp::ArrayLit(..) => true,
            Exp::Iota(size) | Exp::Replicate(size, _) => {
                sizes.contains(size) || self.is_size(nest, *size)
            }
            Exp::BinOp(op, a, _) => {
                matches!(self.f.subexp_type(*a).elem(), PrimType::F32 | PrimType::F64)
                    || !matches!(
                        op,
                        BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow
                    )
            }
            _ => false,
        }
    }

    /// Whether `se` is known to be a valid size even when the nest is empty: a constant size,
    /// the outer width, or a dimension of a function parameter or of a row of the nest's
    /// inputs. (The width of an inner level is the size of an array the outer level computes,
    /// checked only when the outer level has points.)
    fn is_size(&self, nest: &Nest, se: SubExp) -> bool {
        let Some(v) = se.as_var() else {
            return matches!(se, SubExp::Const(Const::I64(n)) if ogham_ir::sizes::count(n).is_ok());
        };
        let params = self.f.params.iter().map(|p| p.var);
        nest.widths().first() == Some(&se)
            || params
                .chain(nest.row_params())
                .any(|p| self.f.ty(p).shape().contains(&SubExp::Var(v)))
    }
}
