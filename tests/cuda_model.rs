//! The GPU performance model (`--backend cuda-model`) on access patterns whose counts are known:
//! a coalesced f32 map takes 4 sectors per warp load and store, a row walked by each thread 32
//! per load, an array made at every point (interleaved across threads) 4 per load and store;
//! the outputs equal the interpreter's, sampled or not; and the model's estimate responds to
//! the modelled GPU as it should (a memory-bound map takes longer on the slower memory, and
//! moves each byte once); a site's line of the generated code is found
//! (`OGHAM_PROFILE=sites`); a kernel that ran out of arena starts its later launches with the
//! size that sufficed, and arrays of each element size have a share of their own; a block-level reduction shuffles within warps and takes a block of its
//! width rounded up to whole warps when its operator is exact; a transpose between two kernels
//! is made on the device, coalesced; an entry point run in parts of rows copies its inputs
//! and outputs beside its kernels, overlapping them, and the executor's own parts of an entry
//! point with a thread per row take few more waves than the whole run; a thread-level kernel of
//! many registers runs in the blocks at which an SM holds the most of its warps; launches that can fail are not waited for
//! (their failure record is read once, where the host reads). Bank conflicts of strided shared-memory accesses are
//! counted exactly by `ogham_runtime::cuda::model::warps` (its unit tests); this file runs whole
//! programs.
//!
//! Needs `g++` (as the emulator); without it the tests report themselves skipped, except under
//! CI, where that is a failure.

use ogham::codegen::cuda::CUDA;
use ogham::{Backend, Frontend};
use ogham_compiler::pipeline::Options;
use ogham_runtime::cuda::model::{Report, Site, gpus};
use ogham_runtime::cuda::run_model;
use ogham_runtime::ireval::Thresholds;
use ogham_runtime::ireval::parts::PartRows;
use ogham_runtime::value::{Array, Value};

const PROGRAM: &str = "
entry scale (xs: []f32) : []f32 = map (\\x -> x * 2f32 + 1f32) xs
entry walk [n][m] (rows: [n][m]f32) : [n]f32 =
  map (\\r -> loop acc = 0f32 for i < m do acc + r[i]) rows
entry chain [n] (xs: [n]f32) : [n]f32 =
  let ys = map (\\x -> x * 2f32) xs
  let s = reduce (+) 0f32 ys
  in map2 (\\y x -> y + x + s) ys xs
entry perpoint [n] (xs: [n]f32) : [n]f32 =
  map (\\x -> let a = map (\\i -> x + f32.i64 i) (iota 64)
             in loop acc = 0f32 for i < 64 do acc * 0.5f32 + a[63 - i]) xs
entry accumulate [m][n] (xs: [m][n]f64) : [m][n]f64 =
  loop acc = replicate m (replicate n 1f64) for _i < 3 do map2 (map2 (+)) acc xs
entry flip [n][m] (xs: [n][m]f32) : [m][n]f32 =
  let ys = map (map (\\x -> x * 2f32)) xs
  in map (map (\\x -> x + 1f32)) (transpose ys)
entry lastpos [n][m] (xss: [n][m]i64) : [n]i64 =
  map (\\xs -> reduce (\\a b -> if b >= 0 then b else a) (-1) xs) xss
entry fsum [n][m] (xss: [n][m]f64) : [n]f64 = map (\\xs -> reduce (+) 0f64 xs) xss
entry rowwork [m][n] (xss: [m][n]f32) : [m][n]f32 =
  map (map (\\x -> loop y = x for _i < 64 do y * 0.999f32 + 0.5f32)) xss
entry checked [n][m] (xs: [n]f32) (is: [m]i64) : f32 =
  let ks = map (\\i -> if i == n - 1 then is[i] else i) (iota n)
  let cs = scan (+) 0i64 ks
  let ys = map2 (\\c i -> xs[i] + f32.i64 c) cs (iota n)
  let s = scan (+) 0f32 ys
  in s[n - 1]
entry inner [n][m] (xs: [m]f32) (ks: [n]i64) : [n]f32 =
  map (\\k -> loop acc = 0f32 for _o < 2 do loop acc for j < k do acc + xs[8 * j]) ks
