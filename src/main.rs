//! The `ogham` command-line tool: `check`, `run`, `test`, `doc`, `fmt` (the formatter), `lsp`
//! (the language server) and `dev` (compiler stages).
//!
//! Exit codes: 0 success; 1 user error (a program that does not compile, bad arguments or data,
//! a run-time error, failing tests, bad command-line usage); 2 internal error: a panic, reported
//! as an internal compiler error with a request to report it (never a raw Rust panic message).

use clap::{Parser, Subcommand, ValueEnum};
use cli::build::build;
use cli::dev::dev;
use cli::doc::doc;
use cli::fmt::fmt;
use cli::lsp::lsp;
use cli::run::{LAWS_ON_INTERP, RunOptions, autotune, check, check_laws_run, run};
use cli::test::test;
use ogham::{Backend, Frontend, FrontendErrors};
use ogham_compiler::typeck::EntryPoint;
use ogham_ir::diag::emit_to_stderr;
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
        #[arg(long, value_enum, default_value_t = Backend::Interp)]
        backend: Backend,
        /// Write the outputs as DIR/out0.npy, DIR/out1.npy, ... instead of printing them (tuple
        /// outputs count as their components, like printed ones); the parts of record results as
        /// DIR/NAME.npy, named as Python names them (`mean.npy`, `result1_mean.npy`). Standard
        /// error says which file holds which output.
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
        #[arg(long, value_enum, default_value_t = Backend::Cpu)]
        backend: Backend,
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
        #[arg(long, value_enum, default_value_t = Backend::Interp)]
        backend: Backend,
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
        #[arg(long, value_enum, default_value_t = Backend::Cpu)]
        backend: Backend,
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
    /// Serve the Language Server Protocol on standard input and output (diagnostics, hover,
    /// go to definition, symbols, completion, inlay hints, quick fixes, and the values of
    /// `-- >>> EXPR` comments as code lenses), for editors: see docs/editors.md.
    Lsp {
        /// Evaluate `-- >>>` comments for a server (internal: the server runs itself so).
        #[arg(long, hide = true)]
        eval_worker: bool,
    },
    /// Format `.og` files in place (the layout of docs/editors.md, "Formatting"); files with a
    /// `-- ogham-fmt: off` line are left alone.
    Fmt {
        /// `.og` files or directories searched recursively; `-` formats standard input to
        /// standard output.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Change nothing: list the files that are not formatted (exit status 1 if any).
        #[arg(long)]
        check: bool,
    },
    /// Show what the compiler makes of a program: the IR after a pass, or a whole stage.
    Dev {
        /// The program (`.og`).
        file: PathBuf,
        /// Print the program after this pass (`lower`, `simplify`, `fuse`, `resimplify`,
        /// `flatten`, `narrow`, `kir-simplify`, `hoist-reads`, `index-inputs`, `layout`,
        /// `unswitch`, `skip-idle`, `jam`, `interleave`), or the code the last pass makes of it
        /// (`codegen-cpu`: Cranelift IR; `codegen-cuda`: CUDA C without the prelude).
        #[arg(long, value_name = "PASS", conflicts_with = "print")]
        dump_after: Option<String>,
        /// Print the optimised core IR, the kernel IR, or a backend's code of the kernels.
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
    /// The Cranelift IR of every kernel (CPU backend; `--dump-after codegen-cpu`).
    Clif,
    /// The CUDA C translation unit: the prelude then every kernel (CUDA backend; the prelude
    /// then `--dump-after codegen-cuda`).
    Cuda,
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
        } => autotune(&file, entry.as_deref(), backend, runs, output, &args),
        Command::Test {
            paths,
            backend,
            accept,
            check_laws,
        } => test(&paths, backend, accept, check_laws),
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
            backend,
            out,
            progress: true,
        }),
        Command::Doc {
            paths,
            stdlib,
            output,
        } => doc(paths, stdlib, &output),
        Command::Lsp { eval_worker } => lsp(eval_worker),
        Command::Fmt { paths, check } => fmt(&paths, check),
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
    let results: Vec<String> = e
        .results
        .iter()
        .enumerate()
        .map(|(i, t)| {
            ogham::results::as_declared(t, ogham::results::declared(&e.fields, i)).to_string()
        })
        .collect();
    let result = match results.as_slice() {
        [one] => one.clone(),
        many => format!("({})", many.join(", ")),
    };
    format!("entry {}{params} : {result}", e.name)
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
// The subcommands that take more than a screen, one module each (after the output macros,
// which they use).

mod cli {
    pub(crate) mod build;
    pub(crate) mod dev;
    pub(crate) mod doc;
    pub(crate) mod fmt;
    pub(crate) mod lsp;
    pub(crate) mod run;
    pub(crate) mod test;
}
