//! The IR verifier: well-formed programs pass; each kind of broken program is rejected with a
//! message naming the function, the statement and the problem.

mod ir_build;

use ir_build::*;
use ogham_compiler::ir::op::BinOp;
use ogham_compiler::ir::verify::{Form, verify};
use ogham_compiler::ir::{DimIndex, Exp, LoopForm, Program, Soac};
use ogham_compiler::kir::{SegKind, SegLevel, SegOp, ThresholdId, ThresholdKind};
use ogham_compiler::types::PrimType;

/// The verifier's messages for `program`, which must be rejected.
fn rejected(program: &Program, form: Form) -> Vec<String> {
    match verify(program, form) {
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
    assert_eq!(verify(&sample_core(), Form::Core), Ok(()));
    assert_eq!(verify(&sample_kernel(), Form::Kernel), Ok(()));
}

#[test]
fn forms_are_enforced() {
    // SOACs at host level are not kernel IR; kernels and thresholds are not core IR.
    assert_mentions(
        &rejected(&sample_core(), Form::Kernel),
        "main: let ys_4: [n_0]f32: a SOAC at host level in kernel IR",
    );
    let errors = rejected(&sample_kernel(), Form::Core);
    assert_mentions(&errors, "k: let suff_3: bool: a threshold in core IR");
    assert_mentions(&errors, "k: let scanned_5: [n_0]f32: a kernel in core IR");
}

#[test]
fn rejects_unbound_and_out_of_scope_variables() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let y = b.var("y", I64);
    let z = b.var("z", I64);
    let p = b.program(body(
        vec![stmt(&[z], Exp::BinOp(BinOp::Add, v(x), v(y)))],
        &[v(z)],
    ));
    assert_mentions(
        &rejected(&p, Form::Core),
        "f: let z_2: i64: y_1 is not in scope",
    );

    // A variable bound in a branch is not in scope after the `if`.
    let mut b = FnBuilder::new("g");
    let c = b.param("c", BOOL);
    let inner = b.var("inner", I64);
    let r = b.var("r", I64);
    let p = b.program(body(
        vec![stmt(
            &[r],
            Exp::If {
                cond: v(c),
                then_body: body(vec![stmt(&[inner], Exp::SubExp(i64c(1)))], &[v(inner)]),
                else_body: body(vec![], &[i64c(2)]),
                ret: vec![I64],
            },
        )],
        &[v(inner)],
    ));
    assert_mentions(
        &rejected(&p, Form::Core),
        "g: result: inner_1 is not in scope",
    );
}

#[test]
fn rejects_double_binding_and_unbound_sizes() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let y = b.var("y", I64);
    let m = b.var("m", I64);
    let ys = b.var("ys", arr(PrimType::F32, &[v(m)]));
    let p = b.program(body(
        vec![
            stmt(&[y], Exp::SubExp(v(x))),
            stmt(&[y], Exp::SubExp(v(x))),
            stmt(&[ys], Exp::Replicate(v(x), f32c(0.0))),
        ],
        &[v(y)],
    ));
    let errors = rejected(&p, Form::Core);
    assert_mentions(&errors, "f: let y_1: i64: y_1 is bound twice");
    assert_mentions(
        &errors,
        "f: let ys_3: [m_2]f32: size m_2 in the type of ys_3 is not in scope",
    );
    assert_mentions(
        &errors,
        "f: let ys_3: [m_2]f32: ys_3 has type [m_2]f32, but the expression returns [x_0]f32",
    );
}

#[test]
fn rejects_ill_typed_operations() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let f = b.param("f", F32);
    let s = b.var("s", I64);
    let c = b.var("c", I64);
    let e = b.var("e", F32);
    let p = b.program(body(
        vec![
            stmt(&[s], Exp::BinOp(BinOp::Add, v(x), v(f))),
            stmt(&[c], Exp::BinOp(BinOp::Lt, v(x), i64c(3))),
            stmt(
                &[e],
                Exp::Math(
                    ogham_compiler::builtins::MathFn::Atan2,
                    PrimType::F32,
                    vec![v(f)],
                ),
            ),
        ],
        &[v(s)],
    ));
    let errors = rejected(&p, Form::Core);
    assert_mentions(
        &errors,
        "f: let s_2: i64: operands of + have types i64 and f32",
    );
    assert_mentions(
        &errors,
        "f: let c_3: i64: c_3 has type i64, but the expression returns bool",
    );
    assert_mentions(&errors, "takes 2 arguments, given 1");
}