entry grow [n] (xs: [n]f64) : [n]f64 =
  loop acc = xs for _i < 3 do
    map (\\x -> let a = map (\\i -> x + f64.i64 i) (iota 10000)
               in loop s = 0f64 for i < 10000 do s * 0.5f64 + a[i]) acc
entry ends [m][n] (xss: [m][n]f32) : [m]f32 = map (\\r -> r[0] + r[n - 1]) xss
entry nested [m][n] (xss: [m][n]f32) : [m]f32 =
  map (\\r -> loop acc = 0f32 for i < 4 do acc + reduce (+) 0f32 r[4 * i:4 * i + 4]) xss
entry twosizes [n] (xs: [n]f32) : [n]f32 =
  map (\\x -> let a = loop a = replicate 12000 0f32 for i < 12000 do a with [i] = x + f32.i64 i
             let b = loop b = replicate 3000 0i64 for i < 3000 do b with [i] = 2 * i
             in loop s = 0f32 for i < 3000 do s * 0.5f32 + a[4 * i] + f32.i64 b[i]) xs
";

/// [`PROGRAM`] and `heavy`: a thread-level kernel whose point carries 80 `f64` values through a
/// loop, each of the next iteration's read from three of them, so that ptxas gives it more
/// than 168 registers per thread (212 with NVRTC 12.9).
fn program() -> String {
    let names: Vec<String> = (0..80).map(|k| format!("a{k}")).collect();
    let tuple = names.join(", ");
    let init: Vec<String> = (0..80).map(|k| format!("x + {k}f64")).collect();
    let next: Vec<String> = (0..80)
        .map(|k| format!("a{k} * 0.5f64 + a{} * a{}", (k + 1) % 80, (k + 7) % 80))
        .collect();
    format!(
        "{PROGRAM}entry heavy [n] (xs: [n]f64) : [n]f64 =\n  map (\\x -> let ({tuple}) = loop ({tuple}) = ({}) for _i < 3 do ({})\n             in {}) xs\n",
        init.join(", "),
        next.join(", "),
        names.join(" + ")
    )
}

fn available() -> bool {
    match ogham::Backend::CudaModel.unavailable() {
        None => true,
        Some(why) => {
            skip(&why);
            false
        }
    }
}

/// Says why a test does not run; under CI (which installs what the tests need) it fails instead.
fn skip(why: &str) {
    assert!(std::env::var_os("CI").is_none(), "under CI: {why}");
    eprintln!("skipped: {why}");
}

/// Runs `entry` on the model of `gpu` (every warp recorded when `sampled` is `None`); checks
/// the outputs against the interpreter's; returns the report.
fn model(entry: &str, args: Vec<Value>, gpu: &str, sampled: Option<i64>) -> Report {
    model_with(entry, args, gpu, sampled, &Thresholds::default())
}

/// [`model`] with the thresholds `thresholds`.
fn model_with(
    entry: &str,
    args: Vec<Value>,
    gpu: &str,
    sampled: Option<i64>,
    thresholds: &Thresholds,
) -> Report {
    let fe =
        Frontend::load_source("model.og", &program()).unwrap_or_else(|e| panic!("{}", e.render()));
    let ir = fe.compile_kernel(Options::KERNEL).expect("compiles");
    let gpu = gpus::by_key(gpu).expect("a known GPU");
    let (outputs, report) = run_model(
        CUDA,
        &ir,
        entry,
        args.clone(),
        thresholds,
        (gpu, sampled),
        PartRows::Whole,
    )
    .unwrap_or_else(|e| panic!("{}", e.message));
    let expected = Backend::Interp
        .run(&fe, entry, args, None)
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(outputs, expected, "{entry}: the model's outputs");
    report
}

/// The sites of 4-byte loads (`store` false) or stores of the report's only launch.
fn sites(report: &Report, store: bool) -> Vec<Site> {
    let launches: Vec<_> = report.kernels.iter().flat_map(|k| &k.launches).collect();
    assert_eq!(launches.len(), 1, "{report:#?}");
    launches[0]
        .sites
        .iter()
        .filter(|s| s.store == store && s.size == 4)
        .copied()
        .collect()
}

