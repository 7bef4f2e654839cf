//! Building IR programs by hand in tests of the printer, verifier and simplifier.
#![allow(dead_code)]

use ogham_ir::kir::{
    self, HostOp, PointLayout, SegKind, SegLevel, SegOp, Threshold, ThresholdId, ThresholdKind,
};
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;
use ogham_ir::{
    Body, Const, DimIndex, Exp, Form, Function, HistOp, Lambda, LoopForm, Param, Program, RedOp,
    ScanOp, Soac, Stmt, SubExp, Type, VarId,
};

pub const F32: Type = Type::Prim(PrimType::F32);
pub const F64: Type = Type::Prim(PrimType::F64);
pub const I32: Type = Type::Prim(PrimType::I32);
pub const I64: Type = Type::Prim(PrimType::I64);
pub const BOOL: Type = Type::Prim(PrimType::Bool);

/// `[dims...]elem`.
pub fn arr(elem: PrimType, dims: &[SubExp]) -> Type {
    Type::with_shape(elem, dims.to_vec())
}

pub fn v(x: VarId) -> SubExp {
    SubExp::Var(x)
}

pub fn i64c(n: i64) -> SubExp {
    SubExp::i64(n)
}

pub fn i32c(n: i32) -> SubExp {
    SubExp::Const(Const::I32(n))
}

pub fn f32c(x: f32) -> SubExp {
    SubExp::Const(Const::F32(x))
}

pub fn boolc(b: bool) -> SubExp {
    SubExp::Const(Const::Bool(b))
}

pub fn stmt<H: Form>(pat: &[VarId], exp: Exp<H>) -> Stmt<H> {
    Stmt {
        pat: pat.to_vec(),
        exp,
        loc: Span::default(),
    }
}

pub fn body<H: Form>(stmts: Vec<Stmt<H>>, result: &[SubExp]) -> Body<H> {
    Body {
        stmts,
        result: result.to_vec(),
    }
}

pub fn lambda(params: &[VarId], body: Body, ret: &[Type]) -> Lambda {
    Lambda {
        params: params.to_vec(),
        body,
        ret: ret.to_vec(),
    }
}

/// `\a c -> a + c` on `ty`, binding the sum to `s`.
pub fn add_lambda(a: VarId, c: VarId, s: VarId, ty: Type) -> Lambda {
    lambda(
        &[a, c],
        body(
            vec![stmt(&[s], Exp::BinOp(BinOp::Add, v(a), v(c)))],
            &[v(s)],
        ),
        &[ty],
    )
}

/// A function under construction: variables are added to its arena as they are declared.
pub struct FnBuilder {
    pub f: Function,
}

impl FnBuilder {
    pub fn new(name: &str) -> FnBuilder {
        FnBuilder {
            f: Function::new(name),
        }
    }

    pub fn var(&mut self, name: &str, ty: Type) -> VarId {
        self.f.new_var(name, ty)
    }

    pub fn param(&mut self, name: &str, ty: Type) -> VarId {
        let var = self.f.new_var(name, ty);
        self.f.params.push(Param { var, unique: false });
        var
    }

    pub fn unique_param(&mut self, name: &str, ty: Type) -> VarId {
        let var = self.f.new_var(name, ty);
        self.f.params.push(Param { var, unique: true });
        var
    }

    /// The function with `body` (core IR or kernel IR).
    pub fn function<H: Form>(self, body: Body<H>) -> Function<H> {
        self.f.with_body(body)
    }

    pub fn program(self, body: Body) -> Program {
        self.program_in(body)
    }

    pub fn kernel_program(self, body: kir::HostBody) -> kir::Program {
        self.program_in(body)
    }

    fn program_in<H: Form>(self, body: Body<H>) -> Program<H> {
        Program {
            functions: vec![self.function(body)],
            thresholds: Vec::new(),
            unchecked: Vec::new(),
        }
    }
}

