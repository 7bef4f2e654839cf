//! Loading a program: the root file, its imports (transitively) and the implicit prelude.
//!
//! TODO(parser helper).

use crate::diag::Diagnostic;
use crate::source::SourceMap;
use crate::syntax::ast::Program;
use std::path::Path;

/// Loads `root` and everything it imports into `sources`, parsing each module once.
pub fn load(sources: &mut SourceMap, root: &Path) -> Result<Program, Vec<Diagnostic>> {
    let _ = (sources, root);
    todo!("loader")
}
