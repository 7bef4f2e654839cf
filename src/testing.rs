//! The test blocks of `.og` files (`-- ==`) and running them; shared by `ogham test` and the
//! `cargo test` corpus harness so both judge a case the same way.
//!
//! A test block is the run of `--` comment lines after a line `-- ==`; a file may have several
//! blocks. Directives (whitespace-insensitive, `{ ... }` bodies may span several lines):
//!
//! ```text
//! -- entry: main other        entry points of the following cases (default `main`)
//! -- input { 1 [2, 3] }       argument values (textual value syntax); or `input @ file.in`,
//!                             `input @ xs.npy`, `input { 2 @ xs.npy }`
//! -- output { [3, 4] }        expected outputs; or `output @ file.out`, `output @ ys.npy`
//! -- error: out of bounds     after an input: the run must fail, the rendered error must
//!                             match the regex; with no input: the program must fail to load
//!                             or type-check and the rendered diagnostics must match
//! -- tolerance: 1e-3          relative tolerance of float comparisons in this file
//! -- tags { slow disable }    free-form tags; `disable` skips every trial of the file
//! -- snapshot { diag core kir clif cuda }  snapshot the rendered diagnostics, the printed
//!                             optimised core IR, the printed kernel IR, the product of the
//!                             pipeline's `codegen-cpu` pass (Cranelift IR) or `codegen-cuda`
//!                             pass (the CUDA kernels, without the prelude)
//! -- snapshot { clif kernel = main_k3 }  the `clif` (or `cuda`) snapshot holds only that
//!                             kernel (`kernel = ...` may repeat; names as
//!                             in `ogham dev --print kir` and `OGHAM_PROFILE`)
//! -- structure core { map 1 } constructs of the optimised core IR (or `kir`) named in
//!                             `ogham_ir::count::CONSTRUCTS`: each one listed must
//!                             occur exactly that often (unlisted ones are unconstrained)
//! -- filecheck clif           the stage's text (`core`, `kir`, `clif`, `cuda`) must pass the
//! -- check: fmul.f32x4        `check:`/`nextln:`/`sameln:`/`not:`/`unordered:` lines that
//!                             follow ([`filecheck`])
//! ```
//!
//! Backends `core` and `kir` run the program through the middle end (verified after every
//! pass) and the IR evaluator; `cpu` runs its kernels compiled by Cranelift. `kir` and `cpu`
//! run every case under each of [`KIR_TUNINGS`], so that every version of multi-versioned code
//! is checked.
//!
//! An `input` without `output` or `error:` only checks that the program runs. Files named by
//! `@` are relative to the `.og` file: a `.npy` file (by name or by contents) is one value, any
//! other file holds textual values; a `{ }` body may mix the two (`input { 3 @ xs.npy }`). The
//! test blocks are read by `spec`, the files by `data`.
//!
//! Outputs are coerced to the entry's result types and compared exactly, except floats: equal
//! if both are NaN, both the same infinity, or `|a - b| <= tol * max(1, |a|, |b|)` (relative
//! tolerance with an absolute floor near zero); the default `tol` is 1e-5 for `f32` and 1e-10
//! for `f64`.

mod data;
pub mod filecheck;
mod spec;
mod stages;

pub use spec::{Case, Expected, Spec, SpecError, parse_spec};
use stages::{snapshot_text, stage_text};

use crate::args::{self, Arg, ArgValue};
use crate::{Backend, Frontend, FrontendErrors, Tuning};
use ogham_compiler::pipeline;
use ogham_compiler::typeck::EntryPoint;
use ogham_ir::Ir;
use ogham_ir::count::{CONSTRUCTS, count_constructs};
use ogham_ir::diag::render;
use ogham_runtime::boundary::BoundaryType;
use ogham_runtime::value::{Scalar, Value};
use std::path::{Path, PathBuf};

/// A stage whose output can be snapshot or structure-checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Rendered diagnostics (compile-time, or run-time errors of the `error:` cases).
    Diag,
    Core,
    Kir,
    Cuda,
    Clif,
}

