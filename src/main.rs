//! The `ogham` command-line tool: `check`, `run`, `test`, `doc` and `dev` (compiler stages).
//!
//! Exit codes: 0 success; 1 user error (a program that does not compile, bad arguments or data,
//! a run-time error, failing tests, bad command-line usage); 2 internal error: a panic, reported
//! as an internal compiler error with a request to report it (never a raw Rust panic message).

use clap::{Parser, Subcommand, ValueEnum};
use ogham::args::{self, Arg, ArgValue};
use ogham::atomic::Staged;
use ogham::testing::{Outcome, TestFile, TrialKind, collect_og_files};
use ogham::{Backend, Frontend, FrontendErrors, cache};
use ogham_compiler::pipeline;
use ogham_compiler::typeck::EntryPoint;
use ogham_ir::Ir;
use ogham_ir::diag::emit_to_stderr;
use ogham_ir::print::print_program;
use ogham_runtime::cpu::aot;
use ogham_runtime::library::Library;
use ogham_runtime::{npy, text, trace};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

#[derive(Parser)]
#[command(
    name = "ogham",
    version,
    about = "The Ogham array language: check, run and test programs"
)]
struct Cli {
    /// A directory to search for imports that are not next to the importing file, before the
    /// directories of `OGHAM_PATH` and the standard library (repeatable; searched in order).
    #[arg(long = "lib", value_name = "DIR", global = true)]
    lib: Vec<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and type-check a program; list its entry points.
    Check {
        /// The program (`.og`).
        file: PathBuf,
    },
    /// Run an entry point of a program and print (or save) its outputs.
    Run {
        /// The program (`.og`), or a library built by `ogham build` (`.ogl`).
        file: PathBuf,
        /// The entry point to run (default: the program's only entry point, else `main`).
        #[arg(long)]
        entry: Option<String>,
        /// The executor.
        #[arg(long, value_enum, default_value_t = BackendArg::Interp)]
        backend: BackendArg,
        /// Write the outputs as DIR/out0.npy, DIR/out1.npy, ... instead of printing them (tuple
        /// outputs count as their components, like printed ones).
        #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
        output_dir: Option<PathBuf>,
        /// Threshold values for multi-versioned kernels (`name=value` lines; see
        /// `ogham dev --print kir` for the names and defaults). Used by `--backend kir|cpu`.
        #[arg(long, value_name = "FILE")]
        tuning: Option<PathBuf>,
        /// Compile the program even if the cache of compiled programs has it, and do not store
        /// it there (as `OGHAM_CACHE=0` does).
        #[arg(long)]
        no_cache: bool,
        /// Check on the values of this run that the operators of `reduce`, `scan`, `hist` and
        /// `reduce_by_index` are associative and their neutral elements neutral (warnings W0720,
        /// W0721); runs on the interpreter.
        #[arg(long)]
        check_laws: bool,
        /// Run one pixel: cut the arguments whose leading dimension is the pixel axis (the
        /// first result's leading dimension; with ROW,COL its first two) to that pixel, so that
        /// the traces of `trace "label" e` show its intermediate values (docs/reference.md,
        /// "Tracing").
        #[arg(long, value_name = "ROW[,COL]")]
        pixel: Option<String>,
        /// The arguments: `.npy` files, literal values (`[1, 2.5]`, `3i64`), or `@FILE` for
        /// textual values read from FILE. Give options before the arguments.
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Evaluate expressions interactively in the scope of a program's definitions (on the
    /// interpreter): reads lines from standard input; `:help` lists the commands.
    Repl {
        /// The program (`.og`) whose definitions (and imports) are in scope.
        file: Option<PathBuf>,
    },
    /// Compile a program to a library (`.ogl`) that `ogham run` and the runtime's
    /// `Library::load` run on the CPU backend without compiling again; or, with an output
    /// ending in `.o`, to an object file with the kernels' machine code and a C header, to link
    /// into a program with `libogham_c` (see `capi/include/ogham.h`).
    Build {
        /// The program (`.og`).
        file: PathBuf,
        /// The library to write (default: the program's name with `.ogl`); `NAME.o` writes an
        /// object file and `NAME.h` next to it, whose symbol `NAME_image` is the library.
        #[arg(short = 'o', long = "output", value_name = "LIB")]
        output: Option<PathBuf>,
    },
    /// Choose the thresholds of multi-versioned kernels by timing an entry point on a data set;
    /// writes a tuning file for `--tuning`.
    Autotune {
        /// The program (`.og`).
        file: PathBuf,
        /// The entry point to time (default: the program's only entry point, else `main`).
        #[arg(long)]
        entry: Option<String>,
        /// The executor to tune for.
        #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
        backend: BackendArg,
        /// Runs per candidate (the median counts).
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// The tuning file to write (default: the program's name with `.tuning`).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// The data set: the entry point's arguments, as for `ogham run`.
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run the `-- ==` test blocks of programs (default: tests/cases).
    Test {
        /// `.og` files or directories searched recursively.
        paths: Vec<PathBuf>,
        /// The executor.
        #[arg(long, value_enum, default_value_t = BackendArg::Interp)]
        backend: BackendArg,
        /// Store the `snapshot` blocks' outputs as the expected ones (in `__snapshots__/`
        /// beside each file) instead of comparing with them.
        #[arg(long)]
        accept: bool,
        /// Run the cases on the interpreter checking that the operators of `reduce`, `scan`,
        /// `hist` and `reduce_by_index` are associative and their neutral elements neutral on the
        /// values the cases see: a case that breaks a law fails, with the warnings (W0720, W0721).
        #[arg(long)]
        check_laws: bool,
    },
    /// Change detection on a generated scene: runs the bundled programs, writes maps, plots and a
    /// report, and prints the accuracy against the scene's truth and the timings.
    Demo {
        /// The executor.
        #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
        backend: BackendArg,
        /// The scene is SIZE × SIZE pixels.
        #[arg(long, default_value_t = 256)]
        size: usize,
        /// Years of observations (23 per year); the second half is monitored for breaks.
        #[arg(long, default_value_t = 12)]
        years: usize,
        /// Seed of the scene generator.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Where to write the pictures and the report.
        #[arg(long, default_value = "demo-out")]
        out: PathBuf,
    },
    /// Write an HTML reference of a library from its `-- |` doc comments: a page per module
    /// (`NAME.html`) and `index.html`. Without paths (or with `--stdlib`): the standard library.
    Doc {
        /// `.og` files, or directories whose `.og` files are documented (not recursively).
        paths: Vec<PathBuf>,
        /// Document the built-in standard library (`lib/`).
        #[arg(long, conflicts_with = "paths")]
        stdlib: bool,
        /// The directory to write the pages into (created if needed; existing pages of the
        /// same names are replaced).
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: PathBuf,
    },
    /// Show what the compiler makes of a program: the IR after a pass, or a whole stage.
    Dev {
        /// The program (`.og`).
        file: PathBuf,
        /// Print the program after this pass (`lower`, `simplify`, `fuse`, `resimplify`,
        /// `flatten`, `kir-simplify`).
        #[arg(long, value_name = "PASS", conflicts_with = "print")]
        dump_after: Option<String>,
        /// Print the optimised core IR, the kernel IR, or the Cranelift IR of the kernels.
        #[arg(long, value_enum)]
        print: Option<StageArg>,
        /// Skip the optimisations (`simplify`, `fuse`).
        #[arg(long)]
        no_opt: bool,
    },
}

/// The `--print` values of `ogham dev`.
#[derive(Clone, Copy, ValueEnum)]
enum StageArg {
    Core,
    Kir,
    /// The Cranelift IR of every kernel (CPU backend).
    Clif,
    /// The CUDA C translation unit: the prelude then every kernel (CUDA backend).
    Cuda,
}

/// The `--backend` values.
#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    /// The reference interpreter.
    Interp,
    /// The optimised core IR, run by the IR evaluator.
    Core,
    /// The kernel IR, run by the IR evaluator.
    Kir,
    /// Compiled kernels (Cranelift) on all cores.
    Cpu,
    /// Compiled kernels (CUDA C, NVRTC) on the first NVIDIA GPU.
    Cuda,
    /// The CUDA kernels compiled for the host and emulated (tests the CUDA backend; slow).
    CudaEmu,
    /// The emulation, instrumented: the outputs plus a modelled GPU time per kernel with
    /// `OGHAM_PROFILE=1` (GPU: `OGHAM_GPU_MODEL`, default h100).
    CudaModel,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Backend {
        match b {
            BackendArg::Interp => Backend::Interp,
            BackendArg::Core => Backend::Core,
            BackendArg::Kir => Backend::Kir,
            BackendArg::Cpu => Backend::Cpu,
            BackendArg::Cuda => Backend::Cuda,
            BackendArg::CudaEmu => Backend::CudaEmu,
            BackendArg::CudaModel => Backend::CudaModel,
        }
    }
}

/// How a command failed.
enum Failure {
    /// A user error, already reported on standard error.
    Reported,
    /// A user error to report.
    Message(String),
    /// A bug, already reported as an internal compiler error.
    Internal,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::Message(message)
    }
}

