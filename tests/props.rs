//! Property test: random inputs (random sizes, zero included) through representative programs;
//! the reference interpreter, the unoptimised and the optimised core IR, the kernel IR and the
//! CPU backend's compiled kernels must agree — on the outputs, or on the error code when the run
//! fails (`ogham_tests::differential`; random programs are `tests/fuzz.rs`'s).
//!
//! The IR of every random program and of the table's programs prints, parses back and prints
//! identically after every pass (`ogham_tests::irtext`).

use ogham::Frontend;
use ogham_tests::differential::{Inputs, Rng, check_program};
use ogham_tests::irtext::round_trip_every_pass;
use ogham_tests::random_programs;
use proptest::prelude::*;

const PROGRAMS: &[&str] = &[
    "entry main (xs: []i32) = map (+1) xs",
    "entry main (xs: []f32) = map (\\x -> x * 2 + 1) xs",
    "entry main (xs: []i32) = reduce (+) 0 xs",
    "entry main (xs: []i32) = reduce (\\a b -> a * 3 + b) 0 xs",
    "entry main (xs: []i32) = scan (+) 0 xs",
    "entry main (xs: []i32) = scan (\\a b -> if a > b then a else b) i32.lowest xs",
    "entry main [n] (xs: [n]f32) (ys: [n]f32) = map2 (*) xs ys",
    "entry main (xss: [][]f32) = map (\\row -> reduce (+) 0 row) xss",
    "entry main (xss: [][]i32) = map (\\row -> scan (+) 0 row) xss",
    "entry main (xss: [][]i32) = transpose xss",
    "entry main (xs: []i32) = filter (>0) xs",
    "entry main (xs: []i32) = partition (\\x -> x % 2 == 0) xs",
    "entry main [n] (is: [n]i64) (vs: [n]i32) = scatter (replicate 4 0) is vs",
    "entry main [n] (is: [n]i64) (vs: [n]i32) = hist (+) 0 5 is vs",
    "entry main [n] (is: [n]i64) (vs: [n]f32) = reduce_by_index (replicate 3 0) (+) 0 is vs",
    "entry main (xs: []i32) = loop acc = xs for i < 3 do map (+ i32.i64 i) acc",
    "entry main (xs: []i32) = loop ys = copy xs for i < length xs do ys with [i] = ys[i] * 2",
    "entry main (xs: []i32) = map (\\x -> if x > 0 then x else -x) xs",
    "entry main (n: i64) (k: i64) = map (\\i -> map (\\j -> i * j) (iota k)) (iota n)",
    "entry main (xs: []i32) (i: i64) = xs[i:]",
    "entry main (xs: []i32) = (reverse xs, xs[::2])",
    "entry main (xs: []i32) (r: i64) = rotate r xs",
    "entry main (xs: []i32) (ys: []i32) = concat xs ys",
    "entry main (xs: []i32) = let (a, b) = unzip (map (\\x -> (x, x + 1)) xs) in (b, a)",
    "entry main [n] (xs: [n]i32) (ys: [n]i32) = \
       reduce (\\(a, b) (c, d) -> (a + c, b * d)) (0, 1) (zip xs ys)",
    "entry main (xs: []f32) = (sum xs, maximum xs, argmin xs)",
    "entry main [n] [k] [m] (a: [n][k]f32) (b: [k][m]f32) = \
       map (\\r -> map (\\c -> reduce (+) 0 (map2 (*) r c)) (transpose b)) a",
    "entry main (xss: [][]i32) = let f = flatten xss in unflatten (length xss) (length f / \
       i64.max 1 (length xss)) f",
    "entry main (xs: []i32) = \
       loop (i, s) = (0, 0) while i < length xs do (i + 1, s + xs[i])",
    "entry main (xss: [][]f32) = \
       map (\\row -> reduce (+) 0 (filter (\\x -> !(f32.isnan x)) row)) xss",
    "entry main (n: i64) = let a = replicate n 0i64 in loop a for i < n do a with [i] = i * i",
    "entry main (xs: []i32) (d: i32) = map (\\x -> x / d) xs",
    "entry main (xss: [][]f32) = map (\\row -> let m = reduce f32.max (-f32.inf) row in \
       map (\\x -> x - m) row) xss",
    // Straight-line f32/i32 maps, which the CPU backend runs four points per vector instruction
    // (sizes up to 10: vector iterations and scalar remainders; NaN, infinities, saturating
    // conversions, min/max with NaN, lane selects for `if`s, uniform operands, a 2-D space).
    "entry main [n] (xs: [n]f32) (ys: [n]i32) (c: f32) = unzip (map2 (\\x y -> \
       let z = if x > c then f32.sqrt x else f32.min x (f32.i32 y) \
       in (2 * z + 1, i32.max y (i32.f32 (x * 3e9)) * 3 - (y & 5))) xs ys)",
    "entry main (xss: [][]f32) (b: bool) = map (\\row -> map (\\x -> \
       if b || f32.isnan x then f32.floor (x / 0.3) - f32.abs x \
       else f32.round (x * 1.7) + f32.max x (x / 0)) row) xss",
    // Maps of reductions inside a kernel, which the CPU backend runs four iterations at a time
    // (remainders, a statement before and after the reduction, an index that may fail).
    "entry main [m] [n] (as: [m][n][n]f32) (vs: [m][n]f32) (s: i64) = map2 (\\a v -> \
       loop v for _i < s do map (\\row -> reduce (+) 0 (map2 (*) row v)) a) as vs",
    "entry main [m] [n] (as: [m][n][n]f32) (vs: [m][n]f32) (k: i64) = map2 (\\a v -> \
       loop acc = v for _i < 2 do map (\\row -> let c = row[0] * 2 in \
       reduce (+) 0 (map (\\j -> row[j] * acc[j + k]) (iota n)) - c) a) as vs",
];

