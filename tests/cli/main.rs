//! Integration tests of the `ogham` command-line tool: `check`, `run` (literal, `@file` and
//! `.npy` arguments, `-o`), `build` and running libraries, `test`, and the exit codes (0 ok,
//! 1 user error). `reliability` tests that outputs are atomic and the memory limit; `memory` that
//! a failed allocation is an error; `untrusted` that hand-edited libraries are refused;
//! `cache_trust` that the disk cache trusts nothing it did not make; `npy_blocks` test blocks
//! with `.npy` files; `trace` tests tracing, `run --pixel` and `repl`; `doc` tests `ogham doc`
//! (it builds the standard library's reference); `fmt` tests `ogham fmt`; `editors` checks the
//! editor support in `editors/` against the lexer; `lsp` talks to `ogham lsp` as an editor does.

mod cache_trust;
mod doc;
mod editors;
mod fmt;
mod library;
mod lsp;
mod memory;
mod npy_blocks;
mod outputs;
mod reliability;
mod snapshots;
mod trace;
mod untrusted;

use ogham::runtime::npy;
use ogham::runtime::value::{Array, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `ogham` with the cache of compiled programs in the tests' scratch space.
fn ogham(args: &[&str]) -> Output {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache");
    ogham_cached(args, &cache, &[])
}

/// Runs `ogham ARGS` with `input` on its standard input.
fn ogham_with_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ogham"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `ogham` with the cache of compiled programs in `cache` and the variables `env` set.
fn ogham_cached(args: &[&str], cache: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ogham"))
        .args(args)
        .env("OGHAM_CACHE_DIR", cache)
        .env_remove("OGHAM_CACHE")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// The cache entries in `cache`.
fn cache_entries(cache: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(cache.join("cpu"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

/// Code compiled with SIMD off (`OGHAM_SIMD=0`, for A/B measurements) has a cache entry of its
/// own: a run with the other setting compiles again instead of reusing it.
#[test]
fn simd_off_code_is_cached_apart() {
    let dir = scratch("cache-simd");
    let cache = dir.join("cache");
    let program = write(
        &dir,
        "main.og",
        "entry main (xs: []f32) : []f32 = map (\\x -> x * x) xs\n",
    );
    let run = |simd: &str| {
        let out = ogham_cached(
            &[
                "run",
                "--backend",
                "cpu",
                program.to_str().unwrap(),
                "[1, 2, 3]",
            ],
            &cache,
            &[("OGHAM_SIMD", simd)],
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(stdout(&out), "[1.0f32, 4.0f32, 9.0f32]\n");
        cache_entries(&cache).len()
    };
    assert_eq!(run("1"), 2, "the program and main's code");
    assert_eq!(run("0"), 4, "compiled again with SIMD off");
    assert_eq!(run("0"), 4, "then taken from the cache");
    assert_eq!(run("1"), 4, "and the SIMD code too");
}

/// `ogham run --backend cpu` compiles a program once: a second run takes it from the on-disk
/// cache with the same outputs; a changed import compiles it again; a damaged entry is
/// reported, compiled again and replaced; `--no-cache` and `OGHAM_CACHE=0` leave the cache
/// alone.
#[test]
fn run_caches_compiled_programs() {
    let dir = scratch("cache");
    let cache = dir.join("cache");
    let helper = write(&dir, "helper.og", "def twice (x: f32) : f32 = 2 * x\n");
    let program = write(
        &dir,
        "main.og",
        "import \"helper\"\nentry main (xs: []f32) : ([]f32, f32) = \
         (map twice xs, reduce (+) 0 (map f32.exp xs))\n",
    );
    let program = program.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--backend", "cpu"];
        args.extend(extra);
        args.extend([program, "[1, 2, 3]"]);
        ogham_cached(&args, &cache, &[])
    };
    let first = run(&[]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    assert_eq!(stdout(&first), "[2.0f32, 4.0f32, 6.0f32]\n30.192875f32\n");
    let entries = cache_entries(&cache);
    assert_eq!(entries.len(), 2, "the program and main's code: {entries:?}");
    let modified = |path: &Path| std::fs::metadata(path).unwrap().modified().unwrap();
    let written: Vec<_> = entries.iter().map(|p| modified(p)).collect();
    let second = run(&[]);
    assert_eq!(
        (stdout(&second), stderr(&second)),
        (stdout(&first), String::new())
    );
    let hit: Vec<_> = entries.iter().map(|p| modified(p)).collect();
    assert_eq!(hit, written, "a hit writes nothing");

    std::fs::write(&helper, "def twice (x: f32) : f32 = 3 * x\n").unwrap();
    let changed = run(&[]);
    assert_eq!(stdout(&changed), "[3.0f32, 6.0f32, 9.0f32]\n30.192875f32\n");
    let replaced = cache_entries(&cache);
    assert_eq!(replaced.len(), 2, "the old code is removed: {replaced:?}");
    assert_eq!(replaced[1], entries[1], "the program's file is replaced");
    let entries = replaced;

    for entry in &entries {
        let mut bytes = std::fs::read(entry).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(entry, &bytes).unwrap();
        let repaired = run(&[]);
        assert_eq!(stdout(&repaired), stdout(&changed));
        let warning = format!("warning: the cache entry {} is damaged", entry.display());
        assert!(
            stderr(&repaired).contains(&warning),
            "{}",
            stderr(&repaired)
        );
        let again = run(&[]);
        assert_eq!(
            (stdout(&again), stderr(&again)),
            (stdout(&changed), String::new())
        );
    }

    std::fs::remove_dir_all(&cache).unwrap();
    assert_eq!(stdout(&run(&["--no-cache"])), stdout(&changed));
    let off = ogham_cached(
        &["run", "--backend", "cpu", program, "[1, 2, 3]"],
        &cache,
        &[("OGHAM_CACHE", "0")],
    );
    assert_eq!(stdout(&off), stdout(&changed));
    assert!(cache_entries(&cache).is_empty());
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited normally")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A user error: exit 1, a message, no Rust panic.
fn assert_user_error(out: &Output, expected: &str) {
    let err = stderr(out);
    assert_eq!(code(out), 1, "stderr: {err}");
    assert!(err.contains(expected), "expected `{expected}` in: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("internal compiler error"),
        "{err}"
    );
}

const SUM: &str = "entry main (xs: []f32) : f32 = reduce (+) 0 xs\n\
                   entry scale (k: f32) (xs: [3]f32) : ([3]f32, i64) = (map (*k) xs, length xs)\n";

#[test]
fn check_lists_entry_points() {
    let dir = scratch("check_ok");
    let prog = write(&dir, "sum.og", SUM);
    let out = ogham(&["check", prog.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "ok: 2 entry points\n  entry main (xs: []f32) : f32\n  \
         entry scale (k: f32) (xs: [3]f32) : ([3]f32, i64)\n"
    );
}

#[test]
fn check_reports_diagnostics() {
    let dir = scratch("check_bad");
    let prog = write(&dir, "bad.og", "entry main : i32 = 1 + true\n");
    let out = ogham(&["check", prog.to_str().unwrap()]);
    assert_user_error(&out, "error[E03");
    assert!(stderr(&out).contains("bad.og:1:"), "{}", stderr(&out));
    assert_user_error(&ogham(&["check", "/nonexistent/x.og"]), "cannot read");
}

#[test]
fn run_with_literal_and_file_arguments() {
    let dir = scratch("run_literals");
    let prog = write(&dir, "sum.og", SUM);
    let prog = prog.to_str().unwrap();
    let out = ogham(&["run", prog, "[1, 2, 3.5]"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "6.5f32\n");
    let out = ogham(&["run", "--entry", "scale", prog, "-2", "[1, 2, 3]"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "[-2.0f32, -4.0f32, -6.0f32]\n3i64\n");
    let values = write(&dir, "args.txt", "2f32\n[1f32, 1f32, 1f32]\n");
    let at = format!("@{}", values.display());
    let out = ogham(&["run", "--entry", "scale", prog, &at]);
    assert_eq!(stdout(&out), "[2.0f32, 2.0f32, 2.0f32]\n3i64\n");
}

#[test]
fn run_with_npy_input_and_output() {
    let dir = scratch("run_npy");
    let prog = write(&dir, "sum.og", SUM);
    let input = dir.join("xs.npy");
    let xs = Value::Array(Array::from_f32(vec![3], vec![1.0, 2.0, 3.0]).unwrap());
    npy::write(&input, &xs).unwrap();
    let out_dir = dir.join("out");
    let out = ogham(&[
        "run",
        "--entry",
        "scale",
        "-o",
        out_dir.to_str().unwrap(),
        prog.to_str().unwrap(),
        "10",
        input.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let scaled = npy::read(&out_dir.join("out0.npy")).unwrap();
    assert_eq!(
        scaled,
        Value::Array(Array::from_f32(vec![3], vec![10.0, 20.0, 30.0]).unwrap())
    );
    assert_eq!(
        npy::read(&out_dir.join("out1.npy")).unwrap().to_string(),
        "3i64"
    );
}

/// A large `.npy` input is mapped and used in place (`npy::read`); an entry point that consumes
/// it updates a copy, never the file.
#[test]
fn run_consumes_a_mapped_npy_input_without_changing_the_file() {
    let dir = scratch("run_mapped");
    let prog = write(
        &dir,
        "update.og",
        "entry main (xs: *[]f32) : *[]f32 = xs with [0] = 7f32\n",
    );
    let n = npy::MAP_AT_LEAST as usize; // 4 MiB of f32
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let input = dir.join("xs.npy");
    npy::write(
        &input,
        &Value::Array(Array::from_f32(vec![n], xs.clone()).unwrap()),
    )
    .unwrap();
    let before = std::fs::read(&input).unwrap();
    let out_dir = dir.join("out");
    let out = ogham(&[
        "run",
        "-o",
        out_dir.to_str().unwrap(),
        prog.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut expected = xs;
    expected[0] = 7.0;
    assert_eq!(
        npy::read(&out_dir.join("out0.npy")).unwrap(),
        Value::Array(Array::from_f32(vec![n], expected).unwrap())
    );
    assert_eq!(
        std::fs::read(&input).unwrap(),
        before,
        "the input file is unchanged"
    );
}

#[test]
fn run_rejects_bad_arguments() {
    let dir = scratch("run_bad_args");
    let prog = write(&dir, "sum.og", SUM);
    let prog = prog.to_str().unwrap();
    assert_user_error(
        &ogham(&["run", prog, "[1i32, 2i32]"]),
        "argument 1 (`xs: []f32`), given by `[1i32, 2i32]`: 1:2: expected a value of type f32, found `1i32`",
    );
    assert_user_error(
        &ogham(&["run", "--entry", "scale", prog, "1", "[1, 2]"]),
        "expected [3]f32 for parameter xs, got [2]f32",
    );
    assert_user_error(
        &ogham(&["run", prog]),
        "takes 1 argument (xs: []f32), but 0 were given",
    );
    assert_user_error(
        &ogham(&["run", prog, "[1, 2"]),
        "in the argument `[1, 2`: 1:5: unexpected end of input",
    );
    assert_user_error(
        &ogham(&["run", prog, "missing.npy"]),
        "missing.npy: cannot read",
    );
    assert_user_error(
        &ogham(&["run", "--entry", "nope", prog]),
        "there is no entry point `nope` (entry points: main, scale)",
    );
    assert_user_error(
        &ogham(&["run", "--backend", "fpga", prog, "[1]"]),
        "invalid value 'fpga'",
    );
}

#[test]
fn run_time_errors_are_user_errors() {
    let dir = scratch("run_oob");
    let prog = write(
        &dir,
        "index.og",
        "entry main (xs: []i32) (i: i64) : i32 = xs[i]\n",
    );
    let out = ogham(&["run", prog.to_str().unwrap(), "[1, 2]", "5"]);
    assert_user_error(&out, "error[R07");
    assert!(stderr(&out).contains("index.og:1:"), "{}", stderr(&out));
}

#[test]
fn test_command_summarises() {
    let dir = scratch("test_cmd");
    write(
        &dir,
        "pass.og",
        "-- ==\n-- input { [1, 2] }\n-- output { 3f32 }\n-- snapshot { core }\n\
                            entry main (xs: []f32) : f32 = reduce (+) 0 xs\n",
    );
    write(&dir, "helper.og", "def helper (x: i32) = x\n");
    let out = ogham(&["test", dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.ends_with("1 passed, 0 failed, 1 skipped\n"), "{text}");
    // A skipped trial says why.
    assert!(
        text.contains("SKIP snapshot-core::") && text.contains("no stored snapshot"),
        "{text}"
    );

    write(
        &dir,
        "fail.og",
        "-- ==\n-- input { 1 }\n-- output { 3 }\n-- input { 1 }\n-- error: never\n\
                            entry main (x: i32) : i32 = x + 1\n",
    );
    let out = ogham(&["test", dir.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("FAIL interp::"), "{text}");
    assert!(text.contains("expected 3i32, got 2i32"), "{text}");
    assert!(
        text.contains("expected an error matching /never/"),
        "{text}"
    );
    assert!(text.ends_with("1 passed, 2 failed, 1 skipped\n"), "{text}");
}

#[test]
fn build_then_run_a_library() {
    let dir = scratch("build");
    let program = write(
        &dir,
        "scale.og",
        "entry main [n] (xs: [n]f32) (k: f32) : [n]f32 = map (\\x -> x * k) xs\n",
    );
    let out = ogham(&["build", program.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lib = dir.join("scale.ogl");
    assert!(
        stdout(&out).contains("entry points: main"),
        "{}",
        stdout(&out)
    );
    let out = ogham(&["run", lib.to_str().unwrap(), "[1f32, 2f32]", "3f32"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "[3.0f32, 6.0f32]");
    let out = ogham(&["run", lib.to_str().unwrap(), "[1f32]"]);
    assert_user_error(&out, "takes 2 arguments");
    // A data argument of the wrong type: the library's error points at the entry point.
    let ints = dir.join("ints.npy");
    std::fs::write(
        &ints,
        npy::encode(&Value::Array(Array::from_i64(vec![2], vec![1, 2]).unwrap())).unwrap(),
    )
    .unwrap();
    let out = ogham(&["run", lib.to_str().unwrap(), ints.to_str().unwrap(), "3f32"]);
    assert_user_error(&out, "expected [n]f32 for parameter xs");
    assert!(stderr(&out).contains("scale.og:1:"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("prelude"), "{}", stderr(&out));
    let out = ogham(&[
        "run",
        "--backend",
        "kir",
        lib.to_str().unwrap(),
        "[1f32]",
        "3f32",
    ]);
    assert_user_error(&out, "runs on the CPU backend");

    // Ahead of time: an object file and its header (linked and run by capi/tests/c_api.rs).
    let object = dir.join("2-scale.o");
    let out = ogham(&[
        "build",
        program.to_str().unwrap(),
        "-o",
        object.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("ogham_open_image(&_2_scale_image)"));
    let bytes = std::fs::read(&object).expect("the object file");
    assert_eq!(&bytes[..4], b"\x7fELF");
    let header = std::fs::read_to_string(dir.join("2-scale.h")).expect("the header");
    assert!(
        header.contains("extern const ogham_image _2_scale_image;"),
        "{header}"
    );
    assert!(
        header.contains(" *   entry main (xs: [n]f32) (k: f32) : [n]f32\n"),
        "{header}"
    );
    // The header names the command that builds a program with it (run by capi/tests/c_api.rs),
    // and the C interface's header is written beside it.
    let absolute = object.canonicalize().unwrap();
    assert!(
        header.contains(&format!(" *   cc main.c {} -I", absolute.display())),
        "{header}"
    );
    let interface = std::fs::read_to_string(dir.join("ogham.h")).expect("ogham.h");
    assert!(interface.contains("ogham_open_image"), "{interface}");
}

/// A library written by an older Ogham (whose program no longer decodes) is refused with its
/// version and the command that rebuilds it, not with a decoding error.
#[test]
fn a_library_of_another_version_asks_to_be_rebuilt() {
    let dir = scratch("old_library");
    let old = write(
        &dir,
        "old.ogl",
        r#"{"format":"ogham-library","version":2,"sources":{"files":[]},"program":{"functions":[{"name":"main","stmts":[]}]}}"#,
    );
    let out = ogham(&["run", old.to_str().unwrap(), "1"]);
    assert_user_error(&out, "is a library of version 2 built by an older Ogham");
    assert_user_error(&out, "rebuild it with `ogham build PROGRAM.og -o ");
    assert!(!stderr(&out).contains("missing field"), "{}", stderr(&out));
    let other = write(
        &dir,
        "other.ogl",
        r#"{"format":"something-else","version":3}"#,
    );
    let out = ogham(&["run", other.to_str().unwrap(), "1"]);
    assert_user_error(&out, "is a `something-else` file, not an Ogham library");
}

/// A program with one entry point runs without `--entry`; with several, `main` is the default,
/// and without a `main` the error lists them.
#[test]
fn the_only_entry_point_is_the_default() {
    let dir = scratch("default_entry");
    let one = write(&dir, "one.og", "entry double (x: i64) : i64 = x + x\n");
    let out = ogham(&["run", one.to_str().unwrap(), "21"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "42i64\n");
    let out = ogham(&["run", "--backend", "cpu", one.to_str().unwrap(), "4"]);
    assert_eq!(stdout(&out), "8i64\n", "{}", stderr(&out));
    let two = write(
        &dir,
        "two.og",
        "entry double (x: i64) : i64 = x + x\nentry triple (x: i64) : i64 = 3 * x\n",
    );
    let out = ogham(&["run", two.to_str().unwrap(), "1"]);
    assert_user_error(
        &out,
        "the program has 2 entry points; choose one with `--entry NAME` (entry points: double, \
         triple)",
    );
    let out = ogham(&["run", "--entry", "triple", two.to_str().unwrap(), "2"]);
    assert_eq!(stdout(&out), "6i64\n", "{}", stderr(&out));
}

/// `ogham dev --print kir` and `OGHAM_PROFILE` name the source location of every kernel.
#[test]
fn kernels_are_traced_to_their_source() {
    let dir = scratch("kernel_origins");
    let program = write(
        &dir,
        "cusum.og",
        "entry main [m][n] (xs: [m][n]f32) : [m][n]f32 =\n  map (\\row -> scan (+) 0 row) xs\n",
    );
    let out = ogham(&["dev", "--print", "kir", program.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let first = stdout(&out).lines().next().unwrap_or_default().to_string();
    assert!(
        first.starts_with("-- kernel main_k0 (") && first.ends_with("cusum.og:2:3"),
        "{}",
        stdout(&out)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ogham"))
        .args(["run", "--backend", "cpu", "--no-cache"])
        .arg(&program)
        .arg("[[1f32, 2f32], [3f32, 4f32]]")
        .env("OGHAM_PROFILE", "1")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).lines().any(
            |l| l.starts_with("ogham-profile: kernel main_k0 (") && l.ends_with("cusum.og:2:3")
        ),
        "{}",
        stderr(&out)
    );
}

/// `OGHAM_PERF_MAP=1` names the JIT-compiled kernels in `/tmp/perf-<pid>.map`; `=code` also
/// writes each one's machine code, as many bytes as the map says, into a directory of the
/// process's own that only its user may enter.
#[test]
#[cfg(target_os = "linux")]
fn the_perf_map_names_the_kernels_and_can_hold_their_code() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("perf_map");
    let program = write(
        &dir,
        "sums.og",
        "entry main [m][n] (xs: [m][n]f64) : [m]f64 =\n  map (\\row -> reduce (+) 0 row) xs\n",
    );
    let run = |setting: &str| {
        let child = Command::new(env!("CARGO_BIN_EXE_ogham"))
            .args(["run", "--backend", "cpu", "--no-cache"])
            .arg(&program)
            .arg("[[1f64, 2f64], [3f64, 4f64]]")
            .env("OGHAM_PERF_MAP", setting)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let map = PathBuf::from(format!("/tmp/perf-{pid}.map"));
        let code_dir = PathBuf::from(format!("/tmp/perf-{pid}.code"));
        let text = std::fs::read_to_string(&map).expect("the perf map");
        let _ = std::fs::remove_file(&map);
        (text, code_dir)
    };
    let (text, code_dir) = run("1");
    assert!(text.lines().any(|l| l.ends_with(" main_k0")), "{text}");
    assert!(!code_dir.exists(), "no code without OGHAM_PERF_MAP=code");
    let (text, code_dir) = run("code");
    let mode = std::fs::metadata(&code_dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [addr, size, name] = fields[..] else {
            panic!("a map line: {line}");
        };
        let bytes = std::fs::read(code_dir.join(format!("{addr}-{name}.bin"))).unwrap();
        assert_eq!(
            bytes.len(),
            usize::from_str_radix(size, 16).unwrap(),
            "{line}"
        );
    }
    std::fs::remove_dir_all(&code_dir).unwrap();
}

/// The code-generating passes dump like any other: `--dump-after codegen-cpu` is `--print clif`,
/// and `--print cuda` is the prelude followed by `--dump-after codegen-cuda`.
#[test]
fn codegen_is_the_last_pass() {
    let dir = scratch("codegen_pass");
    let program = write(
        &dir,
        "sum.og",
        "entry main (xs: []f32) : f32 = reduce (+) 0f32 (map (\\x -> x * 2f32) xs)\n",
    );
    let path = program.to_str().unwrap();
    let dump = |args: &[&str]| {
        let out = ogham(&[&["dev"], args, &[path]].concat());
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let clif = dump(&["--dump-after", "codegen-cpu"]);
    assert!(clif.starts_with("; kernel main_k"), "{clif}");
    assert_eq!(clif, dump(&["--print", "clif"]));
    let kernels = dump(&["--dump-after", "codegen-cuda"]);
    assert!(kernels.starts_with("// kernel main_k"), "{kernels}");
    let unit = dump(&["--print", "cuda"]);
    assert!(
        unit.len() > kernels.len() && unit.ends_with(&kernels),
        "{unit}"
    );
    let out = ogham(&["dev", "--dump-after", "codegen", path]);
    assert_user_error(
        &out,
        "there is no pass `codegen` (passes: lower, simplify, fuse, resimplify, flatten, narrow, \
         kir-simplify, hoist-reads, index-inputs, layout, unswitch, skip-idle, jam, interleave, \
         codegen-cpu, codegen-cuda)",
    );
}

#[test]
fn autotune_writes_a_tuning_file_that_runs() {
    let dir = scratch("autotune");
    let program = write(
        &dir,
        "rows.og",
        "entry main [n] [m] (a: [n][m]i32) : [n][m]i32 = map (\\row -> scan (+) 0 row) a\n",
    );
    let data = "[[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]]";
    let tuning = dir.join("rows.tuning");
    let out = ogham(&["autotune", "--runs", "1", program.to_str().unwrap(), data]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = std::fs::read_to_string(&tuning).expect("the tuning file is written");
    // Every threshold of the program is named, with the times tried as comments.
    for name in ["suff_outer_par_0=", "suff_intra_par_0="] {
        assert!(text.contains(name), "{text}");
    }
    assert!(text.contains("# default "), "{text}");
    let out = ogham(&[
        "run",
        "--backend",
        "cpu",
        "--tuning",
        tuning.to_str().unwrap(),
        program.to_str().unwrap(),
        data,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "[[1i32, 3i32, 6i32], [4i32, 9i32, 15i32]]"
    );
}

#[test]
fn autotune_tunes_for_the_gpu_model() {
    if ogham::Backend::CudaModel.unavailable().is_some() {
        return; // No g++: tests/cuda_model.rs says so.
    }
    let dir = scratch("autotune-model");
    let program = write(
        &dir,
        "rows.og",
        "entry main [n] [m] (a: [n][m]f32) : [n][m]f32 = map (\\row -> scan (+) 0 row) a\n",
    );
    let data = "[[1f32, 2f32, 3f32], [4f32, 5f32, 6f32]]";
    let tuning = dir.join("rows.tuning");
    let out = ogham(&[
        "autotune",
        "--backend",
        "cuda-model",
        program.to_str().unwrap(),
        data,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(cuda-model backend)"),
        "{}",
        stderr(&out)
    );
    let text = std::fs::read_to_string(&tuning).expect("the tuning file is written");
    // The times are the model's: microseconds of a launch, not the emulation's wall time.
    let first = text.lines().next().unwrap_or_default();
    let ms: f64 = first
        .strip_prefix("# ogham autotune: ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(ms > 0.0 && ms < 1.0, "{text}");
    for name in ["suff_outer_par_0=", "suff_intra_par_0="] {
        assert!(text.contains(name), "{text}");
    }
}

#[test]
fn the_cuda_backend_without_a_gpu_is_a_clear_error() {
    if ogham::Backend::Cuda.unavailable().is_none() {
        return; // A GPU is present: the corpus runs the CUDA cases.
    }
    let dir = scratch("cuda");
    let program = write(&dir, "double.og", "entry main (xs: []f32) = map (*2) xs\n");
    let out = ogham(&[
        "run",
        "--backend",
        "cuda",
        program.to_str().unwrap(),
        "[1f32]",
    ]);
    assert_user_error(&out, "error[R0711]");
}

/// On the CUDA executors, `OGHAM_PROFILE` gives each kernel's total and where it went: the
/// kernel alone (CUDA events on a GPU; the call on the emulator), its copies with their bytes,
/// its allocations.
#[test]
fn the_cuda_profile_separates_kernels_copies_and_allocations() {
    if ogham::Backend::CudaEmu.unavailable().is_some() {
        return; // No g++: no emulator.
    }
    let dir = scratch("cuda_profile");
    let program = write(&dir, "double.og", "entry main (xs: []f32) = map (*2) xs\n");
    let out = Command::new(env!("CARGO_BIN_EXE_ogham"))
        .args(["run", "--backend", "cuda-emu", "--no-cache"])
        .arg(&program)
        .arg("[1f32, 2f32, 3f32]")
        .env("OGHAM_PROFILE", "1")
        .env("OGHAM_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let line = stderr(&out)
        .lines()
        .find(|l| l.starts_with("ogham-profile: kernel main_k0 (cuda-emu) "))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no profile line:\n{}", stderr(&out)));
    let pattern = regex::Regex::new(
        r"\) [0-9.]+ ms: kernel alone [0-9.]+ ms \(1 launch\(es\)\), copies [0-9.]+ ms \((\d+), ([0-9.]+) MB\), allocations [0-9.]+ ms \((\d+) with frees\)$",
    )
    .unwrap();
    let found = pattern.captures(&line).unwrap_or_else(|| panic!("{line}"));
    // The first kernel's line also holds the executor's start, the failure record allocated
    // and cleared. Copies: that clearing and the operand going up (the map cannot fail, so its
    // record is not read; its result stays on the device; its argument slots are kernel
    // parameters). Allocations: the record, the operand's device copy, the result.
    assert_eq!((&found[1], &found[3]), ("2", "3"), "{line}");
    // The result comes back once, after the last kernel.
    let reads = stderr(&out)
        .lines()
        .find(|l| l.starts_with("ogham-profile: kernel host-reads (cuda-emu) "))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no host-reads line:\n{}", stderr(&out)));
    assert!(
        reads.contains("(0 launch(es)), copies ") && reads.contains(" ms (1, 0.0 MB)"),
        "{reads}"
    );
}

/// The CUDA emulator's cached shared library is verified before use: a damaged one (changed
/// bytes, a missing checksum) is reported by name, compiled again and replaced; one that passes
/// its checksum but does not load is reported and compiled again too.
#[test]
fn damaged_cuda_objects_in_the_cache_are_rebuilt() {
    if ogham::Backend::CudaEmu.unavailable().is_some() {
        return; // No g++: no emulator.
    }
    let dir = scratch("cuda_cache");
    let cache = dir.join("cache");
    let program = write(&dir, "double.og", "entry main (xs: []f32) = map (*2) xs\n");
    let run = || {
        ogham_cached(
            &[
                "run",
                "--backend",
                "cuda-emu",
                program.to_str().unwrap(),
                "[1f32, 2f32]",
            ],
            &cache,
            &[],
        )
    };
    let first = run();
    assert_eq!(stdout(&first), "[2.0f32, 4.0f32]\n", "{}", stderr(&first));
    let library = std::fs::read_dir(cache.join("cuda-emu"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "so"))
        .expect("a cached shared library");
    let sum = library.with_extension("so.sum");
    let warning = format!("warning: the cache entry {} is damaged", library.display());
    let damages: [(&str, &dyn Fn()); 3] = [
        ("changed bytes", &|| {
            let mut bytes = std::fs::read(&library).unwrap();
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0xff;
            std::fs::write(&library, bytes).unwrap();
        }),
        ("no checksum", &|| std::fs::remove_file(&sum).unwrap()),
        ("not a library, with its checksum", &|| {
            let junk = b"not an ELF file";
            std::fs::write(&library, junk).unwrap();
            let hash = ogham::runtime::content_hash(junk);
            std::fs::write(&sum, format!("{hash:016x}\n")).unwrap();
        }),
    ];
    for (what, damage) in damages {
        damage();
        let repaired = run();
        assert_eq!(
            stdout(&repaired),
            stdout(&first),
            "{what}: {}",
            stderr(&repaired)
        );
        assert!(
            stderr(&repaired).contains(&warning),
            "{what}: {}",
            stderr(&repaired)
        );
        let again = run();
        assert_eq!(
            (stdout(&again), stderr(&again)),
            (stdout(&first), String::new()),
            "{what}"
        );
    }
}
