//! The run-time helper functions that generated CPU code calls, and the integer codes by which
//! it names operators, functions and types when calling them.
//!
//! Operations whose exact semantics would be long to restate in CLIF (integer `**`, the
//! conversions without an instruction, the transcendental functions, float `%` outside its exact
//! inline cases) are calls to helpers that the runtime implements with the IR's scalar semantics
//! ([`ogham_ir::scalar`]), so every backend agrees with the interpreters bit for bit. Cheap
//! operations (float arithmetic, comparisons, wrapping integer arithmetic, `min`/`max`) and
//! integer division (the steps of `back/steps.rs`) are inlined.
//!
//! Contract with the runtime: the runtime implements every helper under its symbol (and gives
//! the JIT their addresses); `machine.rs` declares them, in the order of [`HELPERS`], before
//! any kernel, so that the function index a kernel refers to is the helper's position.

use cranelift_codegen::ir::types::{F32, F64, I64};
use cranelift_codegen::ir::{AbiParam, Signature, Type};
use cranelift_codegen::isa::CallConv;
use ogham_ir::abi::MATH_FNS;
use ogham_ir::math::MathFn;
use ogham_ir::types::PrimType;

/// A helper: its symbol, parameter types and result types.
#[derive(Clone)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelperId {
    /// `(ctx, bytes) -> ptr`: memory from the calling worker's arena (0 when exhausted).
    Alloc,
    /// `(ctx)`: frees everything the worker's arena handed out since its last reset.
    ArenaReset,
    /// `(op, type, x, y) -> r`: an integer [`BinOp`](ogham_ir::op::BinOp), operands and result widened to `i64`.
    IntOp,
    /// `(op, x, y) -> r`: a float [`BinOp`](ogham_ir::op::BinOp) at `f32` (`%`, `//`, `%%`, `**`).
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
    /// `(x) -> r` or `(x, y) -> r`: a function with [`has_libm_helper`] at `f32` or `f64`, called
    /// directly (`ogham_exp_f64`, ...): the Rust method the interpreter uses, without dispatch.
    Libm(MathFn, PrimType),
    /// `(x, out)`: `sin x` and `cos x` at `f32` or `f64`, written to the two 8-byte slots at
    /// `out` (generated code computes both once when a block needs both of one value).
    SinCos(PrimType),
    /// `(ctx) -> mark`: where the worker's arena hands out memory next (`reclaim.rs`).
    ArenaMark,
    /// `(ctx, mark) -> due`: whether a loop's carried arrays are to be moved down to the mark
    /// (more than a chunk handed out since it).
    ArenaDue,
    /// `(ctx, mark, ptr) -> made`: whether `ptr` lies in memory handed out since the mark.
    ArenaMadeSince,
    /// `(ctx, mark)`: gives back everything handed out since the mark.
    ArenaRewind,
    /// `(ctx, bytes) -> ptr`: memory from the worker's scratch arena (0 when exhausted).
    ScratchAlloc,
}

/// The float math functions the CPU backend emits as instructions (no helper call).
pub fn is_inline_float_math(f: MathFn) -> bool {
    matches!(
        f,
        MathFn::Sqrt
            | MathFn::Abs
            | MathFn::Floor
            | MathFn::Ceil
            | MathFn::Trunc
            | MathFn::Round
            | MathFn::IsNan
            | MathFn::IsInf
            | MathFn::Min
            | MathFn::Max
    )
}

/// Whether a float function has helpers of its own (`ogham_exp_f32`, ...): the transcendental
/// functions and `pow`, which Cranelift has no instruction for. Their function ids follow the
/// fixed helpers', in the order of [`MATH_FNS`], `f32` then `f64` for each.
pub fn has_libm_helper(f: MathFn) -> bool {
    f == MathFn::Pow
        || (f.float_only()
            && !matches!(
                f,
                MathFn::Sqrt
                    | MathFn::Floor
                    | MathFn::Ceil
                    | MathFn::Round
                    | MathFn::Trunc
                    | MathFn::IsNan
                    | MathFn::IsInf
            ))
}

fn libm_fns() -> impl Iterator<Item = MathFn> {
    MATH_FNS.into_iter().filter(|f| has_libm_helper(*f))
}

/// The symbols of the [`HelperId::Libm`] helpers, in order.
pub const LIBM_NAMES: [&str; 30] = [
    "ogham_exp_f32",
    "ogham_exp_f64",
    "ogham_log_f32",
    "ogham_log_f64",
    "ogham_log2_f32",
    "ogham_log2_f64",
    "ogham_log10_f32",
    "ogham_log10_f64",
    "ogham_sin_f32",
    "ogham_sin_f64",
    "ogham_cos_f32",
    "ogham_cos_f64",
    "ogham_tan_f32",
    "ogham_tan_f64",
    "ogham_asin_f32",
    "ogham_asin_f64",
    "ogham_acos_f32",
    "ogham_acos_f64",
    "ogham_atan_f32",
    "ogham_atan_f64",
    "ogham_atan2_f32",
    "ogham_atan2_f64",
    "ogham_sinh_f32",
    "ogham_sinh_f64",
    "ogham_cosh_f32",
    "ogham_cosh_f64",
    "ogham_tanh_f32",
    "ogham_tanh_f64",
    "ogham_pow_f32",
    "ogham_pow_f64",
];

