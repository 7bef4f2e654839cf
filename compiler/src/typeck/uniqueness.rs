//! Uniqueness checking: in-place updates are safe because nothing can observe the old array.
//!
//! Runs on each top-level definition that type-checked, walking it in evaluation order.
//! Every local variable is mapped to its alias *roots*: the variables whose arrays it may share
//! memory with (itself, for a fresh array). An expression *consumes* its array (and all aliases)
//! when it is `a with [i] = v`, `let a[i] = v`, the first argument of `scatter` or
//! `reduce_by_index`, or an argument for a `*`-typed parameter of a definition or local function.
//!
//! Errors: E0501 a variable used after one of its roots was consumed (pointing at the use and the
//! consumption); E0502 consuming a non-unique parameter (or a top-level definition); E0503
//! consuming, inside a lambda, local function or loop body, a variable bound outside it (it would
//! be consumed once per call or iteration); E0504 an argument or update value that aliases the
//! array consumed by the same operation, or a part of a tuple/record/array value that aliases an
//! array a later part consumes; E0505 a unique (`*`) result aliasing a non-unique
//! parameter.
//!
//! Approximations, all on the safe side: a value built from several arrays (a tuple, the result
//! of an `if`) aliases all of them; a call aliases its array arguments unless its result is fresh
//! (built-ins such as `map`; definitions whose body aliases none of their parameters); a
//! consumption in one branch of an `if` counts after the `if`, and the `if`'s value no longer
//! aliases what a branch consumed (`if b then xs with [0] = 1 else xs` is a new array). Loop
//! accumulators may be consumed in the body; doing so consumes the initial value.

use super::{Checker, Resolution};
use crate::syntax::ast::{BinOp, Def, Expr, ExprKind, IndexArg, LoopForm, Pattern, TypeExp};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;
use ogham_ir::types::Type;
use std::collections::{HashMap, HashSet};

/// The pseudo-root of arrays defined at top level (never consumable).
const GLOBAL: u32 = u32::MAX;

pub(super) fn check_def(checker: &mut Checker<'_>, def: &Def, key: (usize, usize)) {
    let mut u = Uniq {
        c: checker,
        roots: HashMap::new(),
        consumed: HashMap::new(),
        non_unique: HashMap::new(),
        depth_of: HashMap::new(),
        barriers: Vec::new(),
        reported: HashSet::new(),
    };
    let params = u.bind_params(&def.params);
    let result = u.expr(&def.body);
    let aliased: Vec<u32> = result
        .iter()
        .copied()
        .filter(|r| params.contains(r))
        .collect();
    if aliased.is_empty() {
        u.c.fresh_results.insert(key);
    }
    if let Some(ret @ TypeExp::Unique(..)) = &def.ret
        && let Some(r) = aliased.iter().find(|r| u.non_unique.contains_key(r))
    {
        let name = u.name(*r);
        let d = Diagnostic::error(
            "E0505",
            format!("unique result aliases the non-unique parameter `{name}`"),
        )
        .with_primary(
            super::result_expr(&def.body).span,
            format!("this may be `{name}` or share memory with it"),
        )
        .with_secondary(ret.span(), "the result is declared unique here")
        .with_help(format!(
            "return a copy (`copy {name}`) or make the parameter unique (`*`)"
        ));
        u.c.error(d);
    }
}

struct Uniq<'c, 'a> {
    c: &'c mut Checker<'a>,
    /// Alias roots of each binding.
    roots: HashMap<u32, Vec<u32>>,
    /// Consumed roots and where.
    consumed: HashMap<u32, Span>,
    /// Roots that may not be consumed: non-unique parameters, with their binding span.
    non_unique: HashMap<u32, Span>,
    /// Nesting depth (lambdas, local functions, loop bodies) at which each root was bound.
    depth_of: HashMap<u32, usize>,
    /// The enclosing lambdas / loops: span and what they are.
    barriers: Vec<(Span, &'static str)>,
    /// Bindings already reported as used after consumption.
    reported: HashSet<u32>,
}

impl Uniq<'_, '_> {
    fn name(&self, root: u32) -> String {
        match root {
            GLOBAL => "a top-level definition".into(),
            r => self
                .c
                .subst
                .rigid_names
                .get(r as usize)
                .cloned()
                .unwrap_or_default(),
        }
    }