/// `PROGRAM` in kernel IR.
fn program_ir() -> ogham_ir::kir::Program {
    Frontend::load_source("model.og", &program())
        .unwrap_or_else(|e| panic!("{}", e.render()))
        .compile_kernel(Options::KERNEL)
        .expect("compiles")
}

/// An `m × n` array of `f32` rows.
fn rows(m: usize, n: usize) -> Value {
    let xss = Array::from_f32(vec![m, n], (0..m * n).map(|i| (i % 97) as f32).collect());
    Value::Array(xss.expect("shape"))
}

/// Runs `entry` of [`program_ir`] on the H200 model (8 sampled warps) in parts as `part_rows`
/// says: its outputs and the report.
fn on_h200_in_parts(
    ir: &ogham_ir::kir::Program,
    entry: &str,
    args: &[Value],
    part_rows: PartRows,
) -> (Vec<Value>, Report) {
    let gpu = (gpus::by_key("h200").expect("a known GPU"), Some(8));
    run_model(
        CUDA,
        ir,
        entry,
        args.to_vec(),
        &Thresholds::default(),
        gpu,
        part_rows,
    )
    .unwrap_or_else(|e| panic!("{}", e.message))
}

fn floats(n: usize) -> Value {
    Value::Array(Array::from_f32(vec![n], (0..n).map(|i| i as f32).collect()).expect("shape"))
}

#[test]
fn a_coalesced_f32_map_takes_4_sectors_per_warp_access() {
    if !available() {
        return;
    }
    let report = model("scale", vec![floats(1 << 14)], "h100", Some(16));
    for store in [false, true] {
        let s = sites(&report, store);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].requests, 16, "one request per sampled warp");
        assert_eq!(s[0].sectors, 4 * 16, "{s:?}");
        assert_eq!(s[0].ideal_sectors, 4 * 16);
    }
}

#[test]
fn a_row_walked_by_each_thread_takes_32_sectors_per_warp_load() {
    if !available() {
        return;
    }
    let (n, m) = (2048, 64);
    let rows = Array::from_f32(vec![n, m], vec![0.5; n * m]).expect("shape");
    let report = model("walk", vec![Value::Array(rows)], "h100", Some(8));
    let loads = sites(&report, false);
    assert_eq!(loads.len(), 1, "{loads:?}");
    // Each of 8 warps loads its 32 rows' element i, for i < 64: 32 sectors each time, 4 ideal.
    assert_eq!(
        (loads[0].requests, loads[0].sectors, loads[0].ideal_sectors),
        (8 * 64, 8 * 64 * 32, 8 * 64 * 4)
    );
}

#[test]
fn a_lane_that_left_an_inner_loop_waits_for_the_others() {
    if !available() {
        return;
    }
    // Lanes run the inner loop once (even) or twice (odd) in each of two outer iterations, and
    // all lanes at step j read the same element, 32 bytes from step j - 1's: 4 requests a warp
    // (both steps of both outer iterations), one sector each; 8 warps (a block) sampled. Grouped by the k-th load of each
    // lane alone, an even lane's second load (outer 1, step 0) would join the odd lanes' second
    // (outer 0, step 1): 5 sectors.
    let n = 4096;
    let ks = Array::from_i64(vec![n], (0..n as i64).map(|i| 1 + i % 2).collect()).expect("shape");
    let report = model("inner", vec![floats(64), Value::Array(ks)], "h100", Some(4));
    let loads = sites(&report, false);
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(
        (loads[0].requests, loads[0].sectors, loads[0].ideal_sectors),
        (8 * 4, 8 * 4, 8 * 4),
        "{loads:?}"
    );
}

