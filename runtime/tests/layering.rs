//! The runtime's layering, checked on its sources and its dependency graph: only the reference
//! interpreter (`interp/`) may use the AST and the front end. Everything else — the base layer
//! (values, errors, indexing, scalar operations, `.npy`) and the executors of compiled code
//! (`ireval`, `cpu`, `cuda`, `kernel_io`, `memory`, libraries) — depends on the IR
//! (`ogham-ir`) and the base layer; only code generation (the `jit` feature: `cpu/jit.rs`,
//! `cpu/native.rs`, the writing of ahead-of-time objects) and the CUDA executor (`cuda`) use the
//! compiler's backends. Without default features the runtime, and the C interface built on it,
//! contain neither the compiler nor Cranelift.

use std::path::{Path, PathBuf};

/// Paths that code outside `interp/` must not name.
const FORBIDDEN: &[&str] = &[
    "crate::interp",
    "ogham_compiler::syntax",
    "ogham_compiler::typeck",
    "ogham_compiler::lower",
    "ogham_compiler::loader",
    "ogham_compiler::stdlib",
    "ogham_compiler::pipeline",
    "ogham_compiler::opt",
    "ogham_compiler::flatten",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the runtime's sources are readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of `text` without its comments (`//` to the end of the line).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The runtime's source files outside those `exempt` accepts (paths relative to `src/`) whose
/// code names one of `forbidden`, one line per name; and how many files there are.
fn violations(exempt: impl Fn(&Path) -> bool, forbidden: &[&str]) -> (usize, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        if exempt(relative) {
            continue;
        }
        let text = code(&std::fs::read_to_string(file).expect("a readable source file"));
        for name in forbidden {
            if text.contains(name) {
                found.push(format!("{} uses {name}", relative.display()));
            }
        }
    }
    (files.len(), found)
}

#[test]
fn only_the_interpreter_depends_on_the_front_end() {
    // The interpreter, and the crate root that declares it.
    let (files, violations) = violations(
        |relative| relative.starts_with("interp") || relative == Path::new("lib.rs"),
        FORBIDDEN,
    );
    assert!(files > 20, "the sources were found: {files}");
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// Where the compiler's backends and Cranelift may be named: the interpreter, the CUDA executor,
/// and the CPU executor's code generation (the `jit` feature; `cpu/mod.rs` and `cpu/helpers.rs`
/// only in items of that feature).
const COMPILER_USERS: &[&str] = &[
    "interp",
    "cuda",
    "cpu/jit.rs",
    "cpu/native.rs",
    "cpu/aot.rs",
    "cpu/mod.rs",
    "cpu/helpers.rs",
];

#[test]
fn the_base_layer_and_the_ir_evaluator_need_only_the_ir() {
    let (_, violations) = violations(
        |relative| COMPILER_USERS.iter().any(|u| relative.starts_with(u)),
        &["ogham_compiler", "cranelift"],
    );
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// The crates a package depends on (normal dependencies) with `args`, by `cargo tree`.
fn dependencies(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn without_default_features_neither_the_compiler_nor_cranelift_is_linked() {
    for package in ["ogham-runtime", "ogham-capi"] {
        let tree = dependencies(&["-p", package, "--no-default-features"]);
        assert!(tree.contains("ogham-ir"), "{tree}");
        for forbidden in ["ogham-compiler", "cranelift", "lalrpop", "logos"] {
            assert!(
                !tree.contains(forbidden),
                "{package} needs {forbidden}:\n{tree}"
            );
        }
    }
    // The check sees them where they are.
    let tree = dependencies(&["-p", "ogham-capi"]);
    assert!(
        tree.contains("cranelift-jit") && tree.contains("ogham-compiler"),
        "{tree}"
    );
}

#[test]
fn the_check_sees_a_violation() {
    assert!(code("use crate::interp::value::Val;").contains(FORBIDDEN[0]));
    assert!(!code("/// like `crate::interp::value`").contains(FORBIDDEN[0]));
}
