//! The reference interpreter (`ogham-interp`): the definition of Ogham's semantics.
//!
//! It evaluates the parsed AST directly, using the type checker's side tables for what the
//! syntax leaves open: the types of unsuffixed literals and of empty arrays, and what each name
//! refers to. Every other backend must agree with it (the corpus runs every program on all of
//! them and compares). Scalar operators, math functions, conversions and literals have the IR's
//! one definition (`ogham_ir::scalar`, through `ogham_runtime::scalar` and
//! `ogham_compiler::lower::surface`), which constant folding shares.
//!
//! What it relies on:
//! - the front end (`ogham-compiler`): the AST (`syntax::ast`), the type checker's results
//!   (`typeck::Checked`: types, resolutions, entry points) and the table of built-ins
//!   (`builtins`). It runs only programs the type checker accepted; an expectation of that kind
//!   found broken (a checker bug) is reported as the internal error `R0708`, not a panic;
//! - the runtime's base layer (`ogham-runtime`), the same one every executor of compiled code
//!   uses: the values it computes with (`val`, here with closures as function values) and those
//!   crossing the boundary (`value`), indexing (`index`), the check of entry arguments
//!   (`boundary`), the memory limit (`memory`), traces (`trace`) and the run-time errors
//!   (`error`). The runtime itself knows nothing of the AST or of this crate
//!   (`runtime/tests/layering.rs`).
//!
//! | module     | contents                                                                    |
//! |------------|-----------------------------------------------------------------------------|
//! | `value`    | function values, environments, arrays built from rows (the rest: `val`'s)   |
//! | `eval`     | expressions, patterns, application, loops, size parameters                  |
//! | `builtins` | the array built-ins (SOACs and shape functions)                             |
//! | `entry`    | arguments (checked by `boundary`) and results at the entry point            |
//! | `laws`     | checks that SOAC operators are associative and neutral (opt-in)             |
//! | `trace`    | `trace "label" e`: reports the value to the caller's sink (the runtime's)   |
//!
//! Its run-time errors are those of every executor (`ogham_runtime::error`); the warnings W0720
//! and W0721 of `--check-laws` are its own (`laws`).

mod builtins;
mod entry;
mod eval;
mod laws;
mod trace;
mod value;

use ogham_compiler::syntax::ast::Program;
use ogham_compiler::typeck::Checked;
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::SourceMap;
use ogham_runtime::error::{R_INTERNAL, Res};
use ogham_runtime::value::Value;

/// Runs entry point `entry` of the root module on `args`; returns its outputs (a tuple result
/// is several outputs). Errors (bad arguments, out-of-bounds, shape mismatches) are diagnostics
/// with the source location. Evaluation runs on its own thread with a large stack.
// The shared backend interface returns the diagnostic unboxed.
#[allow(clippy::result_large_err)]
pub fn run_entry(
    sources: &SourceMap,
    program: &Program,
    checked: &Checked,
    entry: &str,
    args: Vec<Value>,
) -> Result<Vec<Value>, Diagnostic> {
    run_entry_with(sources, program, checked, entry, args, false).0
}

/// [`run_entry`], checking the laws of the operators of `reduce`, `scan`, `hist` and
/// `reduce_by_index` on the values the run sees (module `laws`): returns the warnings (codes
/// `W0720`, `W0721`) beside the outcome.
pub fn run_entry_checking_laws(
    sources: &SourceMap,
    program: &Program,
    checked: &Checked,
    entry: &str,
    args: Vec<Value>,
) -> (Result<Vec<Value>, Diagnostic>, Vec<Diagnostic>) {
    run_entry_with(sources, program, checked, entry, args, true)
}

fn run_entry_with(
    sources: &SourceMap,
    program: &Program,
    checked: &Checked,
    entry: &str,
    args: Vec<Value>,
    laws: bool,
) -> (Result<Vec<Value>, Diagnostic>, Vec<Diagnostic>) {
    let _ = sources;
    let sink = ogham_runtime::trace::current();
    let run = move || -> (Res<Vec<Value>>, Vec<Diagnostic>) {
        let mut interp = eval::Interp::new(program, checked);
        if laws {
            interp = interp.checking_laws();
        }
        let result = ogham_runtime::trace::with_sink(sink, || {
            entry::run(&interp, &checked.entries, entry, args)
        });
        (result, interp.into_warnings())
    };
    let result = ogham_runtime::stack::on_large_stack("ogham-interp", run).unwrap_or_else(|e| {
        (
            Err(Box::new(Diagnostic::error(
                R_INTERNAL,
                format!("cannot start the interpreter thread: {e}"),
            ))),
            Vec::new(),
        )
    });
    (result.0.map_err(|d| *d), result.1)
}
