//! Constant folding agrees with the interpreter's scalar semantics (the cases of
//! `ogham-runtime`'s `interp::ops` tests), and never folds what fails at run time.

use ogham_compiler::builtins::MathFn;
use ogham_compiler::ir::Const as C;
use ogham_compiler::opt::simplify::fold::{binop, convert, math, unop};
use ogham_compiler::syntax::ast::{BinOp, UnOp};
use ogham_compiler::types::PrimType;

fn b(op: BinOp, x: C, y: C) -> C {
    binop(op, x, y).expect("folds")
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
    assert_eq!(binop(BinOp::Div, C::I32(1), C::I32(0)), None);
    assert_eq!(binop(BinOp::Rem, C::U8(1), C::U8(0)), None);
}

#[test]
fn integer_arithmetic_wraps_and_shifts_saturate() {
    assert_eq!(b(BinOp::Add, C::I32(i32::MAX), C::I32(1)), C::I32(i32::MIN));
    assert_eq!(b(BinOp::Mul, C::U8(16), C::U8(17)), C::U8(16));
    assert_eq!(unop(UnOp::Neg, C::I8(i8::MIN)), Some(C::I8(i8::MIN)));
    assert_eq!(b(BinOp::Pow, C::I32(3), C::I32(4)), C::I32(81));
    assert_eq!(b(BinOp::Pow, C::I32(2), C::I32(-1)), C::I32(0));
    assert_eq!(b(BinOp::Pow, C::I32(-1), C::I32(-3)), C::I32(-1));
    assert_eq!(b(BinOp::Pow, C::I64(2), C::I64(64)), C::I64(0));
    assert_eq!(b(BinOp::Shl, C::I32(1), C::I32(31)), C::I32(i32::MIN));
    assert_eq!(b(BinOp::Shl, C::I32(1), C::I32(32)), C::I32(0));
    assert_eq!(b(BinOp::Shr, C::I32(-8), C::I32(40)), C::I32(-1));
    assert_eq!(b(BinOp::Shr, C::U8(128), C::U8(7)), C::U8(1));
    assert_eq!(b(BinOp::Shl, C::I64(1), C::I64(-1)), C::I64(0));
}

#[test]
fn floats_are_ieee_in_their_own_precision() {
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
        math(MathFn::Min, &[C::F32(f32::NAN), C::F32(2.0)]),
        Some(C::F32(2.0))
    );
    assert_eq!(
        math(MathFn::Max, &[C::F64(1.0), C::F64(f64::NAN)]),
        Some(C::F64(1.0))
    );
    assert_eq!(
        math(MathFn::Min, &[C::I32(3), C::I32(-2)]),
        Some(C::I32(-2))
    );
    assert_eq!(math(MathFn::Round, &[C::F32(2.5)]), Some(C::F32(2.0)));
    assert_eq!(math(MathFn::Sgn, &[C::F64(-0.0)]), Some(C::F64(-0.0)));
    assert_eq!(math(MathFn::Abs, &[C::I8(i8::MIN)]), Some(C::I8(i8::MIN)));
    assert_eq!(
        math(MathFn::Exp, &[C::F32(0.1)]),
        Some(C::F32(0.1f32.exp()))
    );
    assert_eq!(
        math(MathFn::Sqrt, &[C::F32(2.0)]),
        Some(C::F32(2f32.sqrt()))
    );
    assert_eq!(math(MathFn::Sqrt, &[C::F32(2.0), C::F32(1.0)]), None);
}

#[test]
fn conversions_match_the_interpreter() {
    assert_eq!(convert(C::F32(f32::NAN), PrimType::I64), C::I64(0));
    assert_eq!(convert(C::F64(-2.7), PrimType::I32), C::I32(-2));
    assert_eq!(convert(C::F64(1e300), PrimType::I32), C::I32(i32::MAX));
    assert_eq!(convert(C::I64(300), PrimType::U8), C::U8(44));
    assert_eq!(convert(C::I64(-1), PrimType::U8), C::U8(255));
    assert_eq!(convert(C::Bool(true), PrimType::F32), C::F32(1.0));
    assert_eq!(convert(C::I32(0), PrimType::Bool), C::Bool(false));
    let big = (1i64 << 60) + (1 << 36) + 1;
    assert_eq!(convert(C::I64(big), PrimType::F32), C::F32(big as f32));
}
