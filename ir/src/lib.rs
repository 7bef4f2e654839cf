//! The Ogham IR, shared by the compiler (which builds and transforms it) and the runtime (which
//! executes it): the core IR (this module), the kernel IR ([`kir`]), their operators ([`op`]) and
//! scalar semantics ([`scalar`]), traversal, text form ([`print`], [`parse`]) and verifier
//! ([`verify`]); the types, source locations, diagnostics and checked size arithmetic
//! ([`types`], [`source`], [`diag`], [`sizes`]) they use; the math built-ins ([`math`]); and the
//! contract between generated kernels and the runtime ([`abi`]). Nothing here parses Ogham
//! source, runs a pass or generates code: a runtime that only runs compiled code needs this
//! crate and not the compiler (`ogham-compiler`, with Cranelift).
//!
//! # The core IR
//!
//! A first-order, monomorphic program in A-normal form, the input and output of every
//! middle-end pass (`lower` produces it; `opt` rewrites it; `flatten` turns it into kernel IR).
//!
//! ## Core and kernel forms
//!
//! Bodies, statements, expressions, functions and programs take a [`Form`] parameter that says
//! what a statement may be beyond the core constructs. Core IR is the default, [`Core`], an
//! uninhabited type: `Exp` (that is, `Exp<Core>`) cannot hold a kernel. Kernel IR's host program
//! is `Exp<kir::HostOp>` ([`kir::Program`]), whose [`Exp::Host`] statements launch kernels or
//! read tuning thresholds; a kernel's body, like every lambda's, is core IR again, so a kernel
//! inside a kernel cannot be written. Only the flattener builds kernel IR from core IR (the text
//! parser reads it back). Code that handles both forms is generic over `H: Form` and sees a
//! host statement through [`Form::host`].
//!
//! ## Shape of the IR
//!
//! - A [`Program`] is a list of [`Function`]s, one per entry point: every call has been inlined
//!   (Ogham has no recursion), every lambda defunctionalised, every polymorphic type instantiated.
//! - Variables live in an arena per function ([`Function::vars`]) and are named by [`VarId`]
//!   handles; each has a name hint (for printing) and a [`Type`].
//! - A [`Body`] is a sequence of statements followed by its results. A [`Stmt`] binds a pattern of
//!   one or more variables to an [`Exp`]; operands are [`SubExp`]s (a constant or a variable), so
//!   the IR is in A-normal form.
//! - There are no tuples or records at run time: a tuple of `k` values is `k` variables, an array
//!   of tuples is several arrays, unit is zero values. Statements, lambdas, bodies and `if`/`loop`
//!   return several values.
//! - Types are scalars or arrays of scalars whose dimensions are [`SubExp`]s: constants or `i64`
//!   variables in scope. A size that is not known before a statement runs (the length of a
//!   `filter`'s result, the size an `if` or a `loop` returns) is *existential*: the statement
//!   returns it as an extra `i64` value bound earlier in the same pattern
//!   (`let (k: i64, ys: [k]f32) = ...`), as Futhark does.
//!
//! ## Semantics
//!
//! The meaning of every construct is the reference interpreter's (`ogham-runtime`'s `interp`),
//! restated where it matters on each variant below. The IR evaluator (`ogham_runtime::ireval`)
//! executes this IR, core and kernel forms alike; it is how every pass is tested.
//!
//! ## Invariants (checked by `verify`)
//!
//! - Every variable is bound exactly once (patterns, lambda/loop parameters, function parameters,
//!   segment-space indices), before it is used, and is used only in the scope of its binding.
//! - Operand types match each construct's typing rule; every dimension of every type is a constant
//!   or an `i64` variable in scope.
//! - An array consumed by [`Exp::Update`], a `Scatter`/`Hist` destination or a unique loop
//!   parameter is not used after the consuming statement.

pub mod abi;
pub mod artifact;
pub mod conjunction;
mod constant;
pub use constant::Const;
pub mod count;
pub mod diag;
pub mod kir;
pub mod math;
pub mod op;
pub mod parse;
pub mod print;
pub mod rows;
pub mod scalar;
pub mod sizes;
pub mod source;
pub mod traverse;
pub mod types;
pub mod verify;

use crate::kir::HostOp;
use crate::math::MathFn;
use crate::source::Span;
use crate::types::PrimType;
use op::{BinOp, UnOp};
use std::fmt::Debug;
use std::hash::Hash;

