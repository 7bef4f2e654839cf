//! The disk cache trusts nothing it did not make (issue "Security and reliability"): directories
//! that others can write or that others own are refused with the reason, relative or empty
//! settings are ignored, a FIFO in an entry's place does not block a run, a file size limit does
//! not kill a run that would have succeeded, and a second user's cache is never used.

use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

const PROGRAM: &str = "entry main (n: i64) : f32 = f32.exp (f32.i64 n)\n";

/// The files under `dir` (recursively), relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                todo.push(path.clone());
            }
            let relative = path.strip_prefix(dir).unwrap().display().to_string();
            files.push(relative);
        }
    }
    files.sort();
    files
}

fn run(program: &Path, cache: &Path) -> Output {
    ogham_cached(
        &["run", "--backend", "cpu", program.to_str().unwrap(), "2i64"],
        cache,
        &[],
    )
}

/// [`run`] through `sh -c "PREFIX ogham run ..."` (a limit, a time-out).
fn run_in_shell(prefix: &str, program: &Path, cache: &Path) -> Output {
    let script = format!(
        "{prefix} {} run --backend cpu {} 2i64",
        env!("CARGO_BIN_EXE_ogham"),
        program.display()
    );
    Command::new("sh")
        .args(["-c", &script])
        .env("OGHAM_CACHE_DIR", cache)
        .env_remove("OGHAM_CACHE")
        .output()
        .unwrap()
}

fn assert_runs(out: &Output) {
    assert_eq!(code(out), 0, "{}", stderr(out));
    assert_eq!(stdout(out).trim(), "7.389056f32");
}

#[test]
fn private_directories_and_a_private_key_are_made() {
    let dir = scratch("trust_private");
    let program = write(&dir, "p.og", PROGRAM);
    let cache = dir.join("cache");
    assert_runs(&run(&program, &cache));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
    assert_eq!(mode(&cache), 0o700);
    assert_eq!(mode(&cache.join("cpu")), 0o700);
    assert_eq!(mode(&cache.join("key")), 0o600);
    assert_eq!(cache_entries(&cache).len(), 2, "the program and its code");
}

#[test]
fn a_directory_others_can_write_is_refused() {
    let dir = scratch("trust_writable");
    let program = write(&dir, "p.og", PROGRAM);
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = run(&program, &cache);
    assert_runs(&out);
    let err = stderr(&out);
    assert!(
        err.contains("not using the cache") && err.contains("writable by group or others"),
        "{err}"
    );
    assert!(err.contains("chmod 700"), "says how to fix it: {err}");
    assert!(cache_entries(&cache).is_empty(), "nothing written there");
    // Made private, it is used.
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = run(&program, &cache);
    assert_runs(&out);
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    assert_eq!(cache_entries(&cache).len(), 2);
}

#[test]
fn relative_and_empty_settings_are_ignored() {
    let dir = scratch("trust_relative");
    let program = write(&dir, "p.og", PROGRAM);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    for (cache_dir, xdg) in [("relative", "also-relative"), ("", "")] {
        let out = Command::new(env!("CARGO_BIN_EXE_ogham"))
            .args(["run", "--backend", "cpu", program.to_str().unwrap(), "2i64"])
            .current_dir(&dir)
            .env("OGHAM_CACHE_DIR", cache_dir)
            .env("XDG_CACHE_HOME", xdg)
            .env("HOME", &home)
            .env_remove("OGHAM_CACHE")
            .output()
            .unwrap();
        assert_runs(&out);
        assert!(!dir.join("relative").exists() && !dir.join("also-relative").exists());
        assert!(!dir.join("cpu").exists() && !dir.join("ogham").exists());
        assert!(home.join(".cache/ogham/cpu").is_dir(), "{:?}", tree(&dir));
    }
}

#[test]
fn a_fifo_in_an_entry_does_not_block() {
    let dir = scratch("trust_fifo");
    let program = write(&dir, "p.og", PROGRAM);
    let cache = dir.join("cache");
    assert_runs(&run(&program, &cache));
    for entry in cache_entries(&cache) {
        std::fs::remove_file(&entry).unwrap();
        let status = Command::new("mkfifo").arg(&entry).status().unwrap();
        assert!(status.success());
    }
    // `timeout`: a run that blocks fails instead of hanging the tests.
    let out = run_in_shell("exec timeout 60", &program, &cache);
    assert_runs(&out);
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
    for entry in cache_entries(&cache) {
        assert!(std::fs::metadata(&entry).unwrap().is_file(), "replaced");
    }
}

#[test]
fn a_file_size_limit_does_not_kill_a_run_that_needs_no_file() {
    let dir = scratch("trust_size_limit");
    let program = write(&dir, "p.og", PROGRAM);
    let cache = dir.join("cache");
    // `ulimit -f 1`: files of at most 1 KiB; a cache entry takes more.
    let out = run_in_shell("ulimit -f 1; exec", &program, &cache);
    assert_runs(&out);
    assert!(
        stderr(&out).contains("cannot write the cache entry"),
        "{}",
        stderr(&out)
    );
    let left: Vec<String> = tree(&cache.join("cpu"));
    assert!(
        left.is_empty(),
        "no partial entries or temporaries: {left:?}"
    );
}

/// Whether this process may act as another user (root, with `setpriv`).
fn can_switch_users() -> bool {
    let dir = scratch("trust_whoami");
    let root = std::fs::metadata(&dir).unwrap().uid() == 0;
    root && Command::new("setpriv").arg("--version").output().is_ok()
}

