//! Type checking: names, types, sizes, polymorphism and uniqueness.
//!
//! [`check`] walks the modules of a [`Program`] in dependency order and every top-level
//! declaration in source order, and fills three side tables keyed by [`ExprId`]: the type of
//! every expression, what every variable refers to, and the root module's entry points.
//!
//! * **Names** (`names.rs`): a module sees its own earlier definitions and the definitions of the
//!   modules it imports (the prelude first; a later definition of a name shadows an earlier one).
//!   Locals shadow globals; built-ins are the fallback for plain names; qualified names
//!   (`f32.sqrt`) are always built-ins. A definition cannot see itself (no recursion).
//! * **Types** (`infer.rs`, `unify.rs`): Hindley–Milner inference. Top-level and local functions
//!   are generalised over their *unconstrained* type variables; overloaded operators, math
//!   functions and unsuffixed literals use variables constrained to a set of primitive types,
//!   which are never generalised: at the end of each top-level definition they default to `i32`
//!   (integers, any number) or `f64` (floats). Field access on a not-yet-known type records a
//!   "has field" constraint, resolved when the type becomes known; if it never does, the
//!   checker asks for an annotation.
//! * **Sizes**: a size is a constant, a rigid name (a size parameter `[n]`, or an `i64`
//!   variable used as a size: `iota n`, `[n]f32`), a variable, or unknown (existential).
//!   Statically checked (`E0401`): sizes unify only if they are equal — the same constant, the
//!   same name (by binding, so shadowing cannot confuse two `n`s), or the same unknown size —
//!   or one of them is a variable. Sizes flow through types: `map2` over `[n]` and `[n]` gives
//!   `[n]`; `iota n`, `replicate n` give `[n]`; `let n = length xs` makes `n` the size of `xs`;
//!   a definition's size parameters and `(k: i64)` parameters used in its types are instantiated
//!   at each call (`f 3 (iota 4)` against `(k: i64) (xs: [k]i64)` is an error). Unknown sizes
//!   come from `filter`, `partition`, `concat`, `flatten`, slices, `iota (n+1)` and from names
//!   bound inside a function that escape in its result type; each is equal only to itself, so
//!   using one where `[n]` is required is an error that `:>` fixes. `[]t` in an annotation is a
//!   size variable (any size); in a definition's type it becomes an anonymous size parameter.
//!   Checked at run time instead (the interpreter must check these shapes): `e :> t`, the
//!   value written into a slice (`a with [i:j] = v`), the results of `if` branches and loop
//!   bodies whose sizes differ (such a result gets an unknown size; inside the loop body the
//!   accumulator keeps the initial value's sizes), `unflatten`, and every array operation
//!   applied to arrays whose sizes are unknown.
//! * **Uniqueness** (`uniqueness.rs`): runs on each definition that type-checked, see there.
//! * **Entry points**: `entry` definitions of the root module must be monomorphic and first
//!   order (`E0601`, `E0602`).
//!
//! Errors do not stop the checker: an erroneous expression gets the error type, which unifies
//! with everything, so one mistake is reported once. Error codes are listed in `docs/errors.md`.

mod builtins_types;
mod entry;
mod infer;
mod names;
mod spacing;
mod trace;
mod unify;
mod uniqueness;

use crate::builtins::Builtin;
use crate::syntax::ast::{Decl, Def, Expr, ExprId, ExprKind, Ident, Program};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::{SourceMap, Span};
use ogham_ir::types::{PrimType, Type, TypeArgs};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use unify::{Constraint, Mismatch, PrimSet, Subst, Sz, Ty};

/// What a variable reference ([`crate::syntax::ast::ExprKind::Var`]) denotes.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolution {
    /// A variable bound by a pattern, a lambda, a loop or a size parameter in scope.
    Local,
    /// Top-level declaration `decl` of module `module` (indices into `Program::modules` and
    /// `Module::decls`).
    Def {
        module: usize,
        decl: usize,
    },
    Builtin(Builtin),
}

/// An entry point of the root module, as callers see it.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    pub name: String,
    /// Index of the `Def` in the root module's `decls`.
    pub decl: usize,
    /// Parameter names (the pattern's text for non-variable patterns) and types.
    pub params: Vec<(String, Type)>,
    /// Result types; a tuple result is several outputs.
    pub results: Vec<Type>,
    /// For each result that is a record or an array of records, its field names in the order
    /// the entry's written return type declares them (the type sorts them); empty for the
    /// other results, and empty altogether when no result is a declared record.
    pub fields: Vec<Vec<String>>,
    pub span: Span,
}