impl Stage {
    const ALL: [Stage; 5] = [
        Stage::Diag,
        Stage::Core,
        Stage::Kir,
        Stage::Cuda,
        Stage::Clif,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Diag => "diag",
            Stage::Core => "core",
            Stage::Kir => "kir",
            Stage::Cuda => "cuda",
            Stage::Clif => "clif",
        }
    }

    fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// A test file: its path, its name in reports (the path relative to the corpus root, with `/`)
/// and its parsed test blocks.
#[derive(Clone, Debug)]
pub struct TestFile {
    pub path: PathBuf,
    pub name: String,
    pub spec: Spec,
}

impl TestFile {
    /// Reads and parses the test blocks of `path`; `Ok(None)` if it has none (a helper module).
    pub fn read(path: &Path, name: String) -> Result<Option<TestFile>, String> {
        let source = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
        let base = path.parent().unwrap_or(Path::new("."));
        match parse_spec(&source, base) {
            Ok(Some(spec)) => Ok(Some(TestFile {
                path: path.to_path_buf(),
                name,
                spec,
            })),
            Ok(None) => Ok(None),
            Err(e) => Err(format!("test block: {e}")),
        }
    }

    /// The trials of this file, for the given backends (by name; see [`Backend::from_name`]).
    pub fn trials(&self, backends: &[&str]) -> Vec<Trial> {
        let spec = &self.spec;
        let mut trials = Vec::new();
        if spec.compile_error.is_some() || spec.cases.is_empty() {
            trials.push(Trial {
                name: format!("check::{}", self.name),
                kind: TrialKind::Check,
            });
        }
        for backend in backends {
            for (index, case) in spec.cases.iter().enumerate() {
                let entry = match case.entry.as_str() {
                    "main" => String::new(),
                    e => format!(":{e}"),
                };
                trials.push(Trial {
                    name: format!("{backend}::{}{entry}#{index}", self.name),
                    kind: TrialKind::Case {
                        index,
                        backend: backend.to_string(),
                    },
                });
            }
        }
        for &stage in &spec.snapshots {
            trials.push(Trial {
                name: format!("snapshot-{}::{}", stage.name(), self.name),
                kind: TrialKind::Snapshot(stage),
            });
        }
        for (i, (stage, _)) in spec.structures.iter().enumerate() {
            trials.push(Trial {
                name: format!("structure-{}::{}#{i}", stage.name(), self.name),
                kind: TrialKind::Structure(*stage),
            });
        }
        for (i, (stage, _)) in spec.filechecks.iter().enumerate() {
            trials.push(Trial {
                name: format!("filecheck-{}::{}#{i}", stage.name(), self.name),
                kind: TrialKind::FileCheck(i),
            });
        }
        trials
    }

    /// Loads and type-checks the program.
    pub fn load(&self) -> Result<Frontend, FrontendErrors> {
        Frontend::load(&self.path)
    }

    /// Runs one trial against the loaded program.
    pub fn run(&self, trial: &Trial, loaded: &Result<Frontend, FrontendErrors>) -> Outcome {
        if self.spec.disabled() {
            return Outcome::Skipped("disabled by `tags { disable }`".to_string());
        }
        match &trial.kind {
            TrialKind::Check => self.check(loaded),
            TrialKind::Case { index, backend } => match Backend::from_name(backend) {
                Some(b) => match loaded {
                    Ok(fe) => run_case(fe, &self.spec.cases[*index], self.spec.tolerance, b),
                    Err(errors) => Outcome::Failed(format!(
                        "the program does not compile:\n{}",
                        errors.render()
                    )),
                },
                None => Outcome::Skipped(format!("backend `{backend}` is not available yet")),
            },
            TrialKind::Snapshot(Stage::Diag) => Outcome::Snapshot(self.diagnostics(loaded)),
            TrialKind::Snapshot(stage) => match snapshot_text(loaded, *stage, &self.spec.kernels) {
                Ok(text) => Outcome::Snapshot(text),
                Err(why) => Outcome::Failed(why),
            },
            TrialKind::FileCheck(i) => {
                let (stage, checks) = &self.spec.filechecks[*i];
                match stage_text(loaded, *stage).and_then(|text| checks.check(&text)) {
                    Ok(()) => Outcome::Passed,
                    Err(why) => Outcome::Failed(format!("{}: {why}", self.path.display())),
                }
            }
            TrialKind::Structure(stage @ (Stage::Core | Stage::Kir)) => {
                let body = self
                    .spec
                    .structures
                    .iter()
                    .find(|(s, _)| s == stage)
                    .map(|(_, body)| body.as_str())
                    .unwrap_or_default();
                match compile_stage(loaded, *stage) {
                    Ok(pipeline::Product::Ir(ir)) => check_structure(&ir, body),
                    Ok(pipeline::Product::Artifact(_)) => {
                        Outcome::Failed(format!("stage `{}` is not IR", stage.name()))
                    }
                    Err(why) => Outcome::Failed(why),
                }
            }
            TrialKind::Structure(stage) => Outcome::Skipped(format!(
                "structure checks of stage `{}` are not supported",
                stage.name()
            )),
        }
    }

