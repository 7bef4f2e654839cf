//! Scalar semantics, the one definition that constant folding (`opt::simplify`) and every
//! executor of the runtime (the interpreters' operators, the CPU backend's run-time helpers)
//! share: operators ([`super::op`]), math functions, conversions and built-in constants on
//! [`Const`] values.
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
//!
//! An operation that fails ([`OpError`]) is not folded: the simplifier leaves it to run time.
//! The code generators expand the operations their instructions lack (integer division, float
//! `%`, float-to-integer conversion) from one description of their own
//! (`compiler/src/back/steps.rs`), whose tests check it against this module.

use super::Const;
use super::op::{BinOp, UnOp};
use crate::math::{ConstFn, MathFn};
use crate::types::PrimType;

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
        Const::$V(match $op {
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
            BinOp::Eq => return Ok(Const::Bool(x == y)),
            BinOp::Ne => return Ok(Const::Bool(x != y)),
            BinOp::Lt => return Ok(Const::Bool(x < y)),
            BinOp::Le => return Ok(Const::Bool(x <= y)),
            BinOp::Gt => return Ok(Const::Bool(x > y)),
            BinOp::Ge => return Ok(Const::Bool(x >= y)),
        })
    }};
}

macro_rules! float_binop {
    ($op:expr, $x:expr, $y:expr, $V:ident) => {{
        let (x, y) = ($x, $y);
        Const::$V(match $op {
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
            BinOp::Eq => return Ok(Const::Bool(x == y)),
            BinOp::Ne => return Ok(Const::Bool(x != y)),
            BinOp::Lt => return Ok(Const::Bool(x < y)),
            BinOp::Le => return Ok(Const::Bool(x <= y)),
            BinOp::Gt => return Ok(Const::Bool(x > y)),
            BinOp::Ge => return Ok(Const::Bool(x >= y)),
            _ => return Err(OpError::IllTyped),
        })
    }};
}

/// `a op b` for two scalars of the same type.
pub fn binop(op: BinOp, a: Const, b: Const) -> Result<Const, OpError> {
    use Const as C;
    Ok(match (a, b) {
        (C::I8(x), C::I8(y)) => int_binop!(op, x, y, I8, i8),
        (C::I16(x), C::I16(y)) => int_binop!(op, x, y, I16, i16),
        (C::I32(x), C::I32(y)) => int_binop!(op, x, y, I32, i32),
        (C::I64(x), C::I64(y)) => int_binop!(op, x, y, I64, i64),
        (C::U8(x), C::U8(y)) => int_binop!(op, x, y, U8, u8),
        (C::F32(x), C::F32(y)) => float_binop!(op, x, y, F32),
        (C::F64(x), C::F64(y)) => float_binop!(op, x, y, F64),
        (C::Bool(x), C::Bool(y)) => C::Bool(match op {
            BinOp::Eq => x == y,
            BinOp::Ne => x != y,
            BinOp::Lt => !x & y,
            BinOp::Le => x <= y,
            BinOp::Gt => x & !y,
            BinOp::Ge => x >= y,
            BinOp::BitAnd => x && y,
            BinOp::BitOr => x || y,
            BinOp::BitXor => x ^ y,
            _ => return Err(OpError::IllTyped),
        }),
        _ => return Err(OpError::IllTyped),
    })
}

/// Equality as `==` computes it (NaN is not equal to itself).
pub fn scalar_eq(a: Const, b: Const) -> bool {
    binop(BinOp::Eq, a, b) == Ok(Const::Bool(true))
}

pub fn unop(op: UnOp, a: Const) -> Result<Const, OpError> {
    use Const as C;
    Ok(match (op, a) {
        (UnOp::Neg, C::I8(x)) => C::I8(x.wrapping_neg()),
        (UnOp::Neg, C::I16(x)) => C::I16(x.wrapping_neg()),
        (UnOp::Neg, C::I32(x)) => C::I32(x.wrapping_neg()),
        (UnOp::Neg, C::I64(x)) => C::I64(x.wrapping_neg()),
        (UnOp::Neg, C::U8(x)) => C::U8(x.wrapping_neg()),
        (UnOp::Neg, C::F32(x)) => C::F32(-x),
        (UnOp::Neg, C::F64(x)) => C::F64(-x),
        (UnOp::Not, C::Bool(x)) => C::Bool(!x),
        (UnOp::Not, C::I8(x)) => C::I8(!x),
        (UnOp::Not, C::I16(x)) => C::I16(!x),
        (UnOp::Not, C::I32(x)) => C::I32(!x),
        (UnOp::Not, C::I64(x)) => C::I64(!x),
        (UnOp::Not, C::U8(x)) => C::U8(!x),
        _ => return Err(OpError::IllTyped),
    })
}

