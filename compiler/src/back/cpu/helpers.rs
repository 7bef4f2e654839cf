//! The run-time helper functions that generated CPU code calls, and the integer codes by which
//! it names operators, functions and types when calling them.
//!
//! Operations whose exact semantics would be long to restate in CLIF (floored integer division,
//! `**`, saturating conversions, the transcendental functions, Rust's NaN-ignoring `min`/`max`)
//! are calls to helpers that the runtime implements with the reference interpreter's own
//! operations, so every backend agrees with `interp` bit for bit. Cheap operations (float
//! arithmetic, comparisons, wrapping integer arithmetic) are inlined.
//!
//! Contract with the runtime: the runtime declares the helpers, in the order of [`HELPERS`],
//! before any kernel, so that the function index a kernel refers to is the helper's position.

use crate::builtins::MathFn;
use crate::syntax::ast::BinOp;
use crate::types::PrimType;
use cranelift_codegen::ir::types::{F32, F64, I64};
use cranelift_codegen::ir::{AbiParam, Signature, Type};
use cranelift_codegen::isa::CallConv;

/// A helper: its symbol, parameter types and result types.
pub struct Helper {
    pub name: &'static str,
    pub params: &'static [Type],
    pub results: &'static [Type],
}

impl Helper {
    pub fn signature(&self) -> Signature {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params
            .extend(self.params.iter().map(|t| AbiParam::new(*t)));
        sig.returns
            .extend(self.results.iter().map(|t| AbiParam::new(*t)));
        sig
    }
}

/// Position of each helper in [`HELPERS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HelperId {
    /// `(ctx, bytes) -> ptr`: memory from the calling worker's arena (0 when exhausted).
    Alloc,
    /// `(ctx)`: frees everything the worker's arena handed out since its last reset.
    ArenaReset,
    /// `(op, type, x, y) -> r`: an integer [`BinOp`], operands and result widened to `i64`.
    IntOp,
    /// `(op, x, y) -> r`: a float [`BinOp`] at `f32` (`%`, `//`, `%%`, `**`).
    F32Op,
    F64Op,
    /// `(function, x, y) -> r`: a [`MathFn`] at `f32` (`y` is ignored by unary ones).
    F32Math,
    F64Math,
    /// `(function, type, x, y) -> r`: a [`MathFn`] on integers widened to `i64`.
    IntMath,
    /// `(from, to, bits) -> bits`: a conversion, values as their bits in an `i64`.
    Convert,
    /// `(extent, start, len, stride) -> ok`: whether a slice is valid (1) or not (0).
    SliceOk,
}

pub const HELPERS: [Helper; 10] = [
    Helper {
        name: "ogham_alloc",
        params: &[I64, I64],
        results: &[I64],
    },
    Helper {
        name: "ogham_arena_reset",
        params: &[I64],
        results: &[],
    },
    Helper {
        name: "ogham_int_op",
        params: &[I64, I64, I64, I64],
        results: &[I64],
    },
    Helper {
        name: "ogham_f32_op",
        params: &[I64, F32, F32],
        results: &[F32],
    },
    Helper {
        name: "ogham_f64_op",
        params: &[I64, F64, F64],
        results: &[F64],
    },
    Helper {
        name: "ogham_f32_math",
        params: &[I64, F32, F32],
        results: &[F32],
    },
    Helper {
        name: "ogham_f64_math",
        params: &[I64, F64, F64],
        results: &[F64],
    },
    Helper {
        name: "ogham_int_math",
        params: &[I64, I64, I64, I64],
        results: &[I64],
    },
    Helper {
        name: "ogham_convert",
        params: &[I64, I64, I64],
        results: &[I64],
    },
    Helper {
        name: "ogham_slice_ok",
        params: &[I64, I64, I64, I64],
        results: &[I64],
    },
];

impl HelperId {
    pub fn helper(self) -> &'static Helper {
        &HELPERS[self as usize]
    }
}

/// The operators, by code (a code is the position in this list).
pub const BINOPS: [BinOp; 23] = [
    BinOp::PipeRight,
    BinOp::PipeLeft,
    BinOp::Or,
    BinOp::And,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::BitAnd,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Mod,
    BinOp::Quot,
    BinOp::Rem,
    BinOp::Pow,
];

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

pub fn binop_code(op: BinOp) -> i64 {
    BINOPS
        .iter()
        .position(|o| *o == op)
        .expect("every operator has a code") as i64
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
