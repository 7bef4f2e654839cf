//! `ogham fmt`: formats `.og` files in place ([`ogham_compiler::syntax::format`]), or with
//! `--check` lists the files that are not formatted; `-` formats standard input to standard
//! output.
//!
//! Invariants: a file is written only when its formatted text differs, and never when it does
//! not parse (its diagnostics are reported, as `ogham check` reports them) or when it has a
//! `-- ogham-fmt: off` line (it is skipped). Exit status 1 when a file does not parse or, with
//! `--check`, when a file would change.

use crate::{Failure, out};
use ogham::testing::collect_og_files;
use ogham_compiler::syntax::format::{format_source, formatting_off};
use ogham_ir::diag::emit_to_stderr;
use ogham_ir::source::SourceMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What formatting one text gave.
enum Outcome {
    Unchanged,
    Changed(String),
    Skipped,
    Broken,
}

fn format_text(name: &str, path: Option<&Path>, text: &str) -> Outcome {
    if formatting_off(text) {
        return Outcome::Skipped;
    }
    let mut sources = SourceMap::new();
    let file = sources.add(name, path.map(Path::to_path_buf), text);
    match format_source(file, text) {
        Ok(formatted) if formatted == text => Outcome::Unchanged,
        Ok(formatted) => Outcome::Changed(formatted),
        Err(diagnostics) => {
            emit_to_stderr(&sources, &diagnostics);
            Outcome::Broken
        }
    }
}

/// `ogham fmt [--check] PATH...`.
pub(crate) fn fmt(paths: &[PathBuf], check: bool) -> Result<(), Failure> {
    if paths.iter().any(|p| p.as_os_str() == "-") {
        return fmt_stdin(paths.len());
    }
    let mut files = Vec::new();
    for path in paths {
        collect_og_files(path, &mut files)?;
    }
    let (mut changed, mut broken) = (0, 0);
    for path in &files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Message(format!("cannot read {name}: {e}")))?;
        match format_text(&name, Some(path), &text) {
            Outcome::Unchanged | Outcome::Skipped => {}
            Outcome::Broken => broken += 1,
            Outcome::Changed(_) if check => {
                outln!("would reformat {name}");
                changed += 1;
            }
            Outcome::Changed(formatted) => {
                let mut staged = ogham::atomic::Staged::new();
                staged.write(path, formatted.as_bytes())?;
                staged.commit()?;
                outln!("formatted {name}");
                changed += 1;
            }
        }
    }
    if broken > 0 {
        let plural = if broken == 1 { "" } else { "s" };
        eprintln!("error: {broken} file{plural} could not be formatted (left as they are)");
    }
    if check && changed > 0 {
        let plural = if changed == 1 { "" } else { "s" };
        eprintln!("{changed} file{plural} would be reformatted (run `ogham fmt` on them)");
    }
    if broken > 0 || (check && changed > 0) {
        return Err(Failure::Reported);
    }
    Ok(())
}

/// `ogham fmt -`: standard input to standard output (unchanged if formatting is off).
fn fmt_stdin(count: usize) -> Result<(), Failure> {
    if count != 1 {
        return Err(Failure::Message(
            "`-` (standard input) cannot be given with other paths".to_string(),
        ));
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| Failure::Message(format!("cannot read standard input: {e}")))?;
    match format_text("<stdin>", None, &text) {
        Outcome::Unchanged | Outcome::Skipped => out(&text),
        Outcome::Changed(formatted) => out(&formatted),
        Outcome::Broken => return Err(Failure::Reported),
    }
    Ok(())
}