/// When the process started (for `OGHAM_PROFILE`).
static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

fn main() -> ExitCode {
    ogham_runtime::report_file_size_limit();
    ogham_runtime::cpu::profile_from(*START.get_or_init(std::time::Instant::now));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    install_panic_hook();
    ogham_compiler::loader::set_lib_dirs(cli.lib);
    if let Err(m) = ogham_runtime::memory::from_env() {
        eprintln!("error: {m}");
        return ExitCode::from(1);
    }
    let result = match panic::catch_unwind(AssertUnwindSafe(|| run_command(cli.command))) {
        Ok(result) => result,
        Err(_) => {
            report_internal_error();
            Err(Failure::Internal)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Reported) => ExitCode::from(1),
        Err(Failure::Message(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Internal) => ExitCode::from(2),
    }
}

fn run_command(command: Command) -> Result<(), Failure> {
    match command {
        Command::Check { file } => check(&file),
        Command::Run {
            file,
            entry,
            backend,
            output_dir,
            tuning,
            no_cache,
            check_laws,
            pixel,
            args,
        } => {
            let backend = backend.into();
            let pixel = pixel
                .as_deref()
                .map(ogham::pixel::parse_pixel)
                .transpose()?;
            if check_laws {
                if backend != Backend::Interp {
                    return Err(Failure::Message(LAWS_ON_INTERP.to_string()));
                }
                check_laws_run(&file, entry.as_deref(), output_dir.as_deref(), &args)
            } else {
                let how = RunOptions {
                    backend,
                    tuning: tuning.as_deref(),
                    no_cache,
                    pixel: pixel.as_deref(),
                };
                run(&file, entry.as_deref(), how, output_dir.as_deref(), &args)
            }
        }
        Command::Repl { file } => ogham::repl::run_stdio(file.as_deref()).map_err(|e| {
            eprintln!("{e}");
            Failure::Reported
        }),
        Command::Build { file, output } => build(&file, output),
        Command::Autotune {
            file,
            entry,
            backend,
            runs,
            output,
            args,
        } => autotune(&file, entry.as_deref(), backend.into(), runs, output, &args),
        Command::Test {
            paths,
            backend,
            accept,
            check_laws,
        } => test(&paths, backend.into(), accept, check_laws),
        Command::Demo {
            backend,
            size,
            years,
            seed,
            out,
        } => demo(ogham::demo::Options {
            size,
            years,
            seed,
            backend: backend.into(),
            out,
            progress: true,
        }),
        Command::Doc {
            paths,
            stdlib,
            output,
        } => doc(paths, stdlib, &output),
        Command::Dev {
            file,
            dump_after,
            print,
            no_opt,
        } => dev(&file, dump_after.as_deref(), print, !no_opt),
    }
}

// ---------------------------------------------------------------------------------------------
// Output

/// Writes to standard output; a reader that went away (`ogham ... | head`) ends the program
/// quietly, as for other command-line tools, instead of failing.
fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// `println!` through [`out`].
macro_rules! outln {
    ($($arg:tt)*) => {
        out(&format!("{}\n", format_args!($($arg)*)))
    };
}

// ---------------------------------------------------------------------------------------------
// Panics

/// The message and location of the last panic, recorded by the hook for the report.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replaces Rust's panic message by a record of it; the report is printed by the catcher.
fn install_panic_hook() {
    panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_string());
        let location = info
            .location()
            .map_or(String::new(), |l| format!(" at {l}"));
        let backtrace = std::backtrace::Backtrace::capture();
        let backtrace = match backtrace.status() {
            std::backtrace::BacktraceStatus::Captured => format!("\n{backtrace}"),
            _ => String::new(),
        };
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(format!("{message}{location}{backtrace}"));
    }));
}