/// `entry main (xs: [n]f32) = (map (+1) xs, reduce (+) 0 xs)` with a loop and an `if`.
pub fn sample_core() -> Program {
    let mut b = FnBuilder::new("main");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let x = b.var("x", F32);
    let y = b.var("y", F32);
    let ys = b.var("ys", arr(PrimType::F32, &[v(n)]));
    let (a, c, s) = (b.var("a", F32), b.var("c", F32), b.var("s", F32));
    let sum = b.var("sum", F32);
    let acc = b.var("acc", F32);
    let i = b.var("i", I64);
    let acc2 = b.var("acc", F32);
    let r = b.var("r", F32);
    let big = b.var("big", BOOL);
    let z = b.var("z", F32);
    let x2 = b.var("x", F32);
    let map = Exp::Soac(Soac::Screma {
        width: v(n),
        inputs: vec![xs],
        map: lambda(
            &[x],
            body(
                vec![stmt(&[y], Exp::BinOp(BinOp::Add, v(x), f32c(1.0)))],
                &[v(y)],
            ),
            &[F32],
        ),
        scans: vec![],
        reds: vec![],
    });
    let reduce = Exp::Soac(Soac::Screma {
        width: v(n),
        inputs: vec![ys],
        map: lambda(&[x2], body(vec![], &[v(x2)]), &[F32]),
        scans: vec![],
        reds: vec![RedOp {
            lambda: add_lambda(a, c, s, F32),
            neutral: vec![f32c(0.0)],
            commutative: true,
        }],
    });
    let lp = Exp::Loop {
        params: vec![(acc, v(sum))],
        form: LoopForm::For {
            index: i,
            bound: i64c(3),
        },
        body: body(
            vec![stmt(
                &[acc2],
                Exp::Math(MathFn::Sqrt, PrimType::F32, vec![v(acc)]),
            )],
            &[v(acc2)],
        ),
    };
    let iff = Exp::If {
        cond: v(big),
        then_body: body(vec![], &[v(r)]),
        else_body: body(vec![stmt(&[z], Exp::UnOp(UnOp::Neg, v(r)))], &[v(z)]),
        ret: vec![F32],
    };
    let out = b.var("out", F32);
    b.program(body(
        vec![
            stmt(&[ys], map),
            stmt(&[sum], reduce),
            stmt(&[r], lp),
            stmt(&[big], Exp::BinOp(BinOp::Gt, v(r), f32c(1e10))),
            stmt(&[out], iff),
        ],
        &[v(ys), v(out)],
    ))
}

/// A kernel program: a threshold, an `if` on it, a block-level `segscan`, a `seghist`.
pub fn sample_kernel() -> kir::Program {
    let mut b = FnBuilder::new("k");
    let n = b.var("n", I64);
    let _xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let gtid = b.var("gtid", I64);
    let suff = b.var("suff", BOOL);
    let total = b.var("total", F32);
    let scanned = b.var("scanned", arr(PrimType::F32, &[v(n)]));
    let zeros = b.var("zeros", arr(PrimType::F32, &[i64c(4)]));
    let hist = b.var("hist", arr(PrimType::F32, &[i64c(4)]));
    let bin = b.var("bin", I64);
    let mut add = || {
        let (a, c, s) = (b.var("a", F32), b.var("c", F32), b.var("s", F32));
        add_lambda(a, c, s, F32)
    };
    let (scan_op, hist_op) = (add(), add());
    let scan = SegOp {
        level: SegLevel::Block,
        space: vec![(gtid, v(n))],
        kind: SegKind::Scan(vec![ScanOp {
            lambda: scan_op,
            neutral: vec![f32c(0.0)],
        }]),
        body: body(vec![], &[f32c(2.5)]),
        ret: vec![F32],
        layout: PointLayout::Contiguous,
        plans: Default::default(),
    };
    let histogram = SegOp {
        level: SegLevel::Thread,
        space: vec![(bin, v(n))],
        kind: SegKind::Hist(vec![HistOp {
            num_bins: i64c(4),
            dests: vec![zeros],
            op: hist_op,
            neutral: vec![f32c(0.0)],
        }]),
        body: body(vec![], &[v(bin), f32c(1.0)]),
        ret: vec![I64, F32],
        layout: PointLayout::Contiguous,
        plans: Default::default(),
    };
    let id = ThresholdId {
        kind: ThresholdKind::SuffOuterPar,
        map: 0,
    };
    let threshold = Exp::Host(HostOp::Threshold { id, size: v(n) });
    let choose = Exp::If {
        cond: v(suff),
        then_body: body(vec![], &[f32c(0.0)]),
        else_body: body(vec![], &[f32c(1.0)]),
        ret: vec![F32],
    };
    Program {
        unchecked: Vec::new(),
        thresholds: vec![Threshold {
            id,
            default: 32768,
            doc: "sum: one thread per element".to_string(),
        }],
        functions: vec![b.function(body(
            vec![
                stmt(&[suff], threshold),
                stmt(&[total], choose),
                stmt(&[scanned], Exp::Host(HostOp::Seg(Box::new(scan)))),
                stmt(&[zeros], Exp::Replicate(i64c(4), f32c(0.0))),
                stmt(&[hist], Exp::Host(HostOp::Seg(Box::new(histogram)))),
            ],
            &[v(total), v(scanned), v(hist)],
        ))],
    }
}

