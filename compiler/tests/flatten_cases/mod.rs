//! Hand-built core IR programs for the flattening tests: each exercises one shape of nesting.

use crate::ir_build::*;
use ogham_compiler::ir::op::BinOp;
use ogham_compiler::ir::{
    Body, DimIndex, Exp, HistOp, Lambda, LoopForm, Program, RedOp, ScanOp, Soac, Stmt, SubExp,
    Type, VarId,
};
use ogham_compiler::types::PrimType;

/// `\a b -> a + b` at type `t`.
pub fn add(b: &mut FnBuilder, t: Type) -> Lambda {
    let (x, y, s) = (
        b.var("a", t.clone()),
        b.var("b", t.clone()),
        b.var("s", t.clone()),
    );
    lambda(
        &[x, y],
        body(
            vec![stmt(&[s], Exp::BinOp(BinOp::Add, v(x), v(y)))],
            &[v(s)],
        ),
        &[t],
    )
}

pub fn sum_op(b: &mut FnBuilder) -> RedOp {
    RedOp {
        lambda: add(b, F32),
        neutral: vec![f32c(0.0)],
        commutative: true,
    }
}

pub fn screma(
    width: SubExp,
    inputs: &[VarId],
    map: Lambda,
    scans: Vec<ScanOp>,
    reds: Vec<RedOp>,
) -> Exp {
    Exp::Soac(Soac::Screma {
        width,
        inputs: inputs.to_vec(),
        map,
        scans,
        reds,
    })
}

/// `sum xs` for `xs: [w]f32`, binding `out`.
pub fn sum_stmt(b: &mut FnBuilder, out: VarId, w: SubExp, xs: VarId) -> Stmt {
    let x = b.var("x", F32);
    let op = sum_op(b);
    stmt(
        &[out],
        screma(
            w,
            &[xs],
            lambda(&[x], body(vec![], &[v(x)]), &[F32]),
            vec![],
            vec![op],
        ),
    )
}

/// `map (\row -> sum row) xss` for `xss: [n][m]f32`.
pub fn row_sums() -> Program {
    let mut b = FnBuilder::new("main");
    let (n, m) = (b.var("n", I64), b.var("m", I64));
    let xss = b.param("xss", arr(PrimType::F32, &[v(n), v(m)]));
    let row = b.var("row", arr(PrimType::F32, &[v(m)]));
    let s = b.var("s", F32);
    let sums = b.var("sums", arr(PrimType::F32, &[v(n)]));
    let inner = sum_stmt(&mut b, s, v(m), row);
    let map = lambda(&[row], body(vec![inner], &[v(s)]), &[F32]);
    b.program(body(
        vec![stmt(&[sums], screma(v(n), &[xss], map, vec![], vec![]))],
        &[v(sums)],
    ))
}

pub fn sequential_map() -> Program {
    let mut b = FnBuilder::new("main");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let (x, y) = (b.var("x", F32), b.var("y", F32));
    let ys = b.var("ys", arr(PrimType::F32, &[v(n)]));
    let map = lambda(
        &[x],
        body(
            vec![stmt(&[y], Exp::BinOp(BinOp::Mul, v(x), f32c(2.0)))],
            &[v(y)],
        ),
        &[F32],
    );
    b.program(body(
        vec![stmt(&[ys], screma(v(n), &[xs], map, vec![], vec![]))],
        &[v(ys)],
    ))
}

pub fn sum_and_scan() -> Program {
    let mut b = FnBuilder::new("main");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let total = b.var("total", F32);
    let sum = sum_stmt(&mut b, total, v(n), xs);
    let x = b.var("x", F32);
    let scanned = b.var("scanned", arr(PrimType::F32, &[v(n)]));
    let op = ScanOp {
        lambda: add(&mut b, F32),
        neutral: vec![f32c(0.0)],
    };
    let scan = screma(
        v(n),
        &[xs],
        lambda(&[x], body(vec![], &[v(x)]), &[F32]),
        vec![op],
        vec![],
    );
    b.program(body(
        vec![sum, stmt(&[scanned], scan)],
        &[v(total), v(scanned)],
    ))
}

