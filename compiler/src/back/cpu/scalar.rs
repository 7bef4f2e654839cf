//! Scalar operations in CLIF with the interpreter's semantics: arithmetic, comparisons and
//! bitwise operators inline, integer division (floored and truncated, wrapping like the
//! interpreter; floored by a constant power of two as a shift or a mask) and float `%`/`%%`
//! inline as the shared description expands them (`back/steps.rs`, whose steps [`Gen`]
//! emits here), shifts (an amount outside `0..bits` shifts every bit out, as in the
//! interpreter) inline, everything else (integer `**`, most math functions, some conversions)
//! through the runtime's helpers (`helpers.rs`).

use super::codegen::SinCos;
use super::codegen::{Gen, clif_type, float_min_max};
use super::helpers::{HelperId, has_libm_helper};
use crate::back::steps::{self, Bits, FloatSteps, InlineFmod, IntSteps, Logic, Target};
use cranelift_codegen::cursor::{Cursor as _, FuncCursor};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F64, I32, I64};
use cranelift_codegen::ir::{InstBuilder, InstructionData, MemFlagsData, Opcode, Value, ValueDef};
use ogham_ir::abi::{binop_code, math_code, prim_code};
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::types::PrimType;

pub fn is_float(p: PrimType) -> bool {
    matches!(p, PrimType::F32 | PrimType::F64)
}

