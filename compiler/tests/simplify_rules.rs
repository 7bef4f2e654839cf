//! The simplifier on hand-built programs: each rule fires where it must and not where it must
//! not; the result verifies and printing shows exactly what is left. Most rules are shown by the
//! filetests `tests/filetests/simplify/*.ir` and `tests/filetests/kir-simplify/*.ir` (the same
//! programs in the IR text format); what is left here checks more than the printed result.

mod ir_build;

use ir_build::*;
use ogham_compiler::opt::simplify::simplify;
use ogham_ir::count::count_constructs;
use ogham_ir::op::BinOp;
use ogham_ir::print::print_program;
use ogham_ir::types::PrimType;
use ogham_ir::verify::verify;
use ogham_ir::{Exp, Form, Program, RedOp, Soac};

/// Simplifies a program (core or kernel IR) that must verify before and after; the printed
/// result.
fn simplified<H: Form>(mut program: Program<H>) -> String {
    verify(&program).expect("the input verifies");
    simplify(&mut program);
    if let Err(errors) = verify(&program) {
        panic!(
            "invalid after simplify:\n{}\n{}",
            errors.join("\n"),
            print_program(&program)
        );
    }
    let once = print_program(&program);
    simplify(&mut program);
    assert_eq!(print_program(&program), once, "simplify is not idempotent");
    once
}

fn bin(op: BinOp, a: ogham_ir::SubExp, b: ogham_ir::SubExp) -> Exp {
    Exp::BinOp(op, a, b)
}

#[test]
fn folds_floats_exactly_and_keeps_inexact_identities() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", F32);
    let [a, c, d, e, g, h] = ["a", "c", "d", "e", "g", "h"].map(|n| b.var(n, F32));
    let conv = b.var("conv", I64);
    let p = b.program(body(
        vec![
            stmt(&[a], bin(BinOp::Add, f32c(0.1), f32c(0.2))),
            stmt(&[c], bin(BinOp::Mul, v(x), f32c(1.0))),
            stmt(&[d], bin(BinOp::Add, v(x), f32c(0.0))),
            stmt(&[e], bin(BinOp::Add, v(x), f32c(-0.0))),
            stmt(&[g], bin(BinOp::Mul, v(x), f32c(0.0))),
            stmt(
                &[h],
                Exp::Math(
                    ogham_ir::math::MathFn::Min,
                    PrimType::F32,
                    vec![f32c(f32::NAN), f32c(2.0)],
                ),
            ),
            stmt(&[conv], Exp::Convert(PrimType::I64, f32c(-2.7))),
        ],
        &[v(a), v(c), v(d), v(e), v(g), v(h), v(conv)],
    ));
    // 0.1 + 0.2 in f32 is 0.3 exactly rounded (0.3f32 prints as 0.3, unlike f64's sum).
    assert_eq!(0.1f32 + 0.2f32, 0.3f32);
    let expected = "entry f (x_0: f32) : (f32, f32, f32, f32, f32, f32, i64) =
  let d_3: f32 = x_0 + 0.0f32
  let g_5: f32 = x_0 * 0.0f32
  in (0.3f32, x_0, d_3, x_0, g_5, 2.0f32, -2i64)
";
    assert_eq!(simplified(p), expected);
}

#[test]
fn keeps_failing_assertions() {
    let mut b = FnBuilder::new("f");
    let n = b.param("n", I64);
    let ok = b.var("ok", BOOL);
    let p = b.program(body(
        vec![
            stmt(&[ok], bin(BinOp::Ge, v(n), i64c(0))),
            stmt(
                &[],
                Exp::Assert {
                    cond: v(ok),
                    message: "n must be non-negative".to_string(),
                    kind: ogham_ir::AssertKind::Size,
                },
            ),
        ],
        &[v(n)],
    ));
    let expected = "entry f (n_0: i64) : i64 =
  let ok_1: bool = n_0 >= 0i64
  let () = assert(ok_1, \"n must be non-negative\")
  in n_0
";
    assert_eq!(simplified(p), expected);
}

#[test]
fn drops_dead_map_outputs_and_their_computation() {
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let x = b.var("x", F32);
    let (y, z) = (b.var("y", F32), b.var("z", F32));
    let (a, c, s) = (b.var("a", F32), b.var("c", F32), b.var("s", F32));
    let sum = b.var("sum", F32);
    let ys = b.var("ys", arr(PrimType::F32, &[v(n)]));
    let zs = b.var("zs", arr(PrimType::F32, &[v(n)]));
    let screma = Exp::Soac(Soac::Screma {
        width: v(n),
        inputs: vec![xs],
        map: lambda(
            &[x],
            body(
                vec![
                    stmt(&[y], bin(BinOp::Add, v(x), f32c(1.0))),
                    stmt(
                        &[z],
                        Exp::Math(ogham_ir::math::MathFn::Exp, PrimType::F32, vec![v(x)]),
                    ),
                ],
                &[v(x), v(y), v(z)],
            ),
            &[F32, F32, F32],
        ),
        scans: vec![],
        reds: vec![RedOp {
            lambda: add_lambda(a, c, s, F32),
            neutral: vec![f32c(0.0)],
            commutative: true,
        }],
    });
    let p = b.program(body(vec![stmt(&[sum, ys, zs], screma)], &[v(sum), v(ys)]));
    let expected = r"entry f [n_0] (xs_1: [n_0]f32) : (f32, [n_0]f32) =
  let (sum_8: f32, ys_9: [n_0]f32) = redomap n_0 (xs_1)
    reduce_comm \(a_5: f32, c_6: f32) : f32 -> {
      let s_7: f32 = a_5 + c_6
      in s_7
    } (0.0f32)
    map \(x_2: f32) : (f32, f32) -> {
      let y_3: f32 = x_2 + 1.0f32
      in (x_2, y_3)
    }
  in (sum_8, ys_9)
";
    assert_eq!(simplified(p.clone()), expected);
    let mut q = p;
    simplify(&mut q);
    assert_eq!(count_constructs(&q)["redomap"], 1);
}

#[test]
fn simplifies_kernel_ir_and_keeps_it_kernel_ir() {
    let text = simplified(sample_kernel());
    // The threshold and its `if` stay; the unused parameter and kernels stay (they are used).
    assert!(text.contains("threshold(suff_outer_par_0, n_0)"), "{text}");
    assert!(text.contains("segscan block"), "{text}");
    assert!(text.contains("seghist thread"), "{text}");
}

#[test]
fn core_sample_is_stable() {
    let expected = print_program(&sample_core());
    // Nothing to simplify in the sample except nothing: it is already minimal.
    assert_eq!(simplified(sample_core()), expected);
}

#[test]
fn counts_constructs_of_nested_code() {
    let counts = count_constructs(&sample_core());
    assert_eq!(counts["screma"], 2);
    assert_eq!(counts["map"], 1);
    assert_eq!(counts["redomap"], 1);
    assert_eq!(counts["scanomap"], 0);
    assert_eq!(counts["loop"], 1);
    assert_eq!(counts["if"], 1);
    let counts = count_constructs(&sample_kernel());
    assert_eq!(counts["segscan"], 1);
    assert_eq!(counts["seghist"], 1);
    assert_eq!(counts["block"], 1);
    assert_eq!(counts["thread"], 1);
    assert_eq!(counts["threshold"], 1);
    assert_eq!(counts["replicate"], 1);
    assert_eq!(counts["segmap"], 0);
    assert_eq!(counts.len(), ogham_ir::count::CONSTRUCTS.len());
}
