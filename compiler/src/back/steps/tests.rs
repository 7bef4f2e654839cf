//! The descriptions run on constants, each step by the reference's own primitive operation
//! (truncating division, wrapping addition, IEEE comparison, ...), against the reference's
//! composite operations: exhaustively on the 8-bit types, on edge values elsewhere.

use super::*;
use ogham_ir::Const;
use ogham_ir::math::MathFn;
use ogham_ir::op::UnOp;
use ogham_ir::scalar::{binop, convert, integer_literal, math1, scalar_eq, unop};

/// Runs steps on constants; counts the inline float remainders.
#[derive(Default)]
struct Eval {
    inline: usize,
}

fn b(op: BinOp, x: Const, y: Const) -> Const {
    binop(op, x, y).expect("a step on operands of its type")
}

fn lit(t: PrimType, n: i64) -> Const {
    integer_literal(n as u64, t)
}

impl Target for Eval {
    type V = Const;
}

impl Logic for Eval {
    fn select(&mut self, c: Const, a: Const, b: Const) -> Const {
        if c == Const::Bool(true) { a } else { b }
    }
    fn and(&mut self, a: Const, y: Const) -> Const {
        b(BinOp::BitAnd, a, y)
    }
    fn xor(&mut self, a: Const, y: Const) -> Const {
        b(BinOp::BitXor, a, y)
    }
}

impl Bits for Eval {
    fn shr_imm(&mut self, t: PrimType, x: Const, k: u32) -> Const {
        b(BinOp::Shr, x, lit(t, k.into()))
    }
    fn and_imm(&mut self, t: PrimType, x: Const, m: i64) -> Const {
        b(BinOp::BitAnd, x, lit(t, m))
    }
}

impl IntSteps for Eval {
    fn int_const(&mut self, t: PrimType, n: i64) -> Const {
        lit(t, n)
    }
    fn cmp_imm(&mut self, t: PrimType, op: BinOp, x: Const, n: i64) -> Const {
        assert!(op.is_comparison());
        b(op, x, lit(t, n))
    }
    fn quot(&mut self, t: PrimType, x: Const, y: Const) -> Const {
        let lowest = ogham_ir::scalar::constant(ogham_ir::math::ConstFn::Lowest, t);
        assert!(
            !(t.is_signed_int() && Some(x) == lowest && y == lit(t, -1)),
            "lowest / -1 traps"
        );
        b(BinOp::Quot, x, y)
    }
    fn rem(&mut self, t: PrimType, x: Const, y: Const) -> Const {
        self.quot(t, x, y);
        b(BinOp::Rem, x, y)
    }
    fn add(&mut self, _: PrimType, x: Const, y: Const) -> Const {
        b(BinOp::Add, x, y)
    }
    fn add_imm(&mut self, t: PrimType, x: Const, n: i64) -> Const {
        b(BinOp::Add, x, lit(t, n))
    }
    fn neg(&mut self, _: PrimType, x: Const) -> Const {
        unop(UnOp::Neg, x).unwrap()
    }
}

impl FloatSteps for Eval {
    fn float_const(&mut self, t: PrimType, x: f64) -> Const {
        convert(Const::F64(x), t)
    }
    fn fcmp(&mut self, op: BinOp, x: Const, y: Const) -> Const {
        assert!(op.is_comparison());
        b(op, x, y)
    }
    fn fadd(&mut self, x: Const, y: Const) -> Const {
        b(BinOp::Add, x, y)
    }
}

impl Fmod for Eval {
    fn fmod(&mut self, _: PrimType, x: Const, y: Const) -> Const {
        b(BinOp::Rem, x, y)
    }
}

impl InlineFmod for Eval {
    fn trunc(&mut self, x: Const) -> Const {
        math1(MathFn::Trunc, x).unwrap()
    }
    fn fabs(&mut self, x: Const) -> Const {
        math1(MathFn::Abs, x).unwrap()
    }
    fn fdiv(&mut self, x: Const, y: Const) -> Const {
        b(BinOp::Div, x, y)
    }
    fn fmul(&mut self, x: Const, y: Const) -> Const {
        b(BinOp::Mul, x, y)
    }
    fn fsub(&mut self, x: Const, y: Const) -> Const {
        b(BinOp::Sub, x, y)
    }
    fn copysign(&mut self, x: Const, sign: Const) -> Const {
        match (x, sign) {
            (Const::F32(x), Const::F32(s)) => Const::F32(x.copysign(s)),
            (Const::F64(x), Const::F64(s)) => Const::F64(x.copysign(s)),
            _ => panic!("copysign of {x:?} and {sign:?}"),
        }
    }
    fn or_reference(
        &mut self,
        _: PrimType,
        c: Const,
        inline: impl FnOnce(&mut Self) -> Const,
        (op, x, y): (BinOp, Const, Const),
    ) -> Const {
        if c == Const::Bool(true) {
            self.inline += 1;
            inline(self)
        } else {
            b(op, x, y)
        }
    }
}

impl FloatToInt for Eval {
    fn to_float(&mut self, to: PrimType, x: Const) -> Const {
        convert(x, to)
    }
    fn truncate(&mut self, to: PrimType, x: Const) -> Const {
        let t = math1(MathFn::Trunc, x).unwrap();
        let back = convert(convert(t, to), x.prim_type());
        assert!(scalar_eq(back, t), "{x:?} is outside {to}'s bounds");
        convert(x, to)
    }
}