    /// Runs one trial as [`TestFile::run`] does, but a case runs on the interpreter checking the
    /// laws of the operators it applies (`ogham test --check-laws`): a run that breaks a law
    /// (warnings `W0720`, `W0721`) fails, with the located warnings, whatever its outputs.
    pub fn run_checking_laws(
        &self,
        trial: &Trial,
        loaded: &Result<Frontend, FrontendErrors>,
    ) -> Outcome {
        match (&trial.kind, loaded) {
            (TrialKind::Case { index, .. }, Ok(fe)) if !self.spec.disabled() => {
                let case = &self.spec.cases[*index];
                let mut warnings = Vec::new();
                let result = bind_case(fe, case).and_then(|args| {
                    let (outputs, found) = ogham_interp::run_entry_checking_laws(
                        &fe.sources,
                        &fe.program,
                        &fe.checked,
                        &case.entry,
                        args,
                    );
                    warnings = found;
                    outputs.map_err(|diag| render(&fe.sources, &[diag]))
                });
                if warnings.is_empty() {
                    judge(fe, case, self.spec.tolerance, result)
                } else {
                    Outcome::Failed(format!(
                        "an operator breaks a law:\n{}",
                        render(&fe.sources, &warnings)
                    ))
                }
            }
            _ => self.run(trial, loaded),
        }
    }

    fn check(&self, loaded: &Result<Frontend, FrontendErrors>) -> Outcome {
        match (&self.spec.compile_error, loaded) {
            (None, Ok(_)) => Outcome::Passed,
            (None, Err(errors)) => Outcome::Failed(format!(
                "the program does not compile:\n{}",
                errors.render()
            )),
            (Some(re), Ok(_)) => Outcome::Failed(format!(
                "expected a compile error matching /{re}/, but the program compiles"
            )),
            (Some(re), Err(errors)) => {
                let rendered = errors.render();
                if re.is_match(&rendered) {
                    Outcome::Passed
                } else {
                    Outcome::Failed(format!("the diagnostics do not match /{re}/:\n{rendered}"))
                }
            }
        }
    }

    /// The text of the `diag` snapshot: the rendered diagnostics if the program fails to
    /// compile, else the rendered run-time errors of its `error:` cases (on `interp`).
    pub fn diagnostics(&self, loaded: &Result<Frontend, FrontendErrors>) -> String {
        let fe = match loaded {
            Ok(fe) => fe,
            Err(errors) => return errors.render(),
        };
        let mut out = String::new();
        for (i, case) in self.spec.cases.iter().enumerate() {
            if !matches!(case.expected, Expected::Error(_)) {
                continue;
            }
            let text = match run_raw(fe, case, Backend::Interp, Tuning::Defaults) {
                Err(error) => error,
                Ok(_) => "(no error)\n".to_string(),
            };
            out.push_str(&format!(
                "-- case #{i} (entry {}, line {})\n{text}",
                case.entry, case.line
            ));
        }
        if out.is_empty() {
            out.push_str("(no diagnostics)\n");
        }
        out
    }
}

