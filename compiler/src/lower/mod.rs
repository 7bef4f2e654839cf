//! Lowering: the type-checked AST to core IR, one [`Function`] per entry point.
//!
//! # Algorithm
//!
//! Lowering is an evaluator over the AST that produces IR statements instead of values. Every
//! source expression evaluates to a [`LVal`]: a leaf operand (a scalar or an array variable), a
//! tuple of values (tuples, records with fields in name order, unit, and arrays of tuples, which
//! are tuples of arrays), or a function value (a closure over the lowering environment). So:
//!
//! - **Inlining and defunctionalisation** are by construction: applying a function value to its
//!   last argument lowers the function's body in the callee's environment, right there. Ogham has
//!   no recursion, so this terminates. Function values never reach the IR; one that would have to
//!   (a function chosen by an `if` at run time, or carried by a loop) is reported as E0801.
//! - **Monomorphisation** is implicit: IR types are computed bottom-up from the operands (a
//!   `map` produces arrays of the lambda's result types, with the input's outer size), never from
//!   the type checker's polymorphic types. The type checker's types are consulted only for
//!   literals, record field order, empty array literals, the targets of size coercions and the
//!   members of a type parameter's module (`t.i64`, `t.nan`); in a polymorphic body they are
//!   read through the instance's type arguments (`Checked::type_args_at` at each use of a
//!   polymorphic function, carried by its closure), so `('t: float)` code lowers to exactly the
//!   IR of the same code written for `f32` or `f64`.
//! - **Sizes** are operands. A size parameter `[n]` of a definition is bound, at each call, to the
//!   dimension of the argument it annotates; entry points get one `i64` size parameter per named
//!   size. A size that differs between the branches of an `if`, or across loop iterations, becomes
//!   an existential size returned by the statement (see `ir`'s header). A size that `:>`
//!   names is looked up by the type checker's name in the environment.
//! - **SOAC lambdas** must return arrays whose sizes are known before the SOAC runs: size
//!   computations that do not depend on the lambda's parameters are hoisted in front of it
//!   (`map (\xs -> xs[1:]) xss`); sizes that depend on them (`map (\n -> iota n) ns`, a
//!   `filter` per row) are reported as E0801.
//!
//! # Invariants relied on
//!
//! The program type-checked: operators get operands of the same scalar type, applications have
//! the right number and kinds of arguments, patterns match the shape of the values they bind.
//! A violation is reported as an internal error (`E0899`), never a panic.

mod apply;
mod builtins;
mod expr;
pub mod surface;

use crate::syntax::ast::{self, Decl, Expr, LocalFun, Pattern, SizeExp, TypeExp};
use crate::typeck::Checked;
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::{SourceMap, Span};
use ogham_ir::types::{self, PrimType, TypeArgs};
use ogham_ir::{Body, Function, Param, Program, Signature, Stmt, SubExp, Type, VarId};
use std::collections::HashMap;
use std::rc::Rc;

/// A construct the compiler cannot lower (yet); the interpreter may still run it.
pub const E_UNSUPPORTED: &str = "E0801";
/// A lowering invariant did not hold: a compiler bug.
pub const E_INTERNAL: &str = "E0899";

/// Lowers every entry point of the root module to an IR function.
pub fn lower(
    _sources: &SourceMap,
    program: &ast::Program,
    checked: &Checked,
) -> Result<Program, Vec<Diagnostic>> {
    let mut functions = Vec::new();
    let mut errors = Vec::new();
    for entry in &checked.entries {
        let mut lowerer = Lowerer::new(program, checked, &entry.name);
        match lowerer.entry(entry) {
            Ok(()) => functions.push(lowerer.function),
            Err(d) => errors.push(*d),
        }
    }
    if errors.is_empty() {
        let unchecked = unsafe_spans(program.modules.iter().flat_map(|m| &m.decls));
        Ok(Program {
            functions,
            thresholds: Vec::new(),
            unchecked,
        })
    } else {
        Err(errors)
    }
}

