//! `hoist-reads` (kernel IR): a read of one element that is the same in every iteration of a
//! loop or of a SOAC's map lambda, and that cannot fail, moves out of it, before the loop or the
//! SOAC, in the bodies of thread-level kernels (at any depth; out of several nested levels when
//! it is invariant in each).
//!
//! The shape: a statement `let x = a[i, j, ..]` at the top level of a `loop`'s body or of the
//! map lambda of a `Screma`, `Scatter` or `Hist`, with a full index (`x` is a scalar) whose
//! operands (`a` and the indices) are bound outside that body, and whose every index is proven
//! in range ([`Proofs`], the bounds analysis that also omits the backends' checks; outside any
//! `if` of the body, so without the conditions of branches). Examples: the pair loops of
//! `lib/trend.og`, `map (\j -> .. ys[i] .. ys[j] ..) (iota n)` and `for j < c - i - 1 do ..
//! ys[i] .. ts[i] ..`, read `ys[i]` and `ts[i]` once per `i` instead of once per pair. Neither
//! backend hoists such reads itself: Cranelift moves no load out of a loop (a store to a
//! per-point array in the loop, such as the Theil–Sen slopes' buffer, may alias it), and CUDA's
//! compiler does not move loads from per-point arrays across the loop's stores either.
//!
//! Invariants relied on (see `back/lower/bounds.rs`): every variable is bound once, so `a` and
//! the indices have the same values before the body as in it; a proof that an index is in range
//! depends only on how the index and the extent are bound, not on where the read is, so the
//! read stays proven (no check) and cannot fail where it moves; `a` is not consumed by the loop
//! or SOAC (checked: [`consumed_arrays_by`]), so its elements do not change while it runs. A read
//! that cannot fail and has no effect may run once more than before (a loop of no iteration):
//! results and failures are the same. Only thread-level kernels: a block-level kernel runs its
//! SOACs across the block's threads, and its code between them is left as it is.

use crate::back::lower::bounds::Proofs;
use ogham_ir::abi::kernels;
use ogham_ir::kir::{Function, Program, SegLevel};
use ogham_ir::traverse::{consumed_arrays_by, for_each_kernel_mut, nested_bodies_mut};
use ogham_ir::{Body, DimIndex, Exp, LoopForm, Stmt, SubExp, VarId};
use std::collections::HashSet;

/// Hoists the invariant reads of every thread-level kernel of the program.
pub fn hoist_reads(program: &mut Program) {
    // The proofs and the aliasing of arrays are those of the program before the pass, which
    // moves only scalar reads and so changes neither; `for_each_kernel_mut` visits the kernels
    // in the order of `kernels`, with the function's body taken out.
    let before = program.clone();
    let mut sites = kernels(&before).into_iter();
    for_each_kernel_mut(program, &mut |_, seg| {
        let site = sites.next().expect("the same kernels in the same order");
        if seg.level == SegLevel::Thread {
            let f = &before.functions[site.function];
            hoist_in(f, &Proofs::of(f, site.seg), &mut seg.body);
        }
    });
}

/// Hoists the invariant reads of the loops and SOACs of `body`, innermost first, each to just
/// before its loop or SOAC (so a read hoisted out of an inner loop is then a statement of the
/// outer body, which may hoist it again).
fn hoist_in(f: &Function, proofs: &Proofs, body: &mut Body) {
    let stmts = std::mem::take(&mut body.stmts);
    for mut stmt in stmts {
        for nested in nested_bodies_mut(&mut stmt.exp) {
            hoist_in(f, proofs, nested.body());
        }
        let hoisted = invariant_reads(f, proofs, &mut stmt);
        body.stmts.extend(hoisted);
        body.stmts.push(stmt);
    }
}

/// Takes the invariant reads (module header) out of the body of `stmt`, a loop or a SOAC,
/// in order; nothing for other statements.
fn invariant_reads(f: &Function, proofs: &Proofs, stmt: &mut Stmt) -> Vec<Stmt> {
    let consumed = consumed_arrays_by(f, std::slice::from_ref(stmt));
    let (mut bound, body): (HashSet<VarId>, &mut Body) = match &mut stmt.exp {
        Exp::Loop { params, form, body } => {
            let mut bound: HashSet<VarId> = params.iter().map(|&(v, _)| v).collect();
            if let LoopForm::For { index, .. } = form {
                bound.insert(*index);
            }
            (bound, body)
        }
        Exp::Soac(soac) => {
            let map = soac.inputs_and_map_mut().1;
            (map.params.iter().copied().collect(), &mut map.body)
        }
        _ => return Vec::new(),
    };
    let mut hoisted = Vec::new();
    for s in std::mem::take(&mut body.stmts) {
        if invariant_read(f, proofs, &s, &bound, &consumed) {
            hoisted.push(s);
        } else {
            bound.extend(s.pat.iter().copied());
            body.stmts.push(s);
        }
    }
    hoisted
}

/// Whether `s` reads one element of an array that is not in `consumed`, at indices proven in
/// range, with operands none of which is in `bound` (the variables the body binds before `s`).
fn invariant_read(
    f: &Function,
    proofs: &Proofs,
    s: &Stmt,
    bound: &HashSet<VarId>,
    consumed: &HashSet<VarId>,
) -> bool {
    let Exp::Index(a, idx) = &s.exp else {
        return false;
    };
    let outside = |v: &SubExp| v.as_var().is_none_or(|v| !bound.contains(&v));
    let shape = f.ty(*a).shape();
    let [x] = s.pat[..] else {
        return false;
    };
    f.ty(x).rank() == 0
        && !bound.contains(a)
        && !consumed.contains(a)
        && idx.len() == shape.len()
        && idx.iter().zip(shape).all(|(d, &dim)| match d {
            DimIndex::Fix(i) => outside(i) && proofs.within(*i, dim),
            DimIndex::Slice { .. } => false,
        })
}
