//! The CPU backend beyond the corpus: `#[unsafe]` definitions and indices proven in range lose
//! their bounds checks, other code keeps them; compiled libraries (`ogham build`) round-trip; SIMD map kernels agree with
//! the interpreter bit for bit and leave out-of-bounds reads to the checked scalar code.

use ogham::codegen::cpu::CPU;
use ogham::{Backend, Frontend};
use ogham_compiler::back::cpu::compile;
use ogham_compiler::pipeline::Options;

fn load(source: &str) -> Frontend {
    Frontend::load_source("test.og", source).unwrap_or_else(|e| panic!("{}", e.render()))
}

/// The number of failure exits in the generated code of `source`.
fn checks(source: &str) -> usize {
    let fe = load(source);
    let ir = fe
        .compile_kernel(Options::KERNEL)
        .expect("the program compiles");
    // A failure exit is a cold block with the failure's details as parameters (the blocks
    // that branch to them from the entry have none: `Gen::check`).
    let exit = regex::Regex::new(r"(?m)^block\d+\(.*\) cold:$").expect("a valid pattern");
    exit.find_iter(&compile(&ir).print()).count()
}

const CHECKED: &str = "
def gather [n] (xs: [n]f32) (is: [n]i64) : [n]f32 = map (\\i -> xs[i]) is
entry main [n] (xs: [n]f32) (is: [n]i64) : [n]f32 = gather xs is
";

/// Kernel `name` of `source` after Cranelift's optimisations (before register allocation), for
/// the host CPU as the runtime compiles it, with its loop analysis.
fn optimised_kernel(source: &str, name: &str) -> cranelift_codegen::Context {
    use cranelift_codegen::settings::{self, Configurable};
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").expect("a setting");
    let isa = cranelift_native::builder()
        .expect("the host is supported")
        .finish(settings::Flags::new(flags))
        .expect("the host's ISA");
    let ir = load(source)
        .compile_kernel(Options::KERNEL)
        .expect("the program compiles");
    let kernel = compile(&ir)
        .segs
        .into_iter()
        .filter_map(|seg| seg.kernel.ok())
        .find(|kernel| kernel.name == name)
        .expect("the kernel is compiled");
    let mut ctx = cranelift_codegen::Context::for_function(kernel.func);
    ctx.optimize(&*isa, &mut Default::default())
        .expect("Cranelift optimises the kernel");
    ctx.compute_cfg();
    ctx.compute_domtree();
    ctx.compute_loop_analysis();
    ctx
}

/// Cranelift hoists values that do not change in a loop out of it, also after a bounds check
/// in the loop, whose failure exit is outside the loop (`Gen::check`). In the thread-level
/// kernel (one row per point), the row's `scale` is computed before the loop of its map, not
/// once per element: before the fix, the division's loop computed both square roots.
#[test]
fn loop_invariant_values_stay_out_of_checked_loops() {
    use cranelift_codegen::ir::Opcode;
    let source = "
entry main [m][n] (xss: [m][n]f32) (w: i64) : [m]f32 =
  map (\\xs -> let prefix = scan (+) 0f32 xs
              let scale = f32.sqrt (reduce (+) 0f32 xs) * f32.sqrt (f32.i64 n)
              in reduce (+) 0f32
                        (map (\\i -> let s = if i >= w then prefix[i] - prefix[i - w] else prefix[i]
                                     in s / scale)
                             (iota n)))
      xss
";
    let ctx = optimised_kernel(source, "main_k0");
    let f = &ctx.func;
    let blocks_with = |op: Opcode| -> Vec<_> {
        f.layout
            .blocks()
            .filter(|b| {
                f.layout
                    .block_insts(*b)
                    .any(|i| f.dfg.insts[i].opcode() == op)
            })
            .collect()
    };
    let [division] = blocks_with(Opcode::Fdiv)[..] else {
        panic!("one block divides:\n{}", f.display());
    };
    let lp = ctx
        .loop_analysis
        .innermost_loop(division)
        .expect("the division is in the map's loop");
    for sqrt in blocks_with(Opcode::Sqrt) {
        assert!(
            !ctx.loop_analysis.is_in_loop(sqrt, lp),
            "a square root is computed in the loop of the division:\n{}",
            f.display()
        );
    }
}

#[test]
fn unsafe_definitions_have_no_bounds_checks() {
    let unchecked = CHECKED.replace("def gather", "#[unsafe]\ndef gather");
    assert!(
        checks(CHECKED) >= 1,
        "the checked program has a bounds check"
    );
    assert_eq!(checks(&unchecked), checks(CHECKED) - 1);
}

