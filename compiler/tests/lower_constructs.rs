//! Lowering typed programs to core IR: what each source construct becomes, the shape of entry
//! points, existential and loop sizes, hoisted lambda sizes, and E0801 for what the compiler
//! cannot lower. Every lowered program must pass the core-IR verifier. (The corpus runs the
//! lowered programs and compares their results with the interpreter's.)

use ogham_compiler::loader::load_source;
use ogham_compiler::lower::lower;
use ogham_compiler::typeck::check;
use ogham_ir::count::count_constructs;
use ogham_ir::diag::{Diagnostic, render};
use ogham_ir::print::print_program;
use ogham_ir::source::SourceMap;
use ogham_ir::traverse::for_each_stmt;
use ogham_ir::verify::verify;
use ogham_ir::{Exp, Function, Program, Stmt, SubExp, Type};

/// Lowers a program (which must type-check), returning the IR or the lowering diagnostics.
fn try_lower(text: &str) -> Result<Program, Vec<Diagnostic>> {
    let mut sources = SourceMap::new();
    let program = match load_source(&mut sources, "test.og", text) {
        Ok(p) => p,
        Err(d) => panic!("parse error:\n{}", render(&sources, &d)),
    };
    let checked = match check(&sources, &program) {
        Ok(c) => c,
        Err(d) => panic!("type errors:\n{}", render(&sources, &d)),
    };
    lower(&sources, &program, &checked)
}

/// Lowers a program that must lower, and verifies the result.
fn lowered(text: &str) -> Program {
    let program = match try_lower(text) {
        Ok(p) => p,
        Err(d) => panic!("lowering failed: {d:?}"),
    };
    assert_eq!(verify(&program), Ok(()), "{}", print_program(&program));
    program
}

/// The single function of a lowered program.
fn function(program: &Program) -> &Function {
    assert_eq!(program.functions.len(), 1, "{}", print_program(program));
    &program.functions[0]
}

/// Checks the construct counts listed; constructs not listed may occur any number of times.
fn has_counts(text: &str, expected: &[(&str, usize)]) -> Program {
    let program = lowered(text);
    let counts = count_constructs(&program);
    for (name, want) in expected {
        assert_eq!(
            counts[*name],
            *want,
            "count of {name} in\n{}",
            print_program(&program)
        );
    }
    program
}

/// The code and message of the first lowering diagnostic of a program that must not lower.
fn lowering_error(text: &str) -> (String, String) {
    match try_lower(text) {
        Ok(p) => panic!("lowered unexpectedly:\n{}", print_program(&p)),
        Err(d) => (d[0].code.to_string(), d[0].message.clone()),
    }
}

/// Every statement of a function, nested ones included.
fn all_statements(function: &Function) -> Vec<Stmt> {
    let mut stmts = Vec::new();
    for_each_stmt(&function.body, &mut |s| stmts.push(s.clone()));
    stmts
}

#[test]
fn scalar_entry_is_straight_line_code() {
    let p = has_counts(
        "entry main (x: i32) (y: i32) : i32 = let z = x + y * 2 in z - 1",
        &[("screma", 0), ("if", 0), ("loop", 0)],
    );
    let f = function(&p);
    assert_eq!(f.name, "main");
    assert_eq!(f.params.len(), 2);
    assert_eq!(f.body.result.len(), 1);
    assert_eq!(f.body.stmts.len(), 3);
}

