//! Scalar semantics: operators, math functions, conversions, constants and literals.
//!
//! - Integer arithmetic wraps (two's complement). `/` and `%` round towards negative infinity
//!   (`-7 / 2 == -4`, `-7 % 2 == 1`); `//` and `%%` truncate (`-7 // 2 == -3`, `-7 %% 2 == -1`).
//!   Division or remainder by zero is an error; `lowest / -1` wraps to `lowest`.
//! - `x ** y` on integers is repeated wrapping multiplication; for `y < 0` it is `1` if `x == 1`,
//!   `±1` if `x == -1` (by the parity of `y`), and `0` otherwise.
//! - Shifts by a negative amount or by at least the bit width shift everything out: `<<` gives
//!   0, `>>` gives 0 or -1 (arithmetic shift for signed types, logical for `u8`).
//! - Floats are IEEE-754 in their own precision (f32 operations use f32 methods). `%` on floats
//!   is floored like on integers (the result has the sign of the divisor), `%%` truncates
//!   (C's `fmod`), `//` is the truncated quotient. `min`/`max` return the other argument when one
//!   is NaN (IEEE-754 minNum/maxNum). `round` rounds half to even. `sgn` keeps NaN and ±0.
//! - Conversions (`f32.i64 x`: to f32 from i64) between integers wrap; float to integer
//!   truncates towards zero and saturates, NaN giving 0; to `bool` is `x != 0`; from `bool` is
//!   0 or 1; between floats and from integers to floats rounds to nearest.

use crate::value::Scalar;
use ogham_compiler::builtins::{ConstFn, MathFn};
use ogham_compiler::syntax::ast::{BinOp, LitValue, UnOp};
use ogham_compiler::types::PrimType;

/// Why a scalar operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpError {
    /// Integer division or remainder by zero.
    DivByZero,
    /// Operands of types the operation does not take (a type checker or interpreter bug).
    IllTyped,
}

fn is_neg<T: PartialOrd + Default>(x: T) -> bool {
    x < T::default()
}

macro_rules! int_binop {
    ($op:expr, $x:expr, $y:expr, $V:ident, $t:ty) => {{
        let (x, y): ($t, $t) = ($x, $y);
        let zero = <$t>::default();
        let one: $t = 1;
        let bits = <$t>::BITS;
        let amount = if is_neg(y) {
            u32::MAX
        } else {
            u32::try_from(y).unwrap_or(u32::MAX)
        };
        Scalar::$V(match $op {
            BinOp::Add => x.wrapping_add(y),
            BinOp::Sub => x.wrapping_sub(y),
            BinOp::Mul => x.wrapping_mul(y),
            BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem if y == zero => {
                return Err(OpError::DivByZero);
            }
            BinOp::Div => {
                let q = x.wrapping_div(y);
                if x.wrapping_rem(y) != zero && is_neg(x) != is_neg(y) {
                    q.wrapping_sub(one)
                } else {
                    q
                }
            }
            BinOp::Mod => {
                let r = x.wrapping_rem(y);
                if r != zero && is_neg(r) != is_neg(y) {
                    r.wrapping_add(y)
                } else {
                    r
                }
            }
            BinOp::Quot => x.wrapping_div(y),
            BinOp::Rem => x.wrapping_rem(y),
            BinOp::Pow => {
                if is_neg(y) {
                    if x == one {
                        one
                    } else if x == zero.wrapping_sub(one) {
                        if y % 2 == zero { one } else { x }
                    } else {
                        zero
                    }
                } else {
                    let (mut acc, mut base, mut e) = (one, x, y);
                    while e > zero {
                        if e & one == one {
                            acc = acc.wrapping_mul(base);
                        }
                        base = base.wrapping_mul(base);
                        e >>= 1;
                    }
                    acc
                }
            }
            BinOp::BitAnd => x & y,
            BinOp::BitOr => x | y,
            BinOp::BitXor => x ^ y,
            BinOp::Shl => {
                if amount >= bits {
                    zero
                } else {
                    x << amount
                }
            }
            BinOp::Shr => {
                if amount < bits {
                    x >> amount
                } else if is_neg(x) {
                    zero.wrapping_sub(one)
                } else {
                    zero
                }
            }
            BinOp::Eq => return Ok(Scalar::Bool(x == y)),
            BinOp::Ne => return Ok(Scalar::Bool(x != y)),
            BinOp::Lt => return Ok(Scalar::Bool(x < y)),
            BinOp::Le => return Ok(Scalar::Bool(x <= y)),
            BinOp::Gt => return Ok(Scalar::Bool(x > y)),
            BinOp::Ge => return Ok(Scalar::Bool(x >= y)),
            BinOp::And | BinOp::Or | BinOp::PipeLeft | BinOp::PipeRight => {
                return Err(OpError::IllTyped);
            }
        })
    }};
}

