//! Ogham: a nested data-parallel array language for satellite time-series change detection.
//!
//! This crate is the facade over the compiler and the runtime, used by the `ogham` command-line
//! tool and by Rust programs: [`Frontend::load`] parses and type-checks a program, then a backend
//! runs its entry points.

pub mod args;
pub mod atomic;
pub mod autotune;
pub mod cache;
/// The compiler's backends wired to the runtime's code-generator traits (the crate
/// `ogham-codegen`).
pub use ogham_codegen as codegen;
pub mod demo;
pub mod doc;
pub mod lsp;
pub mod pixel;
pub mod repl;
pub mod results;
pub mod testing;
pub mod trace;

pub use ogham_compiler as compiler;
pub use ogham_ir as ir;
pub use ogham_runtime as runtime;

use ogham_compiler::pipeline;
use ogham_compiler::syntax::ast::{Decl, Program};
use ogham_compiler::typeck::{Checked, EntryPoint};
use ogham_ir::Ir;
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir;
use ogham_ir::source::SourceMap;
pub use ogham_runtime::ireval::Thresholds;
use ogham_runtime::value::Value;
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
        ogham_ir::diag::render(&self.sources, &self.diagnostics)
    }
}

impl Frontend {
    /// Loads `path` with its imports and type-checks it.
    pub fn load(path: &Path) -> Result<Frontend, FrontendErrors> {
        let mut sources = SourceMap::new();
        let program = ogham_compiler::loader::load(&mut sources, path);
        Frontend::check(sources, program)
    }

    /// Type-checks a program given as text (`name` names it in diagnostics; imports are
    /// resolved from the current directory, then the standard library).
    pub fn load_source(name: &str, text: &str) -> Result<Frontend, FrontendErrors> {
        let mut sources = SourceMap::new();
        let program = ogham_compiler::loader::load_source(&mut sources, name, text);
        Frontend::check(sources, program)
    }

    /// Type-checks a program embedded in the calling binary (`name` names it in diagnostics;
    /// imports come from the embedded standard library only, never from disk).
    pub fn load_embedded(name: &str, text: &str) -> Result<Frontend, FrontendErrors> {
        let mut sources = SourceMap::new();
        let program = ogham_compiler::loader::load_embedded(&mut sources, name, text);
        Frontend::check(sources, program)
    }

    fn check(
        sources: SourceMap,
        program: Result<Program, Vec<Diagnostic>>,
    ) -> Result<Frontend, FrontendErrors> {
        let program = match program {
            Ok(p) => p,
            Err(diagnostics) => {
                return Err(FrontendErrors {
                    sources,
                    diagnostics,
                });
            }
        };
        match ogham_compiler::typeck::check(&sources, &program) {
            Ok(checked) => Ok(Frontend {
                sources,
                program,
                checked,
            }),
            Err(diagnostics) => Err(FrontendErrors {
                sources,
                diagnostics,
            }),
        }
    }

    /// Compiles the program through the pipeline (see `ogham_compiler::pipeline`): to core IR,
    /// kernel IR when `options` run `flatten`, or a backend's artefact when they stop after a
    /// code-generating pass.
    pub fn compile_product(
        &self,
        options: pipeline::Options,
    ) -> Result<pipeline::Product, Box<Diagnostic>> {
        pipeline::compile(
            &self.sources,
            &self.program,
            &self.checked,
            options,
            &mut |_, _| {},
        )
        .map_err(|mut ds| Box::new(ds.swap_remove(0)))
    }

    /// Compiles the program through the middle end: to core IR or, when `options` run
    /// `flatten`, kernel IR ([`Frontend::compile_product`] with `options` that stop before code
    /// generation).
    pub fn compile(&self, options: pipeline::Options) -> Result<Ir, Box<Diagnostic>> {
        match self.compile_product(options)? {
            pipeline::Product::Ir(ir) => Ok(ir),
            pipeline::Product::Artifact(_) => Err(Box::new(Diagnostic::error(
                pipeline::INTERNAL_ERROR,
                format!(
                    "internal error: IR was asked for, but the compiler's options stop after `{}`",
                    options.stop_after
                ),
            ))),
        }
    }

    /// Compiles the program to kernel IR ([`Frontend::compile`] with `options` that run
    /// `flatten`, such as `Options::KERNEL`).
    pub fn compile_kernel(
        &self,
        options: pipeline::Options,
    ) -> Result<kir::Program, Box<Diagnostic>> {
        self.compile(options)?
            .kernel()
            .ok_or_else(|| needs_kernel_ir("the compiler's options stop before `flatten`"))
    }

