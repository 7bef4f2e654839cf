//! Columns of a gathered matrix, read where they are gathered from: the register tiles of
//! `jam.rs` load element `k` of column `c` of `transpose g`, where `g` is a gather of rows
//! `map (\key -> src[key]) keys` (BFAST's design rows at a pixel's valid dates), as
//! `src[keys[k], c]` instead of `g[k, c]`. The key is loaded once per step of the reduction for
//! all the tile's columns of the same gather, and `src` is usually a small array the threads
//! share (a kernel input), whose rows stay in the L1 cache, where `g` is a per-point array of
//! the point's own length.
//!
//! The shape ([`columns`]): a variable bound by `rearrange((1, 0), g)`, where `g` is the result
//! of a map-only `Screma` whose lambda returns, for `g`, a variable bound in its body by
//! `src[key]` (one fixed index: a row of the rank-2 `src`), `key` being the lambda's parameter
//! of the map's input `keys`, and `src` one of the kernel's inputs (a gather from a point's own
//! array would only add the loads of the keys).
//!
//! Invariants relied on: the gather itself is still emitted where it stands (other statements
//! may read `g`, and it checks every key against `src`'s rows before any tile runs), so the
//! tiles read the same elements it copied, bit for bit, at in-range indices (`k` below the
//! length of `keys`, the width of the gather; the column below `src`'s row length, the width
//! of `transpose g`). `src` and `keys` must hold the same values when the tiles read them as
//! when the gather did: neither is consumed by a statement after the gather in its body (or
//! nested in one; `consumed_arrays_by`, closed over the function's aliasing), the only code that
//! runs between the two while `g` is in scope, so no in-place update can have changed them in
//! between. Variables are bound once, and a statement's inputs are in scope wherever its
//! results are, so `src` and `keys` are in scope at the tiles.

use ogham_ir::kir::Function;
use ogham_ir::traverse::{Nested, Visitor, consumed_arrays_by, nested_scopes, walk};
use ogham_ir::{Body, DimIndex, Exp, Form, Soac, Stmt, SubExp, VarId};
use std::collections::{HashMap, HashSet};

/// `transpose g` for a gather of rows `g = map (\key -> src[key]) keys`: column `c`'s element
/// `k` is `src[keys[k], c]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather {
    /// The rank-2 array whose rows are gathered.
    pub src: VarId,
    /// The rank-1 `i64` array of row numbers.
    pub keys: VarId,
}

/// For each of `matrices`, the gather whose transpose it is, when it has the module's shape and
/// gathers from one of the `shared` arrays (the kernel's inputs, the same in every thread).
pub fn columns(f: &Function, shared: &HashSet<VarId>, matrices: &[VarId]) -> Vec<Option<Gather>> {
    let mut defs = Defs::default();
    walk(&f.body, &mut defs);
    let column = |matrix: &VarId| {
        let Def::Rearrange(g, perm) = *defs.0.get(matrix)? else {
            return None;
        };
        let Def::Map(pat, soac) = *defs.0.get(&g).filter(|_| perm == [1, 0])? else {
            return None;
        };
        let gather = gathered_rows(f, g, pat, soac).filter(|g| shared.contains(&g.src))?;
        let changed = consumed_after(f, &f.body, g)?;
        (!changed.contains(&gather.src) && !changed.contains(&gather.keys)).then_some(gather)
    };
    matrices.iter().map(column).collect()
}

/// The arrays that may change in place after the statement binding `g` has run, while `g` is
/// in scope: those the statements after it in its body consume (`consumed_arrays_by`).
fn consumed_after<H: Form>(f: &Function, body: &Body<H>, g: VarId) -> Option<HashSet<VarId>> {
    for (k, stmt) in body.stmts.iter().enumerate() {
        if stmt.pat.contains(&g) {
            return Some(consumed_arrays_by(f, &body.stmts[k + 1..]));
        }
        for (_, nested) in nested_scopes(&stmt.exp) {
            let found = match nested {
                Nested::Host(b) => consumed_after(f, b, g),
                Nested::Core(b) => consumed_after(f, b, g),
            };
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

/// The gather of rows `g`, a result of the map `soac` whose pattern is `pat`, when it is one.
fn gathered_rows(f: &Function, g: VarId, pat: &[VarId], soac: &Soac) -> Option<Gather> {
    let map = crate::plan::map_only(soac)?;
    let inputs = soac.inputs();
    if pat.len() != map.body.result.len() || map.params.len() != inputs.len() {
        return None;
    }
    let result = pat.iter().position(|v| *v == g)?;
    let SubExp::Var(row) = map.body.result[result] else {
        return None;
    };
    let index = map.body.stmts.iter().find(|s| s.pat == [row])?;
    let Exp::Index(src, components) = &index.exp else {
        return None;
    };
    let [DimIndex::Fix(SubExp::Var(key))] = components.as_slice() else {
        return None;
    };
    let keys = inputs[map.params.iter().position(|p| p == key)?];
    (f.ty(*src).rank() == 2 && f.ty(keys).rank() == 1).then_some(Gather { src: *src, keys })
}

/// What binds a variable, for the statements the shape is made of.
#[derive(Clone, Copy)]
enum Def<'f> {
    Rearrange(VarId, &'f [usize]),
    /// A `Screma`, with its whole pattern.
    Map(&'f [VarId], &'f Soac),
}

/// The [`Def`]s of a function's variables, from a walk over its statements at every depth.
#[derive(Default)]
struct Defs<'f>(HashMap<VarId, Def<'f>>);

impl<'f> Visitor<'f> for Defs<'f> {
    fn stmt<H: Form>(&mut self, stmt: &'f Stmt<H>) {
        match &stmt.exp {
            Exp::Rearrange(g, perm) => {
                for v in &stmt.pat {
                    self.0.insert(*v, Def::Rearrange(*g, perm));
                }
            }
            Exp::Soac(soac @ Soac::Screma { .. }) => {
                for v in &stmt.pat {
                    self.0.insert(*v, Def::Map(&stmt.pat, soac));
                }
            }
            _ => {}
        }
    }
}
