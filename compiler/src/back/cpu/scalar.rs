//! Scalar operations in CLIF with the interpreter's semantics: arithmetic, comparisons and
//! bitwise operators inline, integer division (floored and truncated, wrapping like the
//! interpreter; floored by a constant power of two as a shift or a mask) and shifts (an amount
//! outside `0..bits` shifts every bit out, as in the interpreter) inline, everything else
//! (integer `**`, most math functions, some conversions) through the runtime's helpers
//! (`helpers.rs`).

use super::codegen::{Gen, clif_type, float_min_max};
use super::helpers::{HelperId, has_libm_helper};
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

fn is_signed(p: PrimType) -> bool {
    matches!(
        p,
        PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64
    )
}

/// `k` when `n` is `2^k` with `k >= 1`.
pub(super) fn exact_log2(n: i64) -> Option<u32> {
    (n >= 2 && n.count_ones() == 1).then(|| n.trailing_zeros())
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
        let ins = self.b.ins();
        if is_float(t) {
            let cc = |c| Some(c);
            let cmp = match op {
                BinOp::Eq => cc(FloatCC::Equal),
                BinOp::Ne => cc(FloatCC::NotEqual),
                BinOp::Lt => cc(FloatCC::LessThan),
                BinOp::Le => cc(FloatCC::LessThanOrEqual),
                BinOp::Gt => cc(FloatCC::GreaterThan),
                BinOp::Ge => cc(FloatCC::GreaterThanOrEqual),
                _ => None,
            };
            if let Some(c) = cmp {
                return ins.fcmp(c, x, y);
            }
            return match op {
                BinOp::Add => ins.fadd(x, y),
                BinOp::Sub => ins.fsub(x, y),
                BinOp::Mul => ins.fmul(x, y),
                BinOp::Div => ins.fdiv(x, y),
                BinOp::Mod | BinOp::Rem => self.float_remainder(op, t, x, y),
                BinOp::Pow => self
                    .call(HelperId::Libm(MathFn::Pow, t), &[x, y])
                    .expect("pow returns"),
                _ => self.float_op_helper(op, t, x, y),
            };
        }
        let signed = is_signed(t);
        let pick = |s: IntCC, u: IntCC| if signed { s } else { u };
        match op {
            BinOp::Eq => ins.icmp(IntCC::Equal, x, y),
            BinOp::Ne => ins.icmp(IntCC::NotEqual, x, y),
            BinOp::Lt => ins.icmp(pick(IntCC::SignedLessThan, IntCC::UnsignedLessThan), x, y),
            BinOp::Le => ins.icmp(
                pick(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
                x,
                y,
            ),
            BinOp::Gt => ins.icmp(
                pick(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
                x,
                y,
            ),
            BinOp::Ge => ins.icmp(
                pick(
                    IntCC::SignedGreaterThanOrEqual,
                    IntCC::UnsignedGreaterThanOrEqual,
                ),
                x,
                y,
            ),
            BinOp::Add => ins.iadd(x, y),
            BinOp::Sub => ins.isub(x, y),
            BinOp::Mul => ins.imul(x, y),
            BinOp::BitAnd => ins.band(x, y),
            BinOp::BitOr => ins.bor(x, y),
            BinOp::BitXor => ins.bxor(x, y),
            BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow => {
                if op.is_division() {
                    return self.division(op, t, x, y);
                }
                let args = [self.iconst(binop_code(op)), self.iconst(prim_code(t))];
                let (wx, wy) = (self.widen_int(t, x), self.widen_int(t, y));
                let r = self
                    .call(HelperId::IntOp, &[args[0], args[1], wx, wy])
                    .expect("int ops return");
                self.narrow_int(t, r)
            }
            BinOp::Shl | BinOp::Shr => self.shift(op, t, x, y),
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

    /// `x % y` (floored: `Mod`) or `x %% y` (truncated, C's `fmod`: `Rem`) at a float type,
    /// inline when both are integers below `2^53` in magnitude (`2^24` for `f32`) and `y != 0`,
    /// as in a season's angle `(j·t) % f`: then the rounded quotient truncates to the exact one
    /// (it is at least `1/|y|` from the next integer, farther than its rounding error), `y·q`
    /// and `x - y·q` are exact integers, and the difference with `x`'s sign is `fmod`'s result
    /// bit for bit (a zero too); the floored form then adds `y` as the helper does. Other
    /// operands (fractions, infinities, NaN, zero divisors, huge values) call the helper.
    fn float_remainder(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let ty = clif_type(t);
        let (limit, zero) = if t == PrimType::F32 {
            (
                self.b.ins().f32const(16_777_216.0),
                self.b.ins().f32const(0.0),
            )
        } else {
            (
                self.b.ins().f64const(9_007_199_254_740_992.0),
                self.b.ins().f64const(0.0),
            )
        };
        let (xt, yt) = (self.b.ins().trunc(x), self.b.ins().trunc(y));
        let x_whole = self.b.ins().fcmp(FloatCC::Equal, x, xt);
        let y_whole = self.b.ins().fcmp(FloatCC::Equal, y, yt);
        let x_abs = self.b.ins().fabs(x);
        let y_abs = self.b.ins().fabs(y);
        let x_small = self.b.ins().fcmp(FloatCC::LessThan, x_abs, limit);
        let y_small = self.b.ins().fcmp(FloatCC::LessThan, y_abs, limit);
        let small = self.b.ins().band(x_small, y_small);
        let divides = self.b.ins().fcmp(FloatCC::NotEqual, y, zero);
        let whole = self.b.ins().band(x_whole, y_whole);
        let exact = self.b.ins().band(small, divides);
        let fast = self.b.ins().band(whole, exact);
        let (inline, helper, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let result = self.b.append_block_param(merge, ty);
        self.b.ins().brif(fast, inline, &[], helper, &[]);
        self.b.switch_to_block(inline);
        self.b.seal_block(inline);
        let q = self.b.ins().fdiv(x, y);
        let q = self.b.ins().trunc(q);
        let yq = self.b.ins().fmul(y, q);
        let r = self.b.ins().fsub(x, yq);
        let mut r = self.b.ins().fcopysign(r, x);
        if op == BinOp::Mod {
            // The helper's floored adjustment: `r + y` when `r` is non-zero and its sign is not
            // `y`'s.
            let nonzero = self.b.ins().fcmp(FloatCC::NotEqual, r, zero);
            let r_neg = self.b.ins().fcmp(FloatCC::LessThan, r, zero);
            let y_neg = self.b.ins().fcmp(FloatCC::LessThan, y, zero);
            let differ = self.b.ins().bxor(r_neg, y_neg);
            let adjust = self.b.ins().band(nonzero, differ);
            let shifted = self.b.ins().fadd(r, y);
            r = self.b.ins().select(adjust, shifted, r);
        }
        self.b.ins().jump(merge, &[r.into()]);
        self.b.switch_to_block(helper);
        self.b.seal_block(helper);
        let r = self.float_op_helper(op, t, x, y);
        self.b.ins().jump(merge, &[r.into()]);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        result
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
        if op == BinOp::Shr && is_signed(t) {
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

    /// Integer `/` and `%` (floored, as Futhark's), `//` and `%%` (truncated), wrapping like
    /// the interpreter (`MIN / -1 = MIN`); the divisor is known to be non-zero.
    fn division(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        if let (BinOp::Div | BinOp::Mod, Some(k)) = (op, self.power_of_two(t, y)) {
            // Floored division and modulo by a constant `2^k` (`k` below the sign bit for a
            // signed type): an arithmetic (unsigned: logical) shift, the low `k` bits.
            let ins = self.b.ins();
            return match (op, is_signed(t)) {
                (BinOp::Div, true) => ins.sshr_imm_s(x, k as i64),
                (BinOp::Div, false) => ins.ushr_imm_s(x, k as i64),
                _ => ins.band_imm_s(x, (1i64 << k) - 1),
            };
        }
        let ins = self.b.ins();
        if !is_signed(t) {
            // Unsigned: floored and truncated division coincide.
            return match op {
                BinOp::Div | BinOp::Quot => ins.udiv(x, y),
                _ => ins.urem(x, y),
            };
        }
        // `sdiv`/`srem` trap on MIN / -1: divide by 1 instead and fix the result up.
        let ty = clif_type(t);
        let minus_one = ins.icmp_imm_s(IntCC::Equal, y, -1);
        let one = self.b.ins().iconst(ty, 1);
        let divisor = self.b.ins().select(minus_one, one, y);
        let q = self.b.ins().sdiv(x, divisor);
        let r = self.b.ins().srem(x, divisor);
        // Floored: when the remainder is non-zero and its sign differs from the divisor's.
        let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
        let signs = self.b.ins().bxor(r, y);
        let differ = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, signs, 0);
        let adjust = self.b.ins().band(nonzero, differ);
        match op {
            BinOp::Div => {
                let down = self.b.ins().iadd_imm_s(q, -1);
                let floored = self.b.ins().select(adjust, down, q);
                let negated = self.b.ins().ineg(x);
                self.b.ins().select(minus_one, negated, floored)
            }
            BinOp::Quot => {
                let negated = self.b.ins().ineg(x);
                self.b.ins().select(minus_one, negated, q)
            }
            BinOp::Mod => {
                let up = self.b.ins().iadd(r, y);
                self.b.ins().select(adjust, up, r)
            }
            _ => r,
        }
    }

    /// `k` when `y` is an `iconst` whose value at type `t` is `2^k`, `k >= 1` (for a signed
    /// type a positive value, so below its sign bit).
    fn power_of_two(&self, t: PrimType, y: Value) -> Option<u32> {
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
        let n = if is_signed(t) {
            bits >> unused
        } else {
            ((bits as u64) >> unused) as i64
        };
        exact_log2(n)
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
                    let inf = if t == PrimType::F32 {
                        self.b.ins().f32const(f32::INFINITY)
                    } else {
                        self.b.ins().f64const(f64::INFINITY)
                    };
                    return self.b.ins().fcmp(FloatCC::Equal, a, inf);
                }
                _ => {}
            }
            if let MathFn::Sin | MathFn::Cos = f {
                let (sin, cos) = self.sin_cos(t, x);
                return if f == MathFn::Sin { sin } else { cos };
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

    /// `sin x` and `cos x` by one helper call, reused within the current block.
    fn sin_cos(&mut self, t: PrimType, x: Value) -> (Value, Value) {
        let block = self
            .b
            .current_block()
            .expect("code is emitted into a block");
        if let Some(both) = self.sin_cos.get(&(block, x)) {
            return *both;
        }
        let slot = self
            .b
            .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                16,
                3,
            ));
        let out = self.b.ins().stack_addr(I64, slot, 0);
        self.call(HelperId::SinCos(t), &[x, out]);
        let ty = clif_type(t);
        let sin = self.b.ins().load(ty, MemFlagsData::trusted(), out, 0);
        let cos = self.b.ins().load(ty, MemFlagsData::trusted(), out, 8);
        self.sin_cos.insert((block, x), (sin, cos));
        (sin, cos)
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
                } else if is_signed(from) {
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