/// One unit of testing: loading a program, one case on one backend, one snapshot.
#[derive(Clone, Debug)]
pub struct Trial {
    /// `interp::arith/add.og#0`, `interp::f.og:other#1`, `check::errors/e.og`, `snapshot-diag::..`.
    pub name: String,
    pub kind: TrialKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TrialKind {
    /// The program loads, or fails to load as `-- error:` expects.
    Check,
    /// Case `index` of the spec on a backend.
    Case {
        index: usize,
        backend: String,
    },
    Snapshot(Stage),
    Structure(Stage),
    /// The `filecheck` directive `index` of the spec.
    FileCheck(usize),
}

/// The result of a trial.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Passed,
    Failed(String),
    Skipped(String),
    /// The trial produced text to compare with its stored snapshot (the runner compares).
    Snapshot(String),
}

/// Runs `case`: its outputs, or its error (bad input or run-time error) rendered as text.
fn run_raw(
    fe: &Frontend,
    case: &Case,
    backend: Backend,
    tuning: Tuning,
) -> Result<Vec<Value>, String> {
    let args = bind_case(fe, case)?;
    backend
        .run_tuned(fe, &case.entry, args, tuning)
        .map_err(|diag| render(&fe.sources, &[*diag]))
}

/// The arguments of `case` for its entry point.
fn bind_case(fe: &Frontend, case: &Case) -> Result<Vec<Value>, String> {
    let entry = fe.entry(&case.entry)?;
    data::check_inputs(&entry.params, &case.inputs).map_err(|e| format!("bad input: {e}"))?;
    args::bind(entry, case.inputs.clone()).map_err(|e| format!("bad input: {e}"))
}

/// The program compiled up to the end of `stage` (not `diag`; optimised, verified after every
/// pass): core IR, kernel IR, or a backend's artefact.
fn compile_stage(
    loaded: &Result<Frontend, FrontendErrors>,
    stage: Stage,
) -> Result<pipeline::Product, String> {
    let fe = loaded
        .as_ref()
        .map_err(|errors| format!("the program does not compile:\n{}", errors.render()))?;
    let stop_after = match stage {
        Stage::Core => pipeline::Options::CORE.stop_after,
        Stage::Diag | Stage::Kir => pipeline::Options::KERNEL.stop_after,
        Stage::Cuda => pipeline::Pass::Codegen(pipeline::Target::Cuda),
        Stage::Clif => pipeline::Pass::Codegen(pipeline::Target::Cpu),
    };
    let options = pipeline::Options {
        stop_after,
        verify: true,
        ..pipeline::Options::KERNEL
    };
    fe.compile_product(options)
        .map_err(|d| format!("the compiler failed:\n{}", render(&fe.sources, &[*d])))
}

/// Compares `structure <stage> { name count ... }` with the constructs of `ir`: every construct
/// named must occur exactly that many times (unnamed ones are unconstrained).
fn check_structure(ir: &Ir, body: &str) -> Outcome {
    let counts = match ir {
        Ir::Core(p) => count_constructs(p),
        Ir::Kernel(p) => count_constructs(p),
    };
    let words: Vec<&str> = body.split_whitespace().collect();
    if !words.len().is_multiple_of(2) {
        return Outcome::Failed(format!(
            "`{body}`: expected pairs of a construct and a count"
        ));
    }
    let mut wrong = Vec::new();
    for pair in words.chunks(2) {
        let Some(&actual) = counts.get(pair[0]) else {
            return Outcome::Failed(format!(
                "unknown construct `{}` (known: {})",
                pair[0],
                CONSTRUCTS.join(", ")
            ));
        };
        let Ok(expected) = pair[1].parse::<usize>() else {
            return Outcome::Failed(format!("`{}` is not a count", pair[1]));
        };
        if actual != expected {
            wrong.push(format!("{} {actual} (expected {expected})", pair[0]));
        }
    }
    if wrong.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(format!(
            "structure differs: {}\n{}",
            wrong.join(", "),
            ir.print()
        ))
    }
}

