//! One test per type-checker diagnostic: the code, the message and where it points.

use ogham_compiler::loader::load_source;
use ogham_compiler::typeck::check;
use ogham_ir::diag::{Diagnostic, render};
use ogham_ir::source::SourceMap;

/// The diagnostics of a program that must parse but not type-check, with the rendered text.
fn errors(text: &str) -> (Vec<Diagnostic>, String) {
    let mut sources = SourceMap::new();
    let program = match load_source(&mut sources, "test.og", text) {
        Ok(p) => p,
        Err(d) => panic!("parse error:\n{}", render(&sources, &d)),
    };
    match check(&sources, &program) {
        Ok(_) => panic!("expected type errors in:\n{text}"),
        Err(d) => {
            let rendered = render(&sources, &d);
            (d, rendered)
        }
    }
}

/// Asserts exactly the given codes are reported, that every diagnostic has a primary span, and
/// that the primary span of the first one covers `at` in the program text.
fn expect(text: &str, codes: &[&str], at: &str, rendered_contains: &[&str]) {
    let (diags, rendered) = errors(text);
    let got: Vec<&str> = diags.iter().map(|d| d.code).collect();
    assert_eq!(got, codes, "{rendered}");
    let span = diags[0].span().expect("primary span");
    assert_eq!(&text[span.range()], at, "{rendered}");
    for s in rendered_contains {
        assert!(rendered.contains(s), "missing {s:?} in\n{rendered}");
    }
}

#[test]
fn unknown_names() {
    expect(
        "def f (total: i32) = totl + 1",
        &["E0204"],
        "totl",
        &["did you mean `total`?"],
    );
    expect(
        "def f (xs: []f32) = mpa (+1) xs",
        &["E0204"],
        "mpa",
        &["did you mean `map`?"],
    );
    expect(
        "def f = f32.sqroot 2",
        &["E0208"],
        "f32.sqroot",
        &["did you mean `f32.sqrt`?"],
    );
    expect(
        "def f (x: float32) = x",
        &["E0205"],
        "float32",
        &["unknown type `float32`"],
    );
    expect(
        "def f (x: i32) : i32 = f x",
        &["E0209"],
        "f",
        &["cannot refer to itself"],
    );
    expect(
        "def f (x: i32) = let x[0] = 1 in x\ndef g = let y[0] = 1 in y",
        &["E0304", "E0211"],
        "x",
        &[],
    );
}

#[test]
fn duplicates() {
    expect(
        "def f (x: i32) (x: i32) = x",
        &["E0207"],
        "x",
        &["bound twice"],
    );
    expect("def f = {a = 1, a = 2}", &["E0303"], "a", &["given twice"]);
}

#[test]
fn type_mismatches() {
    expect(
        "def f (x: f32) (n: i64) = x + n",
        &["E0301"],
        "n",
        &[
            "expected `f32`, found `i64`",
            "the left operand has type `f32`",
        ],
    );
    expect(
        "def f (b: bool) : i32 = b + 1",
        &["E0308"],
        "b",
        &["expected a numeric type, found `bool`"],
    );
    expect(
        "def f (x: i32) = if x then 1 else 2",
        &["E0301"],
        "x",
        &["expected `bool`, found `i32`"],
    );
    expect(
        "def f (c: bool) = if c then 1i32 else 2f32",
        &["E0301"],
        "2f32",
        &["because of the `then` branch"],
    );
    expect(
        "def f = [1i32, 2f32]",
        &["E0301"],
        "2f32",
        &["because of the first element"],
    );
    expect(
        "def f (x: i32) : f32 = x",
        &["E0301"],
        "x",
        &["because of the return type"],
    );
    expect(
        "def f (x: f32) = x % 2 // 3",
        &["E0308"],
        "x % 2",
        &["expected an integer type, found `f32`"],
    );
    expect(
        "def f (xs: []i32) = map (\\(x: f32) -> x) xs",
        &["E0301"],
        "xs",
        &["`f32` is not `i32`"],
    );
}

#[test]
fn literals() {
    expect(
        "def f = 300u8",
        &["E0302"],
        "300u8",
        &["out of range for `u8`"],
    );
    expect(
        "def f : i8 = 1000",
        &["E0302"],
        "1000",
        &["does not fit in `i8`"],
    );
}

#[test]
fn application_and_indexing() {
    expect(
        "def f (x: i32) = x 1",
        &["E0305"],
        "x",
        &["this is not a function"],
    );
    expect(
        "def add (a: i32) (b: i32) = a + b\ndef f = add 1 2 3",
        &["E0305"],
        "3",
        &["too many arguments"],
    );
    expect(
        "def f (x: i32) = x[0]",
        &["E0304"],
        "x",
        &["cannot index into a value of type `i32`"],
    );
    expect(
        "def f (x: []i32) = x[0, 1]",
        &["E0304"],
        "x",
        &["too many indices"],
    );
    expect(
        "def f (x: []i32) = x[true]",
        &["E0301"],
        "true",
        &["expected `i64`, found `bool`"],
    );
}