/// The source ranges of the `#[unsafe]` definitions among `decls`, in order: the program's
/// [`Program::unchecked`] ranges. A loaded library's ranges are checked against those of its
/// embedded sources with this same function (`back::lower::unsafe_ranges`, for
/// `ogham_runtime`'s `cpu::untrusted`).
pub fn unsafe_spans<'a>(decls: impl IntoIterator<Item = &'a Decl>) -> Vec<Span> {
    decls
        .into_iter()
        .filter_map(|d| match d {
            Decl::Def(def) if def.attrs.iter().any(|a| a.name == "unsafe") => Some(def.span),
            _ => None,
        })
        .collect()
}

type Res<T> = Result<T, Box<Diagnostic>>;

/// A source value during lowering.
#[derive(Clone, Debug)]
enum LVal<'p> {
    Leaf(SubExp),
    Tuple(Vec<LVal<'p>>),
    Fun(Rc<Closure<'p>>),
}

/// A function value: what it is, plus the arguments it has been given so far.
#[derive(Clone, Debug)]
struct Closure<'p> {
    callee: Callee<'p>,
    args: Vec<LVal<'p>>,
}

#[derive(Clone, Debug)]
enum Callee<'p> {
    /// A top-level definition (module, declaration index) with its type arguments at this use.
    Def(usize, usize, Rc<TypeArgs>),
    /// A local function or lambda with the environment and type arguments it sees.
    Local(&'p LocalFun, Env<'p>, Rc<TypeArgs>),
    Lambda(&'p Expr, Env<'p>, Rc<TypeArgs>),
    Builtin(crate::builtins::Builtin, ast::ExprId),
    /// `(+)`, `(x +)`, `(+ x)`: the operator with its fixed operands (`None`: a parameter).
    Op(
        ast::BinOp,
        Option<Box<LVal<'p>>>,
        Option<Box<LVal<'p>>>,
        Span,
    ),
}

/// Names in scope: variables, local functions, size parameters.
type Env<'p> = Rc<HashMap<String, LVal<'p>>>;

struct Lowerer<'p> {
    program: &'p ast::Program,
    checked: &'p Checked,
    function: Function,
    /// Statements of the body being built (nested bodies swap their own in).
    stmts: Vec<Stmt>,
    env: Env<'p>,
    /// The values of the type parameters of the polymorphic definitions being inlined (each
    /// instance is lowered with its own: monomorphisation).
    types: Rc<TypeArgs>,
    /// The source location of the expression being lowered.
    loc: Span,
}

