//! `index-inputs` (kernel IR): in a thread-level kernel, a read `a[j]` in a map lambda whose
//! parameter `j` is the element of an `iota` input (or of a slice of one, `iota_n[lo:+w]`)
//! becomes an input of the SOAC: the row `a[lo:+w]`, whose element the lambda receives as a
//! parameter. `map (\j -> .. ys[j] ..) (iota n)`, the loop style `docs/tutorial.md` teaches, then
//! walks `ys` as the code generators walk any input (a load at the loop counter, with no load of
//! the index first; a vector load where a backend runs the loop in vectors), instead of loading
//! `j` from the `iota` array and then `ys` at `j`.
//!
//! The shape: a `Screma` whose input `k` is bound to `iota(n)` or to a slice with stride 1 of
//! such an array, and a statement `let x = a[p]` at the top level of its map lambda (run by
//! every iteration) with `p` the lambda's `k`-th parameter, `a` an array of rank 1 bound
//! outside the lambda and not consumed by the SOAC, and the read proven in range
//! ([`Proofs`], without the conditions of branches). The statement goes; `x` becomes the
//! parameter of a new last input, `a[lo:+w*1]` (`lo` the slice's start, 0 for a whole `iota`; `w`
//! the SOAC's width), bound just before the SOAC.
//!
//! Why it is exact: `p` takes the values `lo .. lo + w` in order, one per iteration, and every one
//! of them is in range of `a` (the proof holds for every value `p` takes, not just for the
//! iterations that read), so the slice is valid and its element `j` is `a[lo + j]`, the value
//! the statement read; a read that cannot fail moves from the lambda into the SOAC's input
//! traversal, and results and failures are the same.
//!
//! The `iota` slice stays where the SOAC no longer reads it: its check vouches for the width,
//! as for any slice whose length is used (`simplify/dce.rs`).
//!
//! Invariants relied on: those of `hoist_reads.rs` (single binding, position-independent proofs,
//! an `iota` array holds its elements while a SOAC reads it).

use super::iota_views::{IotaView, iota_views};
use crate::back::lower::bounds::Proofs;
use ogham_ir::abi::kernels;
use ogham_ir::kir::{HostBody, HostOp, Program, SegLevel};
use ogham_ir::traverse::{NestedMut, consumed_arrays_by, nested_bodies_mut};
use ogham_ir::{Body, DimIndex, Exp, Function, Soac, Stmt, SubExp, Type, VarId};
use std::collections::{HashMap, HashSet};

/// Turns the reads at an `iota` input's element into inputs in every thread-level kernel.
pub fn index_inputs(program: &mut Program) {
    let before = program.clone();
    let sites = kernels(&before);
    let mut k = 0;
    for (fi, f) in program.functions.iter_mut().enumerate() {
        let mut body = std::mem::take(&mut f.body);
        let iotas = iota_views(&body);
        let mut pass = Pass {
            f,
            before: &before.functions[fi],
            iotas,
            proofs: None,
        };
        pass.host_body(&mut body, &sites, &mut k);
        f.body = body;
    }
}

struct Pass<'f> {
    f: &'f mut Function<HostOp>,
    before: &'f Function<HostOp>,
    iotas: HashMap<VarId, IotaView>,
    proofs: Option<Proofs>,
}

impl Pass<'_> {
    fn host_body(
        &mut self,
        body: &mut HostBody,
        sites: &[ogham_ir::abi::KernelSite],
        k: &mut usize,
    ) {
        for stmt in &mut body.stmts {
            if let Exp::Host(HostOp::Seg(seg)) = &mut stmt.exp {
                let site = &sites[*k];
                *k += 1;
                if seg.level == SegLevel::Thread {
                    self.proofs = Some(Proofs::of(self.before, site.seg));
                    self.kernel_body(&mut seg.body);
                }
                continue;
            }
            for nested in nested_bodies_mut(&mut stmt.exp) {
                if let NestedMut::Host(b) = nested {
                    self.host_body(b, sites, k);
                }
            }
        }
    }

    fn kernel_body(&mut self, body: &mut Body) {
        let mut out = Vec::with_capacity(body.stmts.len());
        for mut stmt in std::mem::take(&mut body.stmts) {
            for nested in nested_bodies_mut(&mut stmt.exp) {
                self.kernel_body(nested.body());
            }
            out.extend(self.rows_for(&mut stmt));
            out.push(stmt);
        }
        body.stmts = out;
    }

    /// Rewrites `stmt` if it is a `Screma` with reads of the shape of the header: the
    /// statements binding the new inputs, to place before it.
    fn rows_for(&mut self, stmt: &mut Stmt) -> Vec<Stmt> {
        let consumed = consumed_arrays_by(self.before, std::slice::from_ref(stmt));
        let loc = stmt.loc;
        let Exp::Soac(Soac::Screma {
            width, inputs, map, ..
        }) = &mut stmt.exp
        else {
            return Vec::new();
        };
        let offsets: HashMap<VarId, SubExp> = inputs
            .iter()
            .zip(&map.params)
            .filter_map(|(a, &p)| Some((p, self.iotas.get(a)?.start)))
            .collect();
        if offsets.is_empty() {
            return Vec::new();
        }
        let proofs = self.proofs.as_ref().expect("inside a kernel");
        let mut bound: HashSet<VarId> = map.params.iter().copied().collect();
        let mut prefix = Vec::new();
        let mut kept = Vec::new();
        for s in std::mem::take(&mut map.body.stmts) {
            let row = match (&s.pat[..], &s.exp) {
                (&[x], Exp::Index(a, idx)) => match idx[..] {
                    [DimIndex::Fix(SubExp::Var(p))]
                        if offsets.contains_key(&p)
                            && !bound.contains(a)
                            && !consumed.contains(a)
                            && self.f.ty(*a).rank() == 1
                            && proofs.within(SubExp::Var(p), self.f.ty(*a).shape()[0]) =>
                    {
                        Some((x, *a, offsets[&p]))
                    }
                    _ => None,
                },
                _ => None,
            };
            let Some((x, a, lo)) = row else {
                bound.extend(s.pat.iter().copied());
                kept.push(s);
                continue;
            };
            let Type::Array { elem, .. } = self.f.ty(a).clone() else {
                unreachable!("rank 1")
            };
            let name = format!("{}_row", self.f.var(a).name);
            let sliced = self.f.new_var(
                name,
                Type::Array {
                    elem,
                    shape: vec![*width],
                },
            );
            prefix.push(Stmt {
                pat: vec![sliced],
                exp: Exp::Index(
                    a,
                    vec![DimIndex::Slice {
                        start: lo,
                        len: *width,
                        stride: SubExp::i64(1),
                    }],
                ),
                loc,
            });
            inputs.push(sliced);
            map.params.push(x);
        }
        map.body.stmts = kept;
        if !prefix.is_empty() {
            // An `iota` input whose element the lambda no longer uses goes, with its parameter.
            let used = ogham_ir::traverse::free_vars_body(&*self.f, &map.body);
            let mut k = 0;
            while k < inputs.len() {
                let p = map.params[k];
                if offsets.contains_key(&p) && !used.contains(&p) && inputs.len() > 1 {
                    inputs.remove(k);
                    map.params.remove(k);
                } else {
                    k += 1;
                }
            }
        }
        prefix
    }
}
