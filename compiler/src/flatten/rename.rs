//! Copies of statements with fresh variables, for code that flattening places twice (the
//! versions of a multi-versioned map each hold their own copy of the map's body, and every
//! variable of a function must be bound exactly once).

use ogham_ir::traverse::{Subst, nested_bodies_mut, substitute_exp, substitute_type};
use ogham_ir::{Exp, Function, Lambda, LoopForm, Soac, Stmt, SubExp, VarId};

/// A copy of `stmt` (core IR) in which every variable it binds (patterns, lambda and loop
/// parameters, loop indices, at any depth) is a fresh variable of the function's arena,
/// with the same name hint and its type renamed alike.
pub fn freshen_stmt(function: &mut Function, stmt: &Stmt) -> Stmt {
    let mut copy = stmt.clone();
    let mut old = Vec::new();
    for_each_binder_mut(&mut copy, &mut |v| old.push(*v));
    let subst: Subst = old
        .iter()
        .map(|&v| {
            let info = function.var(v).clone();
            (v, SubExp::Var(function.new_var(info.name, info.ty)))
        })
        .collect();
    for &v in &old {
        if let Some(SubExp::Var(fresh)) = subst.get(&v) {
            let ty = substitute_type(function.ty(*fresh), &subst);
            function.vars[fresh.index()].ty = ty;
        }
    }
    for_each_binder_mut(&mut copy, &mut |v| {
        if let Some(SubExp::Var(fresh)) = subst.get(v) {
            *v = *fresh;
        }
    });
    substitute_exp(&mut copy.exp, &subst);
    copy
}

/// Calls `f` on every binding occurrence in `stmt`, nested bodies included.
fn for_each_binder_mut(stmt: &mut Stmt, f: &mut impl FnMut(&mut VarId)) {
    stmt.pat.iter_mut().for_each(&mut *f);
    let lambda_params = |l: &mut Lambda, f: &mut dyn FnMut(&mut VarId)| {
        l.params.iter_mut().for_each(f);
    };
    match &mut stmt.exp {
        Exp::Loop { params, form, .. } => {
            params.iter_mut().for_each(|(v, _)| f(v));
            if let LoopForm::For { index, .. } = form {
                f(index);
            }
        }
        Exp::Soac(soac) => match soac {
            Soac::Screma {
                map, scans, reds, ..
            } => {
                lambda_params(map, f);
                scans
                    .iter_mut()
                    .for_each(|op| lambda_params(&mut op.lambda, f));
                reds.iter_mut()
                    .for_each(|op| lambda_params(&mut op.lambda, f));
            }
            Soac::Scatter { map, .. } => lambda_params(map, f),
            Soac::Hist { map, hists, .. } => {
                lambda_params(map, f);
                hists.iter_mut().for_each(|op| lambda_params(&mut op.op, f));
            }
        },
        _ => {}
    }
    for body in nested_bodies_mut(&mut stmt.exp) {
        for inner in &mut body.body().stmts {
            for_each_binder_mut(inner, f);
        }
    }
}

/// Every variable bound in the statements of `stmts` (at any depth), lambda parameters included.
pub fn binders(stmts: &[Stmt]) -> Vec<VarId> {
    let mut out = Vec::new();
    for stmt in stmts {
        for_each_binder_mut(&mut stmt.clone(), &mut |v| out.push(*v));
    }
    out
}
