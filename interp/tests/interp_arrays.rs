//! End-to-end tests of the interpreter: arrays, indexing, updates and built-ins.

mod interp_common;
use interp_common::*;
use ogham_runtime::value::{Array, ArrayData, Value};

#[test]
fn indexing_and_slicing() {
    let src = "entry main (a: [][]f32) : (f32, []f32, []f32, []f32, [][]f32, []f32) = \
               (a[1, 2], a[0], a[:, 1], a[1, ::-1], a[0:1], a[1, 0:3:2])";
    let a = matrix_f32(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(
        eval(src, vec![a]),
        "6.0f32 [1.0f32, 2.0f32, 3.0f32] [2.0f32, 5.0f32] [6.0f32, 5.0f32, 4.0f32] [[1.0f32, 2.0f32, 3.0f32]] [4.0f32, 6.0f32]"
    );
}

#[test]
fn index_out_of_bounds_names_index_and_shape() {
    let (code, text) = fails(
        "entry main (xs: []f32) (i: i64) : f32 =\n  xs[i]",
        vec![f32s(&[1.0; 5]), i64v(7)],
    );
    assert_eq!(code, "R0702");
    assert!(
        text.contains("index 7 out of bounds for array of shape [5]"),
        "{text}"
    );
    assert!(text.contains("test.og:2:3"), "{text}");
    let (code, text) = fails(
        "entry main (xs: []f32) : []f32 = xs[2:9]",
        vec![f32s(&[1.0; 5])],
    );
    assert_eq!(code, "R0703");
    assert!(
        text.contains("slice 2:9 out of bounds for array of shape [5]"),
        "{text}"
    );
}

#[test]
fn in_place_updates() {
    let src = "entry main (n: i64) : ([]i64, [][]i64) =\n\
                 let a = loop a = replicate n 0 for i < n do a with [i] = i * i\n\
                 let m = replicate 2 (replicate 3 0i64)\n\
                 let m[1] = iota 3\n\
                 let m = m with [0, 1:] = [7, 8]\n\
                 in (a, m)";
    assert_eq!(
        eval(src, vec![i64v(4)]),
        "[0i64, 1i64, 4i64, 9i64] [[0i64, 7i64, 8i64], [0i64, 1i64, 2i64]]"
    );
    // The original array is not changed by an update of a copy.
    let src = "entry main (xs: []i64) : ([]i64, []i64) = let ys = copy xs in (xs, ys with [0] = 5)";
    assert_eq!(eval(src, vec![i64s(&[1, 2])]), "[1i64, 2i64] [5i64, 2i64]");
}

#[test]
fn soacs() {
    let src = "entry main (xs: []i32) : ([]i32, i32, []i32, []i32, ([]i32, []i32), []i32) = \
               (map (+1) xs, reduce (+) 0 xs, scan (+) 0 xs, filter (\\x -> x % 2 == 0) xs, \
                partition (>2) xs, map2 (*) xs (reverse xs))";
    assert_eq!(
        eval(src, vec![i32s(&[1, 2, 3, 4])]),
        "[2i32, 3i32, 4i32, 5i32] 10i32 [1i32, 3i32, 6i32, 10i32] [2i32, 4i32] ([3i32, 4i32], [1i32, 2i32]) [4i32, 6i32, 6i32, 4i32]"
    );
    // reduce applies the operator left to right.
    assert_eq!(
        eval("entry main : i32 = reduce (-) 0 [1, 2, 3]", vec![]),
        "-6i32"
    );
}

#[test]
fn scatter_and_histograms_ignore_out_of_bounds() {
    let src = "entry main : ([]i32, []i32, []i32) = \
               (scatter (replicate 4 0) [0, 2, 9, -1] [5, 6, 7, 8], \
                hist (+) 0 3 [0, 1, 1, 5, -2] [1, 2, 3, 4, 5], \
                reduce_by_index (replicate 2 10) max 0 [1, 1, 0] [3, 20, 4])";
    assert_eq!(
        eval(src, vec![]),
        "[5i32, 0i32, 6i32, 0i32] [1i32, 5i32, 0i32] [10i32, 20i32]"
    );
}

#[test]
fn shape_functions() {
    let src = "entry main (a: [][]i32) : ([][]i32, []i32, [][]i32, []i32, []i32, i64) = \
               (transpose a, flatten a, unflatten 3 2 (flatten a), concat a[0] a[1], rotate 1 a[0], length a)";
    let a = Value::Array(
        Array::new(vec![2, 3], ArrayData::I32(vec![1, 2, 3, 4, 5, 6].into())).unwrap(),
    );
    assert_eq!(
        eval(src, vec![a]),
        "[[1i32, 4i32], [2i32, 5i32], [3i32, 6i32]] [1i32, 2i32, 3i32, 4i32, 5i32, 6i32] \
         [[1i32, 2i32], [3i32, 4i32], [5i32, 6i32]] [1i32, 2i32, 3i32, 4i32, 5i32, 6i32] [2i32, 3i32, 1i32] 2i64"
    );
}

#[test]
fn zip_unzip_and_arrays_of_tuples_at_the_boundary() {
    let src = "entry main (xs: []f32) (ys: []i64) : [](f32, i64) = zip xs ys";
    let out = run(src, vec![f32s(&[1.0, 2.0]), i64s(&[3, 4])]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to_string(), "([1.0f32, 2.0f32], [3i64, 4i64])");
    let src = "entry main (ps: [](f32, i64)) : ([]i64, []f32) = let (a, b) = unzip ps in (b, a)";
    let ps = Value::Tuple(vec![f32s(&[1.0, 2.0]), i64s(&[3, 4])]);
    assert_eq!(eval(src, vec![ps]), "[3i64, 4i64] [1.0f32, 2.0f32]");
}

#[test]
fn size_mismatches_are_run_time_errors() {
    let (code, _t) = fails(
        "entry main (xs: []i32) (ys: []i32) : []i32 = let n = length xs in map2 (+) xs (ys :> [n]i32)",
        vec![i32s(&[1, 2]), i32s(&[1])],
    );
    assert_eq!(code, "R0705", "{_t}");
    let (code, text) = fails(
        "entry main (xs: []i32) : [][]i32 = unflatten 2 2 xs",
        vec![i32s(&[1, 2, 3])],
    );
    assert_eq!(code, "R0704");
    assert!(text.contains("unflatten"), "{text}");
    let (code, _) = fails("entry main (n: i64) : []i64 = iota n", vec![i64v(-1)]);
    assert_eq!(code, "R0706");
}

#[test]
fn empty_arrays_keep_their_shape() {
    let src = "entry main [n] [m] (a: [n][m]i32) : ([m][n]i32, []i32, i64) = (transpose a, flatten a, length a)";
    let a = Value::Array(Array::new(vec![0, 2], ArrayData::I32(vec![].into())).unwrap());
    assert_eq!(eval(src, vec![a]), "empty([2][0]i32) empty([0]i32) 0i64");
    let src = "entry main (n: i64) : ([][3]f32, []f32) = (map (\\_ -> [1f32, 2, 3]) (iota n), filter (> 0) [])";
    assert_eq!(eval(src, vec![i64v(0)]), "empty([0][3]f32) empty([0]f32)");
}

#[test]
fn entry_argument_errors() {
    let (code, text) = fails(
        "entry main [n][m] (xs: [n][m]f32) : f32 = xs[0, 0]",
        vec![f64s(&[1.0, 2.0, 3.0])],
    );
    assert_eq!(code, "E0612");
    assert!(
        text.contains("expected [n][m]f32 for parameter xs, got [3]f64"),
        "{text}"
    );
    let (code, text) = fails(
        "entry main [n] (xs: [n]f32) (ys: [n]f32) : f32 = xs[0]",
        vec![f32s(&[1.0]), f32s(&[1.0, 2.0])],
    );
    assert_eq!(code, "E0613");
    assert!(text.contains("size `n`"), "{text}");
    let (code, _) = fails("entry main (x: i32) : i32 = x", vec![]);
    assert_eq!(code, "E0611");
    let err = run_named("entry main (x: i32) : i32 = x", "other", vec![i32v(1)]).unwrap_err();
    assert_eq!(err.0, "E0610");
}

#[test]
fn linalg_library() {
    let src = "import \"lib/linalg\"\n\
               entry main (a: [][]f64) : [][]f64 = inverse a";
    let a = Value::Array(Array::from_f64(vec![2, 2], vec![4.0, 7.0, 2.0, 6.0]).unwrap());
    let out = run(src, vec![a]).unwrap();
    let Value::Array(inv) = &out[0] else { panic!() };
    let ArrayData::F64(d) = inv.data() else {
        panic!()
    };
    let expect = [0.6, -0.7, -0.2, 0.4];
    for (x, y) in d.iter().zip(expect) {
        assert!((x - y).abs() < 1e-12, "{d:?}");
    }
}

#[test]
fn segmented_library() {
    let src = "import \"lib/segmented\"\n\
               entry main (xs: []f32) : (i64, []f32, []i64) = filter_nan_with_keys xs";
    assert_eq!(
        eval(src, vec![f32s(&[1.0, f32::NAN, 3.0])]),
        "2i64 [1.0f32, 3.0f32, f32.nan] [0i64, 2i64, -1i64]"
    );
}

#[test]
fn large_map_reduce_is_linear() {
    // Not a timing assertion: a quadratic implementation would take minutes here.
    let n = 1_000_000;
    let xs: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let src = "entry main (xs: []f32) : f32 = reduce (+) 0 (map (\\x -> x * 2) xs)";
    let expect: f32 = xs.iter().fold(0f32, |acc, x| acc + x * 2.0);
    assert_eq!(eval(src, vec![f32s(&xs)]), format!("{expect:?}f32"));
    let src = "entry main (n: i64) : i64 = let a = loop a = replicate n 0i64 for i < n do a with [i] = i in a[n - 1]";
    assert_eq!(eval(src, vec![i64v(200_000)]), "199999i64");
}
