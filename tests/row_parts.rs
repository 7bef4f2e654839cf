//! Entry points run in parts of rows (`ogham_ir::rows`, `ogham_runtime::ireval::parts`):
//! which entry points the analysis finds separable and why others are not, and which launch a
//! thread per row (whose parts must each fill the device); on the CUDA
//! emulator, outputs in parts byte-identical to the whole run's (STL; a float sum per row whose
//! launch plan depends on the number of rows), a run-time error reported exactly as by the
//! whole run, and a later part that runs out of arena without being waited for (it runs
//! again).
//!
//! The emulator needs `g++`; without it the run tests report themselves skipped, except under
//! CI, where that is a failure.

use ogham::codegen::cuda::CUDA;
use ogham::{Backend, Frontend};
use ogham_compiler::pipeline::Options;
use ogham_ir::rows::row_split;
use ogham_runtime::cuda::run_emulated_in_parts;
use ogham_runtime::ireval::Thresholds;
use ogham_runtime::ireval::parts::PartRows;
use ogham_runtime::value::{Array, Value};
use std::path::Path;

const PROGRAM: &str = "
entry fsum [m][n] (xss: [m][n]f64) : [m]f64 = map (\\xs -> reduce (+) 0f64 xs) xss
entry scaled [m][n] (xss: [m][n]f32) (k: f32) : ([m][n]f32, [m]f32) =
  (map (map (\\x -> x * k)) xss, map (\\xs -> xs[0]) xss)
entry pick [m][n] (xss: [m][n]i64) (j: i64) : [m]i64 = map (\\xs -> xs[j + xs[0]]) xss
entry total [m][n] (xss: [m][n]f64) : f64 = reduce (+) 0f64 (map (\\xs -> xs[0]) xss)
entry numbered [m][n] (xss: [m][n]f64) : [m]f64 = map2 (\\xs i -> xs[0] + f64.i64 i) xss (iota m)
entry shifted [m][n] (xss: [m][n]f64) : [m]f64 = map (\\i -> xss[(i + 1) % m, 0]) (iota m)
entry flipped [m][n] (xss: [m][n]f64) : [n][m]f64 = transpose xss
entry grown [m][n] (xss: [m][n]i64) : [m]f64 =
  map (\\xs -> let k = xs[0]
               let a = map (\\i -> f64.i64 (i + xs[1])) (iota k)
               in loop s = 0f64 for i < k do s * 0.5f64 + a[k - 1 - i]) xss
";

fn kernel_ir(fe: &Frontend) -> ogham_ir::kir::Program {
    fe.compile_kernel(Options::KERNEL)
        .unwrap_or_else(|e| panic!("{}", e.message))
}

fn load(name: &str) -> Frontend {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../programs")
        .join(name);
    Frontend::load(&path).unwrap_or_else(|e| panic!("{}", e.render()))
}

fn program() -> (Frontend, ogham_ir::kir::Program) {
    let fe = Frontend::load_source("rows.og", PROGRAM).unwrap_or_else(|e| panic!("{}", e.render()));
    let ir = kernel_ir(&fe);
    (fe, ir)
}

fn split(ir: &ogham_ir::kir::Program, entry: &str) -> Result<(), String> {
    let f = ir
        .functions
        .iter()
        .find(|f| f.name == entry)
        .expect("entry");
    row_split(f).map(|_| ())
}

fn available() -> bool {
    match Backend::CudaEmu.unavailable() {
        None => true,
        Some(why) => {
            assert!(std::env::var_os("CI").is_none(), "under CI: {why}");
            eprintln!("skipped: {why}");
            false
        }
    }
}

#[test]
fn row_maps_split_and_whole_array_computations_do_not() {
    let (_, ir) = program();
    for entry in ["fsum", "scaled", "pick"] {
        assert_eq!(split(&ir, entry), Ok(()), "{entry}");
    }
    for (entry, why) in [
        ("total", "across rows"),
        ("numbered", "computes with the rows"),
        ("shifted", "computes with the rows"),
        ("flipped", "computes with the rows"),
    ] {
        let e = split(&ir, entry).expect_err(entry);
        assert!(e.contains(why), "{entry}: {e}");
    }
}

