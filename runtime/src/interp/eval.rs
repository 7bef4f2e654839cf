//! The evaluator: expressions, patterns, application, loops and size parameters.
//!
//! Evaluation is strict, left to right. Local variables live in a persistent environment
//! ([`Env`]); top-level definitions are looked up through the type checker's resolutions, and
//! those without parameters are evaluated once and cached. Functions are curried closures
//! ([`Closure`]): a callee plus the arguments given so far; a call happens when the arguments
//! saturate the callee, and surplus arguments are applied to its result.
//!
//! Consumption: `a with [i] = v`, `let a[i] = v` and unique arguments (`*[n]t` parameters of
//! definitions, the destination of `scatter` and `reduce_by_index`) move the value out of the
//! variable's binding instead of copying it, so an update of an array nothing else shares is
//! O(1). The type checker guarantees a consumed variable is not used again; if it were, the
//! interpreter reports an internal error rather than computing with a stale value.
//!
//! Stack use: `let` chains, `if` branches and ascriptions are evaluated iteratively, loops are
//! iterative, and the interpreter runs on a thread with a large stack (see `mod.rs`), so the
//! recursion depth is bounded by the nesting depth of the program text.

use super::value::{Array, Builder, Callee, Closure, Env, Val, empty_array};
use crate::error::{R_COERCE, R_DIV_ZERO, R_INTERNAL, R_IRREGULAR, R_SIZE, Res, error};
use crate::index::{self, IdxArg};
use crate::scalar::{self, OpError};
use crate::value::Scalar;
use ogham_compiler::builtins::{ArrayFn, Builtin};
use ogham_compiler::lower::surface;
use ogham_compiler::syntax::ast::{
    BinOp, Decl, Expr, ExprKind, IndexArg, LoopForm, Pattern, Program, SizeExp, TypeArg, TypeExp,
    TypeParam,
};
use ogham_compiler::typeck::{Checked, Resolution};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;
use ogham_ir::types::{Type, TypeArgs};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The type of expressions the checker did not record (never for checked programs).
static NO_TYPE: Type = Type::Tuple(Vec::new());

pub struct Interp<'a> {
    pub program: &'a Program,
    checked: &'a Checked,
    /// Module index of each file (by `FileId`), for type alias lookups.
    module_of_file: Vec<usize>,
    /// Values of the top-level definitions without parameters evaluated so far.
    constants: RefCell<HashMap<(usize, usize), Val<'a>>>,
    /// The checks of operator laws, when on (`--check-laws`).
    laws: Option<super::laws::Laws>,
}

/// The type-alias arguments in force while matching a type expression against a value:
/// alias parameter names bound to the arguments of the alias use, which are interpreted in the
/// enclosing scope.
struct AliasScope<'s, 'a> {
    module: usize,
    args: Vec<(&'a str, &'a TypeArg)>,
    parent: Option<&'s AliasScope<'s, 'a>>,
}

/// Nesting limit for type alias expansion (aliases cannot be recursive; this only guards
/// against a program the checker should have rejected).
const MAX_ALIAS_DEPTH: usize = 64;

