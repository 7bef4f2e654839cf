//! Compile once, run many: programs compiled for a backend and kept for every later call, in
//! this process's memory and (CPU backend) on disk (`disk.rs`).
//!
//! [`compile`] returns a shared [`Compiled`] program; a second `compile` of the same program
//! with the same options returns the same `Arc` without running the compiler. The key of a
//! compiled program is a hash of: the root source's identity (the path as given and its real
//! path; for source text, its name and the current directory, from which its imports are
//! resolved; for bundled text, its name alone) and its text, the import directories (`--lib`, `OGHAM_PATH`), the backend, the
//! tuning file's text, the compiler's build id
//! (`ogham_runtime::BUILD_ID`), the CPU features generated code may use and whether SIMD code
//! is on (`OGHAM_SIMD=0` turns it off: an A/B measurement must not get the other's code). A cached program is
//! used only if every source file it was compiled from is unchanged: the root's text equals
//! the given one, and each imported file on disk still has the text it was compiled from (the
//! key cannot cover imports before the program is parsed; the kept sources can). The embedded
//! standard library is covered by the build id.
//!
//! What a [`Compiled`] keeps depends on the backend: `cpu` the kernel IR with the kernels'
//! machine code (compiled once per entry point by the JIT, or loaded from the disk cache);
//! `interp` the type-checked program; `core`, `kir`, `cuda`, `cuda-emu` the optimised IR (the
//! CUDA executor compiles its kernels per call, with its own on-disk cache of CUBINs).
//!
//! ```no_run
//! use ogham::cache::{self, Options, Source};
//! let program = cache::compile(Source::File("bfast.og".as_ref()), &Options::default())?;
//! for entry in program.entries() {
//!     println!("{}: {}", entry.name, entry.doc.as_deref().unwrap_or(""));
//! }
//! # Ok::<(), cache::CompileError>(())
//! ```

mod disk;

pub use disk::Disk;

use crate::codegen::cpu::CPU;
use crate::{Backend, Frontend, FrontendErrors, Tuning};
use ogham_ir::Signature;
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::Threshold;
use ogham_ir::source::SourceMap;
use ogham_ir::types::Type;
use ogham_runtime::ireval::Thresholds;
use ogham_runtime::library::Library;
use ogham_runtime::value::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A program to compile: a file (its imports are resolved relative to it), source text (its
/// imports are resolved relative to the current directory; `name` names it in diagnostics), or
/// source text embedded in the calling binary (its imports come from the embedded standard
/// library only: no file anywhere can change it; the Python package's bundled programs).
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    File(&'a Path),
    Text { name: &'a str, text: &'a str },
    Bundled { name: &'a str, text: &'a str },
}

/// A call in the GPU performance model ([`Compiled::call_modeled`]): the outputs and the
/// modelled seconds.
pub type Modeled = (Vec<Value>, f64);

/// How to compile.
#[derive(Clone, Debug)]
pub struct Options {
    pub backend: Backend,
    /// A tuning file (`ogham autotune`) for the thresholds of multi-versioned kernels
    /// (`kir`, `cpu`, `cuda`, `cuda-emu`).
    pub tuning: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            backend: Backend::Cpu,
            tuning: None,
        }
    }
}

/// An entry point as callers see it.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryInfo {
    pub name: String,
    /// The entry's `-- |` doc comment.
    pub doc: Option<String>,
    /// Parameter names (the pattern's text for non-variable patterns) and types.
    pub params: Vec<(String, Type)>,
    /// Result types; a tuple result is several outputs.
    pub results: Vec<Type>,
    /// The declared field order of record results (see `ogham_ir::Signature::fields`).
    pub fields: Vec<Vec<String>>,
}

/// A program that did not compile (or a library that could not be opened): its diagnostics
/// rendered with their source lines, and their codes.
#[derive(Clone, Debug)]
pub struct CompileError {
    pub rendered: String,
    pub codes: Vec<String>,
    /// The diagnostics and sources, for [`CompileError::emit_to_stderr`].
    diagnostics: Option<(SourceMap, Vec<Diagnostic>)>,
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.rendered.trim_end())
    }
}