    /// The entry point `name` of the root module, or an error listing the ones there are.
    pub fn entry(&self, name: &str) -> Result<&EntryPoint, String> {
        self.checked
            .entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| no_entry(name, self.checked.entries.iter().map(|e| e.name.as_str())))
    }

    /// The doc comments (`-- |` lines) of the entry points that have one, by name.
    pub fn entry_docs(&self) -> std::collections::BTreeMap<String, String> {
        let Some(root) = self.program.modules.last() else {
            return Default::default();
        };
        self.checked
            .entries
            .iter()
            .filter_map(|e| match root.decls.get(e.decl) {
                Some(Decl::Def(def)) => Some((e.name.clone(), def.doc.clone()?)),
                _ => None,
            })
            .collect()
    }
}

/// The internal error of kernel IR asked for where there is core IR.
fn needs_kernel_ir(why: &str) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(
        pipeline::INTERNAL_ERROR,
        format!("internal error: {why}, but the program is core IR"),
    ))
}

/// The message for a missing entry point `name` of a program whose entry points are `names`.
pub fn no_entry<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    match names.as_slice() {
        [] => format!("there is no entry point `{name}`: the program has no entry points"),
        _ => format!(
            "there is no entry point `{name}` (entry points: {})",
            names.join(", ")
        ),
    }
}

/// The entry point to run when the caller names none: the program's only entry point, else
/// `main`; with several and no `main`, an error listing them.
pub fn default_entry<'a>(names: impl Iterator<Item = &'a str>) -> Result<String, String> {
    let names: Vec<&str> = names.collect();
    match names.as_slice() {
        [only] => Ok(only.to_string()),
        _ if names.contains(&"main") => Ok("main".to_string()),
        [] => Err("the program has no entry points".to_string()),
        _ => Err(format!(
            "the program has {} entry points; choose one with `--entry NAME` (entry points: {})",
            names.len(),
            names.join(", ")
        )),
    }
}

/// The outputs as callers see them: tuple outputs (tuples, records, arrays of tuples) spread
/// into their components, recursively (Futhark's convention). `ogham run` prints and saves
/// these, and test blocks may list expected outputs this way.
pub fn output_components(outputs: Vec<Value>) -> Vec<Value> {
    outputs
        .into_iter()
        .flat_map(|v| match v {
            Value::Tuple(vs) => output_components(vs),
            v => vec![v],
        })
        .collect()
}

/// A tuning file that cannot be used.
pub const E_TUNING: &str = "E0614";

/// Where the values of the kernel IR's tunable thresholds come from (see
/// `ogham_ir::kir::Threshold`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tuning<'a> {
    /// Every threshold's default.
    Defaults,
    /// A tuning file (`--tuning`); defaults for the thresholds it does not name.
    File(&'a Path),
    /// Every threshold set to one value: `0` selects the first version of all multi-versioned
    /// code (outer parallelism), `i64::MAX` the last one.
    Uniform(i64),
}

/// The executors of entry points. All of them implement the semantics of the reference
/// interpreter. They are the values of the command line's `--backend`, each with its help line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The reference interpreter.
    #[value(help = "The reference interpreter")]
    Interp,
    /// The optimised core IR, executed by the IR evaluator (checks lowering, simplification
    /// and fusion).
    #[value(help = "The optimised core IR, run by the IR evaluator")]
    Core,
    /// The kernel IR, executed by the IR evaluator (checks flattening too).
    #[value(help = "The kernel IR, run by the IR evaluator")]
    Kir,
    /// The kernel IR with its kernels compiled by Cranelift and run on all cores; the host
    /// program runs in the IR evaluator (`ogham_runtime::cpu`).
    #[value(help = "Compiled kernels (Cranelift) on all cores")]
    Cpu,
    /// The kernel IR with its kernels compiled to CUDA C (NVRTC) and launched on the first
    /// GPU; the host program runs in the IR evaluator (`ogham_runtime::cuda`). Fails with
    /// `R0711` on a machine without a GPU, its driver or NVRTC.
    #[value(help = "Compiled kernels (CUDA C, NVRTC) on the first NVIDIA GPU")]
    Cuda,
    /// The CUDA backend's code and launch plans compiled for the host by `g++` and run with one
    /// OS thread per GPU thread (`ogham_runtime::cuda::emulator`): tests the CUDA backend
    /// without a GPU; slow.
    #[value(
        help = "The CUDA kernels compiled for the host and emulated (tests the CUDA backend; slow)"
    )]
    CudaEmu,
    /// The CUDA backend's kernels and launch plans run on the host at a modelled GPU's launch
    /// configuration, instrumented: outputs as on every backend, plus the GPU's modelled time
    /// per kernel (`OGHAM_PROFILE`; `ogham_runtime::cuda::model`, `docs/cuda.md`).
    #[value(
        help = "The emulation, instrumented: the outputs plus a modelled GPU time per kernel with `OGHAM_PROFILE=1` (GPU: `OGHAM_GPU_MODEL`, default h100)"
    )]
    CudaModel,
}

