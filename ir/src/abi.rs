//! The contract between generated kernel code and the runtime that runs it, which both the
//! backends (`ogham_compiler::back`) and the runtime's executors read: how kernels are found and
//! named ([`kernels`]), the argument slots by which a kernel receives its inputs and outputs
//! ([`ArgSlots`]), the run-time checks they report ([`ErrorSite`]), the layout of a CPU
//! worker's context record (`CTX_*`) and the integer codes by which generated CPU code names
//! operators, math functions and types when it calls the runtime's helpers
//! (`ogham_compiler::back::cpu::helpers` lists the helpers; the runtime implements them).

use crate::kir::{HostBody, HostOp, HostStmt, Program, SegKind, SegLevel, SegOp};
use crate::math::MathFn;
use crate::op::BinOp;
use crate::source::{SourceMap, Span};
use crate::types::PrimType;
use crate::{DimIndex, Exp, SubExp, VarId};
use std::collections::BTreeSet;

/// The most values a failed check records for its message.
pub const MAX_DETAILS: usize = 16;

/// Offset in a CPU worker's context record of the number of the failed check.
pub const CTX_SITE: i32 = 0;
/// Offset of the values describing the failure.
pub const CTX_DETAILS: i32 = 8;
/// Size of the part of the context record that generated code writes.
pub const CTX_GENERATED_BYTES: usize = CTX_DETAILS as usize + 8 * MAX_DETAILS;

/// The data kernels of the CUDA prelude, which the CUDA executor launches itself for the host
/// steps that only make or move data: `iota`, then `rearrange` element by element, a
/// matrix's tiled transpose and the `replicate` of a row, each by element width (1, 2, 4 and 8
/// bytes).
pub const CUDA_IOTA: &str = "og_iota";
pub const CUDA_PERMUTE: [&str; 4] = [
    "og_permute_1",
    "og_permute_2",
    "og_permute_4",
    "og_permute_8",
];
pub const CUDA_TRANSPOSE: [&str; 4] = [
    "og_transpose_1",
    "og_transpose_2",
    "og_transpose_4",
    "og_transpose_8",
];

pub const CUDA_REPLICATE: [&str; 4] = [
    "og_replicate_1",
    "og_replicate_2",
    "og_replicate_4",
    "og_replicate_8",
];

/// The most axes the CUDA prelude's `og_permute_*` kernels take.
pub const CUDA_PERMUTE_RANK: usize = 8;

/// Every data kernel of the CUDA prelude ([`CUDA_IOTA`], [`CUDA_PERMUTE`], [`CUDA_TRANSPOSE`],
/// [`CUDA_REPLICATE`]).
pub fn cuda_data_kernels() -> impl Iterator<Item = &'static str> {
    std::iter::once(CUDA_IOTA)
        .chain(CUDA_PERMUTE)
        .chain(CUDA_TRANSPOSE)
        .chain(CUDA_REPLICATE)
}

/// The arena shares (of `arena_stride` bytes each) that the block of a CUDA block-level kernel
/// holds for the arrays its block-level statements make, ahead of its threads' one share each
/// when they make arrays: a block's region is `BLOCK_ARENA_SHARES + blockDim.x` shares, or
/// `BLOCK_ARENA_SHARES` when its threads make none. The block's arrays span the
/// whole point (a series' length), its threads' the rows they take, so the block's arena is
/// the one that runs out first.
pub const BLOCK_ARENA_SHARES: i64 = 16;

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

/// The inputs of kernel statement `stmt` of `f`, in the order of their argument slots: its free
/// variables, by number.
pub fn kernel_inputs(f: &crate::kir::Function, stmt: &HostStmt) -> Vec<VarId> {
    let free: BTreeSet<VarId> = crate::traverse::free_vars_stmt(f, stmt);
    free.into_iter().collect()
}

/// The argument slots of a kernel: `args`, an array of 64-bit slots that the code generators
/// read and the runtime's launchers fill. First the kernel's inputs ([`kernel_inputs`]) in
/// order, a scalar as one slot holding its bits (zero-extended), an array as its element
/// pointer then its extents; then its outputs, each as its element pointer then the number of
/// elements of one point's value (a point's array result is written contiguously there). A
/// histogram has no outputs: its destinations are inputs, updated in place. This type is the
/// only place that lays the slots out.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgSlots {
    inputs: Vec<InputSlots>,
    outputs: Vec<OutputSlots>,
}

/// The slots of one input: a scalar's bits at `first`, or an array's element pointer at `first`
/// and its `rank` extents after it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputSlots {
    pub first: usize,
    /// 0 for a scalar.
    pub rank: usize,
}