/// The user id of `nobody`, whom the tests make the other user.
const OTHER: u32 = 65534;

/// Runs `ogham ARGS` as the other user with the variables `env` set (`None` unsets one);
/// `None` when the other user cannot run the test binary here (its directories are private).
fn ogham_as_other(args: &[&str], env: &[(&str, Option<&Path>)]) -> Option<Output> {
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid", &OTHER.to_string(), "--regid", &OTHER.to_string()])
        .args(["--clear-groups", env!("CARGO_BIN_EXE_ogham")])
        .args(args);
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let out = command.output().unwrap();
    let denied = format!("{}: Permission denied", env!("CARGO_BIN_EXE_ogham"));
    if stderr(&out).contains(&denied) {
        eprintln!("skipped: the other user cannot run the test binary here");
        return None;
    }
    Some(out)
}

/// A new directory `name` in `dir` that the other user owns, private to them.
fn other_users_directory(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(&path).unwrap();
    std::os::unix::fs::chown(&path, Some(OTHER), Some(OTHER)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
    path
}

#[test]
fn a_directory_of_another_user_is_refused() {
    if !can_switch_users() {
        eprintln!("skipped: needs root to give a directory to another user");
        return;
    }
    let dir = scratch("trust_foreign");
    let program = write(&dir, "p.og", PROGRAM);
    let cache = other_users_directory(&dir, "cache");
    let out = run(&program, &cache);
    assert_runs(&out);
    assert!(
        stderr(&out).contains(&format!("owned by user id {OTHER}")),
        "{}",
        stderr(&out)
    );
    assert!(tree(&cache).is_empty());
}

/// A second user fills a cache of their own; pointed at it, this user refuses it (it is not
/// theirs), and a copy of its entries planted in this user's own cache is refused as forged
/// (made under another key) and compiled again.
#[test]
fn entries_of_a_second_user_never_run() {
    if !can_switch_users() {
        eprintln!("skipped: needs root and setpriv to act as a second user");
        return;
    }
    let dir = scratch("trust_second_user");
    let program = write(&dir, "p.og", PROGRAM);
    let theirs = other_users_directory(&dir, "theirs");
    let run_as_other = ["run", "--backend", "cpu", program.to_str().unwrap(), "2i64"];
    let env = [
        ("OGHAM_CACHE_DIR", Some(theirs.as_path())),
        ("OGHAM_CACHE", None),
    ];
    let Some(as_other) = ogham_as_other(&run_as_other, &env) else {
        return;
    };
    assert_runs(&as_other);
    let planted = cache_entries(&theirs);
    assert_eq!(planted.len(), 2, "{}", stderr(&as_other));
    assert!(
        planted
            .iter()
            .all(|p| std::fs::metadata(p).unwrap().uid() == OTHER)
    );

    let out = run(&program, &theirs);
    assert_runs(&out);
    assert!(
        stderr(&out).contains("not using the cache"),
        "{}",
        stderr(&out)
    );

    let mine = dir.join("mine");
    assert_runs(&run(&program, &mine));
    let good: Vec<Vec<u8>> = cache_entries(&mine)
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    for (from, to) in planted.iter().zip(cache_entries(&mine)) {
        std::fs::copy(from, &to).unwrap();
    }
    let out = run(&program, &mine);
    assert_runs(&out);
    assert!(
        stderr(&out).contains("its MAC does not match"),
        "{}",
        stderr(&out)
    );
    let again: Vec<Vec<u8>> = cache_entries(&mine)
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(again, good, "this user's own entries are back");
}

/// The case: in a sticky directory, a second output belongs to another user, so its
/// rename fails (EPERM) after the first output was replaced; the first output's old version is
/// put back instead of both being lost.
#[test]
fn a_failed_rename_in_a_sticky_directory_keeps_the_old_outputs() {
    if !can_switch_users() {
        eprintln!("skipped: needs root and setpriv to act as a second user");
        return;
    }
    let dir = scratch("trust_sticky_outputs");
    let program = write(
        &dir,
        "two.og",
        "entry main (n: i64) : ([]i64, []f32) = (iota n, replicate n 1f32)\n",
    );
    let outs = dir.join("outs");
    std::fs::create_dir_all(&outs).unwrap();
    std::fs::set_permissions(&outs, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = write(&outs, "out0.npy", "the other user's old out0");
    std::os::unix::fs::chown(&theirs, Some(OTHER), Some(OTHER)).unwrap();
    write(
        &outs,
        "out1.npy",
        "root's out1, which the other user cannot replace",
    );
    let run_as_other = [
        "run",
        program.to_str().unwrap(),
        "-o",
        outs.to_str().unwrap(),
        "3i64",
    ];
    let env = [("OGHAM_CACHE", Some(Path::new("0")))];
    let Some(out) = ogham_as_other(&run_as_other, &env) else {
        return;
    };
    assert_user_error(&out, "out1.npy");
    let mut names: Vec<String> = std::fs::read_dir(&outs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["out0.npy", "out1.npy"],
        "no temporaries or kept copies left"
    );
    assert_eq!(
        std::fs::read_to_string(outs.join("out0.npy")).unwrap(),
        "the other user's old out0",
        "the replaced output has its old version back"
    );
    assert_eq!(
        std::fs::read_to_string(outs.join("out1.npy")).unwrap(),
        "root's out1, which the other user cannot replace"
    );
}
