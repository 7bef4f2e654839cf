//! `ogham doc`: an HTML reference of a library, built from its `-- |` doc comments.
//!
//! The inputs are `.og` files, directories (their `.og` files, not recursively) or the
//! built-in standard library. Every file is loaded and type-checked as `ogham check` does,
//! so a library that does not check gets the same diagnostics (one that several files share
//! through an import is reported once) and no pages. The standard library is checked as one
//! program whose root imports every module. [`model`] gathers the modules, definitions and
//! links; [`html`] writes the pages: `NAME.html` for module `NAME.og` and `index.html`.
//!
//! Invariants: the output depends on the inputs only (no time stamps or absolute paths;
//! modules sorted by title, definitions in source order, the index sorted by name), so running
//! it twice gives the same bytes. Nothing is written before every input has checked.

mod html;
mod markdown;
pub(crate) mod model;

use crate::{Frontend, FrontendErrors};
use model::Unit;
use ogham_compiler::stdlib;
use std::path::{Path, PathBuf};

/// What to document.
pub enum Input {
    /// The built-in standard library (`lib/`).
    Stdlib,
    /// `.og` files and directories of `.og` files.
    Paths(Vec<PathBuf>),
}

/// Why no reference was written.
pub enum DocError {
    /// Inputs that do not load or type-check: their diagnostics, each reported once.
    Diagnostics(Vec<FrontendErrors>),
    /// Anything else (an unreadable directory, an unwritable output), as a message.
    Message(String),
}

/// Writes the reference of `input` into the directory `out` (created if needed); returns the
/// number of modules documented.
pub fn generate(input: &Input, out: &Path) -> Result<usize, DocError> {
    let units = match input {
        Input::Stdlib => vec![stdlib_unit()?],
        Input::Paths(paths) => file_units(&expand(paths)?)?,
    };
    let modules = model::modules(&units).map_err(DocError::Message)?;
    let title = match input {
        Input::Stdlib => "The Ogham standard library",
        Input::Paths(_) => "Ogham library reference",
    };
    let mut pages = vec![("index.html".to_string(), html::index_page(title, &modules))];
    for m in &modules {
        pages.push((format!("{}.html", m.page), html::module_page(m)));
    }
    std::fs::create_dir_all(out).map_err(|e| {
        DocError::Message(format!(
            "cannot create the output directory `{}`: {e}",
            out.display()
        ))
    })?;
    for (name, text) in &pages {
        let path = out.join(name);
        std::fs::write(&path, text)
            .map_err(|e| DocError::Message(format!("cannot write `{}`: {e}", path.display())))?;
    }
    Ok(modules.len())
}

/// The standard library as one program: a root importing every module, which is not
/// documented itself.
fn stdlib_unit() -> Result<Unit, DocError> {
    let root: String = stdlib::MODULES
        .iter()
        .map(|(path, _)| format!("import \"{path}\"\n"))
        .collect();
    let frontend =
        Frontend::load_embedded("ogham-doc", &root).map_err(|e| DocError::Diagnostics(vec![e]))?;
    let documented = (0..frontend.program.modules.len() - 1).collect();
    Ok(Unit {
        frontend,
        documented,
    })
}

/// The files to document: the given files, and the `.og` files of the given directories
/// (sorted by name).
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, DocError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let entries = std::fs::read_dir(path).map_err(|e| {
            DocError::Message(format!(
                "cannot read the directory `{}`: {e}",
                path.display()
            ))
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "og"))
            .collect();
        if found.is_empty() {
            return Err(DocError::Message(format!(
                "`{}` has no `.og` files to document",
                path.display()
            )));
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// Each file loaded and checked as the root of its own program.
fn file_units(files: &[PathBuf]) -> Result<Vec<Unit>, DocError> {
    let mut units = Vec::new();
    let mut failed = Vec::new();
    let mut any_failed = false;
    let mut seen = std::collections::HashSet::new();
    for file in files {
        match Frontend::load(file) {
            Ok(frontend) => {
                let root = frontend.program.modules.len() - 1;
                units.push(Unit {
                    frontend,
                    documented: vec![root],
                });
            }
            Err(mut errors) => {
                any_failed = true;
                errors.diagnostics.retain(|d| {
                    seen.insert(ogham_ir::diag::render(
                        &errors.sources,
                        std::slice::from_ref(d),
                    ))
                });
                if !errors.diagnostics.is_empty() {
                    failed.push(errors);
                }
            }
        }
    }
    if !any_failed {
        Ok(units)
    } else {
        Err(DocError::Diagnostics(failed))
    }
}