#[test]
fn stl_and_bfast_split_along_their_series() {
    for (program, entries) in [
        ("stl.og", &["main", "main_f64", "fill_f64"][..]),
        ("bfast.og", &["main", "main_f64"][..]),
    ] {
        let ir = kernel_ir(&load(program));
        for entry in entries {
            let f = ir
                .functions
                .iter()
                .find(|f| f.name == *entry)
                .expect("entry");
            let s = row_split(f).unwrap_or_else(|e| panic!("{program} {entry}: {e}"));
            assert_eq!(s.param, 0, "{program} {entry}");
        }
    }
}

#[test]
fn bfasts_pixels_run_on_a_thread_each_and_stls_series_on_a_block_each_below_the_threshold() {
    // Thresholds on the rows decided as by their defaults for `rows` rows.
    let per_row = |program: &str, entry: &str, rows: i64| {
        let ir = kernel_ir(&load(program));
        let f = ir
            .functions
            .iter()
            .find(|f| f.name == entry)
            .expect("entry");
        let split = row_split(f).expect("separable");
        split
            .threads_per_row(f, |id| {
                let t = ir.thresholds.iter().find(|t| t.id == id).expect("declared");
                rows >= t.default
            })
            .len()
    };
    // BFAST's per-pixel kernel has no other version: its parts must each fill the GPU.
    assert_eq!(per_row("bfast.og", "main", 16_384), 1);
    assert_eq!(per_row("bfast.og", "main_f64", 16_384), 1);
    // STL runs a series per block under 32,768 series, a thread per series from there: the
    // seasonal and the trend loess of each of its passes.
    assert_eq!(per_row("stl.og", "main_f64", 20_000), 0);
    assert!(per_row("stl.og", "main_f64", 186_624) >= 2);
}

#[test]
fn bfast_in_parts_equals_bfast_whole() {
    if !available() {
        return;
    }
    let ir = kernel_ir(&load("bfast.og"));
    let (m, n) = (7, 64);
    let data: Vec<f32> = (0..m * n)
        .map(|i| {
            let (p, t) = (i / n, (i % n) as f32);
            let shift = if p % 2 == 1 && t >= 40.0 { 0.8 } else { 0.0 };
            if (i * 13) % 10 < 3 {
                f32::NAN
            } else {
                (t * 0.27).sin() + shift + ((i * 37) % 17) as f32 * 0.02
            }
        })
        .collect();
    let scalar = Value::Scalar;
    use ogham_runtime::value::Scalar::{Bool, F64, I64};
    let args = vec![
        Value::Array(Array::from_f32(vec![m, n], data).expect("shape")),
        scalar(I64(32)),
        scalar(F64(23.0)),
        scalar(F64(2000.0)),
        scalar(I64(3)),
        scalar(Bool(true)),
        scalar(F64(0.25)),
        scalar(I64(10)),
        scalar(F64(0.05)),
        scalar(F64(f64::NAN)),
    ];
    let whole = run(&ir, "main", args.clone(), None).expect("whole");
    let parts = run(&ir, "main", args, Some(3)).expect("parts");
    assert_eq!(parts, whole, "identical in parts");
}

/// Runs `entry` on the emulator, in parts of `part_rows` rows or whole; the outputs' `Debug`
/// text (which tells apart every float but NaN payloads: `-0.0`, `NaN`), or the error's code,
/// message and location. Checks that it ran in `ceil(rows / part_rows)` parts when it did not
/// fail.
fn run(
    ir: &ogham_ir::kir::Program,
    entry: &str,
    args: Vec<Value>,
    part_rows: Option<usize>,
) -> Result<String, String> {
    let rows = part_rows.map_or(PartRows::Whole, PartRows::Rows);
    let Value::Array(input) = &args[0] else {
        panic!("the first argument is the rows")
    };
    let expected_parts = part_rows.map_or(1, |p| input.shape()[0].div_ceil(p));
    let (outputs, parts) =
        run_emulated_in_parts(CUDA, ir, entry, args, &Thresholds::default(), rows)
            .map_err(|e| format!("{} {} {:?} {:?}", e.code, e.message, e.primary, e.notes))?;
    assert_eq!(parts, expected_parts, "{entry}: parts run");
    Ok(format!("{outputs:?}"))
}

#[test]
fn a_float_sum_per_row_is_planned_with_the_whole_row_count() {
    if !available() {
        return;
    }
    let (_, ir) = program();
    // Few rows: each row's sum is cut into chunks, as many as the whole run's row count gives.
    let (m, n) = (40, 3000);
    let data: Vec<f64> = (0..m * n)
        .map(|i| ((i * 7919) % 1000) as f64 * 1e-3 + 1e-9)
        .collect();
    let xss = Value::Array(Array::from_f64(vec![m, n], data).expect("shape"));
    let whole = run(&ir, "fsum", vec![xss.clone()], None).expect("whole");
    for part_rows in [1, 7, 39] {
        let parts = run(&ir, "fsum", vec![xss.clone()], Some(part_rows)).expect("parts");
        assert_eq!(parts, whole, "{part_rows} rows per part");
    }
}

