//! Constant folding of scalar operations, with exactly the interpreter's semantics
//! (`ogham-runtime`'s `interp::ops`): wrapping integer arithmetic, floored `/` and `%`,
//! truncating `//` and `%%`, saturating shifts, IEEE floats in their own precision (f32
//! operations use f32 methods), `min`/`max` ignoring a NaN operand, round half to even, and the
//! interpreter's conversions. An operation that fails at run time (integer division by zero) or
//! that is ill-typed does not fold: `None` leaves it to the evaluator.

use crate::builtins::MathFn;
use crate::ir::Const;
use crate::syntax::ast::{BinOp, UnOp};
use crate::types::PrimType;

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
            BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem if y == zero => return None,
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
            BinOp::Eq => return Some(Const::Bool(x == y)),
            BinOp::Ne => return Some(Const::Bool(x != y)),
            BinOp::Lt => return Some(Const::Bool(x < y)),
            BinOp::Le => return Some(Const::Bool(x <= y)),
            BinOp::Gt => return Some(Const::Bool(x > y)),
            BinOp::Ge => return Some(Const::Bool(x >= y)),
            BinOp::And | BinOp::Or | BinOp::PipeLeft | BinOp::PipeRight => return None,
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
            BinOp::Eq => return Some(Const::Bool(x == y)),
            BinOp::Ne => return Some(Const::Bool(x != y)),
            BinOp::Lt => return Some(Const::Bool(x < y)),
            BinOp::Le => return Some(Const::Bool(x <= y)),
            BinOp::Gt => return Some(Const::Bool(x > y)),
            BinOp::Ge => return Some(Const::Bool(x >= y)),
            _ => return None,
        })
    }};
}

/// `a op b`, unless it fails or is ill-typed.
pub fn binop(op: BinOp, a: Const, b: Const) -> Option<Const> {
    use Const as C;
    Some(match (a, b) {
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
            _ => return None,
        }),
        _ => return None,
    })
}

pub fn unop(op: UnOp, a: Const) -> Option<Const> {
    use Const as C;
    Some(match (op, a) {
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
        _ => return None,
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
            MathFn::IsNan => return Some(Const::Bool(x.is_nan())),
            MathFn::IsInf => return Some(Const::Bool(x.is_infinite())),
            MathFn::Atan2 | MathFn::Min | MathFn::Max | MathFn::Pow => return None,
        })
    }};
}

macro_rules! signed_math1 {
    ($op:expr, $x:expr, $V:ident) => {{
        let x = $x;
        Const::$V(match $op {
            MathFn::Abs => x.wrapping_abs(),
            MathFn::Sgn => x.signum(),
            _ => return None,
        })
    }};
}

/// A math function applied to constants (one or two, by its arity).
pub fn math(op: MathFn, args: &[Const]) -> Option<Const> {
    use Const as C;
    match *args {
        [a] => Some(match a {
            C::F32(x) => float_math1!(op, x, F32),
            C::F64(x) => float_math1!(op, x, F64),
            C::I8(x) => signed_math1!(op, x, I8),
            C::I16(x) => signed_math1!(op, x, I16),
            C::I32(x) => signed_math1!(op, x, I32),
            C::I64(x) => signed_math1!(op, x, I64),
            C::U8(x) => C::U8(match op {
                MathFn::Abs => x,
                MathFn::Sgn => u8::from(x != 0),
                _ => return None,
            }),
            C::Bool(_) => return None,
        }),
        [a, b] => match (op, a, b) {
            (MathFn::Atan2, C::F32(y), C::F32(x)) => Some(C::F32(y.atan2(x))),
            (MathFn::Atan2, C::F64(y), C::F64(x)) => Some(C::F64(y.atan2(x))),
            (MathFn::Min, C::F32(x), C::F32(y)) => Some(C::F32(x.min(y))),
            (MathFn::Min, C::F64(x), C::F64(y)) => Some(C::F64(x.min(y))),
            (MathFn::Max, C::F32(x), C::F32(y)) => Some(C::F32(x.max(y))),
            (MathFn::Max, C::F64(x), C::F64(y)) => Some(C::F64(x.max(y))),
            (MathFn::Min, x, y) => {
                binop(BinOp::Le, x, y).map(|le| if le == C::Bool(true) { x } else { y })
            }
            (MathFn::Max, x, y) => {
                binop(BinOp::Ge, x, y).map(|ge| if ge == C::Bool(true) { x } else { y })
            }
            (MathFn::Pow, x, y) if x.prim_type() != PrimType::Bool => binop(BinOp::Pow, x, y),
            _ => None,
        },
        _ => None,
    }
}

macro_rules! convert_num {
    ($x:expr, $to:expr) => {{
        let x = $x;
        match $to {
            PrimType::Bool => Const::Bool(x != Default::default()),
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

/// Converts a constant to type `to` (integers wrap, floats truncate and saturate, NaN gives 0).
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
