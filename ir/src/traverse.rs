//! Generic walks over the IR shared by the passes: the operands an expression mentions, the
//! nested bodies it contains (with the variables bound for each), free variables, use counts,
//! substitution of variables by operands, and the arrays a function consumes.
//!
//! Every pass that inspects or rewrites statements should use these rather than matching every
//! [`Exp`] variant itself, so that adding a construct means updating this module (and the
//! printer, verifier, evaluator), not every pass.
//!
//! Because every variable is bound exactly once in a function, the free variables of a fragment
//! are simply the variables it uses minus those it binds: there is no shadowing to track.
//!
//! The walks are generic over the [`Form`] of the code: a body nested in an expression has the
//! expression's form (`if`, `loop`: [`Nested::Host`]) or is core IR (lambdas, kernels:
//! [`Nested::Core`]); [`Visitor`] sees the statements of both.

use crate::kir::{self, HostOp, SegKind, SegOp};
use crate::{
    Body, Core, DimIndex, Exp, Form, Function, HistOp, Lambda, LoopForm, Soac, Stmt, SubExp, Type,
    VarId,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// A substitution of variables by operands.
pub type Subst = HashMap<VarId, SubExp>;

/// Calls `f` on every operand the expression itself mentions: scalar operands, arrays it reads
/// or consumes (as [`SubExp::Var`]), sizes in the types it carries (`if` results, lambda
/// results, array literal elements, kernel results), SOAC inputs and destinations, neutral
/// elements and bin counts; not the contents of nested bodies.
pub fn for_each_operand<H: Form>(exp: &Exp<H>, f: &mut impl FnMut(SubExp)) {
    let var = |v: &VarId| SubExp::Var(*v);
    let ty = |t: &Type, f: &mut dyn FnMut(SubExp)| t.shape().iter().for_each(|&d| f(d));
    let dims = |idx: &[DimIndex], f: &mut dyn FnMut(SubExp)| {
        for d in idx {
            match d {
                DimIndex::Fix(i) => f(*i),
                DimIndex::Slice { start, len, stride } => {
                    f(*start);
                    f(*len);
                    f(*stride);
                }
            }
        }
    };
    match exp {
        Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Convert(_, a) | Exp::Iota(a) => f(*a),
        Exp::BinOp(_, a, b) | Exp::Replicate(a, b) => {
            f(*a);
            f(*b);
        }
        Exp::Math(_, _, args) => args.iter().for_each(|&a| f(a)),
        Exp::Index(v, idx) => {
            f(var(v));
            dims(idx, f);
        }
        Exp::Update(v, idx, value) => {
            f(var(v));
            dims(idx, f);
            f(*value);
        }
        Exp::ArrayLit(elems, elem_ty) => {
            elems.iter().for_each(|&a| f(a));
            ty(elem_ty, f);
        }
        Exp::Rearrange(v, _) | Exp::Copy(v) => f(var(v)),
        Exp::Reshape(v, shape) => {
            f(var(v));
            shape.iter().for_each(|&d| f(d));
        }
        Exp::Concat(vs) => vs.iter().for_each(|v| f(var(v))),
        Exp::Assert { cond, .. } => f(*cond),
        Exp::Trace { value, .. } => f(*value),
        Exp::If { cond, ret, .. } => {
            f(*cond);
            ret.iter().for_each(|t| ty(t, f));
        }
        Exp::Loop { params, form, .. } => {
            params.iter().for_each(|&(_, init)| f(init));
            match form {
                LoopForm::For { bound, .. } => f(*bound),
                LoopForm::While { cond } => f(var(cond)),
            }
        }
        Exp::Soac(soac) => {
            f(soac.width());
            soac.inputs().iter().for_each(|v| f(var(v)));
            match soac {
                Soac::Screma { scans, reds, .. } => {
                    scans
                        .iter()
                        .for_each(|op| op.neutral.iter().for_each(|&a| f(a)));
                    reds.iter()
                        .for_each(|op| op.neutral.iter().for_each(|&a| f(a)));
                }
                Soac::Scatter { dests, .. } => dests.iter().for_each(|v| f(var(v))),
                Soac::Hist { hists, .. } => {
                    for op in hists {
                        f(op.num_bins);
                        op.dests.iter().for_each(|v| f(var(v)));
                        op.neutral.iter().for_each(|&a| f(a));
                    }
                }
            }
            for lambda in soac_lambdas(soac) {
                lambda.ret.iter().for_each(|t| ty(t, f));
            }
        }
        Exp::Host(host) => match host.host() {
            HostOp::Seg(seg) => {
                seg.space.iter().for_each(|&(_, extent)| f(extent));
                seg.ret.iter().for_each(|t| ty(t, f));
                match &seg.kind {
                    SegKind::Map => {}
                    SegKind::Red(reds) => {
                        for op in reds {
                            op.neutral.iter().for_each(|&a| f(a));
                            op.lambda.ret.iter().for_each(|t| ty(t, f));
                        }
                    }
                    SegKind::Scan(scans) => {
                        for op in scans {
                            op.neutral.iter().for_each(|&a| f(a));
                            op.lambda.ret.iter().for_each(|t| ty(t, f));
                        }
                    }
                    SegKind::Hist(hists) => {
                        for op in hists {
                            f(op.num_bins);
                            op.dests.iter().for_each(|v| f(var(v)));
                            op.neutral.iter().for_each(|&a| f(a));
                            op.op.ret.iter().for_each(|t| ty(t, f));
                        }
                    }
                }
            }
            HostOp::Threshold { size, .. } => f(*size),
        },
    }
}

/// Rewrites every operand position that [`for_each_operand`] visits with `f`. Positions that
/// must hold a variable (an indexed array, a SOAC input, a `while` condition) keep their
/// variable when `f` returns a constant.
pub fn map_operands<H: Form>(exp: &mut Exp<H>, f: &mut impl FnMut(SubExp) -> SubExp) {
    match exp {
        Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Convert(_, a) | Exp::Iota(a) => *a = f(*a),
        Exp::BinOp(_, a, b) | Exp::Replicate(a, b) => {
            *a = f(*a);
            *b = f(*b);
        }
        Exp::Math(_, _, args) => rewrite_subexps(args, f),
        Exp::Index(v, idx) => {
            rewrite_var(v, f);
            rewrite_dims(idx, f);
        }
        Exp::Update(v, idx, value) => {
            rewrite_var(v, f);
            rewrite_dims(idx, f);
            *value = f(*value);
        }
        Exp::ArrayLit(elems, elem_ty) => {
            rewrite_subexps(elems, f);
            rewrite_type(elem_ty, f);
        }
        Exp::Rearrange(v, _) | Exp::Copy(v) => rewrite_var(v, f),
        Exp::Reshape(v, shape) => {
            rewrite_var(v, f);
            rewrite_subexps(shape, f);
        }
        Exp::Concat(vs) => vs.iter_mut().for_each(|v| rewrite_var(v, f)),
        Exp::Assert { cond, .. } => *cond = f(*cond),
        Exp::Trace { value, .. } => *value = f(*value),
        Exp::If { cond, ret, .. } => {
            *cond = f(*cond);
            ret.iter_mut().for_each(|t| rewrite_type(t, f));
        }
        Exp::Loop { params, form, .. } => {
            params.iter_mut().for_each(|(_, init)| *init = f(*init));
            match form {
                LoopForm::For { bound, .. } => *bound = f(*bound),
                LoopForm::While { cond } => rewrite_var(cond, f),
            }
        }
        Exp::Soac(soac) => rewrite_soac(soac, f),
        Exp::Host(host) => match host.host_mut() {
            HostOp::Seg(seg) => rewrite_seg(seg, f),
            HostOp::Threshold { size, .. } => *size = f(*size),
        },
    }
}

// The operand positions of [`map_operands`], by kind of node.

fn rewrite_var(v: &mut VarId, f: &mut dyn FnMut(SubExp) -> SubExp) {
    if let SubExp::Var(w) = f(SubExp::Var(*v)) {
        *v = w;
    }
}

fn rewrite_type(t: &mut Type, f: &mut dyn FnMut(SubExp) -> SubExp) {
    if let Type::Array { shape, .. } = t {
        shape.iter_mut().for_each(|d| *d = f(*d));
    }
}

fn rewrite_subexps(xs: &mut [SubExp], f: &mut dyn FnMut(SubExp) -> SubExp) {
    xs.iter_mut().for_each(|x| *x = f(*x));
}

fn rewrite_dims(idx: &mut [DimIndex], f: &mut dyn FnMut(SubExp) -> SubExp) {
    for d in idx {
        match d {
            DimIndex::Fix(i) => *i = f(*i),
            DimIndex::Slice { start, len, stride } => {
                *start = f(*start);
                *len = f(*len);
                *stride = f(*stride);
            }
        }
    }
}

fn rewrite_lambda_ret(l: &mut Lambda, f: &mut dyn FnMut(SubExp) -> SubExp) {
    l.ret.iter_mut().for_each(|t| rewrite_type(t, f));
}

fn rewrite_hist_ops(hists: &mut [HistOp], f: &mut dyn FnMut(SubExp) -> SubExp) {
    for op in hists {
        op.num_bins = f(op.num_bins);
        op.dests.iter_mut().for_each(|v| rewrite_var(v, f));
        rewrite_subexps(&mut op.neutral, f);
        rewrite_lambda_ret(&mut op.op, f);
    }
}

fn rewrite_soac(soac: &mut Soac, f: &mut dyn FnMut(SubExp) -> SubExp) {
    match soac {
        Soac::Screma {
            width,
            inputs,
            map,
            scans,
            reds,
        } => {
            *width = f(*width);
            inputs.iter_mut().for_each(|v| rewrite_var(v, f));
            rewrite_lambda_ret(map, f);
            for op in scans {
                rewrite_subexps(&mut op.neutral, f);
                rewrite_lambda_ret(&mut op.lambda, f);
            }
            for op in reds {
                rewrite_subexps(&mut op.neutral, f);
                rewrite_lambda_ret(&mut op.lambda, f);
            }
        }
        Soac::Scatter {
            width,
            inputs,
            map,
            dests,
        } => {
            *width = f(*width);
            inputs.iter_mut().for_each(|v| rewrite_var(v, f));
            rewrite_lambda_ret(map, f);
            dests.iter_mut().for_each(|v| rewrite_var(v, f));
        }
        Soac::Hist {
            width,
            inputs,
            map,
            hists,
        } => {
            *width = f(*width);
            inputs.iter_mut().for_each(|v| rewrite_var(v, f));
            rewrite_lambda_ret(map, f);
            rewrite_hist_ops(hists, f);
        }
    }
}

fn rewrite_seg(seg: &mut SegOp, f: &mut dyn FnMut(SubExp) -> SubExp) {
    seg.space
        .iter_mut()
        .for_each(|(_, extent)| *extent = f(*extent));
    seg.ret.iter_mut().for_each(|t| rewrite_type(t, f));
    match &mut seg.kind {
        SegKind::Map => {}
        SegKind::Red(reds) => {
            for op in reds {
                rewrite_subexps(&mut op.neutral, f);
                rewrite_lambda_ret(&mut op.lambda, f);
            }
        }
        SegKind::Scan(scans) => {
            for op in scans {
                rewrite_subexps(&mut op.neutral, f);
                rewrite_lambda_ret(&mut op.lambda, f);
            }
        }
        SegKind::Hist(hists) => rewrite_hist_ops(hists, f),
    }
}

/// The lambdas of a SOAC: the map lambda first, then the operators in order.
pub fn soac_lambdas(soac: &Soac) -> Vec<&Lambda> {
    let mut out = vec![soac.map_lambda()];
    match soac {
        Soac::Screma { scans, reds, .. } => {
            out.extend(scans.iter().map(|op| &op.lambda));
            out.extend(reds.iter().map(|op| &op.lambda));
        }
        Soac::Scatter { .. } => {}
        Soac::Hist { hists, .. } => out.extend(hists.iter().map(|op| &op.op)),
    }
    out
}

/// A body nested in an expression of the form `H`: an `if` branch or a loop body, of that form,
/// or a lambda's or kernel's body, core IR.
pub enum Nested<'a, H: Form> {
    Host(&'a Body<H>),
    Core(&'a Body),
}

/// A body nested in an expression, mutably (see [`Nested`]).
pub enum NestedMut<'a, H: Form> {
    Host(&'a mut Body<H>),
    Core(&'a mut Body),
}

impl<'a> Nested<'a, Core> {
    /// The body (in core IR both kinds are core bodies).
    pub fn body(self) -> &'a Body {
        match self {
            Nested::Host(b) | Nested::Core(b) => b,
        }
    }
}

impl<'a> NestedMut<'a, Core> {
    /// The body (in core IR both kinds are core bodies).
    pub fn body(self) -> &'a mut Body {
        match self {
            NestedMut::Host(b) | NestedMut::Core(b) => b,
        }
    }
}

/// The bodies nested directly in an expression, each with the variables bound for it (lambda
/// parameters, loop parameters and index, segment-space indices), in printing order.
pub fn nested_scopes<H: Form>(exp: &Exp<H>) -> Vec<(Vec<VarId>, Nested<'_, H>)> {
    fn lambda<H: Form>(l: &Lambda) -> (Vec<VarId>, Nested<'_, H>) {
        (l.params.clone(), Nested::Core(&l.body))
    }
    match exp {
        Exp::If {
            then_body,
            else_body,
            ..
        } => vec![
            (vec![], Nested::Host(then_body)),
            (vec![], Nested::Host(else_body)),
        ],
        Exp::Loop { params, form, body } => {
            let mut bound: Vec<VarId> = params.iter().map(|&(v, _)| v).collect();
            if let LoopForm::For { index, .. } = form {
                bound.push(*index);
            }
            vec![(bound, Nested::Host(body))]
        }
        Exp::Soac(soac) => soac_lambdas(soac).into_iter().map(lambda).collect(),
        Exp::Host(host) => match host.host() {
            HostOp::Seg(seg) => {
                let mut out: Vec<(Vec<VarId>, Nested<'_, H>)> = match &seg.kind {
                    SegKind::Map => vec![],
                    SegKind::Red(reds) => reds.iter().map(|op| lambda(&op.lambda)).collect(),
                    SegKind::Scan(scans) => scans.iter().map(|op| lambda(&op.lambda)).collect(),
                    SegKind::Hist(hists) => hists.iter().map(|op| lambda(&op.op)).collect(),
                };
                out.push((
                    seg.space.iter().map(|&(v, _)| v).collect(),
                    Nested::Core(&seg.body),
                ));
                out
            }
            HostOp::Threshold { .. } => vec![],
        },
        _ => vec![],
    }
}

/// The bodies nested directly in an expression, mutably, in the order of [`nested_scopes`].
pub fn nested_bodies_mut<H: Form>(exp: &mut Exp<H>) -> Vec<NestedMut<'_, H>> {
    match exp {
        Exp::If {
            then_body,
            else_body,
            ..
        } => vec![NestedMut::Host(then_body), NestedMut::Host(else_body)],
        Exp::Loop { body, .. } => vec![NestedMut::Host(body)],
        Exp::Soac(soac) => match soac {
            Soac::Screma {
                map, scans, reds, ..
            } => std::iter::once(&mut map.body)
                .chain(scans.iter_mut().map(|op| &mut op.lambda.body))
                .chain(reds.iter_mut().map(|op| &mut op.lambda.body))
                .map(NestedMut::Core)
                .collect(),
            Soac::Scatter { map, .. } => vec![NestedMut::Core(&mut map.body)],
            Soac::Hist { map, hists, .. } => std::iter::once(&mut map.body)
                .chain(hists.iter_mut().map(|op| &mut op.op.body))
                .map(NestedMut::Core)
                .collect(),
        },
        Exp::Host(host) => match host.host_mut() {
            HostOp::Seg(seg) => {
                let mut out: Vec<&mut Body> = match &mut seg.kind {
                    SegKind::Map => vec![],
                    SegKind::Red(reds) => reds.iter_mut().map(|op| &mut op.lambda.body).collect(),
                    SegKind::Scan(scans) => {
                        scans.iter_mut().map(|op| &mut op.lambda.body).collect()
                    }
                    SegKind::Hist(hists) => hists.iter_mut().map(|op| &mut op.op.body).collect(),
                };
                out.push(&mut seg.body);
                out.into_iter().map(NestedMut::Core).collect()
            }
            HostOp::Threshold { .. } => vec![],
        },
        _ => vec![],
    }
}

