//! Runs the `tests/cases` corpus: every `-- ==` test block, on every backend, plus the
//! snapshots of rendered diagnostics.
//!
//! Trials (filter them like any `cargo test` names):
//! - `check::<case>`: the program loads, or fails to load as its compile-time `error:` expects
//!   (only for files with such an `error:` or without cases);
//! - `<backend>::<case>[:<entry>]#<i>`: case `i` on `interp`, `core`, `kir`, `cpu`, `cuda`,
//!   `cuda-emu`; a backend that cannot run here (`cuda` without a GPU) is reported as ignored,
//!   never as passed;
//! - `snapshot-<stage>::<case>`: insta snapshot of the rendered diagnostics (`diag`), the
//!   optimised core IR (`core`), the kernel IR (`kir`), the kernels' Cranelift IR (`clif`) or
//!   their CUDA C (`cuda`), in `tests/snapshots/<case>.<stage>.snap`;
//! - `structure-<stage>::<case>#<i>`: construct counts of the core IR or kernel IR;
//! - `filecheck-<stage>::<case>#<i>`: the `check:`-style lines of a `filecheck <stage>`
//!   directive against the stage's text (`ogham::testing::filecheck`);
//! - `spec::<case>`: fails when the test block itself is malformed.
//!
//! With `CI=true` insta writes nothing and fails on a missing or different snapshot; locally,
//! review new snapshots with `cargo insta review` or accept them with `INSTA_UPDATE=always`.

use libtest_mimic::{Arguments, Failed, Trial};
use ogham::Backend;
use ogham::testing::{Outcome, Stage, TestFile, TrialKind, collect_og_files};
use ogham_tests::{case_name, cases_dir, snapshot_name, workspace_root};
use std::sync::Arc;

/// Every backend a case runs on, available or not.
const BACKENDS: [&str; 6] = ["interp", "core", "kir", "cpu", "cuda", "cuda-emu"];

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    if let Err(e) = std::env::set_current_dir(workspace_root()) {
        eprintln!(
            "cannot enter the workspace root {}: {e}",
            workspace_root().display()
        );
        std::process::exit(101);
    }
    let mut paths = Vec::new();
    if let Err(e) = collect_og_files(&cases_dir(), &mut paths) {
        trials.push(Trial::test("corpus", move || Err(e.into())));
    }
    for path in paths {
        let name = case_name(&path);
        let file = match TestFile::read(&path, name.clone()) {
            Ok(Some(file)) => Arc::new(file),
            Ok(None) => continue,
            Err(e) => {
                trials.push(Trial::test(format!("spec::{name}"), move || {
                    Err(format!("{name}: {e}").into())
                }));
                continue;
            }
        };
        for trial in file.trials(&BACKENDS) {
            let ignored = file.spec.disabled()
                || match &trial.kind {
                    TrialKind::Case { backend, .. } => {
                        Backend::from_name(backend).is_none_or(|b| b.unavailable().is_some())
                    }
                    TrialKind::Snapshot(stage) => !matches!(
                        stage,
                        Stage::Diag | Stage::Core | Stage::Kir | Stage::Clif | Stage::Cuda
                    ),
                    TrialKind::Structure(stage) => !matches!(stage, Stage::Core | Stage::Kir),
                    TrialKind::Check | TrialKind::FileCheck(_) => false,
                };
            let file = Arc::clone(&file);
            let name = trial.name.clone();
            trials.push(Trial::test(name, move || run(&file, &trial)).with_ignored_flag(ignored));
        }
    }
    libtest_mimic::run(&args, trials).exit()
}

fn run(file: &TestFile, trial: &ogham::testing::Trial) -> Result<(), Failed> {
    let loaded = file.load();
    match file.run(trial, &loaded) {
        Outcome::Passed => Ok(()),
        Outcome::Failed(why) => Err(why.into()),
        // Only reached with `--include-ignored`: a skipped trial must not pass.
        Outcome::Skipped(why) => Err(format!("skipped: {why}").into()),
        Outcome::Snapshot(text) => {
            let stage = match trial.kind {
                TrialKind::Snapshot(stage) => stage.name(),
                _ => "output",
            };
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path("snapshots");
            settings.set_prepend_module_to_snapshot(false);
            settings.set_input_file(&file.path);
            settings.set_omit_expression(true);
            let text = portable(&text);
            settings.bind(|| insta::assert_snapshot!(snapshot_name(&file.name, stage), text));
            Ok(())
        }
    }
}

/// `text` with absolute paths into the workspace made relative to it, so snapshots do not
/// depend on where the repository is checked out.
fn portable(text: &str) -> String {
    let root = workspace_root();
    let mut text = text.to_string();
    for root in [std::fs::canonicalize(&root).unwrap_or(root.clone()), root] {
        text = text.replace(&format!("{}/", root.display()), "");
    }
    text
}
