//! Scalar semantics on the runtime's [`Scalar`] values: the IR's one definition
//! ([`ogham_ir::scalar`], which constant folding also uses), for the interpreters
//! and the CPU backend's run-time helpers. Nothing here computes; values convert to and from
//! the IR's `Const`.

use crate::value::Scalar;
use ogham_ir::math::{ConstFn, MathFn};
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::scalar;
use ogham_ir::types::PrimType;

pub use scalar::OpError;

/// `a op b` for two scalars of the same type.
pub fn binop(op: BinOp, a: Scalar, b: Scalar) -> Result<Scalar, OpError> {
    scalar::binop(op, a.into(), b.into()).map(Scalar::from)
}

pub fn unop(op: UnOp, a: Scalar) -> Result<Scalar, OpError> {
    scalar::unop(op, a.into()).map(Scalar::from)
}

/// A math function applied to its arguments (one or two, by its arity).
pub fn math(op: MathFn, args: &[Scalar]) -> Result<Scalar, OpError> {
    match *args {
        [a] => scalar::math1(op, a.into()),
        [a, b] => scalar::math2(op, a.into(), b.into()),
        _ => Err(OpError::IllTyped),
    }
    .map(Scalar::from)
}

pub fn convert(a: Scalar, to: PrimType) -> Scalar {
    scalar::convert(a.into(), to).into()
}

/// A constant of a numeric module (`f32.pi`); `None` where the built-in table has none.
pub fn constant(op: ConstFn, ty: PrimType) -> Option<Scalar> {
    scalar::constant(op, ty).map(Scalar::from)
}

/// Equality as `==` computes it (NaN is not equal to itself).
pub fn eq(a: Scalar, b: Scalar) -> bool {
    scalar::scalar_eq(a.into(), b.into())
}