macro_rules! float_math1 {
    ($op:expr, $x:expr, $V:ident) => {{
        let x = $x;
        Const::$V(match $op {
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
            MathFn::IsNan => return Ok(Const::Bool(x.is_nan())),
            MathFn::IsInf => return Ok(Const::Bool(x.is_infinite())),
            MathFn::Atan2 | MathFn::Min | MathFn::Max | MathFn::Pow => {
                return Err(OpError::IllTyped);
            }
        })
    }};
}

macro_rules! signed_math1 {
    ($op:expr, $x:expr, $V:ident) => {{
        let x = $x;
        Const::$V(match $op {
            MathFn::Abs => x.wrapping_abs(),
            MathFn::Sgn => x.signum(),
            _ => return Err(OpError::IllTyped),
        })
    }};
}

/// A math function applied to its arguments (one or two, by its arity).
pub fn math(op: MathFn, args: &[Const]) -> Result<Const, OpError> {
    match *args {
        [a] => math1(op, a),
        [a, b] => math2(op, a, b),
        _ => Err(OpError::IllTyped),
    }
}

/// A one-argument math function.
pub fn math1(op: MathFn, a: Const) -> Result<Const, OpError> {
    use Const as C;
    Ok(match a {
        C::F32(x) => float_math1!(op, x, F32),
        C::F64(x) => float_math1!(op, x, F64),
        C::I8(x) => signed_math1!(op, x, I8),
        C::I16(x) => signed_math1!(op, x, I16),
        C::I32(x) => signed_math1!(op, x, I32),
        C::I64(x) => signed_math1!(op, x, I64),
        C::U8(x) => C::U8(match op {
            MathFn::Abs => x,
            MathFn::Sgn => u8::from(x != 0),
            _ => return Err(OpError::IllTyped),
        }),
        C::Bool(_) => return Err(OpError::IllTyped),
    })
}

/// A two-argument math function (`atan2 y x`, `min`, `max`, `pow`).
pub fn math2(op: MathFn, a: Const, b: Const) -> Result<Const, OpError> {
    use Const as C;
    match (op, a, b) {
        (MathFn::Atan2, C::F32(y), C::F32(x)) => Ok(C::F32(y.atan2(x))),
        (MathFn::Atan2, C::F64(y), C::F64(x)) => Ok(C::F64(y.atan2(x))),
        (MathFn::Min, C::F32(x), C::F32(y)) => Ok(C::F32(x.min(y))),
        (MathFn::Min, C::F64(x), C::F64(y)) => Ok(C::F64(x.min(y))),
        (MathFn::Max, C::F32(x), C::F32(y)) => Ok(C::F32(x.max(y))),
        (MathFn::Max, C::F64(x), C::F64(y)) => Ok(C::F64(x.max(y))),
        (MathFn::Min, x, y) => {
            binop(BinOp::Le, x, y).map(|le| if le == C::Bool(true) { x } else { y })
        }
        (MathFn::Max, x, y) => {
            binop(BinOp::Ge, x, y).map(|ge| if ge == C::Bool(true) { x } else { y })
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
            PrimType::Bool => Const::Bool(x != zero_like(x)),
            PrimType::I8 => Const::I8(x as i8),
            PrimType::I16 => Const::I16(x as i16),
            PrimType::I32 => Const::I32(x as i32),
            PrimType::I64 => Const::I64(x as i64),
            PrimType::U8 => Const::U8(x as u8),
            PrimType::F32 => Const::F32(x as f32),
            PrimType::F64 => Const::F64(x as f64),
        }
    }};
}

/// Converts a scalar to type `to` (see the module documentation).
pub fn convert(a: Const, to: PrimType) -> Const {
    use Const as C;
    match a {
        C::Bool(x) => convert_num!(u8::from(x), to),
        C::I8(x) => convert_num!(x, to),
        C::I16(x) => convert_num!(x, to),
        C::I32(x) => convert_num!(x, to),
        C::I64(x) => convert_num!(x, to),
        C::U8(x) => convert_num!(x, to),
        C::F32(x) => convert_num!(x, to),
        C::F64(x) => convert_num!(x, to),
    }
}

/// The value of integer literal `x` at (inferred or suffixed) type `to`: it wraps into narrow
/// integer types (`255i8 == -1i8`) and rounds once to a float type.
pub fn integer_literal(x: u64, to: PrimType) -> Const {
    convert_num!(x, to)
}

