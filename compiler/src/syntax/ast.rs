//! The abstract syntax tree produced by the parser.
//!
//! The AST is close to the surface syntax: operator sections, pipes, `let ... in` chains and loop
//! forms are kept as written so diagnostics can point at them. Every node carries a [`Span`];
//! every expression also carries an [`ExprId`] unique within one [`Program`], which the type
//! checker uses as the key of its side table of types (see `typeck`).
//!
//! Invariants: spans are never empty for nodes that came from source text; `ExprId`s are dense
//! (`0..Program::expr_count`) and unique across all modules of a program.

use ogham_ir::op as ir_op;
use ogham_ir::source::{FileId, Span};
use ogham_ir::types::PrimType;

/// Index of an expression; dense and unique across a [`Program`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// A whole program: the root module and everything it imports, transitively.
#[derive(Clone, Debug)]
pub struct Program {
    /// Modules in dependency order: every module comes after the modules it imports;
    /// the implicitly imported prelude is first and the root module is last.
    pub modules: Vec<Module>,
    /// Number of expression ids handed out (`ExprId(0..expr_count)`).
    pub expr_count: u32,
}

impl Program {
    pub fn root(&self) -> &Module {
        self.modules.last().expect("a program has a root module")
    }
}

/// One `.og` file.
#[derive(Clone, Debug)]
pub struct Module {
    pub file: FileId,
    /// The canonical import path of this module (`lib/prelude`, `programs/bfast`, or the root
    /// file's path as given by the user).
    pub name: String,
    /// Indices into [`Program::modules`] of the modules this one imports, in source order.
    pub imports: Vec<usize>,
    pub decls: Vec<Decl>,
}

// A program has few declarations; boxing `Def` would only add noise to every use.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Decl {
    Def(Def),
    TypeAlias(TypeAlias),
    Import(Import),
}

/// `import "lib/linalg"`
#[derive(Clone, Debug)]
pub struct Import {
    pub path: String,
    pub span: Span,
}

/// `type name 'a [n] = texp`
#[derive(Clone, Debug)]
pub struct TypeAlias {
    pub name: Ident,
    pub params: Vec<TypeParam>,
    pub body: TypeExp,
    pub doc: Option<String>,
    pub span: Span,
}

/// `#[name]` on a definition, e.g. `#[unsafe]` (no bounds checks) or `#[inline]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub name: String,
    pub span: Span,
}

/// `def` or `entry` definition:
/// `def f [n] 'a (xs: [n]a) (k: i64) : [n]a = body`.
#[derive(Clone, Debug)]
pub struct Def {
    pub name: Ident,
    /// `entry` definitions are the program's callable entry points.
    pub entry: bool,
    /// The text of the `-- |` doc comment lines directly above the definition, if any.
    pub doc: Option<String>,
    pub attrs: Vec<Attr>,
    pub type_params: Vec<TypeParam>,
    pub params: Vec<Pattern>,
    pub ret: Option<TypeExp>,
    pub body: Expr,
    pub span: Span,
}