/// What the statements of a body may be beyond the core constructs: [`Core`] (nothing) or
/// kernel IR's host operations ([`HostOp`]).
pub trait Form:
    Clone + Debug + PartialEq + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static
{
    /// Whether this is the host form of kernel IR, where SOACs belong in kernels.
    const HOST: bool;

    /// The host operation this is.
    fn host(&self) -> &HostOp;

    fn host_mut(&mut self) -> &mut HostOp;

    /// `op` in this form, if the form has host operations (for the text parser).
    fn from_host(op: HostOp) -> Option<Self>;
}

/// The form of core IR: no statement beyond the core constructs (an uninhabited type).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Core {}

impl Form for Core {
    const HOST: bool = false;

    fn host(&self) -> &HostOp {
        match *self {}
    }

    fn host_mut(&mut self) -> &mut HostOp {
        match *self {}
    }

    fn from_host(_: HostOp) -> Option<Core> {
        None
    }
}

/// A program of either form: what the middle end produces (core IR when it stops before
/// flattening, kernel IR after) and what an IR text file holds.
#[derive(Clone, Debug)]
pub enum Ir {
    Core(Program),
    Kernel(kir::Program),
}

impl Ir {
    /// The tunable thresholds (none in core IR).
    pub fn thresholds(&self) -> &[kir::Threshold] {
        match self {
            Ir::Core(p) => &p.thresholds,
            Ir::Kernel(p) => &p.thresholds,
        }
    }

    /// The program's text ([`print::print_program`]).
    pub fn print(&self) -> String {
        match self {
            Ir::Core(p) => print::print_program(p),
            Ir::Kernel(p) => print::print_program(p),
        }
    }

    /// Checks the program's invariants ([`verify::verify`]).
    pub fn verify(&self) -> Result<(), Vec<String>> {
        match self {
            Ir::Core(p) => verify::verify(p),
            Ir::Kernel(p) => verify::verify(p),
        }
    }

    /// Reads a program's text ([`parse::parse_program`]) in the given form.
    pub fn parse(text: &str, kernel: bool) -> Result<Ir, parse::ParseError> {
        Ok(if kernel {
            Ir::Kernel(parse::parse_program(text)?)
        } else {
            Ir::Core(parse::parse_program(text)?)
        })
    }

    /// The kernel IR program, if it is one.
    pub fn kernel(self) -> Option<kir::Program> {
        match self {
            Ir::Kernel(p) => Some(p),
            Ir::Core(_) => None,
        }
    }
}

/// A handle to a variable of the enclosing [`Function`]'s arena.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct VarId(pub u32);

impl VarId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An operand: a constant or a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SubExp {
    Const(Const),
    Var(VarId),
}

impl SubExp {
    pub fn i64(n: i64) -> SubExp {
        SubExp::Const(Const::I64(n))
    }

    pub fn as_var(self) -> Option<VarId> {
        match self {
            SubExp::Var(v) => Some(v),
            SubExp::Const(_) => None,
        }
    }

    /// The value of an integer constant ([`Const::int_value`]; `None` for a variable).
    pub fn int_value(self) -> Option<i128> {
        match self {
            SubExp::Const(c) => c.int_value(),
            SubExp::Var(_) => None,
        }
    }
}

/// The type of a variable: a scalar, or a row-major array of scalars with one [`SubExp`]
/// (`i64`) per dimension, outermost first.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Type {
    Prim(PrimType),
    Array { elem: PrimType, shape: Vec<SubExp> },
}

impl Type {
    pub fn rank(&self) -> usize {
        match self {
            Type::Prim(_) => 0,
            Type::Array { shape, .. } => shape.len(),
        }
    }

    pub fn elem(&self) -> PrimType {
        match self {
            Type::Prim(p) | Type::Array { elem: p, .. } => *p,
        }
    }

    pub fn shape(&self) -> &[SubExp] {
        match self {
            Type::Prim(_) => &[],
            Type::Array { shape, .. } => shape,
        }
    }

    /// `elem` with the dimensions `shape` (a scalar when `shape` is empty).
    pub fn with_shape(elem: PrimType, shape: Vec<SubExp>) -> Type {
        if shape.is_empty() {
            Type::Prim(elem)
        } else {
            Type::Array { elem, shape }
        }
    }