fn take_last_panic() -> String {
    LAST_PANIC
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_else(|| "unknown panic".to_string())
}

fn report_internal_error() {
    eprintln!(
        "internal compiler error: {}\nnote: this is a bug in ogham, not in your program; please \
         report it with the program and the command line that triggered it",
        take_last_panic()
    );
}

// ---------------------------------------------------------------------------------------------
// check and run

fn load(file: &Path) -> Result<Frontend, Failure> {
    Frontend::load(file).map_err(
        |FrontendErrors {
             sources,
             diagnostics,
         }| {
            emit_to_stderr(&sources, &diagnostics);
            Failure::Reported
        },
    )
}

/// `entry main (xs: [n]f32) (k: i64) : [n]f32`
fn signature(e: &EntryPoint) -> String {
    let params: String = e
        .params
        .iter()
        .map(|(n, t)| format!(" ({n}: {t})"))
        .collect();
    let results: Vec<String> = e.results.iter().map(|t| t.to_string()).collect();
    let result = match results.as_slice() {
        [one] => one.clone(),
        many => format!("({})", many.join(", ")),
    };
    format!("entry {}{params} : {result}", e.name)
}

fn check(file: &Path) -> Result<(), Failure> {
    let fe = load(file)?;
    let entries = &fe.checked.entries;
    let plural = if entries.len() == 1 { "" } else { "s" };
    outln!("ok: {} entry point{plural}", entries.len());
    for e in entries {
        outln!("  {}", signature(e));
    }
    Ok(())
}

