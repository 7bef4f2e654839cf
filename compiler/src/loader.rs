//! Loading a program: the root file, its imports (transitively) and the implicit prelude.
//!
//! `import "x/y"` in a file on disk names `x/y.og` relative to that file's directory; if there is
//! no such file, `x/y.og` in each import directory ([`search_path`]: those given to
//! [`set_lib_dirs`], e.g. by `ogham --lib DIR`, then those of the `OGHAM_PATH` environment
//! variable, separated by `:` like `PATH`: user libraries); failing that, the embedded standard
//! library module `x/y` ([`crate::stdlib`]).
//! In a library module, imports are looked up relative to the module's own path first
//! (`lib/a` importing `"b"` finds `lib/b`), then as written. A root module embedded in the
//! calling binary ([`load_embedded`]) imports from the standard library only, never from disk.
//!
//! Every module is parsed once, however often it is imported. The prelude `lib/prelude` is
//! loaded first and imported implicitly by every other module (it is the first entry of their
//! [`Module::imports`]); the prelude itself must not import anything.
//!
//! Invariants of the result: [`Program::modules`] is in dependency order (prelude first, root
//! last); expression ids are dense across all modules (`0..expr_count`).
//! Diagnostics: E0201 module not found, E0202 file unreadable, E0203 import cycle; syntax errors
//! of every loaded module are reported together.

use crate::stdlib;
use crate::syntax::ast::{Decl, Module, Program};
use crate::syntax::parse_module;
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::{SourceMap, Span};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::RwLock;

/// The import directories set by [`set_lib_dirs`].
static LIB_DIRS: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());

/// Sets the import directories searched before those of `OGHAM_PATH` (`ogham --lib DIR`), for
/// every later load in this process.
pub fn set_lib_dirs(dirs: Vec<PathBuf>) {
    *LIB_DIRS.write().unwrap_or_else(|e| e.into_inner()) = dirs;
}

/// Loads `root` and everything it imports into `sources`, parsing each module once.
pub fn load(sources: &mut SourceMap, root: &Path) -> Result<Program, Vec<Diagnostic>> {
    let text = std::fs::read_to_string(root).map_err(|e| {
        vec![Diagnostic::error(
            "E0202",
            format!("cannot read `{}`: {e}", root.display()),
        )]
    })?;
    let root = Found {
        origin: Origin::Disk(root.canonicalize().unwrap_or_else(|_| root.to_path_buf())),
        name: root.display().to_string(),
        display: root.display().to_string(),
    };
    Loader::new(sources).run(root, text)
}

/// Loads a program whose root module is given as text (tests, tools); its imports are
/// resolved relative to the current directory, then in the standard library.
pub fn load_source(
    sources: &mut SourceMap,
    name: &str,
    text: &str,
) -> Result<Program, Vec<Diagnostic>> {
    let root = Found {
        origin: Origin::Disk(PathBuf::from(name)),
        name: name.to_string(),
        display: name.to_string(),
    };
    Loader::new(sources).run(root, text.to_string())
}

/// Loads a program whose root module is text embedded in the calling binary (the Python
/// package's bundled programs): its imports are resolved in the standard library only, so no
/// file on disk (in the current directory, a cache, `--lib` or `OGHAM_PATH`) can change it.
pub fn load_embedded(
    sources: &mut SourceMap,
    name: &str,
    text: &str,
) -> Result<Program, Vec<Diagnostic>> {
    let root = Found {
        origin: Origin::Embedded(name.to_string()),
        name: name.to_string(),
        display: format!("<embedded>/{name}"),
    };
    Loader::new(sources).run(root, text.to_string())
}

/// Where a module's text came from; imports are resolved relative to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Origin {
    /// A file (its path; for [`load_source`], a path that need not exist).
    Disk(PathBuf),
    /// A root module embedded in the calling binary ([`load_embedded`]; its name): its imports
    /// are looked up in the standard library only, never on disk.
    Embedded(String),
    /// An embedded library module (its import path, `lib/linalg`).
    Stdlib(String),
}

