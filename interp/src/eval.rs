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
//! iterative, and the interpreter runs on a thread with a large stack (see `lib.rs`), so the
//! recursion depth is bounded by the nesting depth of the program text.

use super::value::{Array, Builder, Callee, Closure, Env, Val, empty_array};
use ogham_compiler::builtins::Builtin;
use ogham_compiler::lower::surface;
use ogham_compiler::syntax::ast::{
    BinOp, Decl, Expr, ExprKind, IndexArg, Literal, Pattern, Program, QualName, TypeExp,
};
use ogham_compiler::typeck::{Checked, Resolution};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;
use ogham_ir::types::{Type, TypeArgs};
use ogham_runtime::error::{R_INTERNAL, R_IRREGULAR, Res, error};
use ogham_runtime::index::{self, IdxArg};
use ogham_runtime::scalar::{self};
use ogham_runtime::value::Scalar;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

mod apply;
mod patterns;
mod sizes;

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
            ExprKind::Lit(lit) => self.eval_lit(e, lit, env),
            ExprKind::Var(name) => self.eval_var(e, name, env),
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
            ExprKind::ArrayLit(items) => self.eval_array_lit(e, items, env),
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
            ExprKind::Update(target, idx, value) => self.eval_update(e, target, idx, value, env),
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
                    Err(ogham_runtime::error::assertion_failed(e.span, message))
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

    /// A literal, of its suffix's type or else the type the checker gave it.
    fn eval_lit(&self, e: &'a Expr, lit: &Literal, env: &Env<'a>) -> Res<Val<'a>> {
        let ty = match (lit.suffix, &*self.type_of(e, env)) {
            (Some(t), _) | (None, &Type::Prim(t)) => t,
            _ => return Err(error(R_INTERNAL, e.span, "literal without a scalar type")),
        };
        let value = surface::literal(lit.value, ty).map(Scalar::from);
        value
            .map(Val::Prim)
            .ok_or_else(|| error(R_INTERNAL, e.span, format!("literal cannot have type {ty}")))
    }

    /// A variable: a top-level definition, a local (instantiated when it is a polymorphic
    /// local function) or a built-in.
    fn eval_var(&self, e: &'a Expr, name: &QualName, env: &Env<'a>) -> Res<Val<'a>> {
        match self.resolution(e) {
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
        }
    }

    /// `[a, b, ...]`: the rows must have the same shape.
    fn eval_array_lit(&self, e: &'a Expr, items: &'a [Expr], env: &Env<'a>) -> Res<Val<'a>> {
        let mut b = Builder::new(items.len());
        for item in items {
            let v = self.eval(item, env)?;
            self.push_row(&mut b, v, item.span)?;
        }
        Ok(Val::Array(
            b.finish(|| empty_array(&self.type_of(e, env), env)),
        ))
    }

    /// `target with [idx] = value`.
    fn eval_update(
        &self,
        e: &'a Expr,
        target: &'a Expr,
        idx: &'a [IndexArg],
        value: &'a Expr,
        env: &Env<'a>,
    ) -> Res<Val<'a>> {
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
