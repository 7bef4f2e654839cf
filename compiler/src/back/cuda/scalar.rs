//! Scalar operations as C expressions with the interpreter's semantics (the prelude's `og_div`,
//! `og_f2i`, ... where C's differ: those of the shared description, `back/steps.rs`, are
//! written by `prelude.rs`).

use super::Unsupported;
use super::emit::{Res, ctype, literal};
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::types::PrimType;
use ogham_ir::{Const, scalar};

/// What an operation costs in the performance model's counts: a float operation the GPU's FP32
/// or FP64 units execute (`Flop`), one of its special-function unit or a multi-instruction
/// library routine (`Special`: roots, exponentials, logarithms, trigonometry, powers), or
/// nothing counted (integer and logical operations, comparisons, tests).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cost {
    Flop,
    Special,
    Uncounted,
}

/// The cost of `x op y` at type `t`.
pub fn binop_cost(op: BinOp, t: PrimType) -> Cost {
    match op {
        _ if !t.is_float() => Cost::Uncounted,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Cost::Uncounted,
        BinOp::Pow => Cost::Special,
        _ => Cost::Flop,
    }
}

/// The cost of `op x` at type `t`.
pub fn unop_cost(op: UnOp, t: PrimType) -> Cost {
    match op {
        UnOp::Neg if t.is_float() => Cost::Flop,
        _ => Cost::Uncounted,
    }
}

/// The cost of math function `f` at type `t`.
pub fn math_cost(f: MathFn, t: PrimType) -> Cost {
    use MathFn as M;
    match f {
        _ if !t.is_float() => Cost::Uncounted,
        M::IsNan | M::IsInf => Cost::Uncounted,
        M::Abs | M::Sgn | M::Floor | M::Ceil | M::Round | M::Trunc | M::Min | M::Max => Cost::Flop,
        M::Sqrt
        | M::Exp
        | M::Log
        | M::Log2
        | M::Log10
        | M::Sin
        | M::Cos
        | M::Tan
        | M::Asin
        | M::Acos
        | M::Atan
        | M::Atan2
        | M::Sinh
        | M::Cosh
        | M::Tanh
        | M::Pow => Cost::Special,
    }
}

/// `x op y` at type `t`; an integer divisor is known to be non-zero (the shared walk checks it
/// first).
pub fn binop(op: BinOp, t: PrimType, x: &str, y: &str) -> Res<String> {
    if op.is_comparison() {
        return Ok(format!("({x} {} {y})", op.symbol()));
    }
    if t == PrimType::Bool {
        return match op {
            BinOp::BitAnd => Ok(format!("({x} && {y})")),
            BinOp::BitOr => Ok(format!("({x} || {y})")),
            BinOp::BitXor => Ok(format!("({x} != {y})")),
            _ => Err(Unsupported(format!("`{}` on bool", op.symbol()))),
        };
    }
    if t.is_float() {
        return match op {
            BinOp::Add => Ok(format!("({x} + {y})")),
            BinOp::Sub => Ok(format!("({x} - {y})")),
            BinOp::Mul => Ok(format!("({x} * {y})")),
            BinOp::Div => Ok(format!("({x} / {y})")),
            BinOp::Mod => Ok(format!("og_fmod_floor({x}, {y})")),
            BinOp::Quot => Ok(format!("trunc({x} / {y})")),
            BinOp::Rem => Ok(format!("fmod({x}, {y})")),
            BinOp::Pow => Ok(format!("pow({x}, {y})")),
            _ => Err(Unsupported(format!("`{}` on floats", op.symbol()))),
        };
    }
    let f = match op {
        BinOp::Add => "og_add",
        BinOp::Sub => "og_sub",
        BinOp::Mul => "og_mul",
        BinOp::Pow => "og_ipow",
        BinOp::Shl => "og_shl",
        BinOp::Shr => "og_shr",
        BinOp::BitAnd => return Ok(format!("({x} & {y})")),
        BinOp::BitOr => return Ok(format!("({x} | {y})")),
        BinOp::BitXor => return Ok(format!("({x} ^ {y})")),
        BinOp::Div => "og_div",
        BinOp::Mod => "og_mod",
        BinOp::Quot => "og_quot",
        BinOp::Rem => "og_rem",
        _ => return Err(Unsupported(format!("operator `{}`", op.symbol()))),
    };
    Ok(format!("(({}){f}({x}, {y}))", ctype(t)))
}

/// `op x` at type `t`.
pub fn unop(op: UnOp, t: PrimType, x: &str) -> String {
    match (op, t) {
        (UnOp::Neg, PrimType::F32 | PrimType::F64) => format!("(-{x})"),
        (UnOp::Neg, _) => format!("og_neg({x})"),
        (UnOp::Not, PrimType::Bool) => format!("(!{x})"),
        (UnOp::Not, t) => format!("(({})~{x})", ctype(t)),
    }
}

/// A math function at type `t`.
pub fn math(f: MathFn, t: PrimType, args: &[String]) -> String {
    let x = &args[0];
    if t.is_float() {
        let name = match f {
            MathFn::Sqrt => "sqrt",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Atan2 => "atan2",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Abs => "fabs",
            MathFn::Sgn => "og_fsgn",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            // Half to even, as the interpreter's `round_ties_even`.
            MathFn::Round => "rint",
            MathFn::Trunc => "trunc",
            // IEEE minNum/maxNum: a NaN operand yields the other one, as Rust's min/max.
            MathFn::Min => "fmin",
            MathFn::Max => "fmax",
            MathFn::Pow => "pow",
            MathFn::IsNan => "isnan",
            MathFn::IsInf => "isinf",
        };
        return format!("{name}({})", args.join(", "));
    }
    let c = ctype(t);
    match (f, t) {
        (MathFn::Min, _) => format!("({x} <= {y} ? {x} : {y})", y = args[1]),
        (MathFn::Max, _) => format!("({x} >= {y} ? {x} : {y})", y = args[1]),
        (MathFn::Pow, _) => format!("(({c})og_ipow({x}, {}))", args[1]),
        (MathFn::Abs, PrimType::U8) => x.clone(),
        (MathFn::Sgn, PrimType::U8) => format!("((u8)({x} != 0))"),
        (MathFn::Abs, _) => format!("(({c})og_iabs({x}))"),
        (MathFn::Sgn, _) => format!("(({c})og_isgn({x}))"),
        // The type checker gives integers no other math function.
        _ => format!("(({c})0)"),
    }
}

/// A conversion with the interpreter's rules (wrapping between integers, saturating from
/// floats with NaN giving 0, `x != 0` to bool).
pub fn convert(from: PrimType, to: PrimType, x: &str) -> String {
    use PrimType as P;
    let c = ctype(to);
    match (from, to) {
        _ if from == to => x.to_string(),
        (_, P::Bool) => format!("({x} != 0)"),
        (P::Bool, _) => format!("(({c})({x} ? 1 : 0))"),
        (P::F32 | P::F64, P::I8 | P::I16 | P::I32 | P::I64 | P::U8) => {
            // `to`'s bounds: where the reference's conversion saturates.
            let bound = |inf: f64| literal(scalar::convert(Const::F64(inf), to));
            let (lo, hi) = (bound(f64::NEG_INFINITY), bound(f64::INFINITY));
            format!("og_f2i<{c}>({x}, {lo}, {hi})")
        }
        _ => format!("(({c}){x})"),
    }
}