/// `ogham doc`: the reference of the files, directories or standard library.
fn doc(paths: Vec<PathBuf>, stdlib: bool, output: &Path) -> Result<(), Failure> {
    let input = if stdlib || paths.is_empty() {
        ogham::doc::Input::Stdlib
    } else {
        ogham::doc::Input::Paths(paths)
    };
    match ogham::doc::generate(&input, output) {
        Ok(modules) => {
            let plural = if modules == 1 { "" } else { "s" };
            outln!(
                "ok: {modules} module{plural} documented in {}",
                output.join("index.html").display()
            );
            Ok(())
        }
        Err(ogham::doc::DocError::Diagnostics(failed)) => {
            for f in &failed {
                emit_to_stderr(&f.sources, &f.diagnostics);
            }
            Err(Failure::Reported)
        }
        Err(ogham::doc::DocError::Message(m)) => Err(Failure::Message(m)),
    }
}

/// How `ogham run` runs a program.
struct RunOptions<'a> {
    backend: Backend,
    tuning: Option<&'a Path>,
    no_cache: bool,
    /// `--pixel`: the coordinates of the one pixel to run (`ogham::pixel`).
    pixel: Option<&'a [usize]>,
}

/// `ogham run FILE`: compiled (or taken from the cache of compiled programs, see
/// `ogham::cache`) and run; traces go to standard error.
fn run(
    file: &Path,
    entry: Option<&str>,
    how: RunOptions,
    output_dir: Option<&Path>,
    raw_args: &[String],
) -> Result<(), Failure> {
    let RunOptions {
        backend,
        tuning,
        no_cache,
        pixel,
    } = how;
    if backend == Backend::Cpu {
        ogham_runtime::cpu::start_workers();
    }
    if file.extension().is_some_and(|e| e == "ogl") {
        if pixel.is_some() {
            return Err(Failure::Message(
                "--pixel needs the program's source (a .og file), not a library".to_string(),
            ));
        }
        return run_library(file, entry, backend, output_dir, tuning, raw_args);
    }
    let options = cache::Options {
        backend,
        tuning: tuning.map(Path::to_path_buf),
    };
    let disk = if no_cache {
        cache::Disk::Off
    } else {
        cache::Disk::from_env()
    };
    let compiled = cache::compile_in(cache::Source::File(file), &options, &disk).map_err(|e| {
        e.emit_to_stderr();
        Failure::Reported
    })?;
    emit_to_stderr(compiled.sources(), compiled.warnings());
    let entry = &chosen_entry(entry, compiled.entries().iter().map(|e| e.name.as_str()))?;
    let info = compiled.entry(entry)?;
    let mut args = args::bind_params(&info.name, &info.params, command_line_args(raw_args)?)?;
    if let Some(pixel) = pixel {
        args = ogham::pixel::pixel_args(info, args, pixel)?;
    }
    if std::env::var_os("OGHAM_PROFILE").is_some()
        && let Some(start) = START.get()
    {
        eprintln!(
            "ogham-profile: program compiled (or taken from the cache) and arguments read {:.3} ms \
             after start",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    let sink = trace::to_stderr(compiled.sources().clone());
    let outputs = trace::with_sink(Some(sink), || compiled.call(entry, args)).map_err(|diag| {
        emit_to_stderr(compiled.sources(), &[*diag]);
        Failure::Reported
    })?;
    if std::env::var_os("OGHAM_PROFILE").is_some() {
        for line in compiled.kernel_origins(entry) {
            eprintln!("ogham-profile: kernel {line}");
        }
    }
    write_outputs(ogham::output_components(outputs), output_dir)
}

/// Why `--check-laws` refuses another backend.
const LAWS_ON_INTERP: &str = "--check-laws runs on the interpreter (--backend interp)";

/// `ogham run --check-laws`: the interpreter, checking the laws of the operators it applies.
fn check_laws_run(
    file: &Path,
    entry: Option<&str>,
    output_dir: Option<&Path>,
    raw_args: &[String],
) -> Result<(), Failure> {
    let fe = load(file)?;
    let entry = &chosen_entry(entry, fe.checked.entries.iter().map(|e| e.name.as_str()))?;
    let entry_point = fe.entry(entry)?;
    let args = args::bind_params(
        &entry_point.name,
        &entry_point.params,
        command_line_args(raw_args)?,
    )?;
    let sink = trace::to_stderr(fe.sources.clone());
    let (outputs, warnings) = trace::with_sink(Some(sink), || {
        ogham_runtime::interp::run_entry_checking_laws(
            &fe.sources,
            &fe.program,
            &fe.checked,
            entry,
            args,
        )
    });
    emit_to_stderr(&fe.sources, &warnings);
    let outputs = outputs.map_err(|diag| {
        emit_to_stderr(&fe.sources, &[diag]);
        Failure::Reported
    })?;
    write_outputs(ogham::output_components(outputs), output_dir)
}

/// The entry point `--entry` names, or the default one of a program whose entry points are
/// `names` ([`ogham::default_entry`]).
fn chosen_entry<'a>(
    requested: Option<&str>,
    names: impl Iterator<Item = &'a str>,
) -> Result<String, Failure> {
    match requested {
        Some(name) => Ok(name.to_string()),
        None => ogham::default_entry(names).map_err(Failure::Message),
    }
}

/// The arguments given on the command line.
fn command_line_args(raw_args: &[String]) -> Result<Vec<Arg>, Failure> {
    let mut args = Vec::new();
    for raw in raw_args {
        args.extend(parse_arg(raw)?);
    }
    Ok(args)
}

fn autotune(
    file: &Path,
    entry: Option<&str>,
    backend: Backend,
    runs: usize,
    output: Option<PathBuf>,
    raw_args: &[String],
) -> Result<(), Failure> {
    let options = cache::Options {
        backend,
        tuning: None,
    };
    let compiled = cache::compile(cache::Source::File(file), &options).map_err(|e| {
        e.emit_to_stderr();
        Failure::Reported
    })?;
    let entry = &chosen_entry(entry, compiled.entries().iter().map(|e| e.name.as_str()))?;
    let info = compiled.entry(entry)?;
    let args = args::bind_params(&info.name, &info.params, command_line_args(raw_args)?)?;
    let tuned = ogham::autotune::autotune(&compiled, entry, args, runs).map_err(|diag| {
        emit_to_stderr(compiled.sources(), &[*diag]);
        Failure::Reported
    })?;
    let path = output.unwrap_or_else(|| file.with_extension("tuning"));
    let mut staged = Staged::new();
    staged.write(&path, tuned.file().as_bytes())?;
    staged.commit()?;
    for c in &tuned.choices {
        outln!("{}={} (default {})", c.id, c.value, c.default);
    }
    for r in &tuned.rejected {
        eprintln!("warning: {r} changes the outputs; not used");
    }
    eprintln!(
        "wrote {}: {:.3} ms with the defaults, {:.3} ms tuned ({} backend)",
        path.display(),
        tuned.default_seconds * 1e3,
        tuned.tuned_seconds * 1e3,
        backend.name()
    );
    Ok(())
}

/// Prints the outputs, or saves them as `.npy` files in `output_dir` (all of them or, when
/// one cannot be written, none).
fn write_outputs(
    outputs: Vec<ogham_runtime::value::Value>,
    output_dir: Option<&Path>,
) -> Result<(), Failure> {
    match output_dir {
        None => {
            for v in &outputs {
                outln!("{v}");
            }
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                format!("cannot create the output directory {}: {e}", dir.display())
            })?;
            let mut staged = Staged::new();
            let mut written = Vec::new();
            for (i, v) in outputs.iter().enumerate() {
                let path = dir.join(format!("out{i}.npy"));
                let bytes = npy::encode(v).map_err(|e| format!("output {i}: {e}"))?;
                staged
                    .write(&path, &bytes)
                    .map_err(|e| format!("output {i}: {e}"))?;
                written.push(format!("wrote {} ({})", path.display(), v.describe()));
            }
            staged.commit()?;
            for line in written {
                eprintln!("{line}");
            }
        }
    }
    Ok(())
}

