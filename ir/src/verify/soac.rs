//! The typing rules of SOACs and kernels: lambdas against their inputs, scan, reduce and
//! histogram operators against their neutral elements, and the shapes of what a SOAC or a
//! segmented kernel produces, and that a kernel's plans name statements of its body.
//!
//! Invariants: a lambda or kernel body is a new consumption frame (it may consume only what it
//! binds), entered and left here around the body's check.

use super::Checker;
use crate::kir::{SegKind, SegOp};
use crate::print::print_subexp;
use crate::traverse::{Subst, for_each_stmt};
use crate::types::PrimType;
use crate::{Form, HistOp, Lambda, RedOp, ScanOp, Soac, SubExp, Type, VarId};
use std::collections::BTreeSet;

impl<'a, F: Form> Checker<'a, F> {
    /// Checks a lambda whose parameters receive values of types `args` (compared leniently);
    /// it may not consume variables bound outside it.
    fn lambda(&mut self, what: &str, lambda: &'a Lambda, args: &[Type]) {
        for t in &lambda.ret {
            self.check_type_dims(t, &format!("the result type of {what}"));
        }
        if lambda.params.len() != args.len() {
            self.error(format!(
                "{what} takes {} parameters, expected {}",
                lambda.params.len(),
                args.len()
            ));
        }
        let mark = self.scope.len();
        self.frame += 1;
        for (&p, arg) in lambda.params.iter().zip(args) {
            self.bind(p);
            if self.known(p) {
                let name = format!("parameter {} of {what}", self.name(p));
                self.expect_fits(&name, self.f.ty(p), arg, true);
            }
        }
        for &p in lambda.params.iter().skip(args.len()) {
            self.bind(p);
        }
        self.body_against(what, &lambda.body, &lambda.ret, &Subst::new());
        self.frame -= 1;
        self.leave_scope(mark);
    }

    /// Checks an associative operator of `k` values: `2k` parameters, `k` results, `k` neutral
    /// elements of those types; returns the operator's element types.
    fn operator(&mut self, what: &str, lambda: &'a Lambda, neutral: &[SubExp]) -> Vec<Type> {
        let k = lambda.ret.len();
        let elems = lambda.ret.clone();
        let args: Vec<Type> = elems.iter().chain(&elems).cloned().collect();
        self.lambda(what, lambda, &args);
        if neutral.len() != k {
            self.error(format!(
                "{what} has {} neutral elements for {k} values",
                neutral.len()
            ));
        }
        for (i, (&ne, t)) in neutral.iter().zip(&elems).enumerate() {
            if let Some(nt) = self.use_subexp(ne) {
                self.expect_fits(&format!("neutral element {i} of {what}"), t, &nt, true);
            }
        }
        elems
    }

    fn scan_ops(&mut self, scans: &'a [ScanOp]) -> Vec<Type> {
        let mut elems = Vec::new();
        for (i, op) in scans.iter().enumerate() {
            elems.extend(self.operator(&format!("scan {i}"), &op.lambda, &op.neutral));
        }
        elems
    }

    fn red_ops(&mut self, reds: &'a [RedOp]) -> Vec<Type> {
        let mut elems = Vec::new();
        for (i, op) in reds.iter().enumerate() {
            elems.extend(self.operator(&format!("reduction {i}"), &op.lambda, &op.neutral));
        }
        elems
    }

    /// Checks histogram operators and consumes their destinations; returns the values the map
    /// lambda (or kernel body) must produce for them (a bin, then each histogram's values) and
    /// the destinations' types.
    fn hist_ops(&mut self, hists: &'a [HistOp]) -> (Vec<Type>, Vec<Type>) {
        let (mut fed, mut dests) = (vec![], vec![]);
        for (i, op) in hists.iter().enumerate() {
            let what = format!("histogram {i}");
            self.expect_prim(op.num_bins, PrimType::I64, "bin count");
            let elems = self.operator(&what, &op.op, &op.neutral);
            if op.dests.len() != elems.len() {
                self.error(format!(
                    "{what} has {} destinations for {} values",
                    op.dests.len(),
                    elems.len()
                ));
            }
            fed.push(Type::Prim(PrimType::I64));
            fed.extend(elems.iter().cloned());
            for (&d, elem) in op.dests.iter().zip(&elems) {
                if let Some(t) = self.use_array(d, "histogram destination") {
                    let expected = elem.array_of(op.num_bins);
                    let last_rows = Type::with_shape(
                        t.elem(),
                        t.shape()[t.rank().saturating_sub(expected.rank())..].to_vec(),
                    );
                    self.expect_fits(
                        &format!("destination of {what}"),
                        &expected,
                        &last_rows,
                        true,
                    );
                    dests.push(t);
                }
            }
        }
        for op in hists {
            for &d in &op.dests {
                self.consume(d);
            }
        }
        (fed, dests)
    }

    /// The row types of SOAC inputs, whose outer size must be `width`.
    fn inputs(&mut self, width: SubExp, inputs: &[VarId]) -> Option<Vec<Type>> {
        self.expect_prim(width, PrimType::I64, "width");
        let mut rows = Vec::new();
        for &v in inputs {
            let t = self.use_array(v, "input")?;
            let outer = t.shape()[0];
            let both_const = matches!((outer, width), (SubExp::Const(_), SubExp::Const(_)));
            if !self.same(outer, width) && (both_const || self.exact) {
                self.error(format!(
                    "input {} has outer size {}, expected {}",
                    self.name(v),
                    print_subexp(self.f, outer),
                    print_subexp(self.f, width)
                ));
            }
            rows.push(t.row());
        }
        Some(rows)
    }

