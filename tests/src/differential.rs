//! Differential execution, shared by the property tests (`tests/props.rs`) and the fuzzing
//! harness (`tests/fuzz.rs`): random inputs for an entry point's parameter types, and one
//! program run on the reference interpreter, the unoptimised and optimised core IR, the kernel
//! IR, the CPU backend and (when asked and `g++` is there) the CUDA backend's emulator, which
//! must agree on the outputs (empty arrays with their shapes, but for inner sizes the interpreter
//! cannot know: see [`unknown_inner_sizes`]) or, when the run fails, on the
//! error code. A panic or an internal error (`R0708`) in any of them is a failure. The accepted
//! differences are the two documented ones (reference §13.1): an out-of-bounds index or update,
//! or a division by zero, whose result is unused is dead code that the optimiser removes (the
//! interpreter fails there, the others succeed or fail later with another user error); and
//! fusion, which runs the failing points of two operations interleaved, so a compiled backend
//! may report another user error than the interpreter — accepted only when the same backend,
//! compiled without fusion, reports the interpreter's.
//!
//! Inputs: sizes named alike get the same random value; `i64` scalars are small (they are mostly
//! sizes and shifts) unless [`Inputs::extreme`] asks for values at the edges now and then
//! (negative, 2^32, `i64.max`); floats include NaN and, when extreme, infinities. Arrays have 0
//! to 10 elements per dimension, or 8, 16 or 64 when [`Inputs::wide`] asks for whole groups of
//! SIMD lanes; a wide draw on which the CPU backend takes longer than [`WIDE_BUDGET`] is skipped
//! (the interpreters would take minutes to hours on it).

use ogham::Frontend;
use ogham::testing::compare_outputs;
use ogham_compiler::pipeline::Options;
use ogham_ir::types::{PrimType, Size, Type};
use ogham_runtime::ireval;
use ogham_runtime::value::{Array, ArrayData, Scalar, Value};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A tiny deterministic generator (xorshift) driven by proptest's seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The errors of operations that the optimiser removes when their result is unused (and out of
/// memory, R0709, for the arrays the interpreter builds that compiled code never allocates).
const DEAD_CODE_ERRORS: [&str; 4] = ["R0701", "R0702", "R0703", "R0709"];

/// How inputs are drawn.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs {
    /// `i64` scalars and floats at the edges now and then (negative and huge sizes, infinities).
    pub extreme: bool,
    /// Array extents of 8, 16 or 64 instead of 0 to 10: whole groups of SIMD lanes and ranges
    /// split between worker threads, so the CPU backend's vector code runs every point.
    pub wide: bool,
}

/// `i64` values at the edges of sizes and indices.
const EXTREME_I64: [i64; 8] = [
    -1,
    -2,
    0,
    1 << 32,
    (1 << 32) + 1,
    i64::MAX,
    i64::MIN,
    1 << 62,
];

fn scalar(p: PrimType, rng: &mut Rng, inputs: Inputs) -> Scalar {
    let small = rng.below(9) as i64 - 4;
    let edge = inputs.extreme && rng.below(8) == 0;
    match p {
        PrimType::Bool => Scalar::Bool(rng.below(2) == 1),
        PrimType::I8 => Scalar::I8(small as i8),
        PrimType::I16 => Scalar::I16(small as i16),
        PrimType::I32 if edge => Scalar::I32([i32::MAX, i32::MIN, -1][rng.below(3) as usize]),
        PrimType::I32 => Scalar::I32(small as i32 * 3),
        PrimType::I64 if edge => Scalar::I64(EXTREME_I64[rng.below(8) as usize]),
        PrimType::I64 => Scalar::I64(rng.below(5) as i64 - 1),
        PrimType::U8 => Scalar::U8(rng.below(256) as u8),
        PrimType::F32 if edge => {
            Scalar::F32([f32::INFINITY, f32::NEG_INFINITY, -0.0, 1e30][rng.below(4) as usize])
        }
        PrimType::F32 if rng.below(10) == 0 => Scalar::F32(f32::NAN),
        PrimType::F32 => Scalar::F32(small as f32 * 0.5),
        PrimType::F64 if edge => Scalar::F64(f64::INFINITY),
        PrimType::F64 => Scalar::F64(small as f64 * 0.25),
    }
}

/// A random array extent.
fn extent(rng: &mut Rng, inputs: Inputs) -> usize {
    if inputs.wide {
        [8, 16, 64][rng.below(3) as usize]
    } else {
        rng.below(11) as usize
    }
}

