//! The standard library from outside the repository: every module is embedded and importable
//! as `lib/NAME` from any directory, and `OGHAM_PATH` finds user libraries.

use super::{code, ogham, scratch, stderr, stdout, write};
use std::process::Command;

#[test]
fn every_library_module_is_importable_from_anywhere() {
    let dir = scratch("stdlib_anywhere");
    let program = write(
        &dir,
        "uses_lib.og",
        "import \"lib/bfast\"\nimport \"lib/stl\"\nimport \"lib/dtw\"\nimport \"lib/insar\"\n\
         import \"lib/stats\"\n\
         entry main (xs: []f64) : (f64, f64, f64, f64) =\n\
         \x20 (median_prefix 3 xs, log_plus 10f64, doy_elapsed 365f64 10f64 20f64, wrap_phase 7f64)\n",
    );
    let out = ogham(&["run", program.to_str().unwrap(), "[3f64, 1f64, 2f64]"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "2.0f64");
    assert!(lines[1].starts_with("2.302585"), "{lines:?}");
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
