//! IR filetests and the IR text round trip (`ogham_ir::parse`).
//!
//! Trials (filter them like any `cargo test` names):
//! - `filetest::<pass>/<name>`: `tests/filetests/<pass>/<name>.ir` is an input program in the
//!   IR text format, a line `-- expected`, then the program the one pass `<pass>` (a name of
//!   `ogham_compiler::pipeline::Pass`: `simplify`, `fuse`, `flatten`, `kir-simplify`, ...) makes
//!   of it. The trial parses the input, verifies it in the pass's input form, runs the pass,
//!   verifies the result in the pass's output form, prints it and compares the text with the
//!   expected section (the simplification passes must also leave their own output unchanged).
//!   Lines of `--` comments before the input describe the test. The code-generating passes
//!   (`filetest::codegen-cpu/<name>`, `filetest::codegen-cuda/<name>`) read kernel IR like the
//!   others; their product is the backend's code of its kernels (`ogham dev --dump-after
//!   codegen-cpu`, which is `--print clif`; `--dump-after codegen-cuda`, the kernels of
//!   `--print cuda` without the prelude).
//! - Any filetest may, instead of an expected section, carry `-- check:`-style directives
//!   among its lines (`ogham::testing::filecheck`: `check:`, `nextln:`, `sameln:`, `not:`,
//!   `unordered:`, with `$(name=regex)` variables); the output must match them. The backend
//!   filetests do, so that renumbered values and blocks do not re-bless them.
//! - `filetest::verify-core/<name>`, `filetest::verify-kernel/<name>`,
//!   `filetest::verify-exact/<name>`: the input need not be valid; the expected section is what
//!   the verifier says of it in that form (its messages, one a line, or `valid`; `verify-exact`
//!   is the verifier of loaded libraries, `verify_exact`, on kernel IR), or the parse error
//!   (`parse error: ...`) of a program the form cannot hold (a kernel in core IR or inside a
//!   kernel, which the IR's types rule out).
//! - `roundtrip::<file>`: every `tests/cases/**/*.og` and `programs/*.og` compiles to kernel IR;
//!   after every pass the IR printed, parsed back and printed again gives the same text.
//! - `loads::<file>`: the same programs' kernel IR, written as a library, loads (the checks of
//!   untrusted libraries accept what the compiler makes).
//!
//! `OGHAM_BLESS=1 cargo test -p ogham-tests --test filetests` rewrites the expected sections
//! (adding missing ones) with what the passes print; review the diff. Without it a missing or
//! different expectation fails, and always under `CI=true`.

use libtest_mimic::{Arguments, Failed, Trial};
use ogham::Frontend;
use ogham::codegen::cpu::CPU;
use ogham::testing::collect_og_files;
use ogham::testing::filecheck::Checks;
use ogham_compiler::pipeline::{Pass, Product};
use ogham_ir::Ir;
use ogham_runtime::library::Library;
use ogham_tests::irtext::round_trip_every_pass;
use ogham_tests::{cases_dir, workspace_root};
use std::path::{Path, PathBuf};

/// The line that separates a filetest's input from its expected output.
const EXPECTED: &str = "-- expected";

fn main() {
    let args = Arguments::from_args();
    if let Err(e) = std::env::set_current_dir(workspace_root()) {
        eprintln!("cannot enter the workspace root: {e}");
        std::process::exit(101);
    }
    let mut trials = filetests();
    trials.extend(round_trips());
    libtest_mimic::run(&args, trials).exit()
}

fn filetests() -> Vec<Trial> {
    let root = Path::new("tests/filetests");
    let mut trials = Vec::new();
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(root) {
        Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => {
            let message = format!("{}: {e}", root.display());
            return vec![Trial::test("filetests", move || Err(message.into()))];
        }
    };
    dirs.sort();
    for dir in dirs {
        let step_name = dir
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|es| es.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.retain(|f| f.extension().is_some_and(|x| x == "ir"));
        files.sort();
        for file in files {
            let stem = file
                .file_stem()
                .map_or(String::new(), |s| s.to_string_lossy().into_owned());
            let name = format!("filetest::{step_name}/{stem}");
            let step_name = step_name.clone();
            trials.push(Trial::test(name, move || run_filetest(&step_name, &file)));
        }
    }
    trials
}

/// Whether expectations are rewritten rather than compared (never under CI).
fn blessing() -> bool {
    std::env::var_os("OGHAM_BLESS").is_some_and(|v| v == "1")
        && std::env::var("CI").map_or(true, |v| v != "true")
}

/// What a directory of filetests checks: one pass (an IR pass, or a backend's code for kernel
/// IR), or the verifier's verdict.
#[derive(Clone, Copy)]
enum Step {
    Pass(Pass),
    /// The verifier, on kernel IR or core IR; `exact`: the verifier of loaded libraries
    /// (`verify_exact`, kernel IR).
    Verify {
        kernel: bool,
        exact: bool,
    },
}

impl Step {
    fn named(name: &str) -> Option<Step> {
        match name {
            "verify-core" => Some(Step::Verify {
                kernel: false,
                exact: false,
            }),
            "verify-kernel" => Some(Step::Verify {
                kernel: true,
                exact: false,
            }),
            "verify-exact" => Some(Step::Verify {
                kernel: true,
                exact: true,
            }),
            _ => Pass::named(name)
                .filter(|p| *p != Pass::Lower)
                .map(Step::Pass),
        }
    }

