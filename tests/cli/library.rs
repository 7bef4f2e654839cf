//! The standard library from outside the repository: every module is embedded and importable
//! as `lib/NAME` from any directory, and `--lib DIR` and `OGHAM_PATH` find user libraries.

use super::{code, scratch, stderr, stdout, write};
use std::process::Command;

/// A user file outside the repository (in the system's temporary directory, run from there)
/// imports the method modules and their building blocks.
#[test]
fn every_library_module_is_importable_from_anywhere() {
    let dir = std::env::temp_dir().join(format!("ogham-stdlib-anywhere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    write(
        &dir,
        "uses_lib.og",
        "import \"lib/bfast\"\nimport \"lib/stl\"\nimport \"lib/dtw\"\nimport \"lib/insar\"\n\
         import \"lib/stats\"\nimport \"lib/mosum\"\nimport \"lib/regression\"\n\
         import \"lib/loess\"\n\
         entry main (xs: []f64) : (f64, f64, f64, f64, i64) =\n\
         \x20 (median_prefix 3 xs, log_plus 10f64, doy_elapsed 365f64 10f64 20f64, wrap_phase 7f64,\n\
         \x20  lower_bound [0i64, 2i64, 5i64] 3 4i64)\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ogham"))
        .args(["run", "uses_lib.og", "[3f64, 1f64, 2f64]"])
        .current_dir(&dir)
        .env_remove("OGHAM_PATH")
        .env("OGHAM_CACHE", "0")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "2.0f64");
    assert!(lines[1].starts_with("2.302585"), "{lines:?}");
    assert_eq!(lines[4], "2i64");
}

/// `--lib DIR` (repeatable) adds import directories, searched in order before `OGHAM_PATH`.
#[test]
fn lib_flag_adds_import_directories() {
    let dir = scratch("lib_flag");
    let (first, second) = (dir.join("first"), dir.join("second"));
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&second).unwrap();
    write(&first, "scaling.og", "def twice (x: i64) : i64 = x + x\n");
    write(&second, "scaling.og", "def twice (x: i64) : i64 = 0\n");
    write(
        &second,
        "offset.og",
        "def plus_one (x: i64) : i64 = x + 1\n",
    );
    let program = write(
        &dir,
        "main.og",
        "import \"scaling\"\nimport \"offset\"\nentry main (x: i64) : i64 = plus_one (twice x)\n",
    );
    let run = |args: &[&std::path::Path], env: Option<&std::path::Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ogham"));
        for a in args {
            cmd.arg("--lib").arg(a);
        }
        cmd.arg("run").arg(&program).arg("20");
        cmd.env_remove("OGHAM_PATH").env("OGHAM_CACHE", "0");
        if let Some(p) = env {
            cmd.env("OGHAM_PATH", p);
        }
        cmd.output().unwrap()
    };
    let out = run(&[&first, &second], None);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "41i64");
    // --lib comes before OGHAM_PATH.
    let out = run(&[&first], Some(&second));
    assert_eq!(stdout(&out).trim(), "41i64", "{}", stderr(&out));
    let out = run(&[&second, &first], None);
    assert_eq!(stdout(&out).trim(), "1i64", "{}", stderr(&out));
    let out = run(&[&first], None);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("(--lib)"), "{}", stderr(&out));
}

#[test]
fn ogham_path_finds_user_libraries() {
    let dir = scratch("ogham_path");
    let libs = dir.join("mylibs");
    std::fs::create_dir_all(&libs).unwrap();
    write(
        &libs,
        "scaling.og",
        "def twice ('t: num) [n] (xs: [n]t) : [n]t = map (\\x -> x + x) xs\n",
    );
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let program = write(
        &work,
        "main.og",
        "import \"scaling\"\nentry main (xs: []i64) : []i64 = twice xs\n",
    );
    let run = |path: Option<&std::path::Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ogham"));
        cmd.args(["run", program.to_str().unwrap(), "[1i64, 2i64]"]);
        cmd.env_remove("OGHAM_PATH");
        if let Some(p) = path {
            cmd.env("OGHAM_PATH", p);
        }
        cmd.output().unwrap()
    };
    let out = run(Some(&libs));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "[2i64, 4i64]");
    let out = run(None);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("E0201"), "{}", stderr(&out));
}