macro_rules! float_binop {
    ($op:expr, $x:expr, $y:expr, $V:ident) => {{
        let (x, y) = ($x, $y);
        Scalar::$V(match $op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Mod => {
                let r = x % y;
                if r != 0.0 && (r < 0.0) != (y < 0.0) {
                    r + y
                } else {
                    r
                }
            }
            BinOp::Quot => (x / y).trunc(),
            BinOp::Rem => x % y,
            BinOp::Pow => x.powf(y),
            BinOp::Eq => return Ok(Scalar::Bool(x == y)),
            BinOp::Ne => return Ok(Scalar::Bool(x != y)),
            BinOp::Lt => return Ok(Scalar::Bool(x < y)),
            BinOp::Le => return Ok(Scalar::Bool(x <= y)),
            BinOp::Gt => return Ok(Scalar::Bool(x > y)),
            BinOp::Ge => return Ok(Scalar::Bool(x >= y)),
            _ => return Err(OpError::IllTyped),
        })
    }};
}

/// `a op b` for two scalars of the same type. `&&` and `||` here evaluate both sides (the
/// evaluator short-circuits them before calling this); pipes are not scalar operators.
pub fn binop(op: BinOp, a: Scalar, b: Scalar) -> Result<Scalar, OpError> {
    use Scalar as S;
    Ok(match (a, b) {
        (S::I8(x), S::I8(y)) => int_binop!(op, x, y, I8, i8),
        (S::I16(x), S::I16(y)) => int_binop!(op, x, y, I16, i16),
        (S::I32(x), S::I32(y)) => int_binop!(op, x, y, I32, i32),
        (S::I64(x), S::I64(y)) => int_binop!(op, x, y, I64, i64),
        (S::U8(x), S::U8(y)) => int_binop!(op, x, y, U8, u8),
        (S::F32(x), S::F32(y)) => float_binop!(op, x, y, F32),
        (S::F64(x), S::F64(y)) => float_binop!(op, x, y, F64),
        (S::Bool(x), S::Bool(y)) => S::Bool(match op {
            BinOp::Eq => x == y,
            BinOp::Ne => x != y,
            BinOp::Lt => !x & y,
            BinOp::Le => x <= y,
            BinOp::Gt => x & !y,
            BinOp::Ge => x >= y,
            BinOp::And | BinOp::BitAnd => x && y,
            BinOp::Or | BinOp::BitOr => x || y,
            BinOp::BitXor => x ^ y,
            _ => return Err(OpError::IllTyped),
        }),
        _ => return Err(OpError::IllTyped),
    })
}

/// Scalar equality as `==` computes it (NaN is not equal to itself).
pub fn scalar_eq(a: Scalar, b: Scalar) -> bool {
    binop(BinOp::Eq, a, b) == Ok(Scalar::Bool(true))
}

