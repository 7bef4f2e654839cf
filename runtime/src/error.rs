//! The run-time errors every executor reports (the reference interpreter, the IR evaluator, the
//! CPU and CUDA executors): their codes and how a diagnostic of one is made. The codes are
//! documented in `docs/errors.md`, section "Run-time errors"; E0601-E0609 belong to the type
//! checker's checks of entry-point declarations.
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
//! | R0711 | `--backend cuda` cannot run here: no driver, GPU or NVRTC, or a pre-Volta GPU    |
//! | R0712 | a CUDA driver or NVRTC error                                                     |
//! | R0713 | a `.ogl` library given to a runtime built without the JIT (the `jit` feature)    |
//! | W0720 | warning (`--check-laws`): an operator of `reduce`/`scan`/`hist` not associative   |
//! | W0721 | warning (`--check-laws`): its neutral element is not neutral                     |
//!
//! (W0720 and W0721 are the reference interpreter's alone: `ogham-interp`'s `laws` makes them.)
//!
//! Public for the reference interpreter (`ogham-interp`), which makes its run-time errors the
//! way every executor here does: [`Res`], [`error`], [`assertion_failed`] and the codes it
//! reports. R0711 and R0713 are public for the callers that test for them; the other codes are
//! this crate's own.

use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;

pub(crate) const E_NO_ENTRY: &str = "E0610";
pub(crate) const E_ARG_COUNT: &str = "E0611";
pub(crate) const E_ARG_TYPE: &str = "E0612";
pub(crate) const E_ARG_SIZE: &str = "E0613";
pub const R_DIV_ZERO: &str = "R0701";
pub(crate) const R_INDEX: &str = "R0702";
pub(crate) const R_SLICE: &str = "R0703";
pub const R_SIZE: &str = "R0704";
pub const R_COERCE: &str = "R0705";
pub const R_NEG_SIZE: &str = "R0706";
pub const R_IRREGULAR: &str = "R0707";
pub const R_INTERNAL: &str = "R0708";
pub(crate) const R_OUT_OF_MEMORY: &str = "R0709";
pub(crate) const R_ASSERT: &str = "R0710";
/// Public: the Python package reports it when a backend cannot run (built without CUDA too).
pub const R_CUDA_UNAVAILABLE: &str = "R0711";
pub(crate) const R_CUDA: &str = "R0712";
/// Public: the C interface reports it for a `.ogl` file when built without the `jit` feature.
pub const R_NO_JIT: &str = "R0713";

/// Results of the executors; diagnostics are boxed to keep `Result`s small.
pub type Res<T> = Result<T, Box<Diagnostic>>;

/// An error at `span`, with the message repeated under the caret.
pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Box<Diagnostic> {
    let message = message.into();
    let label = if code == R_INTERNAL {
        "internal error: please report this"
    } else {
        "error raised here"
    };
    Box::new(Diagnostic::error(code, message).with_primary(span, label))
}

/// The error of a failed `assert cond "message" e` at `span`.
pub fn assertion_failed(span: Span, message: &str) -> Box<Diagnostic> {
    error(R_ASSERT, span, format!("assertion failed: {message}"))
}
