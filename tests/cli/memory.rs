//! Allocation failures: an array that the memory limit (`OGHAM_MEMORY_LIMIT`) allows but the
//! allocator cannot give (here under an address-space limit, `ulimit -v`) is error R0709 at the
//! expression that makes it, exit status 1: never an abort of the process (SIGABRT).

use super::*;

/// Runs `ogham run` on `program` with `args` under an address space of `kib` KiB and a memory
/// limit that lets every allocation through to the allocator.
fn run_limited(program: &Path, backend: &str, kib: u64, args: &str) -> Output {
    let script = format!(
        "ulimit -v {kib} && exec {} run --backend {backend} {} {args}",
        env!("CARGO_BIN_EXE_ogham"),
        program.display(),
    );
    Command::new("sh")
        .args(["-c", &script])
        .env("OGHAM_MEMORY_LIMIT", "1T")
        .env("OGHAM_CACHE", "0")
        .output()
        .unwrap()
}

#[test]
fn a_failed_allocation_is_a_located_r0709_not_an_abort() {
    let dir = scratch("failed_allocation");
    let program = write(
        &dir,
        "big.og",
        "entry main (n: i64) : f32 =\n  let xs = map f32.i64 (iota n) in xs[n - 1]\n",
    );
    for backend in ["interp", "kir", "cpu"] {
        // 2.4·10^9 f32: 9.6 GB, in an address space of 4 GiB.
        let out = run_limited(&program, backend, 4 << 20, "2400000000i64");
        assert!(
            out.status.code().is_some(),
            "{backend}: killed by a signal: {:?} {}",
            out.status,
            stderr(&out)
        );
        assert_user_error(&out, "error[R0709]");
        assert!(
            stderr(&out).contains("big.og:2:"),
            "{backend}: {}",
            stderr(&out)
        );
        // The same limits let a small run through.
        let out = run_limited(&program, backend, 4 << 20, "1000i64");
        assert_eq!(code(&out), 0, "{backend}: {}", stderr(&out));
        assert_eq!(stdout(&out), "999.0f32\n");
    }
}
