//! End-to-end tests of the interpreter: expressions, bindings, functions, loops, records.

mod interp_common;
use interp_common::*;

#[test]
fn arithmetic_and_literals() {
    assert_eq!(
        eval("entry main (x: i32) : i32 = x * 2 + 1", vec![i32v(20)]),
        "41i32"
    );
    assert_eq!(
        eval(
            "entry main : (i32, i32, i32, i32) = (-7 / 2, -7 % 2, -7 // 2, -7 %% 2)",
            vec![]
        ),
        "-4i32 1i32 -3i32 -1i32"
    );
    assert_eq!(eval("entry main : i8 = 127i8 + 1", vec![]), "-128i8");
    assert_eq!(eval("entry main : f32 = 1 + 2.5", vec![]), "3.5f32");
    assert_eq!(
        eval("entry main : i64 = 0xff + 0b101 + 1_000", vec![]),
        "1260i64"
    );
    assert_eq!(eval("entry main : i32 = 2 ** 10", vec![]), "1024i32");
    assert_eq!(
        eval("entry main : f64 = 2 ** 0.5", vec![]),
        format!("{:?}f64", 2f64.powf(0.5))
    );
    assert_eq!(
        eval(
            "entry main : (i32, i32, i32) = (1 << 4, -16 >> 2, 6 & 3 | 8 ^ 1)",
            vec![]
        ),
        "16i32 -4i32 11i32"
    );
    assert_eq!(
        eval(
            "entry main : (bool, bool) = (!true, 1 < 2 && 2 >= 2 || false)",
            vec![]
        ),
        "false true"
    );
    assert_eq!(eval("entry main : i32 = !0", vec![]), "-1i32");
}

#[test]
fn floats_follow_ieee() {
    assert_eq!(
        eval(
            "entry main : (f32, bool, f64) = (nan + 1, f64.nan == f64.nan, -inf)",
            vec![]
        ),
        "f32.nan false -f64.inf"
    );
    assert_eq!(
        eval(
            "entry main : (f32, f32) = (min f32.nan 1f32, max 2f32 f32.nan)",
            vec![]
        ),
        "1.0f32 2.0f32"
    );
    assert_eq!(eval("entry main : f32 = 1f32 / 0f32", vec![]), "f32.inf");
}

#[test]
fn conversions_and_constants() {
    let src = "entry main : (i64, i64, f32, u8, i32, bool) = \
               (i64.f32 (-2.7f32), i64.f64 f64.nan, f32.i64 3, u8.i64 300, i32.bool true, bool.i32 0)";
    assert_eq!(eval(src, vec![]), "-2i64 0i64 3.0f32 44u8 1i32 false");
    assert_eq!(
        eval(
            "entry main : (i64, i32, f32) = (i64.highest, i32.lowest, f32.highest)",
            vec![]
        ),
        "9223372036854775807i64 -2147483648i32 f32.inf"
    );
    assert_eq!(
        eval("entry main : f64 = f64.pi", vec![]),
        format!("{:?}f64", std::f64::consts::PI)
    );
}

#[test]
fn math_functions() {
    let src = "entry main (x: f32) : (f32, f32, f32, f32, bool, f32) = \
               (sqrt x, f32.exp x, round 2.5f32, atan2 1f32 1f32, isnan (x / 0f32 - x / 0f32), sgn (-x))";
    let x = 0.3f32;
    let expect = format!(
        "{:?}f32 {:?}f32 2.0f32 {:?}f32 true -1.0f32",
        x.sqrt(),
        x.exp(),
        1f32.atan2(1f32)
    );
    assert_eq!(eval(src, vec![f32v(x)]), expect);
    assert_eq!(
        eval(
            "entry main : (i32, i64, i32) = (abs (-3), max 2i64 7, pow 3 3)",
            vec![]
        ),
        "3i32 7i64 27i32"
    );
}

#[test]
fn lets_patterns_and_records() {
    let src = "entry main (x: i32) : i32 =\n  let (a, b) = (x, x + 1)\n  let {p, q = r} = {q = 10, p = a}\n  let _ = b\n  in a + b + p + r";
    assert_eq!(eval(src, vec![i32v(1)]), "14i32");
    let src = "entry main : (i32, f32, i32) =\n  let r = {x = 1, y = 2f32}\n  let s = r with x = 5\n  let t = (1, (2, 3))\n  in (s.x, s.y, t.1.0)";
    assert_eq!(eval(src, vec![]), "5i32 2.0f32 2i32");
}