impl std::error::Error for CompileError {}

impl CompileError {
    fn diagnostics(sources: SourceMap, diagnostics: Vec<Diagnostic>) -> CompileError {
        CompileError {
            rendered: ogham_ir::diag::render(&sources, &diagnostics),
            codes: diagnostics.iter().map(|d| d.code.to_string()).collect(),
            diagnostics: Some((sources, diagnostics)),
        }
    }

    fn message(message: String) -> CompileError {
        CompileError {
            rendered: message,
            codes: Vec::new(),
            diagnostics: None,
        }
    }

    /// Prints the error on standard error (diagnostics in colour on a terminal).
    pub fn emit_to_stderr(&self) {
        match &self.diagnostics {
            Some((sources, diagnostics)) => ogham_ir::diag::emit_to_stderr(sources, diagnostics),
            None => eprintln!("error: {self}"),
        }
    }
}

/// A compiled program, ready to run its entry points any number of times from any thread.
pub struct Compiled {
    backend: Backend,
    entries: Vec<EntryInfo>,
    thresholds: Thresholds,
    code: Code,
    /// Warnings of the compilation (`W0730`: a trace on a backend that does not trace).
    warnings: Vec<Diagnostic>,
    /// Where the root source came from (see [`Root`]), to check that the sources are current
    /// (`None` for an opened library).
    root: Option<Root>,
}

enum Code {
    Cpu(Library),
    /// A `cpu` program from the disk cache.
    Cached(ogham_runtime::cpu::packed::Packed),
    Interp(Frontend),
    /// Core IR (`core`) or kernel IR (`kir`, `cuda`, `cuda-emu`).
    Ir {
        sources: SourceMap,
        program: ogham_ir::Ir,
    },
}

impl Compiled {
    /// The entry points, in source order.
    pub fn entries(&self) -> Vec<EntryInfo> {
        self.entries.clone()
    }