/// A thread-level `segred` over `i < n` summing `xs` and mapping `xs[i] * 2`; the pattern's
/// reduced result has type `sum_type`.
pub fn sample_segred(sum_type: Type) -> kir::Program {
    let mut b = FnBuilder::new("r");
    let n = b.var("n", I64);
    let xs = b.param("xs", arr(PrimType::F32, &[v(n)]));
    let i = b.var("i", I64);
    let (x, y) = (b.var("x", F32), b.var("y", F32));
    let (a, c, s) = (b.var("a", F32), b.var("c", F32), b.var("s", F32));
    let sum = b.var("sum", sum_type);
    let doubled = b.var("doubled", arr(PrimType::F32, &[v(n)]));
    let seg = SegOp {
        level: SegLevel::Thread,
        space: vec![(i, v(n))],
        kind: SegKind::Red(vec![RedOp {
            lambda: add_lambda(a, c, s, F32),
            neutral: vec![f32c(0.0)],
            commutative: true,
        }]),
        body: body(
            vec![
                stmt(&[x], Exp::Index(xs, vec![DimIndex::Fix(v(i))])),
                stmt(&[y], Exp::BinOp(BinOp::Mul, v(x), f32c(2.0))),
            ],
            &[v(x), v(y)],
        ),
        ret: vec![F32, F32],
        layout: PointLayout::Contiguous,
        plans: Default::default(),
    };
    b.kernel_program(body(
        vec![stmt(&[sum, doubled], Exp::Host(HostOp::Seg(Box::new(seg))))],
        &[v(sum), v(doubled)],
    ))
}

/// `scatter dst is vs` with a unique destination of size `m`.
pub fn sample_scatter(lambda_results: usize, use_after: bool) -> Program {
    let mut b = FnBuilder::new("s");
    let n = b.var("n", I64);
    let m = b.var("m", I64);
    let dst = b.unique_param("dst", arr(PrimType::F32, &[v(m)]));
    let is = b.param("is", arr(PrimType::I64, &[v(n)]));
    let vs = b.param("vs", arr(PrimType::F32, &[v(n)]));
    let (i, x) = (b.var("i", I64), b.var("x", F32));
    let out = b.var("out", arr(PrimType::F32, &[v(m)]));
    let again = b.var("again", arr(PrimType::F32, &[v(m)]));
    let results = [v(i), v(x)];
    let rets = [I64, F32];
    let scatter = Exp::Soac(Soac::Scatter {
        width: v(n),
        inputs: vec![is, vs],
        map: lambda(
            &[i, x],
            body(vec![], &results[..lambda_results]),
            &rets[..lambda_results],
        ),
        dests: vec![dst],
    });
    let mut stmts = vec![stmt(&[out], scatter)];
    if use_after {
        stmts.push(stmt(&[again], Exp::Copy(dst)));
    }
    b.program(body(stmts, &[v(out)]))
}

/// `hist (+) 0 k is` into a unique destination, with a neutral element of type `neutral`.
pub fn sample_hist(neutral: SubExp) -> Program {
    let mut b = FnBuilder::new("h");
    let n = b.var("n", I64);
    let k = b.var("k", I64);
    let dst = b.unique_param("dst", arr(PrimType::I32, &[v(k)]));
    let is = b.param("is", arr(PrimType::I64, &[v(n)]));
    let i = b.var("i", I64);
    let (a, c, s) = (b.var("a", I32), b.var("c", I32), b.var("s", I32));
    let out = b.var("out", arr(PrimType::I32, &[v(k)]));
    let hist = Exp::Soac(Soac::Hist {
        width: v(n),
        inputs: vec![is],
        map: lambda(&[i], body(vec![], &[v(i), i32c(1)]), &[I64, I32]),
        hists: vec![HistOp {
            num_bins: v(k),
            dests: vec![dst],
            op: add_lambda(a, c, s, I32),
            neutral: vec![neutral],
        }],
    });
    b.program(body(vec![stmt(&[out], hist)], &[v(out)]))
}
