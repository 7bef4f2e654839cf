//! Scalar operations as target-neutral steps: the one description, for every code generator, of
//! the operations whose semantics ([`ogham_ir::scalar`]) the targets' instructions do not have —
//! integer `/`, `%`, `//`, `%%`, float `%` and `%%`, float-to-integer conversion — and of the
//! rewrite of floored division by a constant power of two.
//!
//! Each operation is a function that expands into a short sequence of primitive steps
//! (truncating division and remainder, comparison, select, wrapping add, shift, mask, ...),
//! which a target emits with its own emitters: a target implements the traits of the steps its
//! operations need. The CPU backend's scalar code (`cpu/scalar.rs`: CLIF) implements
//! [`IntSteps`], [`Bits`] and [`InlineFmod`]; its SIMD lanes (`cpu/simd/lanes.rs`) [`Bits`] only
//! (vectors have no integer division: the lanes divide only by powers of two); the CUDA
//! backend's prelude (`cuda/prelude.rs`: C) [`IntSteps`], [`Fmod`] and [`FloatToInt`], writing
//! each operation once per type as a device function that generated kernels call. The tests
//! (`steps/tests.rs`) run every description on constants, each step by the reference's own
//! primitive operation, and compare it with the reference: exhaustively on the 8-bit types,
//! on edge values elsewhere.
//!
//! - **Integer division** ([`int_division`]): unsigned, floored and truncated division
//!   coincide (one step). Signed, the divisor `-1` is replaced by `1` (truncating division of
//!   `lowest` by `-1` traps in CLIF and is undefined in C) and the result fixed up (`-x`, which
//!   wraps, and remainder 0); the floored forms subtract 1 from the quotient or add the divisor
//!   to the remainder when the remainder is non-zero and its sign is not the divisor's (the
//!   sign bit of `r ^ y`).
//! - **Powers of two** ([`power_of_two`], [`by_power_of_two`]): floored `x / 2^k` is an
//!   arithmetic (unsigned: logical) shift right by `k` and `x % 2^k` the low `k` bits, for a
//!   constant divisor `2^k` with `k >= 1` (for a signed type a positive one, so `k` is below
//!   the sign bit). The decision is [`power_of_two`]'s, which the SIMD planner asks too.
//! - **Float `%`**: the floored remainder is the truncated one (`%%`, C's `fmod`) plus the
//!   divisor when it is non-zero and its sign is not the divisor's. A target with an exact
//!   `fmod` ([`Fmod`]: C) takes it as a step ([`float_mod`]); one without ([`InlineFmod`]:
//!   CLIF) computes it inline where that is exact ([`float_remainder_inline`]: both operands
//!   integers below `2^24`/`2^53` in magnitude, the divisor non-zero) and calls the reference
//!   elsewhere.
//! - **Float to integer** ([`float_to_int`]): truncation towards zero, saturating at the
//!   bounds, NaN giving 0, for a target whose conversion is undefined out of range (C): the
//!   truncating conversion only ever sees a value inside the bounds (or 0). Cranelift's
//!   `fcvt_to_sint_sat` *is* this operation, so the CPU backend emits it for `i32` and `i64`
//!   (and calls the reference for narrower types) without expanding it.
//!
//! Invariants the descriptions rely on and keep: the steps are emitted in the order written
//! (the CPU backend's CLIF, snapshot-tested, depends on it, dead values included: a target that
//! writes text may drop the steps its result does not use); an integer divisor is non-zero
//! (the shared walk checks it first, `back/lower/stmt.rs`); truncating division never sees
//! `lowest / -1`; integer `add`, `add_imm` and `neg` wrap; comparisons are signed or unsigned
//! by their operands' type; a truth value is what a target's comparison makes (CLIF: `i8` 0/1,
//! C: `bool`).

use ogham_ir::op::BinOp;
use ogham_ir::types::PrimType;

/// A target's values: CLIF values, or C expressions.
pub trait Target {
    type V: Clone;
}

