//! The contract between generated kernel code and the runtime that runs it, which both the
//! backends (`ogham_compiler::back`) and the runtime's executors read: how kernels are found and
//! named ([`kernels`]), the run-time checks they report ([`ErrorSite`]), the layout of a CPU
//! worker's context record (`CTX_*`) and the integer codes by which generated CPU code names
//! operators, math functions and types when it calls the runtime's helpers
//! (`ogham_compiler::back::cpu::helpers` lists the helpers; the runtime implements them).

use crate::kir::{HostBody, HostOp, HostStmt, Program, SegKind, SegLevel, SegOp};
use crate::math::MathFn;
use crate::op::BinOp;
use crate::source::{SourceMap, Span};
use crate::types::PrimType;
use crate::{DimIndex, Exp, SubExp, VarId};

/// The most values a failed check records for its message.
pub const MAX_DETAILS: usize = 16;

/// Offset in a CPU worker's context record of the number of the failed check.
pub const CTX_SITE: i32 = 0;
/// Offset of the values describing the failure.
pub const CTX_DETAILS: i32 = 8;
/// Size of the part of the context record that generated code writes.
pub const CTX_GENERATED_BYTES: usize = CTX_DETAILS as usize + 8 * MAX_DETAILS;

/// A run-time check of generated code: where it is and what its failure means. The values the
/// message needs are in the context record's details, in the order given per variant.
/// Serializable: compiled executables carry their kernels' sites (`ogham_runtime::cpu`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorSite {
    pub loc: Span,
    pub failure: Failure,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Failure {
    /// Index out of bounds; details: the array's `rank` extents, then per component of `idx`
    /// its index (fixed) or start, length and stride (slice).
    Index {
        rank: usize,
        idx: Vec<DimIndex>,
        update: bool,
    },
    /// Division by zero in operator `op` (`/`, `%`, `//`, `%%`).
    DivByZero { op: crate::op::BinOp },
    Assert {
        message: String,
        kind: crate::AssertKind,
    },
    /// A count outside `0..=MAX_ELEMS` (`crate::sizes::count`: negative or too large);
    /// details: the size.
    NegativeSize { what: String },
    /// A reshape or size coercion of `array` to `dims` that does not fit; details: the array's
    /// extents then the target extents.
    Reshape { array: VarId, dims: Vec<SubExp> },
    /// Extents that must agree do not; details: `rank` actual extents, then `rank` expected.
    ShapeMismatch { what: String, rank: usize },
    /// The arena could not provide memory; details: the bytes asked for.
    OutOfMemory,
}

/// A kernel of a program as every backend names it: `<entry>_k<n>`, numbered in statement
/// order within its entry point.
pub struct KernelSite<'p> {
    /// Index of the entry point in `Program::functions`.
    pub function: usize,
    pub stmt: &'p HostStmt,
    pub seg: &'p SegOp,
    pub name: String,
}

/// Every kernel statement of a program, entry point by entry point.
pub fn kernels(program: &Program) -> Vec<KernelSite<'_>> {
    let mut out = Vec::new();
    for (function, f) in program.functions.iter().enumerate() {
        let mut stmts = Vec::new();
        kernel_stmts(&f.body, &mut stmts);
        for (n, stmt) in stmts.into_iter().enumerate() {
            if let Exp::Host(HostOp::Seg(seg)) = &stmt.exp {
                out.push(KernelSite {
                    function,
                    stmt,
                    seg,
                    name: format!("{}_k{n}", f.name),
                });
            }
        }
    }
    out
}

/// Where each kernel of `program` comes from, entry point by entry point: `(function, line)`
/// with the line `main_k3 (segred thread) at lib/x.og:12:5`, the kernel's name ([`kernels`]),
/// kind and level, and the location of the source expression (the SOAC, or the `map` around
/// the lambda) it was made of. `ogham dev --print kir` lists them; `OGHAM_PROFILE` names them.
pub fn kernel_origins(program: &Program, sources: &SourceMap) -> Vec<(usize, String)> {
    kernels(program)
        .into_iter()
        .map(|k| {
            let kind = match k.seg.kind {
                SegKind::Map => "segmap",
                SegKind::Red(_) => "segred",
                SegKind::Scan(_) => "segscan",
                SegKind::Hist(_) => "seghist",
            };
            let level = match k.seg.level {
                SegLevel::Thread => "thread",
                SegLevel::Block => "block",
            };
            let at = sources.location(k.stmt.loc);
            (k.function, format!("{} ({kind} {level}) at {at}", k.name))
        })
        .collect()
}

/// The kernel statements of a host body (in the body and in the bodies of its `if`s and loops;
/// other bodies are core IR), in order.
fn kernel_stmts<'p>(body: &'p HostBody, out: &mut Vec<&'p HostStmt>) {
    for stmt in &body.stmts {
        match &stmt.exp {
            Exp::Host(HostOp::Seg(_)) => out.push(stmt),
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                kernel_stmts(then_body, out);
                kernel_stmts(else_body, out);
            }
            Exp::Loop { body, .. } => kernel_stmts(body, out),
            _ => {}
        }
    }
}

/// The math functions, by code.
pub const MATH_FNS: [MathFn; 26] = [
    MathFn::Sqrt,
    MathFn::Exp,
    MathFn::Log,
    MathFn::Log2,
    MathFn::Log10,
    MathFn::Sin,
    MathFn::Cos,
    MathFn::Tan,
    MathFn::Asin,
    MathFn::Acos,
    MathFn::Atan,
    MathFn::Atan2,
    MathFn::Sinh,
    MathFn::Cosh,
    MathFn::Tanh,
    MathFn::Abs,
    MathFn::Sgn,
    MathFn::Floor,
    MathFn::Ceil,
    MathFn::Round,
    MathFn::Trunc,
    MathFn::Min,
    MathFn::Max,
    MathFn::Pow,
    MathFn::IsNan,
    MathFn::IsInf,
];

/// An operator's code: its position in [`BinOp::ALL`].
pub fn binop_code(op: BinOp) -> i64 {
    op as i64
}

pub fn math_code(f: MathFn) -> i64 {
    MATH_FNS
        .iter()
        .position(|g| *g == f)
        .expect("every function has a code") as i64
}

/// A scalar type's code: its position in [`PrimType::ALL`].
pub fn prim_code(t: PrimType) -> i64 {
    PrimType::ALL
        .iter()
        .position(|p| *p == t)
        .expect("every type has a code") as i64
}
