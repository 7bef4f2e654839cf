//! Type inference results: the types of definitions, expressions and entry points.

use ogham_compiler::loader::load_source;
use ogham_compiler::typeck::{Checked, check};
use ogham_ir::diag::render;
use ogham_ir::source::SourceMap;

/// Checks a program; panics with the rendered diagnostics if it does not type-check.
fn ok(text: &str) -> (Checked, ogham_compiler::syntax::ast::Program) {
    let mut sources = SourceMap::new();
    let program = match load_source(&mut sources, "test.og", text) {
        Ok(p) => p,
        Err(d) => panic!("parse error:\n{}", render(&sources, &d)),
    };
    match check(&sources, &program) {
        Ok(c) => (c, program),
        Err(d) => panic!("type errors:\n{}", render(&sources, &d)),
    }
}

/// The type of the last definition named `name` in the root module, as text.
fn def_type(text: &str, name: &str) -> String {
    let (checked, program) = ok(text);
    let root = program.modules.len() - 1;
    let decl = program.modules[root]
        .decls
        .iter()
        .rposition(
            |d| matches!(d, ogham_compiler::syntax::ast::Decl::Def(def) if def.name.name == name),
        )
        .expect("definition exists");
    checked.def_types[&(root, decl)].to_string()
}

#[test]
fn prelude_checks() {
    ok("def main = 1");
}

#[test]
fn simple_defs() {
    assert_eq!(def_type("def f x = x + 1", "f"), "i32 -> i32");
    assert_eq!(def_type("def f (x: f32) = x + 1", "f"), "f32 -> f32");
    assert_eq!(def_type("def id x = x", "id"), "a -> a");
    assert_eq!(def_type("def k x y = x", "k"), "a -> b -> a");
    assert_eq!(def_type("def f = 1.5", "f"), "f64");
    assert_eq!(
        def_type("def f = (1, true, 2.0f32)", "f"),
        "(i32, bool, f32)"
    );
    assert_eq!(
        def_type("def f = {b = 1i64, a = 2f32}", "f"),
        "{a: f32, b: i64}"
    );
}

#[test]
fn higher_order_and_soacs() {
    assert_eq!(
        def_type("def f (xs: []f32) = map (\\x -> x * 2) xs", "f"),
        "[]f32 -> []f32"
    );
    assert_eq!(
        def_type("def f [n] (xs: [n]f32) = map (*2) xs", "f"),
        "[n]f32 -> [n]f32"
    );
    assert_eq!(
        def_type("def f [n] (xs: [n]f32) = reduce (+) 0 xs", "f"),
        "[n]f32 -> f32"
    );
    assert_eq!(
        def_type(
            "def f [n] (xs: [n]i64) = scan (+) 0 xs |> map (\\x -> x > 2)",
            "f"
        ),
        "[n]i64 -> [n]bool"
    );
    assert_eq!(
        def_type("def twice 'a (f: a -> a) (x: a) = f (f x)", "twice"),
        "(a -> a) -> a -> a"
    );
    assert_eq!(
        def_type("def compose f g x = f (g x)", "compose"),
        "(a -> b) -> (c -> a) -> c -> b"
    );
    assert_eq!(def_type("def f (n: i64) = iota n", "f"), "i64 -> [n]i64");
    assert_eq!(
        def_type("def f [n] (xs: [n]f32) = zip xs (iota n)", "f"),
        "[n]f32 -> [n](f32, i64)"
    );
    assert_eq!(
        def_type(
            "def f (xs: []f32) = let n = length xs in replicate n 0f32",
            "f"
        ),
        "[]f32 -> []f32"
    );
    assert_eq!(
        def_type("def f [n] (xs: [n]f32) = filter (>0) xs", "f"),
        "[n]f32 -> []f32"
    );
    assert_eq!(
        def_type("def f [n][m] (a: [n][m]f32) = transpose a", "f"),
        "[n][m]f32 -> [m][n]f32"
    );
    assert_eq!(def_type("def f = map sqrt [1f32, 4]", "f"), "[2]f32");
    assert_eq!(
        def_type("def f (xs: []f64) = map2 (\\x y -> f64.max x y) xs xs", "f"),
        "[]f64 -> []f64"
    );
}

#[test]
fn fields_on_inferred_types() {
    assert_eq!(
        def_type(
            "def f [n] (xs: [n]f32) (ys: [n]f32) = map (\\p -> p.0 + p.1) (zip xs ys)",
            "f"
        ),
        "[n]f32 -> [n]f32 -> [n]f32"
    );
    assert_eq!(
        def_type("def f (r: {x: f32, y: i64}) = (r.y, r with x = 1)", "f"),
        "{x: f32, y: i64} -> (i64, {x: f32, y: i64})"
    );
    assert_eq!(
        def_type(
            "def f = let (a, {b, c = d}) = (1u8, {b = true, c = 2i16}) in (a, b, d)",
            "f"
        ),
        "(u8, bool, i16)"
    );
}