    /// The entry point `name`, or an error listing the ones there are.
    pub fn entry(&self, name: &str) -> Result<&EntryInfo, String> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| crate::no_entry(name, self.entries.iter().map(|e| e.name.as_str())))
    }

    /// Runs entry point `entry` on `args` (see [`Backend::run`]) with the thresholds of the
    /// tuning file the program was compiled with.
    pub fn call(&self, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, Box<Diagnostic>> {
        self.call_tuned(entry, args, &self.thresholds)
    }

    /// [`Compiled::call`] with other thresholds (the autotuner's candidates; ignored by
    /// `interp`).
    pub fn call_tuned(
        &self,
        entry: &str,
        args: Vec<Value>,
        thresholds: &Thresholds,
    ) -> Result<Vec<Value>, Box<Diagnostic>> {
        match &self.code {
            Code::Cpu(library) => library.call_tuned(entry, args, thresholds),
            Code::Cached(cached) => cached.call(entry, args, thresholds),
            Code::Interp(fe) => {
                ogham_interp::run_entry(&fe.sources, &fe.program, &fe.checked, entry, args)
                    .map_err(Box::new)
            }
            Code::Ir { program, .. } => self.backend.run_ir(program, entry, args, thresholds),
        }
    }

    /// [`Compiled::call_tuned`] in the GPU performance model, for a program compiled for
    /// [`Backend::CudaModel`] (`None` for the other backends): the outputs and the modelled
    /// seconds of the whole call (kernels, copies and allocations), on the GPU
    /// `OGHAM_GPU_MODEL` names, sampling as `OGHAM_MODEL_WARPS` says.
    pub fn call_modeled(
        &self,
        entry: &str,
        args: Vec<Value>,
        thresholds: &Thresholds,
    ) -> Option<Result<Modeled, Box<Diagnostic>>> {
        match &self.code {
            Code::Ir {
                program: ogham_ir::Ir::Kernel(program),
                ..
            } if self.backend == Backend::CudaModel => Some(
                ogham_runtime::cuda::run_model_from_env(
                    crate::codegen::cuda::CUDA,
                    program,
                    entry,
                    args,
                    thresholds,
                )
                .map(|(outputs, report)| (outputs, report.total_seconds())),
            ),
            _ => None,
        }
    }

    /// The warnings of compiling the program (`W0730`, see `crate::trace`).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// A diagnostic of this program (a run-time error), rendered with its source lines.
    pub fn render(&self, d: &Diagnostic) -> String {
        ogham_ir::diag::render(self.sources(), std::slice::from_ref(d))
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The program's source files.
    pub fn sources(&self) -> &SourceMap {
        match &self.code {
            Code::Cpu(library) => library.sources(),
            Code::Cached(cached) => cached.sources(),
            Code::Interp(fe) => &fe.sources,
            Code::Ir { sources, .. } => sources,
        }
    }

    /// The tunable thresholds of the program's kernel IR (none for `interp`).
    pub fn tunable(&self) -> &[Threshold] {
        match &self.code {
            Code::Cpu(library) => library.thresholds(),
            Code::Cached(cached) => cached.thresholds(),
            Code::Interp(_) => &[],
            Code::Ir { program, .. } => program.thresholds(),
        }
    }

    /// Where the kernels of entry point `entry` come from in the source, one line per kernel
    /// (see `ogham_ir::abi::kernel_origins`); none for `interp` and `core`, and for a
    /// program from the disk cache before the entry point's first call.
    pub fn kernel_origins(&self, entry: &str) -> Vec<String> {
        let program = match &self.code {
            Code::Cpu(library) => library.program(),
            Code::Cached(cached) => cached.program(entry),
            Code::Interp(_) => None,
            Code::Ir {
                program: ogham_ir::Ir::Kernel(program),
                ..
            } => Some(program),
            Code::Ir { .. } => None,
        };
        let Some(program) = program else {
            return Vec::new();
        };
        ogham_ir::abi::kernel_origins(program, self.sources())
            .into_iter()
            .filter(|(f, _)| program.functions.get(*f).is_some_and(|f| f.name == entry))
            .map(|(_, line)| line)
            .collect()
    }

    /// The thresholds of the tuning file the program was compiled with.
    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }
}

/// Where a program's root source came from: the path its sources record for it (the real path
/// of a file; a text's name) and its text.
#[derive(Clone)]
struct Root {
    path: PathBuf,
    text: String,
}

impl Root {
    fn of(source: Source) -> Result<Root, String> {
        Ok(match source {
            Source::File(path) => Root {
                path: path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
                text: std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?,
            },
            Source::Text { name, text } | Source::Bundled { name, text } => Root {
                path: PathBuf::from(name),
                text: text.to_string(),
            },
        })
    }

    /// Whether `sources` are those this root compiles from now: the root's text is this one,
    /// every other file on disk still has the recorded text, and no file on disk now shadows a
    /// standard library module the program imports (the loader looks for `x/y.og` next to the
    /// importing file before the embedded `x/y`; checked next to every file, conservatively).
    fn current(&self, sources: &SourceMap) -> bool {
        let prelude = format!("{}.og", ogham_compiler::stdlib::PRELUDE);
        let library: Vec<&str> = sources
            .files()
            .filter(|(_, file)| file.path.is_none())
            .filter_map(|(_, file)| file.name.strip_prefix("<stdlib>/"))
            .filter(|module| *module != prelude)
            .collect();
        sources.files().all(|(_, file)| match &file.path {
            None => true,
            Some(path) => {
                let text_current = if *path == self.path {
                    file.text == self.text
                } else {
                    std::fs::read_to_string(path).is_ok_and(|text| text == file.text)
                };
                let dir = path.parent().unwrap_or(Path::new(""));
                text_current && library.iter().all(|module| !dir.join(module).is_file())
            }
        })
    }
}