pub fn unop(op: UnOp, a: Scalar) -> Result<Scalar, OpError> {
    use Scalar as S;
    Ok(match (op, a) {
        (UnOp::Neg, S::I8(x)) => S::I8(x.wrapping_neg()),
        (UnOp::Neg, S::I16(x)) => S::I16(x.wrapping_neg()),
        (UnOp::Neg, S::I32(x)) => S::I32(x.wrapping_neg()),
        (UnOp::Neg, S::I64(x)) => S::I64(x.wrapping_neg()),
        (UnOp::Neg, S::U8(x)) => S::U8(x.wrapping_neg()),
        (UnOp::Neg, S::F32(x)) => S::F32(-x),
        (UnOp::Neg, S::F64(x)) => S::F64(-x),
        (UnOp::Not, S::Bool(x)) => S::Bool(!x),
        (UnOp::Not, S::I8(x)) => S::I8(!x),
        (UnOp::Not, S::I16(x)) => S::I16(!x),
        (UnOp::Not, S::I32(x)) => S::I32(!x),
        (UnOp::Not, S::I64(x)) => S::I64(!x),
        (UnOp::Not, S::U8(x)) => S::U8(!x),
        _ => return Err(OpError::IllTyped),
    })
}

macro_rules! float_math1 {
    ($op:expr, $x:expr, $V:ident) => {{
        let x = $x;
        Scalar::$V(match $op {
            MathFn::Sqrt => x.sqrt(),
            MathFn::Exp => x.exp(),
            MathFn::Log => x.ln(),
            MathFn::Log2 => x.log2(),
            MathFn::Log10 => x.log10(),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tan => x.tan(),
            MathFn::Asin => x.asin(),
            MathFn::Acos => x.acos(),
            MathFn::Atan => x.atan(),
            MathFn::Sinh => x.sinh(),
            MathFn::Cosh => x.cosh(),
            MathFn::Tanh => x.tanh(),
            MathFn::Abs => x.abs(),
            MathFn::Sgn => {
                if x.is_nan() || x == 0.0 {
                    x
                } else {
                    x.signum()
                }
            }
            MathFn::Floor => x.floor(),
            MathFn::Ceil => x.ceil(),
            MathFn::Round => x.round_ties_even(),
            MathFn::Trunc => x.trunc(),
            MathFn::IsNan => return Ok(Scalar::Bool(x.is_nan())),
            MathFn::IsInf => return Ok(Scalar::Bool(x.is_infinite())),
            MathFn::Atan2 | MathFn::Min | MathFn::Max | MathFn::Pow => {
                return Err(OpError::IllTyped);
            }
        })
    }};
}

macro_rules! signed_math1 {
    ($op:expr, $x:expr, $V:ident) => {{
        let x = $x;
        Scalar::$V(match $op {
            MathFn::Abs => x.wrapping_abs(),
            MathFn::Sgn => x.signum(),
            _ => return Err(OpError::IllTyped),
        })
    }};
}

/// A one-argument math function.
pub fn math1(op: MathFn, a: Scalar) -> Result<Scalar, OpError> {
    use Scalar as S;
    Ok(match a {
        S::F32(x) => float_math1!(op, x, F32),
        S::F64(x) => float_math1!(op, x, F64),
        S::I8(x) => signed_math1!(op, x, I8),
        S::I16(x) => signed_math1!(op, x, I16),
        S::I32(x) => signed_math1!(op, x, I32),
        S::I64(x) => signed_math1!(op, x, I64),
        S::U8(x) => S::U8(match op {
            MathFn::Abs => x,
            MathFn::Sgn => u8::from(x != 0),
            _ => return Err(OpError::IllTyped),
        }),
        S::Bool(_) => return Err(OpError::IllTyped),
    })
}

