//! `ogham test`: runs the test blocks of `.og` files (the given files and directories, by
//! default `tests/cases`) on one backend and reports each trial's outcome.

use crate::cli::run::LAWS_ON_INTERP;
use crate::{Failure, out, take_last_panic};
use ogham::Backend;
use ogham::testing::{Outcome, TestFile, TrialKind, collect_og_files};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;

pub(crate) fn test(
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