/// The result of type checking a program.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The type of every expression, indexed by `ExprId`; all inference variables resolved
    /// (unconstrained ones defaulted: integers to `i32`, floats to `f64`).
    pub expr_types: Vec<Type>,
    /// What each `Var` expression refers to, indexed by `ExprId` (`None` for other expressions).
    pub resolutions: Vec<Option<Resolution>>,
    pub entries: Vec<EntryPoint>,
    /// The type of every top-level definition, by `(module, decl)` (type parameters appear as
    /// [`Type::Param`]; inferred ones are named `a`, `b`, ...).
    pub def_types: HashMap<(usize, usize), Type>,
    /// For each use of a polymorphic definition or local function (the `Var` expression): the
    /// values of its type parameters there, which may mention the type parameters of the
    /// definition the use is in. The interpreter and the lowering follow these to give the
    /// expressions of a polymorphic body their types at each instance ([`Checked::type_of`]).
    pub instantiations: HashMap<ExprId, Vec<(String, Type)>>,
}

impl Checked {
    /// The type of expression `id` in an instance whose type parameters have the values `args`.
    pub fn type_of(&self, id: ExprId, args: &TypeArgs) -> std::borrow::Cow<'_, Type> {
        let t = &self.expr_types[id.0 as usize];
        if t.has_params() {
            std::borrow::Cow::Owned(t.substitute(args))
        } else {
            std::borrow::Cow::Borrowed(t)
        }
    }

    /// The type arguments of the callee at use `id`, made concrete with the caller's `args`
    /// (empty if the callee is not polymorphic).
    pub fn type_args_at(&self, id: ExprId, args: &TypeArgs) -> TypeArgs {
        self.instantiations
            .get(&id)
            .map(|inst| {
                inst.iter()
                    .map(|(p, t)| (p.clone(), t.substitute(args)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Checks a loaded program, reporting every error found (not only the first).
pub fn check(sources: &SourceMap, program: &Program) -> Result<Checked, Vec<Diagnostic>> {
    let (checked, diags) = check_partial(sources, program);
    if diags.is_empty() {
        Ok(checked)
    } else {
        Err(diags)
    }
}

/// [`check`] for tools that work on programs with errors (the language server): the side
/// tables as far as checking got, whatever the errors, with every diagnostic. An erroneous
/// expression has whatever type inference left it (often a type variable); the tables must not
/// be given to the later passes unless the diagnostics are empty.
pub fn check_partial(sources: &SourceMap, program: &Program) -> (Checked, Vec<Diagnostic>) {
    let mut checker = Checker::new(sources, program);
    for module in 0..program.modules.len() {
        checker.check_module(module);
    }
    checker.into_parts()
}

/// A (possibly polymorphic) type of a definition or local function.
#[derive(Clone, Debug)]
struct Scheme {
    /// Type parameters, rigid in `ty`, instantiated with fresh variables at each use (with the
    /// class of a constrained one as the variable's constraint).
    tparams: Vec<(String, Option<PrimSet>)>,
    /// Rigid sizes of `ty` instantiated at each use: by binding id, with the index of the value
    /// parameter whose *value* is that size (`def f (n: i64) : [n]f32`, `iota n`), if any.
    sparams: Vec<(u32, Option<usize>)>,
    /// Rigid sizes of `ty` bound inside the body: a fresh unknown size at each use.
    existentials: Vec<u32>,
    ty: Ty,
    /// Which parameters are unique (`*t`): the argument is consumed.
    consumes: Vec<bool>,
}

/// A type alias: parameters and body, with type parameters as [`Ty::Param`] and size
/// parameters as rigid sizes.
#[derive(Clone, Debug)]
struct Alias {
    params: Vec<AliasParam>,
    /// Anonymous sizes (`[]`) of the body, fresh at each use.
    anonymous: Vec<u32>,
    ty: Ty,
}

#[derive(Clone, Debug)]
enum AliasParam {
    Type(String),
    /// The binding id of the size parameter (a rigid size in the body).
    Size(u32),
}

/// A local variable in scope.
#[derive(Clone, Debug)]
struct Local {
    name: String,
    /// Binding id (unique in the program run; also the id of the rigid size it may name).
    id: u32,
    ty: Ty,
    /// Local functions are polymorphic.
    scheme: Option<Rc<Scheme>>,
    /// The size this variable denotes when used as one (`iota n`, `[n]f32`).
    size: Sz,
}

struct Checker<'a> {
    sources: &'a SourceMap,
    program: &'a Program,
    subst: Subst,
    diags: Vec<Diagnostic>,

    /// Types of the expressions of the definition being checked.
    pending: Vec<Option<Ty>>,
    /// Expressions of the definition being checked, in the order they were visited.
    def_exprs: Vec<ExprId>,
    /// Traced values of the definition being checked (`trace.rs`: shape check at the end).
    traces: Vec<(Span, Ty)>,
    /// Integer literals without suffix of the definition being checked (range check at the end).
    int_lits: Vec<(ExprId, u64, Span)>,
    /// Uses of polymorphic functions in the definition being checked, with their type arguments.
    def_instantiations: Vec<(ExprId, Vec<(String, Ty)>)>,
    instantiations: HashMap<ExprId, Vec<(String, Type)>>,
    expr_types: Vec<Option<Type>>,
    resolutions: Vec<Option<Resolution>>,

    /// Binding id of the local each `Var` (and `let a[i] = ...`, for `a`) refers to.
    uses: HashMap<ExprId, u32>,
    /// Binding id of each binding occurrence of a name, by its span.
    binders: HashMap<Span, u32>,
    /// For `loop (a, b) for ...` without `= init`: the bindings that are the initial values.
    loop_sources: HashMap<ExprId, Vec<u32>>,

    locals: Vec<Local>,
    /// Type parameters in scope (`'a` of the enclosing definitions).
    type_params: Vec<String>,
    /// Names of type parameters used so far in the current definition (declared or inferred).
    used_param_names: HashSet<String>,
    /// Global definitions and type aliases visible in the current module.
    globals: HashMap<String, (usize, usize)>,
    type_aliases: HashMap<String, (usize, usize)>,
    schemes: HashMap<(usize, usize), Rc<Scheme>>,
    aliases: HashMap<(usize, usize), Rc<Alias>>,
    /// Schemes of local functions, by binding id (for uniqueness).
    local_funs: HashMap<u32, Rc<Scheme>>,
    /// Definitions whose result never aliases their parameters (for uniqueness).
    fresh_results: HashSet<(usize, usize)>,
    /// The definition being checked (for the "recursion" error).
    current_def: Option<String>,
    /// Applications `r [i]` of a callee of unknown type in the definition being checked: the
    /// span of `r [i]` and the help (see `spacing`).
    spaced_calls: Vec<(Span, String)>,

    entries: Vec<EntryPoint>,
    def_types: HashMap<(usize, usize), Type>,
}

impl<'a> Checker<'a> {
    fn new(sources: &'a SourceMap, program: &'a Program) -> Checker<'a> {
        let n = program.expr_count as usize;
        Checker {
            sources,
            program,
            subst: Subst::default(),
            diags: Vec::new(),
            pending: vec![None; n],
            def_exprs: Vec::new(),
            traces: Vec::new(),
            int_lits: Vec::new(),
            def_instantiations: Vec::new(),
            instantiations: HashMap::new(),
            expr_types: vec![None; n],
            resolutions: vec![None; n],
            uses: HashMap::new(),
            binders: HashMap::new(),
            loop_sources: HashMap::new(),
            locals: Vec::new(),
            type_params: Vec::new(),
            used_param_names: HashSet::new(),
            globals: HashMap::new(),
            type_aliases: HashMap::new(),
            schemes: HashMap::new(),
            aliases: HashMap::new(),
            local_funs: HashMap::new(),
            fresh_results: HashSet::new(),
            current_def: None,
            spaced_calls: Vec::new(),
            entries: Vec::new(),
            def_types: HashMap::new(),
        }
    }

    fn check_module(&mut self, module: usize) {
        let program = self.program;
        let m = &program.modules[module];
        self.globals.clear();
        self.type_aliases.clear();
        for &import in &m.imports {
            for (index, decl) in program.modules[import].decls.iter().enumerate() {
                self.declare(import, index, decl);
            }
        }
        let is_root = module + 1 == program.modules.len();
        for (index, decl) in m.decls.iter().enumerate() {
            match decl {
                Decl::Import(_) => {}
                Decl::TypeAlias(alias) => {
                    let info = self.check_alias(alias);
                    self.aliases.insert((module, index), Rc::new(info));
                }
                Decl::Def(def) => {
                    self.check_def(module, index, def, is_root);
                }
            }
            self.declare(module, index, decl);
        }
    }

    /// Makes a checked declaration visible under its name.
    fn declare(&mut self, module: usize, index: usize, decl: &Decl) {
        match decl {
            Decl::Def(d) if self.schemes.contains_key(&(module, index)) => {
                self.globals.insert(d.name.name.clone(), (module, index));
            }
            Decl::TypeAlias(a) if self.aliases.contains_key(&(module, index)) => {
                self.type_aliases
                    .insert(a.name.name.clone(), (module, index));
            }
            _ => {}
        }
    }

    /// Entry points are the root's `entry` definitions; a root without any treats `def main`
    /// as its entry point (as in the design notes' examples).
    fn is_entry(&self, def: &Def) -> bool {
        def.entry
            || (def.name.name == "main"
                && !self
                    .program
                    .root()
                    .decls
                    .iter()
                    .any(|d| matches!(d, Decl::Def(d) if d.entry)))
    }

    fn check_def(&mut self, module: usize, index: usize, def: &Def, is_root: bool) {
        let errors_before = self.diags.len();
        self.current_def = Some(def.name.name.clone());
        self.used_param_names.clear();
        self.subst.param_classes.clear();
        self.diags.extend(names::undetermined_size_params(def));
        let mut scheme =
            self.check_function(&def.type_params, &def.params, def.ret.as_ref(), &def.body);
        self.current_def = None;
        self.explain_spaced_calls(errors_before);

        // Generalise over the unconstrained variables of the signature.
        let mut vars = Vec::new();
        self.subst.free_vars(&scheme.ty, &mut vars);
        for v in vars {
            if self.subst.tvars[v as usize].constraint == Constraint::None {
                let name = self.fresh_param_name();
                self.subst.set(v, Ty::Param(name.clone()));
                scheme.tparams.push((name, None));
            }
        }
        for id in self.generalize_sizes(&scheme.ty, &[]) {
            scheme.sparams.push((id, None));
        }
        scheme.existentials = self.escaping_sizes(&scheme);
        self.finish_def_exprs(&scheme.ty);
        let ty = self.subst.export(&scheme.ty);
        self.def_types.insert((module, index), ty);

        if is_root && self.is_entry(def) && self.diags.len() == errors_before {
            self.check_entry(index, def, &scheme);
        }
        if self.diags.len() == errors_before {
            uniqueness::check_def(self, def, (module, index));
        }
        self.schemes.insert((module, index), Rc::new(scheme));
    }

    /// A type parameter name not used yet in this definition: `a`, `b`, ..., `a1`, ...
    fn fresh_param_name(&mut self) -> String {
        let name = (0..)
            .flat_map(|round: usize| {
                ('a'..='z').map(move |c| match round {
                    0 => c.to_string(),
                    _ => format!("{c}{round}"),
                })
            })
            .find(|n| !self.used_param_names.contains(n) && !self.type_params.contains(n))
            .unwrap_or_default();
        self.used_param_names.insert(name.clone());
        name
    }

    /// Resolves the types of every expression of the finished definition: defaults constrained
    /// variables, reports the ones that cannot be defaulted, checks literal ranges, and moves the
    /// types to `expr_types`.
    fn finish_def_exprs(&mut self, signature: &Ty) {
        let ids = std::mem::take(&mut self.def_exprs);
        let mut vars = Vec::new();
        self.subst.free_vars(signature, &mut vars);
        for id in &ids {
            if let Some(t) = &self.pending[id.0 as usize] {
                self.subst.free_vars(t, &mut vars);
            }
        }
        for (_, args) in &self.def_instantiations {
            for (_, t) in args {
                self.subst.free_vars(t, &mut vars);
            }
        }
        for v in vars {
            if self.subst.tvars[v as usize].bound.is_some() {
                continue; // bound meanwhile, through a record field of another variable
            }
            let var = &self.subst.tvars[v as usize];
            let t = match &var.constraint {
                Constraint::Prims(set) => Ty::Prim(set.default_type()),
                Constraint::None => Ty::unit(),
                Constraint::Fields(fields) => {
                    let names: Vec<String> = fields.keys().map(|f| format!("`{f}`")).collect();
                    self.diags.push(
                        Diagnostic::error("E0306", "cannot infer the type of this record or tuple")
                            .with_primary(var.origin, format!("its type must be known to access {}", names.join(", ")))
                            .with_help("annotate it where it is bound, e.g. `(p: (f32, i64))` or `(r: {x: f32})`"),
                    );
                    Ty::Error
                }
            };
            self.subst.set(v, t);
        }
        self.check_traces();
        for (id, value, span) in std::mem::take(&mut self.int_lits) {
            if let Some(Ty::Prim(p)) = self.pending[id.0 as usize]
                .as_ref()
                .map(|t| self.subst.shallow(t))
                && p.is_int()
                && p.byte_size() < 8
                && value >= 1u64 << (8 * p.byte_size())
            {
                self.diags.push(
                    Diagnostic::error("E0302", format!("literal out of range for `{p}`"))
                        .with_primary(span, format!("`{value}` does not fit in `{p}`")),
                );
            }
        }
        for id in ids {
            if let Some(t) = &self.pending[id.0 as usize] {
                self.expr_types[id.0 as usize] = Some(self.subst.export(t));
            }
        }
        for (id, args) in std::mem::take(&mut self.def_instantiations) {
            let args = args
                .iter()
                .map(|(p, t)| (p.clone(), self.subst.export(t)))
                .collect();
            self.instantiations.insert(id, args);
        }
    }

    /// The side tables and the diagnostics.
    fn into_parts(mut self) -> (Checked, Vec<Diagnostic>) {
        // Every expression was visited; an unvisited one would be a checker bug, which the
        // unit type keeps from crashing later passes.
        let expr_types = std::mem::take(&mut self.expr_types)
            .into_iter()
            .map(|t| t.unwrap_or(Type::Tuple(Vec::new())))
            .collect();
        let checked = Checked {
            expr_types,
            resolutions: self.resolutions,
            entries: self.entries,
            def_types: self.def_types,
            instantiations: self.instantiations,
        };
        (checked, self.diags)
    }

    // ----- reporting -------------------------------------------------------------------------

    /// Unifies `expected` with `found` (the type of the expression at `span`); on failure reports
    /// the mismatch, with `why` as the "expected because of this" label.
    fn expect(
        &mut self,
        expected: &Ty,
        found: &Ty,
        span: Span,
        why: Option<(Span, String)>,
    ) -> bool {
        match self.subst.unify(expected, found) {
            Ok(()) => true,
            Err(m) => {
                let d = self.mismatch(m, expected, found, span);
                let d = match why {
                    Some((s, msg)) => d.with_secondary(s, msg),
                    None => d,
                };
                self.diags.push(d);
                false
            }
        }
    }

    /// The diagnostic for a failed unification of `expected` with `found` at `span`.
    fn mismatch(&self, m: Mismatch, expected: &Ty, found: &Ty, span: Span) -> Diagnostic {
        let (e, f) = (self.subst.show(expected), self.subst.show(found));
        match m {
            Mismatch::Sizes(a, b) => {
                let show = |s| match s {
                    Sz::Unknown(_) => "a size known only at run time".to_string(),
                    s => format!("`{}`", self.subst.show_size(s)),
                };
                let message = match (a, b) {
                    (Sz::Unknown(_), Sz::Unknown(_)) => {
                        "size mismatch: two sizes known only at run time, not known to be equal"
                            .to_string()
                    }
                    _ => format!("size mismatch: {} vs {}", show(a), show(b)),
                };
                // Types that print the same differ in a size that has no name.
                let label = if e == f {
                    format!("expected `{e}`, found `{f}` of another size known only at run time")
                } else {
                    format!("expected `{e}`, found `{f}`")
                };
                Diagnostic::error("E0401", message)
                    .with_primary(span, label)
                    .with_help(format!(
                        "if the sizes are equal at run time, coerce with a checked `:> {e}`"
                    ))
            }
            Mismatch::NotIn { found: t, what } => {
                let d = Diagnostic::error(
                    "E0308",
                    format!("expected {what}, found `{}`", self.subst.show(&t)),
                )
                .with_primary(span, format!("this has type `{f}`"));
                match self.subst.shallow(&t) {
                    Ty::Param(p) => d.with_help(self.class_hint(&p, &what)),
                    _ => d,
                }
            }
            Mismatch::NoField { ty, field } => {
                let ty_text = self.subst.show(&ty);
                let d =
                    Diagnostic::error("E0307", format!("type `{ty_text}` has no field `{field}`"))
                        .with_primary(span, format!("this has type `{f}`"));
                match self.subst.shallow(&ty) {
                    Ty::Record(fields) => {
                        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
                        match names::suggest(&field, names.iter().copied()) {
                            Some(s) => d.with_help(format!("did you mean `{s}`?")),
                            None => d.with_note(format!("its fields are {}", names.join(", "))),
                        }
                    }
                    _ => d,
                }
            }
            Mismatch::Infinite => Diagnostic::error("E0311", "infinite type")
                .with_primary(span, format!("`{e}` would have to contain itself (`{f}`)")),
            Mismatch::Types(x, y) => {
                let d = Diagnostic::error("E0301", "mismatched types")
                    .with_primary(span, format!("expected `{e}`, found `{f}`"));
                let d = match (self.subst.shallow(&x), self.subst.shallow(&y)) {
                    (Ty::Param(p), Ty::Prim(q)) if self.subst.param_classes.contains_key(&p) => {
                        d.with_help(format!("convert with `{p}.{q}`"))
                    }
                    (Ty::Prim(q), Ty::Param(p)) if self.subst.param_classes.contains_key(&p) => {
                        d.with_help(format!("convert with `{q}.{p}`"))
                    }
                    (Ty::Prim(p), Ty::Prim(q))
                        if p != q
                            && p != PrimType::Bool
                            && q != PrimType::Bool
                            && (e != p.to_string() || f != q.to_string()) =>
                    {
                        let convert =
                            (0..f.matches('[').count()).fold(format!("{p}.{q}"), |g, depth| {
                                match depth {
                                    0 => format!("map {g}"),
                                    _ => format!("map ({g})"),
                                }
                            });
                        d.with_help(format!(
                            "numbers are not converted implicitly: convert the `{q}` elements \
                             with `{convert}`"
                        ))
                    }
                    (Ty::Prim(p), Ty::Prim(q))
                        if p != q && p != PrimType::Bool && q != PrimType::Bool =>
                    {
                        let text = self
                            .sources
                            .get(span.file)
                            .text
                            .get(span.start as usize..span.end as usize)
                            .filter(|t| t.len() <= 40 && !t.contains('\n'))
                            .unwrap_or("x");
                        let arg = if text.contains(' ') {
                            format!("({text})")
                        } else {
                            text.to_string()
                        };
                        d.with_help(format!(
                            "numbers are not converted implicitly: convert the `{q}` with \
                             `{p}.{q} {arg}`"
                        ))
                    }
                    _ => d,
                };
                let (x, y) = (self.subst.show(&x), self.subst.show(&y));
                if x != e || y != f {
                    d.with_note(format!("`{x}` is not `{y}`"))
                } else {
                    d
                }
            }
        }
    }

    /// A record type from fields in source order (written in a record expression or a record
    /// type); a field given twice is reported (E0303) and its later occurrences dropped.
    fn record_type(&mut self, fields: Vec<(&Ident, Ty)>) -> Ty {
        let mut out: Vec<(String, Ty)> = Vec::new();
        for (name, t) in fields {
            if out.iter().any(|(n, _)| *n == name.name) {
                self.error(
                    Diagnostic::error("E0303", format!("field `{}` is given twice", name.name))
                        .with_primary(name.span, "duplicate field"),
                );
            } else {
                out.push((name.name.clone(), t));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ty::Record(out)
    }

    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// The help for a type parameter used at a type its class (if any) does not include.
    fn class_hint(&self, param: &str, what: &str) -> String {
        match self
            .subst
            .param_classes
            .get(param)
            .and_then(|c| c.class_name())
        {
            Some(class) => format!(
                "`{param}` is declared `('{param}: {class})`, which has types that are not \
                 {what}"
            ),
            None => format!(
                "declare the class of `{param}`: `('{param}: num)`, `('{param}: int)` or \
                 `('{param}: float)`"
            ),
        }
    }
}

fn contains_fun(t: &Ty) -> bool {
    match t {
        Ty::Fun(..) => true,
        Ty::Array(e, _) => contains_fun(e),
        Ty::Tuple(ts) => ts.iter().any(contains_fun),
        Ty::Record(fs) => fs.iter().any(|(_, t)| contains_fun(t)),
        _ => false,
    }
}

/// The expression whose value a (possibly `let`-wrapped) expression returns: where to point
/// when its type is wrong.
fn result_expr(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Let(_, _, body)
        | ExprKind::LetFun(_, body)
        | ExprKind::LetWith(_, _, _, body) => result_expr(body),
        _ => e,
    }
}