/// The threshold settings every `kir` case runs under, so that each version of multi-versioned
/// code is checked: the defaults (on the corpus's small inputs, mostly the block-level versions),
/// every first version (one thread per outer point), every last version (fully distributed).
pub const KIR_TUNINGS: [(&str, Tuning); 3] = [
    ("default thresholds", Tuning::Defaults),
    ("every threshold met", Tuning::Uniform(0)),
    ("no threshold met", Tuning::Uniform(i64::MAX)),
];

/// Runs one case and judges its result (on the backends of kernel IR, under each of
/// [`KIR_TUNINGS`]).
pub fn run_case(fe: &Frontend, case: &Case, tolerance: Option<f64>, backend: Backend) -> Outcome {
    if !matches!(
        backend,
        Backend::Kir | Backend::Cpu | Backend::Cuda | Backend::CudaEmu | Backend::CudaModel
    ) {
        return run_case_tuned(fe, case, tolerance, backend, Tuning::Defaults);
    }
    for (setting, tuning) in KIR_TUNINGS {
        match run_case_tuned(fe, case, tolerance, backend, tuning) {
            Outcome::Failed(why) => return Outcome::Failed(format!("with {setting}: {why}")),
            Outcome::Passed => {}
            other => return other,
        }
    }
    Outcome::Passed
}

fn run_case_tuned(
    fe: &Frontend,
    case: &Case,
    tolerance: Option<f64>,
    backend: Backend,
    tuning: Tuning,
) -> Outcome {
    judge(fe, case, tolerance, run_raw(fe, case, backend, tuning))
}

/// Whether a run of `case` (its outputs, or its error rendered) is what the case expects.
fn judge(
    fe: &Frontend,
    case: &Case,
    tolerance: Option<f64>,
    result: Result<Vec<Value>, String>,
) -> Outcome {
    match (&case.expected, result) {
        (Expected::Success, Ok(_)) => Outcome::Passed,
        (Expected::Outputs(expected), Ok(got)) => {
            let checked = fe
                .entry(&case.entry)
                .and_then(|entry| check_outputs(entry, expected, got, tolerance));
            match checked {
                Ok(()) => Outcome::Passed,
                Err(e) => Outcome::Failed(e),
            }
        }
        (Expected::Error(re), Ok(got)) => Outcome::Failed(format!(
            "expected an error matching /{re}/, but the run returned {}",
            show_values(&got)
        )),
        (Expected::Error(re), Err(error)) if re.is_match(&error) => Outcome::Passed,
        (Expected::Error(re), Err(error)) => {
            Outcome::Failed(format!("the error does not match /{re}/:\n{error}"))
        }
        (_, Err(error)) => Outcome::Failed(format!("the run failed:\n{error}")),
    }
}