#[test]
fn functions_lambdas_sections_and_pipes() {
    let src = "def add (x: i32) (y: i32) : i32 = x + y\n\
               def twice 'a (f: a -> a) (x: a) : a = f (f x)\n\
               entry main (x: i32) : (i32, i32, i32, i32, i32, i32) =\n\
                 let inc = add 1\n\
                 let sq (y: i32) = y * y\n\
                 in (inc x, twice inc x, twice sq x, x |> (*2) |> (2-), (\\a b -> a - b) x 1, sq <| 3)";
    assert_eq!(eval(src, vec![i32v(3)]), "4i32 5i32 81i32 -4i32 2i32 9i32");
}

#[test]
fn loops() {
    let src = "entry main (n: i64) : (i64, i64, i64) =\n\
                 let a = loop acc = 0 for i < n do acc + i\n\
                 let b = loop (x, k) = (1, 0) while k < 10 do (x * 2, k + 1)\n\
                 let c = loop s = 0 for x in iota n do s + x * x\n\
                 in (a, b.0, c)";
    assert_eq!(eval(src, vec![i64v(5)]), "10i64 1024i64 30i64");
    let src = "entry main (n: i32) : i32 =\n  let x = 1\n  in loop x for i < n do x * 3";
    assert_eq!(eval(src, vec![i32v(4)]), "81i32");
}

#[test]
fn size_parameters_are_bound_from_arguments() {
    let src = "def f [n][m] (a: [n][m]f32) : (i64, i64) = (n, m)\n\
               def g [k] (xs: [k]i64) (ys: [k]i64) : i64 = k + length ys\n\
               entry main (a: [][]f32) : (i64, i64, i64) = let (n, m) = f a in (n, m, g (iota 3) (iota 3))";
    assert_eq!(
        eval(src, vec![matrix_f32(2, 3, &[0.0; 6])]),
        "2i64 3i64 6i64"
    );
    let src = "entry main [n] (xs: [n]f32) : i64 = n";
    assert_eq!(eval(src, vec![f32s(&[1.0, 2.0])]), "2i64");
}

#[test]
fn division_by_zero_is_an_error_with_location() {
    let (code, text) = fails("entry main (x: i32) : i32 =\n  x / (x - x)", vec![i32v(3)]);
    assert_eq!(code, "R0701");
    assert!(text.contains("test.og:2:3"), "{text}");
    let (code, _) = fails("entry main (x: i64) : i64 = x %% 0", vec![i64v(3)]);
    assert_eq!(code, "R0701");
}

#[test]
fn prelude_functions() {
    let src = "entry main (xs: []f32) : (f32, f32, i64, i64, f32) = \
               (sum xs, maximum xs, argmin xs, argmax xs, mean xs)";
    assert_eq!(
        eval(src, vec![f32s(&[3.0, f32::NAN, -1.0, 5.0])]),
        "f32.nan 5.0f32 2i64 3i64 f32.nan"
    );
}

#[test]
fn deep_let_chains_do_not_overflow() {
    let mut src = String::from("entry main (x: i64) : i64 =\n");
    for i in 0..3000 {
        src.push_str(&format!("  let x{i} = x + {i}\n"));
    }
    src.push_str("  in x2999");
    // The front end recurses along the let chain too: give it room (the interpreter runs on
    // its own thread with a large stack).
    let run = move || eval(&src, vec![i64v(1)]);
    let out = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out, "3000i64");
}

#[test]
fn unique_parameters_local_size_parameters_and_while_updates() {
    let src = "def set (xs: *[]i64) (i: i64) : *[]i64 = xs with [i] = 1\n\
               entry main (n: i64) : ([]i64, i64, []i64) =\n\
                 let a = loop a = replicate n 0 for i < n do set a i\n\
                 let len [k] (ys: [k]i64) : i64 = k\n\
                 let b = loop (b, j) = (replicate 3 0, 0) while j < 3 do (b with [j] = j + 10, j + 1)\n\
                 in (a, len a, b.0)";
    assert_eq!(
        eval(src, vec![i64v(3)]),
        "[1i64, 1i64, 1i64] 3i64 [10i64, 11i64, 12i64]"
    );
}

#[test]
fn records_and_tuples_in_arrays_cross_the_boundary() {
    let src = "entry main (ps: []{x: f32, y: i64}) : ([]{x: f32, y: i64}, i64) =\n\
                 (map (\\p -> p with y = p.y * 2) ps, reduce (+) 0 (map (\\p -> p.y) ps))";
    let ps = ogham_runtime::value::Value::Tuple(vec![f32s(&[1.0, 2.0]), i64s(&[3, 4])]);
    assert_eq!(eval(src, vec![ps]), "([1.0f32, 2.0f32], [6i64, 8i64]) 7i64");
}
