//! Loop unswitching: a sequential SOAC loop whose lambda has an `if` on a condition the lambda
//! does not bind (a value of the enclosing code, so the same in every iteration) is emitted twice,
//! behind one branch on the condition, each copy with the `if` replaced by the branch it takes
//! (`Gen::if_else` looks the condition up in [`Gen::unswitched`]). The loop then neither tests
//! the condition nor selects between the branches in every iteration: Gauss–Jordan elimination's
//! `map2 (\v x -> if last then x else v - factor * x) row scaled` (`lib/linalg.og` `inverse`).
//!
//! Applies when ([`invariant_condition`]) the lambda has at most [`MAX_STATEMENTS`] statements,
//! none of them (nor of its `if`s' branches) a SOAC or a loop, so a copy costs little code and
//! copies do not multiply through nested loops. Each copy runs the statements the original runs
//! for that condition, in the same order, so results and failures are the same; reading the
//! condition before the loop cannot fail.
//!
//! A copy loads only the rows of the inputs it reads ([`Gen::unread_rows`]): in Gauss–Jordan's
//! copy for `last`, `row`'s elements are not loaded.

use super::codegen::{Gen, Res};
use cranelift_codegen::ir::InstBuilder;
use ogham_ir::traverse::free_vars_body;
use ogham_ir::{Body, Exp, Lambda, SubExp, VarId};

/// The most statements a lambda emitted twice may have.
const MAX_STATEMENTS: usize = 16;

/// Whether `body` and its `if`s' branches have no SOAC or loop (a lambda's body holds no kernel).
fn flat(body: &Body) -> bool {
    body.stmts.iter().all(|s| match &s.exp {
        Exp::Soac(_) | Exp::Loop { .. } => false,
        Exp::If {
            then_body,
            else_body,
            ..
        } => flat(then_body) && flat(else_body),
        _ => true,
    })
}

/// The condition to unswitch `map`'s loop on: that of the first `if` among the lambda's
/// statements whose condition the lambda does not bind and no enclosing copy has fixed, when the
/// lambda is small and flat.
pub fn invariant_condition(g: &Gen, map: &Lambda) -> Option<VarId> {
    let stmts = &map.body.stmts;
    if stmts.len() > MAX_STATEMENTS || !flat(&map.body) {
        return None;
    }
    let bound = |c: &VarId| map.params.contains(c) || stmts.iter().any(|s| s.pat.contains(c));
    stmts.iter().find_map(|s| match s.exp {
        Exp::If {
            cond: SubExp::Var(c),
            ..
        } if !bound(&c) && !g.unswitched.contains_key(&c) => Some(c),
        _ => None,
    })
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