    fn has_arrays(&self, e: &Expr) -> bool {
        self.c
            .expr_types
            .get(e.id.0 as usize)
            .and_then(Option::as_ref)
            .is_none_or(|t| contains_array(t, &|p| self.c.subst.param_classes.contains_key(p)))
    }

    /// Binds a fresh root for every variable of `pat` (parameters: consumable only if `*`).
    fn bind_params(&mut self, params: &[Pattern]) -> Vec<u32> {
        let mut ids = Vec::new();
        for p in params {
            self.bind_param(p, false, &mut ids);
        }
        ids
    }

    fn bind_param(&mut self, p: &Pattern, unique: bool, out: &mut Vec<u32>) {
        match p {
            Pattern::Var(name) => {
                if let Some(&b) = self.c.binders.get(&name.span) {
                    self.bind_root(b, vec![b]);
                    if !unique {
                        self.non_unique.insert(b, name.span);
                    }
                    out.push(b);
                }
            }
            Pattern::Wildcard(_) => {}
            Pattern::Tuple(ps, _) => ps.iter().for_each(|p| self.bind_param(p, unique, out)),
            Pattern::Record(fs, _) => fs.iter().for_each(|(_, p)| self.bind_param(p, unique, out)),
            Pattern::Ascribed(inner, t, _) => {
                self.bind_param(inner, matches!(t, TypeExp::Unique(..)), out)
            }
        }
    }

    fn bind_root(&mut self, b: u32, roots: Vec<u32>) {
        self.roots.insert(b, roots);
        self.depth_of.insert(b, self.barriers.len());
    }

    /// Binds the variables of `pat` to a value with alias roots `roots` (fresh if empty).
    fn bind_pattern(&mut self, pat: &Pattern, roots: &[u32]) {
        match pat {
            Pattern::Var(name) => {
                if let Some(&b) = self.c.binders.get(&name.span) {
                    let r = if roots.is_empty() {
                        vec![b]
                    } else {
                        roots.to_vec()
                    };
                    self.bind_root(b, r);
                }
            }
            Pattern::Wildcard(_) => {}
            Pattern::Tuple(ps, _) => ps.iter().for_each(|p| self.bind_pattern(p, roots)),
            Pattern::Record(fs, _) => fs.iter().for_each(|(_, p)| self.bind_pattern(p, roots)),
            Pattern::Ascribed(inner, _, _) => self.bind_pattern(inner, roots),
        }
    }

    /// Checks a use of binding `b` at `span`; returns its roots.
    fn use_binding(&mut self, b: u32, span: Span) -> Vec<u32> {
        let roots = self.roots.get(&b).cloned().unwrap_or_default();
        if let Some((r, at)) = roots
            .iter()
            .find_map(|r| self.consumed.get(r).map(|s| (*r, *s)))
            && self.reported.insert(b)
        {
            let name = self.name(b);
            let mut d =
                Diagnostic::error("E0501", format!("`{name}` is used after being consumed"))
                    .with_primary(span, "used here")
                    .with_secondary(at, "consumed here");
            if r != b {
                d = d.with_note(format!("`{name}` shares memory with `{}`", self.name(r)));
            }
            self.c
                .error(d.with_help("consume a copy (`copy ...`) if the original is still needed"));
        }
        roots
    }