/// Every helper, in the order of their function ids.
pub fn all_helpers() -> Vec<Helper> {
    let mut all: Vec<Helper> = FIXED_HELPERS.to_vec();
    for f in libm_fns() {
        for t in [PrimType::F32, PrimType::F64] {
            all.push(HelperId::Libm(f, t).helper());
        }
    }
    for t in [PrimType::F32, PrimType::F64] {
        all.push(HelperId::SinCos(t).helper());
    }
    all.extend(RECLAIM_HELPERS);
    all
}

/// The function id of the first of [`RECLAIM_HELPERS`], which come after every other helper.
const RECLAIM_AT: usize = FIXED_HELPERS.len() + LIBM_NAMES.len() + 2;

/// The helpers of `reclaim.rs`, in the order of their [`HelperId`]s.
const RECLAIM_HELPERS: [Helper; 5] = [
    Helper {
        name: "ogham_arena_mark",
        params: &[I64],
        results: &[I64],
    },
    Helper {
        name: "ogham_arena_due",
        params: &[I64, I64],
        results: &[I64],
    },
    Helper {
        name: "ogham_arena_made_since",
        params: &[I64, I64, I64],
        results: &[I64],
    },
    Helper {
        name: "ogham_arena_rewind",
        params: &[I64, I64],
        results: &[],
    },
    Helper {
        name: "ogham_scratch_alloc",
        params: &[I64, I64],
        results: &[I64],
    },
];

const FIXED_HELPERS: [Helper; 10] = [
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
    /// The helper's function id: its position in [`all_helpers`].
    pub fn index(self) -> usize {
        match self {
            HelperId::Alloc => 0,
            HelperId::ArenaReset => 1,
            HelperId::IntOp => 2,
            HelperId::F32Op => 3,
            HelperId::F64Op => 4,
            HelperId::F32Math => 5,
            HelperId::F64Math => 6,
            HelperId::IntMath => 7,
            HelperId::Convert => 8,
            HelperId::SliceOk => 9,
            HelperId::Libm(f, t) => {
                let k = libm_fns()
                    .position(|g| g == f)
                    .expect("a function with a helper");
                FIXED_HELPERS.len() + 2 * k + usize::from(t == PrimType::F64)
            }
            HelperId::SinCos(t) => {
                FIXED_HELPERS.len() + LIBM_NAMES.len() + usize::from(t == PrimType::F64)
            }
            HelperId::ArenaMark => RECLAIM_AT,
            HelperId::ArenaDue => RECLAIM_AT + 1,
            HelperId::ArenaMadeSince => RECLAIM_AT + 2,
            HelperId::ArenaRewind => RECLAIM_AT + 3,
            HelperId::ScratchAlloc => RECLAIM_AT + 4,
        }
    }

    pub fn helper(self) -> Helper {
        match self {
            HelperId::Libm(f, t) => {
                let ty = if t == PrimType::F64 { F64 } else { F32 };
                let params: &'static [Type] = match (f, t == PrimType::F64) {
                    (MathFn::Atan2 | MathFn::Pow, false) => &[F32, F32],
                    (MathFn::Atan2 | MathFn::Pow, true) => &[F64, F64],
                    (_, false) => &[F32],
                    (_, true) => &[F64],
                };
                Helper {
                    name: LIBM_NAMES[self.index() - FIXED_HELPERS.len()],
                    params,
                    results: if ty == F64 { &[F64] } else { &[F32] },
                }
            }
            HelperId::SinCos(t) => Helper {
                name: if t == PrimType::F64 {
                    "ogham_sincos_f64"
                } else {
                    "ogham_sincos_f32"
                },
                params: if t == PrimType::F64 {
                    &[F64, I64]
                } else {
                    &[F32, I64]
                },
                results: &[],
            },
            HelperId::ArenaMark
            | HelperId::ArenaDue
            | HelperId::ArenaMadeSince
            | HelperId::ArenaRewind
            | HelperId::ScratchAlloc => RECLAIM_HELPERS[self.index() - RECLAIM_AT].clone(),
            fixed => FIXED_HELPERS[fixed.index()].clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libm_helper_names_follow_their_functions() {
        for (k, f) in libm_fns().enumerate() {
            let name = format!("{f:?}").to_lowercase();
            assert_eq!(LIBM_NAMES[2 * k], format!("ogham_{name}_f32"));
            assert_eq!(LIBM_NAMES[2 * k + 1], format!("ogham_{name}_f64"));
            assert_eq!(
                HelperId::Libm(f, PrimType::F64).helper().name,
                LIBM_NAMES[2 * k + 1]
            );
        }
        assert_eq!(
            all_helpers().len(),
            FIXED_HELPERS.len() + LIBM_NAMES.len() + 2 + RECLAIM_HELPERS.len()
        );
        assert_eq!(HelperId::SinCos(PrimType::F64).index(), RECLAIM_AT - 1);
        // Each helper's id is its position among all helpers.
        let all = all_helpers();
        for id in [
            HelperId::Alloc,
            HelperId::SliceOk,
            HelperId::SinCos(PrimType::F32),
            HelperId::ArenaMark,
            HelperId::ArenaDue,
            HelperId::ArenaMadeSince,
            HelperId::ArenaRewind,
            HelperId::ScratchAlloc,
        ] {
            assert_eq!(all[id.index()].name, id.helper().name, "{id:?}");
        }
        assert_eq!(HelperId::ScratchAlloc.index(), all.len() - 1);
    }
}
