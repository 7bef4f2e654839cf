//! Distribution of a map's body (the module header's "Algorithm"): cutting the body into
//! groups of sequential statements and parallel ones, and turning each group into kernels over
//! the nest's space, expanding the values later groups use.
//!
//! Invariants: a group's statements keep their order; a value is expanded (one more dimension
//! per level) only when it is regular over the nest, otherwise distribution gives up with
//! [`Irregular`] and the map keeps its other versions.

use super::nest::{Irregular, Nest};
use super::{Flattener, Group, free_vars, vars};
use ogham_ir::kir::{HostStmt, SegLevel};
use ogham_ir::source::Span;
use ogham_ir::traverse::free_vars_stmt;
use ogham_ir::{Body, Exp, LoopForm, Stmt, SubExp, VarId};
use std::collections::{BTreeSet, HashSet};

impl Flattener<'_> {
    /// Whether the statement can run in parallel across the nest's points: a SOAC of the same
    /// width at every point, or a `for` loop with a uniform bound and regular parameters whose
    /// body has such parallelism (it can be interchanged with the nest).
    fn is_parallel(&self, nest: &Nest, s: &Stmt) -> bool {
        match &s.exp {
            Exp::Soac(soac) => !nest.is_variant(soac.width()),
            Exp::Loop {
                params,
                form: LoopForm::For { bound, .. },
                body,
            } => {
                !nest.is_variant(*bound)
                    && params.iter().all(|&(p, _)| nest.is_regular(self.f.ty(p)))
                    && self.has_parallelism(nest, body)
            }
            _ => false,
        }
    }

    pub(super) fn has_parallelism(&self, nest: &Nest, body: &Body) -> bool {
        body.stmts.iter().any(|s| self.is_parallel(nest, s))
    }

    /// The distinct widths of the parallel SOACs of `body` and of the loops it interchanges.
    pub(super) fn inner_widths(&self, nest: &Nest, body: &Body) -> Vec<SubExp> {
        let mut widths = Vec::new();
        for s in body.stmts.iter().filter(|s| self.is_parallel(nest, s)) {
            let found = match &s.exp {
                Exp::Soac(soac) => vec![soac.width()],
                Exp::Loop { body, .. } => self.inner_widths(nest, body),
                _ => vec![],
            };
            for w in found {
                if !widths.contains(&w) {
                    widths.push(w);
                }
            }
        }
        widths
    }

    /// Distributes the nest's innermost map around its body: kernels for each group of
    /// statements, in order. Returns the arrays holding the body's results at every point.
    pub(super) fn distribute(
        &mut self,
        nest: &Nest,
        body: &Body,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<Vec<VarId>, Irregular> {
        if !self.has_parallelism(nest, body) {
            return self.map_kernel(nest, SegLevel::Thread, body.clone(), loc, out);
        }
        let mut nest = nest.clone();
        let body = &self.hoist_invariant(&mut nest, body, out);
        let groups = self.groups(&nest, body);
        // What each group must leave for the groups after it and the body's results.
        let mut live = free_vars(&self.f, &[], &body.result);
        let mut live_after = vec![BTreeSet::new(); groups.len()];
        for (g, group) in groups.iter().enumerate().rev() {
            live_after[g] = live.clone();
            let stmts: Vec<Stmt> = match group {
                Group::Sequential(stmts) => stmts.iter().map(|&s| s.clone()).collect(),
                Group::Parallel(s) => vec![(*s).clone()],
            };
            live.extend(free_vars(&self.f, &stmts, &[]));
        }
        for (group, live) in groups.into_iter().zip(live_after) {
            match group {
                Group::Sequential(stmts) => {
                    // Cheap scalars of per-point values from before the group are computed
                    // again where needed; the rest is a kernel that stores what later code
                    // (recomputed scalars included) uses.
                    let (mut cheap, mut rest) = (Vec::new(), Vec::new());
                    let mut bound_here = HashSet::new();
                    for s in stmts {
                        let independent = free_vars_stmt(&self.f, s)
                            .iter()
                            .all(|v| !bound_here.contains(v));
                        if independent && self.is_cheap_scalar(&nest, s) {
                            cheap.push(s);
                        } else {
                            bound_here.extend(s.pat.iter().copied());
                            rest.push(s);
                        }
                    }
                    let stmts = rest;
                    let cheap_stmts: Vec<Stmt> = cheap.iter().map(|&s| s.clone()).collect();
                    let needed = free_vars(&self.f, &cheap_stmts, &[]);
                    for s in cheap {
                        nest.recompute(s.pat[0], s.exp.clone());
                    }
                    let outs: Vec<VarId> = stmts
                        .iter()
                        .flat_map(|s| s.pat.iter().copied())
                        .filter(|v| live.contains(v) || needed.contains(v))
                        .collect();
                    let checks = stmts.iter().any(|s| s.exp.is_effect());
                    if outs.is_empty() && !checks {
                        continue;
                    }
                    let code = Body {
                        stmts: stmts.into_iter().cloned().collect(),
                        result: vars(&outs),
                    };
                    let arrays = self.map_kernel(&nest, SegLevel::Thread, code, loc, out)?;
                    for (v, array) in outs.into_iter().zip(arrays) {
                        nest.expand(v, array);
                    }
                }
                Group::Parallel(s) => match &s.exp {
                    Exp::Soac(soac) => self.soac(&mut nest, &s.pat, soac, s.loc, out)?,
                    _ => self.interchange(&mut nest, s, out)?,
                },
            }
        }
        self.materialise(&nest, &body.result, loc, out)
    }

    /// Cuts a body into groups: each parallel statement alone, the runs between them.
    fn groups<'b>(&self, nest: &Nest, body: &'b Body) -> Vec<Group<'b>> {
        let mut groups = Vec::new();
        let mut run = Vec::new();
        for s in &body.stmts {
            if self.is_parallel(nest, s) {
                if !run.is_empty() {
                    groups.push(Group::Sequential(std::mem::take(&mut run)));
                }
                groups.push(Group::Parallel(s));
            } else {
                run.push(s);
            }
        }
        if !run.is_empty() {
            groups.push(Group::Sequential(run));
        }
        groups
    }

    /// The arrays holding `values` at every point of the nest: the expanded arrays where an
    /// earlier kernel computed them, otherwise from one more `SegMap`.
    pub(super) fn materialise(
        &mut self,
        nest: &Nest,
        values: &[SubExp],
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<Vec<VarId>, Irregular> {
        let known: Vec<Option<VarId>> = values
            .iter()
            .map(|se| se.as_var().and_then(|v| nest.expanded(v)))
            .collect();
        let missing: Vec<SubExp> = values
            .iter()
            .zip(&known)
            .filter(|(_, k)| k.is_none())
            .map(|(&se, _)| se)
            .collect();
        let mut computed = if missing.is_empty() {
            Vec::new()
        } else {
            let code = Body {
                stmts: vec![],
                result: missing,
            };
            self.map_kernel(nest, SegLevel::Thread, code, loc, out)?
        }
        .into_iter();
        Ok(known
            .into_iter()
            .map(|k| k.unwrap_or_else(|| computed.next().expect("one array per missing value")))
            .collect())
    }
}