/// Compares the outputs of `entry` with the expected values (textual or `.npy` data), given either one per
/// result or one per result component (tuple results spread, see [`crate::output_components`]).
fn check_outputs(
    entry: &EntryPoint,
    expected: &[Arg],
    got: Vec<Value>,
    tolerance: Option<f64>,
) -> Result<(), String> {
    let types = entry
        .results
        .iter()
        .map(BoundaryType::of)
        .collect::<Result<Vec<_>, _>>()?;
    let components: Vec<&BoundaryType> = types.iter().flat_map(BoundaryType::components).collect();
    let (types, got) = if expected.len() == types.len() {
        (types.iter().collect(), got)
    } else if expected.len() == components.len() {
        (components, crate::output_components(got))
    } else {
        return Err(format!(
            "the test expects {} output(s), but entry point `{}` returns {} ({} component(s))",
            expected.len(),
            entry.name,
            types.len(),
            components.len()
        ));
    };
    let expected = expected
        .iter()
        .zip(types)
        .enumerate()
        .map(|(i, (v, t))| match &v.value {
            ArgValue::Text(text) => text
                .coerce(t)
                .map_err(|e| format!("expected output {i} is not a {t}: {e}")),
            ArgValue::Data(data) => data::check_data(data, t)
                .map(|()| data.clone())
                .map_err(|e| format!("expected output {i}, given by {}: {e}", v.origin)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    compare_outputs(&expected, &got, tolerance)
}

fn show_values(vs: &[Value]) -> String {
    let text: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
    abbreviate(&text.join(" "))
}

/// Long values are cut to keep failure messages readable.
fn abbreviate(s: &str) -> String {
    const MAX: usize = 300;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{} ...", &s[..i]),
        None => s.to_string(),
    }
}

/// Compares outputs; the error shows the first difference and both values.
pub fn compare_outputs(
    expected: &[Value],
    got: &[Value],
    tolerance: Option<f64>,
) -> Result<(), String> {
    if expected.len() != got.len() {
        return Err(format!(
            "expected {} output(s), got {}: {}",
            expected.len(),
            got.len(),
            show_values(got)
        ));
    }
    for (i, (e, g)) in expected.iter().zip(got).enumerate() {
        compare(e, g, tolerance).map_err(|why| {
            format!(
                "output {i}: {why}\n  expected: {}\n  got:      {}",
                abbreviate(&e.to_string()),
                abbreviate(&g.to_string())
            )
        })?;
    }
    Ok(())
}

/// Compares two values: same type and shape, equal elements (floats within tolerance).
pub fn compare(expected: &Value, got: &Value, tolerance: Option<f64>) -> Result<(), String> {
    match (expected, got) {
        (Value::Scalar(e), Value::Scalar(g)) if e.prim_type() == g.prim_type() => {
            if scalars_close(*e, *g, tolerance) {
                Ok(())
            } else {
                Err(format!("expected {e}, got {g}"))
            }
        }
        (Value::Array(e), Value::Array(g))
            if e.elem_type() == g.elem_type() && e.shape() == g.shape() =>
        {
            let (de, dg) = (e.data(), g.data());
            match (0..de.len()).find(|&i| !scalars_close(de.get(i), dg.get(i), tolerance)) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "at index {:?}: expected {}, got {}",
                    unflatten(i, e.shape()),
                    de.get(i),
                    dg.get(i)
                )),
            }
        }
        (Value::Tuple(es), Value::Tuple(gs)) if es.len() == gs.len() => {
            es.iter().zip(gs).enumerate().try_for_each(|(i, (e, g))| {
                compare(e, g, tolerance).map_err(|why| format!("component {i}: {why}"))
            })
        }
        _ => Err(format!(
            "expected a value of type {}, got {}",
            expected.describe(),
            got.describe()
        )),
    }
}

/// The multi-dimensional index of flat position `i` in a row-major array of `shape`.
fn unflatten(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (d, &n) in shape.iter().enumerate().rev() {
        index[d] = i % n;
        i /= n;
    }
    index
}

fn scalars_close(e: Scalar, g: Scalar, tolerance: Option<f64>) -> bool {
    fn close(e: f64, g: f64, tol: f64) -> bool {
        let within = || (e - g).abs() <= tol * e.abs().max(g.abs()).max(1.0);
        e == g || (e.is_nan() && g.is_nan()) || (e.is_finite() && g.is_finite() && within())
    }
    match (e, g) {
        (Scalar::F32(e), Scalar::F32(g)) => close(e as f64, g as f64, tolerance.unwrap_or(1e-5)),
        (Scalar::F64(e), Scalar::F64(g)) => close(e, g, tolerance.unwrap_or(1e-10)),
        _ => e == g,
    }
}

/// `path` if it is a file, else every `.og` file under it, sorted.
pub fn collect_og_files(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if !path.is_dir() {
        if !path.exists() {
            return Err(format!("{}: no such file or directory", path.display()));
        }
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect_og_files(&entry, out)?;
        } else if entry.extension().is_some_and(|e| e == "og") {
            out.push(entry);
        }
    }
    Ok(())
}

/// Where `ogham test` keeps the `stage` snapshot of the test file `file`:
/// `DIR/__snapshots__/NAME.og.STAGE.snap` beside it (the corpus harness keeps the corpus's own in
/// `tests/snapshots`, through insta).
pub fn snapshot_path(file: &Path, stage: Stage) -> PathBuf {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    file.parent()
        .unwrap_or(Path::new(""))
        .join("__snapshots__")
        .join(format!("{name}.{}.snap", stage.name()))
}

