//! Emission of loop unswitching (planned by `plan/unswitch.rs`, which describes the shape): the
//! loop of a sequential SOAC planned [`Plan::Unswitch`] on condition `c` is emitted twice,
//! behind one branch on `c`, each copy with `c` fixed in [`Gen::unswitched`] so that an `if` on
//! it emits only the branch it takes (`Gen::if_else`).
//!
//! A copy loads only the rows of the inputs it reads ([`Gen::unread_rows`]): in Gauss–Jordan's
//! copy for `last`, `row`'s elements are not loaded. That is emission's part because it is
//! about which loads the copy makes, which kernel IR does not express.
//!
//! A plan whose condition is not (any more) the lambda's invariant condition (hand-written IR),
//! or that an enclosing copy has already fixed, is ignored: the loop is emitted once.

use super::codegen::{Gen, Res};
use crate::plan::unswitch;
use cranelift_codegen::ir::InstBuilder;
use ogham_ir::traverse::free_vars_body;
use ogham_ir::{Body, Exp, Lambda, SubExp, VarId};

/// The condition to unswitch the SOAC binding `pat`, with lambda `map`, on: its plan's, unless
/// an enclosing copy has fixed it.
pub fn planned(g: &Gen, pat: &[VarId], map: &Lambda) -> Option<VarId> {
    unswitch::planned(g.plans, pat, map).filter(|c| !g.unswitched.contains_key(c))
}

/// Emits `emit_loop`, the loop of a SOAC with lambda `map`, once per value of condition `c`,
/// behind a branch on it, with `c` fixed to that value in [`Gen::unswitched`] while the copy is
/// emitted, and the inputs the copy does not read in [`Gen::unread_rows`].
pub fn emit<'a>(
    g: &mut Gen<'a>,
    map: &Lambda,
    c: VarId,
    emit_loop: &mut dyn FnMut(&mut Gen<'a>) -> Res<()>,
) -> Res<()> {
    let cond = g.scalar(SubExp::Var(c))?;
    let (yes, no, merge) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
    g.b.ins().brif(cond, yes, &[], no, &[]);
    for (block, taken) in [(yes, true), (no, false)] {
        g.b.switch_to_block(block);
        g.b.seal_block(block);
        g.unswitched.insert(c, taken);
        g.unread_rows = unread(g, map, c, taken);
        let emitted = emit_loop(g);
        g.unswitched.remove(&c);
        g.unread_rows.clear();
        emitted?;
        g.b.ins().jump(merge, &[]);
    }
    g.b.switch_to_block(merge);
    g.b.seal_block(merge);
    Ok(())
}

/// The positions of `map`'s parameters that its copy with `c` fixed to `taken` does not read.
fn unread(g: &Gen, map: &Lambda, c: VarId, taken: bool) -> Vec<usize> {
    let mut body = map.body.clone();
    fix(&mut body, c, taken);
    let read = free_vars_body(g.f, &body);
    (0..map.params.len())
        .filter(|k| !read.contains(&map.params[*k]))
        .collect()
}

/// `body` as a copy with `c` fixed to `taken` emits it: each `if` on `c` with the branch taken
/// in place of the other.
fn fix(body: &mut Body, c: VarId, taken: bool) {
    for s in &mut body.stmts {
        if let Exp::If {
            cond,
            then_body,
            else_body,
            ..
        } = &mut s.exp
        {
            fix(then_body, c, taken);
            fix(else_body, c, taken);
            if *cond == SubExp::Var(c) {
                if taken {
                    *else_body = then_body.clone();
                } else {
                    *then_body = else_body.clone();
                }
            }
        }
    }
}