#[test]
fn a_site_is_traced_to_its_line_of_the_generated_code() {
    if !available() {
        return;
    }
    let (n, m) = (256, 8);
    let rows = Array::from_f32(vec![n, m], vec![0.5; n * m]).expect("shape");
    let report = model("walk", vec![Value::Array(rows)], "h100", Some(2));
    let loads = sites(&report, false);
    let code = report.code.as_ref().expect("the model's code is known");
    let offsets: Vec<u64> = loads.iter().map(|s| code.offset(s.address)).collect();
    let lines = code.lines(&offsets).expect("addr2line runs");
    // The one load of the walk is the row's element `r[i]`: a line of the walk's kernel (after
    // its header, before the next function) that reads a view's element.
    let line = *lines[0]
        .first()
        .expect("the line tables name the load's line");
    let text = code.text(line);
    let unit: Vec<&str> = code.unit.lines().collect();
    let header = 1 + unit
        .iter()
        .position(|l| l.contains("void walk_k"))
        .expect("the walk's kernel is in the unit");
    let next = unit[header..]
        .iter()
        .position(|l| l.starts_with("extern \"C\""))
        .map_or(unit.len(), |n| header + n);
    assert!(
        header < line && line <= next,
        "line {line} is outside the kernel's lines {header}..{next}: {text}"
    );
    assert!(text.contains(".p["), "line {line}: {text}");
}

#[test]
fn an_array_made_at_every_point_takes_4_sectors_per_warp_access() {
    if !available() {
        return;
    }
    let report = model("perpoint", vec![floats(1 << 15)], "h100", Some(8));
    // One thread per point (32768 points reach the thread-level version's threshold): the
    // input's load and the output's store, and the per-point array's 64 stores and loads,
    // interleaved across the threads: each warp access is 4 sectors (32 when contiguous).
    for store in [false, true] {
        let s = sites(&report, store);
        let requests: u64 = s.iter().map(|s| s.requests).sum();
        let sectors: u64 = s.iter().map(|s| s.sectors).sum();
        assert_eq!(requests, 8 * 65, "{s:?}");
        assert_eq!(sectors, 4 * requests, "{s:?}");
    }
}

#[test]
fn a_kernel_that_ran_out_of_arena_starts_its_next_launches_with_more() {
    if !available() {
        return;
    }
    // One thread per point (every threshold 0), each making an array of 10,000 f64 (80 KB,
    // more than the first 64 KiB per thread) in each of three iterations: the first call runs
    // out and is launched again with 8× more; the next two start there.
    let xs = Array::from_f64(vec![64], (0..64).map(|i| i as f64).collect()).expect("shape");
    let report = model_with(
        "grow",
        vec![Value::Array(xs)],
        "h100",
        Some(2),
        &Thresholds::uniform(0),
    );
    let launches: Vec<usize> = report
        .kernels
        .iter()
        .filter(|k| k.name != "host-reads")
        .map(|k| k.launches.len())
        .collect();
    assert_eq!(launches, [2, 1, 1], "{report:#?}");
}

#[test]
fn each_element_size_has_its_own_arena_share() {
    if !available() {
        return;
    }
    // Each point makes 48,000 bytes of f32 and 24,000 of i64: more than 64 KiB in all, but
    // each size's sub-arena has 64 KiB per thread of its own, so the first launch fits. (With
    // the 64 KiB shared equally by the two sizes, the f32 array ran out and the kernel was
    // launched twice.)
    let report = model_with(
        "twosizes",
        vec![floats(64)],
        "h100",
        None,
        &Thresholds::uniform(0),
    );
    let launches: Vec<(&str, usize)> = report
        .kernels
        .iter()
        .filter(|k| k.name != "host-reads")
        .map(|k| (k.name.as_str(), k.launches.len()))
        .collect();
    assert_eq!(launches, [("twosizes_k0", 1)]);
}

#[test]
fn arrays_stay_on_the_device_between_kernels() {
    if !available() {
        return;
    }
    let n = 1 << 16;
    let report = model("chain", vec![floats(n)], "h100", Some(4));
    let launches: usize = report.kernels.iter().map(|k| k.launches.len()).sum();
    assert!(launches >= 2, "{report:#?}");
    // The input goes up once though two kernels read it; `ys` never comes back; the result
    // comes back once; everything else is launch records (a few hundred bytes per launch).
    let copied: u64 = report.kernels.iter().map(|k| k.copied_bytes).sum();
    let arrays = 2 * 4 * n as u64;
    assert!(
        (arrays..arrays + 4096).contains(&copied),
        "{copied} bytes copied: {report:#?}"
    );
    let last = report.kernels.last().expect("kernels");
    assert_eq!(
        (last.name.as_str(), last.copied_bytes),
        ("host-reads", 4 * n as u64),
        "the result is read once, at the end"
    );
}

