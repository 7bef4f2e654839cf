//! The standard library's definitions with their signatures and doc comments, for completing
//! the names of library modules a file does not import (the completion adds the `import`).
//!
//! The library is checked once per process, as `ogham doc --stdlib` checks it: a root module
//! importing every embedded module.
//!
//! Invariants: only definitions of embedded library modules (`lib/...`) are listed, each with
//! the import path of its module; the list is computed at most once.

use crate::Frontend;
use crate::doc::model::def_item;
use ogham_compiler::syntax::ast::Decl;
use std::sync::OnceLock;

/// A definition of the standard library.
pub struct LibraryDef {
    /// The module's import path (`lib/stats`).
    pub module: String,
    pub name: String,
    /// `def nanmedian ('t: float) [n] (xs: [n]t) : t`.
    pub signature: String,
    pub doc: Option<String>,
}

/// Every definition of the standard library, in module order.
pub fn definitions() -> &'static [LibraryDef] {
    static DEFS: OnceLock<Vec<LibraryDef>> = OnceLock::new();
    DEFS.get_or_init(|| {
        let root: String = ogham_compiler::stdlib::MODULES
            .iter()
            .map(|(path, _)| format!("import \"{path}\"\n"))
            .collect();
        let Ok(fe) = Frontend::load_embedded("ogham-lsp-library", &root) else {
            return Vec::new();
        };
        let mut defs = Vec::new();
        let modules = &fe.program.modules;
        for (m, module) in modules
            .iter()
            .enumerate()
            .take(modules.len().saturating_sub(1))
        {
            for (i, d) in module.decls.iter().enumerate() {
                let Decl::Def(def) = d else { continue };
                let item = def_item(def, fe.checked.def_types.get(&(m, i)), "", String::new());
                defs.push(LibraryDef {
                    module: module.name.clone(),
                    name: item.name.clone(),
                    signature: format!("{} {}{}", item.kind.keyword(), item.name, item.signature),
                    doc: item.doc,
                });
            }
        }
        defs
    })
}