/// A two-argument math function (`atan2 y x`, `min`, `max`, `pow`).
pub fn math2(op: MathFn, a: Scalar, b: Scalar) -> Result<Scalar, OpError> {
    use Scalar as S;
    match (op, a, b) {
        (MathFn::Atan2, S::F32(y), S::F32(x)) => Ok(S::F32(y.atan2(x))),
        (MathFn::Atan2, S::F64(y), S::F64(x)) => Ok(S::F64(y.atan2(x))),
        (MathFn::Min, S::F32(x), S::F32(y)) => Ok(S::F32(x.min(y))),
        (MathFn::Min, S::F64(x), S::F64(y)) => Ok(S::F64(x.min(y))),
        (MathFn::Max, S::F32(x), S::F32(y)) => Ok(S::F32(x.max(y))),
        (MathFn::Max, S::F64(x), S::F64(y)) => Ok(S::F64(x.max(y))),
        (MathFn::Min, x, y) => {
            binop(BinOp::Le, x, y).map(|le| if le == S::Bool(true) { x } else { y })
        }
        (MathFn::Max, x, y) => {
            binop(BinOp::Ge, x, y).map(|ge| if ge == S::Bool(true) { x } else { y })
        }
        (MathFn::Pow, x, y) if x.prim_type() != PrimType::Bool => binop(BinOp::Pow, x, y),
        _ => Err(OpError::IllTyped),
    }
}

/// The zero of `x`'s type.
fn zero_like<T: Default>(_: T) -> T {
    T::default()
}

macro_rules! convert_num {
    ($x:expr, $to:expr) => {{
        let x = $x;
        match $to {
            PrimType::Bool => Scalar::Bool(x != zero_like(x)),
            PrimType::I8 => Scalar::I8(x as i8),
            PrimType::I16 => Scalar::I16(x as i16),
            PrimType::I32 => Scalar::I32(x as i32),
            PrimType::I64 => Scalar::I64(x as i64),
            PrimType::U8 => Scalar::U8(x as u8),
            PrimType::F32 => Scalar::F32(x as f32),
            PrimType::F64 => Scalar::F64(x as f64),
        }
    }};
}

/// Converts a scalar to type `to` (see the module documentation).
pub fn convert(a: Scalar, to: PrimType) -> Scalar {
    use Scalar as S;
    match a {
        S::Bool(x) => convert_num!(u8::from(x), to),
        S::I8(x) => convert_num!(x, to),
        S::I16(x) => convert_num!(x, to),
        S::I32(x) => convert_num!(x, to),
        S::I64(x) => convert_num!(x, to),
        S::U8(x) => convert_num!(x, to),
        S::F32(x) => convert_num!(x, to),
        S::F64(x) => convert_num!(x, to),
    }
}

/// A constant of a numeric module (`f32.pi`, `i64.highest`; `highest` of a float type is
/// infinity). `None` for combinations the built-in table does not define.
pub fn constant(op: ConstFn, ty: PrimType) -> Option<Scalar> {
    use Scalar as S;
    let float = |x: f64| match ty {
        PrimType::F32 => Some(S::F32(x as f32)),
        PrimType::F64 => Some(S::F64(x)),
        _ => None,
    };
    match op {
        ConstFn::Nan => float(f64::NAN),
        ConstFn::Inf => float(f64::INFINITY),
        ConstFn::Pi => float(std::f64::consts::PI),
        ConstFn::E => float(std::f64::consts::E),
        ConstFn::Highest => Some(match ty {
            PrimType::I8 => S::I8(i8::MAX),
            PrimType::I16 => S::I16(i16::MAX),
            PrimType::I32 => S::I32(i32::MAX),
            PrimType::I64 => S::I64(i64::MAX),
            PrimType::U8 => S::U8(u8::MAX),
            PrimType::Bool => return None,
            PrimType::F32 | PrimType::F64 => return float(f64::INFINITY),
        }),
        ConstFn::Lowest => Some(match ty {
            PrimType::I8 => S::I8(i8::MIN),
            PrimType::I16 => S::I16(i16::MIN),
            PrimType::I32 => S::I32(i32::MIN),
            PrimType::I64 => S::I64(i64::MIN),
            PrimType::U8 => S::U8(u8::MIN),
            PrimType::Bool => return None,
            PrimType::F32 | PrimType::F64 => return float(f64::NEG_INFINITY),
        }),
    }
}