#[test]
fn launches_that_can_fail_are_not_waited_for() {
    if !available() {
        return;
    }
    // Six launches with bounds checks (two scans in three launches each): the failure record is
    // read once, where the host reads `s[n - 1]`, not after each launch.
    let n = 1000;
    let is = Array::from_i64(vec![n], (0..n as i64).map(|i| i % 7).collect()).expect("shape");
    let report = model(
        "checked",
        vec![floats(n), Value::Array(is)],
        "h100",
        Some(4),
    );
    let launches: usize = report.kernels.iter().map(|k| k.launches.len()).sum();
    assert_eq!(launches, 6, "{report:#?}");
    let copies: Vec<(&str, u64)> = report
        .kernels
        .iter()
        .map(|k| (k.name.as_str(), k.copies))
        .collect();
    // Each input goes up with the first kernel that reads it; the record and the element come
    // back at the end.
    assert_eq!(
        copies,
        [("checked_k0", 1), ("checked_k1", 1), ("host-reads", 2)],
        "{report:#?}"
    );
}

#[test]
fn replicate_is_made_on_the_device() {
    if !available() {
        return;
    }
    let (m, n) = (300, 100);
    let xs = Array::from_f64(vec![m, n], (0..m * n).map(|i| i as f64 / 7.0).collect());
    let report = model(
        "accumulate",
        vec![Value::Array(xs.expect("shape"))],
        "h100",
        Some(4),
    );
    // Up: the input; back: the result; the loop's initial value crosses no bus.
    let copied: u64 = report.kernels.iter().map(|k| k.copied_bytes).sum();
    let arrays = 2 * 8 * (m * n) as u64;
    assert!(
        (arrays..arrays + 4096).contains(&copied),
        "{copied} bytes copied: {report:#?}"
    );
    // The row of ones (a fill) replicated by one launch of the prelude's kernel, whose writes
    // (and reads of the row) take whole sectors.
    let replicate = report
        .kernels
        .iter()
        .find(|k| k.name == "og_replicate_8")
        .unwrap_or_else(|| panic!("no replicate kernel: {report:#?}"));
    assert_eq!(
        (replicate.level.as_str(), replicate.launches.len()),
        ("data", 1)
    );
    let c = &replicate.launches[0].counts;
    assert!(c.sectors <= c.ideal_sectors + c.requests, "{c:#?}");
}

#[test]
fn a_transpose_between_kernels_is_made_on_the_device_and_coalesced() {
    if !available() {
        return;
    }
    // Rows of whole sectors (multiples of 8 floats) that end in partial tiles.
    let (n, m) = (296, 200);
    let xs = Array::from_f32(vec![n, m], (0..n * m).map(|i| i as f32).collect());
    let report = model("flip", vec![Value::Array(xs.expect("shape"))], "h100", None);
    // Up: the input; back: the result; the transposed array crosses no bus.
    let copied: u64 = report.kernels.iter().map(|k| k.copied_bytes).sum();
    let arrays = 2 * 4 * (n * m) as u64;
    assert!(
        (arrays..arrays + 4096).contains(&copied),
        "{copied} bytes copied: {report:#?}"
    );
    let transpose = report
        .kernels
        .iter()
        .find(|k| k.name == "og_transpose_4")
        .unwrap_or_else(|| panic!("no tiled transpose: {report:#?}"));
    assert_eq!(transpose.level, "data");
    // A warp reads and writes 32 consecutive floats of a tile's row (8 at the matrix's edge):
    // whole sectors, the ideal.
    let c = &transpose.launches[0].counts;
    assert_eq!(c.sectors, c.ideal_sectors, "{c:#?}");
}