/// The condition code of comparison `op` on integers, signed or not.
pub(super) fn int_cc(op: BinOp, signed: bool) -> IntCC {
    let pick = |s: IntCC, u: IntCC| if signed { s } else { u };
    match op {
        BinOp::Eq => IntCC::Equal,
        BinOp::Ne => IntCC::NotEqual,
        BinOp::Lt => pick(IntCC::SignedLessThan, IntCC::UnsignedLessThan),
        BinOp::Le => pick(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
        BinOp::Gt => pick(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
        _ => pick(
            IntCC::SignedGreaterThanOrEqual,
            IntCC::UnsignedGreaterThanOrEqual,
        ),
    }
}

/// The condition code of comparison `op` on floats.
pub(super) fn float_cc(op: BinOp) -> FloatCC {
    match op {
        BinOp::Eq => FloatCC::Equal,
        BinOp::Ne => FloatCC::NotEqual,
        BinOp::Lt => FloatCC::LessThan,
        BinOp::Le => FloatCC::LessThanOrEqual,
        BinOp::Gt => FloatCC::GreaterThan,
        _ => FloatCC::GreaterThanOrEqual,
    }
}

impl Gen<'_> {
    pub(super) fn unop(&mut self, op: UnOp, t: PrimType, x: Value) -> Value {
        match (op, t) {
            (UnOp::Neg, t) if is_float(t) => self.b.ins().fneg(x),
            (UnOp::Neg, _) => self.b.ins().ineg(x),
            (UnOp::Not, PrimType::Bool) => self.negation(x),
            (UnOp::Not, _) => self.b.ins().bnot(x),
        }
    }

    /// `x op y` at type `t`; an integer divisor is known to be non-zero (the shared walk checks
    /// it first).
    pub(super) fn binop(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        if op.is_comparison() {
            return if is_float(t) {
                self.b.ins().fcmp(float_cc(op), x, y)
            } else {
                self.b.ins().icmp(int_cc(op, t.is_signed_int()), x, y)
            };
        }
        let ins = self.b.ins();
        if is_float(t) {
            return match op {
                BinOp::Add => ins.fadd(x, y),
                BinOp::Sub => ins.fsub(x, y),
                BinOp::Mul => ins.fmul(x, y),
                BinOp::Div => ins.fdiv(x, y),
                BinOp::Mod | BinOp::Rem => steps::float_remainder_inline(self, op, t, x, y),
                BinOp::Pow => self
                    .call(HelperId::Libm(MathFn::Pow, t), &[x, y])
                    .expect("pow returns"),
                _ => self.float_op_helper(op, t, x, y),
            };
        }
        match op {
            BinOp::Add => ins.iadd(x, y),
            BinOp::Sub => ins.isub(x, y),
            BinOp::Mul => ins.imul(x, y),
            BinOp::BitAnd => ins.band(x, y),
            BinOp::BitOr => ins.bor(x, y),
            BinOp::BitXor => ins.bxor(x, y),
            BinOp::Shl | BinOp::Shr => self.shift(op, t, x, y),
            _ if op.is_division() => {
                // By a constant power of two: a shift or a mask; else the general steps.
                if let Some(n) = self.int_constant(t, y)
                    && let Some(r) = steps::by_power_of_two(self, op, t, x, n.into())
                {
                    return r;
                }
                steps::int_division(self, op, t, x, y)
            }
            _ => {
                let args = [self.iconst(binop_code(op)), self.iconst(prim_code(t))];
                let (wx, wy) = (self.widen_int(t, x), self.widen_int(t, y));
                let r = self
                    .call(HelperId::IntOp, &[args[0], args[1], wx, wy])
                    .expect("int ops return");
                self.narrow_int(t, r)
            }
        }
    }

    /// `x op y` at a float type by the runtime's helper, which dispatches on the operator code.
    fn float_op_helper(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let code = self.iconst(binop_code(op));
        let id = if t == PrimType::F32 {
            HelperId::F32Op
        } else {
            HelperId::F64Op
        };
        self.call(id, &[code, x, y]).expect("float ops return")
    }

    /// `x << y` and `x >> y` (arithmetic for signed types, logical for `u8`) with the
    /// interpreter's semantics for every amount: CLIF masks the amount to the type's width, so an
    /// amount outside `0..bits` (a negative one included: it is huge as an unsigned number) is
    /// handled apart: `<<` and a logical `>>` give 0, an arithmetic `>>` shifts by `bits - 1`
    /// (all sign bits).
    fn shift(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let ty = clif_type(t);
        let bits = i64::from(ty.bits());
        let in_range = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, y, bits);
        if op == BinOp::Shr && t.is_signed_int() {
            let last = self.b.ins().iconst(ty, bits - 1);
            let amount = self.b.ins().select(in_range, y, last);
            return self.b.ins().sshr(x, amount);
        }
        let shifted = if op == BinOp::Shl {
            self.b.ins().ishl(x, y)
        } else {
            self.b.ins().ushr(x, y)
        };
        let zero = self.b.ins().iconst(ty, 0);
        self.b.ins().select(in_range, shifted, zero)
    }

    /// The value of `y` at integer type `t` (sign-extended for a signed type) when it is an
    /// `iconst`.
    pub(super) fn int_constant(&self, t: PrimType, y: Value) -> Option<i64> {
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(y) else {
            return None;
        };
        let InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } = dfg.insts[inst]
        else {
            return None;
        };
        let unused = 64 - clif_type(t).bits();
        let bits = imm.bits() << unused;
        Some(if t.is_signed_int() {
            bits >> unused
        } else {
            ((bits as u64) >> unused) as i64
        })
    }

    fn widen_int(&mut self, t: PrimType, x: Value) -> Value {
        match t {
            PrimType::I64 => x,
            PrimType::U8 | PrimType::Bool => self.b.ins().uextend(I64, x),
            _ => self.b.ins().sextend(I64, x),
        }
    }

    fn narrow_int(&mut self, t: PrimType, x: Value) -> Value {
        match clif_type(t) {
            I64 => x,
            ty => self.b.ins().ireduce(ty, x),
        }
    }

    pub(super) fn math(&mut self, f: MathFn, t: PrimType, args: &[Value]) -> Value {
        let x = args[0];
        if is_float(t) {
            let ins = self.b.ins();
            match f {
                MathFn::Sqrt => return ins.sqrt(x),
                MathFn::Abs => return ins.fabs(x),
                MathFn::Floor => return ins.floor(x),
                MathFn::Ceil => return ins.ceil(x),
                MathFn::Trunc => return ins.trunc(x),
                MathFn::Round => return ins.nearest(x),
                MathFn::IsNan => return ins.fcmp(FloatCC::Unordered, x, x),
                MathFn::Min | MathFn::Max => {
                    return float_min_max(self, f, x, args[1], |g, c, a, b| {
                        g.b.ins().select(c, a, b)
                    });
                }
                MathFn::IsInf => {
                    let a = ins.fabs(x);
                    let inf = self.float_const(t, f64::INFINITY);
                    return self.b.ins().fcmp(FloatCC::Equal, a, inf);
                }
                _ => {}
            }
            if let MathFn::Sin | MathFn::Cos = f {
                return self.sin_or_cos(f, t, x);
            }
            if has_libm_helper(f) {
                return self
                    .call(HelperId::Libm(f, t), args)
                    .expect("math functions return");
            }
            let y = args.get(1).copied().unwrap_or(x);
            let code = self.iconst(math_code(f));
            let id = if t == PrimType::F32 {
                HelperId::F32Math
            } else {
                HelperId::F64Math
            };
            return self.call(id, &[code, x, y]).expect("math returns");
        }
        if let (MathFn::Min | MathFn::Max, [_, y]) = (f, args) {
            // The interpreter's: `x` when `x <= y` (min) or `x >= y` (max), else `y`.
            let op = if f == MathFn::Min {
                BinOp::Le
            } else {
                BinOp::Ge
            };
            let x_wins = self.binop(op, t, x, *y);
            return self.b.ins().select(x_wins, x, *y);
        }
        let y = args.get(1).copied().unwrap_or(x);
        let (wx, wy) = (self.widen_int(t, x), self.widen_int(t, y));
        let code = self.iconst(math_code(f));
        let ty = self.iconst(prim_code(t));
        let r = self
            .call(HelperId::IntMath, &[code, ty, wx, wy])
            .expect("math returns");
        self.narrow_int(t, r)
    }

    /// `sin x` or `cos x` (`f`) by the helper of `f` alone. When the other of the two was
    /// computed from `x` earlier in the current block, that call becomes one call of the helper
    /// computing both (the same methods, so the same bits), at the earlier call's place: `sin`
    /// and `cos` of one value (as in `e^{jx}`) cost one call, and one of them alone (a design
    /// matrix's `if even then cos a else sin a`) costs no computation of the other.
    fn sin_or_cos(&mut self, f: MathFn, t: PrimType, x: Value) -> Value {
        let block = self
            .b
            .current_block()
            .expect("code is emitted into a block");
        let (g, inst, y) = match self.sin_cos.get(&(block, x)) {
            Some(SinCos::Both(sin, cos)) => return if f == MathFn::Sin { *sin } else { *cos },
            Some(SinCos::One(g, _, y)) if *g == f => return *y,
            Some(SinCos::One(g, inst, y)) => (*g, *inst, *y),
            None => {
                let helper = self.helper(HelperId::Libm(f, t));
                let inst = self.b.ins().call(helper, &[x]);
                let y = self.b.inst_results(inst)[0];
                self.sin_cos.insert((block, x), SinCos::One(f, inst, y));
                return y;
            }
        };
        let slot = self
            .b
            .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                16,
                3,
            ));
        let both = self.helper(HelperId::SinCos(t));
        let ty = clif_type(t);
        let mut at = FuncCursor::new(self.b.func).at_inst(inst);
        let out = at.ins().stack_addr(I64, slot, 0);
        at.ins().call(both, &[x, out]);
        let sin = at.ins().load(ty, MemFlagsData::trusted(), out, 0);
        let cos = at.ins().load(ty, MemFlagsData::trusted(), out, 8);
        // The earlier call's result becomes its function's value from the call computing both.
        let func = &mut *self.b.func;
        func.layout.remove_inst(inst);
        func.dfg.clear_results(inst);
        func.dfg
            .change_to_alias(y, if g == MathFn::Sin { sin } else { cos });
        self.sin_cos.insert((block, x), SinCos::Both(sin, cos));
        if f == MathFn::Sin { sin } else { cos }
    }

    pub(super) fn convert(&mut self, from: PrimType, to: PrimType, x: Value) -> Value {
        use PrimType as P;
        let ins = self.b.ins();
        let (ft, tt) = (clif_type(from), clif_type(to));
        match (from, to) {
            _ if from == to => x,
            (P::F32, P::F64) => ins.fpromote(F64, x),
            (P::F64, P::F32) => ins.fdemote(F32, x),
            (P::I8 | P::I16 | P::I32 | P::I64, P::F32 | P::F64) => ins.fcvt_from_sint(tt, x),
            (P::U8 | P::Bool, P::F32 | P::F64) => ins.fcvt_from_uint(tt, x),
            (P::F32 | P::F64, P::I32 | P::I64) => ins.fcvt_to_sint_sat(tt, x),
            (P::I8 | P::I16 | P::I32 | P::I64 | P::U8, P::Bool) => {
                ins.icmp_imm_s(IntCC::NotEqual, x, 0)
            }
            (P::I8 | P::I16 | P::I32 | P::I64 | P::U8 | P::Bool, _) if !is_float(to) => {
                if tt.bits() < ft.bits() {
                    ins.ireduce(tt, x)
                } else if tt.bits() == ft.bits() {
                    x
                } else if from.is_signed_int() {
                    ins.sextend(tt, x)
                } else {
                    ins.uextend(tt, x)
                }
            }
            _ => {
                let bits = self.widen(x);
                let (f, t) = (self.iconst(prim_code(from)), self.iconst(prim_code(to)));
                let r = self
                    .call(HelperId::Convert, &[f, t, bits])
                    .expect("convert returns");
                match tt {
                    F32 => {
                        let b32 = self.b.ins().ireduce(I32, r);
                        self.b.ins().bitcast(F32, MemFlagsData::new(), b32)
                    }
                    F64 => self.b.ins().bitcast(F64, MemFlagsData::new(), r),
                    I64 => r,
                    t => self.b.ins().ireduce(t, r),
                }
            }
        }
    }
}