/// Judges snapshot `text` of `stage` for test file `file` against the stored one (see
/// [`snapshot_path`]). With `accept`, stores it instead. A different snapshot is written next to
/// the stored one as `.snap.new` for review; a matching or accepted one removes that pending
/// file. A missing snapshot is skipped, saying how to create it.
pub fn judge_snapshot(file: &Path, stage: Stage, text: &str, accept: bool) -> Outcome {
    let path = snapshot_path(file, stage);
    let pending = path.with_extension("snap.new");
    let io = |what: &str, p: &Path, e: std::io::Error| {
        Outcome::Failed(format!("cannot {what} `{}`: {e}", p.display()))
    };
    if accept {
        if let Some(dir) = path.parent()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return io("create", dir, e);
        }
        if let Err(e) = std::fs::write(&path, text) {
            return io("write", &path, e);
        }
        let _ = std::fs::remove_file(&pending);
        return Outcome::Passed;
    }
    match std::fs::read_to_string(&path) {
        Ok(stored) if stored == text => {
            let _ = std::fs::remove_file(&pending);
            Outcome::Passed
        }
        Ok(stored) => {
            let why = match std::fs::write(&pending, text) {
                Ok(()) => format!("the new one is in `{}`", pending.display()),
                Err(e) => format!("(cannot write `{}`: {e})", pending.display()),
            };
            let line = stored
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(stored.lines().count().min(text.lines().count()));
            Outcome::Failed(format!(
                "differs from `{}` from line {}; {why}; `ogham test --accept` stores it",
                path.display(),
                line + 1
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Skipped(format!(
            "no stored snapshot `{}`; `ogham test --accept` stores it",
            path.display()
        )),
        Err(e) => io("read", &path, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ogham_runtime::value::Array;
    fn f32s(xs: &[f32]) -> Value {
        Value::Array(Array::from_f32(vec![xs.len()], xs.to_vec()).unwrap())
    }

    #[test]
    fn float_comparison_is_tolerant() {
        assert!(compare(&f32s(&[1.0, f32::NAN]), &f32s(&[1.000001, f32::NAN]), None).is_ok());
        assert!(compare(&f32s(&[f32::INFINITY]), &f32s(&[f32::INFINITY]), None).is_ok());
        assert!(compare(&f32s(&[0.0]), &f32s(&[1e-7]), None).is_ok());
        assert_eq!(
            compare(&f32s(&[1.0, 2.0]), &f32s(&[1.0, 2.1]), None).unwrap_err(),
            "at index [1]: expected 2.0f32, got 2.1f32"
        );
        assert!(compare(&f32s(&[2.0]), &f32s(&[2.1]), Some(0.1)).is_ok());
        assert!(compare(&f32s(&[f32::INFINITY]), &f32s(&[f32::NEG_INFINITY]), None).is_err());
        let e64 = Value::Scalar(Scalar::F64(1.0));
        assert!(compare(&e64, &Value::Scalar(Scalar::F64(1.0 + 1e-12)), None).is_ok());
        assert!(compare(&e64, &Value::Scalar(Scalar::F64(1.0 + 1e-8)), None).is_err());
    }

    #[test]
    fn comparison_messages() {
        let m = Value::Array(Array::from_i64(vec![2, 2], vec![1, 2, 3, 4]).unwrap());
        let n = Value::Array(Array::from_i64(vec![2, 2], vec![1, 2, 3, 5]).unwrap());
        assert_eq!(
            compare(&m, &n, None).unwrap_err(),
            "at index [1, 1]: expected 4i64, got 5i64"
        );
        assert_eq!(
            compare(&m, &f32s(&[1.0]), None).unwrap_err(),
            "expected a value of type [2][2]i64, got [1]f32"
        );
        let e = compare_outputs(std::slice::from_ref(&m), &[n], None).unwrap_err();
        assert!(e.starts_with("output 0: at index [1, 1]"), "{e}");
        assert!(e.contains("expected: [[1i64, 2i64], [3i64, 4i64]]"), "{e}");
        assert!(
            compare_outputs(std::slice::from_ref(&m), &[m.clone(), m.clone()], None)
                .unwrap_err()
                .starts_with("expected 1 output(s), got 2")
        );
    }
}