#[test]
fn one_function_per_entry_point_of_the_root_module() {
    let p = lowered(
        "def helper (x: f32) = x * 2f32
         entry a (x: f32) = helper x
         entry b (x: f32) = helper (helper x)",
    );
    let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn tuple_and_record_parameters_are_spread_into_components() {
    let p = lowered(
        "entry main (p: (f32, i64)) (r: {b: [3]i32, a: f32}) : (f32, i64) = (p.0 + r.a, p.1)",
    );
    let f = function(&p);
    assert_eq!(f.params.len(), 4);
    assert_eq!(f.signature.params.len(), 2);
    // Record fields in name order: `a` then `b`; the constant size stays a constant.
    let b = f.ty(f.params[3].var);
    assert_eq!(b.shape(), [SubExp::i64(3)]);
    assert_eq!(f.body.result.len(), 2);
}

#[test]
fn arrays_sharing_a_size_name_share_a_size_parameter() {
    let p = lowered(
        "entry main [n] (xs: [n]f32) (ys: [n]i32) (zs: [](f32, bool)) : i64 = n + length zs",
    );
    let f = function(&p);
    assert_eq!(f.params.len(), 4, "an array of pairs is two arrays");
    let dims: Vec<SubExp> = f.params.iter().map(|p| f.ty(p.var).shape()[0]).collect();
    assert_eq!(dims[0], dims[1]);
    assert_eq!(dims[2], dims[3], "the components of an array of tuples");
    assert_ne!(dims[0], dims[2]);
    // `n` and `length zs` are the size parameters themselves.
    assert!(matches!(f.body.stmts[0].exp, Exp::BinOp(_, a, b) if a == dims[0] && b == dims[2]));
}

#[test]
fn soacs_become_scremas() {
    has_counts(
        "entry main (xs: []f32) : ([]f32, f32, []f32) =
           (map (+1f32) xs, reduce (+) 0f32 xs, scan (*) 1f32 xs)",
        &[("screma", 3), ("map", 1), ("redomap", 1), ("scanomap", 1)],
    );
}

#[test]
fn map_result_size_is_the_input_size() {
    let p = lowered("entry main [n] (xs: [n]i32) = map2 (+) xs (map (*2) xs)");
    let f = function(&p);
    let n = f.ty(f.params[0].var).shape()[0];
    let result = f.body.result[0].as_var().expect("an array");
    assert_eq!(f.ty(result).shape(), [n]);
}

#[test]
fn functions_are_inlined_whatever_form_they_take() {
    has_counts(
        "def twice 'a (f: a -> a) (x: a) = f (f x)
         def compose 'a 'b 'c (f: b -> c) (g: a -> b) (x: a) = f (g x)
         entry main (xs: []i32) =
           let add = \\(k: i32) (y: i32) -> y + k
           let g = compose (map (add 1)) (map (* 2))
           let local (ys: []i32) = ys |> map (2 -)
           in (twice g xs, local xs |> reduce (+) 0, add 3 <| 4)",
        &[("map", 5), ("redomap", 1)],
    );
}

#[test]
fn zip_and_unzip_disappear() {
    has_counts(
        "entry main (xs: []f32) (ys: []i32) =
           let (a, b) = unzip (map (\\(x, y) -> (y, x)) (zip xs ys)) in (b, a)",
        &[("map", 1), ("screma", 1)],
    );
}

#[test]
fn logical_operators_short_circuit() {
    has_counts(
        "entry main (xs: []i32) (i: i64) : bool = i < length xs && xs[i] > 0 || i == 0",
        &[("if", 2)],
    );
}

#[test]
fn filter_is_a_flag_scan_and_a_scatter() {
    let p = has_counts(
        "entry main (xs: []f32) : []f32 = filter (\\x -> x > 0f32) xs",
        &[("scanomap", 1), ("scatter", 1), ("replicate", 1)],
    );
    // The result has an existential size: the count computed by the Screma.
    let f = function(&p);
    let result = f.body.result[0].as_var().expect("an array");
    let n = f.ty(f.params[0].var).shape()[0];
    assert_ne!(f.ty(result).shape()[0], n);
}

#[test]
fn hist_starts_from_a_replicate() {
    has_counts(
        "entry main (is: []i64) (vs: []f32) : []f32 = hist (+) 0f32 5 is vs",
        &[("hist", 1), ("replicate", 1)],
    );
    has_counts(
        "entry main (dest: *[]f32) (is: []i64) (vs: []f32) : []f32 =
           reduce_by_index dest f32.max (-f32.inf) is vs",
        &[("hist", 1), ("replicate", 0)],
    );
}

#[test]
fn shape_functions() {
    has_counts(
        "entry main (xss: [][]f32) (xs: []f32) =
           (transpose xss, flatten xss, concat xs xs, copy xs, iota 3, replicate 2 xs)",
        &[
            ("rearrange", 1),
            ("reshape", 1),
            ("concat", 1),
            ("copy", 1),
            ("iota", 1),
            ("replicate", 1),
        ],
    );
}

#[test]
fn indexing_and_updates() {
    has_counts(
        "entry main (xs: *[]f32) (i: i64) : ([]f32, f32, []f32) =
           let y = xs[i] let ys = xs with [0] = y in (ys[1:], y, ys)",
        &[("index", 2), ("update", 1)],
    );
}

#[test]
fn slices_with_a_variable_stride_take_their_defaults_by_its_sign() {
    has_counts(
        "entry main (xs: []i32) (s: i64) = (xs[::s], xs[1::s])",
        &[("index", 2)],
    );
}

#[test]
fn if_with_different_sizes_returns_an_existential_size() {
    let p = lowered("entry main (c: bool) (xs: []i32) = if c then xs else xs[1:]");
    let f = function(&p);
    let stmt = f
        .body
        .stmts
        .iter()
        .find(|s| matches!(s.exp, Exp::If { .. }))
        .expect("an if");
    assert_eq!(stmt.pat.len(), 2, "the size, then the array");
    assert_eq!(
        f.ty(stmt.pat[0]),
        &Type::Prim(ogham_ir::types::PrimType::I64)
    );
    assert_eq!(f.ty(stmt.pat[1]).shape(), [SubExp::Var(stmt.pat[0])]);
}

#[test]
fn loops_get_size_parameters_for_sizes_that_change() {
    let p = has_counts(
        "entry main (xs: []i32) =
           loop (a, b, c, d) = (xs, xs, xs, xs) for i < 3 do (concat a a, a, b, c)",
        &[("loop", 1)],
    );
    let f = function(&p);
    let stmt = f
        .body
        .stmts
        .iter()
        .find(|s| matches!(s.exp, Exp::Loop { .. }))
        .expect("a loop");
    // Each of the four accumulators gets its own size, found one after the other.
    assert_eq!(stmt.pat.len(), 8);
}

#[test]
fn loop_forms() {
    has_counts(
        "entry main (xs: []i32) (n: i64) =
           let a = loop acc = 0 for x in xs do acc + x
           let b = loop acc = 1i64 for i < n do acc * 2 + i
           let c = loop ys = xs while length ys > 2 do filter (\\y -> y > ys[0]) ys
           in (a, b, c)",
        &[("loop", 3)],
    );
}

#[test]
fn size_coercions_are_reshapes_of_every_component() {
    has_counts(
        "type mat [a][b] = [a][b]i32
         entry main [n][m] (xs: [n][m]i32) (k: i64) =
           ((xs, xs[1:]) :> ([k][m]i32, [k][m]i32), xs :> mat [k][m])",
        &[("reshape", 3)],
    );
}

#[test]
fn size_parameters_are_values() {
    let p = lowered(
        "def width [n] 't (xs: [n]t) : i64 = n
         entry main (xss: [][]f32) = width xss[0] + width xss",
    );
    let f = function(&p);
    let (outer, inner) = {
        let shape = f.ty(f.params[0].var).shape();
        (shape[0], shape[1])
    };
    let add = all_statements(f)
        .into_iter()
        .find(|s| matches!(s.exp, Exp::BinOp(..)))
        .expect("the addition");
    assert!(matches!(add.exp, Exp::BinOp(_, a, b) if a == inner && b == outer));
}

#[test]
fn lambda_sizes_independent_of_the_element_are_hoisted() {
    let p = has_counts(
        "entry main [m] (xss: [][m]i32) = map (\\xs -> xs[1:]) xss",
        &[("map", 1)],
    );
    let f = function(&p);
    let soac = f
        .body
        .stmts
        .iter()
        .position(|s| matches!(s.exp, Exp::Soac(..)))
        .expect("the map");
    assert!(soac > 0, "the slice length is computed before the map");
}

#[test]
fn lambda_sizes_that_may_fail_are_computed_only_for_a_nonempty_soac() {
    has_counts(
        "entry main [m] (xss: [][m]i32) (k: i64) = map (\\xs -> xs[m / k:]) xss",
        &[("map", 1), ("if", 1)],
    );
}

#[test]
fn every_statement_has_a_source_location() {
    let p = lowered(
        "entry main (xs: []f32) = map (\\x -> if x > 0f32 then x else -x) xs |> reduce (+) 0f32",
    );
    for stmt in all_statements(function(&p)) {
        assert!(stmt.loc.end > stmt.loc.start, "{stmt:?}");
    }
}

#[test]
fn function_valued_if_is_unsupported() {
    let (code, message) = lowering_error(
        "entry main (c: bool) (x: i32) = (if c then (\\y -> y + 1) else (\\y -> y * 2)) x",
    );
    assert_eq!(code, "E0801");
    assert!(message.contains("function"), "{message}");
}

#[test]
fn irregular_lambda_results_are_unsupported() {
    let (code, message) = lowering_error("entry main (ns: []i64) = map (\\n -> iota n) ns");
    assert_eq!(code, "E0801");
    assert!(
        message.contains("size depends on its argument"),
        "{message}"
    );
}