#[test]
fn the_table_has_at_least_thirty_programs() {
    assert!(PROGRAMS.len() >= 30);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if std::env::var_os("CI").is_some() { 512 } else { 64 }))]

    #[test]
    fn backends_agree_with_the_interpreter(index in 0..PROGRAMS.len(), seed in any::<u64>()) {
        let result = check_program(PROGRAMS[index], &[(seed, Inputs::default())], true);
        prop_assert!(result.is_ok(), "program {}:\n{}\n{}", index, PROGRAMS[index], result.unwrap_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if std::env::var_os("CI").is_some() { 256 } else { 32 }))]

    #[test]
    fn ir_text_round_trips_on_random_programs(seed in any::<u64>()) {
        let source = random_programs::program(&mut Rng(seed | 1));
        let fe = Frontend::load_source("random.og", &source);
        prop_assert!(fe.is_ok(), "the random program does not load:\n{}", source);
        if let Ok(fe) = fe {
            let result = round_trip_every_pass(&fe);
            prop_assert!(result.is_ok(), "{}\n{}", source, result.unwrap_err());
        }
    }
}

/// The IR text of every program of the table round-trips after every pass.
#[test]
fn ir_text_round_trips_on_the_table() {
    for (i, p) in PROGRAMS.iter().enumerate() {
        let fe = Frontend::load_source("table.og", p).unwrap_or_else(|e| panic!("{}", e.render()));
        if let Err(e) = round_trip_every_pass(&fe) {
            panic!("program {i}:\n{p}\n{e}");
        }
    }
}

/// Every program runs on every backend at least once, whatever proptest draws.
#[test]
fn every_program_on_a_fixed_seed() {
    for (i, p) in PROGRAMS.iter().enumerate() {
        if let Err(e) = check_program(
            p,
            &[(0x9e37_79b9_7f4a_7c15 ^ i as u64, Inputs::default())],
            true,
        ) {
            panic!("program {i}:\n{p}\n{e}");
        }
    }
}
