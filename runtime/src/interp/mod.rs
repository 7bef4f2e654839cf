//! The reference interpreter: the definition of Ogham's semantics.
//!
//! TODO(interpreter helper).

use crate::value::Value;
use ogham_compiler::diag::Diagnostic;
use ogham_compiler::source::SourceMap;
use ogham_compiler::syntax::ast::Program;
use ogham_compiler::typeck::Checked;

/// Runs entry point `entry` of the root module on `args`; returns its outputs (a tuple result
/// is several outputs). Errors (bad arguments, out-of-bounds, shape mismatches) are diagnostics
/// with the source location.
pub fn run_entry(
    sources: &SourceMap,
    program: &Program,
    checked: &Checked,
    entry: &str,
    args: Vec<Value>,
) -> Result<Vec<Value>, Diagnostic> {
    let _ = (sources, program, checked, entry, args);
    todo!("interpreter")
}