    /// The type of one row (`[n][m]f32` -> `[m]f32`, `[n]f32` -> `f32`).
    pub fn row(&self) -> Type {
        Type::with_shape(self.elem(), self.shape().iter().skip(1).copied().collect())
    }

    /// This type with an outer dimension `n` added (`f32` -> `[n]f32`).
    pub fn array_of(&self, n: SubExp) -> Type {
        let mut shape = vec![n];
        shape.extend_from_slice(self.shape());
        Type::Array {
            elem: self.elem(),
            shape,
        }
    }
}

/// A variable's entry in its function's arena.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VarInfo {
    /// A name hint for printing (the source name, or a pass-chosen one); not unique.
    pub name: String,
    pub ty: Type,
}

/// A whole program: one function per entry point, plus the tunable thresholds that kernel IR
/// refers to (empty in core IR).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
pub struct Program<H: Form = Core> {
    pub functions: Vec<Function<H>>,
    pub thresholds: Vec<crate::kir::Threshold>,
    /// The source ranges of `#[unsafe]` definitions: compiled backends may omit the bounds
    /// checks of statements located inside them.
    pub unchecked: Vec<Span>,
}

impl<H: Form> Default for Program<H> {
    fn default() -> Self {
        Program {
            functions: Vec::new(),
            thresholds: Vec::new(),
            unchecked: Vec::new(),
        }
    }
}

/// An entry point with everything it calls inlined.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
pub struct Function<H: Form = Core> {
    pub name: String,
    pub vars: Vec<VarInfo>,
    /// The value parameters, in order: each source parameter spread into its components (a tuple
    /// parameter is several), see [`Function::signature`]. The dimensions of their types are
    /// constants or *size parameters*: `i64` variables bound from the shapes of the arguments
    /// when the function is called (the same variable twice means the sizes must agree).
    pub params: Vec<Param>,
    pub body: Body<H>,
    /// The source types of the parameters and results, for checking arguments and for gathering
    /// the flat results back into tuples/records.
    pub signature: Signature,
    /// The entry point's declaration in the source: argument errors point there.
    #[serde(default)]
    pub loc: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Param {
    pub var: VarId,
    /// `*[n]t` parameters may be consumed (updated in place) by the body.
    pub unique: bool,
}

/// The source-level signature of an entry point (types of the type checker, fully
/// instantiated).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Signature {
    pub params: Vec<(String, crate::types::Type)>,
    pub results: Vec<crate::types::Type>,
    /// For each result that is a record or an array of records, its field names in the
    /// source's declared order (the type sorts them); empty for other results, and empty
    /// altogether when no result declares one. (Always written: the packed libraries' postcard
    /// encoding cannot skip a field; absent, as in libraries of earlier builds, it is empty.)
    #[serde(default)]
    pub fields: Vec<Vec<String>>,
}

impl std::fmt::Display for Signature {
    /// `(xs: [n]f32) (k: i64) : [n]f32`; several results as a tuple.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (name, ty)) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "({name}: {ty})")?;
        }
        match self.results.as_slice() {
            [one] => write!(f, " : {one}"),
            many => {
                let parts: Vec<String> = many.iter().map(|t| t.to_string()).collect();
                write!(f, " : ({})", parts.join(", "))
            }
        }
    }
}

impl<H: Form> Function<H> {
    /// A function named `name` with no variables, parameters or statements yet.
    pub fn new(name: impl Into<String>) -> Function<H> {
        Function {
            name: name.into(),
            vars: Vec::new(),
            params: Vec::new(),
            body: Body::default(),
            signature: Signature::default(),
            loc: Span::default(),
        }
    }

    /// The function with its body replaced by `body`, which may be of another form (the
    /// flattener gives a core function its kernel IR body).
    pub fn with_body<G: Form>(self, body: Body<G>) -> Function<G> {
        Function {
            name: self.name,
            vars: self.vars,
            params: self.params,
            body,
            signature: self.signature,
            loc: self.loc,
        }
    }

    pub fn var(&self, v: VarId) -> &VarInfo {
        &self.vars[v.index()]
    }

    pub fn ty(&self, v: VarId) -> &Type {
        &self.vars[v.index()].ty
    }

    /// The type of an operand.
    pub fn subexp_type(&self, se: SubExp) -> Type {
        match se {
            SubExp::Const(c) => Type::Prim(c.prim_type()),
            SubExp::Var(v) => self.ty(v).clone(),
        }
    }

