//! File-level reliability (issue "no crash, no silent wrong answer, no partial file"): outputs
//! are all written or none (a failing second output, a full device, a file size limit, an object
//! whose header cannot be written), concurrent `ogham build`s never show a reader a partial
//! library, and the memory limit `OGHAM_MEMORY_LIMIT` turns a large allocation into R0709.

use super::*;

/// The names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const TWO_OUTPUTS: &str = "entry main (n: i64) : ([]i64, []f32) = (iota n, replicate n 1f32)\n";

#[test]
fn a_failing_second_output_writes_no_output() {
    let dir = scratch("atomic_second_output");
    let program = write(&dir, "two.og", TWO_OUTPUTS);
    let outs = dir.join("outs");
    std::fs::create_dir_all(outs.join("out1.npy")).unwrap();
    let out = ogham(&[
        "run",
        program.to_str().unwrap(),
        "-o",
        outs.to_str().unwrap(),
        "3i64",
    ]);
    assert_user_error(&out, "out1.npy");
    assert_eq!(entries(&outs), ["out1.npy"], "no out0.npy, no temporaries");

    std::fs::remove_dir(outs.join("out1.npy")).unwrap();
    let out = ogham(&[
        "run",
        program.to_str().unwrap(),
        "-o",
        outs.to_str().unwrap(),
        "3i64",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(entries(&outs), ["out0.npy", "out1.npy"]);
}

#[test]
fn a_full_device_is_an_error() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = scratch("atomic_dev_full");
    let program = write(&dir, "two.og", TWO_OUTPUTS);
    let out = ogham(&["build", program.to_str().unwrap(), "-o", "/dev/full"]);
    assert_user_error(&out, "cannot write /dev/full");
    let out = ogham(&[
        "autotune",
        program.to_str().unwrap(),
        "-o",
        "/dev/full",
        "3i64",
    ]);
    assert_user_error(&out, "cannot write /dev/full");
}

#[test]
fn a_file_size_limit_leaves_no_truncated_output() {
    let dir = scratch("atomic_size_limit");
    let program = write(&dir, "two.og", TWO_OUTPUTS);
    let outs = dir.join("outs");
    std::fs::create_dir_all(&outs).unwrap();
    // `ulimit -f 64`: files of at most 64 KiB; the outputs take 800 and 400 KB.
    let script = format!(
        "ulimit -f 64; exec {} run {} -o {} 100000i64",
        env!("CARGO_BIN_EXE_ogham"),
        program.display(),
        outs.display()
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    // An error naming the file (`EFBIG`), not death by `SIGXFSZ`, and nothing left behind.
    assert_user_error(&out, "File too large");
    assert!(stderr(&out).contains("out0.npy"), "{}", stderr(&out));
    assert!(entries(&outs).is_empty(), "{:?}", entries(&outs));
}

#[test]
fn an_object_whose_header_cannot_be_written_is_not_written() {
    let dir = scratch("atomic_object");
    let program = write(&dir, "two.og", TWO_OUTPUTS);
    std::fs::create_dir(dir.join("lib.h")).unwrap();
    let object = dir.join("lib.o");
    let out = ogham(&[
        "build",
        program.to_str().unwrap(),
        "-o",
        object.to_str().unwrap(),
    ]);
    assert_user_error(&out, "lib.h");
    assert!(!object.exists());
    assert_eq!(entries(&dir), ["lib.h", "two.og"]);
}

#[test]
fn concurrent_builds_never_show_a_partial_library() {
    let dir = scratch("atomic_concurrent");
    let program = write(&dir, "two.og", TWO_OUTPUTS);
    let lib = dir.join("two.ogl");
    let build = || {
        Command::new(env!("CARGO_BIN_EXE_ogham"))
            .args(["build", program.to_str().unwrap()])
            .output()
            .unwrap()
    };
    assert_eq!(code(&build()), 0);
    std::thread::scope(|s| {
        let builders: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..3 {
                        let out = build();
                        assert_eq!(code(&out), 0, "{}", stderr(&out));
                    }
                })
            })
            .collect();
        for _ in 0..8 {
            let out = ogham(&["run", lib.to_str().unwrap(), "2i64"]);
            assert_eq!(
                code(&out),
                0,
                "a reader saw a bad library: {}",
                stderr(&out)
            );
            assert_eq!(stdout(&out), "[0i64, 1i64]\n[1.0f32, 1.0f32]\n");
        }
        for b in builders {
            b.join().unwrap();
        }
    });
    assert_eq!(entries(&dir), ["two.og", "two.ogl"], "no temporaries left");
}

