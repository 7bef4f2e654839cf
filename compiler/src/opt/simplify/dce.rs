//! Dead-code elimination: one backward pass over a function with a single set of live
//! variables (every variable is bound once, so the set needs no scoping).
//!
//! A statement is live if it is an effect (an assertion, which binds nothing but may fail; a
//! trace, which prints), an `iota` or
//! `replicate` whose size is not a valid constant (its size check is the program's guarantee
//! that the size, which the array's type may pass on, is valid: see [`checks_size`]) unless
//! that size is already known valid there (the size of an earlier top-level
//! `iota`/`replicate`, or an extent of a parameter that none checks: see `checked_sizes`) — also inside the bodies of an otherwise dead statement, which
//! then stays — or an index with a slice whose length is live (the slice's check vouches for
//! that length, which the program uses: `length xs[a:b:s]` fails on an invalid slice as in the
//! interpreter, instead of producing a length from bounds nothing checked) — or binds a live
//! variable; the rest are removed, whatever they would have done at run time (an index
//! out of bounds in dead code is not reported, as in Futhark). A live statement makes its operands
//! live, and the sizes in the types of the variables it binds; its nested bodies are cleaned
//! first, their results being live.

use ogham_ir::traverse::{Nested, NestedMut, for_each_operand, nested_bodies_mut, nested_scopes};
use ogham_ir::{Body, Const, DimIndex, Exp, Form, Function, SubExp, VarId};
use std::collections::HashMap;

/// Removes the dead statements of `function`, nested bodies included.
pub fn eliminate_dead_code<F: Form>(function: &mut Function<F>) {
    let mut body = std::mem::take(&mut function.body);
    let mut live = vec![false; function.vars.len()];
    let checked = checked_sizes(function, &body);
    clean(function, &mut body, &mut live, &checked, None);
    function.body = body;
}

/// Sizes known valid before each top-level statement, as the position from which on they are:
/// `k + 1` for the size of the first `iota`/`replicate` at the top level of the body, statement
/// `k`, which checks it before anything after it runs; 0 for the extents of the parameters
/// (arrays that exist) otherwise. The extents of a parameter of rank 2 or more may be invalid
/// (any size beside a 0: a `.npy` of shape `(0, 10^18)`), so a top-level `iota` of one stays
/// and checks it; one of rank 1 is the element count of an array in memory.
fn checked_sizes<F: Form>(function: &Function<F>, body: &Body<F>) -> HashMap<SubExp, usize> {
    let mut checked = HashMap::new();
    for p in &function.params {
        if let [d] = function.ty(p.var).shape() {
            checked.insert(*d, 0);
        }
    }
    for (k, stmt) in body.stmts.iter().enumerate() {
        if let Exp::Iota(n) | Exp::Replicate(n, _) = &stmt.exp {
            checked.entry(*n).or_insert(k + 1);
        }
    }
    for p in &function.params {
        for &d in function.ty(p.var).shape() {
            checked.entry(d).or_insert(0);
        }
    }
    checked
}

fn mark(live: &mut [bool], se: SubExp) {
    if let SubExp::Var(v) = se
        && let Some(flag) = live.get_mut(v.index())
    {
        *flag = true;
    }
}

fn mark_type_of<F: Form>(function: &Function<F>, live: &mut [bool], v: VarId) {
    if let Some(info) = function.vars.get(v.index()) {
        for &dim in info.ty.shape() {
            mark(live, dim);
        }
    }
}

/// Whether `exp` checks a size that may be invalid at run time: `iota n` or `replicate n v`
/// of a variable `n` (error `R0706` when negative or too large, on every backend).
pub fn checks_size<H: Form>(exp: &Exp<H>) -> bool {
    let valid = |n: &SubExp| matches!(n, SubExp::Const(Const::I64(k)) if ogham_ir::sizes::count(*k).is_ok());
    match exp {
        Exp::Iota(n) | Exp::Replicate(n, _) => !valid(n),
        _ => false,
    }
}

/// Whether `exp`, or a statement of a body nested in it (a dead `map` or loop whose body
/// would check a size), checks a size that `already_checked` does not vouch for.
fn unchecked_size_check<H: Form>(exp: &Exp<H>, already_checked: &dyn Fn(&SubExp) -> bool) -> bool {
    fn any<G: Form>(body: &Body<G>, already_checked: &dyn Fn(&SubExp) -> bool) -> bool {
        body.stmts
            .iter()
            .any(|s| unchecked_size_check(&s.exp, already_checked))
    }
    match exp {
        Exp::Iota(n) | Exp::Replicate(n, _) => checks_size(exp) && !already_checked(n),
        _ => nested_scopes(exp).into_iter().any(|(_, body)| match body {
            Nested::Host(body) => any(body, already_checked),
            Nested::Core(body) => any(body, already_checked),
        }),
    }
}

/// Whether `exp`, or a statement nested in it, checks a size that may be invalid (see
/// [`checks_size`]). Dead-code elimination may keep such a statement whatever uses its results,
/// so the variables it reads must stay bound (a loop parameter that only feeds a `replicate` of
/// a variable size inside a dead loop is still needed).
pub fn may_check_size<H: Form>(exp: &Exp<H>) -> bool {
    unchecked_size_check(exp, &|_| false)
}

/// Whether `exp` slices an array with a length variable that is live.
fn slice_length_used<H: Form>(exp: &Exp<H>, live: &[bool]) -> bool {
    let Exp::Index(_, indices) = exp else {
        return false;
    };
    indices.iter().any(|index| {
        matches!(index, DimIndex::Slice { len: SubExp::Var(v), .. }
            if live.get(v.index()).copied().unwrap_or(true))
    })
}

/// Cleans `body`; `top`: the position of the enclosing top-level statement (`None` for the
/// function's body itself), before which the sizes of `checked` are known valid.
fn clean<F: Form, H: Form>(
    function: &Function<F>,
    body: &mut Body<H>,
    live: &mut [bool],
    checked: &HashMap<SubExp, usize>,
    top: Option<usize>,
) {
    for &r in &body.result {
        mark(live, r);
    }
    let count = body.stmts.len();
    let mut kept = Vec::with_capacity(count);
    for (back, mut stmt) in std::mem::take(&mut body.stmts)
        .into_iter()
        .rev()
        .enumerate()
    {
        let at = top.unwrap_or(count - 1 - back);
        let already_checked = |n: &SubExp| checked.get(n).is_some_and(|&from| from <= at);
        let unchecked_size = unchecked_size_check(&stmt.exp, &already_checked);
        let needed = stmt.exp.is_effect()
            || unchecked_size
            || slice_length_used(&stmt.exp, live)
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
            match nested {
                NestedMut::Host(body) => clean(function, body, live, checked, Some(at)),
                NestedMut::Core(body) => clean(function, body, live, checked, Some(at)),
            }
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