/// The cache key of `source` compiled with `options` (see the module's documentation).
fn key(source: Source, root: &Root, backend: Backend, tuning: Option<&str>) -> Result<u64, String> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let (kind, shown, place) = match source {
        Source::File(path) => ("file", path.display().to_string(), root.path.clone()),
        Source::Text { name, .. } => ("text", name.to_string(), cwd),
        Source::Bundled { name, .. } => ("bundled", name.to_string(), PathBuf::new()),
    };
    let features = ogham_runtime::cpu::host_cpu_features()?.join(",");
    let search: Vec<u8> = ogham_compiler::loader::search_path()
        .iter()
        .flat_map(|(dir, _)| dir.as_os_str().as_encoded_bytes().iter().chain(b"\0"))
        .copied()
        .collect();
    let simd: &[u8] = if ogham_compiler::back::cpu::simd_enabled() {
        b"simd"
    } else {
        b"no simd"
    };
    let fields: [&[u8]; 11] = [
        b"ogham-cache-key 1",
        ogham_runtime::BUILD_ID.as_bytes(),
        features.as_bytes(),
        simd,
        backend.name().as_bytes(),
        kind.as_bytes(),
        shown.as_bytes(),
        place.as_os_str().as_encoded_bytes(),
        root.text.as_bytes(),
        tuning.unwrap_or("\0no tuning").as_bytes(),
        &search,
    ];
    let mut bytes = Vec::new();
    for field in fields {
        bytes.extend((field.len() as u64).to_le_bytes());
        bytes.extend(field);
    }
    Ok(ogham_runtime::fnv1a(&bytes))
}

/// The programs compiled by this process, by key.
fn memory() -> &'static Mutex<HashMap<u64, Arc<Compiled>>> {
    static MEMORY: std::sync::OnceLock<Mutex<HashMap<u64, Arc<Compiled>>>> =
        std::sync::OnceLock::new();
    MEMORY.get_or_init(Default::default)
}

/// Compiles `source` for `options.backend`, or returns the program compiled before (in this
/// process, or by an earlier process when the disk cache has it; see [`Disk::from_env`]).
pub fn compile(source: Source, options: &Options) -> Result<Arc<Compiled>, CompileError> {
    compile_in(source, options, &Disk::from_env())
}

/// [`compile`] with the on-disk cache `disk` (used by the `cpu` backend only).
pub fn compile_in(
    source: Source,
    options: &Options,
    disk: &Disk,
) -> Result<Arc<Compiled>, CompileError> {
    let root = match Root::of(source) {
        Ok(root) => root,
        // The front end reports an unreadable root with its code.
        Err(_) => return compile_fresh(source, options, None, disk, None),
    };
    let tuning = match &options.tuning {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            // Reported with its code when the thresholds are read.
            Err(_) => return compile_fresh(source, options, Some(root), disk, None),
        },
        None => None,
    };
    let key =
        key(source, &root, options.backend, tuning.as_deref()).map_err(CompileError::message)?;
    if let Some(hit) = memory().lock().map_err(|_| poisoned())?.get(&key)
        && hit
            .root
            .as_ref()
            .is_some_and(|root| root.current(hit.sources()))
    {
        return Ok(hit.clone());
    }
    let compiled = compile_fresh(source, options, Some(root), disk, Some(key))?;
    memory()
        .lock()
        .map_err(|_| poisoned())?
        .insert(key, compiled.clone());
    Ok(compiled)
}

fn poisoned() -> CompileError {
    CompileError::message("the cache of compiled programs is unusable after a panic".to_string())
}