#[test]
fn sampling_changes_no_output_and_slower_memory_takes_longer() {
    if !available() {
        return;
    }
    let all = model("scale", vec![floats(1 << 13)], "h100", None);
    let sampled = model("scale", vec![floats(1 << 13)], "h100", Some(4));
    let kernel_seconds = |r: &Report| -> f64 {
        r.kernels
            .iter()
            .flat_map(|k| &k.launches)
            .map(|l| l.estimate.seconds)
            .sum()
    };
    // Every warp of the map does the same: sampling scales the counts exactly.
    let counts = |r: &Report| r.kernels[0].launches[0].counts;
    assert_eq!(counts(&all).sectors, counts(&sampled).sectors);
    let big = || vec![floats(1 << 22)];
    let h200 = model("scale", big(), "h200", Some(32));
    let turing = model("scale", big(), "rtx2080ti", Some(32));
    // A stream: every byte read and written crosses DRAM once.
    let dram = counts(&h200).dram_bytes / (32 << 20) as f64;
    assert!(
        (0.98..1.05).contains(&dram),
        "DRAM bytes / bytes streamed: {dram}"
    );
    assert!(kernel_seconds(&turing) > 2.0 * kernel_seconds(&h200));
    // The DRAM limit alone follows the bandwidths (4.8 TB/s against 0.616): the whole estimate
    // also holds latency terms, which depend on how the host's threads interleave the blocks.
    let dram_limit = |r: &Report| -> f64 {
        r.kernels[0].launches[0]
            .estimate
            .terms
            .iter()
            .find(|(_, name)| *name == "DRAM")
            .map(|(t, _)| *t)
            .expect("a DRAM term")
    };
    let ratio = dram_limit(&turing) / dram_limit(&h200);
    assert!((7.0..8.5).contains(&ratio), "DRAM limits' ratio {ratio}");
}

#[test]
fn block_level_reductions_shuffle_in_blocks_that_follow_an_exact_operators_width() {
    if !available() {
        return;
    }
    let (n, m) = (64, 33);
    let ints = Array::from_i64(
        vec![n, m],
        (0..n * m).map(|i| (i as i64 * 7) % 11 - 4).collect(),
    );
    // Quarters, whose sums are exact: the block's tree adds them in another order than the
    // interpreter's fold.
    let floats = Array::from_f64(
        vec![n, m],
        (0..n * m).map(|i| (i % 9) as f64 * 0.25).collect(),
    );
    // The last version of every choice: one block per row.
    let last = Thresholds::uniform(i64::MAX);
    for (entry, xs, threads) in [("lastpos", ints, 64), ("fsum", floats, 256)] {
        let xs = Value::Array(xs.expect("shape"));
        let report = model_with(entry, vec![xs], "h100", None, &last);
        let launches: Vec<_> = report.kernels.iter().flat_map(|k| &k.launches).collect();
        assert_eq!(launches.len(), 1, "{report:#?}");
        let c = &launches[0].counts;
        assert_eq!(launches[0].blocks, n as i64, "{entry}");
        assert_eq!(
            c.warps,
            (n * threads / 32) as f64,
            "{entry}: threads per block"
        );
        // Per row, every thread shuffles at the five steps within its warp, then at the steps
        // over the warps' totals (one for 2 warps, three for 8).
        let steps = if threads == 64 { 5 + 1 } else { 5 + 3 };
        assert_eq!(
            c.shuffles,
            (n * threads * steps / 32) as f64,
            "{entry}: shuffles"
        );
    }
}