pub fn scan_with_reduction() -> Program {
    let mut b = FnBuilder::new("main");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let (x, y) = (b.var("x", F32), b.var("y", F32));
    let scan_op = ScanOp {
        lambda: add(&mut b, F32),
        neutral: vec![f32c(0.0)],
    };
    let red_op = sum_op(&mut b);
    let scanned = b.var("scanned", arr(PrimType::F32, &[v(n)]));
    let total = b.var("total", F32);
    let doubled = b.var("doubled", arr(PrimType::F32, &[v(n)]));
    let map = lambda(
        &[x],
        body(
            vec![stmt(&[y], Exp::BinOp(BinOp::Mul, v(x), f32c(2.0)))],
            &[v(x), v(y), v(y)],
        ),
        &[F32, F32, F32],
    );
    b.program(body(
        vec![stmt(
            &[scanned, total, doubled],
            screma(v(n), &[xs], map, vec![scan_op], vec![red_op]),
        )],
        &[v(scanned), v(total), v(doubled)],
    ))
}

pub fn normalise_rows() -> Program {
    let mut b = FnBuilder::new("main");
    let (n, m) = (b.var("n", I64), b.var("m", I64));
    let xss = b.param("xss", arr(PrimType::F32, &[v(n), v(m)]));
    let row = b.var("row", arr(PrimType::F32, &[v(m)]));
    let s = b.var("s", F32);
    let (x, y) = (b.var("x", F32), b.var("y", F32));
    let normed = b.var("normed", arr(PrimType::F32, &[v(m)]));
    let out = b.var("out", arr(PrimType::F32, &[v(n), v(m)]));
    let sum = sum_stmt(&mut b, s, v(m), row);
    let divide = lambda(
        &[x],
        body(
            vec![stmt(&[y], Exp::BinOp(BinOp::Div, v(x), v(s)))],
            &[v(y)],
        ),
        &[F32],
    );
    let map = lambda(
        &[row],
        body(
            vec![
                sum,
                stmt(&[normed], screma(v(m), &[row], divide, vec![], vec![])),
            ],
            &[v(normed)],
        ),
        &[arr(PrimType::F32, &[v(m)])],
    );
    b.program(body(
        vec![stmt(&[out], screma(v(n), &[xss], map, vec![], vec![]))],
        &[v(out)],
    ))
}

pub fn loop_in_map() -> Program {
    let mut b = FnBuilder::new("main");
    let (n, m) = (b.var("n", I64), b.var("m", I64));
    let row_t = arr(PrimType::F32, &[v(m)]);
    let xss = b.param("xss", arr(PrimType::F32, &[v(n), v(m)]));
    let row = b.var("row", row_t.clone());
    let acc = b.var("acc", row_t.clone());
    let i = b.var("i", I64);
    let (x, y) = (b.var("x", F32), b.var("y", F32));
    let doubled = b.var("doubled", row_t.clone());
    let result = b.var("result", row_t.clone());
    let out = b.var("out", arr(PrimType::F32, &[v(n), v(m)]));
    let double = lambda(
        &[x],
        body(
            vec![stmt(&[y], Exp::BinOp(BinOp::Mul, v(x), f32c(2.0)))],
            &[v(y)],
        ),
        &[F32],
    );
    let lp = Exp::Loop {
        params: vec![(acc, v(row))],
        form: LoopForm::For {
            index: i,
            bound: i64c(3),
        },
        body: body(
            vec![stmt(
                &[doubled],
                screma(v(m), &[acc], double, vec![], vec![]),
            )],
            &[v(doubled)],
        ),
    };
    let map = lambda(
        &[row],
        body(vec![stmt(&[result], lp)], &[v(result)]),
        &[row_t],
    );
    b.program(body(
        vec![stmt(&[out], screma(v(n), &[xss], map, vec![], vec![]))],
        &[v(out)],
    ))
}