/// Calls `f` on every statement of the core `body` and of the bodies nested in it, outer
/// statements before the statements nested in them (code of either form: [`walk`]).
pub fn for_each_stmt<'b>(body: &'b Body, f: &mut impl FnMut(&'b Stmt)) {
    for stmt in &body.stmts {
        f(stmt);
        for (_, nested) in nested_scopes(&stmt.exp) {
            for_each_stmt(nested.body(), f);
        }
    }
}

/// What [`walk`] calls on every statement, of whichever form.
pub trait Visitor<'b> {
    fn stmt<H: Form>(&mut self, stmt: &'b Stmt<H>);
}

/// Calls `v` on every statement of `body` and of the bodies nested in it (host code and the
/// core code of its kernels), outer statements before the statements nested in them.
pub fn walk<'b, H: Form>(body: &'b Body<H>, v: &mut impl Visitor<'b>) {
    walk_stmts(&body.stmts, v);
}

/// [`walk`] over the statements `stmts` (part of a body).
pub fn walk_stmts<'b, H: Form>(stmts: &'b [Stmt<H>], v: &mut impl Visitor<'b>) {
    for stmt in stmts {
        v.stmt(stmt);
        for (_, nested) in nested_scopes(&stmt.exp) {
            match nested {
                Nested::Host(b) => walk(b, v),
                Nested::Core(b) => walk(b, v),
            }
        }
    }
}