impl InputSlots {
    /// The slot of extent `d` of an array.
    pub fn extent(self, d: usize) -> usize {
        self.first + 1 + d
    }

    /// The slot after this input's.
    fn end(self) -> usize {
        self.extent(self.rank)
    }
}

/// The slots of one output: its element pointer and the number of elements of a point's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutputSlots {
    pub ptr: usize,
    pub row: usize,
}

/// The value of one input, for [`ArgSlots::fill`]: a scalar's bits or an array's element
/// pointer (the host's or a device's) and extents.
pub enum ArgValue<'a> {
    Scalar(u64),
    Array { ptr: u64, extents: &'a [usize] },
}

impl ArgSlots {
    /// The slots of inputs of ranks `ranks` (0: a scalar) and `outputs` outputs.
    pub fn new(ranks: impl IntoIterator<Item = usize>, outputs: usize) -> ArgSlots {
        let mut next = 0;
        let inputs = ranks
            .into_iter()
            .map(|rank| {
                let at = InputSlots { first: next, rank };
                next = at.end();
                at
            })
            .collect();
        let outputs = (0..outputs)
            .map(|j| OutputSlots {
                ptr: next + 2 * j,
                row: next + 2 * j + 1,
            })
            .collect();
        ArgSlots { inputs, outputs }
    }

    /// The slots of kernel `seg` of `f` with inputs `inputs`, whose results are bound to `pat`.
    pub fn of_kernel(
        f: &crate::kir::Function,
        seg: &SegOp,
        inputs: &[VarId],
        pat: &[VarId],
    ) -> ArgSlots {
        let outputs = match seg.kind {
            SegKind::Hist(_) => 0,
            _ => pat.len(),
        };
        ArgSlots::new(inputs.iter().map(|v| f.ty(*v).rank()), outputs)
    }

    pub fn inputs(&self) -> &[InputSlots] {
        &self.inputs
    }

    pub fn outputs(&self) -> &[OutputSlots] {
        &self.outputs
    }

    /// The number of slots.
    pub fn len(&self) -> usize {
        let after_inputs = self.inputs.last().map_or(0, |at| at.end());
        after_inputs + 2 * self.outputs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slots holding `inputs` and `outputs` (per output, its element pointer and the number
    /// of elements of one point's value).
    pub fn fill(inputs: &[ArgValue], outputs: &[(u64, u64)]) -> Vec<u64> {
        let ranks = inputs.iter().map(|a| match a {
            ArgValue::Scalar(_) => 0,
            ArgValue::Array { extents, .. } => extents.len(),
        });
        let layout = ArgSlots::new(ranks, outputs.len());
        let mut slots = vec![0; layout.len()];
        for (at, value) in layout.inputs.iter().zip(inputs) {
            match value {
                ArgValue::Scalar(bits) => slots[at.first] = *bits,
                ArgValue::Array { ptr, extents } => {
                    slots[at.first] = *ptr;
                    for (d, e) in extents.iter().enumerate() {
                        slots[at.extent(d)] = *e as u64;
                    }
                }
            }
        }
        for (at, (ptr, row)) in layout.outputs.iter().zip(outputs) {
            slots[at.ptr] = *ptr;
            slots[at.row] = *row;
        }
        slots
    }
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

#[cfg(test)]
mod tests {
    use super::{ArgSlots, ArgValue, InputSlots, OutputSlots};

    /// A scalar, a matrix and a scalar, then two outputs: the slots in order.
    #[test]
    fn argument_slots_are_laid_out_and_filled_in_order() {
        let slots = ArgSlots::new([0, 2, 0], 2);
        assert_eq!(
            slots.inputs(),
            [
                InputSlots { first: 0, rank: 0 },
                InputSlots { first: 1, rank: 2 },
                InputSlots { first: 4, rank: 0 },
            ]
        );
        assert_eq!(slots.inputs()[1].extent(1), 3);
        assert_eq!(
            slots.outputs(),
            [
                OutputSlots { ptr: 5, row: 6 },
                OutputSlots { ptr: 7, row: 8 }
            ]
        );
        assert_eq!(slots.len(), 9);
        let filled = ArgSlots::fill(
            &[
                ArgValue::Scalar(7),
                ArgValue::Array {
                    ptr: 0x1000,
                    extents: &[2, 3],
                },
                ArgValue::Scalar(u64::MAX),
            ],
            &[(0x2000, 1), (0x3000, 3)],
        );
        assert_eq!(filled, [7, 0x1000, 2, 3, u64::MAX, 0x2000, 1, 0x3000, 3]);
        assert!(ArgSlots::new([], 0).is_empty());
    }
}