/// A random value of source type `t`; sizes by name from `sizes` (chosen on first use).
pub fn value(t: &Type, rng: &mut Rng, sizes: &mut HashMap<String, usize>, inputs: Inputs) -> Value {
    match t {
        Type::Prim(p) => Value::Scalar(scalar(*p, rng, inputs)),
        Type::Array(..) => {
            let mut shape = Vec::new();
            let mut elem = t;
            while let Type::Array(inner, size) = elem {
                shape.push(match size {
                    Size::Const(n) => *n as usize,
                    Size::Var(name) => *sizes
                        .entry(name.clone())
                        .or_insert_with(|| extent(rng, inputs)),
                    Size::Unknown(_) => extent(rng, inputs),
                });
                elem = inner;
            }
            let Type::Prim(p) = elem else {
                panic!("unsupported parameter element type {elem}")
            };
            let count: usize = shape.iter().product();
            let mut data = ArrayData::with_capacity(*p, count);
            for _ in 0..count {
                data.push(scalar(*p, rng, inputs)).expect("same type");
            }
            Value::Array(Array::new(shape, data).expect("shape matches"))
        }
        other => panic!("unsupported parameter type {other}"),
    }
}

/// The outputs, or the error code of a failed run (`PANIC` when it panicked).
fn outcome(
    run: impl FnOnce() -> Result<Vec<Value>, Box<ogham_ir::diag::Diagnostic>>,
) -> Result<Vec<Value>, String> {
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(outputs)) => Ok(ogham::output_components(outputs)),
        Ok(Err(d)) => Err(d.code.to_string()),
        Err(_) => Err("PANIC".to_string()),
    }
}

/// `got` with the inner sizes of its empty arrays zeroed where the interpreter's are 0: the
/// interpreter knows the inner sizes of an empty `map` result only when its type names them
/// (`[n][m]`, not `[][]`; it never calls the function), so there a 0 means "unknown".
fn unknown_inner_sizes(want: &[Value], got: &[Value]) -> Vec<Value> {
    got.iter()
        .zip(want)
        .map(|(g, w)| match (g, w) {
            (Value::Array(g), Value::Array(w))
                if g.shape().contains(&0) && w.shape().contains(&0) && g.rank() == w.rank() =>
            {
                let shape = g
                    .shape()
                    .iter()
                    .zip(w.shape())
                    .map(|(&gd, &wd)| if wd == 0 { 0 } else { gd })
                    .collect();
                let (_, data) = g.clone().into_parts();
                Value::Array(Array::new(shape, data).expect("still empty"))
            }
            _ => g.clone(),
        })
        .chain(got.iter().skip(want.len()).cloned())
        .collect()
}

/// Whether `code` is an error of the user's program (not an internal error or a panic).
fn user_error(code: &str) -> bool {
    code.starts_with("R07") && code != "R0708"
}

/// What one differential run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every backend gave the interpreter's outputs.
    Agreed,
    /// Every backend failed with the interpreter's error code.
    FailedAlike,
    /// The interpreter failed on an index out of bounds or a division by zero that a compiled
    /// backend removed as dead code (the documented difference, see
    /// `ogham_compiler::opt::simplify`).
    DeadIndex,
    /// The interpreter and a compiled backend failed with different user errors, and the same
    /// backend without fusion fails as the interpreter does: fusion ran the failing points of
    /// two operations interleaved (the documented exception, reference §13.1).
    FusionOrder,
    /// A wide draw ([`Inputs::wide`]) not run: the CPU backend took longer than
    /// [`WIDE_BUDGET`] on it, so the interpreters would take minutes to hours (a program whose
    /// nested SOACs do `n^5` work over 64-element arrays is 10^9 operations).
    TooMuchWork,
}

/// How long the CPU backend may take on a wide draw before the draw is skipped
/// ([`Verdict::TooMuchWork`]): the interpreters are about a thousand times slower. Wall-clock
/// time, so a loaded machine skips a few more draws.
pub const WIDE_BUDGET: std::time::Duration = std::time::Duration::from_millis(20);

/// A compiled variant of the program: its name, options, IR, the backend that runs it and the
/// threshold settings to run it under.
type Variant = (
    &'static str,
    Options,
    ogham_ir::Ir,
    ogham::Backend,
    Vec<ireval::Thresholds>,
);

/// The program compiled for every backend [`check_program`] compares with the interpreter
/// (the CUDA emulator only when `emulate_cuda` and `g++` is there).
fn compile_variants(fe: &Frontend, emulate_cuda: bool) -> Result<Vec<Variant>, String> {
    let variants = [
        (
            "core, unoptimised",
            Options {
                optimise: false,
                verify: true,
                ..Options::CORE
            },
        ),
        (
            "core",
            Options {
                verify: true,
                ..Options::CORE
            },
        ),
        (
            "kir",
            Options {
                verify: true,
                ..Options::KERNEL
            },
        ),
        (
            "cpu",
            Options {
                verify: true,
                ..Options::KERNEL
            },
        ),
        (
            "cuda-emu",
            Options {
                verify: true,
                ..Options::KERNEL
            },
        ),
    ];
    let mut compiled = Vec::new();
    for (name, options) in variants {
        let backend = match name {
            "cpu" => ogham::Backend::Cpu,
            // The CUDA backend's generated code, emulated on the host (needs g++).
            "cuda-emu" if emulate_cuda && ogham::Backend::CudaEmu.unavailable().is_none() => {
                ogham::Backend::CudaEmu
            }
            "cuda-emu" => continue,
            // The IR evaluator, on core or kernel IR.
            _ => ogham::Backend::Kir,
        };
        let ir = match catch_unwind(AssertUnwindSafe(|| fe.compile(options))) {
            Ok(Ok(ir)) => ir,
            Ok(Err(d)) => return Err(format!("{name}: does not compile: {}", d.message)),
            Err(_) => return Err(format!("{name}: the compiler panicked")),
        };
        // Kernel IR under the defaults and with every threshold met (one thread per outer
        // point: the sequential code inside kernels).
        let settings = if options.stop_after == Options::KERNEL.stop_after {
            vec![Default::default(), ireval::Thresholds::uniform(0)]
        } else {
            vec![Default::default()]
        };
        compiled.push((name, options, ir, backend, settings));
    }
    Ok(compiled)
}