    /// Adds a fresh variable to the arena.
    pub fn new_var(&mut self, name: impl Into<String>, ty: Type) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(VarInfo {
            name: name.into(),
            ty,
        });
        id
    }
}

/// Statements and the values they compute.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
pub struct Body<H: Form = Core> {
    pub stmts: Vec<Stmt<H>>,
    pub result: Vec<SubExp>,
}

impl<H: Form> Default for Body<H> {
    fn default() -> Self {
        Body {
            stmts: Vec::new(),
            result: Vec::new(),
        }
    }
}

/// `let (pat...) = exp`. `loc` is the source expression the statement comes from; run-time
/// errors (bounds, division by zero, failed size coercions) report it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
pub struct Stmt<H: Form = Core> {
    pub pat: Vec<VarId>,
    pub exp: Exp<H>,
    pub loc: Span,
}

/// One component of an index: a single position (the dimension disappears) or a slice
/// `start:start+len*stride:stride` (the dimension becomes `len`; `stride` may be negative).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DimIndex {
    Fix(SubExp),
    Slice {
        start: SubExp,
        len: SubExp,
        stride: SubExp,
    },
}

/// Expressions of the form `H`. Operands are always [`SubExp`]s; nested code is in [`Body`]s (of
/// the same form: `if`, `loop`) and [`Lambda`]s (core IR).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
pub enum Exp<H: Form = Core> {
    /// The operand itself (a copy of a scalar; an alias of an array).
    SubExp(SubExp),
    /// A scalar binary operator ([`op::BinOp`]: pipes are applications and `&&`, `||` are
    /// `if`s, so that they short-circuit). Operands have the same type; comparisons return
    /// `bool`. Integer `/`, `%` by zero are run-time errors. Semantics: [`scalar`].
    BinOp(BinOp, SubExp, SubExp),
    UnOp(UnOp, SubExp),
    /// A math function (`f32.sqrt`, `i64.max`, ...) at the given scalar type.
    Math(MathFn, PrimType, Vec<SubExp>),
    /// Conversion to `to` (Futhark's `f32.i64` etc.; float to integer truncates and saturates,
    /// NaN gives 0).
    Convert(PrimType, SubExp),
    /// `a[i, j:k, ...]`: with as many components as dimensions or fewer (the rest are taken
    /// whole). Out-of-bounds is a run-time error. A slice is a view, not a copy.
    Index(VarId, Vec<DimIndex>),
    /// `a with [i, ...] = v`: consumes `a`, returns it with the element/slice replaced.
    Update(VarId, Vec<DimIndex>, SubExp),
    /// `[0, 1, ..., n-1]` of type `[n]i64`.
    Iota(SubExp),
    /// `n` copies of the value (scalar or array): `[n]t` for a value of type `t`.
    Replicate(SubExp, SubExp),
    /// An array literal; the elements have type `elem_type` (which may itself be an array).
    ArrayLit(Vec<SubExp>, Type),
    /// Permutes the dimensions: result dimension `d` is input dimension `perm[d]`
    /// (`transpose` is `[1, 0, 2, 3, ...]`).
    Rearrange(VarId, Vec<usize>),
    /// The same elements in row-major order with another shape; the element counts must agree
    /// (a run-time error otherwise). Also checks size coercions `:>` of whole arrays.
    Reshape(VarId, Vec<SubExp>),
    /// Concatenation along the outer dimension; rows must have the same shape.
    Concat(Vec<VarId>),
    /// A fresh copy (the result may be consumed without consuming the operand).
    Copy(VarId),
    /// A run-time check: fails with `message` at the statement's location when `cond` is false.
    /// Binds no variables.
    Assert {
        cond: SubExp,
        message: String,
        kind: AssertKind,
    },
    /// `trace "label" e`: prints the value (a scalar or an array) with the label and the
    /// statement's location, on the executors that trace (the IR evaluator when it is given a
    /// sink; the compiled backends do not), and binds no variables: the traced expression's
    /// value is used directly. Like [`Exp::Assert`] it is an effect, which the optimiser keeps
    /// where it is: never removed as dead, merged with another trace or moved out of the code
    /// that runs it (only removed with dead code around it).
    Trace {
        label: String,
        value: SubExp,
    },
    If {
        cond: SubExp,
        then_body: Body<H>,
        else_body: Body<H>,
        /// The types of the results; their dimensions may refer to earlier results of the same
        /// `if` (existential sizes).
        ret: Vec<Type>,
    },
    /// A sequential loop. The loop parameters start as the initial values; each iteration
    /// binds them to the previous iteration's body results; the statement returns the final
    /// values. Parameters may be size variables that later parameters' types refer to.
    Loop {
        params: Vec<(VarId, SubExp)>,
        form: LoopForm,
        body: Body<H>,
    },
    Soac(Soac),
    /// An operation of the form beyond the core constructs (kernel IR: [`HostOp`]).
    Host(H),
}