pub fn irregular_inner() -> Program {
    let mut b = FnBuilder::new("main");
    let n = b.var("n", I64);
    let ks = b.param("ks", arr(PrimType::I64, &[v(n)]));
    let k = b.var("k", I64);
    let is = b.var("is", arr(PrimType::I64, &[v(k)]));
    let (i, f) = (b.var("i", I64), b.var("f", F32));
    let s = b.var("s", F32);
    let sums = b.var("sums", arr(PrimType::F32, &[v(n)]));
    let op = sum_op(&mut b);
    let inner = screma(
        v(k),
        &[is],
        lambda(
            &[i],
            body(vec![stmt(&[f], Exp::Convert(PrimType::F32, v(i)))], &[v(f)]),
            &[F32],
        ),
        vec![],
        vec![op],
    );
    let map = lambda(
        &[k],
        body(
            vec![stmt(&[is], Exp::Iota(v(k))), stmt(&[s], inner)],
            &[v(s)],
        ),
        &[F32],
    );
    b.program(body(
        vec![stmt(&[sums], screma(v(n), &[ks], map, vec![], vec![]))],
        &[v(sums)],
    ))
}

pub fn host_loop() -> Program {
    let mut b = FnBuilder::new("main");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let acc = b.var("acc", arr(PrimType::F32, &[v(n)]));
    let i = b.var("i", I64);
    let (x, y) = (b.var("x", F32), b.var("y", F32));
    let next = b.var("next", arr(PrimType::F32, &[v(n)]));
    let out = b.var("out", arr(PrimType::F32, &[v(n)]));
    let map = lambda(
        &[x],
        body(
            vec![stmt(&[y], Exp::BinOp(BinOp::Add, v(x), f32c(1.0)))],
            &[v(y)],
        ),
        &[F32],
    );
    let lp = Exp::Loop {
        params: vec![(acc, v(xs))],
        form: LoopForm::For {
            index: i,
            bound: i64c(4),
        },
        body: body(
            vec![stmt(&[next], screma(v(n), &[acc], map, vec![], vec![]))],
            &[v(next)],
        ),
    };
    b.program(body(vec![stmt(&[out], lp)], &[v(out)]))
}

pub fn doubly_nested_sums() -> Program {
    let mut b = FnBuilder::new("main");
    let (a, n, m) = (b.var("a", I64), b.var("n", I64), b.var("m", I64));
    let xsss = b.param("xsss", arr(PrimType::F32, &[v(a), v(n), v(m)]));
    let xss = b.var("xss", arr(PrimType::F32, &[v(n), v(m)]));
    let row = b.var("row", arr(PrimType::F32, &[v(m)]));
    let s = b.var("s", F32);
    let sums = b.var("sums", arr(PrimType::F32, &[v(n)]));
    let out = b.var("out", arr(PrimType::F32, &[v(a), v(n)]));
    let inner = sum_stmt(&mut b, s, v(m), row);
    let rows = lambda(&[row], body(vec![inner], &[v(s)]), &[F32]);
    let map = lambda(
        &[xss],
        body(
            vec![stmt(&[sums], screma(v(n), &[xss], rows, vec![], vec![]))],
            &[v(sums)],
        ),
        &[arr(PrimType::F32, &[v(n)])],
    );
    b.program(body(
        vec![stmt(&[out], screma(v(a), &[xsss], map, vec![], vec![]))],
        &[v(out)],
    ))
}

pub fn hist_in_map() -> Program {
    let mut b = FnBuilder::new("main");
    let (n, m) = (b.var("n", I64), b.var("m", I64));
    let iss = b.param("iss", arr(PrimType::I64, &[v(n), v(m)]));
    let row = b.var("row", arr(PrimType::I64, &[v(m)]));
    let zeros = b.var("zeros", arr(PrimType::I32, &[i64c(4)]));
    let counts = b.var("counts", arr(PrimType::I32, &[i64c(4)]));
    let out = b.var("out", arr(PrimType::I32, &[v(n), i64c(4)]));
    let (i, bin) = (b.var("i", I64), b.var("bin", I64));
    let op = add(&mut b, I32);
    let hist = Exp::Soac(Soac::Hist {
        width: v(m),
        inputs: vec![row],
        map: lambda(
            &[i],
            body(
                vec![stmt(&[bin], Exp::BinOp(BinOp::Mod, v(i), i64c(4)))],
                &[v(bin), i32c(1)],
            ),
            &[I64, I32],
        ),
        hists: vec![HistOp {
            num_bins: i64c(4),
            dests: vec![zeros],
            op,
            neutral: vec![i32c(0)],
        }],
    });
    let map = lambda(
        &[row],
        body(
            vec![
                stmt(&[zeros], Exp::Replicate(i64c(4), i32c(0))),
                stmt(&[counts], hist),
            ],
            &[v(counts)],
        ),
        &[arr(PrimType::I32, &[i64c(4)])],
    );
    b.program(body(
        vec![stmt(&[out], screma(v(n), &[iss], map, vec![], vec![]))],
        &[v(out)],
    ))
}

