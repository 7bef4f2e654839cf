//! Dead-code elimination: one backward pass over a function with a single set of live
//! variables (every variable is bound once, so the set needs no scoping).
//!
//! A statement is live if it is an assertion (it binds nothing but may fail), an `iota` or
//! `replicate` whose size is not a valid constant (its size check is the program's guarantee
//! that the size, which the array's type may pass on, is valid: see [`checks_size`]) or binds
//! a live variable; the rest are removed, whatever they would have done at run time (an index
//! out of bounds in dead code is not reported, as in Futhark). A live statement makes its operands
//! live, and the sizes in the types of the variables it binds; its nested bodies are cleaned
//! first, their results being live.

use crate::ir::traverse::{for_each_operand, nested_bodies_mut, nested_scopes};
use crate::ir::{Body, Const, Exp, Function, SubExp, VarId};

/// Removes the dead statements of `function`, nested bodies included.
pub fn eliminate_dead_code(function: &mut Function) {
    let mut body = std::mem::take(&mut function.body);
    let mut live = vec![false; function.vars.len()];
    clean(function, &mut body, &mut live);
    function.body = body;
}

fn mark(live: &mut [bool], se: SubExp) {
    if let SubExp::Var(v) = se
        && let Some(flag) = live.get_mut(v.index())
    {
        *flag = true;
    }
}

fn mark_type_of(function: &Function, live: &mut [bool], v: VarId) {
    if let Some(info) = function.vars.get(v.index()) {
        for &dim in info.ty.shape() {
            mark(live, dim);
        }
    }
}

/// Whether `exp` checks a size that may be invalid at run time: `iota n` or `replicate n v`
/// of a variable `n` (error `R0706` when negative or too large, on every backend).
pub fn checks_size(exp: &Exp) -> bool {
    let valid = |n: &SubExp| {
        matches!(n, SubExp::Const(Const::I64(k)) if crate::sizes::count(*k).is_ok())
    };
    match exp {
        Exp::Iota(n) | Exp::Replicate(n, _) => !valid(n),
        _ => false,
    }
}

fn clean(function: &Function, body: &mut Body, live: &mut [bool]) {
    for &r in &body.result {
        mark(live, r);
    }
    let mut kept = Vec::with_capacity(body.stmts.len());
    for mut stmt in std::mem::take(&mut body.stmts).into_iter().rev() {
        let needed = matches!(stmt.exp, Exp::Assert { .. })
            || checks_size(&stmt.exp)
            || stmt
                .pat
                .iter()
                .any(|v| live.get(v.index()).copied().unwrap_or(true));
        if !needed {
            continue;
        }
        let binders: Vec<VarId> = nested_scopes(&stmt.exp)
            .into_iter()
            .flat_map(|(bound, _)| bound)
            .collect();
        for nested in nested_bodies_mut(&mut stmt.exp) {
            clean(function, nested, live);
        }
        for v in binders.into_iter().chain(stmt.pat.iter().copied()) {
            mark_type_of(function, live, v);
        }
        for_each_operand(&stmt.exp, &mut |se| mark(live, se));
        kept.push(stmt);
    }
    kept.reverse();
    body.stmts = kept;
}