#[test]
fn two_outputs_and_a_scalar_argument_come_back_in_place() {
    if !available() {
        return;
    }
    let (fe, ir) = program();
    let (m, n) = (11, 5);
    let xss = Array::from_f32(vec![m, n], (0..m * n).map(|i| i as f32).collect()).expect("shape");
    let args = vec![
        Value::Array(xss),
        Value::Scalar(ogham_runtime::value::Scalar::F32(0.5)),
    ];
    let whole = run(&ir, "scaled", args.clone(), None).expect("whole");
    let parts = run(&ir, "scaled", args.clone(), Some(4)).expect("parts");
    assert_eq!(parts, whole);
    let interp = Backend::Interp
        .run(&fe, "scaled", args, None)
        .expect("interp");
    assert_eq!(parts, format!("{interp:?}"));
}

#[test]
fn an_error_in_a_later_part_is_reported_as_by_the_whole_run() {
    if !available() {
        return;
    }
    let (_, ir) = program();
    let (m, n) = (20, 4);
    // Row 13 reads past its end: its first element says where to read.
    let data: Vec<i64> = (0..m * n)
        .map(|i| if i == 13 * n { 9 } else { 0 })
        .collect();
    let args = vec![
        Value::Array(Array::from_i64(vec![m, n], data).expect("shape")),
        Value::Scalar(ogham_runtime::value::Scalar::I64(1)),
    ];
    let whole = run(&ir, "pick", args.clone(), None).expect_err("out of bounds");
    let parts = run(&ir, "pick", args, Some(3)).expect_err("out of bounds");
    assert_eq!(parts, whole);
}

#[test]
fn a_part_that_runs_out_of_arena_runs_again() {
    if !available() {
        return;
    }
    let (fe, ir) = program();
    // Each row makes an array of as many f64 as its first element says: 10 (80 bytes), except
    // row 13's 20,000 (160 KB, more than a thread's first 64 KiB of arena). The parts' launches
    // are not waited for, so row 13's cannot be launched again with more: its part fails and
    // runs again, waiting.
    let (m, n) = (20, 2);
    let data: Vec<i64> = (0..m * n)
        .map(|i| match (i / n, i % n) {
            (13, 0) => 20_000,
            (_, 0) => 10,
            (r, _) => r as i64,
        })
        .collect();
    let args = vec![Value::Array(
        Array::from_i64(vec![m, n], data).expect("shape"),
    )];
    let rows = PartRows::Rows(3);
    let (outputs, parts) = run_emulated_in_parts(
        CUDA,
        &ir,
        "grown",
        args.clone(),
        &Thresholds::default(),
        rows,
    )
    .unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(parts, 7, "in parts, not whole");
    let interp = Backend::Interp
        .run(&fe, "grown", args, None)
        .expect("interp");
    assert_eq!(format!("{outputs:?}"), format!("{interp:?}"));
}

#[test]
fn stl_in_parts_equals_stl_whole() {
    if !available() {
        return;
    }
    let ir = kernel_ir(&load("stl.og"));
    let (m, n) = (9, 48);
    let data: Vec<f64> = (0..m * n)
        .map(|i| {
            let t = (i % n) as f64;
            if i % 11 == 5 {
                f64::NAN
            } else {
                (t * std::f64::consts::PI / 6.0).sin() + 0.01 * t + ((i * 37) % 17) as f64 * 0.01
            }
        })
        .collect();
    let int = |x: i64| Value::Scalar(ogham_runtime::value::Scalar::I64(x));
    let mut args = vec![Value::Array(
        Array::from_f64(vec![m, n], data).expect("shape"),
    )];
    args.extend([12, 7, 1, 1, 23, 1, 2, 13, 1, 2, 2, 1].map(int));
    args.push(Value::Scalar(ogham_runtime::value::Scalar::Bool(true)));
    let whole = run(&ir, "main_f64", args.clone(), None).expect("whole");
    let parts = run(&ir, "main_f64", args, Some(4)).expect("parts");
    assert_eq!(parts, whole, "identical in parts");
}
