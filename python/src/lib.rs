//! The extension module `ogham._ogham`: compiled Ogham programs for Python.
//!
//! `compile_file` / `compile_text` / `compile_bundled` / `open_library` return a [`Program`] (compiled once per process
//! and kept on disk by `ogham::cache`); its `call` converts the
//! arguments for the entry's parameter types (`convert.rs`), runs the entry with the GIL released
//! and returns NumPy arrays. The pure-Python package (`python/ogham/`) builds the user-facing
//! callables, signatures and the xarray/dask layer on top of it.
//!
//! Invariant: no Rust panic reaches Python. Bad arguments are `TypeError`/`ValueError` raised
//! before the call; compile and run-time errors are `ogham.OghamError` carrying the rendered
//! diagnostic (with its source location) and its `code`; a panic inside the compiler or the
//! runtime (a bug) is caught and reported as an `OghamError` with code `internal`.

mod bundled;
mod convert;

use convert::{Param, Sizes};
use ogham::Backend;
use ogham::cache::{self, CompileError, Compiled, EntryInfo, Options, Source};
use ogham::ir::types::{Size, Type};
use ogham::results::{self, dims_of};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

create_exception!(
    ogham,
    OghamError,
    PyException,
    "An Ogham program failed to compile or stopped with a run-time error; `code` is the \
     diagnostic's code (docs/errors.md) and the message shows the source location."
);

/// How many programs this process has compiled or opened (every `compile_*`/`open_library`
/// call; the Python package keeps one module object per program, so this counts distinct
/// programs — it shows that dask workers do not compile per chunk).
static LOADS: AtomicU64 = AtomicU64::new(0);

/// An `OghamError` with its code.
fn ogham_error(py: Python<'_>, code: &str, message: String) -> PyErr {
    let err = OghamError::new_err(message);
    if let Err(e) = err.value(py).setattr("code", code) {
        return e;
    }
    err
}

/// An `OghamError` for a program that did not compile or a library that did not open; its code
/// is the first diagnostic's (`compile` when there is none, e.g. an unreadable library).
fn compile_error(py: Python<'_>, e: CompileError) -> PyErr {
    let code = e.codes.first().map_or("compile", String::as_str);
    ogham_error(py, code, e.to_string())
}

/// `f()`, with a panic turned into an internal `OghamError`.
fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(ogham_error(
            py,
            "internal",
            format!("internal error in Ogham (please report it): {what}"),
        ))
    })
}

/// A compiled program.
#[pyclass(frozen, module = "ogham._ogham")]
struct Program {
    compiled: Arc<Compiled>,
    entries: Vec<EntryInfo>,
}

impl Program {
    fn new(compiled: Arc<Compiled>) -> Program {
        LOADS.fetch_add(1, Ordering::Relaxed);
        Program {
            entries: compiled.entries(),
            compiled,
        }
    }
}

/// A size as Python sees it: its name, its value, or `None` (unknown).
fn size_to_py(py: Python<'_>, s: &Size) -> PyResult<Py<PyAny>> {
    Ok(match s {
        Size::Const(n) => n.into_pyobject(py)?.into_any().unbind(),
        Size::Var(v) => v.into_pyobject(py)?.into_any().unbind(),
        Size::Unknown(_) => py.None(),
    })
}

/// `(type text, dims, dtype, parts)` of a type: dims and dtype are `None` unless it is a scalar
/// or an array of scalars; parts are `None` unless it is a tuple, a record or an array of them,
/// and then `[(name, (type, dims, dtype, parts))]` in the order `declared` gives record fields
/// (see `results::parts`).
fn type_to_py(py: Python<'_>, t: &Type, declared: &[String]) -> PyResult<Py<PyAny>> {
    let (dims, elem) = dims_of(t);
    let (dims, dtype) = match elem {
        Type::Prim(p) => (
            dims.iter()
                .map(|s| size_to_py(py, s))
                .collect::<PyResult<Vec<_>>>()?
                .into_pyobject(py)?
                .into_any()
                .unbind(),
            p.numpy_name().into_pyobject(py)?.into_any().unbind(),
        ),
        _ => (py.None(), py.None()),
    };
    let parts = match results::parts(t, declared) {
        Some(parts) => parts
            .iter()
            .map(|p| Ok((p.name.clone(), type_to_py(py, &p.ty, &[])?)))
            .collect::<PyResult<Vec<_>>>()?
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        None => py.None(),
    };
    Ok(PyTuple::new(
        py,
        [
            t.to_string().into_pyobject(py)?.into_any().unbind(),
            dims,
            dtype,
            parts,
        ],
    )?
    .into_any()
    .unbind())
}