/// Calls `use_var` on every variable occurrence in `stmt` (including nested bodies and the
/// sizes in the types of the variables it binds) and `bind` on every variable it binds.
fn visit_stmt<F: Form, H: Form>(
    function: &Function<F>,
    stmt: &Stmt<H>,
    use_var: &mut dyn FnMut(VarId),
    bind: &mut dyn FnMut(VarId),
) {
    for &v in &stmt.pat {
        visit_binder(function, v, use_var, bind);
    }
    for_each_operand(&stmt.exp, &mut |se| {
        if let SubExp::Var(v) = se {
            use_var(v);
        }
    });
    for (bound, body) in nested_scopes(&stmt.exp) {
        for v in bound {
            visit_binder(function, v, use_var, bind);
        }
        match body {
            Nested::Host(body) => visit_body(function, body, use_var, bind),
            Nested::Core(body) => visit_body(function, body, use_var, bind),
        }
    }
}

fn visit_binder<F: Form>(
    function: &Function<F>,
    v: VarId,
    use_var: &mut dyn FnMut(VarId),
    bind: &mut dyn FnMut(VarId),
) {
    bind(v);
    if let Some(info) = function.vars.get(v.index()) {
        for d in info.ty.shape() {
            if let SubExp::Var(size) = *d {
                use_var(size);
            }
        }
    }
}