#[test]
fn a_thread_level_kernel_of_many_registers_runs_in_the_blocks_that_hold_the_most_warps() {
    if !available() {
        return;
    }
    // More points than the H200's SMs hold at once, so that the grid does not limit them.
    let n = 50_000;
    let xs = Array::from_f64(vec![n], (0..n).map(|i| (i % 13) as f64 * 0.01).collect());
    let report = model(
        "heavy",
        vec![Value::Array(xs.expect("shape"))],
        "h200",
        Some(16),
    );
    // The registers come from ptxas's report: without NVRTC the model assumes a count, and
    // there is nothing to test (CI installs NVRTC, so it must not skip there).
    if let Some(why) = &report.assumed_registers {
        return skip(why);
    }
    let launches: Vec<_> = report.kernels.iter().flat_map(|k| &k.launches).collect();
    assert_eq!(launches.len(), 1, "{report:#?}");
    let (resources, occupancy) = (launches[0].resources, launches[0].occupancy);
    let registers = resources.registers;
    // From 129 to 232 registers an SM holds 9 to 15 warps, but one block of 256 threads (8).
    assert!(
        (129..=232).contains(&registers),
        "the test needs a kernel of 129 to 232 registers, not {registers}"
    );
    assert_eq!(occupancy.limit, "registers", "{occupancy:?}");
    assert!(
        occupancy.warps_per_sm > 8,
        "{registers} registers: {occupancy:?}"
    );
    // ptxas gives it 212 registers (9 warps per SM); the executor compiles it again under the
    // caps that add warps (docs/cuda.md, "Register caps") and keeps the lowest that spills
    // nothing more.
    let cap = resources
        .cap
        .expect("a kernel under 16 warps per SM is capped");
    assert!(registers <= cap as i64, "{resources:?}");
    assert_eq!(resources.spilled, 0, "{resources:?}");
    assert!(occupancy.warps_per_sm > 9, "{resources:?}: {occupancy:?}");
}

#[test]
fn the_executors_parts_of_a_thread_per_row_fill_the_gpu() {
    if !available() {
        return;
    }
    let ir = program_ir();
    // 69 MB: the executor plans two parts of 2,112 rows (a round of the H200's 132
    // multiprocessors), each under a wave of the kernels.
    let side = |entry: &str, args: &[Value]| {
        let (_, report) = on_h200_in_parts(&ir, entry, args, PartRows::Auto);
        report.side.map(|s| s.copies)
    };
    let args = vec![rows(4_224, 4_096)];
    // Reading two elements a row, the parts are as planned (each part up, its output down).
    assert_eq!(side("ends", &args), Some(4));
    // A thread per row with nested sequential work: two parts would take two waves, whose
    // time each is a row's work, where the whole run takes one; it runs whole.
    assert_eq!(side("nested", &args), None);
    // 69 MB again, in 67,584 rows: two waves of 256 threads per SM, but one wave of the 64
    // warps per SM that the kernel's few registers let an SM hold. Its waves are counted at
    // its own occupancy, so the two parts planned would take two waves where the whole run
    // takes one: it runs whole.
    assert_eq!(side("nested", &[rows(67_584, 256)]), None);
}

#[test]
fn parts_of_rows_copy_beside_the_kernels() {
    if !available() {
        return;
    }
    let fe =
        Frontend::load_source("model.og", &program()).unwrap_or_else(|e| panic!("{}", e.render()));
    let ir = program_ir();
    let (m, n) = (64, 4096);
    let bytes = (m * n * 4) as u64;
    let args = vec![rows(m, n)];
    let run = |part_rows| on_h200_in_parts(&ir, "rowwork", &args, part_rows);
    let (whole_outputs, whole) = run(PartRows::Whole);
    let (outputs, parts) = run(PartRows::Rows(16));
    assert_eq!(outputs, whole_outputs);
    let expected = Backend::Interp
        .run(&fe, "rowwork", args.clone(), None)
        .expect("interp");
    assert_eq!(outputs, expected);
    assert!(whole.side.is_none());
    // Four parts: each one's input up and its output down, beside the kernels.
    let side = parts.side.expect("side copies");
    assert_eq!((side.copies, side.bytes), (8, 2 * bytes), "{side:?}");
    let main_bytes: u64 = parts.kernels.iter().map(|k| k.copied_bytes).sum();
    assert!(
        main_bytes < bytes / 16,
        "the main queue copied {main_bytes} bytes"
    );
    let total = parts.total_seconds();
    assert!(
        total >= parts.main_seconds() && total >= side.end,
        "{total} {side:?}"
    );
    assert!(
        total < parts.main_seconds() + side.seconds,
        "copies overlap kernels: {total} against {} + {}",
        parts.main_seconds(),
        side.seconds
    );
}
