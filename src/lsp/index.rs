//! An index of the root module for position queries: every expression with its span, every
//! name a pattern binds (with its type, where the checker has it, and the span of the code
//! that sees it), and every variable reference with what it refers to.
//!
//! Type aliases named in written types are references too, resolved by name among the aliases
//! of the root module and the modules it imports. Locals are resolved here by scope, walking the AST as the type checker does (a `let` body,
//! a lambda body, a loop body and a definition's body see the names their patterns bind; a
//! later binding of a name shadows an earlier one); top-level names and built-ins come from the
//! checker's resolutions.
//!
//! Invariants: all spans are in the root module's file; binder and reference lists are in the
//! order the walk meets them; a type is `None` rather than a guess where the checker gives
//! none (a local function's parameters).

use ogham_compiler::syntax::ast::{
    Decl, Expr, ExprId, ExprKind, Ident, IndexArg, LoopForm, Pattern, Program, TypeArg, TypeExp,
};
use ogham_compiler::typeck::{Checked, Resolution};
use ogham_ir::source::Span;
use ogham_ir::types::Type;
use std::collections::HashMap;

/// What kind of binding a name is (inlay hints show `let`s and lambda parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinderKind {
    Param,
    Let,
    LambdaParam,
    Loop,
    LocalFun,
}

/// A name bound by a pattern.
#[derive(Clone, Debug)]
pub struct Binder {
    pub name: String,
    pub span: Span,
    pub ty: Option<Type>,
    pub kind: BinderKind,
    /// The pattern has a written type (`(x: f32)`).
    pub annotated: bool,
    /// Where the name is in scope (byte offsets).
    pub scope: (u32, u32),
}

/// What a variable reference refers to.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// A binder (index into [`Index::binders`]).
    Local(usize),
    Def {
        module: usize,
        decl: usize,
    },
    Builtin,
    Unresolved,
}

/// A variable reference, or a type alias's name in a written type.
#[derive(Clone, Debug)]
pub struct Ref {
    pub span: Span,
    /// The variable's expression (`None` for a type name).
    pub expr: Option<ExprId>,
    pub name: String,
    pub target: Target,
}

/// The index of one root module.
#[derive(Default)]
pub struct Index {
    pub exprs: Vec<(Span, ExprId)>,
    pub binders: Vec<Binder>,
    pub refs: Vec<Ref>,
}

/// The walk's state: the index being built and the binders in scope.
struct Walker<'a> {
    checked: &'a Checked,
    index: Index,
    scope: Vec<usize>,
    /// The type aliases the root module sees, by name: `(module, decl)`.
    aliases: HashMap<&'a str, (usize, usize)>,
}

impl Index {
    pub fn build(program: &Program, checked: &Checked) -> Index {
        let module = program.modules.len().saturating_sub(1);
        let mut w = Walker {
            checked,
            index: Index::default(),
            scope: Vec::new(),
            aliases: visible_aliases(program, module),
        };
        for (decl, d) in program
            .modules
            .last()
            .map_or(&[][..], |m| &m.decls)
            .iter()
            .enumerate()
        {
            let Decl::Def(def) = d else { continue };
            let mut ty = checked.def_types.get(&(module, decl));
            let body = def.body.span;
            if let Some(t) = &def.ret {
                w.type_exp(t);
            }
            for p in &def.params {
                let (arg, rest) = split_fun(ty);
                w.bind(p, arg, BinderKind::Param, body);
                ty = rest;
            }
            w.expr(&def.body);
            w.scope.clear();
        }
        w.index
    }

    /// The innermost binder whose name's span contains `offset`.
    pub fn binder_at(&self, offset: u32) -> Option<&Binder> {
        self.binders
            .iter()
            .filter(|b| b.span.start <= offset && offset <= b.span.end)
            .min_by_key(|b| b.span.end - b.span.start)
    }

    /// The reference whose span contains `offset`.
    pub fn ref_at(&self, offset: u32) -> Option<&Ref> {
        self.refs
            .iter()
            .filter(|r| r.span.start <= offset && offset <= r.span.end)
            .min_by_key(|r| r.span.end - r.span.start)
    }

    /// The smallest expression whose span contains `offset`.
    pub fn expr_at(&self, offset: u32) -> Option<(Span, ExprId)> {
        self.exprs
            .iter()
            .filter(|(s, _)| s.start <= offset && offset < s.end)
            .min_by_key(|(s, _)| s.end - s.start)
            .copied()
    }

    /// The binders in scope at `offset`, innermost (latest) last.
    pub fn in_scope(&self, offset: u32) -> impl Iterator<Item = &Binder> {
        self.binders
            .iter()
            .filter(move |b| b.scope.0 <= offset && offset <= b.scope.1)
    }
}