impl<'a> Interp<'a> {
    /// This interpreter with the checks of operator laws on.
    pub fn checking_laws(mut self) -> Interp<'a> {
        self.laws = Some(super::laws::Laws::default());
        self
    }

    /// Checks the laws of operator `op` with neutral element `ne` of the `what` at `span` on the
    /// first rows of `xs`, when checks are on (`super::laws`).
    pub(crate) fn check_laws(
        &self,
        what: &str,
        op: &Val<'a>,
        ne: &Val<'a>,
        xs: &Array<'a>,
        span: Span,
    ) {
        if let Some(laws) = &self.laws {
            laws.check(what, ne, xs, span, |a, b| {
                self.apply(op.clone(), vec![a.clone(), b.clone()], span)
                    .ok()
            });
        }
    }

    /// The warnings of the law checks.
    pub fn into_warnings(self) -> Vec<ogham_ir::diag::Diagnostic> {
        self.laws.map(|l| l.into_warnings()).unwrap_or_default()
    }

    pub fn new(program: &'a Program, checked: &'a Checked) -> Interp<'a> {
        let files = program
            .modules
            .iter()
            .map(|m| m.file.0 as usize + 1)
            .max()
            .unwrap_or(0);
        let mut module_of_file = vec![0; files];
        for (i, m) in program.modules.iter().enumerate() {
            module_of_file[m.file.0 as usize] = i;
        }
        Interp {
            program,
            checked,
            module_of_file,
            constants: RefCell::new(HashMap::new()),
            laws: None,
        }
    }

    /// The type the checker inferred for `e`, in the instance whose type arguments `env` has.
    pub fn type_of(&self, e: &Expr, env: &Env<'a>) -> Cow<'a, Type> {
        if self.checked.expr_types.len() <= e.id.0 as usize {
            return Cow::Borrowed(&NO_TYPE);
        }
        self.checked.type_of(e.id, &env.types)
    }

    /// Closure `f` (a local function) at its use `e`: with the type arguments of that use.
    fn instance(&self, f: &Closure<'a>, e: &Expr, env: &Env<'a>) -> Closure<'a> {
        let callee = match &f.callee {
            Callee::Code {
                type_params,
                params,
                body,
                module,
                env: code_env,
            } => {
                let mut types = (*code_env.types).clone();
                types.extend(self.checked.type_args_at(e.id, &env.types));
                Callee::Code {
                    type_params,
                    params,
                    body,
                    module: *module,
                    env: code_env.with_types(Rc::new(types)),
                }
            }
            other => other.clone(),
        };
        Closure {
            callee,
            args: f.args.clone(),
        }
    }

    fn resolution(&self, e: &Expr) -> Option<&'a Resolution> {
        self.checked.resolutions.get(e.id.0 as usize)?.as_ref()
    }

    fn module_of(&self, span: Span) -> usize {
        self.module_of_file
            .get(span.file.0 as usize)
            .copied()
            .unwrap_or(0)
    }

    /// The value of top-level declaration `decl` of `module`: a closure for a function, the
    /// (cached) value for a constant.
    pub fn def_value(
        &self,
        module: usize,
        decl: usize,
        types: Rc<TypeArgs>,
        span: Span,
    ) -> Res<Val<'a>> {
        let def = match self
            .program
            .modules
            .get(module)
            .and_then(|m| m.decls.get(decl))
        {
            Some(Decl::Def(def)) => def,
            _ => {
                return Err(error(
                    R_INTERNAL,
                    span,
                    "reference to a declaration that is not a definition",
                ));
            }
        };
        if !def.params.is_empty() {
            return Ok(Val::Fun(Rc::new(Closure {
                callee: Callee::Code {
                    type_params: &def.type_params,
                    params: &def.params,
                    body: &def.body,
                    module,
                    env: Env::default().with_types(types),
                },
                args: Vec::new(),
            })));
        }
        // A polymorphic constant has one value per instance: it is not cached.
        if !types.is_empty() {
            return self.eval(&def.body, &Env::default().with_types(types));
        }
        if let Some(v) = self.constants.borrow().get(&(module, decl)) {
            return Ok(v.clone());
        }
        let v = self.eval(&def.body, &Env::default())?;
        self.constants
            .borrow_mut()
            .insert((module, decl), v.clone());
        Ok(v)
    }

    /// Evaluates `e` in `env`.
    pub fn eval(&self, e: &'a Expr, env: &Env<'a>) -> Res<Val<'a>> {
        let mut e = e;
        // `env` extended by the `let`s passed so far (cloned only when there is one).
        let mut extended: Option<Env<'a>> = None;
        loop {
            let env = extended.as_ref().unwrap_or(env);
            match &e.kind {
                ExprKind::Let(pat, value, body) => {
                    let v = self.eval(value, env)?;
                    extended = Some(self.bind(pat, v, env)?);
                    e = body;
                }
                ExprKind::LetFun(fun, body) => {
                    let f = Val::Fun(Rc::new(Closure {
                        callee: Callee::Code {
                            type_params: &fun.type_params,
                            params: &fun.params,
                            body: &fun.body,
                            module: self.module_of(e.span),
                            env: env.clone(),
                        },
                        args: Vec::new(),
                    }));
                    extended = Some(env.bind(&fun.name.name, f));
                    e = body;
                }
                ExprKind::LetWith(name, idx, value, body) => {
                    let idx = self.eval_index_args(idx, env)?;
                    let v = self.eval(value, env)?;
                    let target = self.take_local(&name.name, env, name.span)?;
                    let updated = self.update(target, &idx, v, e.span)?;
                    extended = Some(env.bind(&name.name, updated));
                    e = body;
                }
                ExprKind::If(cond, then, els) => {
                    e = if self.eval_bool(cond, env)? {
                        then
                    } else {
                        els
                    };
                }
                ExprKind::Ascribe(inner, _) => e = inner,
                _ => return self.eval_step(e, env),
            }
        }
    }

    /// Evaluates the expressions that are not in tail position of [`Interp::eval`]'s loop.
    fn eval_step(&self, e: &'a Expr, env: &Env<'a>) -> Res<Val<'a>> {
        match &e.kind {
            ExprKind::Lit(lit) => {
                let ty = match (lit.suffix, &*self.type_of(e, env)) {
                    (Some(t), _) | (None, &Type::Prim(t)) => t,
                    _ => return Err(error(R_INTERNAL, e.span, "literal without a scalar type")),
                };
                let value = surface::literal(lit.value, ty).map(Scalar::from);
                value.map(Val::Prim).ok_or_else(|| {
                    error(R_INTERNAL, e.span, format!("literal cannot have type {ty}"))
                })
            }
            ExprKind::Var(name) => match self.resolution(e) {
                Some(Resolution::Def { module, decl }) => {
                    let types = Rc::new(self.checked.type_args_at(e.id, &env.types));
                    self.def_value(*module, *decl, types, e.span)
                }
                Some(Resolution::Local) if self.checked.instantiations.contains_key(&e.id) => {
                    // A use of a polymorphic local function: its body sees the type arguments
                    // of this use besides those of the scope it was defined in.
                    match self.lookup(&name.name, env, e.span)? {
                        Val::Fun(f) => Ok(Val::Fun(Rc::new(self.instance(&f, e, env)))),
                        v => Ok(v),
                    }
                }
                Some(Resolution::Local) => self.lookup(&name.name, env, e.span),
                Some(Resolution::Builtin(b)) => {
                    self.builtin_value(*b, self.type_of(e, env), env, e.span)
                }
                None => Err(error(
                    R_INTERNAL,
                    e.span,
                    format!("`{name}` was not resolved"),
                )),
            },
            ExprKind::Tuple(items) => {
                let vs = items
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<Res<Vec<_>>>()?;
                Ok(Val::tuple(vs))
            }
            ExprKind::Record(fields) => {
                let fs = fields
                    .iter()
                    .map(|(n, x)| Ok((n.name.as_str(), self.eval(x, env)?)))
                    .collect::<Res<Vec<_>>>()?;
                Ok(Val::record(fs))
            }
            ExprKind::ArrayLit(items) => {
                let mut b = Builder::new(items.len());
                for item in items {
                    let v = self.eval(item, env)?;
                    self.push_row(&mut b, v, item.span)?;
                }
                Ok(Val::Array(
                    b.finish(|| empty_array(&self.type_of(e, env), env)),
                ))
            }
            ExprKind::Field(..) if let Some(Resolution::Builtin(b)) = self.resolution(e) => {
                self.builtin_value(*b, self.type_of(e, env), env, e.span)
            }
            ExprKind::Field(inner, field) => {
                let v = self.eval(inner, env)?;
                project(v, &field.name).ok_or_else(|| {
                    error(
                        R_INTERNAL,
                        e.span,
                        format!("value has no field `{}`", field.name),
                    )
                })
            }
            ExprKind::Index(arr, idx) => {
                let a = self.eval(arr, env)?;
                let idx = self.eval_index_args(idx, env)?;
                let a = as_array(a, e.span)?;
                index::index(&a, &idx).map_err(|err| error(err.code, e.span, err.message))
            }
            ExprKind::Apply(f, args) => self.eval_apply(e, f, args, env),
            ExprKind::BinOp(BinOp::And, l, r) => Ok(Val::Prim(Scalar::Bool(
                self.eval_bool(l, env)? && self.eval_bool(r, env)?,
            ))),
            ExprKind::BinOp(BinOp::Or, l, r) => Ok(Val::Prim(Scalar::Bool(
                self.eval_bool(l, env)? || self.eval_bool(r, env)?,
            ))),
            ExprKind::BinOp(op, l, r) => {
                let a = self.eval(l, env)?;
                let b = self.eval(r, env)?;
                self.binop(*op, a, b, e.span)
            }
            ExprKind::UnOp(op, x) => match self.eval(x, env)? {
                Val::Prim(s) => scalar::unop(surface::unop(*op), s)
                    .map(Val::Prim)
                    .map_err(|_| error(R_INTERNAL, e.span, "ill-typed operand")),
                _ => Err(error(R_INTERNAL, e.span, "ill-typed operand")),
            },
            ExprKind::OpSection(op) => Ok(closure(Callee::Op(*op))),
            ExprKind::LeftSection(op, x) => {
                Ok(closure(Callee::LeftSection(*op, self.eval(x, env)?)))
            }
            ExprKind::RightSection(op, y) => {
                Ok(closure(Callee::RightSection(*op, self.eval(y, env)?)))
            }
            ExprKind::Lambda(params, _, body) => Ok(closure(Callee::Code {
                type_params: &[],
                params,
                body,
                module: self.module_of(e.span),
                env: env.clone(),
            })),
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.eval_loop(pat, init.as_deref(), form, body, env, e.span),
            ExprKind::Update(target, idx, value) => {
                // Left to right (the target first), but a local variable is moved out of its
                // binding last: the index and the value may still read it.
                let a = if self.is_local(target) {
                    None
                } else {
                    Some(self.eval(target, env)?)
                };
                let idx = self.eval_index_args(idx, env)?;
                let v = self.eval(value, env)?;
                let a = match a {
                    Some(a) => a,
                    None => self.eval_consumed(target, env)?,
                };
                self.update(a, &idx, v, e.span)
            }
            ExprKind::RecordUpdate(target, path, value) => {
                let r = self.eval(target, env)?;
                let v = self.eval(value, env)?;
                let path: Vec<&str> = path.iter().map(|f| f.name.as_str()).collect();
                set_field(r, &path, v)
                    .ok_or_else(|| error(R_INTERNAL, e.span, "record update of a missing field"))
            }
            ExprKind::Assert(cond, message, inner) => {
                if self.eval_bool(cond, env)? {
                    self.eval(inner, env)
                } else {
                    Err(crate::error::assertion_failed(e.span, message))
                }
            }
            ExprKind::Trace(label, inner) => self.eval_trace(label, inner, e.span, env),
            ExprKind::Coerce(inner, texp) => {
                let v = self.eval(inner, env)?;
                self.check_coercion(&v, texp, env, e.span)?;
                Ok(v)
            }
            ExprKind::Let(..)
            | ExprKind::LetFun(..)
            | ExprKind::LetWith(..)
            | ExprKind::If(..)
            | ExprKind::Ascribe(..) => self.eval(e, env),
        }
    }

    fn eval_bool(&self, e: &'a Expr, env: &Env<'a>) -> Res<bool> {
        match self.eval(e, env)? {
            Val::Prim(Scalar::Bool(b)) => Ok(b),
            _ => Err(error(R_INTERNAL, e.span, "condition is not a bool")),
        }
    }

    fn lookup(&self, name: &str, env: &Env<'a>, span: Span) -> Res<Val<'a>> {
        let frame = env.frame(name).ok_or_else(|| unbound(name, span))?;
        let v = frame.val.borrow().clone();
        v.ok_or_else(|| consumed(name, span))
    }

    /// Moves the value of local `name` out of its binding (a consuming use).
    fn take_local(&self, name: &str, env: &Env<'a>, span: Span) -> Res<Val<'a>> {
        let frame = env.frame(name).ok_or_else(|| unbound(name, span))?;
        let v = frame.val.borrow_mut().take();
        v.ok_or_else(|| consumed(name, span))
    }

    /// Whether `e` is a local variable (which a consuming use moves out of its binding).
    fn is_local(&self, e: &'a Expr) -> bool {
        matches!(
            (&e.kind, self.resolution(e)),
            (ExprKind::Var(_), Some(Resolution::Local))
        )
    }

    /// Evaluates an expression whose value is consumed: a local variable is moved out.
    fn eval_consumed(&self, e: &'a Expr, env: &Env<'a>) -> Res<Val<'a>> {
        match (&e.kind, self.resolution(e)) {
            (ExprKind::Var(name), Some(Resolution::Local)) => {
                self.take_local(&name.name, env, e.span)
            }
            _ => self.eval(e, env),
        }
    }

    /// The value of a use of built-in `b` whose type there is `ty` (a generic built-in is made
    /// concrete with it; `env` gives the values of the sizes named in `ty`).
    fn builtin_value(
        &self,
        b: Builtin,
        ty: Cow<'a, Type>,
        env: &Env<'a>,
        span: Span,
    ) -> Res<Val<'a>> {
        let b = b.specialise(&ty).ok_or_else(|| {
            error(
                R_INTERNAL,
                span,
                "a generic built-in at a non-primitive type",
            )
        })?;
        match b {
            Builtin::Const { op, ty } => scalar::constant(op, ty)
                .map(Val::Prim)
                .ok_or_else(|| error(R_INTERNAL, span, format!("no constant {ty}.{op:?}"))),
            _ => Ok(closure(Callee::Builtin(b, ty, env.clone()))),
        }
    }

    /// Pushes a row into an array under construction; irregular rows are an error at `span`.
    pub fn push_row(&self, b: &mut Builder<'a>, row: Val<'a>, span: Span) -> Res<()> {
        b.push(row).map_err(|err| match err {
            super::value::BuildError::Irregular { expected, found } => error(
                R_IRREGULAR,
                span,
                format!(
                    "irregular array: an element of shape {} among elements of shape {}",
                    shape_text(&found),
                    shape_text(&expected)
                ),
            ),
            super::value::BuildError::IllTyped => {
                error(R_INTERNAL, span, "array elements of different types")
            }
        })
    }

    fn eval_index_args(&self, args: &'a [IndexArg], env: &Env<'a>) -> Res<Vec<IdxArg>> {
        let int = |e: &'a Expr| -> Res<i64> { as_int(self.eval(e, env)?, e.span) };
        let opt = |e: &'a Option<Expr>| e.as_ref().map(int).transpose();
        args.iter()
            .map(|a| match a {
                IndexArg::Index(e) => Ok(IdxArg::At(int(e)?)),
                IndexArg::Slice {
                    start, end, stride, ..
                } => Ok(IdxArg::Slice {
                    start: opt(start)?,
                    end: opt(end)?,
                    stride: opt(stride)?,
                }),
            })
            .collect()
    }

    fn update(&self, target: Val<'a>, idx: &[IdxArg], v: Val<'a>, span: Span) -> Res<Val<'a>> {
        let a = as_array(target, span)?;
        index::update(a, idx, v)
            .map(Val::Array)
            .map_err(|err| error(err.code, span, err.message))
    }

    /// Binds the variables of `pat` to the parts of `v`.
    pub fn bind(&self, pat: &'a Pattern, v: Val<'a>, env: &Env<'a>) -> Res<Env<'a>> {
        match (pat, v) {
            (Pattern::Var(id), v) => Ok(env.bind(&id.name, v)),
            (Pattern::Wildcard(_), _) => Ok(env.clone()),
            (Pattern::Ascribed(p, _, _), v) => self.bind(p, v, env),
            (Pattern::Tuple(ps, _), Val::Tuple(vs)) if ps.len() == vs.len() => {
                let mut env = env.clone();
                for (p, v) in ps.iter().zip(vs.iter()) {
                    env = self.bind(p, v.clone(), &env)?;
                }
                Ok(env)
            }
            (Pattern::Record(fs, _), Val::Record(vs)) => {
                let mut env = env.clone();
                for (name, p) in fs {
                    let v = vs
                        .iter()
                        .find(|(n, _)| *n == name.name)
                        .map(|(_, v)| v.clone());
                    let v =
                        v.ok_or_else(|| error(R_INTERNAL, name.span, "record has no such field"))?;
                    env = self.bind(p, v, &env)?;
                }
                Ok(env)
            }
            (p, v) => Err(error(
                R_INTERNAL,
                p.span(),
                format!("pattern does not match a value of type {}", v.describe()),
            )),
        }
    }

    /// The current value of the variables of a loop pattern without initialiser.
    fn pattern_value(&self, pat: &'a Pattern, env: &Env<'a>) -> Res<Val<'a>> {
        match pat {
            Pattern::Var(id) => self.lookup(&id.name, env, id.span),
            Pattern::Ascribed(p, _, _) => self.pattern_value(p, env),
            Pattern::Tuple(ps, _) => Ok(Val::tuple(
                ps.iter()
                    .map(|p| self.pattern_value(p, env))
                    .collect::<Res<_>>()?,
            )),
            Pattern::Record(fs, _) => Ok(Val::record(
                fs.iter()
                    .map(|(n, p)| Ok((n.name.as_str(), self.pattern_value(p, env)?)))
                    .collect::<Res<_>>()?,
            )),
            Pattern::Wildcard(s) => Err(error(
                R_INTERNAL,
                *s,
                "a loop without initial value binds `_`",
            )),
        }
    }

    fn eval_loop(
        &self,
        pat: &'a Pattern,
        init: Option<&'a Expr>,
        form: &'a LoopForm,
        body: &'a Expr,
        env: &Env<'a>,
        span: Span,
    ) -> Res<Val<'a>> {
        let mut acc = match init {
            Some(e) => self.eval(e, env)?,
            None => self.pattern_value(pat, env)?,
        };
        match form {
            LoopForm::For(i, bound) => {
                let n = self.loop_bound(bound, env)?;
                for k in 0..n.as_i64().max(0) {
                    let inner = self.bind(pat, acc, env)?.bind(
                        &i.name,
                        Val::Prim(scalar::convert(Scalar::I64(k), n.prim_type())),
                    );
                    acc = self.eval(body, &inner)?;
                }
            }
            LoopForm::Range(i, lo, hi) => {
                // As lowered: `hi - lo` iterations (in `i64`), the counter `lo + k`.
                let (lo, hi) = (self.loop_bound(lo, env)?, self.loop_bound(hi, env)?);
                for k in 0..hi.as_i64().wrapping_sub(lo.as_i64()).max(0) {
                    let at = Scalar::I64(lo.as_i64().wrapping_add(k));
                    let inner = self
                        .bind(pat, acc, env)?
                        .bind(&i.name, Val::Prim(scalar::convert(at, lo.prim_type())));
                    acc = self.eval(body, &inner)?;
                }
            }
            LoopForm::ForIn(x, xs) => {
                let xs = as_array(self.eval(xs, env)?, span)?;
                for k in 0..xs.len() {
                    let inner = self.bind(pat, acc, env)?;
                    let inner = self.bind(x, xs.row(k), &inner)?;
                    acc = self.eval(body, &inner)?;
                }
            }
            LoopForm::While(cond) => loop {
                // The copy keeps the loop's value for the result; it is dropped before the
                // body runs so that in-place updates in the body stay O(1).
                let kept = acc.clone();
                let inner = self.bind(pat, acc, env)?;
                if !self.eval_bool(cond, &inner)? {
                    return Ok(kept);
                }
                drop(kept);
                acc = self.eval(body, &inner)?;
            },
        }
        Ok(acc)
    }

    /// The value of a loop bound, an integer.
    fn loop_bound(&self, bound: &'a Expr, env: &Env<'a>) -> Res<Scalar> {
        match self.eval(bound, env)? {
            Val::Prim(s) if s.prim_type().is_int() => Ok(s),
            _ => Err(error(
                R_INTERNAL,
                bound.span,
                "loop bound is not an integer",
            )),
        }
    }

    fn eval_apply(
        &self,
        e: &'a Expr,
        f: &'a Expr,
        args: &'a [Expr],
        env: &Env<'a>,
    ) -> Res<Val<'a>> {
        let consumes = |i: usize| match self.resolution(f) {
            Some(Resolution::Builtin(Builtin::Array(
                ArrayFn::Scatter | ArrayFn::ReduceByIndex,
            ))) => i == 0,
            Some(Resolution::Def { module, decl }) => {
                match self
                    .program
                    .modules
                    .get(*module)
                    .and_then(|m| m.decls.get(*decl))
                {
                    Some(Decl::Def(d)) => d.params.get(i).is_some_and(is_unique),
                    _ => false,
                }
            }
            _ => false,
        };
        let fv = self.eval(f, env)?;
        // Arguments are evaluated left to right (the reference order, which compiled code
        // follows: of two failing arguments the first one's error is reported), but a consumed
        // local variable is moved out of its binding last, after the other arguments used it.
        let mut vals = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            vals.push(if consumes(i) && self.is_local(a) {
                None
            } else {
                Some(self.eval(a, env)?)
            });
        }
        for (i, a) in args.iter().enumerate() {
            if vals[i].is_none() {
                vals[i] = Some(self.eval_consumed(a, env)?);
            }
        }
        self.apply(fv, vals.into_iter().flatten().collect(), e.span)
    }

    /// Applies a function value to arguments; `span` is the application (for errors).
    pub fn apply(&self, f: Val<'a>, args: Vec<Val<'a>>, span: Span) -> Res<Val<'a>> {
        let mut f = f;
        let mut args = args;
        loop {
            if args.is_empty() {
                return Ok(f);
            }
            let Val::Fun(clo) = f else {
                return Err(error(
                    R_INTERNAL,
                    span,
                    "application of a value that is not a function",
                ));
            };
            let arity = clo.callee.arity();
            let have = clo.args.len();
            if have + args.len() < arity {
                let mut all = clo.args.clone();
                all.extend(args);
                return Ok(Val::Fun(Rc::new(Closure {
                    callee: clo.callee.clone(),
                    args: all,
                })));
            }
            let rest = args.split_off(arity - have);
            let full = if have == 0 {
                args
            } else {
                let mut all = clo.args.clone();
                all.extend(args);
                all
            };
            let result = self.invoke(&clo.callee, full, span)?;
            if rest.is_empty() {
                return Ok(result);
            }
            f = result;
            args = rest;
        }
    }

    /// Calls a callee with exactly its number of arguments.
    fn invoke(&self, callee: &Callee<'a>, args: Vec<Val<'a>>, span: Span) -> Res<Val<'a>> {
        match callee {
            Callee::Code {
                type_params,
                params,
                body,
                module,
                env,
            } => {
                let mut env = env.clone();
                if type_params.iter().any(|p| matches!(p, TypeParam::Size(_))) {
                    env = self.bind_size_params(type_params, params, &args, *module, env, span)?;
                }
                for (p, a) in params.iter().zip(args) {
                    env = self.bind(p, a, &env)?;
                }
                self.eval(body, &env)
            }
            Callee::Builtin(b, ty, env) => self.call_builtin(*b, ty, env, args, span),
            Callee::Op(op) => {
                let mut it = args.into_iter();
                match (it.next(), it.next()) {
                    (Some(a), Some(b)) => self.binop(*op, a, b, span),
                    _ => Err(error(
                        R_INTERNAL,
                        span,
                        "operator applied to too few arguments",
                    )),
                }
            }
            Callee::LeftSection(op, a) => {
                let b = args.into_iter().next().unwrap_or_else(Val::unit);
                self.binop(*op, a.clone(), b, span)
            }
            Callee::RightSection(op, b) => {
                let a = args.into_iter().next().unwrap_or_else(Val::unit);
                self.binop(*op, a, b.clone(), span)
            }
        }
    }

    /// `a op b` on values (operators applied in sections and in expressions).
    pub fn binop(&self, op: BinOp, a: Val<'a>, b: Val<'a>, span: Span) -> Res<Val<'a>> {
        match (op, a, b) {
            (BinOp::PipeRight, x, f) | (BinOp::PipeLeft, f, x) => self.apply(f, vec![x], span),
            (BinOp::Eq, a, b) => Ok(Val::Prim(Scalar::Bool(a.equals(&b)))),
            (BinOp::Ne, a, b) => Ok(Val::Prim(Scalar::Bool(!a.equals(&b)))),
            (op, Val::Prim(x), Val::Prim(y)) => {
                let scalar_op = surface::binop(op).ok_or(OpError::IllTyped);
                scalar_op
                    .and_then(|o| scalar::binop(o, x, y))
                    .map(Val::Prim)
                    .map_err(|err| match err {
                        OpError::DivByZero => Box::new(
                            error(
                                R_DIV_ZERO,
                                span,
                                format!("division by zero (`{}`)", op.symbol()),
                            )
                            .with_help("guard the divisor, e.g. `if d == 0 then ... else x / d`"),
                        ),
                        OpError::IllTyped => error(
                            R_INTERNAL,
                            span,
                            format!("ill-typed operands of `{}`", op.symbol()),
                        ),
                    })
            }
            (op, a, b) => Err(error(
                R_INTERNAL,
                span,
                format!(
                    "`{}` applied to {} and {}",
                    op.symbol(),
                    a.describe(),
                    b.describe()
                ),
            )),
        }
    }

    // ---- sizes -------------------------------------------------------------------------

    /// Binds the size parameters `[n]` of a definition from the shapes of its arguments,
    /// checking that every occurrence of a size agrees.
    fn bind_size_params(
        &self,
        type_params: &'a [TypeParam],
        params: &'a [Pattern],
        args: &[Val<'a>],
        module: usize,
        mut env: Env<'a>,
        span: Span,
    ) -> Res<Env<'a>> {
        let scope = AliasScope {
            module,
            args: Vec::new(),
            parent: None,
        };
        let mut found = Vec::new();
        for (p, a) in params.iter().zip(args) {
            self.pattern_sizes(p, &scope, a, &mut found);
        }
        for tp in type_params {
            let TypeParam::Size(n) = tp else { continue };
            let mut value: Option<(usize, &SizeExp)> = None;
            for (size, actual) in &found {
                if !matches!(size, SizeExp::Named(id) if id.name == n.name) {
                    continue;
                }
                match value {
                    None => value = Some((*actual, size)),
                    Some((v, _)) if v == *actual => {}
                    Some((v, _)) => {
                        return Err(Box::new(
                            error(
                                R_SIZE,
                                span,
                                format!(
                                    "size `{}` is {v} in one argument and {actual} in another",
                                    n.name
                                ),
                            )
                            .with_secondary(n.span, "size parameter declared here"),
                        ));
                    }
                }
            }
            if let Some((v, _)) = value {
                env = env.bind(&n.name, Val::Prim(Scalar::I64(v as i64)));
            }
        }
        Ok(env)
    }

    fn pattern_sizes(
        &self,
        pat: &'a Pattern,
        scope: &AliasScope<'_, 'a>,
        v: &Val<'a>,
        out: &mut Vec<(&'a SizeExp, usize)>,
    ) {
        match (pat, v) {
            (Pattern::Ascribed(p, t, _), v) => {
                self.type_sizes(t, scope, v, out, 0);
                self.pattern_sizes(p, scope, v, out);
            }
            (Pattern::Tuple(ps, _), Val::Tuple(vs)) => {
                for (p, v) in ps.iter().zip(vs.iter()) {
                    self.pattern_sizes(p, scope, v, out);
                }
            }
            (Pattern::Record(fs, _), Val::Record(vs)) => {
                for (name, p) in fs {
                    if let Some((_, v)) = vs.iter().find(|(n, _)| *n == name.name) {
                        self.pattern_sizes(p, scope, v, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// Collects `(size, actual length)` for every array dimension of type `t` that `v` has.
    fn type_sizes(
        &self,
        t: &'a TypeExp,
        scope: &AliasScope<'_, 'a>,
        v: &Val<'a>,
        out: &mut Vec<(&'a SizeExp, usize)>,
        depth: usize,
    ) {
        match (t, v) {
            (TypeExp::Unique(t, _), v) => self.type_sizes(t, scope, v, out, depth),
            (TypeExp::Array(..), Val::Array(a)) => self.dim_sizes(t, scope, a, 0, out, depth),
            (TypeExp::Tuple(ts, _), Val::Tuple(vs)) => {
                for (t, v) in ts.iter().zip(vs.iter()) {
                    self.type_sizes(t, scope, v, out, depth);
                }
            }
            (TypeExp::Record(fs, _), Val::Record(vs)) => {
                for (name, t) in fs {
                    if let Some((_, v)) = vs.iter().find(|(n, _)| *n == name.name) {
                        self.type_sizes(t, scope, v, out, depth);
                    }
                }
            }
            (TypeExp::Name(name, args, _), v) if depth < MAX_ALIAS_DEPTH => {
                self.with_alias(name.name.as_str(), args, scope, |body, inner| {
                    self.type_sizes(body, inner, v, out, depth + 1)
                });
            }
            _ => {}
        }
    }

    fn dim_sizes(
        &self,
        t: &'a TypeExp,
        scope: &AliasScope<'_, 'a>,
        a: &Array<'a>,
        dim: usize,
        out: &mut Vec<(&'a SizeExp, usize)>,
        depth: usize,
    ) {
        match t {
            TypeExp::Unique(t, _) => self.dim_sizes(t, scope, a, dim, out, depth),
            TypeExp::Array(size, elem, _) if dim < a.rank() => {
                if let Some(size) = resolve_size(size, scope) {
                    out.push((size, a.shape()[dim]));
                }
                self.dim_sizes(elem, scope, a, dim + 1, out, depth);
            }
            TypeExp::Name(name, args, _) if depth < MAX_ALIAS_DEPTH => {
                self.with_alias(name.name.as_str(), args, scope, |body, inner| {
                    self.dim_sizes(body, inner, a, dim, out, depth + 1)
                });
            }
            t if dim == a.rank() && a.elem_count() > 0 => {
                self.type_sizes(t, scope, &a.elem(0), out, depth);
            }
            _ => {}
        }
    }

    /// Runs `k` on the body of type alias `name` (or on the type argument `name` stands for),
    /// in the scope that gives meaning to its names. Unknown names (type parameters) are
    /// skipped: they carry no sizes.
    fn with_alias(
        &self,
        name: &str,
        args: &'a [TypeArg],
        scope: &AliasScope<'_, 'a>,
        k: impl FnOnce(&'a TypeExp, &AliasScope<'_, 'a>),
    ) {
        if let Some((_, arg)) = scope.args.iter().find(|(n, _)| *n == name) {
            if let (TypeArg::Type(t), Some(parent)) = (arg, scope.parent) {
                k(t, parent);
            }
            return;
        }
        let Some((module, alias)) = self.find_alias(scope.module, name) else {
            return;
        };
        let inner = AliasScope {
            module,
            args: alias
                .params
                .iter()
                .zip(args)
                .map(|(p, a)| match p {
                    TypeParam::Size(n) | TypeParam::Type(n) | TypeParam::Constrained(n, _) => {
                        (n.name.as_str(), a)
                    }
                })
                .collect(),
            parent: Some(scope),
        };
        k(&alias.body, &inner);
    }

    fn find_alias(
        &self,
        module: usize,
        name: &str,
    ) -> Option<(usize, &'a ogham_compiler::syntax::ast::TypeAlias)> {
        let m = self.program.modules.get(module)?;
        let own = m.decls.iter().find_map(|d| match d {
            Decl::TypeAlias(a) if a.name.name == name => Some((module, a)),
            _ => None,
        });
        own.or_else(|| {
            m.imports.iter().rev().find_map(|&i| {
                self.program
                    .modules
                    .get(i)?
                    .decls
                    .iter()
                    .find_map(|d| match d {
                        Decl::TypeAlias(a) if a.name.name == name => Some((i, a)),
                        _ => None,
                    })
            })
        })
    }

    /// Checks `v :> t`: every constant or named size of `t` must equal the value's length in
    /// that dimension.
    fn check_coercion(&self, v: &Val<'a>, t: &'a TypeExp, env: &Env<'a>, span: Span) -> Res<()> {
        let scope = AliasScope {
            module: self.module_of(span),
            args: Vec::new(),
            parent: None,
        };
        let mut found = Vec::new();
        self.type_sizes(t, &scope, v, &mut found, 0);
        for (size, actual) in found {
            let (expected, name) = match size {
                SizeExp::Const(n, _) => (*n as i64, n.to_string()),
                SizeExp::Named(id) => (
                    as_int(self.lookup(&id.name, env, id.span)?, id.span)?,
                    id.name.clone(),
                ),
                SizeExp::Any(_) => continue,
            };
            if expected != actual as i64 {
                let shape = match v {
                    Val::Array(a) => shape_text(a.shape()),
                    other => other.describe(),
                };
                let msg = if name == expected.to_string() {
                    format!("value of shape {shape} cannot be coerced to size {expected}")
                } else {
                    format!(
                        "value of shape {shape} cannot be coerced to size `{name}` = {expected}"
                    )
                };
                return Err(error(R_COERCE, span, msg));
            }
        }
        Ok(())
    }
}

/// The size a written size stands for once alias parameters are replaced by their arguments.
fn resolve_size<'a>(size: &'a SizeExp, scope: &AliasScope<'_, 'a>) -> Option<&'a SizeExp> {
    let SizeExp::Named(id) = size else {
        return Some(size);
    };
    match scope.args.iter().find(|(n, _)| *n == id.name) {
        Some((_, TypeArg::Size(s))) => resolve_size(s, scope.parent?),
        Some((_, TypeArg::Type(_))) => None,
        None => Some(size),
    }
}

/// Whether a parameter is declared unique (`(xs: *[n]t)`): its argument is consumed.
fn is_unique(p: &Pattern) -> bool {
    matches!(p, Pattern::Ascribed(_, TypeExp::Unique(..), _))
}

fn closure<'a>(callee: Callee<'a>) -> Val<'a> {
    Val::Fun(Rc::new(Closure {
        callee,
        args: Vec::new(),
    }))
}

/// Field `name` of a record, or component `name` (`"0"`, `"1"`, ...) of a tuple.
fn project<'a>(v: Val<'a>, name: &str) -> Option<Val<'a>> {
    match v {
        Val::Tuple(vs) => vs.get(name.parse::<usize>().ok()?).cloned(),
        Val::Record(fs) => fs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()),
        _ => None,
    }
}

/// `r with a.b = v`.
fn set_field<'a>(r: Val<'a>, path: &[&str], v: Val<'a>) -> Option<Val<'a>> {
    let Some((first, rest)) = path.split_first() else {
        return Some(v);
    };
    match r {
        Val::Record(fs) => {
            let mut fs: Vec<_> = fs.iter().cloned().collect();
            let slot = fs.iter_mut().find(|(n, _)| n == first)?;
            slot.1 = set_field(slot.1.clone(), rest, v)?;
            Some(Val::Record(Rc::from(fs)))
        }
        Val::Tuple(vs) => {
            let mut vs: Vec<_> = vs.iter().cloned().collect();
            let slot = vs.get_mut(first.parse::<usize>().ok()?)?;
            *slot = set_field(slot.clone(), rest, v)?;
            Some(Val::tuple(vs))
        }
        _ => None,
    }
}

pub fn as_array(v: Val<'_>, span: Span) -> Res<Array<'_>> {
    match v {
        Val::Array(a) => Ok(a),
        other => Err(error(
            R_INTERNAL,
            span,
            format!("expected an array, got {}", other.describe()),
        )),
    }
}

pub fn as_int(v: Val<'_>, span: Span) -> Res<i64> {
    match v {
        Val::Prim(s) if s.prim_type().is_int() => Ok(s.as_i64()),
        other => Err(error(
            R_INTERNAL,
            span,
            format!("expected an integer, got {}", other.describe()),
        )),
    }
}

pub fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

fn unbound(name: &str, span: Span) -> Box<Diagnostic> {
    Box::new(
        error(R_INTERNAL, span, format!("`{name}` is not bound"))
            .with_note("a size parameter that no argument determines has no value at run time"),
    )
}

fn consumed(name: &str, span: Span) -> Box<Diagnostic> {
    error(
        R_INTERNAL,
        span,
        format!("`{name}` is used after being consumed"),
    )
}
