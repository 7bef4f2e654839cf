//! `unswitch` (kernel IR): plans loop unswitching. A sequential `Screma` (a map, possibly with
//! scans and reductions) in a kernel's body whose lambda tests, in an `if` among its own
//! statements, a condition the lambda does not bind gets [`Plan::Unswitch`] on that condition
//! (the first such `if`'s). The condition is a value of the code around the SOAC, the same in
//! every iteration, so the code generators emit the SOAC's loop twice behind one branch on it,
//! each copy with the `if` replaced by the branch it takes: the loop then neither tests the
//! condition nor joins the branches in every iteration.
//!
//! Shape ([`invariant_condition`]): the lambda has at most [`MAX_STATEMENTS`] statements and
//! none of them (nor of its `if`s' branches) is a SOAC or a loop, so a copy costs little code and
//! copies do not multiply through nested loops. Example: Gauss–Jordan elimination's
//! `map2 (\v x -> if last then x else v - factor * x) row scaled`.
//!
//! Both copies run the statements the original runs for their value of the condition, in the
//! same order, so results and failures are the same; reading the condition before the loop
//! cannot fail. Used by the CPU backend (`back/cpu/unswitch.rs`, which also leaves the rows a
//! copy does not read unloaded) and the CUDA backend (`back/cuda/lower.rs`, an `if`/`else`
//! around the two copies). A backend running the SOAC as a parallel loop (CUDA's block-level
//! SOACs) emits it plainly.

use ogham_ir::kir::{Plan, Plans, Program};
use ogham_ir::{Body, Exp, Lambda, Soac, SubExp, VarId};

/// The most statements a lambda emitted twice may have.
pub const MAX_STATEMENTS: usize = 16;

/// Plans every sequential `Screma` of the program's kernels whose lambda has the shape of the
/// module header.
pub fn run(program: &mut Program) {
    super::plan_statements(program, &|_, stmt| match &stmt.exp {
        Exp::Soac(Soac::Screma { map, .. }) => {
            invariant_condition(map).map(|cond| Plan::Unswitch { cond })
        }
        _ => None,
    });
}

/// Whether `body` and its `if`s' branches have no SOAC or loop.
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

/// The condition to unswitch a SOAC with lambda `map` on: that of the first `if` among the
/// lambda's statements whose condition the lambda does not bind, when the lambda is small and
/// flat.
pub fn invariant_condition(map: &Lambda) -> Option<VarId> {
    let stmts = &map.body.stmts;
    if stmts.len() > MAX_STATEMENTS || !flat(&map.body) {
        return None;
    }
    let bound = |c: &VarId| map.params.contains(c) || stmts.iter().any(|s| s.pat.contains(c));
    stmts.iter().find_map(|s| match s.exp {
        Exp::If {
            cond: SubExp::Var(c),
            ..
        } if !bound(&c) => Some(c),
        _ => None,
    })
}

/// The condition the SOAC binding `pat`, with lambda `map`, is planned to be unswitched on, when
/// the lambda still has the shape (IR written by hand may carry a plan that does not fit).
pub fn planned(plans: &Plans, pat: &[VarId], map: &Lambda) -> Option<VarId> {
    match plans.get(pat.first()?)? {
        Plan::Unswitch { cond } if invariant_condition(map) == Some(*cond) => Some(*cond),
        _ => None,
    }
}