/// Equal as bits (NaN equals NaN of the same pattern).
fn same(a: Const, b: Const) -> bool {
    a.prim_type() == b.prim_type() && a.bits() == b.bits()
}

const DIVISIONS: [BinOp; 4] = [BinOp::Div, BinOp::Mod, BinOp::Quot, BinOp::Rem];

/// Every value of an 8-bit type, or edge values (the bounds and their neighbours, small values,
/// powers of two and their neighbours) of a wider one.
fn values(t: PrimType) -> Vec<Const> {
    let (lo, hi): (i64, i64) = match t {
        PrimType::I8 => return (-128..=127).map(|n| lit(t, n)).collect(),
        PrimType::U8 => return (0..=255).map(|n| lit(t, n)).collect(),
        PrimType::I16 => (i16::MIN.into(), i16::MAX.into()),
        PrimType::I32 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    };
    let mut ns = vec![lo, lo + 1, lo + 2, hi - 1, hi, 1000, -1000, 12345, -12345];
    ns.extend(-9..=9);
    for k in 1..63 {
        for d in [-1, 0, 1] {
            ns.push((1i64 << k) + d);
            ns.push(-(1i64 << k) + d);
        }
    }
    ns.into_iter()
        .filter(|n| (lo..=hi).contains(n))
        .map(|n| lit(t, n))
        .collect()
}

const INTS: [PrimType; 5] = [
    PrimType::I8,
    PrimType::I16,
    PrimType::I32,
    PrimType::I64,
    PrimType::U8,
];

#[test]
fn integer_division_is_the_reference() {
    for t in INTS {
        let vals = values(t);
        for &x in &vals {
            for &y in vals.iter().filter(|y| y.bits() != 0) {
                for op in DIVISIONS {
                    let got = int_division(&mut Eval::default(), op, t, x, y);
                    assert_eq!(got, b(op, x, y), "{x:?} {} {y:?}", op.symbol());
                }
            }
        }
    }
}

#[test]
fn powers_of_two_are_the_reference() {
    for t in INTS {
        let bits = 8 * t.byte_size() as u32;
        let top = if t.is_signed_int() {
            bits - 2
        } else {
            bits - 1
        };
        for k in 1..=top {
            let n = lit(t, 1i64 << k);
            for x in values(t) {
                for op in [BinOp::Div, BinOp::Mod] {
                    let got = by_power_of_two(&mut Eval::default(), op, t, x, 1i128 << k);
                    assert_eq!(got, Some(b(op, x, n)), "{x:?} {} {n:?}", op.symbol());
                }
            }
        }
    }
    for (op, n) in [
        (BinOp::Div, 1),
        (BinOp::Div, 0),
        (BinOp::Mod, 6),
        (BinOp::Div, -4),
        (BinOp::Mod, i128::from(i64::MIN)),
        (BinOp::Quot, 4),
        (BinOp::Rem, 4),
    ] {
        assert_eq!(power_of_two(op, n), None, "{} {n}", op.symbol());
    }
    assert_eq!(power_of_two(BinOp::Mod, 128), Some(7));
}

/// Float operands: zeros, integers (small, at and past the exact limits), fractions, huge
/// values, infinities and NaN, of both signs.
fn floats(t: PrimType) -> Vec<Const> {
    let mut xs = vec![
        0.0,
        1.0,
        2.0,
        3.0,
        7.0,
        10.0,
        0.1,
        2.5,
        0.75,
        1e-300,
        1e10,
        1e300,
        16_777_215.0,
        16_777_216.0,
        16_777_218.0,
        9_007_199_254_740_991.0,
        9_007_199_254_740_992.0,
        2147483647.0,
        2147483648.0,
        127.5,
        128.0,
        255.9,
        256.0,
        9.3e18,
        f64::INFINITY,
        f64::NAN,
    ];
    xs.extend(xs.clone().into_iter().map(|x| -x));
    xs.into_iter().map(|x| convert(Const::F64(x), t)).collect()
}

#[test]
fn float_remainders_are_the_reference() {
    for t in [PrimType::F32, PrimType::F64] {
        let mut e = Eval::default();
        for x in floats(t) {
            for y in floats(t) {
                let want = b(BinOp::Mod, x, y);
                let got = float_mod(&mut e, t, x, y);
                assert!(same(got, want), "{x:?} % {y:?}: {got:?}, not {want:?}");
                for op in [BinOp::Mod, BinOp::Rem] {
                    let want = b(op, x, y);
                    let got = float_remainder_inline(&mut e, op, t, x, y);
                    assert!(same(got, want), "{x:?} {op:?} {y:?}: {got:?}, not {want:?}");
                }
            }
        }
        assert!(e.inline > 500, "{} inline remainders", e.inline);
    }
}

#[test]
fn float_to_int_is_the_reference() {
    use ogham_ir::math::ConstFn;
    use ogham_ir::scalar::constant;
    for from in [PrimType::F32, PrimType::F64] {
        for to in INTS {
            let bounds = (
                constant(ConstFn::Lowest, to).unwrap(),
                constant(ConstFn::Highest, to).unwrap(),
            );
            for x in floats(from) {
                let got = float_to_int(&mut Eval::default(), (from, to), x, bounds);
                assert_eq!(got, convert(x, to), "{to}.{from} {x:?}");
            }
        }
    }
}