    /// Checks that `lambda.ret` starts with values of the types `fed`; returns the rest.
    fn fed_then_mapped(&mut self, what: &str, ret: &[Type], fed: &[Type]) -> Option<Vec<Type>> {
        if ret.len() < fed.len() {
            self.error(format!(
                "{what} returns {} values, expected at least {}",
                ret.len(),
                fed.len()
            ));
            return None;
        }
        for (i, (t, f)) in ret.iter().zip(fed).enumerate() {
            self.expect_fits(&format!("result {i} of {what}"), f, t, true);
        }
        Some(ret[fed.len()..].to_vec())
    }

    pub(super) fn soac(&mut self, soac: &'a Soac) -> Option<Vec<Type>> {
        let width = soac.width();
        let rows = self.inputs(width, soac.inputs())?;
        let map = soac.map_lambda();
        self.lambda("the map lambda", map, &rows);
        match soac {
            Soac::Screma { scans, reds, .. } => {
                let scanned = self.scan_ops(scans);
                let reduced = self.red_ops(reds);
                let fed: Vec<Type> = scanned.iter().chain(&reduced).cloned().collect();
                let mapped = self.fed_then_mapped("the map lambda", &map.ret, &fed)?;
                let arrays = |ts: &[Type]| ts.iter().map(|t| t.array_of(width)).collect::<Vec<_>>();
                let mut out = arrays(&scanned);
                out.extend(reduced);
                out.extend(arrays(&mapped));
                Some(out)
            }
            Soac::Scatter { dests, .. } => {
                if map.ret.len() != 2 * dests.len() {
                    self.error(format!(
                        "the map lambda returns {} values for {} destinations",
                        map.ret.len(),
                        dests.len()
                    ));
                }
                let mut out = Vec::new();
                for (i, &d) in dests.iter().enumerate() {
                    let t = self.use_array(d, "scatter destination")?;
                    if let Some([index, value]) = map.ret.get(2 * i..2 * i + 2) {
                        let what = format!("index for destination {i}");
                        self.expect_fits(&what, &Type::Prim(PrimType::I64), index, false);
                        let what = format!("value for destination {i}");
                        self.expect_fits(&what, &t.row(), value, true);
                    }
                    out.push(t);
                }
                for &d in dests {
                    self.consume(d);
                }
                Some(out)
            }
            Soac::Hist { hists, .. } => {
                let (fed, dests) = self.hist_ops(hists);
                let rest = self.fed_then_mapped("the map lambda", &map.ret, &fed)?;
                if !rest.is_empty() {
                    self.error("the map lambda returns values no histogram takes".to_string());
                }
                Some(dests)
            }
        }
    }

    /// Every plan of `seg` names a statement of its body by the statement's first bound
    /// variable.
    fn plans(&mut self, seg: &SegOp) {
        let mut firsts = BTreeSet::new();
        for_each_stmt(&seg.body, &mut |s| firsts.extend(s.pat.first().copied()));
        for (v, plan) in &seg.plans {
            if !firsts.contains(v) {
                self.error(format!(
                    "plan @{} on {}, which no statement of the kernel binds first",
                    plan.name(),
                    self.name(*v)
                ));
            }
        }
    }

    pub(super) fn seg(&mut self, seg: &'a SegOp) -> Option<Vec<Type>> {
        let extents: Vec<SubExp> = seg.space.iter().map(|&(_, e)| e).collect();
        for &e in &extents {
            self.expect_prim(e, PrimType::I64, "space extent");
        }
        if extents.is_empty() {
            self.error("a kernel with an empty space".to_string());
            return None;
        }
        for t in &seg.ret {
            self.check_type_dims(t, "the kernel's result type");
        }
        let (fed, dests) = match &seg.kind {
            SegKind::Map => (vec![], vec![]),
            SegKind::Red(reds) => (self.red_ops(reds), vec![]),
            SegKind::Scan(scans) => (self.scan_ops(scans), vec![]),
            SegKind::Hist(hists) => self.hist_ops(hists),
        };
        let mark = self.scope.len();
        self.frame += 1;
        for &(v, _) in &seg.space {
            self.bind(v);
            if self.known(v) && *self.f.ty(v) != Type::Prim(PrimType::I64) {
                self.error(format!("space index {} is not an i64", self.name(v)));
            }
        }
        self.body_against("the kernel body", &seg.body, &seg.ret, &Subst::new());
        self.plans(seg);
        self.frame -= 1;
        self.leave_scope(mark);
        let mapped = self.fed_then_mapped("the kernel body", &seg.ret, &fed)?;
        let over = |dims: &[SubExp], t: &Type| {
            let mut shape = dims.to_vec();
            shape.extend_from_slice(t.shape());
            Type::with_shape(t.elem(), shape)
        };
        let segments = &extents[..extents.len() - 1];
        Some(match &seg.kind {
            SegKind::Map | SegKind::Scan(_) => seg.ret.iter().map(|t| over(&extents, t)).collect(),
            SegKind::Red(_) => fed
                .iter()
                .map(|t| over(segments, t))
                .chain(mapped.iter().map(|t| over(&extents, t)))
                .collect(),
            SegKind::Hist(_) => {
                if !mapped.is_empty() {
                    self.error("the kernel body returns values no histogram takes".to_string());
                }
                dests
            }
        })
    }
}