/// A module to load: where it is, its name ([`Module::name`]) and its name in diagnostics.
struct Found {
    origin: Origin,
    name: String,
    display: String,
}

impl Found {
    fn stdlib(path: &str) -> Found {
        Found {
            origin: Origin::Stdlib(path.to_string()),
            name: path.to_string(),
            display: format!("<stdlib>/{path}.og"),
        }
    }

    /// The file `file` on disk, shown in messages as `shown`.
    fn on_disk(file: &Path, shown: &Path) -> Found {
        Found {
            origin: Origin::Disk(file.canonicalize().unwrap_or_else(|_| file.to_path_buf())),
            name: shown.with_extension("").display().to_string(),
            display: shown.display().to_string(),
        }
    }
}

struct Loader<'a> {
    sources: &'a mut SourceMap,
    modules: Vec<Module>,
    /// Index in `modules` of every module loaded so far.
    loaded: HashMap<Origin, usize>,
    /// The modules being loaded (for cycle detection): origin and display name.
    stack: Vec<(Origin, String)>,
    next_id: u32,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> Loader<'a> {
    fn new(sources: &'a mut SourceMap) -> Loader<'a> {
        Loader {
            sources,
            modules: Vec::new(),
            loaded: HashMap::new(),
            stack: Vec::new(),
            next_id: 0,
            diagnostics: Vec::new(),
        }
    }

    fn run(mut self, root: Found, text: String) -> Result<Program, Vec<Diagnostic>> {
        let prelude = stdlib::lookup(stdlib::PRELUDE).expect("the prelude is embedded");
        self.load_module(Found::stdlib(stdlib::PRELUDE), prelude.to_string());
        self.load_module(root, text);
        if self.diagnostics.is_empty() {
            Ok(Program {
                modules: self.modules,
                expr_count: self.next_id,
            })
        } else {
            Err(self.diagnostics)
        }
    }

    /// Parses one module, loads its imports, and appends it to `modules`.
    /// Returns its index, or `None` if it could not be parsed.
    fn load_module(&mut self, found: Found, text: String) -> Option<usize> {
        let Found {
            origin,
            name,
            display,
        } = found;
        let path = match &origin {
            Origin::Disk(p) => Some(p.clone()),
            Origin::Embedded(_) | Origin::Stdlib(_) => None,
        };
        let file = self.sources.add(display.clone(), path, text);
        let decls = match parse_module(file, &self.sources.get(file).text, &mut self.next_id) {
            Ok(decls) => decls,
            Err(diags) => {
                self.diagnostics.extend(diags);
                return None;
            }
        };
        self.stack.push((origin.clone(), display.clone()));
        let mut imports = Vec::new();
        if name != stdlib::PRELUDE {
            imports.extend(
                self.loaded
                    .get(&Origin::Stdlib(stdlib::PRELUDE.to_string())),
            );
        }
        for decl in &decls {
            if let Decl::Import(import) = decl
                && let Some(index) = self.import(&origin, &display, &import.path, import.span)
                && !imports.contains(&index)
            {
                imports.push(index);
            }
        }
        self.stack.pop();
        self.modules.push(Module {
            file,
            name,
            imports,
            decls,
        });
        let index = self.modules.len() - 1;
        self.loaded.insert(origin, index);
        Some(index)
    }

    /// Resolves and loads `import "path"` of the module from `from` (shown to users as
    /// `from_display`).
    fn import(
        &mut self,
        from: &Origin,
        from_display: &str,
        path: &str,
        span: Span,
    ) -> Option<usize> {
        let found = match self.resolve(from, from_display, path) {
            Ok(found) => found,
            Err(tried) => {
                self.diagnostics.push(
                    Diagnostic::error("E0201", format!("cannot find module `{path}`"))
                        .with_primary(span, "imported here")
                        .with_help(format!(
                            "looked for {}; the standard library has {}",
                            tried.join(", "),
                            stdlib::MODULES
                                .iter()
                                .map(|(p, _)| format!("`{p}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                );
                return None;
            }
        };
        if let Some(&index) = self.loaded.get(&found.origin) {
            return Some(index);
        }
        if let Some(pos) = self.stack.iter().position(|(o, _)| *o == found.origin) {
            let chain: Vec<&str> = self.stack[pos..]
                .iter()
                .map(|(_, n)| n.as_str())
                .chain([found.display.as_str()])
                .collect();
            self.diagnostics.push(
                Diagnostic::error("E0203", format!("import cycle: {}", chain.join(" -> ")))
                    .with_primary(span, "this import closes the cycle")
                    .with_note("modules may not import each other in a cycle"),
            );
            return None;
        }
        let text = match &found.origin {
            Origin::Disk(file) => match std::fs::read_to_string(file) {
                Ok(text) => text,
                Err(e) => {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0202",
                            format!("cannot read `{}`: {e}", file.display()),
                        )
                        .with_primary(span, "imported here"),
                    );
                    return None;
                }
            },
            Origin::Stdlib(p) => stdlib::lookup(p)
                .expect("resolved in the stdlib")
                .to_string(),
            Origin::Embedded(_) => unreachable!("imports never resolve to an embedded root"),
        };
        self.load_module(found, text)
    }

    /// Where `import "path"` in the module from `from` points (its origin and module name), or
    /// the places looked at. Files are found relative to the importing file's real location
    /// and shown relative to how the importing file was shown (so paths in diagnostics stay as
    /// short as the user's command line made them).
    fn resolve(&self, from: &Origin, from_display: &str, path: &str) -> Result<Found, Vec<String>> {
        let mut tried = Vec::new();
        if let Origin::Disk(file) = from {
            let relative = format!("{path}.og");
            let candidate = normalize(&file.parent().unwrap_or(Path::new("")).join(&relative));
            let shown = normalize(
                &Path::new(from_display)
                    .parent()
                    .unwrap_or(Path::new(""))
                    .join(&relative),
            );
            if candidate.is_file() {
                return Ok(Found::on_disk(&candidate, &shown));
            }
            tried.push(format!("`{}`", shown.display()));
        }
        if matches!(from, Origin::Disk(_)) {
            for (dir, given_by) in search_path() {
                let candidate = normalize(&dir.join(format!("{path}.og")));
                if candidate.is_file() {
                    return Ok(Found::on_disk(&candidate, &candidate));
                }
                tried.push(format!("`{}` ({given_by})", candidate.display()));
            }
        }
        let mut library = Vec::new();
        if let Origin::Stdlib(module) = from
            && let Some(dir) = Path::new(module).parent()
        {
            library.push(normalize(&dir.join(path)).display().to_string());
        }
        library.push(path.to_string());
        for candidate in library {
            if stdlib::lookup(&candidate).is_some() {
                return Ok(Found::stdlib(&candidate));
            }
            tried.push(format!("`{candidate}` in the standard library"));
        }
        Err(tried)
    }
}

/// The import directories, in search order, each with what gave it (`--lib`, `OGHAM_PATH`):
/// those of [`set_lib_dirs`], then those of `OGHAM_PATH` (empty entries skipped).
pub fn search_path() -> Vec<(PathBuf, &'static str)> {
    let lib_dirs = LIB_DIRS.read().unwrap_or_else(|e| e.into_inner()).clone();
    let env: Vec<PathBuf> = std::env::var_os("OGHAM_PATH")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    lib_dirs
        .into_iter()
        .map(|d| (d, "--lib"))
        .chain(env.into_iter().map(|d| (d, "OGHAM_PATH")))
        .collect()
}

/// Removes `.` and `name/..` components without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}