/// The shared description's steps (`back/steps.rs`) as scalar CLIF.
impl Target for Gen<'_> {
    type V = Value;
}

impl Logic for Gen<'_> {
    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.b.ins().select(c, a, b)
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().band(a, b)
    }
    fn xor(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bxor(a, b)
    }
}

impl Bits for Gen<'_> {
    fn shr_imm(&mut self, t: PrimType, x: Value, k: u32) -> Value {
        if t.is_signed_int() {
            self.b.ins().sshr_imm_s(x, i64::from(k))
        } else {
            self.b.ins().ushr_imm_s(x, i64::from(k))
        }
    }
    fn and_imm(&mut self, _: PrimType, x: Value, m: i64) -> Value {
        self.b.ins().band_imm_s(x, m)
    }
}

impl IntSteps for Gen<'_> {
    fn int_const(&mut self, t: PrimType, n: i64) -> Value {
        self.b.ins().iconst(clif_type(t), n)
    }
    fn cmp_imm(&mut self, t: PrimType, op: BinOp, x: Value, n: i64) -> Value {
        self.b.ins().icmp_imm_s(int_cc(op, t.is_signed_int()), x, n)
    }
    fn quot(&mut self, t: PrimType, x: Value, y: Value) -> Value {
        if t.is_signed_int() {
            self.b.ins().sdiv(x, y)
        } else {
            self.b.ins().udiv(x, y)
        }
    }
    fn rem(&mut self, t: PrimType, x: Value, y: Value) -> Value {
        if t.is_signed_int() {
            self.b.ins().srem(x, y)
        } else {
            self.b.ins().urem(x, y)
        }
    }
    fn add(&mut self, _: PrimType, x: Value, y: Value) -> Value {
        self.b.ins().iadd(x, y)
    }
    fn add_imm(&mut self, _: PrimType, x: Value, n: i64) -> Value {
        self.b.ins().iadd_imm_s(x, n)
    }
    fn neg(&mut self, _: PrimType, x: Value) -> Value {
        self.b.ins().ineg(x)
    }
}

