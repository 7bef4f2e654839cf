//! Kernels from SOACs: a SOAC inside a nest (or at host level) becomes a `SegMap`, `SegRed`,
//! `SegScan` or `SegHist` over the nest's space extended by the SOAC's width; a scatter is a
//! histogram whose operator overwrites.
//!
//! Invariants: per-point variables a kernel needs are bound afresh in all but the first kernel
//! that binds them ([`Flattener::claimed`]); operators and neutral elements must be the same at
//! every point of the nest (otherwise the SOAC is [`Irregular`]).

use super::nest::{Irregular, Nest};
use super::{Flattener, consumed_in, rename, stmt, vars};
use ogham_ir::kir::{HostOp, HostStmt, PointLayout, SegKind, SegLevel, SegOp};
use ogham_ir::source::Span;
use ogham_ir::traverse::{Subst, free_vars_body, substitute_body};
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Const, Exp, HistOp, Lambda, RedOp, Soac, SubExp, Type, VarId};
use std::collections::HashMap;

impl Flattener<'_> {
    /// Kernels for `let pat = soac` at the nest's depth, binding `pat` (at depth 0) or arrays
    /// holding `pat` at every point (deeper).
    pub(super) fn soac(
        &mut self,
        nest: &mut Nest,
        pat: &[VarId],
        soac: &Soac,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<(), Irregular> {
        let map = soac.map_lambda();
        let inner = nest.with_level(soac.width(), &map.params, soac.inputs());
        let kind = match soac {
            Soac::Screma { scans, reds, .. }
                if scans.is_empty() && reds.is_empty() && nest.depth() == 0 =>
            {
                SegKind::Map
            }
            Soac::Screma { scans, reds, .. } if scans.is_empty() && reds.is_empty() => {
                let arrays = self.distribute(&inner, &map.body, loc, out)?;
                for (&p, array) in pat.iter().zip(arrays) {
                    nest.expand(p, array);
                }
                return Ok(());
            }
            Soac::Screma { scans, reds, .. } if reds.is_empty() => {
                self.check_operators(nest, scans.iter().map(|op| (&op.lambda, &op.neutral[..])))?;
                SegKind::Scan(scans.clone())
            }
            Soac::Screma { scans, reds, .. } if scans.is_empty() => {
                self.check_operators(nest, reds.iter().map(|op| (&op.lambda, &op.neutral[..])))?;
                SegKind::Red(reds.clone())
            }
            Soac::Screma { scans, reds, .. } => {
                return self.scan_then_reduce(nest, &inner, pat, map, scans, reds, loc, out);
            }
            Soac::Hist { hists, .. } => {
                let mut ops = Vec::new();
                for op in hists {
                    self.check_operators(nest, [(&op.op, &op.neutral[..])])?;
                    if nest.is_variant(op.num_bins) {
                        return Err(Irregular);
                    }
                    let dests = op
                        .dests
                        .iter()
                        .map(|&d| nest.expanded(d).ok_or(Irregular))
                        .collect::<Result<_, _>>()?;
                    ops.push(HistOp {
                        dests,
                        ..op.clone()
                    });
                }
                SegKind::Hist(ops)
            }
            Soac::Scatter { dests, .. } => {
                let mut ops = Vec::new();
                for &d in dests {
                    let dest = nest.expanded(d).ok_or(Irregular)?;
                    let row = self.f.ty(d).row();
                    if !nest.is_regular(&row) {
                        return Err(Irregular);
                    }
                    let num_bins = self.f.ty(d).shape()[0];
                    let neutral = self.zero(&row, loc, out);
                    ops.push(HistOp {
                        num_bins,
                        dests: vec![dest],
                        op: self.overwrite(&row),
                        neutral: vec![neutral],
                    });
                }
                SegKind::Hist(ops)
            }
        };
        let code = map.body.clone();
        let seg = self.kernel(&inner, SegLevel::Thread, kind, code, map.ret.clone())?;
        // At depth 0 the pattern is `pat` itself.
        let pat = self.expanded_pattern(nest, pat)?;
        out.push(stmt(pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));
        Ok(())
    }

    /// A `Screma` with scans and reductions: a `SegScan` that also returns the values fed to
    /// the reductions (as mapped arrays), then a `SegRed` over those.
    #[allow(clippy::too_many_arguments)]
    fn scan_then_reduce(
        &mut self,
        nest: &mut Nest,
        inner: &Nest,
        pat: &[VarId],
        map: &Lambda,
        scans: &[ogham_ir::ScanOp],
        reds: &[RedOp],
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<(), Irregular> {
        self.check_operators(nest, scans.iter().map(|op| (&op.lambda, &op.neutral[..])))?;
        self.check_operators(nest, reds.iter().map(|op| (&op.lambda, &op.neutral[..])))?;
        let scanned: usize = scans.iter().map(|op| op.neutral.len()).sum();
        let reduced: usize = reds.iter().map(|op| op.neutral.len()).sum();
        let kind = SegKind::Scan(scans.to_vec());
        let seg = self.kernel(
            inner,
            SegLevel::Thread,
            kind,
            map.body.clone(),
            map.ret.clone(),
        )?;
        let scan_pat = self.expanded_pattern(nest, &pat[..scanned])?;
        let mapped_pat = self.expanded_pattern(nest, &pat[scanned + reduced..])?;
        let widths = inner.widths();
        let fed: Vec<VarId> = map.ret[scanned..scanned + reduced]
            .iter()
            .map(|t| {
                let mut shape = widths.clone();
                shape.extend_from_slice(t.shape());
                self.f.new_var("fed", Type::with_shape(t.elem(), shape))
            })
            .collect();
        let mut seg_pat = scan_pat;
        seg_pat.extend(&fed);
        seg_pat.extend(mapped_pat);
        out.push(stmt(seg_pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));

        // The reduction reads the fed values back: they are per point of the inner nest.
        let mut over_fed = inner.clone();
        let elems: Vec<VarId> = map.ret[scanned..scanned + reduced]
            .iter()
            .map(|t| self.f.new_var("fed", t.clone()))
            .collect();
        for (&e, &array) in elems.iter().zip(&fed) {
            over_fed.expand(e, array);
        }
        let code = Body {
            stmts: vec![],
            result: vars(&elems),
        };
        let ret = map.ret[scanned..scanned + reduced].to_vec();
        let seg = self.kernel(
            &over_fed,
            SegLevel::Thread,
            SegKind::Red(reds.to_vec()),
            code,
            ret,
        )?;
        let red_pat = self.expanded_pattern(nest, &pat[scanned..scanned + reduced])?;
        out.push(stmt(red_pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));
        Ok(())
    }

    /// Operators and neutral elements must be the same at every point of the nest.
    fn check_operators<'l>(
        &self,
        nest: &Nest,
        ops: impl IntoIterator<Item = (&'l Lambda, &'l [SubExp])>,
    ) -> Result<(), Irregular> {
        for (lambda, neutral) in ops {
            let free = free_vars_body(&self.f, &lambda.body);
            if free
                .iter()
                .any(|&v| nest.is_variant(SubExp::Var(v)) && !lambda.params.contains(&v))
                || neutral.iter().any(|&ne| nest.is_variant(ne))
            {
                return Err(Irregular);
            }
        }
        Ok(())
    }

    /// The operator `\_ v -> v` on values of type `ty`: a scatter as a histogram.
    fn overwrite(&mut self, ty: &Type) -> Lambda {
        let old = self.f.new_var("old", ty.clone());
        let new = self.f.new_var("new", ty.clone());
        Lambda {
            params: vec![old, new],
            body: Body {
                stmts: vec![],
                result: vec![SubExp::Var(new)],
            },
            ret: vec![ty.clone()],
        }
    }

    /// A zero of type `ty` (for arrays, built on the host by `replicate`).
    fn zero(&mut self, ty: &Type, loc: Span, out: &mut Vec<HostStmt>) -> SubExp {
        let mut value = SubExp::Const(Const::zero(ty.elem()));
        let shape = ty.shape();
        for d in (0..shape.len()).rev() {
            let t = Type::with_shape(ty.elem(), shape[d..].to_vec());
            let array = self.f.new_var("zeros", t);
            out.push(stmt(vec![array], Exp::Replicate(shape[d], value), loc));
            value = SubExp::Var(array);
        }
        value
    }

    /// A `SegMap` at `level` over the nest's space running `code`; returns the arrays of its
    /// results over the space.
    pub(super) fn map_kernel(
        &mut self,
        nest: &Nest,
        level: SegLevel,
        code: Body,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<Vec<VarId>, Irregular> {
        let ret: Vec<Type> = code
            .result
            .iter()
            .map(|&se| self.f.subexp_type(se))
            .collect();
        let names: Vec<String> = code
            .result
            .iter()
            .map(|se| match se {
                SubExp::Var(v) => self.f.var(*v).name.clone(),
                SubExp::Const(_) => "const".to_string(),
            })
            .collect();
        let seg = self.kernel(nest, level, SegKind::Map, code, ret.clone())?;
        let widths = nest.widths();
        let arrays: Vec<VarId> = ret
            .iter()
            .zip(names)
            .map(|(t, name)| {
                let mut shape = widths.clone();
                shape.extend_from_slice(t.shape());
                self.f.new_var(name, Type::with_shape(t.elem(), shape))
            })
            .collect();
        out.push(stmt(
            arrays.clone(),
            Exp::Host(HostOp::Seg(Box::new(seg))),
            loc,
        ));
        Ok(arrays)
    }

    /// A kernel over the nest's space whose body binds the per-point variables `code` uses
    /// (by indexing, see [`Nest::resolve`]) and runs `code`.
    fn kernel(
        &mut self,
        nest: &Nest,
        level: SegLevel,
        kind: SegKind,
        mut code: Body,
        ret: Vec<Type>,
    ) -> Result<SegOp, Irregular> {
        if !ret.iter().all(|t| nest.is_regular(t)) {
            return Err(Irregular);
        }
        let widths = nest.widths();
        let indices: Vec<VarId> = widths
            .iter()
            .map(|_| self.f.new_var("gtid", Type::Prim(PrimType::I64)))
            .collect();
        // The code binds its own variables here: later kernels must bind fresh copies.
        let bound_here = rename::binders(&code.stmts);
        self.claimed.extend(bound_here.iter().copied());
        let mut memo = HashMap::new();
        let mut binds = Vec::new();
        for v in free_vars_body(&self.f, &code) {
            if nest.is_outer(v) {
                nest.resolve(
                    &mut self.f,
                    &mut self.claimed,
                    v,
                    &indices,
                    &mut memo,
                    &mut binds,
                )?;
            }
        }
        let subst: Subst = memo
            .into_iter()
            .filter(|&(v, se)| se != SubExp::Var(v))
            .collect();
        // A renamed variable must not occur in the types of the code's own variables.
        let renamed = |d: &SubExp| d.as_var().is_some_and(|v| subst.contains_key(&v));
        if bound_here
            .into_iter()
            .any(|b| self.f.ty(b).shape().iter().any(renamed))
        {
            return Err(Irregular);
        }
        substitute_body(&mut code, &subst);
        // A value read from a host array that the kernel updates in place is a copy: the
        // kernel must not consume (write into) memory bound outside it.
        let consumed = consumed_in(&self.f, &code);
        let mut stmts = Vec::with_capacity(binds.len() + code.stmts.len());
        for mut bind in binds {
            let v = bind.pat[0];
            if consumed.contains(&v) {
                let info = self.f.var(v).clone();
                let view = self.f.new_var(info.name, info.ty);
                bind.pat = vec![view];
                let loc = bind.loc;
                stmts.push(bind);
                stmts.push(stmt(vec![v], Exp::Copy(view), loc));
            } else {
                stmts.push(bind);
            }
        }
        stmts.append(&mut code.stmts);
        code.stmts = stmts;
        Ok(SegOp {
            level,
            space: indices.into_iter().zip(widths).collect(),
            kind,
            body: code,
            ret,
            layout: PointLayout::Contiguous,
            plans: Default::default(),
        })
    }

    /// Fresh arrays holding the variables `pat` at every point of the nest (recorded as their
    /// expansions); at depth 0, `pat` itself.
    pub(super) fn expanded_pattern(
        &mut self,
        nest: &mut Nest,
        pat: &[VarId],
    ) -> Result<Vec<VarId>, Irregular> {
        let arrays = self.expanded_vars(nest, pat)?;
        for (&p, &array) in pat.iter().zip(&arrays) {
            nest.expand(p, array);
        }
        Ok(arrays)
    }

    /// Fresh variables for `vs` with the nest's widths added to their types (at depth 0,
    /// `vs` themselves).
    pub(super) fn expanded_vars(
        &mut self,
        nest: &Nest,
        vs: &[VarId],
    ) -> Result<Vec<VarId>, Irregular> {
        if nest.depth() == 0 {
            return Ok(vs.to_vec());
        }
        let widths = nest.widths();
        vs.iter()
            .map(|&v| {
                let info = self.f.var(v).clone();
                if !nest.is_regular(&info.ty) {
                    return Err(Irregular);
                }
                let mut shape = widths.clone();
                shape.extend_from_slice(info.ty.shape());
                Ok(self
                    .f
                    .new_var(info.name, Type::with_shape(info.ty.elem(), shape)))
            })
            .collect()
    }
}