/// `ogham run LIB.ogl`: a compiled library on the CPU backend.
fn run_library(
    file: &Path,
    entry: Option<&str>,
    backend: Backend,
    output_dir: Option<&Path>,
    tuning: Option<&Path>,
    raw_args: &[String],
) -> Result<(), Failure> {
    let lib = Library::load(file)?;
    if !matches!(backend, Backend::Interp | Backend::Cpu) {
        return Err(Failure::Message(format!(
            "a compiled library runs on the CPU backend, not `{}`",
            backend.name()
        )));
    }
    let entry = &chosen_entry(entry, lib.entries().map(|(name, _)| name))?;
    let Some((_, signature)) = lib.entries().find(|(name, _)| name == entry) else {
        let names: Vec<&str> = lib.entries().map(|(n, _)| n).collect();
        return Err(Failure::Message(format!(
            "{} has no entry point `{entry}` (entry points: {})",
            file.display(),
            names.join(", ")
        )));
    };
    let args = args::bind_params(entry, &signature.params, command_line_args(raw_args)?)?;
    let mut thresholds = ogham_runtime::ireval::Thresholds::default();
    if let Some(path) = tuning {
        thresholds.named = ogham_ir::kir::tuning::read_tuning(path, lib.thresholds())
            .map_err(|e| Failure::Message(e.to_string()))?;
    }
    let outputs = lib.call_tuned(entry, args, &thresholds).map_err(|diag| {
        eprint!("{}", lib.render(&diag));
        Failure::Reported
    })?;
    write_outputs(ogham::output_components(outputs), output_dir)
}