/// Compiles `source` (the `cpu` backend through the disk cache under `key`).
fn compile_fresh(
    source: Source,
    options: &Options,
    root: Option<Root>,
    disk: &Disk,
    key: Option<u64>,
) -> Result<Arc<Compiled>, CompileError> {
    let backend = options.backend;
    let tuning = options
        .tuning
        .as_deref()
        .map_or(Tuning::Defaults, Tuning::File);
    if backend == Backend::Cpu
        && let (Some(key), Some(root)) = (key, &root)
        && let Some(cached) = disk.load(key, |sources| root.current(sources))
    {
        let thresholds = crate::thresholds(tuning, cached.thresholds())
            .map_err(|d| CompileError::diagnostics(cached.sources().clone(), vec![*d]))?;
        let entries = cached
            .entries()
            .map(|(name, signature)| {
                entry_info(name, cached.docs().get(name).map(String::as_str), signature)
            })
            .collect();
        return Ok(Arc::new(Compiled {
            backend,
            entries,
            thresholds,
            code: Code::Cached(cached),
            warnings: Vec::new(),
            root: Some(root.clone()),
        }));
    }
    let fe = match source {
        Source::File(path) => Frontend::load(path),
        Source::Text { name, text } => Frontend::load_source(name, text),
        Source::Bundled { name, text } => Frontend::load_embedded(name, text),
    }
    .map_err(
        |FrontendErrors {
             sources,
             diagnostics,
         }| CompileError::diagnostics(sources, diagnostics),
    )?;
    let docs = fe.entry_docs();
    let entries = fe
        .checked
        .entries
        .iter()
        .map(|e| EntryInfo {
            name: e.name.clone(),
            doc: docs.get(&e.name).cloned(),
            params: e.params.clone(),
            results: e.results.clone(),
            fields: e.fields.clone(),
        })
        .collect();
    if backend == Backend::Interp {
        return Ok(Arc::new(Compiled {
            backend,
            entries,
            thresholds: Thresholds::default(),
            code: Code::Interp(fe),
            warnings: Vec::new(),
            root,
        }));
    }
    let fail = |d: Box<Diagnostic>| CompileError::diagnostics(fe.sources.clone(), vec![*d]);
    let program = fe.compile(backend.pipeline_options()).map_err(fail)?;
    let thresholds = crate::thresholds(tuning, program.thresholds()).map_err(fail)?;
    let warnings: Vec<Diagnostic> = match &program {
        ogham_ir::Ir::Kernel(p) => crate::trace::compiled_warning(p, backend),
        ogham_ir::Ir::Core(_) => None,
    }
    .into_iter()
    .collect();
    let code = match program {
        ogham_ir::Ir::Kernel(program) if backend == Backend::Cpu => {
            let library = Library::new(fe.sources.clone(), program, CPU).with_docs(docs);
            // A program with a warning is not stored on disk, so that every run warns.
            Code::Cpu(match key {
                Some(key) if warnings.is_empty() => disk.store(key, library),
                _ => library,
            })
        }
        program => Code::Ir {
            sources: fe.sources.clone(),
            program,
        },
    };
    Ok(Arc::new(Compiled {
        backend,
        entries,
        thresholds,
        code,
        warnings,
        root,
    }))
}

fn entry_info(name: &str, doc: Option<&str>, signature: &Signature) -> EntryInfo {
    EntryInfo {
        name: name.to_string(),
        doc: doc.map(str::to_string),
        params: signature.params.clone(),
        results: signature.results.clone(),
        fields: signature.fields.clone(),
    }
}

/// Opens a library built by `ogham build` (`.ogl`); it runs on the `cpu` backend, each entry
/// point's kernels JIT-compiled at its first call.
pub fn open(path: &Path) -> Result<Arc<Compiled>, CompileError> {
    let library = Library::load(path, CPU).map_err(CompileError::message)?;
    Ok(Arc::new(Compiled {
        backend: Backend::Cpu,
        entries: library
            .entries()
            .map(|(name, signature)| entry_info(name, library.doc(name), signature))
            .collect(),
        thresholds: Thresholds::default(),
        root: None,
        code: Code::Cpu(library),
        warnings: Vec::new(),
    }))
}

// Callers share compiled programs across threads.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Compiled>();
};

#[cfg(test)]
mod tests;
