//! The CUDA backend without a GPU: the translation units the runtime compiles
//! (`CudaProgram::units`: the prelude with the data kernels, and the prelude with each generated
//! kernel) compile with NVRTC: every generated CUDA program's of the corpus (`tests/cases`) for
//! `sm_80` (the oldest architecture the project models), and every entry point's of
//! `programs/` for `sm_90` (the H100 and H200 the project measures on), with ptxas's register /
//! shared-memory report per kernel printed (`cargo test --test cuda -- --nocapture`). A unit
//! generated twice (the data kernels', a corpus case that runs a bundled program's entry) is
//! compiled once. The generated C is the same for every architecture, so each unit compiles for
//! one of them: NVRTC takes most of the test's time.
//!
//! (The generated code's behaviour is tested by the corpus and the property tests on the
//! `cuda-emu` backend, which compiles it for the host.)
//!
//! NVRTC is loaded at run time (`libnvrtc.so.12` on `LD_LIBRARY_PATH`; `.ci/run` installs the
//! `nvidia-cuda-nvrtc-cu12` wheel). Without it the test reports itself skipped — except under
//! CI (`CI` set), where a missing NVRTC is a failure.

use ogham::Frontend;
use ogham::testing::{TestFile, collect_og_files};
use ogham_compiler::back::cuda::{generate, generate_entry};
use ogham_compiler::pipeline::Options;
use ogham_ir::artifact::cuda::{Counting, Unit as CudaUnit};
use ogham_runtime::cuda::nvrtc;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The architecture of the corpus's programs.
const CORPUS_ARCH: &str = "sm_80";
/// The architecture of the bundled programs' entry points.
const BUNDLED_ARCH: &str = "sm_90";

/// A translation unit: its program's path (and entry point, for a bundled program's), CUDA
/// source, and its kernels.
struct Unit {
    path: PathBuf,
    entry: Option<String>,
    source: String,
    kernels: Vec<String>,
}

impl Unit {
    /// Whether it is a bundled program's entry point: compiled for [`BUNDLED_ARCH`], with
    /// ptxas's report printed.
    fn bundled(&self) -> bool {
        self.entry.is_some()
    }

    fn arch(&self) -> &'static str {
        if self.bundled() {
            BUNDLED_ARCH
        } else {
            CORPUS_ARCH
        }
    }

    fn label(&self) -> String {
        let kernels = self.kernels.join(" ");
        match &self.entry {
            Some(e) => format!("{} ({e}: {kernels})", self.path.display()),
            None => format!("{} ({kernels})", self.path.display()),
        }
    }
}

/// The translation units to compile, and the kernels the backend did not generate.
fn units(root: &Path) -> (Vec<Unit>, Vec<String>) {
    let mut files = Vec::new();
    for dir in ["tests/cases", "programs"] {
        collect_og_files(&root.join(dir), &mut files)
            .unwrap_or_else(|e| panic!("cannot list the programs: {e}"));
    }
    let mut out: Vec<Unit> = Vec::new();
    let mut not_generated = Vec::new();
    // Units seen: the bundled programs' first, so that a corpus case's unit with the same source
    // is dropped.
    let mut seen: HashSet<String> = HashSet::new();
    let mut add = |out: &mut Vec<Unit>, path: &Path, entry: Option<String>, unit: CudaUnit| {
        if seen.insert(unit.source.clone()) {
            out.push(Unit {
                path: path.to_path_buf(),
                entry,
                source: unit.source,
                kernels: unit.kernels,
            });
        }
    };
    files.sort_by_key(|p| !p.starts_with(root.join("programs")));
    for path in files {
        // Known bugs (`tags { disable }`, each explained in its file) are not compiled either.
        if TestFile::read(&path, String::new()).is_ok_and(|f| f.is_some_and(|f| f.spec.disabled()))
        {
            continue;
        }
        // Cases of compile errors have nothing to generate.
        let Ok(fe) = Frontend::load(&path) else {
            continue;
        };
        let Ok(ir) = fe.compile_kernel(Options::KERNEL) else {
            continue;
        };
        let program = generate(&ir);
        if program.segs.is_empty() {
            continue;
        }
        let path = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        not_generated.extend(program.segs.iter().filter_map(|s| {
            let reason = s.kernel.as_ref().err()?;
            Some(format!("{}: {}: {reason}", path.display(), s.name))
        }));
        if !path.starts_with("programs") {
            for unit in program.units() {
                add(&mut out, &path, None, unit);
            }
            continue;
        }
        let mut functions: Vec<usize> = program.segs.iter().map(|s| s.function).collect();
        functions.sort_unstable();
        functions.dedup();
        for f in functions {
            for unit in generate_entry(&ir, f, Counting::Plain).units() {
                add(&mut out, &path, Some(ir.functions[f].name.clone()), unit);
            }
        }
    }
    (out, not_generated)
}

