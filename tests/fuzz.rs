//! The fuzzing harness: random well-typed programs on random inputs (empty arrays, NaN,
//! infinities, negative and huge sizes and indices) run differentially on every backend
//! (`ogham_tests::random_programs` writes them, `ogham_tests::differential` runs them), and damaged `.npy`
//! files and libraries fed to the readers (`ogham_tests::badfiles`), and structurally mutated
//! libraries loaded and run (`ogham_tests::libmut`; `library_campaign` is their long campaign,
//! see `docs/testing.md`). No run may panic, fail with an internal error or disagree with the
//! reference interpreter (a mutated library: with the IR evaluator on the same program).
//!
//! `cargo test -p ogham-tests --test fuzz` runs a bounded number of cases (seconds); the long
//! campaign is
//!
//! ```text
//! OGHAM_FUZZ_SECONDS=3600 cargo test --release -p ogham-tests --test fuzz -- --ignored --nocapture
//! ```
//!
//! which runs programs, inputs and bad files until the time is up (default 600 s; seeds from
//! `OGHAM_FUZZ_START`, default 1) and prints the counts. Each program runs on three draws of
//! inputs, the last with wide arrays; a wide draw on which the CPU backend takes more than
//! `differential::WIDE_BUDGET` is skipped and counted (the interpreters would take minutes to
//! hours: round 1107946 of a campaign ran 30 minutes on one such draw before the budget). A failure names its program's seed;
//! `OGHAM_FUZZ_SEED=S cargo test -p ogham-tests --test fuzz -- --ignored reproduce --nocapture`
//! prints that program and runs it again. `OGHAM_FUZZ_TRACE=1` prints each round's number
//! before the round runs (to find a round that hangs or takes the machine's memory; a round's
//! program seed is its number times `0x9e3779b97f4a7c15`, wrapping). The process's memory limit is 256 MiB (huge sizes fail as R0709 instead of taking
//! the machine's memory); every failure it prints becomes a corpus case under `tests/cases/reliability/`.

use ogham::Frontend;
use ogham::codegen::cpu::CPU;
use ogham_compiler::pipeline::Options;
use ogham_runtime::library::Library;
use ogham_runtime::value::{Array, ArrayData, Value};
use ogham_tests::differential::{Inputs, Rng, Verdict, check_program};
use ogham_tests::random_programs;
use ogham_tests::{badfiles, libmut};
use proptest::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The memory limit of the fuzzing process: extreme sizes (2^32 elements) must fail as out of
/// memory (R0709) rather than take the machine's memory.
const MEMORY_LIMIT: usize = 256 << 20;

fn limit_memory() {
    assert!(
        ogham_runtime::memory::set_limit(MEMORY_LIMIT),
        "the memory limit was fixed before the fuzzing tests set it"
    );
}

/// Input draws per generated program: small arrays, then small arrays with extreme scalars,
/// then wide arrays with extreme scalars.
const INPUTS_PER_PROGRAM: u64 = 3;

const ROW_SUMS: &str = "entry main (a: [][]f32) : []f32 = map (\\r -> reduce (+) 0 r) a\n";

/// Runs program `seed` on its inputs: the runs that agreed on outputs, that failed alike, that
/// failed only on the interpreter, in dead code, that failed with another error only because
/// of fusion, and the wide draws skipped as too much work for the interpreters.
fn fuzz_program(seed: u64, emulate_cuda: bool) -> Result<[u64; 5], String> {
    limit_memory();
    let source = random_programs::program(&mut Rng(seed | 1));
    let draws: Vec<(u64, Inputs)> = (0..INPUTS_PER_PROGRAM)
        .map(|k| {
            let inputs = Inputs {
                extreme: k > 0,
                wide: k == INPUTS_PER_PROGRAM - 1,
            };
            (seed ^ (k << 32), inputs)
        })
        .collect();
    let verdicts = check_program(&source, &draws, emulate_cuda)
        .map_err(|e| format!("program (seed {seed}):\n{source}\n{e}"))?;
    let count = |want: Verdict| verdicts.iter().filter(|v| **v == want).count() as u64;
    Ok([
        count(Verdict::Agreed),
        count(Verdict::FailedAlike),
        count(Verdict::DeadIndex),
        count(Verdict::FusionOrder),
        count(Verdict::TooMuchWork),
    ])
}

fn row_sums() -> Frontend {
    Frontend::load_source("rows.og", ROW_SUMS).unwrap_or_else(|e| panic!("{}", e.render()))
}

