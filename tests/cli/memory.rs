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

#[test]
fn a_loop_gives_back_what_its_iterations_made() {
    // Each of the loop's 768 iterations makes an array of 4 MiB: 3 GiB in all, in an address
    // space of 2 GiB. Before `back/cpu/reclaim.rs` the worker's arena kept every iteration's
    // array and the run failed (R0709); now each iteration's memory is given back once the
    // next has its copy of the carried array.
    let dir = scratch("loop_memory");
    let program = write(
        &dir,
        "loop.og",
        "entry main [m] (xs: [m]f32) (k: i64) (n: i64) : [m]f32 =\n  \
         map (\\x -> let a = loop acc = replicate n x for i < k do replicate n (acc[i % n] + 1f32)\n             \
         in a[0] + a[n - 1])\n      xs\n",
    );
    let out = run_limited(&program, "cpu", 2 << 20, "[1f32] 768i64 1048576i64");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "[1538.0f32]\n");
}
