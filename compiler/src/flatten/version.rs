//! Multi-versioning of a host-level `map` with inner parallelism (the module header's
//! "Multi-versioning"): the Thread-level, distributed and Block-level versions behind the
//! `suff_outer_par_K` and `suff_intra_par_K` thresholds, and the run-time guards the
//! distributed version needs (a non-empty map, valid inner widths).
//!
//! Invariants: each version gets its own copy of the map with fresh variables, so every
//! variable stays bound once; thresholds are numbered in program order by [`State::versioned`].

use super::nest::{Irregular, Nest};
use super::{
    DEFAULT_BLOCK_PAR, DEFAULT_INTRA_PAR, DEFAULT_OUTER_PAR, Distributed, Flattener, rename, stmt,
    vars,
};
use ogham_ir::kir::{
    HostBody, HostExp, HostOp, HostStmt, SegLevel, Threshold, ThresholdId, ThresholdKind,
};
use ogham_ir::math::MathFn;
use ogham_ir::op::BinOp;
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Exp, Lambda, Soac, Stmt, SubExp, Type, VarId};

impl Flattener<'_> {
    /// `let pat = map f xs` with inner parallelism in `f`: the three versions of the module
    /// header behind thresholds.
    pub(super) fn versioned_map(&mut self, s: &Stmt, out: &mut Vec<HostStmt>) {
        let k = self.state.versioned;
        self.state.versioned += 1;
        let Exp::Soac(Soac::Screma { width, .. }) = &s.exp else {
            unreachable!("versioned_map on a non-map")
        };
        let width = *width;
        let name = self.f.name.clone();
        let outer = self.threshold(
            ThresholdId {
                kind: ThresholdKind::SuffOuterPar,
                map: k,
            },
            DEFAULT_OUTER_PAR,
            format!(
                "{name}: map {k}: the outer width from which one thread per outer element runs \
                 the whole body sequentially"
            ),
            width,
            s.loc,
            out,
        );
        let ret: Vec<Type> = s.pat.iter().map(|&p| self.f.ty(p).clone()).collect();
        let thread = self.map_version(s.clone(), SegLevel::Thread, false);
        let block = self.block_version(s, k);

        let mut flat_stmts = Vec::new();
        let vars_before = self.f.vars.len();
        let flat = self.distributed_version(s, &mut flat_stmts);
        let otherwise = match flat {
            Ok(Distributed {
                result: flat_result,
                widths: inner_widths,
                assumed,
            }) => {
                let mut stmts = Vec::new();
                let inner_size = self.maximum(&inner_widths, s.loc, &mut stmts);
                let intra = self.threshold(
                    ThresholdId {
                        kind: ThresholdKind::SuffIntraPar,
                        map: k,
                    },
                    DEFAULT_INTRA_PAR,
                    format!(
                        "{name}: map {k}: the inner parallelism per outer element from which the \
                         distributed kernels run rather than one block per outer element"
                    ),
                    inner_size,
                    s.loc,
                    &mut stmts,
                );
                let intra = self.valid_sizes(intra, width, &assumed, s.loc, &mut stmts);
                stmts.push(stmt(
                    self.fresh_pattern(&s.pat),
                    Exp::If {
                        cond: intra,
                        then_body: Body {
                            stmts: flat_stmts,
                            result: flat_result,
                        },
                        else_body: block,
                        ret: ret.clone(),
                    },
                    s.loc,
                ));
                let result = stmts.last().map(|st| vars(&st.pat)).unwrap_or_default();
                Body { stmts, result }
            }
            Err(Irregular) => {
                self.forget_vars_from(vars_before);
                block
            }
        };
        out.push(stmt(
            s.pat.clone(),
            Exp::If {
                cond: outer,
                then_body: thread,
                else_body: otherwise,
                ret,
            },
            s.loc,
        ));
    }

    /// The nest of host-level map statement `s` (one level, over the map's width), and the
    /// map's lambda.
    fn map_nest<'s>(&self, s: &'s Stmt) -> (Nest, &'s Lambda) {
        let Exp::Soac(Soac::Screma {
            width, inputs, map, ..
        }) = &s.exp
        else {
            unreachable!("a host-level map statement is a map")
        };
        (
            self.host_nest(s).with_level(*width, &map.params, inputs),
            map,
        )
    }

    /// The Block-level version of map statement `s` (number `k`): one block per element of a
    /// fresh copy. When the map's body is a nest of maps with parallel code inside
    /// ([`Flattener::block_nest`]), a second copy runs one block per element of the nest, and
    /// threshold `suff_block_par_K` on the first inner map's width chooses: from that width on,
    /// one block per element.
    fn block_version(&mut self, s: &Stmt, k: u32) -> HostBody {
        let copy = rename::freshen_stmt(&mut self.f, s);
        let (inner, map) = self.map_nest(&copy);
        let (nest, _) = self.block_nest(inner.clone(), map.body.clone());
        if nest.depth() == inner.depth() {
            return self.map_version(copy, SegLevel::Block, false);
        }
        let width = nest.widths()[inner.depth()];
        let mut stmts = Vec::new();
        let name = self.f.name.clone();
        let per_element = self.threshold(
            ThresholdId {
                kind: ThresholdKind::SuffBlockPar,
                map: k,
            },
            DEFAULT_BLOCK_PAR,
            format!(
                "{name}: map {k}: the width of the inner map from which one block per outer \
                 element runs rather than one block per element of the nest of maps"
            ),
            width,
            s.loc,
            &mut stmts,
        );
        let per_element_body = self.map_version(copy, SegLevel::Block, false);
        let nested = rename::freshen_stmt(&mut self.f, s);
        let per_nest_body = self.map_version(nested, SegLevel::Block, true);
        let ret: Vec<Type> = s.pat.iter().map(|&p| self.f.ty(p).clone()).collect();
        stmts.push(stmt(
            self.fresh_pattern(&s.pat),
            Exp::If {
                cond: per_element,
                then_body: per_element_body,
                else_body: per_nest_body,
                ret,
            },
            s.loc,
        ));
        let result = stmts.last().map(|st| vars(&st.pat)).unwrap_or_default();
        Body { stmts, result }
    }

    /// One `SegMap` at `level` running the map's body (a copy no other version shares) per
    /// element, or, when `nested`, per element of the nest of maps the body starts with
    /// ([`Flattener::block_nest`]).
    fn map_version(&mut self, copy: Stmt, level: SegLevel, nested: bool) -> HostBody {
        let (mut inner, map) = self.map_nest(&copy);
        let mut body = map.body.clone();
        if nested {
            (inner, body) = self.block_nest(inner, body);
        }
        let mut stmts = Vec::new();
        let result = self
            .map_kernel(&inner, level, body, copy.loc, &mut stmts)
            .expect("a host-level map has no irregular size");
        Body {
            stmts,
            result: vars(&result),
        }
    }

    /// The space and body of a Block-level version: while the body is one `map` of a width
    /// the same at every point, whose result is the body's, and whose own body holds inner
    /// parallelism, that map's level joins the nest (one block per element of `[n][m]` rather
    /// than of `[n]`), so that the block's threads run the parallel code inside the inner map
    /// (TWDTW's wavefront: one block per pair, its threads on a diagonal) instead of one inner
    /// element each.
    fn block_nest(&self, mut nest: Nest, mut body: Body) -> (Nest, Body) {
        while let [s] = &body.stmts[..] {
            let Exp::Soac(Soac::Screma {
                width,
                inputs,
                map,
                scans,
                reds,
            }) = &s.exp
            else {
                break;
            };
            if !scans.is_empty()
                || !reds.is_empty()
                || body.result != vars(&s.pat)
                || nest.is_variant(*width)
            {
                break;
            }
            let deeper = nest.with_level(*width, &map.params, inputs);
            if !self.has_parallelism(&deeper, &map.body) {
                break;
            }
            (nest, body) = (deeper, map.body.clone());
        }
        (nest, body)
    }

    /// The distributed kernels of a fresh copy of the map.
    fn distributed_version(
        &mut self,
        s: &Stmt,
        out: &mut Vec<HostStmt>,
    ) -> Result<Distributed, Irregular> {
        let copy = rename::freshen_stmt(&mut self.f, s);
        let (inner, map) = self.map_nest(&copy);
        let widths = self.inner_widths(&inner, &map.body);
        self.assumable = widths.clone();
        let result = self.distribute(&inner, &map.body, copy.loc, out);
        self.assumable.clear();
        let assumed = std::mem::take(&mut self.assumed);
        Ok(Distributed {
            result: vars(&result?),
            widths,
            assumed,
        })
    }

    /// `cond`, and when hoisted code assumes the inner widths `assumed` to be valid sizes, also
    /// that they are (`0 <= w <= MAX_ELEMS`) and that the map (of width `width`) is not empty:
    /// the interpreter checks them at the map's first point only.
    fn valid_sizes(
        &mut self,
        cond: SubExp,
        width: SubExp,
        assumed: &[SubExp],
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> SubExp {
        if assumed.is_empty() {
            return cond;
        }
        let max = SubExp::i64(ogham_ir::sizes::MAX_ELEMS as i64);
        let mut tests = vec![(BinOp::Ne, width, SubExp::i64(0))];
        for &w in assumed {
            tests.push((BinOp::Ge, w, SubExp::i64(0)));
            tests.push((BinOp::Le, w, max));
        }
        tests.into_iter().fold(cond, |acc, (op, a, b)| {
            let test = self.bool_stmt(Exp::BinOp(op, a, b), loc, out);
            self.bool_stmt(Exp::BinOp(BinOp::BitAnd, acc, test), loc, out)
        })
    }

    /// Binds the `bool` `exp` to a fresh variable.
    fn bool_stmt(&mut self, exp: HostExp, loc: Span, out: &mut Vec<HostStmt>) -> SubExp {
        let v = self.f.new_var("valid", Type::Prim(PrimType::Bool));
        out.push(stmt(vec![v], exp, loc));
        SubExp::Var(v)
    }

    /// Undoes a failed attempt: drops the variables it added to the arena.
    fn forget_vars_from(&mut self, len: usize) {
        self.f.vars.truncate(len);
        self.claimed.retain(|v| v.index() < len);
    }

    /// Binds `size >= threshold` to a fresh `bool`, registering the threshold.
    fn threshold(
        &mut self,
        id: ThresholdId,
        default: i64,
        doc: String,
        size: SubExp,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> SubExp {
        let cond = self.f.new_var(id.to_string(), Type::Prim(PrimType::Bool));
        self.state.thresholds.push(Threshold { id, default, doc });
        out.push(stmt(
            vec![cond],
            Exp::Host(HostOp::Threshold { id, size }),
            loc,
        ));
        SubExp::Var(cond)
    }

    /// The largest of `sizes` (at least one), computed on the host.
    fn maximum(&mut self, sizes: &[SubExp], loc: Span, out: &mut Vec<HostStmt>) -> SubExp {
        let mut acc = sizes[0];
        for &size in &sizes[1..] {
            let max = self.f.new_var("inner_par", Type::Prim(PrimType::I64));
            out.push(stmt(
                vec![max],
                Exp::Math(MathFn::Max, PrimType::I64, vec![acc, size]),
                loc,
            ));
            acc = SubExp::Var(max);
        }
        acc
    }

    fn fresh_pattern(&mut self, pat: &[VarId]) -> Vec<VarId> {
        pat.iter()
            .map(|&p| {
                let info = self.f.var(p).clone();
                self.f.new_var(info.name, info.ty)
            })
            .collect()
    }
}