/// The type aliases module `module` sees: those of the modules it imports, then its own (a
/// later one of a name shadows an earlier one).
fn visible_aliases(program: &Program, module: usize) -> HashMap<&str, (usize, usize)> {
    let imports = program.modules.get(module).map_or(&[][..], |m| &m.imports);
    let mut aliases = HashMap::new();
    for &m in imports.iter().chain([&module]) {
        let decls = program.modules.get(m).map_or(&[][..], |m| &m.decls);
        for (i, d) in decls.iter().enumerate() {
            if let Decl::TypeAlias(t) = d {
                aliases.insert(t.name.name.as_str(), (m, i));
            }
        }
    }
    aliases
}

/// The parameter and result types of a function type.
fn split_fun(ty: Option<&Type>) -> (Option<&Type>, Option<&Type>) {
    match ty {
        Some(Type::Fun(a, b)) => (Some(a), Some(b)),
        _ => (None, None),
    }
}

impl Walker<'_> {
    fn type_of(&self, e: &Expr) -> Option<&Type> {
        self.checked.expr_types.get(e.id.0 as usize)
    }

    /// Binds the names of `p`, whose value has type `ty`, in scope over `scope`.
    fn bind(&mut self, p: &Pattern, ty: Option<&Type>, kind: BinderKind, scope: Span) {
        self.bind_pattern(p, ty, kind, scope, false);
    }

    fn bind_pattern(
        &mut self,
        p: &Pattern,
        ty: Option<&Type>,
        kind: BinderKind,
        scope: Span,
        annotated: bool,
    ) {
        match p {
            Pattern::Var(id) => self.bind_name(id, ty.cloned(), kind, scope, annotated),
            Pattern::Wildcard(_) => {}
            Pattern::Tuple(ps, _) => {
                let ts = match ty {
                    Some(Type::Tuple(ts)) if ts.len() == ps.len() => Some(ts),
                    _ => None,
                };
                for (i, p) in ps.iter().enumerate() {
                    let t = ts.and_then(|ts| ts.get(i));
                    self.bind_pattern(p, t, kind, scope, annotated);
                }
            }
            Pattern::Record(fields, _) => {
                for (name, p) in fields {
                    let t = match ty {
                        Some(Type::Record(fs)) => {
                            fs.iter().find(|(f, _)| *f == name.name).map(|(_, t)| t)
                        }
                        _ => None,
                    };
                    self.bind_pattern(p, t, kind, scope, annotated);
                }
            }
            Pattern::Ascribed(p, t, _) => {
                self.type_exp(t);
                self.bind_pattern(p, ty, kind, scope, true);
            }
        }
    }

    /// Records the type aliases named in a written type.
    fn type_exp(&mut self, t: &TypeExp) {
        match t {
            TypeExp::Prim(..) => {}
            TypeExp::Array(_, t, _) | TypeExp::Unique(t, _) => self.type_exp(t),
            TypeExp::Tuple(ts, _) => ts.iter().for_each(|t| self.type_exp(t)),
            TypeExp::Record(fs, _) => fs.iter().for_each(|(_, t)| self.type_exp(t)),
            TypeExp::Arrow(a, b, _) => {
                self.type_exp(a);
                self.type_exp(b);
            }
            TypeExp::Name(name, args, _) => {
                if let Some(&(module, decl)) = self.aliases.get(name.name.as_str()) {
                    self.index.refs.push(Ref {
                        span: name.span,
                        expr: None,
                        name: name.name.clone(),
                        target: Target::Def { module, decl },
                    });
                }
                for a in args {
                    if let TypeArg::Type(t) = a {
                        self.type_exp(t);
                    }
                }
            }
        }
    }

    fn bind_name(
        &mut self,
        id: &Ident,
        ty: Option<Type>,
        kind: BinderKind,
        scope: Span,
        annotated: bool,
    ) {
        self.scope.push(self.index.binders.len());
        self.index.binders.push(Binder {
            name: id.name.clone(),
            span: id.span,
            ty,
            kind,
            annotated,
            scope: (scope.start, scope.end),
        });
    }

    /// Walks `e` with the binders in scope, then drops the ones it bound.
    fn scoped(&mut self, e: &Expr) {
        let depth = self.scope.len();
        self.expr(e);
        self.scope.truncate(depth);
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scope
            .iter()
            .rev()
            .copied()
            .find(|&b| self.index.binders[b].name == name)
    }

    fn var(&mut self, e: &Expr, name: String) {
        let target = match self.checked.resolutions.get(e.id.0 as usize) {
            Some(Some(Resolution::Local)) => {
                self.lookup(&name).map_or(Target::Unresolved, Target::Local)
            }
            Some(Some(Resolution::Def { module, decl })) => Target::Def {
                module: *module,
                decl: *decl,
            },
            Some(Some(Resolution::Builtin(_))) => Target::Builtin,
            _ => Target::Unresolved,
        };
        self.index.refs.push(Ref {
            span: e.span,
            expr: Some(e.id),
            name,
            target,
        });
    }

    fn index_args(&mut self, args: &[IndexArg]) {
        for a in args {
            match a {
                IndexArg::Index(e) => self.expr(e),
                IndexArg::Slice {
                    start, end, stride, ..
                } => {
                    for e in [start, end, stride].into_iter().flatten() {
                        self.expr(e);
                    }
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        self.index.exprs.push((e.span, e.id));
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::OpSection(_) => {}
            ExprKind::Var(q) => self.var(e, q.to_string()),
            ExprKind::Tuple(es) | ExprKind::ArrayLit(es) => es.iter().for_each(|e| self.expr(e)),
            ExprKind::Record(fs) => fs.iter().for_each(|(_, e)| self.expr(e)),
            ExprKind::Field(e, _)
            | ExprKind::UnOp(_, e)
            | ExprKind::LeftSection(_, e)
            | ExprKind::RightSection(_, e)
            | ExprKind::Trace(_, e) => self.expr(e),
            ExprKind::Ascribe(e, t) | ExprKind::Coerce(e, t) => {
                self.expr(e);
                self.type_exp(t);
            }
            ExprKind::Index(a, args) => {
                self.expr(a);
                self.index_args(args);
            }
            ExprKind::Apply(f, args) => {
                self.expr(f);
                args.iter().for_each(|e| self.expr(e));
            }
            ExprKind::BinOp(_, a, b) | ExprKind::Assert(a, _, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::If(c, t, f) => {
                self.expr(c);
                self.expr(t);
                self.expr(f);
            }
            ExprKind::Update(a, args, v) => {
                self.expr(a);
                self.index_args(args);
                self.expr(v);
            }
            ExprKind::RecordUpdate(r, _, v) => {
                self.expr(r);
                self.expr(v);
            }
            _ => self.binding_expr(e),
        }
    }

    /// The expressions that bind names: lambdas, `let`s and loops.
    fn binding_expr(&mut self, e: &Expr) {
        let depth = self.scope.len();
        match &e.kind {
            ExprKind::Lambda(ps, ret, body) => {
                if let Some(t) = ret {
                    self.type_exp(t);
                }
                let mut ty = self.type_of(e).cloned();
                for p in ps {
                    let (arg, rest) = split_fun(ty.as_ref());
                    let (arg, rest) = (arg.cloned(), rest.cloned());
                    self.bind(p, arg.as_ref(), BinderKind::LambdaParam, body.span);
                    ty = rest;
                }
                self.expr(body);
            }
            ExprKind::Let(p, value, body) => {
                self.scoped(value);
                let ty = self.type_of(value).cloned();
                self.bind(p, ty.as_ref(), BinderKind::Let, body.span);
                self.expr(body);
            }
            ExprKind::LetFun(f, body) => {
                if let Some(t) = &f.ret {
                    self.type_exp(t);
                }
                for p in &f.params {
                    self.bind(p, None, BinderKind::Param, f.body.span);
                }
                self.scoped(&f.body);
                self.scope.truncate(depth);
                self.bind_name(&f.name, None, BinderKind::LocalFun, body.span, false);
                self.expr(body);
            }
            ExprKind::LetWith(name, args, value, body) => {
                self.index_args(args);
                self.scoped(value);
                let ty = self
                    .lookup(&name.name)
                    .and_then(|b| self.index.binders[b].ty.clone());
                self.bind_name(name, ty, BinderKind::Let, body.span, false);
                self.expr(body);
            }
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.loop_expr(e, pat, init.as_deref(), form, body),
            _ => {}
        }
        self.scope.truncate(depth);
    }

    fn loop_expr(
        &mut self,
        e: &Expr,
        pat: &Pattern,
        init: Option<&Expr>,
        form: &LoopForm,
        body: &Expr,
    ) {
        if let Some(init) = init {
            self.scoped(init);
        }
        match form {
            LoopForm::For(i, n) => {
                self.scoped(n);
                let ty = self.type_of(n).cloned();
                self.bind_name(i, ty, BinderKind::Loop, body.span, false);
            }
            LoopForm::ForIn(p, xs) => {
                self.scoped(xs);
                let elem = match self.type_of(xs) {
                    Some(Type::Array(t, _)) => Some((**t).clone()),
                    _ => None,
                };
                self.bind(p, elem.as_ref(), BinderKind::Loop, body.span);
            }
            LoopForm::Range(i, lo, hi) => {
                self.scoped(lo);
                self.scoped(hi);
                let ty = self.type_of(lo).cloned();
                self.bind_name(i, ty, BinderKind::Loop, body.span, false);
            }
            LoopForm::While(c) => {
                let ty = self.type_of(e).cloned();
                self.bind(pat, ty.as_ref(), BinderKind::Loop, c.span.to(body.span));
                self.expr(c);
                self.expr(body);
                return;
            }
        }
        let ty = self.type_of(e).cloned();
        self.bind(pat, ty.as_ref(), BinderKind::Loop, body.span);
        self.expr(body);
    }
}