fn visit_body<F: Form, H: Form>(
    function: &Function<F>,
    body: &Body<H>,
    use_var: &mut dyn FnMut(VarId),
    bind: &mut dyn FnMut(VarId),
) {
    for stmt in &body.stmts {
        visit_stmt(function, stmt, use_var, bind);
    }
    for r in &body.result {
        if let SubExp::Var(v) = *r {
            use_var(v);
        }
    }
}

/// The variables a statement uses but does not bind (sizes in the types of the variables it
/// binds included).
pub fn free_vars_stmt<F: Form, H: Form>(function: &Function<F>, stmt: &Stmt<H>) -> BTreeSet<VarId> {
    unbound_uses(|use_var, bind| visit_stmt(function, stmt, use_var, bind))
}

/// The variables a body uses but does not bind (a lambda's or loop's parameters are bound
/// outside its body, so they are free in it).
pub fn free_vars_body<F: Form, H: Form>(function: &Function<F>, body: &Body<H>) -> BTreeSet<VarId> {
    unbound_uses(|use_var, bind| visit_body(function, body, use_var, bind))
}

/// The variables that `visit` reports used but never reports bound.
fn unbound_uses(
    visit: impl FnOnce(&mut dyn FnMut(VarId), &mut dyn FnMut(VarId)),
) -> BTreeSet<VarId> {
    let (mut uses, mut binds) = (BTreeSet::new(), BTreeSet::new());
    visit(
        &mut |v| {
            uses.insert(v);
        },
        &mut |v| {
            binds.insert(v);
        },
    );
    uses.retain(|v| !binds.contains(v));
    uses
}