#[test]
fn let_polymorphism_and_defaults() {
    assert_eq!(
        def_type("def f = let id x = x in (id 1f32, id true)", "f"),
        "(f32, bool)"
    );
    assert_eq!(
        def_type("def f (x: i64) = let g y = y * 2 in g x", "f"),
        "i64 -> i64"
    );
    assert_eq!(def_type("def f = 1 + 2", "f"), "i32");
    assert_eq!(def_type("def f = 2 * 1.5", "f"), "f64");
    assert_eq!(def_type("def f (x: u8) = x & 3", "f"), "u8 -> u8");
    assert_eq!(def_type("def f = f32.i64 3 + 1", "f"), "f32");
    assert_eq!(
        def_type("def f (x: f32) = if isnan x then 0 else x", "f"),
        "f32 -> f32"
    );
}

#[test]
fn loops_updates_aliases() {
    let src = "type vec [n] = [n]f32
def f [n] (v: vec [n]) : vec [n] = loop acc = copy v for i < n do acc with [i] = acc[i] + 1";
    assert_eq!(def_type(src, "f"), "[n]f32 -> [n]f32");
    assert_eq!(
        def_type(
            "def f (n: i64) = loop (s, p) = (0, 1) for i < n do (s + i, p * 2)",
            "f"
        ),
        "i64 -> (i64, i32)"
    );
    assert_eq!(
        def_type(
            "def f (xs: []i32) = loop acc = 0 for x in xs do acc + x",
            "f"
        ),
        "[]i32 -> i32"
    );
    assert_eq!(
        def_type("def f (xs: *[]i32) = let xs[0] = 1 in xs", "f"),
        "[]i32 -> []i32"
    );
    assert_eq!(
        def_type("def f [n] (xs: [n]i32) = (xs :> [3]i32)", "f"),
        "[n]i32 -> [3]i32"
    );
}

#[test]
fn expr_types_and_resolutions_are_complete() {
    use ogham_compiler::typeck::Resolution;
    let (checked, program) =
        ok("def g (x: f32) = x\nentry main (xs: []f32) : f32 = reduce (+) 0 (map g xs)");
    assert_eq!(checked.expr_types.len(), program.expr_count as usize);
    assert_eq!(checked.resolutions.len(), program.expr_count as usize);
    let res: Vec<&Resolution> = checked.resolutions.iter().flatten().collect();
    assert!(res.iter().any(|r| matches!(r, Resolution::Def { .. })));
    assert!(res.iter().any(|r| matches!(r, Resolution::Local)));
    assert!(res.iter().any(|r| matches!(r, Resolution::Builtin(_))));
    // No leftover inference variables anywhere.
    assert!(
        checked
            .expr_types
            .iter()
            .all(|t| !t.to_string().contains('?'))
    );
}

#[test]
fn entries() {
    let (checked, _) =
        ok("entry main [n] (xs: [n]f32) ((a, b): (i64, bool)) : ([n]f32, f32) = (xs, 1)");
    assert_eq!(checked.entries.len(), 1);
    let e = &checked.entries[0];
    assert_eq!(e.name, "main");
    let params: Vec<String> = e.params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
    assert_eq!(params, ["xs: [n]f32", "(a, b): (i64, bool)"]);
    let results: Vec<String> = e.results.iter().map(ToString::to_string).collect();
    assert_eq!(results, ["[n]f32", "f32"]);
}

#[test]
fn later_definitions_shadow_earlier_ones_and_the_prelude() {
    let src = "def sum (x: i32) = x\ndef f = sum 1\ndef g = 1f32\ndef g = true\ndef h = g";
    assert_eq!(def_type(src, "f"), "i32");
    assert_eq!(def_type(src, "h"), "bool");
}

#[test]
fn uniqueness_accepts_safe_updates() {
    ok("def f [n] (xs: *[n]i32) : *[n]i32 = xs with [0] = 1
def g [n] (xs: [n]i32) = let ys = copy xs in let ys[1] = 2 in f ys
def h (n: i64) = loop acc = replicate n 0 for i < n do acc with [i] = i32.i64 i
def k [n] (xs: [n]f32) = let is = iota n in scatter (replicate n 0f32) is xs
def m (n: i64) = map (\\i -> let a = replicate 3 i in a with [0] = 1) (iota n)");
}