    /// Consumes the arrays with roots `roots` (the expression at `span`).
    fn consume(&mut self, roots: &[u32], span: Span) {
        for &r in roots {
            if self.consumed.contains_key(&r) {
                continue; // reported as a use after consumption
            }
            let name = self.name(r);
            if r == GLOBAL {
                self.c.error(
                    Diagnostic::error("E0502", "a top-level definition cannot be consumed")
                        .with_primary(span, "consumed here")
                        .with_help("update a copy: `copy ...`"),
                );
            } else if let Some(&param) = self.non_unique.get(&r) {
                self.c.error(
                    Diagnostic::error("E0502", format!("cannot consume `{name}`, which is not unique"))
                        .with_primary(span, "consumed here")
                        .with_secondary(param, "not declared unique")
                        .with_help(format!(
                            "update a copy (`copy {name}`), or declare the parameter unique: `({name}: *[]t)`"
                        )),
                );
            } else if let Some(&(barrier, what)) =
                self.depth_of.get(&r).and_then(|d| self.barriers.get(*d))
            {
                self.c.error(
                    Diagnostic::error(
                        "E0503",
                        format!("cannot consume `{name}` inside this {what}"),
                    )
                    .with_primary(span, "consumed here")
                    .with_secondary(barrier, format!("`{name}` is bound outside this {what}"))
                    .with_help(format!("consume a copy made inside: `copy {name}`")),
                );
            }
            self.consumed.insert(r, span);
        }
    }

    /// Reports `other` aliasing arrays consumed by the same operation.
    fn check_overlap(&mut self, consumed: &[u32], other: &[u32], span: Span, at: Span) {
        if let Some(r) = other.iter().find(|r| consumed.contains(r) && **r != GLOBAL) {
            let name = self.name(*r);
            self.c.error(
                Diagnostic::error(
                    "E0504",
                    format!("this aliases `{name}`, which is consumed here"),
                )
                .with_primary(span, format!("shares memory with `{name}`"))
                .with_secondary(at, "consumed here")
                .with_help("use a copy: `copy ...`"),
            );
        }
    }

    /// Walks `e`; returns the roots of the arrays its value may share memory with.
    fn expr(&mut self, e: &Expr) -> Vec<u32> {
        let roots = self.expr_kind(e);
        if self.has_arrays(e) {
            roots
        } else {
            Vec::new()
        }
    }

    /// Walks the parts of one value (a tuple, an array literal, a record) in order; a part that
    /// consumes an array an earlier part's value aliases is an E0504 (the value would hold
    /// memory that was updated in place).
    fn exprs<'e>(&mut self, es: impl IntoIterator<Item = &'e Expr>) -> Vec<u32> {
        let mut out = Vec::new();
        let mut earlier: Vec<(Span, Vec<u32>)> = Vec::new();
        for e in es {
            let before: HashSet<u32> = self.consumed.keys().copied().collect();
            let roots = self.expr(e);
            let newly: Vec<u32> = self
                .consumed
                .keys()
                .filter(|r| !before.contains(r))
                .copied()
                .collect();
            for (span, aliases) in &earlier {
                self.check_overlap(&newly, aliases, *span, e.span);
            }
            earlier.push((e.span, roots.clone()));
            union(&mut out, roots);
        }
        out
    }

    fn index_args(&mut self, args: &[IndexArg]) {
        for arg in args {
            match arg {
                IndexArg::Index(i) => {
                    self.expr(i);
                }
                IndexArg::Slice {
                    start, end, stride, ..
                } => {
                    self.exprs([start, end, stride].into_iter().flatten());
                }
            }
        }
    }

