//! Ogham's test harness: where the corpus and its snapshots live.
//!
//! The corpus runner is `tests/corpus.rs` (libtest-mimic, `harness = false`): it discovers
//! `tests/cases/**/*.og`, and runs their `-- ==` test blocks with the engine the `ogham test`
//! command uses ([`ogham::testing`]), one trial per loaded program, case and backend, and one
//! per snapshot. Rendered diagnostics are snapshot-tested with insta in `tests/snapshots/`.

pub mod badfiles;
pub mod differential;
pub mod irtext;
pub mod libmut;
pub mod random_programs;

use std::path::{Path, PathBuf};

/// The workspace root. The corpus runner makes it the current directory, so diagnostics name
/// files as users see them from there (`tests/cases/errors/e.og:3:5`), on every machine.
pub fn workspace_root() -> PathBuf {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    tests.parent().unwrap_or(tests).to_path_buf()
}

/// The root of the test corpus, relative to the workspace root.
pub fn cases_dir() -> PathBuf {
    PathBuf::from("tests/cases")
}

/// The name of a case file in trial names and reports: its path relative to the corpus root,
/// with `/` separators (`arith/add.og`).
pub fn case_name(path: &Path) -> String {
    let relative = path.strip_prefix(cases_dir()).unwrap_or(path);
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// The insta snapshot name of a stage of a case: `arith/add.og`, `diag` -> `arith__add.diag`
/// (stored as `tests/snapshots/arith__add.diag.snap`).
pub fn snapshot_name(case_name: &str, stage: &str) -> String {
    let stem = case_name.strip_suffix(".og").unwrap_or(case_name);
    format!("{}.{stage}", stem.replace('/', "__"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let path = Path::new("tests/cases/arith/add.og");
        assert_eq!(case_name(path), "arith/add.og");
        assert_eq!(snapshot_name("arith/add.og", "diag"), "arith__add.diag");
    }
}