/// How many times each variable of the function's arena occurs in `body` (operands, results
/// and sizes in the types of bound variables), indexed by [`VarId::index`].
pub fn use_counts<F: Form, H: Form>(function: &Function<F>, body: &Body<H>) -> Vec<u32> {
    let mut counts = vec![0u32; function.vars.len()];
    visit_body(
        function,
        body,
        &mut |v| {
            if let Some(c) = counts.get_mut(v.index()) {
                *c += 1;
            }
        },
        &mut |_| {},
    );
    counts
}

/// `ty` with its dimensions substituted.
pub fn substitute_type(ty: &Type, subst: &Subst) -> Type {
    let mut out = ty.clone();
    if let Type::Array { shape, .. } = &mut out {
        for d in shape {
            *d = substitute_subexp(*d, subst);
        }
    }
    out
}

/// `se` with `subst` applied (not transitively).
pub fn substitute_subexp(se: SubExp, subst: &Subst) -> SubExp {
    match se {
        SubExp::Var(v) => subst.get(&v).copied().unwrap_or(se),
        SubExp::Const(_) => se,
    }
}

/// Applies `subst` to every operand of `body`, recursively (types in the arena are not
/// touched: see [`substitute_arena_types`]).
pub fn substitute_body<H: Form>(body: &mut Body<H>, subst: &Subst) {
    if subst.is_empty() {
        return;
    }
    for stmt in &mut body.stmts {
        substitute_exp(&mut stmt.exp, subst);
    }
    for r in &mut body.result {
        *r = substitute_subexp(*r, subst);
    }
}