    fn expr_kind(&mut self, e: &Expr) -> Vec<u32> {
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::OpSection(_) => Vec::new(),
            ExprKind::Var(_) => match self.c.resolutions.get(e.id.0 as usize).cloned().flatten() {
                Some(Resolution::Local) => match self.c.uses.get(&e.id).copied() {
                    Some(b) => self.use_binding(b, e.span),
                    None => Vec::new(),
                },
                Some(Resolution::Def { .. }) => vec![GLOBAL],
                _ => Vec::new(),
            },
            ExprKind::Tuple(es) => self.exprs(es),
            ExprKind::Record(fs) => self.exprs(fs.iter().map(|(_, e)| e)),
            ExprKind::ArrayLit(es) => {
                self.exprs(es);
                Vec::new()
            }
            ExprKind::Field(x, _) => self.expr(x),
            ExprKind::Index(x, args) => {
                let r = self.expr(x);
                self.index_args(args);
                r
            }
            ExprKind::Apply(f, args) => {
                let args: Vec<&Expr> = args.iter().collect();
                self.apply(f, &args)
            }
            ExprKind::BinOp(BinOp::PipeRight, x, f) | ExprKind::BinOp(BinOp::PipeLeft, f, x) => {
                self.apply(f, &[x])
            }
            ExprKind::BinOp(_, a, b) => {
                self.exprs([&**a, &**b]);
                Vec::new()
            }
            ExprKind::UnOp(_, x) | ExprKind::LeftSection(_, x) | ExprKind::RightSection(_, x) => {
                self.expr(x)
            }
            ExprKind::Lambda(params, _, body) => {
                self.barriers.push((e.span, "lambda"));
                self.bind_params(params);
                self.expr(body);
                self.barriers.pop();
                Vec::new()
            }
            ExprKind::Let(pat, value, body) => {
                let r = self.expr(value);
                self.bind_pattern(pat, &r);
                self.expr(body)
            }
            ExprKind::LetFun(fun, body) => {
                self.barriers.push((fun.name.span, "local function"));
                self.bind_params(&fun.params);
                self.expr(&fun.body);
                self.barriers.pop();
                self.expr(body)
            }
            ExprKind::LetWith(name, idx, value, body) => {
                self.index_args(idx);
                let rv = self.expr(value);
                let target = match self.c.uses.get(&e.id).copied() {
                    Some(b) => self.use_binding(b, name.span),
                    None => Vec::new(),
                };
                self.check_overlap(&target, &rv, value.span, name.span);
                self.consume(&target, name.span);
                if let Some(&b) = self.c.binders.get(&name.span) {
                    self.bind_root(b, vec![b]);
                }
                self.expr(body)
            }
            ExprKind::If(c, t, f) => {
                self.expr(c);
                let before = self.consumed.clone();
                let mut r = self.expr(t);
                let after_then = std::mem::replace(&mut self.consumed, before.clone());
                union(&mut r, self.expr(f));
                self.consumed.extend(after_then);
                // An array consumed in one branch can only reach the result through the other
                // branch, where it was not consumed: the result then takes its place (as an
                // update's result does), so it stays usable while the array itself is not.
                r.retain(|root| before.contains_key(root) || !self.consumed.contains_key(root));
                r
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.walk_loop(e, pat, init.as_deref(), form, body),
            ExprKind::Update(arr, idx, value) => {
                self.index_args(idx);
                let rv = self.expr(value);
                let target = self.expr(arr);
                self.check_overlap(&target, &rv, value.span, arr.span);
                self.consume(&target, arr.span);
                Vec::new()
            }
            ExprKind::RecordUpdate(r, _, v) => self.exprs([&**r, &**v]),
            ExprKind::Ascribe(x, _) | ExprKind::Coerce(x, _) => self.expr(x),
            ExprKind::Assert(c, _, x) => {
                self.expr(c);
                self.expr(x)
            }
            ExprKind::Trace(_, x) => self.expr(x),
        }
    }

    fn apply(&mut self, f: &Expr, args: &[&Expr]) -> Vec<u32> {
        let callee = self.expr(f);
        let arg_roots: Vec<Vec<u32>> = args.iter().map(|a| self.expr(a)).collect();
        let resolution = self.c.resolutions.get(f.id.0 as usize).cloned().flatten();
        let (consumes, fresh): (Vec<bool>, bool) = match &resolution {
            Some(Resolution::Builtin(b)) => {
                let consumes = (0..b.arity()).map(|i| b.consumes(i)).collect();
                (consumes, b.result_is_fresh())
            }
            Some(Resolution::Def { module, decl }) => (
                self.c
                    .schemes
                    .get(&(*module, *decl))
                    .map(|s| s.consumes.clone())
                    .unwrap_or_default(),
                self.c.fresh_results.contains(&(*module, *decl)),
            ),
            Some(Resolution::Local) => (
                self.c
                    .uses
                    .get(&f.id)
                    .and_then(|b| self.c.local_funs.get(b))
                    .map(|s| s.consumes.clone())
                    .unwrap_or_default(),
                false,
            ),
            None => (Vec::new(), false),
        };
        let mut result = Vec::new();
        for (i, (arg, roots)) in args.iter().zip(&arg_roots).enumerate() {
            if consumes.get(i).copied().unwrap_or(false) {
                for (j, (other, other_roots)) in args.iter().zip(&arg_roots).enumerate() {
                    if j != i {
                        self.check_overlap(roots, other_roots, other.span, arg.span);
                    }
                }
                self.consume(roots, arg.span);
            } else if !fresh {
                union(&mut result, roots.clone());
            }
        }
        if !fresh && !matches!(resolution, Some(Resolution::Def { .. })) {
            union(&mut result, callee);
        }
        result
    }