/// A size parameter `[n]`, a type parameter `'a`, or a constrained type parameter
/// `('t: float)` (the type and its class: `num`, `int` or `float`).
#[derive(Clone, Debug)]
pub enum TypeParam {
    Size(Ident),
    Type(Ident),
    Constrained(Ident, Ident),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A written type.
#[derive(Clone, Debug)]
pub enum TypeExp {
    Prim(PrimType, Span),
    /// `[n]t`, `[3]t`, `[]t`.
    Array(SizeExp, Box<TypeExp>, Span),
    /// `(t1, t2)`; `()` is the empty tuple.
    Tuple(Vec<TypeExp>, Span),
    /// `{a: t1, b: t2}` in source order.
    Record(Vec<(Ident, TypeExp)>, Span),
    /// A type variable `'a` (written with the quote only in parameter lists; `a` in types) or a
    /// type alias name, possibly applied to arguments: `vec 3`, `pair f32`.
    Name(Ident, Vec<TypeArg>, Span),
    /// `t1 -> t2`.
    Arrow(Box<TypeExp>, Box<TypeExp>, Span),
    /// `*t`: a unique (consumable) argument or result.
    Unique(Box<TypeExp>, Span),
}

#[derive(Clone, Debug)]
pub enum TypeArg {
    Size(SizeExp),
    Type(TypeExp),
}

impl TypeExp {
    pub fn span(&self) -> Span {
        match self {
            TypeExp::Prim(_, s)
            | TypeExp::Array(_, _, s)
            | TypeExp::Tuple(_, s)
            | TypeExp::Record(_, s)
            | TypeExp::Name(_, _, s)
            | TypeExp::Arrow(_, _, s)
            | TypeExp::Unique(_, s) => *s,
        }
    }
}

/// The size in `[size]t`.
#[derive(Clone, Debug)]
pub enum SizeExp {
    /// `[n]`
    Named(Ident),
    /// `[3]`
    Const(u64, Span),
    /// `[]`: any size (a fresh unknown size).
    Any(Span),
}

#[derive(Clone, Debug)]
pub enum Pattern {
    /// `x`
    Var(Ident),
    /// `_`
    Wildcard(Span),
    /// `(p1, p2)`; `()` is the unit pattern.
    Tuple(Vec<Pattern>, Span),
    /// `{a, b = p}`
    Record(Vec<(Ident, Pattern)>, Span),
    /// `(p: t)`
    Ascribed(Box<Pattern>, TypeExp, Span),
}

impl Pattern {
    pub fn span(&self) -> Span {
        match self {
            Pattern::Var(i) => i.span,
            Pattern::Wildcard(s)
            | Pattern::Tuple(_, s)
            | Pattern::Record(_, s)
            | Pattern::Ascribed(_, _, s) => *s,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub id: ExprId,
    pub span: Span,
    pub kind: ExprKind,
}

/// A literal as written. `suffix` is the explicit type suffix (`1f32`, `2i64`); literals without
/// one get their type from inference (integers default to `i32`, floats to `f64`, as in Futhark).
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    pub value: LitValue,
    pub suffix: Option<PrimType>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LitValue {
    /// Integer literal (decimal, `0x` hex or `0b` binary; `_` separators allowed).
    Int(u64),
    /// Float literal (`1.5`, `1e-3`, `2.0f32`).
    Float(f64),
    Bool(bool),
    /// `nan`
    Nan,
    /// `inf`
    Inf,
}

/// Binary operators, listed from loosest to tightest binding (Futhark's table):
/// `|> <|` < `||` < `&&` < comparisons < `| ^ &` < `<< >>` < `+ -` < `* / % // %%` < `**`.
/// All are left-associative except `<|` and `**`, which are right-associative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BinOp {
    PipeRight, // |>
    PipeLeft,  // <|
    Or,        // ||
    And,       // &&
    Eq,        // ==
    Ne,        // !=
    Lt,        // <
    Le,        // <=
    Gt,        // >
    Ge,        // >=
    BitOr,     // |
    BitXor,    // ^
    BitAnd,    // &
    Shl,       // <<
    Shr,       // >>
    Add,       // +
    Sub,       // -
    Mul,       // *
    Div,       // /
    Mod,       // %   (floored for integers, as Futhark)
    Quot,      // //  (truncating integer division)
    Rem,       // %%  (truncating integer remainder)
    Pow,       // **
}

impl BinOp {
    /// The source spelling; a scalar operator's is its IR operator's ([`BinOp::ir`]).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::PipeRight => "|>",
            BinOp::PipeLeft => "<|",
            BinOp::Or => "||",
            BinOp::And => "&&",
            op => op.ir().expect("every other operator is scalar").symbol(),
        }
    }