/// A constant of a numeric module (`f32.pi`, `i64.highest`; `highest` of a float type is
/// infinity). `None` for combinations the built-in table does not define.
pub fn constant(op: ConstFn, ty: PrimType) -> Option<Const> {
    use Const as C;
    let float = |x: f64| match ty {
        PrimType::F32 => Some(C::F32(x as f32)),
        PrimType::F64 => Some(C::F64(x)),
        _ => None,
    };
    match op {
        ConstFn::Nan => float(f64::NAN),
        ConstFn::Inf => float(f64::INFINITY),
        ConstFn::Pi => float(std::f64::consts::PI),
        ConstFn::E => float(std::f64::consts::E),
        ConstFn::Highest => Some(match ty {
            PrimType::I8 => C::I8(i8::MAX),
            PrimType::I16 => C::I16(i16::MAX),
            PrimType::I32 => C::I32(i32::MAX),
            PrimType::I64 => C::I64(i64::MAX),
            PrimType::U8 => C::U8(u8::MAX),
            PrimType::Bool => return None,
            PrimType::F32 | PrimType::F64 => return float(f64::INFINITY),
        }),
        ConstFn::Lowest => Some(match ty {
            PrimType::I8 => C::I8(i8::MIN),
            PrimType::I16 => C::I16(i16::MIN),
            PrimType::I32 => C::I32(i32::MIN),
            PrimType::I64 => C::I64(i64::MIN),
            PrimType::U8 => C::U8(u8::MIN),
            PrimType::Bool => return None,
            PrimType::F32 | PrimType::F64 => return float(f64::NEG_INFINITY),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Const as C;

    fn b(op: BinOp, x: Const, y: Const) -> Const {
        binop(op, x, y).unwrap()
    }

    #[test]
    fn integer_division_floors_and_truncates() {
        assert_eq!(b(BinOp::Div, C::I32(-7), C::I32(2)), C::I32(-4));
        assert_eq!(b(BinOp::Mod, C::I32(-7), C::I32(2)), C::I32(1));
        assert_eq!(b(BinOp::Mod, C::I32(7), C::I32(-2)), C::I32(-1));
        assert_eq!(b(BinOp::Quot, C::I32(-7), C::I32(2)), C::I32(-3));
        assert_eq!(b(BinOp::Rem, C::I32(-7), C::I32(2)), C::I32(-1));
        assert_eq!(
            b(BinOp::Div, C::I64(i64::MIN), C::I64(-1)),
            C::I64(i64::MIN)
        );
        assert_eq!(b(BinOp::Mod, C::I64(i64::MIN), C::I64(-1)), C::I64(0));
        assert_eq!(b(BinOp::Div, C::U8(200), C::U8(7)), C::U8(28));
        assert_eq!(
            binop(BinOp::Div, C::I32(1), C::I32(0)),
            Err(OpError::DivByZero)
        );
        assert_eq!(
            binop(BinOp::Rem, C::U8(1), C::U8(0)),
            Err(OpError::DivByZero)
        );
    }

    #[test]
    fn integer_arithmetic_wraps() {
        assert_eq!(b(BinOp::Add, C::I32(i32::MAX), C::I32(1)), C::I32(i32::MIN));
        assert_eq!(b(BinOp::Mul, C::U8(16), C::U8(17)), C::U8(16));
        assert_eq!(unop(UnOp::Neg, C::I8(i8::MIN)), Ok(C::I8(i8::MIN)));
        assert_eq!(b(BinOp::Pow, C::I32(3), C::I32(4)), C::I32(81));
        assert_eq!(b(BinOp::Pow, C::I32(2), C::I32(-1)), C::I32(0));
        assert_eq!(b(BinOp::Pow, C::I32(-1), C::I32(-3)), C::I32(-1));
        assert_eq!(b(BinOp::Pow, C::I64(2), C::I64(64)), C::I64(0));
    }

    #[test]
    fn shifts_saturate() {
        assert_eq!(b(BinOp::Shl, C::I32(1), C::I32(31)), C::I32(i32::MIN));
        assert_eq!(b(BinOp::Shl, C::I32(1), C::I32(32)), C::I32(0));
        assert_eq!(b(BinOp::Shr, C::I32(-8), C::I32(1)), C::I32(-4));
        assert_eq!(b(BinOp::Shr, C::I32(-8), C::I32(40)), C::I32(-1));
        assert_eq!(b(BinOp::Shr, C::U8(128), C::U8(7)), C::U8(1));
        assert_eq!(b(BinOp::Shl, C::I64(1), C::I64(-1)), C::I64(0));
    }

    #[test]
    fn floats_are_ieee() {
        assert!(matches!(b(BinOp::Add, C::F32(f32::NAN), C::F32(1.0)), C::F32(x) if x.is_nan()));
        assert_eq!(
            b(BinOp::Eq, C::F64(f64::NAN), C::F64(f64::NAN)),
            C::Bool(false)
        );
        assert_eq!(b(BinOp::Mod, C::F64(-7.0), C::F64(2.0)), C::F64(1.0));
        assert_eq!(b(BinOp::Rem, C::F64(-7.0), C::F64(2.0)), C::F64(-1.0));
        assert_eq!(
            b(BinOp::Div, C::F32(1.0), C::F32(0.0)),
            C::F32(f32::INFINITY)
        );
        assert_eq!(
            math2(MathFn::Min, C::F32(f32::NAN), C::F32(2.0)),
            Ok(C::F32(2.0))
        );
        assert_eq!(
            math2(MathFn::Max, C::F64(1.0), C::F64(f64::NAN)),
            Ok(C::F64(1.0))
        );
        assert_eq!(math2(MathFn::Min, C::I32(3), C::I32(-2)), Ok(C::I32(-2)));
        assert_eq!(math1(MathFn::Round, C::F32(2.5)), Ok(C::F32(2.0)));
        assert_eq!(math1(MathFn::Sgn, C::F64(-0.0)), Ok(C::F64(-0.0)));
        assert_eq!(math1(MathFn::Sgn, C::I32(-5)), Ok(C::I32(-1)));
        assert_eq!(math1(MathFn::Abs, C::I8(i8::MIN)), Ok(C::I8(i8::MIN)));
        assert_eq!(math1(MathFn::IsNan, C::F32(f32::NAN)), Ok(C::Bool(true)));
    }

    #[test]
    fn f32_math_is_in_f32() {
        let x = 0.1f32;
        assert_eq!(math1(MathFn::Exp, C::F32(x)), Ok(C::F32(x.exp())));
        assert_eq!(math1(MathFn::Sqrt, C::F32(2.0)), Ok(C::F32(2f32.sqrt())));
    }

    #[test]
    fn arity_and_types_are_checked() {
        assert_eq!(math(MathFn::Min, &[C::I32(3), C::I32(-2)]), Ok(C::I32(-2)));
        assert_eq!(
            math(MathFn::Sqrt, &[C::F32(2.0), C::F32(1.0)]),
            Err(OpError::IllTyped)
        );
        assert_eq!(math(MathFn::Atan2, &[C::F32(1.0)]), Err(OpError::IllTyped));
        assert_eq!(
            binop(BinOp::Add, C::I32(1), C::I64(1)),
            Err(OpError::IllTyped)
        );
        assert_eq!(
            binop(BinOp::Shl, C::F32(1.0), C::F32(1.0)),
            Err(OpError::IllTyped)
        );
        assert_eq!(unop(UnOp::Neg, C::Bool(true)), Err(OpError::IllTyped));
        assert!(scalar_eq(C::F32(0.0), C::F32(-0.0)));
        assert!(!scalar_eq(C::F64(f64::NAN), C::F64(f64::NAN)));
    }

    #[test]
    fn conversions() {
        assert_eq!(convert(C::F32(f32::NAN), PrimType::I64), C::I64(0));
        assert_eq!(convert(C::F64(-2.7), PrimType::I32), C::I32(-2));
        assert_eq!(convert(C::F64(1e300), PrimType::I32), C::I32(i32::MAX));
        assert_eq!(convert(C::I64(300), PrimType::U8), C::U8(44));
        assert_eq!(convert(C::I64(-1), PrimType::U8), C::U8(255));
        assert_eq!(convert(C::Bool(true), PrimType::F32), C::F32(1.0));
        assert_eq!(convert(C::I32(0), PrimType::Bool), C::Bool(false));
        assert_eq!(
            convert(C::I64(16_777_217), PrimType::F32),
            C::F32(16_777_216.0)
        );
        // Direct rounding, not through f64: 2^53 + 1 would round twice.
        let big = (1i64 << 60) + (1 << 36) + 1;
        assert_eq!(convert(C::I64(big), PrimType::F32), C::F32(big as f32));
    }

    #[test]
    fn literals_and_constants() {
        assert_eq!(integer_literal(255, PrimType::I8), C::I8(-1));
        assert_eq!(integer_literal(3, PrimType::F32), C::F32(3.0));
        // One rounding: through f64, 2^60 + 2^36 + 1 would round twice.
        let big = (1u64 << 60) + (1 << 36) + 1;
        assert_eq!(integer_literal(big, PrimType::F32), C::F32(big as f32));
        assert_eq!(
            constant(ConstFn::Highest, PrimType::F32),
            Some(C::F32(f32::INFINITY))
        );
        assert_eq!(
            constant(ConstFn::Lowest, PrimType::I64),
            Some(C::I64(i64::MIN))
        );
        assert_eq!(constant(ConstFn::Pi, PrimType::I64), None);
    }
}