/// Applies `subst` to every operand of `exp` and of the bodies nested in it.
pub fn substitute_exp<H: Form>(exp: &mut Exp<H>, subst: &Subst) {
    map_operands(exp, &mut |se| substitute_subexp(se, subst));
    for body in nested_bodies_mut(exp) {
        match body {
            NestedMut::Host(body) => substitute_body(body, subst),
            NestedMut::Core(body) => substitute_body(body, subst),
        }
    }
}

/// Applies `subst` to the dimensions of the types of every variable of the function's arena.
pub fn substitute_arena_types<F: Form>(function: &mut Function<F>, subst: &Subst) {
    if subst.is_empty() {
        return;
    }
    for info in &mut function.vars {
        if let Type::Array { shape, .. } = &mut info.ty {
            for d in shape {
                *d = resolve(*d, subst);
            }
        }
    }
}

/// `se` through `subst` until it is substituted no further. A type may name a variable that the
/// substitution maps to another one that a later rewrite substituted in turn (`let m = if
/// false then j else j` in a loop run once: `m` -> `j`, then the index `j` -> `0`); operands
/// never see such a chain, since the middle variable is out of scope where they are rewritten.
fn resolve(mut se: SubExp, subst: &Subst) -> SubExp {
    // Every variable is bound once, so a chain has no cycle and at most `subst.len()` steps.
    for _ in 0..=subst.len() {
        let next = substitute_subexp(se, subst);
        if next == se {
            break;
        }
        se = next;
    }
    se
}

/// The arrays consumed somewhere in the function (`Update` targets, `Scatter`/`Hist`
/// destinations, loop initial values), closed over aliasing: an array bound as a view or copy
/// of another (`let`, index, reshape, rearrange) or returned by an `if` or a loop aliases its
/// source, and consuming it consumes the source.
pub fn consumed_arrays<F: Form>(function: &Function<F>) -> HashSet<VarId> {
    let mut found = Consumed {
        function,
        consumed: HashSet::new(),
        alias_of: Vec::new(),
    };
    walk(&function.body, &mut found);
    close_over_aliases(function, found.consumed, found.alias_of)
}

/// The arrays that the statements `stmts` (and the code nested in them) consume, closed over
/// the aliasing of the whole function as in [`consumed_arrays`]: what may have changed in
/// place once they have run, when they are the statements after some point of a body.
pub fn consumed_arrays_by<F: Form, H: Form>(
    function: &Function<F>,
    stmts: &[Stmt<H>],
) -> HashSet<VarId> {
    let mut aliases = Consumed {
        function,
        consumed: HashSet::new(),
        alias_of: Vec::new(),
    };
    walk(&function.body, &mut aliases);
    let mut found = Consumed {
        function,
        consumed: HashSet::new(),
        alias_of: Vec::new(),
    };
    walk_stmts(stmts, &mut found);
    close_over_aliases(function, found.consumed, aliases.alias_of)
}