pub fn if_in_map() -> Program {
    let mut b = FnBuilder::new("main");
    let (n, m) = (b.var("n", I64), b.var("m", I64));
    let xss = b.param("xss", arr(PrimType::F32, &[v(n), v(m)]));
    let flag = b.param("flag", BOOL);
    let row = b.var("row", arr(PrimType::F32, &[v(m)]));
    let s = b.var("s", F32);
    let r = b.var("r", F32);
    let out = b.var("out", arr(PrimType::F32, &[v(n)]));
    let sum = sum_stmt(&mut b, s, v(m), row);
    let choose = Exp::If {
        cond: v(flag),
        then_body: body(vec![sum], &[v(s)]),
        else_body: Body {
            stmts: vec![],
            result: vec![f32c(0.0)],
        },
        ret: vec![F32],
    };
    let map = lambda(&[row], body(vec![stmt(&[r], choose)], &[v(r)]), &[F32]);
    b.program(body(
        vec![stmt(&[out], screma(v(n), &[xss], map, vec![], vec![]))],
        &[v(out)],
    ))
}

pub fn index_host_array() -> Program {
    let mut b = FnBuilder::new("main");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let is = b.var("is", arr(PrimType::I64, &[v(n)]));
    let (i, x) = (b.var("i", I64), b.var("x", F32));
    let ys = b.var("ys", arr(PrimType::F32, &[v(n)]));
    let map = lambda(
        &[i],
        body(
            vec![stmt(&[x], Exp::Index(xs, vec![DimIndex::Fix(v(i))]))],
            &[v(x)],
        ),
        &[F32],
    );
    b.program(body(
        vec![
            stmt(&[is], Exp::Iota(v(n))),
            stmt(&[ys], screma(v(n), &[is], map, vec![], vec![])),
        ],
        &[v(ys)],
    ))
}

/// `map (\x -> let a = x * 10 in map (\y -> a + y) ys) xs`: a per-point scalar used by an inner
/// map.
pub fn scalar_then_inner_map() -> Program {
    let mut b = FnBuilder::new("main");
    let (n, m) = (b.var("n", I64), b.var("m", I64));
    let xs = b.param("xs", arr(PrimType::I64, &[v(n)]));
    let ys = b.param("ys", arr(PrimType::I64, &[v(m)]));
    let (x, a) = (b.var("x", I64), b.var("a", I64));
    let (y, s) = (b.var("y", I64), b.var("s", I64));
    let row = b.var("row", arr(PrimType::I64, &[v(m)]));
    let out = b.var("out", arr(PrimType::I64, &[v(n), v(m)]));
    let add_a = lambda(
        &[y],
        body(
            vec![stmt(&[s], Exp::BinOp(BinOp::Add, v(a), v(y)))],
            &[v(s)],
        ),
        &[I64],
    );
    let map = lambda(
        &[x],
        body(
            vec![
                stmt(&[a], Exp::BinOp(BinOp::Mul, v(x), i64c(10))),
                stmt(&[row], screma(v(m), &[ys], add_a, vec![], vec![])),
            ],
            &[v(row)],
        ),
        &[arr(PrimType::I64, &[v(m)])],
    );
    b.program(body(
        vec![stmt(&[out], screma(v(n), &[xs], map, vec![], vec![]))],
        &[v(out)],
    ))
}