    fn walk_loop(
        &mut self,
        e: &Expr,
        pat: &Pattern,
        init: Option<&Expr>,
        form: &LoopForm,
        body: &Expr,
    ) -> Vec<u32> {
        let (init_roots, init_span) = match init {
            Some(init) => (self.expr(init), init.span),
            None => {
                let mut roots = Vec::new();
                for b in self.c.loop_sources.get(&e.id).cloned().unwrap_or_default() {
                    union(&mut roots, self.use_binding(b, pat.span()));
                }
                (roots, pat.span())
            }
        };
        let elem_roots = match form {
            LoopForm::For(_, n) => {
                self.expr(n);
                Vec::new()
            }
            LoopForm::Range(_, lo, hi) => {
                self.expr(lo);
                self.expr(hi);
                Vec::new()
            }
            LoopForm::ForIn(_, xs) => self.expr(xs),
            LoopForm::While(_) => Vec::new(),
        };
        self.barriers.push((e.span, "loop"));
        let mut acc = Vec::new();
        self.bind_params_fresh(pat, &mut acc);
        match form {
            LoopForm::ForIn(p, _) => self.bind_pattern(p, &elem_roots),
            LoopForm::While(c) => {
                self.expr(c);
            }
            LoopForm::For(..) | LoopForm::Range(..) => {}
        }
        let result = self.expr(body);
        self.barriers.pop();
        let acc_consumed = acc.iter().any(|r| self.consumed.contains_key(r));
        for r in &acc {
            self.consumed.remove(r);
        }
        if acc_consumed {
            self.consume(&init_roots, init_span);
            Vec::new()
        } else {
            let mut r = init_roots;
            union(
                &mut r,
                result.into_iter().filter(|r| !acc.contains(r)).collect(),
            );
            r
        }
    }

    /// Binds the loop parameter's variables as fresh, consumable roots.
    fn bind_params_fresh(&mut self, pat: &Pattern, out: &mut Vec<u32>) {
        match pat {
            Pattern::Var(name) => {
                if let Some(&b) = self.c.binders.get(&name.span) {
                    self.bind_root(b, vec![b]);
                    out.push(b);
                }
            }
            Pattern::Wildcard(_) => {}
            Pattern::Tuple(ps, _) => ps.iter().for_each(|p| self.bind_params_fresh(p, out)),
            Pattern::Record(fs, _) => fs.iter().for_each(|(_, p)| self.bind_params_fresh(p, out)),
            Pattern::Ascribed(inner, _, _) => self.bind_params_fresh(inner, out),
        }
    }
}

/// Whether a value of type `t` may hold an array; `is_prim` tells the type parameters that
/// stand for primitive types (constrained ones) from those that may be arrays.
fn contains_array(t: &Type, is_prim: &dyn Fn(&str) -> bool) -> bool {
    match t {
        Type::Param(p) => !is_prim(p),
        Type::Array(..) | Type::Var(_) => true,
        Type::Tuple(ts) => ts.iter().any(|t| contains_array(t, is_prim)),
        Type::Record(fs) => fs.iter().any(|(_, t)| contains_array(t, is_prim)),
        Type::Prim(_) | Type::Fun(..) => false,
    }
}

fn union(a: &mut Vec<u32>, b: Vec<u32>) {
    for r in b {
        if !a.contains(&r) {
            a.push(r);
        }
    }
}