#[test]
fn rejects_bad_indexing_and_soac_arities() {
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let bad = b.var("bad", F32);
    let (x, y) = (b.var("x", F32), b.var("y", F32));
    let ys = b.var("ys", arr(PrimType::F32, &[v(n)]));
    let index = Exp::Index(xs, vec![DimIndex::Fix(i64c(0)), DimIndex::Fix(i64c(1))]);
    let map = Exp::Soac(Soac::Screma {
        width: v(n),
        inputs: vec![xs],
        map: lambda(&[x, y], body(vec![], &[v(x)]), &[F32]),
        scans: vec![],
        reds: vec![],
    });
    let p = b.program(body(vec![stmt(&[bad], index), stmt(&[ys], map)], &[v(ys)]));
    let errors = rejected(&p, Form::Core);
    assert_mentions(
        &errors,
        "f: let bad_2: f32: 2 indices into an array of rank 1",
    );
    assert_mentions(
        &errors,
        "f: let ys_5: [n_0]f32: the map lambda takes 2 parameters, expected 1",
    );
}

#[test]
fn rejects_use_after_consumption() {
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.unique_param("xs", arr(PrimType::I64, &[v(n)]));
    let view = b.var("view", arr(PrimType::I64, &[v(n)]));
    let ys = b.var("ys", arr(PrimType::I64, &[v(n)]));
    let z = b.var("z", I64);
    let p = b.program(body(
        vec![
            stmt(&[view], Exp::SubExp(v(xs))),
            stmt(
                &[ys],
                Exp::Update(xs, vec![DimIndex::Fix(i64c(0))], i64c(1)),
            ),
            stmt(&[z], Exp::Index(view, vec![DimIndex::Fix(i64c(0))])),
        ],
        &[v(ys), v(z)],
    ));
    assert_mentions(
        &rejected(&p, Form::Core),
        "f: let z_4: i64: view_2 is used after being consumed by `let ys_3: [n_0]i64`",
    );

    // Only unique parameters may be consumed.
    let mut b = FnBuilder::new("g");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::I64, &[v(n)]));
    let ys = b.var("ys", arr(PrimType::I64, &[v(n)]));
    let p = b.program(body(
        vec![stmt(
            &[ys],
            Exp::Update(xs, vec![DimIndex::Fix(i64c(0))], i64c(1)),
        )],
        &[v(ys)],
    ));
    assert_mentions(
        &rejected(&p, Form::Core),
        "g: let ys_2: [n_0]i64: consumes xs_1, a parameter that is not unique",
    );
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
    assert_eq!(verify(&p, Form::Core), Ok(()));

    // Using the loop's consumed initial value afterwards is not.
    let z = b.var("z", I64);
    let mut stmts = good(lp);
    stmts.push(stmt(&[z], Exp::Index(xs, vec![DimIndex::Fix(i64c(0))])));
    let p = b.program(body(stmts, &[v(chosen), v(z)]));
    assert_mentions(
        &rejected(&p, Form::Core),
        "f: let z_9: i64: xs_1 is used after being consumed by `let out_6: [n_0]i64`",
    );
}

#[test]
fn lambdas_may_not_consume_free_variables() {
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.unique_param("xs", arr(PrimType::I64, &[v(n)]));
    let i = b.var("i", I64);
    let row = b.var("row", arr(PrimType::I64, &[v(n)]));
    let out = b.var("out", arr(PrimType::I64, &[v(n), v(n)]));
    let is = b.var("is", arr(PrimType::I64, &[v(n)]));
    let map = Exp::Soac(Soac::Screma {
        width: v(n),
        inputs: vec![is],
        map: lambda(
            &[i],
            body(
                vec![stmt(
                    &[row],
                    Exp::Update(xs, vec![DimIndex::Fix(v(i))], i64c(0)),
                )],
                &[v(row)],
            ),
            &[arr(PrimType::I64, &[v(n)])],
        ),
        scans: vec![],
        reds: vec![],
    });
    let p = b.program(body(
        vec![stmt(&[is], Exp::Iota(v(n))), stmt(&[out], map)],
        &[v(out)],
    ));
    assert_mentions(
        &rejected(&p, Form::Core),
        "f: let row_3: [n_0]i64: consumes xs_1, which is bound outside the enclosing lambda, loop or kernel",
    );
}