// ---------------------------------------------------------------------------------------------
// build

/// The directory of the C interface's shared library (`libogham_c.so`) when it is next to this
/// executable (both built into the same `target/<profile>`).
fn c_library_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let name = format!(
        "{}ogham_c{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    dir.join(name).is_file().then(|| dir.to_path_buf())
}

fn build(file: &Path, output: Option<PathBuf>) -> Result<(), Failure> {
    let fe = load(file)?;
    let program = fe.compile_kernel(pipeline::Options::KERNEL).map_err(|d| {
        emit_to_stderr(&fe.sources, &[*d]);
        Failure::Reported
    })?;
    let warnings: Vec<_> = ogham::trace::compiled_warning(&program, Backend::Cpu)
        .into_iter()
        .collect();
    emit_to_stderr(&fe.sources, &warnings);
    let output = output.unwrap_or_else(|| file.with_extension("ogl"));
    let entries: Vec<String> = program.functions.iter().map(|f| f.name.clone()).collect();
    let library = Library::new(fe.sources.clone(), program).with_docs(fe.entry_docs());
    if output.extension().is_some_and(|e| e == "o") {
        let name = symbol_name(&output);
        let object = library.object(&name)?;
        let header = output.with_extension("h");
        let signatures: Vec<String> = fe.checked.entries.iter().map(signature).collect();
        let origin = file.display().to_string();
        let absolute = std::path::absolute(&output).unwrap_or_else(|_| output.clone());
        let build_line = aot::build_line(&absolute, c_library_dir().as_deref());
        let interface = output.with_file_name("ogham.h");
        let mut staged = Staged::new();
        staged.write(&output, &object)?;
        staged.write(
            &header,
            aot::c_header(&name, &origin, &signatures, &build_line).as_bytes(),
        )?;
        staged.write(&interface, aot::OGHAM_H.as_bytes())?;
        staged.commit()?;
        outln!(
            "wrote {}, {} and {} (entry points: {}; open with ogham_open_image(&{name}_image))\n\
             build a program with: {build_line}",
            output.display(),
            header.display(),
            interface.display(),
            entries.join(", ")
        );
        return Ok(());
    }
    let mut staged = Staged::new();
    staged.write(&output, library.to_json()?.as_bytes())?;
    staged.commit()?;
    outln!(
        "wrote {} (entry points: {})",
        output.display(),
        entries.join(", ")
    );
    Ok(())
}