/// Runs entry `main` of `source` on every backend (the CUDA emulator when `emulate_cuda` and
/// `g++` is there), once per draw of random inputs in `draws` (a seed and how to draw); `Err`
/// describes the first disagreement, panic or internal error (`R0708`, or a compiler failure).
pub fn check_program(
    source: &str,
    draws: &[(u64, Inputs)],
    emulate_cuda: bool,
) -> Result<Vec<Verdict>, String> {
    let fe = Frontend::load_source("prop.og", source).map_err(|e| e.render())?;
    let entry = fe.entry("main")?.clone();
    let compiled = compile_variants(&fe, emulate_cuda)?;
    // The variants compiled without fusion, when a difference in errors needs them.
    let mut unfused = HashMap::new();
    let mut verdicts = Vec::new();
    for &(seed, inputs) in draws {
        let mut dead_index = false;
        let mut fusion_order = false;
        let mut rng = Rng(seed | 1);
        let mut sizes = HashMap::new();
        let args: Vec<Value> = entry
            .params
            .iter()
            .map(|(_, t)| value(t, &mut rng, &mut sizes, inputs))
            .collect();
        if inputs.wide
            && let Some((_, _, ir, backend, _)) = compiled.iter().find(|c| c.0 == "cpu")
        {
            let start = std::time::Instant::now();
            let _ = outcome(|| backend.run_ir(ir, "main", args.clone(), &Default::default()));
            if start.elapsed() > WIDE_BUDGET {
                verdicts.push(Verdict::TooMuchWork);
                continue;
            }
        }
        let reference = outcome(|| ogham::Backend::Interp.run(&fe, "main", args.clone(), None));
        if let Err(code) = &reference
            && (code == "PANIC" || code == "R0708")
        {
            return Err(format!("interp: {code} on {args:?}"));
        }
        for (name, options, ir, backend, settings) in &compiled {
            for thresholds in settings {
                let got = outcome(|| backend.run_ir(ir, "main", args.clone(), thresholds));
                match (&reference, &got) {
                    (Ok(want), Ok(got)) => {
                        let got = unknown_inner_sizes(want, got);
                        compare_outputs(want, &got, Some(1e-6)).map_err(|e| {
                            format!("{name} ({thresholds:?}) differs from interp on {args:?}: {e}")
                        })?
                    }
                    (Err(a), Err(b)) if a == b => {}
                    // The documented exception (`opt::simplify`): an index, update or
                    // division whose result is unused is dead code, removed even when it would
                    // fail; the run then succeeds or fails later, with another (user) error.
                    (Err(code), got)
                        if DEAD_CODE_ERRORS.contains(&code.as_str())
                            && got.as_ref().err().is_none_or(|c| user_error(c)) =>
                    {
                        dead_index = true;
                    }
                    (Err(want), Err(got))
                        if user_error(want) && user_error(got) && {
                            let ir = match unfused.entry(*name) {
                                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                                std::collections::hash_map::Entry::Vacant(e) => {
                                    let options = Options {
                                        fuse: false,
                                        ..*options
                                    };
                                    e.insert(fe.compile(options).map_err(|d| {
                                        format!("{name}: does not compile unfused: {}", d.message)
                                    })?)
                                }
                            };
                            outcome(|| backend.run_ir(ir, "main", args.clone(), thresholds))
                                .as_ref()
                                == Err(want)
                        } =>
                    {
                        fusion_order = true;
                    }
                    (want, got) => {
                        return Err(format!(
                            "{name} ({thresholds:?}): interp gave {want:?}, got {got:?} on \
                             {args:?}"
                        ));
                    }
                }
            }
        }
        verdicts.push(match reference {
            Ok(_) => Verdict::Agreed,
            Err(_) if dead_index => Verdict::DeadIndex,
            Err(_) if fusion_order => Verdict::FusionOrder,
            Err(_) => Verdict::FailedAlike,
        });
    }
    Ok(verdicts)
}