impl FloatSteps for Gen<'_> {
    fn float_const(&mut self, t: PrimType, x: f64) -> Value {
        if t == PrimType::F32 {
            self.b.ins().f32const(x as f32)
        } else {
            self.b.ins().f64const(x)
        }
    }
    fn fcmp(&mut self, op: BinOp, x: Value, y: Value) -> Value {
        self.b.ins().fcmp(float_cc(op), x, y)
    }
    fn fadd(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().fadd(x, y)
    }
}

impl InlineFmod for Gen<'_> {
    fn trunc(&mut self, x: Value) -> Value {
        self.b.ins().trunc(x)
    }
    fn fabs(&mut self, x: Value) -> Value {
        self.b.ins().fabs(x)
    }
    fn fdiv(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().fdiv(x, y)
    }
    fn fmul(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().fmul(x, y)
    }
    fn fsub(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().fsub(x, y)
    }
    fn copysign(&mut self, x: Value, sign: Value) -> Value {
        self.b.ins().fcopysign(x, sign)
    }
    /// A branch to the inline block or to the runtime's helper, both jumping to a join block
    /// whose parameter is the result.
    fn or_reference(
        &mut self,
        t: PrimType,
        c: Value,
        inline: impl FnOnce(&mut Self) -> Value,
        (op, x, y): (BinOp, Value, Value),
    ) -> Value {
        let (inline_block, helper, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let result = self.b.append_block_param(merge, clif_type(t));
        self.b.ins().brif(c, inline_block, &[], helper, &[]);
        self.b.switch_to_block(inline_block);
        self.b.seal_block(inline_block);
        let r = inline(self);
        self.b.ins().jump(merge, &[r.into()]);
        self.b.switch_to_block(helper);
        self.b.seal_block(helper);
        let r = self.float_op_helper(op, t, x, y);
        self.b.ins().jump(merge, &[r.into()]);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        result
    }
}