#[test]
fn records_and_tuples() {
    expect(
        "def f = let r = {x = 1f32, y = 2f32} in r.z",
        &["E0307"],
        "r",
        &["has no field `z`"],
    );
    expect(
        "def f = let t = (1, 2) in t.2",
        &["E0307"],
        "t",
        &["has no field `2`"],
    );
    expect(
        "def f = let r = {x = 1} in r with z = 2",
        &["E0307"],
        "r",
        &["has no field `z`"],
    );
    expect("def f r = r.x", &["E0306"], "r", &["cannot infer the type"]);
}

#[test]
fn type_aliases() {
    expect(
        "type v [n] = [n]f32\ndef f (x: v) = x",
        &["E0310"],
        "v",
        &["a size for `n`"],
    );
    expect(
        "def f 'a (x: a 3) = x",
        &["E0310"],
        "a 3",
        &["takes no arguments"],
    );
}

#[test]
fn infinite_type() {
    expect("def f x = x x", &["E0311"], "x", &["infinite type"]);
}

#[test]
fn sizes() {
    expect(
        "def f [n] [m] (xs: [n]f32) (ys: [m]f32) = map2 (+) xs ys",
        &["E0401"],
        "ys",
        &[
            "size mismatch: `n` vs `m`",
            "this has size `n`",
            ":> [n]f32",
        ],
    );
    expect(
        "def f [n] (xs: [n]i32) : [n]i32 = filter (>0) xs",
        &["E0401"],
        "filter (>0) xs",
        &["known only at run time"],
    );
    expect(
        "def f (xs: [3]i32) : [4]i32 = xs",
        &["E0401"],
        "xs",
        &["`4` vs `3`"],
    );
    expect(
        "def f (xs: [n]i32) = xs",
        &["E0402"],
        "n",
        &["unknown size `n`", "[n]"],
    );
    expect(
        "def f (k: f32) (xs: [k]i32) = xs",
        &["E0403"],
        "k",
        &["not an `i64`"],
    );
    expect(
        "def f (n: i64) (xs: [n]i64) = xs\ndef g = f 3 (iota 4)",
        &["E0401"],
        "iota 4",
        &["`3` vs `4`"],
    );
}

#[test]
fn uniqueness() {
    expect(
        "def f (xs: []i32) = xs with [0] = 1",
        &["E0502"],
        "xs",
        &["not unique", "copy xs"],
    );
    expect(
        "def f (n: i64) = let a = replicate n 0 in let b = a with [0] = 1 in a[0] + b[0]",
        &["E0501"],
        "a",
        &["used after being consumed", "consumed here"],
    );
    expect(
        "def f (n: i64) = let a = replicate n 0 in let b = a in let c = a with [0] = 1 in b[0]",
        &["E0501"],
        "b",
        &["shares memory with `a`"],
    );
    expect(
        "def f (n: i64) = let a = replicate n 0 in map (\\i -> (a with [i] = 1)[0]) (iota n)",
        &["E0503"],
        "a",
        &["inside this lambda"],
    );
    expect(
        "def f (n: i64) = let a = replicate n 0 in loop s = 0 for i < n do (a with [i] = 1)[0] + s",
        &["E0503"],
        "a",
        &["inside this loop"],
    );
    expect(
        "def f (n: i64) = let a = replicate n [0] in a with [0] = a[1]",
        &["E0504"],
        "a[1]",
        &["aliases `a`"],
    );
    expect(
        "def f (xs: []i32) : *[]i32 = xs",
        &["E0505"],
        "xs",
        &["unique result aliases"],
    );
    expect(
        "def set (xs: *[]i32) = xs with [0] = 1\ndef f (n: i64) = let a = replicate n 0 in (set a, set a)",
        &["E0501"],
        "a",
        &["consumed here"],
    );
    expect(
        "def t = [1, 2]\ndef f = t with [0] = 3",
        &["E0502"],
        "t",
        &["top-level definition"],
    );
}

#[test]
fn entry_points() {
    expect(
        "entry main 'a (x: a) : a = x",
        &["E0601"],
        "main",
        &["polymorphic"],
    );
    expect("entry main x = x", &["E0601"], "main", &["polymorphic"]);
    expect(
        "entry main (f: i32 -> i32) = f 1",
        &["E0602"],
        "f: i32 -> i32",
        &["is a function"],
    );
    expect(
        "entry main (k: i32) : i32 -> i32 = \\x -> x + k",
        &["E0602"],
        "i32 -> i32",
        &["returns a function"],
    );
}

#[test]
fn several_errors_without_cascades() {
    let (diags, rendered) = errors(
        "def f (x: f32) : f32 = x + 1i64\ndef g (c: i32) : i32 = if c then 1 else 2\ndef h = f 1 + nope\ndef k (b: bool) : i32 = -b",
    );
    let codes: Vec<&str> = diags.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0301", "E0301", "E0204", "E0308"], "{rendered}");
}
