//! `ogham doc`: the HTML reference of files, directories or the standard library
//! ([`ogham::doc`]).
//!
//! Invariants: a library that does not type-check is reported as `ogham check` reports it
//! (rendered diagnostics, [`Failure::Reported`]) and nothing is written.

use crate::{Failure, out};
use ogham_ir::diag::emit_to_stderr;
use std::path::{Path, PathBuf};

/// `ogham doc`: the reference of the files, directories or standard library.
pub(crate) fn doc(paths: Vec<PathBuf>, stdlib: bool, output: &Path) -> Result<(), Failure> {
    let input = if stdlib || paths.is_empty() {
        ogham::doc::Input::Stdlib
    } else {
        ogham::doc::Input::Paths(paths)
    };
    match ogham::doc::generate(&input, output) {
        Ok(modules) => {
            let plural = if modules == 1 { "" } else { "s" };
            outln!(
                "ok: {modules} module{plural} documented in {}",
                output.join("index.html").display()
            );
            Ok(())
        }
        Err(ogham::doc::DocError::Diagnostics(failed)) => {
            for f in &failed {
                emit_to_stderr(&f.sources, &f.diagnostics);
            }
            Err(Failure::Reported)
        }
        Err(ogham::doc::DocError::Message(m)) => Err(Failure::Message(m)),
    }
}