/// The value of a literal of (inferred or suffixed) type `ty`. Integer literals wrap into
/// narrow types (`255i8 == -1i8`) and may have a float type; float literals round to nearest.
pub fn literal(v: LitValue, ty: PrimType) -> Option<Scalar> {
    match v {
        LitValue::Int(x) => Some(convert_num!(x, ty)),
        LitValue::Float(x) => Some(convert(Scalar::F64(x), ty)).filter(|_| ty.is_float()),
        LitValue::Bool(b) => (ty == PrimType::Bool).then_some(Scalar::Bool(b)),
        LitValue::Nan => constant(ConstFn::Nan, ty),
        LitValue::Inf => constant(ConstFn::Inf, ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Scalar as S;

    fn b(op: BinOp, x: Scalar, y: Scalar) -> Scalar {
        binop(op, x, y).unwrap()
    }

    #[test]
    fn integer_division_floors_and_truncates() {
        assert_eq!(b(BinOp::Div, S::I32(-7), S::I32(2)), S::I32(-4));
        assert_eq!(b(BinOp::Mod, S::I32(-7), S::I32(2)), S::I32(1));
        assert_eq!(b(BinOp::Mod, S::I32(7), S::I32(-2)), S::I32(-1));
        assert_eq!(b(BinOp::Quot, S::I32(-7), S::I32(2)), S::I32(-3));
        assert_eq!(b(BinOp::Rem, S::I32(-7), S::I32(2)), S::I32(-1));
        assert_eq!(
            b(BinOp::Div, S::I64(i64::MIN), S::I64(-1)),
            S::I64(i64::MIN)
        );
        assert_eq!(b(BinOp::Mod, S::I64(i64::MIN), S::I64(-1)), S::I64(0));
        assert_eq!(b(BinOp::Div, S::U8(200), S::U8(7)), S::U8(28));
        assert_eq!(
            binop(BinOp::Div, S::I32(1), S::I32(0)),
            Err(OpError::DivByZero)
        );
        assert_eq!(
            binop(BinOp::Rem, S::U8(1), S::U8(0)),
            Err(OpError::DivByZero)
        );
    }

    #[test]
    fn integer_arithmetic_wraps() {
        assert_eq!(b(BinOp::Add, S::I32(i32::MAX), S::I32(1)), S::I32(i32::MIN));
        assert_eq!(b(BinOp::Mul, S::U8(16), S::U8(17)), S::U8(16));
        assert_eq!(unop(UnOp::Neg, S::I8(i8::MIN)), Ok(S::I8(i8::MIN)));
        assert_eq!(b(BinOp::Pow, S::I32(3), S::I32(4)), S::I32(81));
        assert_eq!(b(BinOp::Pow, S::I32(2), S::I32(-1)), S::I32(0));
        assert_eq!(b(BinOp::Pow, S::I32(-1), S::I32(-3)), S::I32(-1));
        assert_eq!(b(BinOp::Pow, S::I64(2), S::I64(64)), S::I64(0));
    }

    #[test]
    fn shifts_saturate() {
        assert_eq!(b(BinOp::Shl, S::I32(1), S::I32(31)), S::I32(i32::MIN));
        assert_eq!(b(BinOp::Shl, S::I32(1), S::I32(32)), S::I32(0));
        assert_eq!(b(BinOp::Shr, S::I32(-8), S::I32(1)), S::I32(-4));
        assert_eq!(b(BinOp::Shr, S::I32(-8), S::I32(40)), S::I32(-1));
        assert_eq!(b(BinOp::Shr, S::U8(128), S::U8(7)), S::U8(1));
        assert_eq!(b(BinOp::Shl, S::I64(1), S::I64(-1)), S::I64(0));
    }

    #[test]
    fn floats_are_ieee() {
        assert!(matches!(b(BinOp::Add, S::F32(f32::NAN), S::F32(1.0)), S::F32(x) if x.is_nan()));
        assert_eq!(
            b(BinOp::Eq, S::F64(f64::NAN), S::F64(f64::NAN)),
            S::Bool(false)
        );
        assert_eq!(b(BinOp::Mod, S::F64(-7.0), S::F64(2.0)), S::F64(1.0));
        assert_eq!(b(BinOp::Rem, S::F64(-7.0), S::F64(2.0)), S::F64(-1.0));
        assert_eq!(
            b(BinOp::Div, S::F32(1.0), S::F32(0.0)),
            S::F32(f32::INFINITY)
        );
        assert_eq!(
            math2(MathFn::Min, S::F32(f32::NAN), S::F32(2.0)),
            Ok(S::F32(2.0))
        );
        assert_eq!(
            math2(MathFn::Max, S::F64(1.0), S::F64(f64::NAN)),
            Ok(S::F64(1.0))
        );
        assert_eq!(math2(MathFn::Min, S::I32(3), S::I32(-2)), Ok(S::I32(-2)));
        assert_eq!(math1(MathFn::Round, S::F32(2.5)), Ok(S::F32(2.0)));
        assert_eq!(math1(MathFn::Sgn, S::F64(-0.0)), Ok(S::F64(-0.0)));
        assert_eq!(math1(MathFn::Sgn, S::I32(-5)), Ok(S::I32(-1)));
        assert_eq!(math1(MathFn::Abs, S::I8(i8::MIN)), Ok(S::I8(i8::MIN)));
        assert_eq!(math1(MathFn::IsNan, S::F32(f32::NAN)), Ok(S::Bool(true)));
    }

    #[test]
    fn f32_math_is_in_f32() {
        let x = 0.1f32;
        assert_eq!(math1(MathFn::Exp, S::F32(x)), Ok(S::F32(x.exp())));
        assert_eq!(math1(MathFn::Sqrt, S::F32(2.0)), Ok(S::F32(2f32.sqrt())));
    }

    #[test]
    fn conversions() {
        assert_eq!(convert(S::F32(f32::NAN), PrimType::I64), S::I64(0));
        assert_eq!(convert(S::F64(-2.7), PrimType::I32), S::I32(-2));
        assert_eq!(convert(S::F64(1e300), PrimType::I32), S::I32(i32::MAX));
        assert_eq!(convert(S::I64(300), PrimType::U8), S::U8(44));
        assert_eq!(convert(S::I64(-1), PrimType::U8), S::U8(255));
        assert_eq!(convert(S::Bool(true), PrimType::F32), S::F32(1.0));
        assert_eq!(convert(S::I32(0), PrimType::Bool), S::Bool(false));
        assert_eq!(
            convert(S::I64(16_777_217), PrimType::F32),
            S::F32(16_777_216.0)
        );
        // Direct rounding, not through f64: 2^53 + 1 would round twice.
        let big = (1i64 << 60) + (1 << 36) + 1;
        assert_eq!(convert(S::I64(big), PrimType::F32), S::F32(big as f32));
    }

    #[test]
    fn literals_and_constants() {
        assert_eq!(literal(LitValue::Int(255), PrimType::I8), Some(S::I8(-1)));
        assert_eq!(literal(LitValue::Int(3), PrimType::F32), Some(S::F32(3.0)));
        assert_eq!(
            literal(LitValue::Float(0.1), PrimType::F32),
            Some(S::F32(0.1))
        );
        assert_eq!(literal(LitValue::Float(0.1), PrimType::I32), None);
        assert_eq!(
            constant(ConstFn::Highest, PrimType::F32),
            Some(S::F32(f32::INFINITY))
        );
        assert_eq!(
            constant(ConstFn::Lowest, PrimType::I64),
            Some(S::I64(i64::MIN))
        );
        assert_eq!(constant(ConstFn::Pi, PrimType::I64), None);
    }
}