    /// Whether the input is kernel IR (otherwise core IR).
    fn reads_kernel_ir(self) -> bool {
        match self {
            Step::Pass(pass) => pass.reads_kernel_ir(),
            Step::Verify { kernel, .. } => kernel,
        }
    }

    /// The text the step makes of `program`: the pass's product (the program after the pass, or
    /// the kernels' code), or the verifier's messages (one a line; `valid` when there are none).
    fn output(self, program: Ir) -> Result<String, String> {
        let pass = match self {
            Step::Pass(pass) => pass,
            Step::Verify { exact, .. } => {
                let verified = match &program {
                    Ir::Kernel(p) if exact => ogham_ir::verify::verify_exact(p),
                    _ => program.verify(),
                };
                return Ok(match verified {
                    Ok(()) => "valid\n".to_string(),
                    Err(errors) => errors.iter().map(|e| format!("{e}\n")).collect(),
                });
            }
        };
        let output = match pass.run(program) {
            Product::Ir(ir) => ir,
            artifact @ Product::Artifact(_) => return Ok(artifact.print()),
        };
        output.verify().map_err(|errors| {
            format!("the IR after `{pass}` is invalid:\n{}", errors.join("\n"))
        })?;
        let text = output.print();
        if matches!(pass, Pass::Simplify | Pass::Resimplify | Pass::KirSimplify)
            && pass.run(output).print() != text
        {
            return Err(format!("`{pass}` is not idempotent here"));
        }
        Ok(text)
    }
}

fn run_filetest(step_name: &str, path: &Path) -> Result<(), Failed> {
    let step = Step::named(step_name).ok_or_else(|| {
        format!(
            "`{step_name}` is neither a pass that runs on IR nor `verify-core`, \
             `verify-kernel` or `verify-exact`"
        )
    })?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (input, expected) = match text.split_once(&format!("\n{EXPECTED}\n")) {
        Some((input, expected)) => (format!("{input}\n"), Some(expected)),
        None => (text.clone(), None),
    };
    let checks = Checks::parse(&input).map_err(|e| format!("{}: {e}", path.display()))?;
    if !checks.is_empty() && expected.is_some() {
        return Err(format!(
            "{} has both `check:` directives and a `{EXPECTED}` section; keep one",
            path.display()
        )
        .into());
    }
    let kernel = step.reads_kernel_ir();
    let actual = match Ir::parse(&input, kernel) {
        Ok(program) => {
            if !matches!(step, Step::Verify { .. }) {
                program.verify().map_err(|errors| {
                    let form = if kernel { "kernel" } else { "core" };
                    format!("the input is not valid {form} IR:\n{}", errors.join("\n"))
                })?;
            }
            step.output(program)
                .map_err(|e| format!("{}: {e}", path.display()))?
        }
        // What the form's types cannot hold, the parser rejects.
        Err(e) if matches!(step, Step::Verify { .. }) => format!("parse error: {e}\n"),
        Err(e) => return Err(format!("{}:{e}", path.display()).into()),
    };
    if !checks.is_empty() {
        return checks
            .check(&actual)
            .map_err(|e| format!("{}: {e}", path.display()).into());
    }
    if expected == Some(actual.as_str()) {
        return Ok(());
    }
    if blessing() {
        let blessed = format!("{input}{EXPECTED}\n{actual}");
        std::fs::write(path, blessed).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(());
    }
    Err(match expected {
        None => format!(
            "{} has no `{EXPECTED}` section; the pass prints:\n{actual}\n\
             (OGHAM_BLESS=1 cargo test -p ogham-tests --test filetests writes it)",
            path.display()
        ),
        Some(expected) => format!(
            "{} differs from its expectation:\n--- expected\n{expected}--- actual\n{actual}\
             (OGHAM_BLESS=1 cargo test -p ogham-tests --test filetests accepts it)",
            path.display()
        ),
    }
    .into())
}

fn round_trips() -> Vec<Trial> {
    let mut paths = Vec::new();
    for dir in [cases_dir(), PathBuf::from("programs")] {
        if let Err(e) = collect_og_files(&dir, &mut paths) {
            return vec![Trial::test("roundtrip", move || Err(e.into()))];
        }
    }
    let mut trials = Vec::new();
    for path in paths {
        let name = format!("roundtrip::{}", path.display());
        let file = path.clone();
        trials.push(Trial::test(name, move || {
            // Programs that do not load are the corpus's business (error cases).
            let Ok(fe) = Frontend::load(&file) else {
                return Ok(());
            };
            round_trip_every_pass(&fe).map_err(Failed::from)
        }));
        let name = format!("loads::{}", path.display());
        trials.push(Trial::test(name, move || {
            let Ok(fe) = Frontend::load(&path) else {
                return Ok(());
            };
            loads_as_a_library(&fe).map_err(Failed::from)
        }));
    }
    trials
}

/// The program's kernel IR, written as a library (`ogham build`'s `.ogl` text), loads: the
/// checks of untrusted libraries (the exact verifier, signatures, unchecked ranges) accept
/// everything the compiler makes. Programs the compiler does not support pass.
fn loads_as_a_library(fe: &Frontend) -> Result<(), String> {
    let Ok(program) = fe.compile_kernel(ogham_compiler::pipeline::Options::KERNEL) else {
        return Ok(());
    };
    let json = Library::new(fe.sources.clone(), program, CPU).to_json()?;
    Library::from_json(&json, "the library", CPU).map(|_| ())
}