/// Runs `ogham ARGS` with the memory limit `OGHAM_MEMORY_LIMIT=limit`.
fn ogham_with_memory_limit(limit: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ogham"))
        .env("OGHAM_MEMORY_LIMIT", limit)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_memory_limit_makes_large_arrays_r0709() {
    let dir = scratch("memory_limit");
    let program = write(
        &dir,
        "big.og",
        "entry main (n: i64) : i64 = let xs = iota n in xs[n - 1] + length xs\n",
    );
    for backend in ["interp", "kir", "cpu"] {
        let run = |n: &str| {
            let args = ["run", "--backend", backend, program.to_str().unwrap(), n];
            ogham_with_memory_limit("1M", &args)
        };
        let out = run("1000000i64");
        assert_user_error(&out, "error[R0709]");
        assert!(stderr(&out).contains("big.og:1:"), "{}", stderr(&out));
        let out = run("1000i64");
        assert_eq!(code(&out), 0, "{backend}: {}", stderr(&out));
        assert_eq!(stdout(&out), "1999i64\n");
    }
    let out = ogham_with_memory_limit("lots", &["run", program.to_str().unwrap(), "3i64"]);
    assert_user_error(&out, "OGHAM_MEMORY_LIMIT=lots");
}

/// An array made inside a kernel whose size in bytes overflows 64 bits (`[2^32][2^32]i64`,
/// rows of an empty `[2^32][0]` array): out of memory (R0709) at the `map` that makes it on every
/// backend. The CUDA backend's generated code once multiplied the extents as they were, wrapped
/// around to 0 bytes, took them from the arena and failed later elsewhere.
#[test]
fn kernel_arrays_whose_bytes_overflow_are_out_of_memory() {
    let dir = scratch("kernel_bytes_overflow");
    let program = write(
        &dir,
        "wide.og",
        "entry main (n: i64) (m: i64) (ys: []i64) (xs: []i64) : []i64 =\n  \
         map (\\x -> let a = map (\\r -> map (+x) (iota (m + x))) (unflatten n 0 ys) \
         in a[n-1, m-1]) xs\n",
    );
    let mut backends = vec!["interp", "kir", "cpu"];
    if Command::new("g++").arg("--version").output().is_ok() {
        backends.push("cuda-emu");
    }
    for backend in backends {
        let args = [
            "run",
            "--backend",
            backend,
            program.to_str().unwrap(),
            "4294967296i64",
            "4294967296i64",
            "empty([0]i64)",
            "[0i64]",
        ];
        let out = ogham_with_memory_limit("1G", &args);
        assert_user_error(&out, "error[R0709]");
        assert!(
            stderr(&out).contains("wide.og:2:22"),
            "{backend}: {}",
            stderr(&out)
        );
    }
}

/// A reduction whose operator has a neutral element but is not associative (W0720).
const NOT_ASSOCIATIVE: &str =
    "reduce (\\a b -> if a == 0 then b else if b == 0 then a else a - b) 0 xs\n";

/// An EWMA written with an associative operator: `--check-laws` has nothing to warn about.
fn ewma_associative() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/reliability/ewma_associative.og")
}

