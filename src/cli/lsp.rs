//! `ogham lsp`: the language server ([`ogham::lsp`]) on standard input and output; with the
//! hidden `--eval-worker`, the child process that evaluates `-- >>>` comments for a server.
//!
//! Invariants: nothing but protocol messages is written to standard output while serving;
//! a broken connection is an error message on standard error (exit code 1).

use crate::Failure;

/// `ogham lsp [--eval-worker]`.
pub(crate) fn lsp(eval_worker: bool) -> Result<(), Failure> {
    let served = if eval_worker {
        ogham::lsp::eval::worker()
    } else {
        ogham::lsp::serve_stdio()
    };
    served.map_err(Failure::Message)
}