/// The C name of an object file's library: its file stem, other characters than letters,
/// digits and `_` replaced by `_` (and `_` before a leading digit).
fn symbol_name(output: &Path) -> String {
    let stem = output.file_stem().map(|s| s.to_string_lossy().to_string());
    let mut name: String = stem
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    name
}

/// One command-line argument: a `.npy` file, `@FILE` of textual values, or literal values.
fn parse_arg(raw: &str) -> Result<Vec<Arg>, String> {
    let is_flag = |s: &str| s.len() == 2 && s[1..].chars().all(|c| c.is_ascii_alphabetic());
    if raw.starts_with("--") || (raw.starts_with('-') && is_flag(raw)) {
        return Err(format!(
            "`{raw}` looks like an option: give options before the arguments"
        ));
    }
    if let Some(file) = raw.strip_prefix('@') {
        let text =
            std::fs::read_to_string(file).map_err(|e| format!("{file}: cannot read: {e}"))?;
        let values = text::parse(&text).map_err(|e| format!("{file}:{e}"))?;
        return Ok(values
            .into_iter()
            .enumerate()
            .map(|(i, v)| Arg {
                origin: format!("value {} of {file}", i + 1),
                value: ArgValue::Text(v),
            })
            .collect());
    }
    if raw.to_ascii_lowercase().ends_with(".npy") {
        let value = npy::read(Path::new(raw)).map_err(|e| e.to_string())?;
        return Ok(vec![Arg {
            origin: raw.to_string(),
            value: ArgValue::Data(value),
        }]);
    }
    let values = text::parse(raw).map_err(|e| format!("in the argument `{raw}`: {e}"))?;
    Ok(values
        .into_iter()
        .map(|v| Arg {
            origin: format!("`{raw}`"),
            value: ArgValue::Text(v),
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// dev

/// Compiles `file` up to the pass asked for (by name, or the end of a stage) and prints the IR
/// there, verified after every pass.
fn dev(
    file: &Path,
    dump_after: Option<&str>,
    print: Option<StageArg>,
    optimise: bool,
) -> Result<(), Failure> {
    let stop_after = match (dump_after, print) {
        (Some(name), _) => pipeline::Pass::named(name).ok_or_else(|| {
            let names: Vec<&str> = pipeline::Pass::ALL.iter().map(|p| p.name()).collect();
            format!("there is no pass `{name}` (passes: {})", names.join(", "))
        })?,
        (None, Some(StageArg::Core)) => pipeline::Options::CORE.stop_after,
        (None, Some(StageArg::Kir | StageArg::Clif | StageArg::Cuda)) | (None, None) => {
            pipeline::Options::KERNEL.stop_after
        }
    };
    let fe = load(file)?;
    let options = pipeline::Options {
        stop_after,
        optimise,
        verify: true,
        fuse: true,
    };
    let mut printed = None;
    let compiled = pipeline::compile(
        &fe.sources,
        &fe.program,
        &fe.checked,
        options,
        &mut |pass, ir| {
            if pass == stop_after {
                printed = Some(match (print, ir) {
                    (Some(StageArg::Clif), Ir::Kernel(ir)) => {
                        ogham_compiler::back::cpu::print_clif(ir)
                    }
                    (Some(StageArg::Cuda), Ir::Kernel(ir)) => {
                        ogham_compiler::back::cuda::generate(ir).source()
                    }
                    (Some(StageArg::Kir), Ir::Kernel(ir)) => {
                        let origins: String = ogham_ir::abi::kernel_origins(ir, &fe.sources)
                            .into_iter()
                            .map(|(_, line)| format!("-- kernel {line}\n"))
                            .collect();
                        format!("{origins}{}", print_program(ir))
                    }
                    // Core IR (a pass before `flatten`) has no kernels: its text.
                    _ => ir.print(),
                });
            }
        },
    );
    if let Err(diagnostics) = compiled {
        emit_to_stderr(&fe.sources, &diagnostics);
        let internal = diagnostics
            .iter()
            .any(|d| d.code == pipeline::INTERNAL_ERROR);
        return Err(if internal {
            Failure::Internal
        } else {
            Failure::Reported
        });
    }
    match printed {
        Some(text) => out(&text),
        None => outln!("(pass `{stop_after}` is skipped without optimisations)"),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// demo

fn demo(options: ogham::demo::Options) -> Result<(), Failure> {
    if options.size < 16 || options.years < 4 {
        return Err(Failure::Message(
            "the demo needs --size 16 or more and --years 4 or more".to_string(),
        ));
    }
    let summary = ogham::demo::run_demo(&options).map_err(Failure::Message)?;
    outln!("stage                  seconds     pixels/s");
    for (stage, secs, rate) in ogham::demo::timing_rows(&summary) {
        outln!("{stage:<22} {secs:>8} {rate:>12}");
    }
    outln!("");
    for (what, value) in ogham::demo::accuracy_rows(&summary) {
        outln!("{what:<48} {value:>8}");
    }
    outln!("");
    outln!(
        "wrote {} files to {}; open {}",
        summary.files.len() + 2,
        options.out.display(),
        options.out.join("report.html").display()
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// test

fn test(
    paths: &[PathBuf],
    backend: Backend,
    accept: bool,
    check_laws: bool,
) -> Result<(), Failure> {
    if check_laws && backend != Backend::Interp {
        return Err(Failure::Message(LAWS_ON_INTERP.to_string()));
    }
    let default = [PathBuf::from("tests/cases")];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut files = Vec::new();
    for path in paths {
        collect_og_files(path, &mut files)?;
    }
    let (mut passed, mut failed, mut skipped, mut internal) = (0, 0, 0, false);
    let mut fail = |name: &str, why: &str| {
        outln!("FAIL {name}: {}", why.trim_end().replace('\n', "\n    "));
        failed += 1;
    };
    for path in files {
        let name = path.display().to_string();
        let file = match TestFile::read(&path, name.clone()) {
            Ok(Some(file)) => file,
            Ok(None) => continue,
            Err(e) => {
                fail(&name, &e);
                continue;
            }
        };
        let loaded = match panic::catch_unwind(AssertUnwindSafe(|| file.load())) {
            Ok(loaded) => loaded,
            Err(_) => {
                internal = true;
                fail(
                    &name,
                    &format!("internal compiler error: {}", take_last_panic()),
                );
                continue;
            }
        };
        for trial in file.trials(&[backend.name()]) {
            let run = || {
                if check_laws {
                    file.run_checking_laws(&trial, &loaded)
                } else {
                    file.run(&trial, &loaded)
                }
            };
            match panic::catch_unwind(AssertUnwindSafe(run)) {
                Ok(outcome) => {
                    let outcome = match (outcome, &trial.kind) {
                        (Outcome::Snapshot(text), TrialKind::Snapshot(stage)) => {
                            ogham::testing::judge_snapshot(&path, *stage, &text, accept)
                        }
                        (outcome, _) => outcome,
                    };
                    match outcome {
                        Outcome::Passed => passed += 1,
                        Outcome::Failed(why) => fail(&trial.name, &why),
                        Outcome::Skipped(why) => {
                            outln!("SKIP {}: {why}", trial.name);
                            skipped += 1;
                        }
                        Outcome::Snapshot(_) => {
                            fail(&trial.name, "a snapshot of a non-snapshot trial")
                        }
                    }
                }
                Err(_) => {
                    internal = true;
                    fail(
                        &trial.name,
                        &format!("internal compiler error: {}", take_last_panic()),
                    );
                }
            }
        }
    }
    outln!("{passed} passed, {failed} failed, {skipped} skipped");
    match (internal, failed) {
        (true, _) => Err(Failure::Internal),
        (false, 0) => Ok(()),
        (false, _) => Err(Failure::Reported),
    }
}