/// A valid library of [`ROW_SUMS`], as JSON text.
fn library_json(dir: &std::path::Path) -> String {
    let fe = row_sums();
    let program = fe.compile_kernel(Options::KERNEL).expect("compiles");
    let path = dir.join("valid.ogl");
    Library::new(fe.sources.clone(), program, CPU)
        .save(&path)
        .expect("saves");
    std::fs::read_to_string(&path).expect("reads")
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ogham-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// Loads a damaged library and, if it loads, runs it: `Err` on a panic.
fn check_library(bytes: &[u8], path: &std::path::Path) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| e.to_string())?;
    let arg =
        Value::Array(Array::new(vec![2, 2], ArrayData::F32(vec![1.0; 4].into())).expect("shape"));
    catch_unwind(AssertUnwindSafe(|| {
        if let Ok(lib) = Library::load(path, CPU) {
            let _ = lib.call("main", vec![arg]);
        }
    }))
    .map_err(|_| {
        format!(
            "a damaged library panicked: {}",
            String::from_utf8_lossy(bytes)
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if std::env::var_os("CI").is_some() { 48 } else { 16 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_programs_agree_on_every_backend(seed in any::<u64>()) {
        let result = fuzz_program(seed, false);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }

    #[test]
    fn damaged_npy_files_are_errors_or_values(seed in any::<u64>()) {
        limit_memory();
        let fe = row_sums();
        let mut rng = Rng(seed | 1);
        for _ in 0..8 {
            let bytes = badfiles::npy_bytes(&mut rng);
            let result = badfiles::check_npy(&bytes, &fe);
            prop_assert!(result.is_ok(), "{}", result.unwrap_err());
        }
    }
}

/// Programs the campaign found failing, since fixed (each also a corpus case under
/// `tests/cases/reliability/`), on the inputs that found them: a hang past the memory limit, an
/// internal compiler error, fusion's error order, and the IR evaluator reserving a map's result
/// before running its points.
#[test]
fn programs_the_campaign_found_agree() {
    for seed in [
        7601418824532781118u64,
        4439284057201309090,
        13740408586194079041,
        14479172762606963915,
    ] {
        if let Err(e) = fuzz_program(seed, false) {
            panic!("{e}");
        }
    }
}

/// A few generated programs on the CUDA backend's emulator as well (slow: one `g++` build each).
#[test]
fn random_programs_on_the_cuda_emulator() {
    for seed in [3u64, 17, 101] {
        if let Err(e) = fuzz_program(seed, true) {
            panic!("{e}");
        }
    }
}

#[test]
fn damaged_libraries_are_errors() {
    limit_memory();
    let dir = scratch();
    let valid = library_json(&dir);
    let path = dir.join("damaged.ogl");
    let mut rng = Rng(0x5eed);
    for _ in 0..40 {
        let bytes = badfiles::library_text(&valid, &mut rng);
        if let Err(e) = check_library(&bytes, &path) {
            panic!("{e}");
        }
    }
}

/// Structurally mutated libraries (`ogham_tests::libmut`) are refused at load, or run to the IR
/// evaluator's results or errors: a few of each base program (seconds).
#[test]
fn structurally_mutated_libraries_are_refused_or_safe() {
    limit_memory();
    let (mut refused, mut ran) = (0, 0);
    for k in 0..6 {
        let Some(base) = libmut::base_of_round(k) else {
            continue;
        };
        let mut rng = Rng(k + 1);
        for _ in 0..25 {
            let mutant = libmut::mutate(&base.json, &mut rng).to_string();
            match libmut::check(&mutant, &base.calls) {
                Ok(libmut::Outcome::Refused) => refused += 1,
                Ok(_) => ran += 1,
                Err(e) => panic!("{e}\nmutant: {mutant}"),
            }
        }
    }
    assert!(refused > 0 && ran > 0, "{refused} refused, {ran} ran");
}

/// The library-mutation campaign: `OGHAM_FUZZ_LIBRARIES` (default 10000) structurally mutated
/// libraries, 20 of each base program (`libmut::base_of_round`, from `OGHAM_FUZZ_START`); prints
/// the totals and every failure.
#[test]
#[ignore = "long: run with --ignored (OGHAM_FUZZ_LIBRARIES bounds it)"]
fn library_campaign() {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let total = env("OGHAM_FUZZ_LIBRARIES", 10_000);
    let start = env("OGHAM_FUZZ_START", 1);
    let trace = std::env::var_os("OGHAM_FUZZ_TRACE").is_some();
    limit_memory();
    let (mut mutants, mut bases, mut refused, mut at_call, mut ran) = (0u64, 0u64, 0u64, 0u64, 0);
    let mut failures = Vec::new();
    let mut k = start;
    while mutants < total {
        let round = k;
        k += 1;
        let Some(base) = libmut::base_of_round(round) else {
            continue;
        };
        bases += 1;
        let mut rng = Rng(round | 1);
        for i in 0..20 {
            if trace {
                eprintln!("libraries: round {round} mutant {i}");
            }
            let mutant = libmut::mutate(&base.json, &mut rng).to_string();
            match libmut::check(&mutant, &base.calls) {
                Ok(libmut::Outcome::Refused) => refused += 1,
                Ok(libmut::Outcome::RefusedAtCall) => at_call += 1,
                Ok(libmut::Outcome::Ran) => ran += 1,
                Err(e) => {
                    eprintln!("FAILURE round {round} mutant {i}: {e}");
                    failures.push(e);
                }
            }
            mutants += 1;
        }
    }
    eprintln!(
        "library campaign: rounds {start}..{k}: {bases} base libraries, {mutants} mutants: \
         {refused} refused at load, {at_call} refused at their first call, {ran} ran to the IR \
         evaluator's results or errors; {} failures",
        failures.len()
    );
    assert!(failures.is_empty(), "{} failures", failures.len());
}

/// One program of the campaign again: `OGHAM_FUZZ_SEED=S` (the seed a failure names) prints
/// the program and, when a backend disagrees, the disagreement with its inputs.
#[test]
#[ignore = "run with --ignored and OGHAM_FUZZ_SEED"]
fn reproduce() {
    let Some(seed) = std::env::var("OGHAM_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return;
    };
    eprintln!("{}", random_programs::program(&mut Rng(seed | 1)));
    if let Err(e) = fuzz_program(seed, false) {
        panic!("{e}");
    }
}

/// The long campaign (see the header); prints what it ran and every failure.
#[test]
#[ignore = "long: run with --ignored (OGHAM_FUZZ_SECONDS bounds it)"]
fn campaign() {
    let seconds: u64 = std::env::var("OGHAM_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    limit_memory();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let start: u64 = std::env::var("OGHAM_FUZZ_START")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let fe = row_sums();
    let dir = scratch();
    let valid = library_json(&dir);
    let path = dir.join("damaged.ogl");
    let mut failures = Vec::new();
    let mut programs = 0u64;
    let mut runs = [0u64; 5];
    let (mut npy_files, mut libraries) = (0u64, 0u64);
    let trace = std::env::var_os("OGHAM_FUZZ_TRACE").is_some();
    let mut seed = start;
    while Instant::now() < deadline {
        if trace {
            eprintln!("fuzz: round {seed}");
        }
        // One program (on its inputs), 50 bad `.npy` files and 2 bad libraries per round.
        match fuzz_program(
            seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            seed.is_multiple_of(200),
        ) {
            Ok(counts) => {
                for (total, c) in runs.iter_mut().zip(counts) {
                    *total += c;
                }
            }
            Err(e) => {
                eprintln!("FAILURE {e}");
                failures.push(e);
            }
        }
        programs += 1;
        let mut rng = Rng(seed | 1);
        for _ in 0..50 {
            let bytes = badfiles::npy_bytes(&mut rng);
            if let Err(e) = badfiles::check_npy(&bytes, &fe) {
                eprintln!("FAILURE {e}");
                failures.push(e);
            }
            npy_files += 1;
        }
        for _ in 0..2 {
            let bytes = badfiles::library_text(&valid, &mut rng);
            if let Err(e) = check_library(&bytes, &path) {
                eprintln!("FAILURE {e}");
                failures.push(e);
            }
            libraries += 1;
        }
        seed += 1;
    }
    let [agreed, failed_alike, dead_index, fusion_order, too_much] = runs;
    eprintln!(
        "fuzz campaign: seeds {start}..{seed}: {programs} programs x {INPUTS_PER_PROGRAM} inputs = \
         {} runs ({agreed} agreed on outputs, {failed_alike} failed alike, {dead_index} failed \
         only on the interpreter, in dead code, {fusion_order} failed with another error because \
         of fusion), {too_much} wide draws skipped as too much work for the interpreters; \
         {npy_files} bad .npy files; {libraries} bad libraries; {} failures",
        agreed + failed_alike + dead_index + fusion_order,
        failures.len()
    );
    assert!(failures.is_empty(), "{} failures", failures.len());
}
