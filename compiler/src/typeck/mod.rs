//! Type checking: names, types, sizes, polymorphism and uniqueness.
//!
//! TODO(type checker helper).

use crate::builtins::Builtin;
use crate::diag::Diagnostic;
use crate::source::{SourceMap, Span};
use crate::syntax::ast::Program;
use crate::types::Type;

/// What a variable reference ([`crate::syntax::ast::ExprKind::Var`]) denotes.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolution {
    /// A variable bound by a pattern, a lambda, a loop or a size parameter in scope.
    Local,
    /// Top-level declaration `decl` of module `module` (indices into `Program::modules` and
    /// `Module::decls`).
    Def { module: usize, decl: usize },
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
}

/// Checks a loaded program, reporting every error found (not only the first).
pub fn check(sources: &SourceMap, program: &Program) -> Result<Checked, Vec<Diagnostic>> {
    let _ = (sources, program);
    todo!("type checker")
}