#[pymethods]
impl Program {
    /// The entry points in source order: `(name, doc, params, results)`, params as
    /// `(name, (type, dims, dtype, parts))`, results as `(type, dims, dtype, parts)` (see
    /// `type_to_py`).
    fn entries(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.entries
            .iter()
            .map(|e| {
                let params = e
                    .params
                    .iter()
                    .map(|(n, t)| Ok((n.clone(), type_to_py(py, t, &[])?)))
                    .collect::<PyResult<Vec<_>>>()?;
                let results = e
                    .results
                    .iter()
                    .enumerate()
                    .map(|(i, t)| type_to_py(py, t, results::declared(&e.fields, i)))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok((e.name.clone(), e.doc.clone(), params, results)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind())
            })
            .collect()
    }

    /// The backend's name (`cpu`, `interp`, ...).
    #[getter]
    fn backend(&self) -> &'static str {
        self.compiled.backend().name()
    }

    /// Runs entry `entry` on the positional `args`; one result is returned as is, several as a
    /// tuple; a tuple or record result (or an array of them) is a tuple of its parts in the
    /// order `entries` lists them.
    fn call(&self, py: Python<'_>, entry: &str, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let (info, values) = self.arguments(py, entry, args)?;
        let compiled = &self.compiled;
        let outcome = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| compiled.call(entry, values)))
                .map_err(|_| "a panic in the runtime".to_string())
        });
        self.results(py, info, outcome)
    }

    /// Runs entry `entry` on `args` collecting its traces (`trace "label" e`; the program must
    /// be compiled for a backend that traces: `interp`, `core`, `kir`), on the one pixel
    /// `pixel` when given (`ogham::pixel`): returns `(result, traces)`, each trace a tuple
    /// `(label, "file:line:col", value)`. A run-time error raises as for a call, with the
    /// traces made before it as the exception's `traces`.
    #[pyo3(signature = (entry, args, pixel = None))]
    fn trace(
        &self,
        py: Python<'_>,
        entry: &str,
        args: &Bound<'_, PyTuple>,
        pixel: Option<Vec<usize>>,
    ) -> PyResult<Py<PyAny>> {
        let (info, mut values) = self.arguments(py, entry, args)?;
        if let Some(pixel) = pixel {
            values =
                ogham::pixel::pixel_args(info, values, &pixel).map_err(PyValueError::new_err)?;
        }
        let compiled = &self.compiled;
        let (outcome, traces) = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                ogham::pixel::traced_call(compiled, entry, values)
            }))
            .map_err(|_| "a panic in the runtime".to_string())
            .map_or_else(|e| (Err(e), Vec::new()), |(o, t)| (Ok(o), t))
        });
        let traces = guarded(py, || {
            traces
                .into_iter()
                .map(|t| {
                    let at = compiled.sources().location(t.loc);
                    let value = convert::to_py(py, t.value)?;
                    Ok((t.label, at, value).into_pyobject(py)?.into_any().unbind())
                })
                .collect::<PyResult<Vec<Py<PyAny>>>>()
        })?;
        match self.results(py, info, outcome) {
            Ok(result) => Ok((result, traces).into_pyobject(py)?.into_any().unbind()),
            Err(e) => {
                // The traces made before a run-time error are what explains it.
                e.value(py).setattr("traces", traces)?;
                Err(e)
            }
        }
    }
}

