//! The CUDA backend without a GPU: every generated CUDA program of the corpus (`tests/cases`)
//! compiles with NVRTC for `sm_80`, and those of `programs/` for `sm_80` and `sm_90`, whose
//! register / shared-memory report per kernel is printed (`cargo test --test cuda --
//! --nocapture`). A source generated twice (a corpus case that runs a bundled program's entry)
//! is compiled once. The generated C is the same for both architectures, so the corpus compiles
//! for one of them: NVRTC takes most of the test's time (about 15 CPU-minutes for both).
//!
//! (The generated code's behaviour is tested by the corpus and the property tests on the
//! `cuda-emu` backend, which compiles it for the host.)
//!
//! NVRTC is loaded at run time (`libnvrtc.so.12` on `LD_LIBRARY_PATH`; `.ci/run` installs the
//! `nvidia-cuda-nvrtc-cu12` wheel). Without it the test reports itself skipped — except under
//! CI (`CI` set), where a missing NVRTC is a failure.

use ogham::Frontend;
use ogham::testing::{TestFile, collect_og_files};
use ogham_compiler::back::cuda::generate;
use ogham_compiler::pipeline::Options;
use ogham_runtime::cuda::nvrtc;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The architectures of the bundled programs; the corpus compiles for the first.
const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// A program with kernels: its path, CUDA source, and how many kernels were not generated.
struct Unit {
    path: PathBuf,
    source: String,
    kernels: usize,
    not_generated: Vec<String>,
}

impl Unit {
    /// Whether it is a bundled program (`programs/`): compiled for every architecture, with
    /// ptxas's report printed.
    fn bundled(&self) -> bool {
        self.path.starts_with("programs")
    }
}

fn units(root: &Path) -> Vec<Unit> {
    let mut files = Vec::new();
    for dir in ["tests/cases", "programs"] {
        collect_og_files(&root.join(dir), &mut files)
            .unwrap_or_else(|e| panic!("cannot list the programs: {e}"));
    }
    let mut out: Vec<Unit> = Vec::new();
    // The bundled programs first, so that a corpus case generating the same source is dropped.
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
        let source = program.source();
        if program.segs.is_empty() || out.iter().any(|u| u.source == source) {
            continue;
        }
        let not_generated = program
            .segs
            .iter()
            .filter_map(|s| {
                s.kernel
                    .as_ref()
                    .err()
                    .map(|e| format!("{}: {}", s.name, e.0))
            })
            .collect();
        out.push(Unit {
            path: path.strip_prefix(root).unwrap_or(&path).to_path_buf(),
            source,
            kernels: program.segs.len(),
            not_generated,
        });
    }
    out
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
    let units = units(root);
    let kernels: usize = units.iter().map(|u| u.kernels).sum();
    let not_generated: Vec<String> = units
        .iter()
        .flat_map(|u| {
            u.not_generated
                .iter()
                .map(move |k| format!("{}: {k}", u.path.display()))
        })
        .collect();
    let jobs: Vec<(usize, &str)> = units
        .iter()
        .enumerate()
        .flat_map(|(i, u)| {
            let archs = if u.bundled() { &ARCHS[..] } else { &ARCHS[..1] };
            archs.iter().map(move |a| (i, *a))
        })
        .collect();
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
                    let Some((u, arch)) = job else { break };
                    let unit = &units[u];
                    let bundled = unit.bundled();
                    match nvrtc::compile(&unit.source, arch, bundled) {
                        Err(log) => failures.lock().expect("unpoisoned").push(format!(
                            "{} ({arch}):\n{}",
                            unit.path.display(),
                            log.lines().take(40).collect::<Vec<_>>().join("\n")
                        )),
                        Ok(compiled) if bundled => reports.lock().expect("unpoisoned").push((
                            unit.path.clone(),
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
    reports.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for (path, arch, lines) in &reports {
        println!("== {} ({arch})", path.display());
        for l in lines {
            println!("   {l}");
        }
    }
    println!(
        "NVRTC {:?}: {} programs, {kernels} kernels, {} compilations; {} kernels not generated",
        nvrtc::version(),
        units.len(),
        jobs.len(),
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
    assert!(
        not_generated.is_empty(),
        "every kernel of the corpus is generated"
    );
}