impl Backend {
    pub const ALL: [Backend; 7] = [
        Backend::Interp,
        Backend::Core,
        Backend::Kir,
        Backend::Cpu,
        Backend::Cuda,
        Backend::CudaEmu,
        Backend::CudaModel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Interp => "interp",
            Backend::Core => "core",
            Backend::Kir => "kir",
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
            Backend::CudaEmu => "cuda-emu",
            Backend::CudaModel => "cuda-model",
        }
    }

    /// Why this backend cannot run on this machine (the CUDA backend without a GPU), or `None`.
    pub fn unavailable(self) -> Option<String> {
        match self {
            Backend::Cuda => ogham_runtime::cuda::unavailable(),
            Backend::CudaEmu => ogham_runtime::cuda::emulator::unavailable(),
            Backend::CudaModel => ogham_runtime::cuda::model::unavailable(),
            _ => None,
        }
    }

    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Runs entry point `entry` on `args` (typed by [`args::bind`]; the backend checks that
    /// they fit the parameters); returns its outputs, or the error (bad arguments: `E06xx`;
    /// run-time errors: `R07xx`). `tuning` names a tuning file for the kernel IR's thresholds.
    pub fn run(
        self,
        fe: &Frontend,
        entry: &str,
        args: Vec<Value>,
        tuning: Option<&Path>,
    ) -> Result<Vec<Value>, Box<Diagnostic>> {
        let tuning = tuning.map_or(Tuning::Defaults, Tuning::File);
        self.run_tuned(fe, entry, args, tuning)
    }

    /// [`Backend::run`] with the thresholds of multi-versioned kernel IR set by `tuning`
    /// (ignored by the other backends).
    pub fn run_tuned(
        self,
        fe: &Frontend,
        entry: &str,
        args: Vec<Value>,
        tuning: Tuning,
    ) -> Result<Vec<Value>, Box<Diagnostic>> {
        match self {
            Backend::Interp => {
                ogham_interp::run_entry(&fe.sources, &fe.program, &fe.checked, entry, args)
                    .map_err(Box::new)
            }
            Backend::Core
            | Backend::Kir
            | Backend::Cpu
            | Backend::Cuda
            | Backend::CudaEmu
            | Backend::CudaModel => {
                let ir = fe.compile(self.pipeline_options())?;
                let thresholds = thresholds(tuning, ir.thresholds())?;
                self.run_ir(&ir, entry, args, &thresholds)
            }
        }
    }

    /// Runs entry point `entry` of `ir` (core IR for [`Backend::Core`], kernel IR for the
    /// others; [`Backend::Interp`] runs the IR evaluator like [`Backend::Kir`]).
    pub fn run_ir(
        self,
        ir: &Ir,
        entry: &str,
        args: Vec<Value>,
        thresholds: &Thresholds,
    ) -> Result<Vec<Value>, Box<Diagnostic>> {
        match (self, ir) {
            (Backend::Cpu, Ir::Kernel(ir)) => {
                ogham_runtime::cpu::run(codegen::cpu::CPU, ir, entry, args, thresholds)
            }
            (Backend::Cuda, Ir::Kernel(ir)) => {
                ogham_runtime::cuda::run(codegen::cuda::CUDA, ir, entry, args, thresholds)
            }
            (Backend::CudaEmu, Ir::Kernel(ir)) => {
                ogham_runtime::cuda::run_emulated(codegen::cuda::CUDA, ir, entry, args, thresholds)
            }
            (Backend::CudaModel, Ir::Kernel(ir)) => {
                ogham_runtime::cuda::run_modeled(codegen::cuda::CUDA, ir, entry, args, thresholds)
            }
            (Backend::Cpu | Backend::Cuda | Backend::CudaEmu | Backend::CudaModel, Ir::Core(_)) => {
                Err(needs_kernel_ir(&format!(
                    "backend `{}` runs kernel IR",
                    self.name()
                )))
            }
            (Backend::Interp | Backend::Core | Backend::Kir, Ir::Kernel(ir)) => {
                ogham_runtime::ireval::run(ir, entry, args, thresholds)
            }
            (Backend::Interp | Backend::Core | Backend::Kir, Ir::Core(ir)) => {
                ogham_runtime::ireval::run(ir, entry, args, thresholds)
            }
        }
    }

    /// The middle end's options for this backend's IR.
    pub fn pipeline_options(self) -> pipeline::Options {
        if self == Backend::Core {
            pipeline::Options::CORE
        } else {
            pipeline::Options::KERNEL
        }
    }
}

/// The thresholds `tuning` sets for a program whose tunable thresholds are `tunable`.
pub fn thresholds(
    tuning: Tuning,
    tunable: &[ogham_ir::kir::Threshold],
) -> Result<Thresholds, Box<Diagnostic>> {
    Ok(match tuning {
        Tuning::Defaults => Thresholds::default(),
        Tuning::File(path) => Thresholds {
            named: ogham_ir::kir::tuning::read_tuning(path, tunable)
                .map_err(|e| Box::new(Diagnostic::error(E_TUNING, e.to_string())))?,
            others: None,
        },
        Tuning::Uniform(value) => Thresholds::uniform(value),
    })
}