/// One line per kernel from ptxas's report: registers, barriers, shared memory, stack, spills.
fn report(log: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut entry, mut props_for, mut frame) = (String::new(), String::new(), String::new());
    for line in log.lines() {
        let quoted = |marker: &str| {
            line.split(marker)
                .nth(1)
                .map(|rest| rest.split('\'').next().unwrap_or_default().to_string())
        };
        if let Some(name) = quoted("Compiling entry function '") {
            entry = name;
        } else if let Some(name) = quoted("Function properties for ") {
            props_for = name;
        } else if line.contains("bytes stack frame") && props_for == entry {
            frame = line
                .trim_start_matches("ptxas")
                .trim_start_matches([' ', '.'])
                .to_string();
        } else if let Some(used) = line.split("Used ").nth(1) {
            out.push(format!("{entry}: {used}; {frame}"));
        }
    }
    out
}

/// CI runs the corpus and the property tests on the CUDA emulator (`cuda-emu`): it must not
/// be skipped there for want of `g++`.
#[test]
fn the_emulator_is_available_under_ci() {
    if std::env::var_os("CI").is_some() {
        assert_eq!(ogham::Backend::CudaEmu.unavailable(), None);
    }
}

#[test]
fn every_generated_kernel_compiles_with_nvrtc() {
    if !nvrtc::available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "NVRTC (libnvrtc.so.12) is not on LD_LIBRARY_PATH: .ci/run installs it"
        );
        eprintln!("skipped: NVRTC is not available (see .ci/run for how CI installs it)");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace");
    let (units, not_generated) = units(root);
    let kernels: usize = units.iter().map(|u| u.kernels.len()).sum();
    // The largest units first, so that the workers finish together.
    let mut jobs: Vec<usize> = (0..units.len()).collect();
    jobs.sort_by_key(|&u| std::cmp::Reverse(units[u].source.len()));
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    let reports = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let job = {
                        let mut n = next.lock().expect("no panics while locked");
                        *n += 1;
                        jobs.get(*n - 1).copied()
                    };
                    let Some(u) = job else { break };
                    let unit = &units[u];
                    let (bundled, arch) = (unit.bundled(), unit.arch());
                    match nvrtc::compile(&unit.source, arch, None) {
                        Err(log) => failures.lock().expect("unpoisoned").push(format!(
                            "{} ({arch}):\n{}",
                            unit.label(),
                            log.lines().take(40).collect::<Vec<_>>().join("\n")
                        )),
                        Ok(compiled) if bundled => reports.lock().expect("unpoisoned").push((
                            unit.label(),
                            arch,
                            report(&compiled.log),
                        )),
                        Ok(_) => {}
                    }
                }
            });
        }
    });
    let mut reports = reports.into_inner().expect("unpoisoned");
    reports.sort();
    for (label, arch, lines) in &reports {
        println!("== {label} ({arch})");
        for l in lines {
            println!("   {l}");
        }
    }
    println!(
        "NVRTC {:?}: {} translation units, {kernels} kernels; {} kernels not generated",
        nvrtc::version(),
        units.len(),
        not_generated.len()
    );
    for k in &not_generated {
        println!("   not generated: {k}");
    }
    let failures = failures.into_inner().expect("unpoisoned");
    assert!(
        failures.is_empty(),
        "{} compilations failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(units.len() > 100, "the corpus has programs with kernels");
    // The one kernel left to the host on purpose: more argument slots than CUDA's 4 KiB of
    // kernel parameters hold.
    let too_many = "tests/cases/cuda/many_arguments.og: main_k0: 505 argument slots";
    let (left_out, others): (Vec<_>, Vec<_>) =
        not_generated.iter().partition(|k| k.starts_with(too_many));
    assert_eq!(left_out.len(), 1, "{too_many}: {not_generated:?}");
    assert!(
        others.is_empty(),
        "every other kernel of the corpus is generated: {others:?}"
    );
}
