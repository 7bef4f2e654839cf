//! The IR verifier: well-formed programs pass; each kind of broken program is rejected with a
//! message naming the function, the statement and the problem. Most rejections are filetests
//! (`tests/filetests/verify-core/*.ir`, `verify-kernel/*.ir`: a broken program in the IR text
//! format and the verifier's messages); what is left here pairs a broken program with its
//! repaired version or cannot be printed.

mod ir_build;

use ir_build::*;
use ogham_ir::types::PrimType;
use ogham_ir::verify::verify;
use ogham_ir::{DimIndex, Exp, Form, LoopForm, Program};

/// The verifier's messages for `program`, which must be rejected.
fn rejected<H: Form>(program: &Program<H>) -> Vec<String> {
    match verify(program) {
        Ok(()) => panic!("accepted an invalid program"),
        Err(errors) => errors,
    }
}

fn assert_mentions(errors: &[String], needle: &str) {
    assert!(
        errors.iter().any(|e| e.contains(needle)),
        "no message contains {needle:?}: {errors:#?}"
    );
}

#[test]
fn accepts_well_formed_programs() {
    assert_eq!(verify(&sample_core()), Ok(()));
    assert_eq!(verify(&sample_kernel()), Ok(()));
}

#[test]
fn consumption_in_loops_and_branches() {
    // A loop body consuming its own parameter is fine, and consumes the initial value; the
    // two branches of an `if` may each use what the other consumes.
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.unique_param("xs", arr(PrimType::I64, &[v(n)]));
    let c = b.param("c", BOOL);
    let acc = b.var("acc", arr(PrimType::I64, &[v(n)]));
    let i = b.var("i", I64);
    let acc2 = b.var("acc", arr(PrimType::I64, &[v(n)]));
    let out = b.var("out", arr(PrimType::I64, &[v(n)]));
    let then_ys = b.var("ys", arr(PrimType::I64, &[v(n)]));
    let chosen = b.var("chosen", arr(PrimType::I64, &[v(n)]));
    let lp = Exp::Loop {
        params: vec![(acc, v(xs))],
        form: LoopForm::For {
            index: i,
            bound: v(n),
        },
        body: body(
            vec![stmt(
                &[acc2],
                Exp::Update(acc, vec![DimIndex::Fix(v(i))], v(i)),
            )],
            &[v(acc2)],
        ),
    };
    let good = |lp: Exp| {
        let iff = Exp::If {
            cond: v(c),
            then_body: body(
                vec![stmt(
                    &[then_ys],
                    Exp::Update(out, vec![DimIndex::Fix(i64c(0))], i64c(7)),
                )],
                &[v(then_ys)],
            ),
            else_body: body(vec![], &[v(out)]),
            ret: vec![arr(PrimType::I64, &[v(n)])],
        };
        vec![stmt(&[out], lp), stmt(&[chosen], iff)]
    };
    let mut b2 = FnBuilder::new("f");
    b2.f = b.f.clone();
    let p = b2.program(body(good(lp.clone()), &[v(chosen)]));
    assert_eq!(verify(&p), Ok(()));

    // Using the loop's consumed initial value afterwards is not.
    let z = b.var("z", I64);
    let mut stmts = good(lp);
    stmts.push(stmt(&[z], Exp::Index(xs, vec![DimIndex::Fix(i64c(0))])));
    let p = b.program(body(stmts, &[v(chosen), v(z)]));
    assert_mentions(
        &rejected(&p),
        "f: let z_9: i64: xs_1 is used after being consumed by `let out_6: [n_0]i64`",
    );
}

#[test]
fn existential_sizes_are_bound_by_the_pattern() {
    // let (k: i64, ys: [k]f32) = if c then (n, xs) else (0, [])
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let c = b.param("c", BOOL);
    let k = b.var("k", I64);
    let ys = b.var("ys", arr(PrimType::F32, &[v(k)]));
    let empty = b.var("empty", arr(PrimType::F32, &[i64c(0)]));
    let p = b.program(body(
        vec![stmt(
            &[k, ys],
            Exp::If {
                cond: v(c),
                then_body: body(vec![], &[v(n), v(xs)]),
                else_body: body(
                    vec![stmt(&[empty], Exp::ArrayLit(vec![], F32))],
                    &[i64c(0), v(empty)],
                ),
                ret: vec![I64, arr(PrimType::F32, &[v(k)])],
            },
        )],
        &[v(k), v(ys)],
    ));
    assert_eq!(verify(&p), Ok(()));
}

#[test]
fn checks_scatter() {
    assert_eq!(verify(&sample_scatter(2, false)), Ok(()));
    assert_mentions(
        &rejected(&sample_scatter(1, false)),
        "s: let out_7: [m_1]f32: the map lambda returns 1 values for 1 destinations",
    );
    assert_mentions(
        &rejected(&sample_scatter(2, true)),
        "s: let again_8: [m_1]f32: dst_2 is used after being consumed by `let out_7: [m_1]f32`",
    );
}

#[test]
fn checks_histograms() {
    assert_eq!(verify(&sample_hist(i32c(0))), Ok(()));
    assert_mentions(
        &rejected(&sample_hist(f32c(0.0))),
        "h: let out_8: [k_1]i32: neutral element 0 of histogram 0 has type f32, expected i32",
    );
}

#[test]
fn checks_segmented_reductions() {
    assert_eq!(verify(&sample_segred(F32)), Ok(()));
    assert_mentions(
        &rejected(&sample_segred(arr(PrimType::F32, &[i64c(1)]))),
        "r: let (sum_8: [1i64]f32, doubled_9: [n_0]f32): sum_8 has type [1i64]f32, but the expression returns f32",
    );
}

#[test]
fn reports_variables_missing_from_the_arena_without_panicking() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let ghost = ogham_ir::VarId(99);
    let p = b.program(body(
        vec![
            stmt(
                &[ghost],
                Exp::Convert(PrimType::F32, v(ogham_ir::VarId(98))),
            ),
            stmt(&[], Exp::Copy(ghost)),
        ],
        &[v(x)],
    ));
    let errors = rejected(&p);
    assert_mentions(
        &errors,
        "f: let v_99: <unknown>: variable v_98 is not in the arena",
    );
    assert_mentions(
        &errors,
        "f: let v_99: <unknown>: variable v_99 is not in the arena",
    );
}