    /// The IR operator that this one applies to two evaluated scalars: `&&` and `||` as `&`
    /// and `|` on `bool` (both operands evaluated, as in their sections; where they
    /// short-circuit, lowering makes them `if`s first). `None` for the pipes, which are
    /// applications. Lowering and the AST interpreter take their operators from here
    /// (`lower/surface.rs` converts the rest of the scalar syntax).
    pub fn ir(self) -> Option<ir_op::BinOp> {
        use ir_op::BinOp as I;
        Some(match self {
            BinOp::PipeRight | BinOp::PipeLeft => return None,
            BinOp::Or | BinOp::BitOr => I::BitOr,
            BinOp::And | BinOp::BitAnd => I::BitAnd,
            BinOp::Eq => I::Eq,
            BinOp::Ne => I::Ne,
            BinOp::Lt => I::Lt,
            BinOp::Le => I::Le,
            BinOp::Gt => I::Gt,
            BinOp::Ge => I::Ge,
            BinOp::BitXor => I::BitXor,
            BinOp::Shl => I::Shl,
            BinOp::Shr => I::Shr,
            BinOp::Add => I::Add,
            BinOp::Sub => I::Sub,
            BinOp::Mul => I::Mul,
            BinOp::Div => I::Div,
            BinOp::Mod => I::Mod,
            BinOp::Quot => I::Quot,
            BinOp::Rem => I::Rem,
            BinOp::Pow => I::Pow,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!x`: logical not on `bool`, bitwise not on integers.
    Not,
}

/// One component of an index or slice: `a[i]`, `a[i:j]`, `a[:n]`, `a[i:j:s]`, `a[:, 0]`.
// Slices are rare and short-lived; the size difference does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum IndexArg {
    Index(Expr),
    Slice {
        start: Option<Expr>,
        end: Option<Expr>,
        stride: Option<Expr>,
        span: Span,
    },
}

/// The name in a variable reference: plain `x`, or qualified by a numeric module such as
/// `f32.sqrt`, `f32.i64` (conversion), `i64.max`, `f64.nan`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QualName {
    pub qualifier: Option<String>,
    pub name: String,
}

impl std::fmt::Display for QualName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.qualifier {
            Some(q) => write!(f, "{q}.{}", self.name),
            None => write!(f, "{}", self.name),
        }
    }
}

#[derive(Clone, Debug)]
pub enum LoopForm {
    /// `for i < n`
    For(Ident, Box<Expr>),
    /// `for x in xs`
    ForIn(Pattern, Box<Expr>),
    /// `for i in lo..hi`: `i` counts from `lo` up to `hi - 1` (none when `hi <= lo`)
    Range(Ident, Box<Expr>, Box<Expr>),
    /// `while cond`
    While(Box<Expr>),
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Lit(Literal),
    Var(QualName),
    /// `(a, b)`; `()` is the unit value.
    Tuple(Vec<Expr>),
    /// `{a = e1, b = e2}` in source order.
    Record(Vec<(Ident, Expr)>),
    /// `[e1, e2, ...]`
    ArrayLit(Vec<Expr>),
    /// `e.0` (tuple projection, field name `"0"`) or `e.field`.
    Field(Box<Expr>, Ident),
    /// `a[i, j:k]`
    Index(Box<Expr>, Vec<IndexArg>),
    /// `f a b c`: a function applied to one or more arguments (kept flat).
    Apply(Box<Expr>, Vec<Expr>),
    BinOp(BinOp, Box<Expr>, Box<Expr>),
    UnOp(UnOp, Box<Expr>),
    /// `(+)`
    OpSection(BinOp),
    /// `(x +)`: the left operand given.
    LeftSection(BinOp, Box<Expr>),
    /// `(+ x)`: the right operand given.
    RightSection(BinOp, Box<Expr>),
    /// `\x (y: f32) -> body`, optionally `\x : t -> body`.
    Lambda(Vec<Pattern>, Option<TypeExp>, Box<Expr>),
    /// `let p = e in body`
    Let(Pattern, Box<Expr>, Box<Expr>),
    /// `let f [n] (x: t) : r = e in body`: a local function.
    LetFun(Box<LocalFun>, Box<Expr>),
    /// `let a[i] = v in body`: sugar for `let a = a with [i] = v in body`.
    LetWith(Ident, Vec<IndexArg>, Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `assert cond "message" e`: `e` if `cond` holds, else a run-time error with the message
    /// (`R0710`) at the `assert`.
    Assert(Box<Expr>, String, Box<Expr>),
    /// `trace "label" e`: `e`, after printing it with the label and the location of the
    /// `trace` (on the executors that trace: `docs/reference.md`, "Tracing").
    Trace(String, Box<Expr>),
    /// `loop pat = init for i < n do body`; with no `= init`, the pattern's variables must be in
    /// scope and are their own initial values.
    Loop {
        pat: Pattern,
        init: Option<Box<Expr>>,
        form: LoopForm,
        body: Box<Expr>,
    },
    /// `a with [i, j] = v`: in-place update of a unique array.
    Update(Box<Expr>, Vec<IndexArg>, Box<Expr>),
    /// `r with field = v`: functional record (or tuple, field `0`) update.
    RecordUpdate(Box<Expr>, Vec<Ident>, Box<Expr>),
    /// `e : t`
    Ascribe(Box<Expr>, TypeExp),
    /// `e :> t`: size coercion, checked at run time.
    Coerce(Box<Expr>, TypeExp),
}

#[derive(Clone, Debug)]
pub struct LocalFun {
    pub name: Ident,
    pub type_params: Vec<TypeParam>,
    pub params: Vec<Pattern>,
    pub ret: Option<TypeExp>,
    pub body: Expr,
}
