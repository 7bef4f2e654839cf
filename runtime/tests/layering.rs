//! The runtime's layering, checked on its sources: only the reference interpreter (`interp/`)
//! may use the AST and the front end. Everything else — the base layer (values, errors, indexing,
//! scalar operations, `.npy`) and the executors of compiled code (`ireval`, `cpu`, `cuda`,
//! `kernel_io`, `memory`, libraries) — depends on the IR and the base layer only.

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

#[test]
fn only_the_interpreter_depends_on_the_front_end() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        // The interpreter, and the crate root that declares it.
        if relative.starts_with("interp") || relative == Path::new("lib.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a readable source file");
        for forbidden in FORBIDDEN {
            if code(&text).contains(forbidden) {
                violations.push(format!("{} uses {forbidden}", relative.display()));
            }
        }
    }
    assert!(files.len() > 20, "the sources were found: {files:?}");
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_check_sees_a_violation() {
    assert!(code("use crate::interp::value::Val;").contains(FORBIDDEN[0]));
    assert!(!code("/// like `crate::interp::value`").contains(FORBIDDEN[0]));
}