impl<H: Form> Exp<H> {
    /// This expression in the form `G`, if it holds no body and no host operation; otherwise
    /// (`If`, `Loop`, `Soac`, `Host`) itself, unchanged.
    #[allow(
        clippy::result_large_err,
        reason = "the error is the expression, given back"
    )]
    pub fn flat<G: Form>(self) -> Result<Exp<G>, Exp<H>> {
        Ok(match self {
            Exp::SubExp(a) => Exp::SubExp(a),
            Exp::BinOp(op, a, b) => Exp::BinOp(op, a, b),
            Exp::UnOp(op, a) => Exp::UnOp(op, a),
            Exp::Math(f, t, args) => Exp::Math(f, t, args),
            Exp::Convert(t, a) => Exp::Convert(t, a),
            Exp::Index(v, idx) => Exp::Index(v, idx),
            Exp::Update(v, idx, x) => Exp::Update(v, idx, x),
            Exp::Iota(n) => Exp::Iota(n),
            Exp::Replicate(n, x) => Exp::Replicate(n, x),
            Exp::ArrayLit(xs, t) => Exp::ArrayLit(xs, t),
            Exp::Rearrange(v, perm) => Exp::Rearrange(v, perm),
            Exp::Reshape(v, shape) => Exp::Reshape(v, shape),
            Exp::Concat(vs) => Exp::Concat(vs),
            Exp::Copy(v) => Exp::Copy(v),
            Exp::Assert {
                cond,
                message,
                kind,
            } => Exp::Assert {
                cond,
                message,
                kind,
            },
            Exp::Trace { label, value } => Exp::Trace { label, value },
            compound @ (Exp::If { .. } | Exp::Loop { .. } | Exp::Soac(_) | Exp::Host(_)) => {
                return Err(compound);
            }
        })
    }
}

impl<H: Form> Exp<H> {
    /// Whether this statement has an effect beyond the variables it binds (an assertion may
    /// fail, a trace prints): passes keep it where it is, even when it binds nothing used.
    pub fn is_effect(&self) -> bool {
        matches!(self, Exp::Assert { .. } | Exp::Trace { .. })
    }

    /// Whether evaluating this can never raise a run-time error: scalar arithmetic except
    /// `/`, `%`, `//`, `%%` by a divisor that is not a non-zero constant (integer division by
    /// zero fails; the type is not looked at, so a float division by a variable counts as
    /// possibly failing), conversions, math functions, and `if`s of such statements.
    pub fn cannot_fail(&self) -> bool {
        match self {
            Exp::SubExp(_) | Exp::UnOp(..) | Exp::Convert(..) | Exp::Math(..) => true,
            Exp::BinOp(op, _, divisor) if op.is_division() => {
                matches!(divisor, SubExp::Const(c) if c.bits() != 0)
            }
            Exp::BinOp(..) => true,
            Exp::If {
                then_body,
                else_body,
                ..
            } => then_body
                .stmts
                .iter()
                .chain(&else_body.stmts)
                .all(|s| s.exp.cannot_fail()),
            _ => false,
        }
    }
}

/// What a failed [`Exp::Assert`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum AssertKind {
    /// Sizes that must agree differ (the interpreter's `R0704`).
    Size,
    /// A source `assert` failed (`R0710`).
    User,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum LoopForm {
    /// `for i < bound`: `i: i64` runs from 0 to `bound - 1`.
    For { index: VarId, bound: SubExp },
    /// `while cond`: `cond` is one of the loop's `bool` parameters, tested before each
    /// iteration.
    While { cond: VarId },
}

/// A function literal applied by a SOAC: parameters, body, result types. The body may refer to
/// variables of the enclosing scope.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Lambda {
    pub params: Vec<VarId>,
    pub body: Body,
    pub ret: Vec<Type>,
}

