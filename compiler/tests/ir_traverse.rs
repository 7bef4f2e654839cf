//! The shared IR walks: free variables, use counts, substitution, consumed arrays.

mod ir_build;

use ir_build::*;
use ogham_ir::op::BinOp;
use ogham_ir::print::print_stmt;
use ogham_ir::traverse::{
    Subst, consumed_arrays, free_vars_body, free_vars_stmt, substitute_exp, use_counts,
};
use ogham_ir::types::PrimType;
use ogham_ir::{DimIndex, Exp, LoopForm, SubExp, VarId};

#[test]
fn free_variables_exclude_what_a_fragment_binds() {
    let program = sample_core();
    let f = &program.functions[0];
    let names = |vars: std::collections::BTreeSet<VarId>| -> Vec<String> {
        vars.iter().map(|&v| f.var(v).name.clone()).collect()
    };
    // `map (\x -> x + 1) xs` uses `xs` and, through the types of `ys` and `xs`, `n`.
    assert_eq!(names(free_vars_stmt(f, &f.body.stmts[0])), ["n", "xs"]);
    // The loop uses `sum` (its initial value) only: `acc` and `i` are its own.
    assert_eq!(names(free_vars_stmt(f, &f.body.stmts[2])), ["sum"]);
    // The whole body uses the parameters (and the size `n`).
    assert_eq!(names(free_vars_body(f, &f.body)), ["n", "xs"]);
}

#[test]
fn use_counts_include_sizes_and_nested_code() {
    let program = sample_core();
    let f = &program.functions[0];
    let counts = use_counts(f, &f.body);
    let count_of = |name: &str| -> Vec<u32> {
        (0..f.vars.len())
            .filter(|&i| f.vars[i].name == name)
            .map(|i| counts[i])
            .collect()
    };
    // n: the width of both SOACs, and the type of `ys`.
    assert_eq!(count_of("n"), [3]);
    // ys: input of the reduction, and a result.
    assert_eq!(count_of("ys"), [2]);
    assert_eq!(count_of("r"), [3]);
}

#[test]
fn substitution_reaches_nested_code() {
    let program = sample_core();
    let f = &program.functions[0];
    let mut stmt = f.body.stmts[2].clone();
    let sum = f.body.stmts[1].pat[0];
    let mut subst = Subst::new();
    subst.insert(sum, f32c(1.5));
    let Exp::Loop { body, .. } = &stmt.exp else {
        unreachable!()
    };
    let acc = body.stmts[0].pat[0];
    subst.insert(acc, f32c(2.5));
    substitute_exp(&mut stmt.exp, &subst);
    assert_eq!(
        print_stmt(f, &stmt, 0),
        "let r_12: f32 = loop (acc_9: f32 = 1.5f32) for i_10 < 3i64 do {
  let acc_11: f32 = f32.sqrt(acc_9)
  in 2.5f32
}
"
    );
}

#[test]
fn consumed_arrays_follow_aliases() {
    let mut b = FnBuilder::new("f");
    let n = b.var("n", I64);
    let xs = b.unique_param("xs", arr(PrimType::I64, &[v(n)]));
    let view = b.var("view", arr(PrimType::I64, &[v(n)]));
    let ys = b.var("ys", arr(PrimType::I64, &[v(n)]));
    let other = b.var("other", arr(PrimType::I64, &[v(n)]));
    let acc = b.var("acc", arr(PrimType::I64, &[v(n)]));
    let i = b.var("i", I64);
    let out = b.var("out", arr(PrimType::I64, &[v(n)]));
    let s = b.var("s", I64);
    let p = b.program(body(
        vec![
            stmt(&[view], Exp::Rearrange(xs, vec![0])),
            stmt(
                &[ys],
                Exp::Update(view, vec![DimIndex::Fix(i64c(0))], i64c(1)),
            ),
            stmt(&[other], Exp::Iota(v(n))),
            stmt(
                &[out],
                Exp::Loop {
                    params: vec![(acc, v(other))],
                    form: LoopForm::For {
                        index: i,
                        bound: v(n),
                    },
                    body: body(vec![], &[v(acc)]),
                },
            ),
            stmt(&[s], Exp::BinOp(BinOp::Add, v(n), v(n))),
        ],
        &[v(ys), v(out), SubExp::Var(s)],
    ));
    let f = &p.functions[0];
    let mut consumed: Vec<String> = consumed_arrays(f)
        .into_iter()
        .map(|v| f.var(v).name.clone())
        .collect();
    consumed.sort();
    // `view` is consumed, and so is `xs`, which it aliases; a loop's initial array is
    // consumed, and the loop's result aliases it and the parameter the body returns.
    assert_eq!(consumed, ["acc", "other", "out", "view", "xs"]);
}
