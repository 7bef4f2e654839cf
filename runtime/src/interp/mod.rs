//! The reference interpreter: the definition of Ogham's semantics.
//!
//! It evaluates the parsed AST directly, using the type checker's side tables for what the
//! syntax leaves open: the types of unsuffixed literals and of empty arrays, and what each name
//! refers to. Every other backend must agree with it. Scalar operators, math functions,
//! conversions and literals have the IR's one definition (`ogham_compiler::ir::scalar`, through
//! `crate::scalar` and `ogham_compiler::lower::surface`), which constant folding shares.
//!
//! | module     | contents                                                              |
//! |------------|-----------------------------------------------------------------------|
//! | `value`    | internal values (flat typed arrays with copy on write), environments  |
//! | `index`    | indexing, slicing, in-place update                                    |
//! | `eval`     | expressions, patterns, application, loops, size parameters           |
//! | `builtins` | the array built-ins (SOACs and shape functions)                       |
//! | `entry`    | argument checking and conversion at the entry-point boundary         |
//! | `laws`     | checks that SOAC operators are associative and neutral (opt-in)      |
//!
//! Errors (documented in `docs/errors.md`, section "Run-time errors"; E0601-E0609 belong to
//! the type checker's checks of entry-point declarations):
//!
//! | code  | meaning                                                                          |
//! |-------|----------------------------------------------------------------------------------|
//! | E0610 | no entry point of that name                                                      |
//! | E0611 | wrong number of arguments for the entry point                                    |
//! | E0612 | argument does not match the parameter type (element type, rank, constant size)   |
//! | E0613 | a size parameter has different values in two arguments                           |
//! | R0701 | integer division or remainder by zero                                            |
//! | R0702 | index out of bounds                                                              |
//! | R0703 | slice out of bounds, or slice stride 0                                           |
//! | R0704 | arrays of different sizes where equal sizes are required                         |
//! | R0705 | size coercion `e :> t` failed                                                    |
//! | R0706 | negative or absurdly large size (`iota`, `replicate`, `unflatten`, `hist`)       |
//! | R0707 | irregular array (rows of different shapes)                                       |
//! | R0708 | internal error: the program violated a type checker guarantee (a bug)            |
//! | R0709 | out of memory: an array over the memory limit (`crate::memory`)                  |
//! | R0710 | a source `assert` failed                                                         |
//! | R0711 | `--backend cuda` cannot run here: no NVIDIA driver, GPU or NVRTC library         |
//! | R0712 | a CUDA driver or NVRTC error                                                     |
//! | W0720 | warning (`--check-laws`): an operator of `reduce`/`scan`/`hist` not associative   |
//! | W0721 | warning (`--check-laws`): its neutral element is not neutral                     |

mod builtins;
mod entry;
mod eval;
pub(crate) mod index;
mod laws;
pub(crate) mod value;

use crate::value::Value;
use ogham_compiler::diag::Diagnostic;
use ogham_compiler::source::{SourceMap, Span};
use ogham_compiler::syntax::ast::Program;
use ogham_compiler::typeck::Checked;

pub(crate) const E_NO_ENTRY: &str = "E0610";
pub(crate) const E_ARG_COUNT: &str = "E0611";
pub(crate) const E_ARG_TYPE: &str = "E0612";
pub(crate) const E_ARG_SIZE: &str = "E0613";
pub(crate) const R_DIV_ZERO: &str = "R0701";
pub(crate) const R_INDEX: &str = "R0702";
pub(crate) const R_SLICE: &str = "R0703";
pub(crate) const R_SIZE: &str = "R0704";
pub(crate) const R_COERCE: &str = "R0705";
pub(crate) const R_NEG_SIZE: &str = "R0706";
pub(crate) const R_IRREGULAR: &str = "R0707";
pub const R_INTERNAL: &str = "R0708";
pub(crate) const R_OUT_OF_MEMORY: &str = "R0709";
pub(crate) const R_ASSERT: &str = "R0710";
pub(crate) const R_CUDA_UNAVAILABLE: &str = "R0711";
pub(crate) const R_CUDA: &str = "R0712";

/// Results inside the interpreter; diagnostics are boxed to keep `Result`s small.
pub(crate) type Res<T> = Result<T, Box<Diagnostic>>;

/// An error at `span`, with the message repeated under the caret.
pub(crate) fn error(code: &'static str, span: Span, message: impl Into<String>) -> Box<Diagnostic> {
    let message = message.into();
    let label = if code == R_INTERNAL {
        "internal error: please report this"
    } else {
        "error raised here"
    };
    Box::new(Diagnostic::error(code, message).with_primary(span, label))
}

/// The error of a failed `assert cond "message" e` at `span`.
pub(crate) fn assertion_failed(span: Span, message: &str) -> Box<Diagnostic> {
    error(R_ASSERT, span, format!("assertion failed: {message}"))
}

/// Stack size of the interpreter thread: evaluation recurses along the nesting of the program
/// text, which deeply nested (generated) programs can make deep.
const STACK_SIZE: usize = 256 << 20;

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
    let run = move || -> (Res<Vec<Value>>, Vec<Diagnostic>) {
        let mut interp = eval::Interp::new(program, checked);
        if laws {
            interp = interp.checking_laws();
        }
        let result = entry::run(&interp, &checked.entries, entry, args);
        (result, interp.into_warnings())
    };
    let result = std::thread::scope(|s| {
        let thread = std::thread::Builder::new()
            .name("ogham-interp".into())
            .stack_size(STACK_SIZE);
        match thread.spawn_scoped(s, run) {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(e) => (
                Err(Box::new(Diagnostic::error(
                    R_INTERNAL,
                    format!("cannot start the interpreter thread: {e}"),
                ))),
                Vec::new(),
            ),
        }
    });
    (result.0.map_err(|d| *d), result.1)
}