impl<'p> Lowerer<'p> {
    fn new(program: &'p ast::Program, checked: &'p Checked, name: &str) -> Lowerer<'p> {
        Lowerer {
            program,
            checked,
            function: Function::new(name),
            stmts: Vec::new(),
            env: Rc::new(HashMap::new()),
            types: Rc::new(TypeArgs::new()),
            loc: Span::default(),
        }
    }

    fn unsupported(&self, what: impl Into<String>) -> Box<Diagnostic> {
        Box::new(
            Diagnostic::error(E_UNSUPPORTED, what)
                .with_primary(self.loc, "not supported by the compiler")
                .with_note("the reference interpreter (`--backend interp`) runs this program"),
        )
    }

    fn internal(&self, what: impl Into<String>) -> Box<Diagnostic> {
        Box::new(
            Diagnostic::error(
                E_INTERNAL,
                format!("internal compiler error: {}", what.into()),
            )
            .with_primary(self.loc, "while lowering this"),
        )
    }

    fn new_var(&mut self, name: &str, ty: Type) -> VarId {
        self.function.new_var(name, ty)
    }

    fn ty(&self, se: SubExp) -> Type {
        self.function.subexp_type(se)
    }

    /// Emits `let (pat) = exp`.
    fn emit(&mut self, pat: Vec<VarId>, exp: ogham_ir::Exp) {
        self.stmts.push(Stmt {
            pat,
            exp,
            loc: self.loc,
        });
    }

    /// Emits `let x: ty = exp` and returns `x`.
    fn bind(&mut self, name: &str, ty: Type, exp: ogham_ir::Exp) -> SubExp {
        let v = self.new_var(name, ty);
        self.emit(vec![v], exp);
        SubExp::Var(v)
    }

    /// Runs `f` with a fresh statement list; returns its result and the statements.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<(T, Vec<Stmt>)> {
        let outer = std::mem::take(&mut self.stmts);
        let env = self.env.clone();
        let result = f(self);
        self.env = env;
        let inner = std::mem::replace(&mut self.stmts, outer);
        Ok((result?, inner))
    }

    fn entry(&mut self, entry: &crate::typeck::EntryPoint) -> Res<()> {
        let module = self.program.root();
        let Decl::Def(def) = &module.decls[entry.decl] else {
            return Err(self.internal("entry point is not a definition"));
        };
        self.loc = def.span;
        self.function.loc = entry.span;
        self.function.signature = Signature {
            params: entry.params.clone(),
            results: entry.results.clone(),
            fields: entry.fields.clone(),
        };
        let mut sizes: HashMap<String, SubExp> = HashMap::new();
        let mut env = HashMap::new();
        for (pattern, (pname, ty)) in def.params.iter().zip(&entry.params) {
            let first = self.function.params.len();
            let value = self.entry_param(pname, ty, Vec::new(), &mut sizes)?;
            if is_unique(pattern) {
                for p in &mut self.function.params[first..] {
                    p.unique = true;
                }
            }
            self.env = Rc::new(env);
            self.bind_pattern(pattern, value)?;
            env = (*self.env).clone();
        }
        for (name, size) in &sizes {
            env.insert(name.clone(), LVal::Leaf(*size));
        }
        self.env = Rc::new(env);
        let result = self.expr(&def.body)?;
        let mut results = Vec::new();
        self.leaves(&result, &mut results)?;
        self.function.body = Body {
            stmts: std::mem::take(&mut self.stmts),
            result: results,
        };
        Ok(())
    }

    /// The value of an entry parameter of source type `ty` in arrays of `shape` (empty for the
    /// parameter itself): fresh IR parameters for its components (one array per component of
    /// an array of tuples/records), with size parameters shared by name.
    fn entry_param(
        &mut self,
        name: &str,
        ty: &types::Type,
        shape: Vec<SubExp>,
        sizes: &mut HashMap<String, SubExp>,
    ) -> Res<LVal<'p>> {
        match ty {
            types::Type::Prim(p) => {
                let v = self.new_var(name, Type::with_shape(*p, shape));
                self.function.params.push(Param {
                    var: v,
                    unique: false,
                });
                Ok(LVal::Leaf(SubExp::Var(v)))
            }
            types::Type::Tuple(ts) => Ok(LVal::Tuple(
                ts.iter()
                    .map(|t| self.entry_param(name, t, shape.clone(), sizes))
                    .collect::<Res<_>>()?,
            )),
            types::Type::Record(fs) => Ok(LVal::Tuple(
                fs.iter()
                    .map(|(f, t)| self.entry_param(&format!("{name}_{f}"), t, shape.clone(), sizes))
                    .collect::<Res<_>>()?,
            )),
            types::Type::Array(..) => {
                let mut full = shape;
                let mut inner = ty;
                while let types::Type::Array(e, size) = inner {
                    full.push(match size {
                        types::Size::Const(n) => SubExp::i64(*n as i64),
                        types::Size::Var(s) => *sizes.entry(s.clone()).or_insert_with(|| {
                            SubExp::Var(self.function.new_var(s, Type::Prim(PrimType::I64)))
                        }),
                        types::Size::Unknown(_) => {
                            SubExp::Var(self.function.new_var("d", Type::Prim(PrimType::I64)))
                        }
                    });
                    inner = e;
                }
                self.entry_param(name, inner, full, sizes)
            }
            t if shape.is_empty() => {
                Err(self.unsupported(format!("an entry parameter of type {t}")))
            }
            t => Err(self.unsupported(format!("an entry parameter with elements of type {t}"))),
        }
    }

    /// The flat operands of a value; functions cannot be flattened.
    fn leaves(&self, v: &LVal<'p>, out: &mut Vec<SubExp>) -> Res<()> {
        match v {
            LVal::Leaf(se) => out.push(*se),
            LVal::Tuple(vs) => {
                for v in vs {
                    self.leaves(v, out)?;
                }
            }
            LVal::Fun(_) => {
                return Err(self.unsupported(
                    "a function value stored in data (returned by `if`/`loop` or an entry point)",
                ));
            }
        }
        Ok(())
    }

    /// Rebuilds a value of `shape`'s structure from flat operands.
    fn rebuild(shape: &LVal<'p>, flat: &mut impl Iterator<Item = SubExp>) -> LVal<'p> {
        match shape {
            LVal::Tuple(vs) => LVal::Tuple(vs.iter().map(|v| Self::rebuild(v, flat)).collect()),
            _ => LVal::Leaf(flat.next().expect("as many operands as leaves")),
        }
    }

    /// Binds a pattern to a value, including the size names of its type annotations.
    fn bind_pattern(&mut self, pattern: &'p Pattern, value: LVal<'p>) -> Res<()> {
        match pattern {
            Pattern::Var(id) => {
                Rc::make_mut(&mut self.env).insert(id.name.clone(), value);
                Ok(())
            }
            Pattern::Wildcard(_) => Ok(()),
            Pattern::Tuple(ps, _) => match value {
                LVal::Tuple(vs) if vs.len() == ps.len() => {
                    for (p, v) in ps.iter().zip(vs) {
                        self.bind_pattern(p, v)?;
                    }
                    Ok(())
                }
                // A one-element parenthesised pattern is the value itself.
                v if ps.len() == 1 => self.bind_pattern(&ps[0], v),
                _ => Err(self.internal("tuple pattern against a non-tuple")),
            },
            Pattern::Record(fields, _) => {
                let LVal::Tuple(vs) = value else {
                    return Err(self.internal("record pattern against a non-record"));
                };
                let mut sorted: Vec<&(ast::Ident, Pattern)> = fields.iter().collect();
                sorted.sort_by(|a, b| a.0.name.cmp(&b.0.name));
                if sorted.len() != vs.len() {
                    return Err(self.unsupported("a record pattern that omits fields"));
                }
                for ((_, p), v) in sorted.into_iter().zip(vs) {
                    self.bind_pattern(p, v)?;
                }
                Ok(())
            }
            Pattern::Ascribed(p, texp, _) => {
                self.bind_sizes(texp, &value);
                self.bind_pattern(p, value)
            }
        }
    }

    /// Binds the size names of a type annotation (`[n]f32`) to the dimensions of `value`.
    fn bind_sizes(&mut self, texp: &TypeExp, value: &LVal<'p>) {
        match (texp, value) {
            (TypeExp::Unique(t, _), v) => self.bind_sizes(t, v),
            (TypeExp::Tuple(ts, _), LVal::Tuple(vs)) if ts.len() == vs.len() => {
                for (t, v) in ts.iter().zip(vs) {
                    self.bind_sizes(t, v);
                }
            }
            (TypeExp::Array(..), _) => {
                let mut leaves = Vec::new();
                let _ = self.leaves(value, &mut leaves);
                let Some(first) = leaves.first() else { return };
                let shape = self.ty(*first).shape().to_vec();
                let mut t = texp;
                let mut d = 0;
                while let TypeExp::Array(size, inner, _) = t {
                    if let (SizeExp::Named(n), Some(dim)) = (size, shape.get(d))
                        && !self.env.contains_key(&n.name)
                    {
                        Rc::make_mut(&mut self.env).insert(n.name.clone(), LVal::Leaf(*dim));
                    }
                    d += 1;
                    t = inner;
                }
            }
            _ => {}
        }
    }

    /// The statements of a nested body computing `f`'s value, and its flat results.
    fn body_of(&mut self, f: impl FnOnce(&mut Self) -> Res<LVal<'p>>) -> Res<(LVal<'p>, Body)> {
        let (value, stmts) = self.nested(|this| {
            let v = f(this)?;
            let mut flat = Vec::new();
            this.leaves(&v, &mut flat)?;
            Ok((v, flat))
        })?;
        let (value, result) = value;
        Ok((value, Body { stmts, result }))
    }
}

/// Whether a parameter pattern is annotated unique (`(xs: *[n]f32)`).
fn is_unique(pattern: &Pattern) -> bool {
    match pattern {
        Pattern::Ascribed(p, t, _) => matches!(t, TypeExp::Unique(..)) || is_unique(p),
        Pattern::Tuple(ps, _) if ps.len() == 1 => is_unique(&ps[0]),
        _ => false,
    }
}

/// The element type of a source type (for empty array literals and literals).
fn prim_of(t: &types::Type) -> Option<PrimType> {
    match t {
        types::Type::Prim(p) => Some(*p),
        _ => None,
    }
}