/// `consumed` closed over `alias_of` (pairs `(alias, source)`, among arrays).
fn close_over_aliases<F: Form>(
    function: &Function<F>,
    mut consumed: HashSet<VarId>,
    mut alias_of: Vec<(VarId, VarId)>,
) -> HashSet<VarId> {
    let is_array = |v: &VarId| function.ty(*v).rank() > 0;
    // Close over aliasing (of arrays): a consumed alias consumes its source, and a consumed
    // source invalidates its aliases, so both directions are marked.
    alias_of.retain(|(alias, _)| is_array(alias));
    loop {
        let before = consumed.len();
        for &(alias, source) in &alias_of {
            if consumed.contains(&alias) || consumed.contains(&source) {
                consumed.insert(alias);
                consumed.insert(source);
            }
        }
        if consumed.len() == before {
            return consumed;
        }
    }
}

/// The consumed arrays and the aliases among arrays that [`consumed_arrays`] closes over.
struct Consumed<'f, F: Form> {
    function: &'f Function<F>,
    consumed: HashSet<VarId>,
    alias_of: Vec<(VarId, VarId)>,
}

impl<F: Form> Visitor<'_> for Consumed<'_, F> {
    fn stmt<H: Form>(&mut self, stmt: &Stmt<H>) {
        let (consumed, alias_of) = (&mut self.consumed, &mut self.alias_of);
        let is_array = |v: &VarId| self.function.ty(*v).rank() > 0;
        match &stmt.exp {
            Exp::Update(v, _, _) => {
                consumed.insert(*v);
            }
            Exp::Soac(Soac::Scatter { dests, .. }) => consumed.extend(dests.iter().copied()),
            Exp::Soac(Soac::Hist { hists, .. }) => {
                consumed.extend(hists.iter().flat_map(|h| h.dests.iter().copied()))
            }
            Exp::Host(host) => {
                if let HostOp::Seg(seg) = host.host()
                    && let SegKind::Hist(hists) = &seg.kind
                {
                    consumed.extend(hists.iter().flat_map(|h| h.dests.iter().copied()));
                }
            }
            Exp::Loop { params, body, .. } => {
                for (k, (_, init)) in params.iter().enumerate() {
                    consumed.extend(init.as_var().filter(is_array));
                    let outputs = [Some(*init), body.result.get(k).copied()];
                    for source in outputs.into_iter().flatten().filter_map(|s| s.as_var()) {
                        alias_of.extend(stmt.pat.get(k).map(|&p| (p, source)));
                    }
                }
            }
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                for (k, &p) in stmt.pat.iter().enumerate() {
                    for body in [then_body, else_body] {
                        if let Some(SubExp::Var(source)) = body.result.get(k) {
                            alias_of.push((p, *source));
                        }
                    }
                }
            }
            Exp::SubExp(SubExp::Var(source))
            | Exp::Index(source, _)
            | Exp::Rearrange(source, _)
            | Exp::Reshape(source, _) => {
                alias_of.extend(stmt.pat.iter().map(|&p| (p, *source)));
            }
            _ => {}
        }
    }
}

/// Calls `visit` on every kernel of `program`, with the function it is in (host code nests
/// kernels only in `if`s and loops: a kernel's body holds no kernel).
pub fn for_each_kernel_mut(
    program: &mut kir::Program,
    visit: &mut impl FnMut(&kir::Function, &mut SegOp),
) {
    fn host_body(
        f: &kir::Function,
        body: &mut kir::HostBody,
        visit: &mut impl FnMut(&kir::Function, &mut SegOp),
    ) {
        for stmt in &mut body.stmts {
            if let crate::Exp::Host(HostOp::Seg(seg)) = &mut stmt.exp {
                visit(f, seg);
                continue;
            }
            for nested in nested_bodies_mut(&mut stmt.exp) {
                if let NestedMut::Host(b) = nested {
                    host_body(f, b, visit);
                }
            }
        }
    }
    for f in &mut program.functions {
        let mut body = std::mem::take(&mut f.body);
        host_body(f, &mut body, visit);
        f.body = body;
    }
}
