//! Ogham: a nested data-parallel array language for satellite time-series change detection.
//!
//! This crate is the facade over the compiler and the runtime, used by the `ogham` command-line
//! tool and by Rust programs: [`Frontend::load`] parses and type-checks a program, then a backend
//! runs its entry points.

pub use ogham_compiler as compiler;
pub use ogham_runtime as runtime;

use ogham_compiler::diag::Diagnostic;
use ogham_compiler::source::SourceMap;
use ogham_compiler::syntax::ast::Program;
use ogham_compiler::typeck::Checked;
use std::path::Path;

/// A parsed and type-checked program with its sources.
pub struct Frontend {
    pub sources: SourceMap,
    pub program: Program,
    pub checked: Checked,
}

/// Diagnostics of a program that failed to load or check, with the sources to render them.
pub struct FrontendErrors {
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

impl FrontendErrors {
    /// The diagnostics rendered as plain text.
    pub fn render(&self) -> String {
        ogham_compiler::diag::render(&self.sources, &self.diagnostics)
    }
}

impl Frontend {
    /// Loads `path` with its imports and type-checks it.
    pub fn load(path: &Path) -> Result<Frontend, FrontendErrors> {
        let mut sources = SourceMap::new();
        let program = match ogham_compiler::loader::load(&mut sources, path) {
            Ok(p) => p,
            Err(diagnostics) => return Err(FrontendErrors { sources, diagnostics }),
        };
        match ogham_compiler::typeck::check(&sources, &program) {
            Ok(checked) => Ok(Frontend {
                sources,
                program,
                checked,
            }),
            Err(diagnostics) => Err(FrontendErrors { sources, diagnostics }),
        }
    }
}