/// Truth-value and bitwise steps, shared by the integer and float descriptions.
pub trait Logic: Target {
    /// `c ? a : b` (`c` a truth value).
    fn select(&mut self, c: Self::V, a: Self::V, b: Self::V) -> Self::V;
    /// `a & b`, of two truth values or two integers of one type.
    fn and(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `a ^ b`, of two truth values or two integers of one type.
    fn xor(&mut self, a: Self::V, b: Self::V) -> Self::V;
}

/// The steps of the power-of-two rewrite, at an integer type `t`.
pub trait Bits: Target {
    /// `x >> k`, arithmetic for a signed type and logical for `u8`, `1 <= k < bits`.
    fn shr_imm(&mut self, t: PrimType, x: Self::V, k: u32) -> Self::V;
    /// `x & m`.
    fn and_imm(&mut self, t: PrimType, x: Self::V, m: i64) -> Self::V;
}

/// The steps of integer division, at an integer type `t`.
pub trait IntSteps: Logic {
    /// The constant `n` (wrapped into `t`).
    fn int_const(&mut self, t: PrimType, n: i64) -> Self::V;
    /// `x op n` for a comparison `op` (a truth value).
    fn cmp_imm(&mut self, t: PrimType, op: BinOp, x: Self::V, n: i64) -> Self::V;
    /// The truncated quotient; `y != 0`, and never `lowest / -1`.
    fn quot(&mut self, t: PrimType, x: Self::V, y: Self::V) -> Self::V;
    /// The truncated remainder (the sign of `x`); as [`IntSteps::quot`].
    fn rem(&mut self, t: PrimType, x: Self::V, y: Self::V) -> Self::V;
    /// `x + y`, wrapping.
    fn add(&mut self, t: PrimType, x: Self::V, y: Self::V) -> Self::V;
    /// `x + n`, wrapping.
    fn add_imm(&mut self, t: PrimType, x: Self::V, n: i64) -> Self::V;
    /// `-x`, wrapping.
    fn neg(&mut self, t: PrimType, x: Self::V) -> Self::V;
}

/// The float steps of `%` and of conversions, at a float type.
pub trait FloatSteps: Logic {
    /// The constant `x` (rounded to `t`; the constants used are exact in both types).
    fn float_const(&mut self, t: PrimType, x: f64) -> Self::V;
    /// `x op y` for a comparison `op` (IEEE: false with a NaN operand, except `!=`).
    fn fcmp(&mut self, op: BinOp, x: Self::V, y: Self::V) -> Self::V;
    fn fadd(&mut self, x: Self::V, y: Self::V) -> Self::V;
}

/// A target with an exact truncated float remainder.
pub trait Fmod: FloatSteps {
    /// `x %% y`: C's `fmod` (the sign of `x`; NaN for `y == 0` or an infinite `x`).
    fn fmod(&mut self, t: PrimType, x: Self::V, y: Self::V) -> Self::V;
}

/// A target without one: [`float_remainder_inline`] computes it where that is exact and calls
/// the reference elsewhere.
pub trait InlineFmod: FloatSteps {
    fn trunc(&mut self, x: Self::V) -> Self::V;
    fn fabs(&mut self, x: Self::V) -> Self::V;
    fn fdiv(&mut self, x: Self::V, y: Self::V) -> Self::V;
    fn fmul(&mut self, x: Self::V, y: Self::V) -> Self::V;
    fn fsub(&mut self, x: Self::V, y: Self::V) -> Self::V;
    /// `x` with the sign of `sign`.
    fn copysign(&mut self, x: Self::V, sign: Self::V) -> Self::V;
    /// `inline(self)` when `c` holds, else the reference's `x op y` at type `t` (`reference`
    /// is `(op, x, y)`); only the side taken runs (a branch).
    fn or_reference(
        &mut self,
        t: PrimType,
        c: Self::V,
        inline: impl FnOnce(&mut Self) -> Self::V,
        reference: (BinOp, Self::V, Self::V),
    ) -> Self::V;
}

/// The steps of a float-to-integer conversion.
pub trait FloatToInt: FloatSteps {
    /// Integer `x` converted to float type `to` (rounding to nearest).
    fn to_float(&mut self, to: PrimType, x: Self::V) -> Self::V;
    /// Float `x`, which is inside the bounds of integer type `to` (or 0), truncated to it.
    fn truncate(&mut self, to: PrimType, x: Self::V) -> Self::V;
}

/// `k` when floored `x op n` (`op` being `/` or `%`) at an integer type is a shift by `k` or
/// the low `k` bits: `n == 2^k` with `k >= 1`. `n` is the divisor's value at its type
/// (sign-extended for a signed type, so a power of two there is positive and below the sign
/// bit).
pub fn power_of_two(op: BinOp, n: i128) -> Option<u32> {
    let floored = matches!(op, BinOp::Div | BinOp::Mod);
    (floored && n >= 2 && n.count_ones() == 1).then(|| n.trailing_zeros())
}

/// Floored `x / n` or `x % n` at integer type `t` by the constant `n` (see [`power_of_two`]) as
/// a shift or a mask, or `None` when it is not such an operation.
pub fn by_power_of_two<E: Bits>(
    e: &mut E,
    op: BinOp,
    t: PrimType,
    x: E::V,
    n: i128,
) -> Option<E::V> {
    let k = power_of_two(op, n)?;
    Some(if op == BinOp::Div {
        e.shr_imm(t, x, k)
    } else {
        e.and_imm(t, x, (1i64 << k) - 1)
    })
}

/// `x op y` for an integer division `op` (`/` and `%` floored, `//` and `%%` truncated) at
/// integer type `t`, wrapping (`lowest / -1 == lowest`); `y` is non-zero.
pub fn int_division<E: IntSteps>(e: &mut E, op: BinOp, t: PrimType, x: E::V, y: E::V) -> E::V {
    if !t.is_signed_int() {
        // Unsigned: floored and truncated division coincide.
        return match op {
            BinOp::Div | BinOp::Quot => e.quot(t, x, y),
            _ => e.rem(t, x, y),
        };
    }
    let minus_one = e.cmp_imm(t, BinOp::Eq, y.clone(), -1);
    let one = e.int_const(t, 1);
    let divisor = e.select(minus_one.clone(), one, y.clone());
    let q = e.quot(t, x.clone(), divisor.clone());
    let r = e.rem(t, x.clone(), divisor);
    // Floored: adjusted when the remainder is non-zero and its sign differs from the divisor's.
    let nonzero = e.cmp_imm(t, BinOp::Ne, r.clone(), 0);
    let signs = e.xor(r.clone(), y.clone());
    let differ = e.cmp_imm(t, BinOp::Lt, signs, 0);
    let adjust = e.and(nonzero, differ);
    match op {
        BinOp::Div => {
            let down = e.add_imm(t, q.clone(), -1);
            let floored = e.select(adjust, down, q);
            let negated = e.neg(t, x);
            e.select(minus_one, negated, floored)
        }
        BinOp::Quot => {
            let negated = e.neg(t, x);
            e.select(minus_one, negated, q)
        }
        BinOp::Mod => {
            let up = e.add(t, r.clone(), y);
            e.select(adjust, up, r)
        }
        _ => r,
    }
}

/// The floored remainder from the truncated one `r` of a division by `y`: `r + y` when `r` is
/// non-zero and its sign is not `y`'s (`zero` is the float constant 0).
fn float_floor<E: FloatSteps>(e: &mut E, r: E::V, y: E::V, zero: E::V) -> E::V {
    let nonzero = e.fcmp(BinOp::Ne, r.clone(), zero.clone());
    let r_neg = e.fcmp(BinOp::Lt, r.clone(), zero.clone());
    let y_neg = e.fcmp(BinOp::Lt, y.clone(), zero);
    let differ = e.xor(r_neg, y_neg);
    let adjust = e.and(nonzero, differ);
    let shifted = e.fadd(r.clone(), y);
    e.select(adjust, shifted, r)
}

/// Float `x % y` (floored) at float type `t`, from the target's `fmod` (`x %% y` is that step
/// alone).
pub fn float_mod<E: Fmod>(e: &mut E, t: PrimType, x: E::V, y: E::V) -> E::V {
    let zero = e.float_const(t, 0.0);
    let r = e.fmod(t, x, y.clone());
    float_floor(e, r, y, zero)
}

/// Float `x % y` (floored: `op` is `Mod`) or `x %% y` (truncated, C's `fmod`: `Rem`) at float
/// type `t`, inline when both are integers below `2^53` in magnitude (`2^24` for `f32`) and
/// `y != 0`, as in a season's angle `(j·t) % f`: then the rounded quotient truncates to the
/// exact one (it is at least `1/|y|` from the next integer, farther than its rounding error),
/// `y·q` and `x - y·q` are exact integers, and the difference with `x`'s sign is `fmod`'s result
/// bit for bit (a zero too); the floored form then adjusts it as [`float_mod`] does. Other
/// operands (fractions, infinities, NaN, zero divisors, huge values) take the reference.
pub fn float_remainder_inline<E: InlineFmod>(
    e: &mut E,
    op: BinOp,
    t: PrimType,
    x: E::V,
    y: E::V,
) -> E::V {
    let exact = if t == PrimType::F32 {
        16_777_216.0
    } else {
        9_007_199_254_740_992.0
    };
    let (limit, zero) = (e.float_const(t, exact), e.float_const(t, 0.0));
    let (xt, yt) = (e.trunc(x.clone()), e.trunc(y.clone()));
    let x_whole = e.fcmp(BinOp::Eq, x.clone(), xt);
    let y_whole = e.fcmp(BinOp::Eq, y.clone(), yt);
    let x_abs = e.fabs(x.clone());
    let y_abs = e.fabs(y.clone());
    let x_small = e.fcmp(BinOp::Lt, x_abs, limit.clone());
    let y_small = e.fcmp(BinOp::Lt, y_abs, limit);
    let small = e.and(x_small, y_small);
    let divides = e.fcmp(BinOp::Ne, y.clone(), zero.clone());
    let whole = e.and(x_whole, y_whole);
    let exact = e.and(small, divides);
    let fast = e.and(whole, exact);
    let (xi, yi) = (x.clone(), y.clone());
    let inline = move |e: &mut E| {
        let q = e.fdiv(xi.clone(), yi.clone());
        let q = e.trunc(q);
        let yq = e.fmul(yi.clone(), q);
        let r = e.fsub(xi.clone(), yq);
        let r = e.copysign(r, xi);
        if op == BinOp::Mod {
            float_floor(e, r, yi, zero)
        } else {
            r
        }
    };
    e.or_reference(t, fast, inline, (op, x, y))
}

/// Float `x` (of type `from`) converted to integer type `to`: truncated towards zero, `lo` at
/// or below `lo`, `hi` at or above `hi`, 0 for NaN (`lo` and `hi` are `to`'s bounds, as
/// integers). The truncation sees `x` only strictly between the bounds (each rounded to
/// `from`), where it is defined everywhere, and 0 otherwise.
pub fn float_to_int<E: FloatToInt>(
    e: &mut E,
    (from, to): (PrimType, PrimType),
    x: E::V,
    (lo, hi): (E::V, E::V),
) -> E::V {
    let lo_f = e.to_float(from, lo.clone());
    let hi_f = e.to_float(from, hi.clone());
    let above_lo = e.fcmp(BinOp::Gt, x.clone(), lo_f.clone());
    let below_hi = e.fcmp(BinOp::Lt, x.clone(), hi_f.clone());
    let inside = e.and(above_lo, below_hi);
    let zero = e.float_const(from, 0.0);
    let safe = e.select(inside, x.clone(), zero);
    let truncated = e.truncate(to, safe);
    let high = e.fcmp(BinOp::Ge, x.clone(), hi_f);
    let capped = e.select(high, hi, truncated);
    let low = e.fcmp(BinOp::Le, x, lo_f);
    e.select(low, lo, capped)
}

#[cfg(test)]
mod tests;