impl Lambda {
    /// Whether this is `\a b -> a + b` (or `b + a`): one addition of its two parameters.
    pub fn is_addition(&self) -> bool {
        let ([a, b], [s], [SubExp::Var(r)]) = (
            &self.params[..],
            &self.body.stmts[..],
            &self.body.result[..],
        ) else {
            return false;
        };
        let adds = matches!(&s.exp, Exp::BinOp(BinOp::Add, SubExp::Var(x), SubExp::Var(y))
            if (x, y) == (a, b) || (x, y) == (b, a));
        adds && s.pat == [*r]
    }
}

/// An associative operator with its neutral element, for scans and reductions. `lambda` takes
/// `2k` parameters (accumulator values then element values) and returns `k` values.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScanOp {
    pub lambda: Lambda,
    pub neutral: Vec<SubExp>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RedOp {
    pub lambda: Lambda,
    pub neutral: Vec<SubExp>,
    /// Declared commutative (`reduce_comm`), so the order of combination may change.
    pub commutative: bool,
}

/// The operators of a Screma's scans then reductions, with their neutral elements.
pub fn screma_operators<'a>(
    scans: &'a [ScanOp],
    reds: &'a [RedOp],
) -> Vec<(&'a Lambda, &'a [SubExp])> {
    scans
        .iter()
        .map(|s| (&s.lambda, s.neutral.as_slice()))
        .chain(reds.iter().map(|r| (&r.lambda, r.neutral.as_slice())))
        .collect()
}

/// One histogram of a [`Soac::Hist`]: `dests` are consumed arrays of `num_bins` rows each (one
/// per value component), combined with `op` (`2k` parameters, `k` results).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HistOp {
    pub num_bins: SubExp,
    pub dests: Vec<VarId>,
    pub op: Lambda,
    pub neutral: Vec<SubExp>,
}

/// Second-order array combinators. Each applies its `map` lambda to the rows of its `inputs`
/// (all of outer size `width`), then combines the lambda's results as described on the variant.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Soac {
    /// Map, scan and reduce in one pass (Futhark's `Screma`). The lambda returns first the
    /// values fed to each scan (in order, `k` per scan of `k` values), then those fed to each
    /// reduction, then the mapped values. The statement returns the scanned arrays, then the
    /// reduced values, then the mapped arrays (`[width]t` each).
    Screma {
        width: SubExp,
        inputs: Vec<VarId>,
        map: Lambda,
        scans: Vec<ScanOp>,
        reds: Vec<RedOp>,
    },
    /// Writes into the consumed `dests`: for destination `d` the lambda returns an index then a
    /// value, in the order `(i_0, v_0, i_1, v_1, ...)`; out-of-bounds indices are ignored.
    /// Returns the updated destinations.
    Scatter {
        width: SubExp,
        inputs: Vec<VarId>,
        map: Lambda,
        dests: Vec<VarId>,
    },
    /// Generalised histograms (`hist`, `reduce_by_index`): for each [`HistOp`] the lambda
    /// returns a bin index then that histogram's `k` values; out-of-bounds bins are ignored.
    /// Returns the updated destinations of every histogram, in order.
    Hist {
        width: SubExp,
        inputs: Vec<VarId>,
        map: Lambda,
        hists: Vec<HistOp>,
    },
}

impl Soac {
    pub fn width(&self) -> SubExp {
        match self {
            Soac::Screma { width, .. } | Soac::Scatter { width, .. } | Soac::Hist { width, .. } => {
                *width
            }
        }
    }

    pub fn inputs(&self) -> &[VarId] {
        match self {
            Soac::Screma { inputs, .. }
            | Soac::Scatter { inputs, .. }
            | Soac::Hist { inputs, .. } => inputs,
        }
    }

    /// The inputs and the map lambda, for rewriting.
    pub fn inputs_and_map_mut(&mut self) -> (&mut Vec<VarId>, &mut Lambda) {
        match self {
            Soac::Screma { inputs, map, .. }
            | Soac::Scatter { inputs, map, .. }
            | Soac::Hist { inputs, map, .. } => (inputs, map),
        }
    }

    pub fn map_lambda(&self) -> &Lambda {
        match self {
            Soac::Screma { map, .. } | Soac::Scatter { map, .. } | Soac::Hist { map, .. } => map,
        }
    }
}