#[test]
fn check_laws_warns_about_operators_that_break_them() {
    let dir = scratch("check_laws");
    let run = |name: &str, source: &str| {
        let program = write(&dir, name, source);
        ogham(&[
            "run",
            "--check-laws",
            program.to_str().unwrap(),
            "[5f32, 3f32, 1f32, 2f32]",
        ])
    };
    // The natural EWMA: 0 is not neutral for its operator.
    let out = run(
        "ewma.og",
        "entry main (xs: []f32) : []f32 = scan (\\y x -> 0.5 * x + 0.5 * y) 0 xs\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("warning[W0721]"), "{}", stderr(&out));
    assert!(stderr(&out).contains("ewma.og:1:"), "{}", stderr(&out));
    // A neutral element, but not associative.
    let out = run(
        "minus.og",
        &format!("entry main (xs: []f32) : f32 = {NOT_ASSOCIATIVE}"),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("warning[W0720]"), "{}", stderr(&out));
    // Lawful operators (float `+` up to rounding, the tutorial's affine steps): no warning.
    let out = run(
        "sum.og",
        "entry main (xs: []f32) : ([]f32, f32) = (scan (+) 0 xs, reduce f32.max (-f32.inf) xs)\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let ewma = ewma_associative();
    let out = ogham(&[
        "run",
        "--check-laws",
        ewma.to_str().unwrap(),
        "0.3f32",
        "1f32",
        "[5f32, 3f32, 1f32, 2f32]",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let program = write(
        &dir,
        "p.og",
        "entry main (xs: []f32) : f32 = reduce (+) 0 xs\n",
    );
    let out = ogham(&[
        "run",
        "--check-laws",
        "--backend",
        "cpu",
        program.to_str().unwrap(),
        "[1f32]",
    ]);
    assert_user_error(&out, "--check-laws runs on the interpreter");
}

#[test]
fn test_check_laws_fails_cases_whose_operators_break_them() {
    let dir = scratch("test_check_laws");
    let minus = write(
        &dir,
        "minus.og",
        &format!(
            "-- ==\n-- input {{ [5f32, 3f32, 1f32, 2f32] }}\n-- output {{ -1f32 }}\n\
             entry main (xs: []f32) : f32 =\n  {NOT_ASSOCIATIVE}"
        ),
    );
    // Without the checks the case passes on the interpreter (it folds from the left).
    let out = ogham(&["test", minus.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = ogham(&["test", "--check-laws", minus.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let report = stdout(&out);
    assert!(report.contains("FAIL interp::"), "{report}");
    assert!(report.contains("warning[W0720]"), "{report}");
    assert!(report.contains("minus.og:5:3"), "{report}");
    assert!(report.contains("0 passed, 1 failed"), "{report}");
    // Lawful operators pass, and so do the other kinds of trial.
    let ewma = ewma_associative();
    let out = ogham(&["test", "--check-laws", ewma.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(!stdout(&out).contains("warning"), "{}", stdout(&out));
    let out = ogham(&[
        "test",
        "--check-laws",
        "--backend",
        "cpu",
        minus.to_str().unwrap(),
    ]);
    assert_user_error(&out, "--check-laws runs on the interpreter");
}

/// A `.npy` file of `f32`s whose header declares `shape` (and no data: one size is 0).
fn empty_npy(dir: &Path, name: &str, shape: &str) -> PathBuf {
    let mut header =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}").into_bytes();
    while (header.len() + 11) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header);
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn absurd_shapes_of_empty_arrays_are_located_errors() {
    let dir = scratch("absurd_shapes");
    let rows = write(
        &dir,
        "rows.og",
        "entry main (a: [][]f32) : []f32 = map (\\r -> reduce (+) 0 r) a\n",
    );
    let wide = empty_npy(&dir, "wide.npy", "(0, 1000000000000000000)");
    let tall = empty_npy(&dir, "tall.npy", "(1000000000000000000, 0)");
    let bfast = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/bfast.og");
    for backend in ["interp", "kir", "cpu"] {
        let run = |args: &[&str]| {
            let mut all = vec!["run", "--backend", backend];
            all.extend(args);
            ogham(&all)
        };
        let out = run(&[rows.to_str().unwrap(), tall.to_str().unwrap()]);
        assert_user_error(&out, "error[R0709]");
        let out = run(&[rows.to_str().unwrap(), wide.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{backend}: {}", stderr(&out));
        // BFAST on a stack of 0 pixels of 10^18 dates: the first error in evaluation order,
        // `regular_years`' `iota N` (R0706), on every backend. (The compiled backends used to
        // trust the extents of a parameter as valid sizes and removed that `iota` once fused,
        // then failed later, at the design matrix over the dates: R0709.)
        let out = run(&[
            bfast.to_str().unwrap(),
            wide.to_str().unwrap(),
            "100i64",
            "23f64",
            "2000f64",
            "3i64",
            "true",
            "0.25f64",
            "0i64",
            "0.05f64",
            "1f64",
        ]);
        assert_user_error(
            &out,
            "error[R0706]: iota: size 1000000000000000000 is too large",
        );
        assert!(stderr(&out).contains("bfast.og:93:"), "{}", stderr(&out));
    }
}