impl Program {
    /// The entry point `entry` and `args` converted for its parameters.
    fn arguments(
        &self,
        py: Python<'_>,
        entry: &str,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<(&EntryInfo, Vec<ogham::runtime::value::Value>)> {
        let info = self
            .entries
            .iter()
            .find(|e| e.name == entry)
            .ok_or_else(|| {
                let names: Vec<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
                PyValueError::new_err(format!(
                    "there is no entry point `{entry}` (entry points: {})",
                    names.join(", ")
                ))
            })?;
        if args.len() != info.params.len() {
            let names: Vec<String> = info
                .params
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect();
            return Err(PyTypeError::new_err(format!(
                "{entry}() takes {} arguments ({}), given {}",
                info.params.len(),
                names.join(", "),
                args.len()
            )));
        }
        let mut sizes = Sizes::new();
        let values = guarded(py, || {
            info.params
                .iter()
                .zip(args.iter())
                .map(|((name, ty), arg)| {
                    convert::to_value(&arg, ty, &Param { entry, name }, &mut sizes)
                })
                .collect::<PyResult<Vec<_>>>()
        })?;
        Ok((info, values))
    }

    /// A run's outcome for Python (entry `info`'s): one result as is, several as a tuple, record
    /// fields in declared order; an error as `OghamError` (a `ValueError` for `E061x`).
    fn results(
        &self,
        py: Python<'_>,
        info: &EntryInfo,
        outcome: Result<
            Result<Vec<ogham::runtime::value::Value>, Box<ogham::ir::diag::Diagnostic>>,
            String,
        >,
    ) -> PyResult<Py<PyAny>> {
        let outputs = match outcome {
            Ok(Ok(outputs)) => outputs,
            Ok(Err(d)) => {
                let message = self.compiled.render(&d);
                return Err(if d.code.starts_with("E061") {
                    PyValueError::new_err(message)
                } else {
                    ogham_error(py, d.code, message)
                });
            }
            Err(what) => {
                return Err(ogham_error(
                    py,
                    "internal",
                    format!("internal error in Ogham (please report it): {what}"),
                ));
            }
        };
        guarded(py, || {
            let mut items = outputs
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    let v = match info.results.get(i) {
                        Some(t) => {
                            results::in_declared_order(t, results::declared(&info.fields, i), v)
                        }
                        None => v,
                    };
                    convert::to_py(py, v)
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok(if items.len() == 1 {
                items.swap_remove(0)
            } else {
                PyTuple::new(py, items)?.into_any().unbind()
            })
        })
    }
}

fn options(backend: &str, tuning: Option<PathBuf>) -> PyResult<Options> {
    let backend = Backend::from_name(backend).ok_or_else(|| {
        let names: Vec<&str> = Backend::ALL.iter().map(|b| b.name()).collect();
        PyValueError::new_err(format!(
            "backend {backend:?} does not exist: use one of {}",
            names.join(", ")
        ))
    })?;
    Ok(Options { backend, tuning })
}

/// Compiles `source` (without the GIL).
fn compile(py: Python<'_>, source: Source, options: Options) -> PyResult<Program> {
    if let Some(why) = options.backend.unavailable() {
        return Err(ogham_error(
            py,
            ogham::runtime::error::R_CUDA_UNAVAILABLE,
            why,
        ));
    }
    load_program(py, || cache::compile(source, &options))
}

/// Runs `load` (compiling or opening a program) without the GIL, a panic turned into an
/// internal `OghamError`; the compiler's warnings (`W0730`: `trace` on a backend that does not
/// trace) become Python `UserWarning`s.
fn load_program(
    py: Python<'_>,
    load: impl FnOnce() -> Result<Arc<Compiled>, CompileError> + Send,
) -> PyResult<Program> {
    let compiled = guarded(py, || py.detach(load).map_err(|e| compile_error(py, e)))?;
    if !compiled.warnings().is_empty() {
        let text = ogham::ir::diag::render(compiled.sources(), compiled.warnings());
        py.import("warnings")?
            .call_method1("warn", (text.trim_end(),))?;
    }
    Ok(Program::new(compiled))
}

/// Compiles the program in file `path` (and its imports).
#[pyfunction]
#[pyo3(signature = (path, backend = "cpu", tuning = None))]
fn compile_file(
    py: Python<'_>,
    path: PathBuf,
    backend: &str,
    tuning: Option<PathBuf>,
) -> PyResult<Program> {
    let options = options(backend, tuning)?;
    compile(py, Source::File(&path), options)
}

/// Compiles a program given as text; `name` names it in messages (its imports are resolved
/// from the current directory, then the standard library).
#[pyfunction]
#[pyo3(signature = (name, text, backend = "cpu", tuning = None))]
fn compile_text(
    py: Python<'_>,
    name: &str,
    text: &str,
    backend: &str,
    tuning: Option<PathBuf>,
) -> PyResult<Program> {
    let options = options(backend, tuning)?;
    compile(py, Source::Text { name, text }, options)
}

/// Opens a library built by `ogham build` (`.ogl`).
#[pyfunction]
fn open_library(py: Python<'_>, path: PathBuf) -> PyResult<Program> {
    load_program(py, || cache::open(&path))
}

/// Compiles bundled program `name` (`bfast`, ...) from the text embedded in the extension; its
/// imports come from the compiler's embedded standard library only (no file on disk can change
/// it).
#[pyfunction]
#[pyo3(signature = (name, backend = "cpu", tuning = None))]
fn compile_bundled(
    py: Python<'_>,
    name: &str,
    backend: &str,
    tuning: Option<PathBuf>,
) -> PyResult<Program> {
    let options = options(backend, tuning)?;
    let (path, text) = bundled::FILES
        .iter()
        .find(|(program, _)| *program == name)
        .map(|(program, text)| (format!("programs/{program}.og"), *text))
        .ok_or_else(|| {
            let names: Vec<&str> = bundled::FILES.iter().map(|(n, _)| *n).collect();
            PyValueError::new_err(format!(
                "there is no bundled program {name:?}: use one of {}",
                names.join(", ")
            ))
        })?;
    compile(py, Source::Bundled { name: &path, text }, options)
}

/// How many programs this process has compiled or opened.
#[pyfunction]
fn load_count() -> u64 {
    LOADS.load(Ordering::Relaxed)
}

#[pymodule]
fn _ogham(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("OghamError", m.py().get_type::<OghamError>())?;
    m.add_class::<Program>()?;
    m.add_function(wrap_pyfunction!(compile_file, m)?)?;
    m.add_function(wrap_pyfunction!(compile_text, m)?)?;
    m.add_function(wrap_pyfunction!(open_library, m)?)?;
    m.add_function(wrap_pyfunction!(compile_bundled, m)?)?;
    m.add_function(wrap_pyfunction!(load_count, m)?)?;
    Ok(())
}