/// A kernel whose per-row loop reads `xs[i]` and writes `out[k]` (`k` the compaction's count).
const COMPACTION: &str = "
entry main [m][n] (xss: [m][n]f32) : [m][n]f32 =
  map (\\xs -> (loop (k, out) = (0i64, replicate n 0f32) for i < n do
                 if xs[i] > 0 then (k + 1, out with [k] = xs[i]) else (k, out)).1) xss
";

#[test]
fn proven_indices_have_no_bounds_checks() {
    // The loop's index, the counter and the kernel's point index are proven in range: what
    // is left are checks of sizes and allocations, no index check.
    let proven = checks(COMPACTION);
    // A counter that may grow by 2 keeps its check; in a loop one longer than the row, both
    // indices do.
    let by_two = COMPACTION.replace("k + 1", "k + 2");
    let longer = COMPACTION.replace("for i < n", "for i < n + 1");
    assert_eq!(checks(&by_two), proven + 1);
    assert_eq!(checks(&longer), proven + 2);
    // In the branch where `i < n` holds, `xs[i]` is proven too; with `i <= n` it is not.
    let pad = "entry main [m][n] (xss: [m][n]f32) (k: i64) : [m][k]f32 =
      map (\\xs -> map (\\i -> if i < n then xs[i] else 0) (iota k)) xss";
    assert!(checks(&pad.replace("i < n", "i <= n")) > checks(pad));
    let flipped = pad.replace("if i < n then xs[i] else 0", "if i >= n then 0 else xs[i]");
    assert_eq!(checks(&flipped), checks(pad));
}

#[test]
fn repeated_checks_on_a_straight_line_are_emitted_once() {
    // BFAST's residuals: interleaved dot products of gathered rows with a uniform vector. Each
    // interleaved iteration checks its inputs' rows against the reduction's width; for a
    // uniform input that is the same comparison in every iteration of a block of 8 or 4 (and
    // once more in the remainder's loop), so another uniform input costs one check per block,
    // not one per iteration: 3 per version of the kernel that interleaves (2 versions), 26
    // with every repeat, and 1 in the block-level version with one block per (x, key)
    // (`suff_block_par_0`), which reduces one row.
    let one = "entry main [m][N][p][nv] (xs: [m][N][p]f32) (keys: [nv]i64) (b: [p]f32)
                 (c: [p]f32) : [m][nv]f32 =
      map (\\x -> map (\\key -> reduce (+) 0f32 (map2 (*) x[key] b)) keys) xs";
    let two = one.replace(
        "map2 (*) x[key] b",
        "map3 (\\u v w -> u * v * w) x[key] b c",
    );
    let extra = checks(&two) - checks(one);
    assert!(
        (1..=7).contains(&extra),
        "{extra} more checks for one more uniform input"
    );
}

#[test]
fn checked_code_reports_out_of_bounds_indices() {
    let fe = load(CHECKED);
    let args = vec![
        ogham_runtime::value::Value::Array(
            ogham_runtime::value::Array::from_f32(vec![2], vec![1.0, 2.0]).expect("shape"),
        ),
        ogham_runtime::value::Value::Array(
            ogham_runtime::value::Array::from_i64(vec![2], vec![1, 5]).expect("shape"),
        ),
    ];
    let err = Backend::Cpu
        .run(&fe, "main", args, None)
        .expect_err("index 5 is out of bounds");
    assert_eq!(err.code, "R0702");
    assert!(
        err.message.contains("index 5 out of bounds"),
        "{}",
        err.message
    );
}

