//! Temporary stand-in for `ogham::cache` (same API) until that module is merged: compiles a
//! program through `ogham::Frontend` and the CPU backend's `Library`, without caching.

use ogham::Backend;
use ogham::compiler::diag::Diagnostic;
use ogham::compiler::syntax::ast::Decl;
use ogham::compiler::types::Type;
use ogham::runtime::library::Library;
use ogham::runtime::value::Value;
use ogham::{Frontend, compiler::pipeline};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub enum Source<'a> {
    File(&'a Path),
    Text { name: &'a str, text: &'a str },
}

pub struct Options {
    pub backend: Backend,
    pub tuning: Option<PathBuf>,
}

pub struct EntryInfo {
    pub name: String,
    pub doc: Option<String>,
    pub params: Vec<(String, Type)>,
    pub results: Vec<Type>,
}

pub struct Compiled {
    fe: Frontend,
    lib: Library,
    entries: Vec<EntryInfo>,
    backend: Backend,
}

pub type CompileError = String;

impl Compiled {
    pub fn entries(&self) -> Vec<EntryInfo> {
        self.entries
            .iter()
            .map(|e| EntryInfo {
                name: e.name.clone(),
                doc: e.doc.clone(),
                params: e.params.clone(),
                results: e.results.clone(),
            })
            .collect()
    }
    pub fn call(&self, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, Box<Diagnostic>> {
        match self.backend {
            Backend::Cpu => self.lib.call(entry, args),
            b => b.run(&self.fe, entry, args, None),
        }
    }
    pub fn render(&self, d: &Diagnostic) -> String {
        self.lib.render(d)
    }
    pub fn backend(&self) -> Backend {
        self.backend
    }
}

pub fn compile(source: Source, options: &Options) -> Result<Arc<Compiled>, CompileError> {
    let fe = match source {
        Source::File(p) => Frontend::load(p),
        Source::Text { name, text } => Frontend::load_source(name, text),
    }
    .map_err(|e| e.render())?;
    let ir = fe
        .compile(pipeline::Options::KERNEL)
        .map_err(|d| ogham::compiler::diag::render(&fe.sources, &[*d]))?;
    let root = fe.program.modules.last().expect("root module");
    let entries = fe
        .checked
        .entries
        .iter()
        .map(|e| EntryInfo {
            name: e.name.clone(),
            doc: match &root.decls[e.decl] {
                Decl::Def(d) => d.doc.clone(),
                _ => None,
            },
            params: e.params.clone(),
            results: e.results.clone(),
        })
        .collect();
    let lib = Library::new(fe.sources.clone(), ir);
    Ok(Arc::new(Compiled {
        fe,
        lib,
        entries,
        backend: options.backend,
    }))
}

pub fn open(path: &Path) -> Result<Arc<Compiled>, CompileError> {
    Err(format!("opening {} needs ogham::cache", path.display()))
}