#[test]
fn rejects_kernels_inside_kernels_and_undeclared_thresholds() {
    let mut program = sample_kernel();
    let function = &mut program.functions[0];
    let n = function.vars.iter().position(|v| v.name == "n").unwrap();
    let n = ogham_compiler::ir::VarId(n as u32);
    let i = function.new_var("i", I64);
    let j = function.new_var("j", I64);
    let inner = function.new_var("inner", arr(PrimType::I64, &[v(n)]));
    let outer = function.new_var("outer", arr(PrimType::I64, &[v(n), v(n)]));
    let t = function.new_var("t", BOOL);
    let segmap = |index, body| SegOp {
        level: SegLevel::Thread,
        space: vec![(index, v(n))],
        kind: SegKind::Map,
        body,
        ret: vec![],
    };
    let mut inner_op = segmap(j, body(vec![], &[v(j)]));
    inner_op.ret = vec![I64];
    let mut outer_op = segmap(
        i,
        body(
            vec![stmt(&[inner], Exp::Seg(Box::new(inner_op)))],
            &[v(inner)],
        ),
    );
    outer_op.ret = vec![arr(PrimType::I64, &[v(n)])];
    function
        .body
        .stmts
        .push(stmt(&[outer], Exp::Seg(Box::new(outer_op))));
    function.body.stmts.push(stmt(
        &[t],
        Exp::Threshold {
            id: ThresholdId {
                kind: ThresholdKind::SuffOuterPar,
                map: 5,
            },
            size: v(n),
        },
    ));
    let errors = rejected(&program, Form::Kernel);
    assert_mentions(
        &errors,
        "k: let inner_17: [n_0]i64: a kernel inside a kernel",
    );
    assert_mentions(
        &errors,
        "k: let t_19: bool: threshold suff_outer_par_5 is not declared",
    );
    assert_eq!(errors.len(), 2, "{errors:#?}");
}

#[test]
fn checks_branch_and_loop_results() {
    let mut b = FnBuilder::new("f");
    let c = b.param("c", BOOL);
    let r = b.var("r", I64);
    let acc = b.var("acc", F32);
    let i = b.var("i", I64);
    let l = b.var("l", F32);
    let p = b.program(body(
        vec![
            stmt(
                &[r],
                Exp::If {
                    cond: v(c),
                    then_body: body(vec![], &[i64c(1)]),
                    else_body: body(vec![], &[f32c(2.0)]),
                    ret: vec![I64],
                },
            ),
            stmt(
                &[l],
                Exp::Loop {
                    params: vec![(acc, f32c(0.0))],
                    form: LoopForm::For {
                        index: i,
                        bound: i64c(3),
                    },
                    body: body(vec![], &[v(i)]),
                },
            ),
        ],
        &[v(r), v(l)],
    ));
    let errors = rejected(&p, Form::Core);
    assert_mentions(
        &errors,
        "f: let r_1: i64: result 0 of the else branch has type f32, expected i64",
    );
    assert_mentions(
        &errors,
        "f: let l_4: f32: result 0 of the loop body has type i64, expected f32",
    );
    assert_eq!(errors.len(), 2, "{errors:#?}");
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
    assert_eq!(verify(&p, Form::Core), Ok(()));
}

#[test]
fn checks_scatter() {
    assert_eq!(verify(&sample_scatter(2, false), Form::Core), Ok(()));
    assert_mentions(
        &rejected(&sample_scatter(1, false), Form::Core),
        "s: let out_7: [m_1]f32: the map lambda returns 1 values for 1 destinations",
    );
    assert_mentions(
        &rejected(&sample_scatter(2, true), Form::Core),
        "s: let again_8: [m_1]f32: dst_2 is used after being consumed by `let out_7: [m_1]f32`",
    );
}

#[test]
fn checks_histograms() {
    assert_eq!(verify(&sample_hist(i32c(0)), Form::Core), Ok(()));
    assert_mentions(
        &rejected(&sample_hist(f32c(0.0)), Form::Core),
        "h: let out_8: [k_1]i32: neutral element 0 of histogram 0 has type f32, expected i32",
    );
}

#[test]
fn checks_segmented_reductions() {
    assert_eq!(verify(&sample_segred(F32), Form::Kernel), Ok(()));
    assert_mentions(
        &rejected(&sample_segred(arr(PrimType::F32, &[i64c(1)])), Form::Kernel),
        "r: let (sum_8: [1i64]f32, doubled_9: [n_0]f32): sum_8 has type [1i64]f32, but the expression returns f32",
    );
}

#[test]
fn reports_variables_missing_from_the_arena_without_panicking() {
    let mut b = FnBuilder::new("f");
    let x = b.param("x", I64);
    let ghost = ogham_compiler::ir::VarId(99);
    let p = b.program(body(
        vec![
            stmt(
                &[ghost],
                Exp::Convert(PrimType::F32, v(ogham_compiler::ir::VarId(98))),
            ),
            stmt(&[], Exp::Copy(ghost)),
        ],
        &[v(x)],
    ));
    let errors = rejected(&p, Form::Core);
    assert_mentions(
        &errors,
        "f: let v_99: <unknown>: variable v_98 is not in the arena",
    );
    assert_mentions(
        &errors,
        "f: let v_99: <unknown>: variable v_99 is not in the arena",
    );
}
