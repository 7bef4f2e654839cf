//! The formatter (`ogham fmt`, `ogham_compiler::syntax::format`) on every `.og` file of the
//! repository and on generated programs: the output parses to the same AST as the input
//! (compared by `syntax::print::module`, which ignores spans and ids), keeps every comment in
//! order, and formats to itself; a file that does not parse gets the parser's diagnostics.
//! `repository_is_formatted` is the check that `lib/`, `programs/` and `tests/cases/` are
//! formatted (files with a `-- ogham-fmt: off` line excepted), run by `scripts/test` and CI.

use ogham_compiler::syntax::format::{format_source, formatting_off};
use ogham_compiler::syntax::{lexer, parse_module, print};
use ogham_ir::source::FileId;
use ogham_tests::differential::Rng;
use ogham_tests::{random_programs, workspace_root};
use std::path::{Path, PathBuf};

/// Every `.og` file under `dir`, skipping build outputs and hidden directories.
fn og_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                og_files(&path, out);
            }
        } else if name.ends_with(".og") {
            out.push(path);
        }
    }
}

/// The comments of `text`, as the formatter writes them (without trailing whitespace).
fn comments(text: &str) -> Vec<String> {
    let lexed = lexer::tokenize(FileId(0), text);
    lexed
        .comments
        .iter()
        .map(|&(s, e)| text[s..e].trim_end().to_string())
        .collect()
}

/// Formats `text` and checks the guarantees; `Ok(None)` for a text that does not parse.
fn check_faithful(text: &str) -> Result<Option<String>, String> {
    let file = FileId(0);
    let decls = match parse_module(file, text, &mut 0) {
        Ok(decls) => decls,
        Err(expected) => {
            let got = format_source(file, text)
                .err()
                .ok_or("formatted a text that does not parse")?;
            let codes =
                |ds: &[ogham_ir::diag::Diagnostic]| ds.iter().map(|d| d.code).collect::<Vec<_>>();
            if codes(&got) != codes(&expected) {
                return Err(format!(
                    "diagnostics {:?}, the parser's {:?}",
                    codes(&got),
                    codes(&expected)
                ));
            }
            return Ok(None);
        }
    };
    let out = format_source(file, text).map_err(|d| format!("not formatted: {d:?}"))?;
    let again = parse_module(file, &out, &mut 0)
        .map_err(|d| format!("output does not parse: {d:?}\n{out}"))?;
    if print::module(&again) != print::module(&decls) {
        return Err(format!("the output means something else:\n{out}"));
    }
    if comments(&out) != comments(text) {
        return Err(format!("the output lost or reordered comments:\n{out}"));
    }
    let twice = format_source(file, &out).map_err(|d| format!("output not formattable: {d:?}"))?;
    if twice != out {
        return Err(format!(
            "not idempotent:\n{out}\n---- formatted again:\n{twice}"
        ));
    }
    Ok(Some(out))
}

#[test]
fn every_og_file_formats_faithfully() {
    let mut files = Vec::new();
    og_files(&workspace_root(), &mut files);
    assert!(files.len() > 400, "found only {} .og files", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        if let Err(e) = check_faithful(&text) {
            failures.push(format!("{}: {e}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn generated_programs_format_faithfully() {
    for seed in 1..=500u64 {
        let source =
            random_programs::program(&mut Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1));
        match check_faithful(&source) {
            Ok(Some(_)) => {}
            Ok(None) => panic!("generated program {seed} does not parse:\n{source}"),
            Err(e) => panic!("generated program {seed}: {e}\n---- source:\n{source}"),
        }
    }
}

#[test]
fn repository_is_formatted() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in ["lib", "programs", "tests/cases"] {
        og_files(&root.join(dir), &mut files);
    }
    let mut unformatted = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        if formatting_off(&text) {
            continue;
        }
        match format_source(FileId(0), &text) {
            Ok(out) if out != text => unformatted.push(path.display().to_string()),
            _ => {}
        }
    }
    assert!(
        unformatted.is_empty(),
        "not formatted (run `ogham fmt lib programs tests/cases`, or mark a file whose layout \
         matters with `-- ogham-fmt: off`):\n{}",
        unformatted.join("\n")
    );
}
