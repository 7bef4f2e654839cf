//! Lowering: typed AST -> core IR (placeholder until the lowering work lands).

use crate::diag::Diagnostic;
use crate::ir::Program;
use crate::source::SourceMap;
use crate::syntax::ast;
use crate::typeck::Checked;

/// Lowers every entry point of the root module to an IR function.
pub fn lower(
    _sources: &SourceMap,
    _program: &ast::Program,
    _checked: &Checked,
) -> Result<Program, Vec<Diagnostic>> {
    Err(vec![Diagnostic::error(
        "E0801",
        "lowering to core IR is not implemented yet",
    )])
}
