//! The simplifier on hand-built programs: each rule fires where it must and not where it must
//! not; the result verifies and printing shows exactly what is left.

mod ir_build;

use ir_build::*;
use ogham_compiler::ir::count::count_constructs;
use ogham_compiler::ir::op::{BinOp, UnOp};
use ogham_compiler::ir::print::print_program;
use ogham_compiler::ir::verify::{Form, verify};
use ogham_compiler::ir::{DimIndex, Exp, LoopForm, Program, RedOp, Soac};
use ogham_compiler::opt::simplify::simplify;
use ogham_compiler::types::PrimType;

/// Simplifies a program that must verify before and after (in `form`); the printed result.
fn simplified(mut program: Program, form: Form) -> String {
    verify(&program, form).expect("the input verifies");
    simplify(&mut program);
    if let Err(errors) = verify(&program, form) {
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

fn bin(op: BinOp, a: ogham_compiler::ir::SubExp, b: ogham_compiler::ir::SubExp) -> Exp {
    Exp::BinOp(op, a, b)
}

#[test]
fn folds_integer_constants_with_interpreter_semantics() {
    let mut b = FnBuilder::new("f");
    let [a, c, d, e, g, h] = ["a", "c", "d", "e", "g", "h"].map(|n| b.var(n, I32));
    let p = b.program(body(
        vec![
            stmt(&[a], bin(BinOp::Add, i32c(2), i32c(3))),
            stmt(&[c], bin(BinOp::Mul, v(a), i32c(i32::MAX))),
            stmt(&[d], bin(BinOp::Div, i32c(-7), i32c(2))),
            stmt(&[e], bin(BinOp::Mod, i32c(-7), i32c(2))),
            stmt(&[g], bin(BinOp::Div, i32c(1), i32c(0))),
            stmt(&[h], Exp::UnOp(UnOp::Neg, i32c(i32::MIN))),
        ],
        &[v(c), v(d), v(e), v(g), v(h)],
    ));
    // 5 * i32::MAX wraps; -7 / 2 floors; division by zero is left to fail at run time.
    let expected = "entry f () : (i32, i32, i32, i32, i32) =
  let g_4: i32 = 1i32 / 0i32
  in (2147483643i32, -4i32, 1i32, g_4, -2147483648i32)
";
    assert_eq!(simplified(p, Form::Core), expected);
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
                    ogham_compiler::builtins::MathFn::Min,
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
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn propagates_copies_and_eliminates_common_subexpressions() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let y = b.param("y", I64);
    let [s1, s2, cp, prod, dead] = ["s", "s", "cp", "prod", "dead"].map(|n| b.var(n, I64));
    let p = b.program(body(
        vec![
            stmt(&[s1], bin(BinOp::Add, v(x), v(y))),
            stmt(&[cp], Exp::SubExp(v(x))),
            stmt(&[s2], bin(BinOp::Add, v(cp), v(y))),
            stmt(&[dead], bin(BinOp::Mul, v(s1), i64c(3))),
            stmt(&[prod], bin(BinOp::Mul, v(s1), v(s2))),
            stmt(
                &[],
                Exp::Assert {
                    cond: boolc(true),
                    message: "always".to_string(),
                    kind: ogham_compiler::ir::AssertKind::Size,
                },
            ),
        ],
        &[v(prod)],
    ));
    let expected = "entry f (x_0: i64, y_1: i64) : i64 =
  let s_2: i64 = x_0 + y_1
  let prod_5: i64 = s_2 * s_2
  in prod_5
";
    assert_eq!(simplified(p, Form::Core), expected);
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
                    kind: ogham_compiler::ir::AssertKind::Size,
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
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn inlines_if_on_a_constant_with_existential_sizes() {
    // let (k, ys: [k]f32) = if true then (n, xs) else (0, []) in ys
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let k = b.var("k", I64);
    let ys = b.var("ys", arr(PrimType::F32, &[v(k)]));
    let zs = b.var("zs", arr(PrimType::F32, &[v(k)]));
    let empty = b.var("empty", arr(PrimType::F32, &[i64c(0)]));
    let p = b.program(body(
        vec![
            stmt(
                &[k, ys],
                Exp::If {
                    cond: boolc(true),
                    then_body: body(vec![], &[v(n), v(xs)]),
                    else_body: body(
                        vec![stmt(&[empty], Exp::ArrayLit(vec![], F32))],
                        &[i64c(0), v(empty)],
                    ),
                    ret: vec![I64, arr(PrimType::F32, &[v(k)])],
                },
            ),
            stmt(&[zs], Exp::Copy(ys)),
        ],
        &[v(zs)],
    ));
    let expected = "entry f [n_0] (xs_1: [n_0]f32) : [n_0]f32 =
  let zs_4: [n_0]f32 = copy(xs_1)
  in zs_4
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn indexes_into_iota_and_replicate_only_when_in_bounds() {
    let mut b = FnBuilder::new("f");
    let n = b.param("n", I64);
    let j = b.param("j", I64);
    let x = b.param("x", F32);
    let io = b.var("io", arr(PrimType::I64, &[v(n)]));
    let rep = b.var("rep", arr(PrimType::F32, &[v(n)]));
    let acc = b.var("acc", I64);
    let i = b.var("i", I64);
    let (a, r, s, t) = (
        b.var("a", I64),
        b.var("r", F32),
        b.var("s", I64),
        b.var("t", I64),
    );
    let acc_f = b.var("accf", F32);
    let acc_f2 = b.var("accf", F32);
    let out = b.var("out", I64);
    let outf = b.var("outf", F32);
    let unknown = b.var("unknown", I64);
    let fix = |i| vec![DimIndex::Fix(v(i))];
    let p = b.program(body(
        vec![
            stmt(&[io], Exp::Iota(v(n))),
            stmt(&[rep], Exp::Replicate(v(n), v(x))),
            stmt(
                &[out, outf],
                Exp::Loop {
                    params: vec![(acc, i64c(0)), (acc_f, f32c(0.0))],
                    form: LoopForm::For {
                        index: i,
                        bound: v(n),
                    },
                    body: body(
                        vec![
                            stmt(&[a], Exp::Index(io, fix(i))),
                            stmt(&[r], Exp::Index(rep, fix(i))),
                            stmt(&[s], bin(BinOp::Add, v(acc), v(a))),
                            stmt(&[acc_f2], bin(BinOp::Add, v(acc_f), v(r))),
                        ],
                        &[v(s), v(acc_f2)],
                    ),
                },
            ),
            // `j` may be out of bounds: the index stays (and fails at run time).
            stmt(&[unknown], Exp::Index(io, fix(j))),
            stmt(&[t], bin(BinOp::Add, v(out), v(unknown))),
        ],
        &[v(t), v(outf)],
    ));
    let expected = "entry f (n_0: i64, j_1: i64, x_2: f32) : (i64, f32) =
  let io_3: [n_0]i64 = iota(n_0)
  let (out_13: i64, outf_14: f32) = loop (acc_5: i64 = 0i64, accf_11: f32 = 0.0f32) for i_6 < n_0 do {
    let s_9: i64 = acc_5 + i_6
    let accf_12: f32 = accf_11 + x_2
    in (s_9, accf_12)
  }
  let unknown_15: i64 = io_3[j_1]
  let t_10: i64 = out_13 + unknown_15
  in (t_10, outf_14)
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn hoists_invariant_code_that_cannot_fail() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let d = b.param("d", I64);
    let acc = b.var("acc", I64);
    let i = b.var("i", I64);
    let [sq, q, s1, s2, out] = ["sq", "q", "s", "s", "out"].map(|n| b.var(n, I64));
    let p = b.program(body(
        vec![stmt(
            &[out],
            Exp::Loop {
                params: vec![(acc, i64c(0))],
                form: LoopForm::For {
                    index: i,
                    bound: i64c(10),
                },
                body: body(
                    vec![
                        stmt(&[sq], bin(BinOp::Mul, v(x), v(x))),
                        // May divide by zero: stays in the loop, which may not run.
                        stmt(&[q], bin(BinOp::Div, v(x), v(d))),
                        stmt(&[s1], bin(BinOp::Add, v(acc), v(sq))),
                        stmt(&[s2], bin(BinOp::Add, v(s1), v(q))),
                    ],
                    &[v(s2)],
                ),
            },
        )],
        &[v(out)],
    ));
    let expected = "entry f (x_0: i64, d_1: i64) : i64 =
  let sq_4: i64 = x_0 * x_0
  let out_8: i64 = loop (acc_2: i64 = 0i64) for i_3 < 10i64 do {
    let q_5: i64 = x_0 / d_1
    let s_6: i64 = acc_2 + sq_4
    let s_7: i64 = s_6 + q_5
    in s_7
  }
  in out_8
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn removes_unused_and_invariant_loop_parameters() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", F64);
    let (used, unused, inv) = (b.var("used", F64), b.var("unused", F64), b.var("inv", F64));
    let i = b.var("i", I64);
    let (u2, un2) = (b.var("used", F64), b.var("unused", F64));
    let (o1, o2, o3) = (b.var("o", F64), b.var("o", F64), b.var("o", F64));
    let p = b.program(body(
        vec![stmt(
            &[o1, o2, o3],
            Exp::Loop {
                params: vec![(used, v(x)), (unused, f64c(1.0)), (inv, f64c(2.5))],
                form: LoopForm::For {
                    index: i,
                    bound: i64c(4),
                },
                body: body(
                    vec![
                        stmt(&[u2], bin(BinOp::Mul, v(used), v(inv))),
                        stmt(&[un2], bin(BinOp::Add, v(unused), f64c(1.0))),
                    ],
                    &[v(u2), v(un2), v(inv)],
                ),
            },
        )],
        &[v(o1), v(o3)],
    ));
    let expected = "entry f (x_0: f64) : (f64, f64) =
  let o_7: f64 = loop (used_1: f64 = x_0) for i_4 < 4i64 do {
    let used_5: f64 = used_1 * 2.5f64
    in used_5
  }
  in (o_7, 2.5f64)
";
    assert_eq!(simplified(p, Form::Core), expected);
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
                        Exp::Math(
                            ogham_compiler::builtins::MathFn::Exp,
                            PrimType::F32,
                            vec![v(x)],
                        ),
                    ),
                ],
                &[v(x), v(y), v(z)],
            ),
            &[F32, F32, F32],
        ),
        scans: vec![],
        reds: vec![RedOp {
            lambda: lambda(
                &[a, c],
                body(vec![stmt(&[s], bin(BinOp::Add, v(a), v(c)))], &[v(s)]),
                &[F32],
            ),
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
    assert_eq!(simplified(p.clone(), Form::Core), expected);
    let mut q = p;
    simplify(&mut q);
    assert_eq!(count_constructs(&q)["redomap"], 1);
}

#[test]
fn never_merges_arrays_that_are_consumed() {
    // a = iota n; b = iota n; a' = a with [0] = 7; result (a', b)
    let mut b = FnBuilder::new("f");
    let n = b.param("n", I64);
    let a = b.var("a", arr(PrimType::I64, &[v(n)]));
    let c = b.var("b", arr(PrimType::I64, &[v(n)]));
    let a2 = b.var("a", arr(PrimType::I64, &[v(n)]));
    let s1 = b.var("s", arr(PrimType::I64, &[v(n)]));
    let s2 = b.var("s", arr(PrimType::I64, &[v(n)]));
    let p = b.program(body(
        vec![
            stmt(&[a], Exp::Iota(v(n))),
            stmt(&[c], Exp::Iota(v(n))),
            stmt(&[a2], Exp::Update(a, vec![DimIndex::Fix(i64c(0))], i64c(7))),
            stmt(&[s1], Exp::Replicate(v(n), i64c(1))),
            stmt(&[s2], Exp::Replicate(v(n), i64c(1))),
        ],
        &[v(a2), v(c), v(s1), v(s2)],
    ));
    let expected = "entry f (n_0: i64) : ([n_0]i64, [n_0]i64, [n_0]i64, [n_0]i64) =
  let a_1: [n_0]i64 = iota(n_0)
  let b_2: [n_0]i64 = iota(n_0)
  let a_3: [n_0]i64 = a_1 with [0i64] = 7i64
  let s_4: [n_0]i64 = replicate(n_0, 1i64)
  in (a_3, b_2, s_4, s_4)
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn simplifies_kernel_ir_and_keeps_it_kernel_ir() {
    let text = simplified(sample_kernel(), Form::Kernel);
    // The threshold and its `if` stay; the unused parameter and kernels stay (they are used).
    assert!(text.contains("threshold(suff_outer_par_0, n_0)"), "{text}");
    assert!(text.contains("segscan block"), "{text}");
    assert!(text.contains("seghist thread"), "{text}");
}

#[test]
fn core_sample_is_stable() {
    let expected = print_program(&sample_core());
    // Nothing to simplify in the sample except nothing: it is already minimal.
    assert_eq!(simplified(sample_core(), Form::Core), expected);
}

#[test]
fn simplifies_shapes_and_conversions() {
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let m = b.var("m", I64);
    let k = b.var("k", I64);
    let xs = b.param("xs", arr(PrimType::I32, &[v(n), v(m), v(k)]));
    let i = b.param("i", I64);
    let r1 = b.var("r", arr(PrimType::I32, &[v(m), v(k), v(n)]));
    let r2 = b.var("r", arr(PrimType::I32, &[v(n), v(k), v(m)]));
    let id = b.var("id", arr(PrimType::I32, &[v(n), v(m), v(k)]));
    let same = b.var("same", arr(PrimType::I32, &[v(n), v(m), v(k)]));
    let c = b.var("c", I64);
    let p = b.program(body(
        vec![
            stmt(&[r1], Exp::Rearrange(xs, vec![1, 2, 0])),
            stmt(&[r2], Exp::Rearrange(r1, vec![2, 1, 0])),
            stmt(&[id], Exp::Rearrange(xs, vec![0, 1, 2])),
            stmt(&[same], Exp::Reshape(id, vec![v(n), v(m), v(k)])),
            stmt(&[c], Exp::Convert(PrimType::I64, v(i))),
        ],
        &[v(r2), v(same), v(c)],
    ));
    let expected = "entry f [n_0, m_1, k_2] (xs_3: [n_0][m_1][k_2]i32, i_4: i64) : ([n_0][k_2][m_1]i32, [n_0][m_1][k_2]i32, i64) =
  let r_6: [n_0][k_2][m_1]i32 = rearrange((0, 2, 1), xs_3)
  in (r_6, xs_3, i_4)
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn simplifies_boolean_identities_and_trivial_ifs() {
    let mut b = FnBuilder::new("f");
    let p0 = b.param("p", BOOL);
    let q = b.param("q", BOOL);
    let [a, c, d, e] = ["a", "c", "d", "e"].map(|n| b.var(n, BOOL));
    let (r1, r2) = (b.var("r", BOOL), b.var("unused", I64));
    let t = b.var("t", I64);
    let iff = Exp::If {
        cond: v(q),
        then_body: body(
            vec![stmt(&[t], bin(BinOp::Add, i64c(1), i64c(2)))],
            &[v(p0), v(t)],
        ),
        else_body: body(vec![], &[v(p0), i64c(4)]),
        ret: vec![BOOL, I64],
    };
    let p = b.program(body(
        vec![
            stmt(&[a], bin(BinOp::BitAnd, v(p0), boolc(true))),
            stmt(&[c], bin(BinOp::BitOr, v(a), boolc(false))),
            stmt(&[d], bin(BinOp::Eq, v(c), v(c))),
            stmt(&[e], bin(BinOp::BitAnd, v(d), v(q))),
            // Both branches return `p` once the unused result is gone.
            stmt(&[r1, r2], iff),
        ],
        &[v(e), v(r1)],
    ));
    let expected = "entry f (p_0: bool, q_1: bool) : (bool, bool) =
  in (q_1, p_0)
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn expressions_of_a_branch_are_not_available_after_it() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let c = b.param("c", BOOL);
    let (s1, s2, r, out) = (
        b.var("s", I64),
        b.var("s", I64),
        b.var("r", I64),
        b.var("out", I64),
    );
    let p = b.program(body(
        vec![
            stmt(
                &[r],
                Exp::If {
                    cond: v(c),
                    then_body: body(vec![stmt(&[s1], bin(BinOp::Mul, v(x), v(x)))], &[v(s1)]),
                    else_body: body(vec![], &[i64c(0)]),
                    ret: vec![I64],
                },
            ),
            stmt(&[s2], bin(BinOp::Mul, v(x), v(x))),
            stmt(&[out], bin(BinOp::Add, v(r), v(s2))),
        ],
        &[v(out)],
    ));
    let expected = "entry f (x_0: i64, c_1: bool) : i64 =
  let r_4: i64 = if c_1 : i64 then {
    let s_2: i64 = x_0 * x_0
    in s_2
  } else {
    in 0i64
  }
  let s_3: i64 = x_0 * x_0
  let out_5: i64 = r_4 + s_3
  in out_5
";
    assert_eq!(simplified(p, Form::Core), expected);
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
    assert_eq!(counts.len(), ogham_compiler::ir::count::CONSTRUCTS.len());
}

#[test]
fn drops_whole_dimension_slices() {
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let m = b.var("m", I64);
    let xss = b.param("xss", arr(PrimType::F32, &[v(n), v(m)]));
    let i = b.param("i", I64);
    let row = b.var("row", arr(PrimType::F32, &[v(m)]));
    let all = b.var("all", arr(PrimType::F32, &[v(n), v(m)]));
    let col = b.var("col", arr(PrimType::F32, &[v(n)]));
    let whole = |len| DimIndex::Slice {
        start: i64c(0),
        len,
        stride: i64c(1),
    };
    let p = b.program(body(
        vec![
            stmt(
                &[row],
                Exp::Index(xss, vec![DimIndex::Fix(v(i)), whole(v(m))]),
            ),
            stmt(&[all], Exp::Index(xss, vec![whole(v(n)), whole(v(m))])),
            stmt(
                &[col],
                Exp::Index(all, vec![whole(v(n)), DimIndex::Fix(v(i))]),
            ),
        ],
        &[v(row), v(col)],
    ));
    let expected = "entry f [n_0, m_1] (xss_2: [n_0][m_1]f32, i_3: i64) : ([m_1]f32, [n_0]f32) =
  let row_4: [m_1]f32 = xss_2[i_3]
  let col_6: [n_0]f32 = xss_2[0i64:+n_0*1i64, i_3]
  in (row_4, col_6)
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn drops_unused_mapped_results_of_kernels() {
    // The segred's mapped result `doubled` is unused once the function returns only `sum`.
    let mut program = sample_segred(F32);
    program.functions[0].body.result.truncate(1);
    let expected = r"entry r [n_0] (xs_1: [n_0]f32) : f32 =
  let sum_8: f32 = segred thread (i_2 < n_0) : f32
    reduce_comm \(a_5: f32, c_6: f32) : f32 -> {
      let s_7: f32 = a_5 + c_6
      in s_7
    } (0.0f32)
    do {
      let x_3: f32 = xs_1[i_2]
      in x_3
    }
  in sum_8
";
    assert_eq!(simplified(program, Form::Kernel), expected);
}

#[test]
fn constant_indices_into_iota_are_checked_against_its_size() {
    let mut b = FnBuilder::new("f");
    let io = b.var("io", arr(PrimType::I64, &[i64c(3)]));
    let (last, past, negative) = (b.var("last", I64), b.var("past", I64), b.var("neg", I64));
    let fix = |i| vec![DimIndex::Fix(i64c(i))];
    let p = b.program(body(
        vec![
            stmt(&[io], Exp::Iota(i64c(3))),
            stmt(&[last], Exp::Index(io, fix(2))),
            stmt(&[past], Exp::Index(io, fix(3))),
            stmt(&[negative], Exp::Index(io, fix(-1))),
        ],
        &[v(last), v(past), v(negative)],
    ));
    let expected = "entry f () : (i64, i64, i64) =
  let io_0: [3i64]i64 = iota(3i64)
  let past_2: i64 = io_0[3i64]
  let neg_3: i64 = io_0[-1i64]
  in (2i64, past_2, neg_3)
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn unrolls_loops_that_run_at_most_once() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let counting_loop = |b: &mut FnBuilder, bound| {
        let (acc, i, next, out) = (
            b.var("acc", I64),
            b.var("i", I64),
            b.var("next", I64),
            b.var("out", I64),
        );
        let exp = Exp::Loop {
            params: vec![(acc, v(x))],
            form: LoopForm::For {
                index: i,
                bound: i64c(bound),
            },
            body: body(
                vec![stmt(&[next], bin(BinOp::Add, v(acc), v(i)))],
                &[v(next)],
            ),
        };
        (stmt(&[out], exp), out)
    };
    let (never, never_out) = counting_loop(&mut b, 0);
    let (once, once_out) = counting_loop(&mut b, 1);
    let (go, step, go2) = (b.var("go", BOOL), b.var("step", I64), b.var("go", BOOL));
    let (w_out, w_go) = (b.var("w", I64), b.var("wgo", BOOL));
    let step2 = b.var("step", I64);
    let while_false = Exp::Loop {
        params: vec![(step, v(x)), (go, boolc(false))],
        form: LoopForm::While { cond: go },
        body: body(
            vec![
                stmt(&[step2], bin(BinOp::Mul, v(step), i64c(2))),
                stmt(&[go2], bin(BinOp::Lt, v(step2), i64c(100))),
            ],
            &[v(step2), v(go2)],
        ),
    };
    let p = b.program(body(
        vec![never, once, stmt(&[w_out, w_go], while_false)],
        &[v(never_out), v(once_out), v(w_out)],
    ));
    let expected = "entry f (x_0: i64) : (i64, i64, i64) =
  in (x_0, x_0, x_0)
";
    assert_eq!(simplified(p, Form::Core), expected);
}

#[test]
fn removes_identity_maps_unless_their_results_are_consumed() {
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let ws = b.param("ws", arr(PrimType::I32, &[v(n)]));
    let (x, w) = (b.var("x", F32), b.var("w", I32));
    let (x2, w2) = (b.var("x", F32), b.var("w", I32));
    let ys = b.var("ys", arr(PrimType::I32, &[v(n)]));
    let zs = b.var("zs", arr(PrimType::F32, &[v(n)]));
    let copied = b.var("copied", arr(PrimType::F32, &[v(n)]));
    let updated = b.var("updated", arr(PrimType::F32, &[v(n)]));
    let swap = Exp::Soac(Soac::Screma {
        width: v(n),
        inputs: vec![xs, ws],
        map: lambda(&[x, w], body(vec![], &[v(w), v(x)]), &[I32, F32]),
        scans: vec![],
        reds: vec![],
    });
    // A map is a fresh array: updating its result must not update `xs`.
    let fresh = Exp::Soac(Soac::Screma {
        width: v(n),
        inputs: vec![xs, ws],
        map: lambda(&[x2, w2], body(vec![], &[v(x2)]), &[F32]),
        scans: vec![],
        reds: vec![],
    });
    let p = b.program(body(
        vec![
            stmt(&[ys, zs], swap),
            stmt(&[copied], fresh),
            stmt(
                &[updated],
                Exp::Update(copied, vec![DimIndex::Fix(i64c(0))], f32c(1.0)),
            ),
        ],
        &[v(ys), v(zs), v(updated)],
    ));
    let expected = r"entry f [n_0] (xs_1: [n_0]f32, ws_2: [n_0]i32) : ([n_0]i32, [n_0]f32, [n_0]f32) =
  let copied_9: [n_0]f32 = map n_0 (xs_1) \(x_5: f32) : f32 -> x_5
  let updated_10: [n_0]f32 = copied_9 with [0i64] = 1.0f32
  in (ws_2, xs_1, updated_10)
";
    assert_eq!(simplified(p, Form::Core), expected);
}