/// A library written by `ogham build`'s code path, loaded back, gives the same outputs as the
/// program run from source (NaN constants included), and damaged files are rejected.
#[test]
fn libraries_round_trip() {
    use ogham_runtime::library::Library;
    use ogham_runtime::value::{Array, Value};
    let source = "
entry main [n] (xs: [n]f32) : ([n]f32, f32) =
  let ys = map (\\x -> if x > 2 then f32.nan else x * 2) xs
  in (ys, reduce (+) 0 (map (\\y -> if f32.isnan y then 0 else y) ys))
";
    let fe = load(source);
    let program = fe
        .compile_kernel(Options::KERNEL)
        .expect("the program compiles");
    let dir = std::env::temp_dir().join(format!("ogham-lib-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("test.ogl");
    Library::new(fe.sources.clone(), program, CPU)
        .save(&path)
        .expect("saved");
    let lib = Library::load(&path, CPU).expect("loaded");
    assert_eq!(lib.entries().map(|(n, _)| n).collect::<Vec<_>>(), ["main"]);
    let xs = || {
        vec![Value::Array(
            Array::from_f32(vec![3], vec![1.0, 2.0, 3.0]).expect("shape"),
        )]
    };
    let from_lib = lib.call("main", xs()).expect("runs");
    let from_source = Backend::Cpu.run(&fe, "main", xs(), None).expect("runs");
    assert_eq!(format!("{from_lib:?}"), format!("{from_source:?}"));
    assert!(format!("{from_lib:?}").contains("NaN"), "{from_lib:?}");
    let text = std::fs::read_to_string(&path).expect("readable");
    let version = format!("\"version\":{}", ogham_runtime::library::VERSION);
    std::fs::write(&path, text.replace(&version, "\"version\":99")).expect("written");
    let err = Library::load(&path, CPU)
        .err()
        .expect("a newer version is rejected");
    assert!(err.contains("version 99"), "{err}");
    std::fs::write(&path, "{}").expect("written");
    assert!(Library::load(&path, CPU).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A straight-line f32/i32 map: NaN, infinities, signed zeros, saturating conversions,
/// `min`/`max` with NaN, an `if` as a lane select, a uniform operand.
const VECTOR_MAP: &str = "
entry main [n] (xs: [n]f32) (ys: [n]i32) (c: f32) : ([n]f32, [n]i32) =
  unzip (map2 (\\x y -> let z = if x > c then f32.sqrt x else f32.min x (f32.i32 y)
                        in (f32.max (2 * z + 1) (x / 0) - f32.round (x * 0.7),
                            i32.max y (i32.f32 (x * 3e9)) * 3 - (y & 5))) xs ys)
";

fn vector_inputs(n: usize) -> Vec<ogham_runtime::value::Value> {
    use ogham_runtime::value::{Array, ArrayData, Scalar, Value};
    let special = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        0.0,
        1e30,
        -1e-30,
    ];
    let xs: Vec<f32> = (0..n)
        .map(|i| {
            if i % 5 == 0 {
                special[(i / 5) % special.len()]
            } else {
                (i as f32 * 0.37).sin() * 10.0
            }
        })
        .collect();
    let mut ys = ArrayData::with_capacity(ogham_ir::types::PrimType::I32, n);
    for i in 0..n {
        ys.push(Scalar::I32((i as i32 * 7919) % 201 - 100))
            .expect("i32");
    }
    vec![
        Value::Array(Array::from_f32(vec![n], xs).expect("shape")),
        Value::Array(Array::new(vec![n], ys).expect("shape")),
        Value::Scalar(Scalar::F32(1.5)),
    ]
}

#[test]
fn vector_maps_agree_with_the_interpreter_bit_for_bit() {
    let fe = load(VECTOR_MAP);
    let ir = fe
        .compile_kernel(Options::KERNEL)
        .expect("the program compiles");
    assert!(
        compile(&ir).print().contains("load.f32x4"),
        "the map kernel is vectorised"
    );
    // Lengths around multiples of four (vector iterations and scalar remainders), and one long
    // enough to be split across the workers.
    for n in [0, 1, 3, 4, 5, 8, 11, 1003, 100_003] {
        let args = vector_inputs(n);
        let want = Backend::Interp
            .run(&fe, "main", args.clone(), None)
            .expect("interp runs");
        let got = Backend::Cpu.run(&fe, "main", args, None).expect("cpu runs");
        // Bit patterns (NaN payloads and signed zeros included), not a tolerance.
        assert_eq!(bits(&want), bits(&got), "n = {n}");
    }
}

/// The elements of array values as bit patterns.
fn bits(values: &[ogham_runtime::value::Value]) -> Vec<Vec<u64>> {
    use ogham_runtime::value::{ArrayData, Value};
    values
        .iter()
        .map(|v| match v {
            Value::Array(a) => match a.data() {
                ArrayData::F32(xs) => xs.iter().map(|x| x.to_bits() as u64).collect(),
                ArrayData::I32(xs) => xs.iter().map(|x| *x as u32 as u64).collect(),
                other => panic!("unexpected output {other:?}"),
            },
            other => panic!("unexpected output {other:?}"),
        })
        .collect()
}

#[test]
fn vector_maps_report_out_of_bounds_reads() {
    use ogham_runtime::value::{Array, Value};
    let fe = load(
        "entry main [n] [m] (xs: [n]f32) (ys: [m]f32) : [n]f32 = \
           map (\\i -> xs[i] + ys[i]) (iota n)",
    );
    let ir = fe
        .compile_kernel(Options::KERNEL)
        .expect("the program compiles");
    assert!(compile(&ir).print().contains("load.f32x4"));
    let f32s = |n: usize| Value::Array(Array::from_f32(vec![n], vec![1.0; n]).expect("shape"));
    let sums = Backend::Cpu
        .run(&fe, "main", vec![f32s(9), f32s(9)], None)
        .expect("in bounds");
    assert_eq!(bits(&sums), vec![vec![2f32.to_bits() as u64; 9]]);
    let err = Backend::Cpu
        .run(&fe, "main", vec![f32s(9), f32s(6)], None)
        .expect_err("index 6 is out of bounds");
    assert_eq!(err.code, "R0702");
    assert!(
        err.message.contains("index 6 out of bounds"),
        "{}",
        err.message
    );
}

/// A definition over a constrained type parameter compiles, at each type it is used at, to the
/// very code of the same definition written for that type: the type checker's instantiations
/// specialise it during lowering, with no trace left in the kernels.
#[test]
fn numeric_generics_compile_like_hand_specialised_code() {
    const GENERIC: &str = "
def scale ('t: float) [n] (xs: [n]t) (k: i64) : [n]t =
  let m = reduce max (-t.inf) xs
  in map (\\x -> if isnan x then t.nan else (x - m) * t.i64 k + 0.5) xs
def total ('t: num) [n] (xs: [n]t) : t = reduce (+) 0 xs
entry main [n] (a: [n]f32) (b: [n]f64) (c: [n]i32) : ([n]f32, [n]f64, i32, f64) =
  (scale a 3, scale b 4, total c, f64.f32 (total a))
";
    const HAND: &str = "
def scale_f32 [n] (xs: [n]f32) (k: i64) : [n]f32 =
  let m = reduce max (-f32.inf) xs
  in map (\\x -> if isnan x then f32.nan else (x - m) * f32.i64 k + 0.5f32) xs
def scale_f64 [n] (xs: [n]f64) (k: i64) : [n]f64 =
  let m = reduce max (-f64.inf) xs
  in map (\\x -> if isnan x then f64.nan else (x - m) * f64.i64 k + 0.5f64) xs
def total_i32 [n] (xs: [n]i32) : i32 = reduce (+) 0i32 xs
def total_f32 [n] (xs: [n]f32) : f32 = reduce (+) 0f32 xs
entry main [n] (a: [n]f32) (b: [n]f64) (c: [n]i32) : ([n]f32, [n]f64, i32, f64) =
  (scale_f32 a 3, scale_f64 b 4, total_i32 c, f64.f32 (total_f32 a))
";
    let clif = |source: &str| {
        let ir = load(source)
            .compile_kernel(Options::KERNEL)
            .expect("the program compiles");
        compile(&ir).print()
    };
    let generic = clif(GENERIC);
    assert!(
        generic.contains("fmul") && generic.contains("iadd"),
        "{generic}"
    );
    assert_eq!(generic, clif(HAND));
}

/// The Rust API: scalars convert into values by their Rust type, and an entry's signature
/// prints as it is written.
#[test]
fn rust_api_conversions_and_signature_display() {
    use ogham_runtime::value::{Scalar, Value};
    assert_eq!(Value::from(46i64), Value::Scalar(Scalar::I64(46)));
    assert_eq!(
        Value::from(Scalar::from(1.5f32)),
        Value::Scalar(Scalar::F32(1.5))
    );
    let fe = load("entry main [n] (xs: [n]f32) (k: i64) : ([n]f32, i64) = (xs, k)");
    let ir = fe
        .compile_kernel(Options::KERNEL)
        .expect("the program compiles");
    assert_eq!(
        ir.functions[0].signature.to_string(),
        "(xs: [n]f32) (k: i64) : ([n]f32, i64)"
    );
    let out = Backend::Cpu
        .run(
            &fe,
            "main",
            vec![
                Value::from(
                    ogham_runtime::value::Array::from_f32(vec![1], vec![2.0]).expect("shape"),
                ),
                3i64.into(),
            ],
            None,
        )
        .expect("runs");
    assert_eq!(out[1], Value::from(3i64));
}
