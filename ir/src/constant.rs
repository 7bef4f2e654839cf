//! Scalar constants of the IR ([`Const`]): their types, integer values and bits, and how they
//! are stored in compiled libraries (type and bits, so that NaN and the infinities survive
//! formats without them).
//!
//! Invariant: equality and hashing are on the type and the bit pattern, never on the float
//! value, so `NaN == NaN` and `0.0 != -0.0` here.

use crate::types::PrimType;
use std::hash::{Hash, Hasher};

/// A scalar constant. Equality and hashing are on the bit pattern (so `NaN == NaN` here, which
/// is what CSE and constant folding want).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
#[serde(into = "ConstBits", from = "ConstBits")]
pub enum Const {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    F32(f32),
    F64(f64),
}

impl Const {
    /// The zero of type `ty`: all bits clear (`false`, `0`, `+0.0`).
    pub fn zero(ty: PrimType) -> Const {
        Const::from(ConstBits { ty, bits: 0 })
    }

    pub fn prim_type(self) -> PrimType {
        match self {
            Const::Bool(_) => PrimType::Bool,
            Const::I8(_) => PrimType::I8,
            Const::I16(_) => PrimType::I16,
            Const::I32(_) => PrimType::I32,
            Const::I64(_) => PrimType::I64,
            Const::U8(_) => PrimType::U8,
            Const::F32(_) => PrimType::F32,
            Const::F64(_) => PrimType::F64,
        }
    }

    /// The value of an integer constant (`None` for a float or a `bool`).
    pub fn int_value(self) -> Option<i128> {
        match self {
            Const::I8(x) => Some(x.into()),
            Const::I16(x) => Some(x.into()),
            Const::I32(x) => Some(x.into()),
            Const::I64(x) => Some(x.into()),
            Const::U8(x) => Some(x.into()),
            Const::Bool(_) | Const::F32(_) | Const::F64(_) => None,
        }
    }

    /// The value's bits, zero-extended (floats: their IEEE bit pattern).
    pub fn bits(self) -> u64 {
        match self {
            Const::Bool(b) => b as u64,
            Const::I8(x) => x as u8 as u64,
            Const::I16(x) => x as u16 as u64,
            Const::I32(x) => x as u32 as u64,
            Const::I64(x) => x as u64,
            Const::U8(x) => x as u64,
            Const::F32(x) => x.to_bits() as u64,
            Const::F64(x) => x.to_bits(),
        }
    }
}

/// How a [`Const`] is stored (compiled libraries): its type and bits, so that NaN and the
/// infinities survive formats without them (JSON).
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct ConstBits {
    ty: PrimType,
    bits: u64,
}

impl From<Const> for ConstBits {
    fn from(c: Const) -> ConstBits {
        ConstBits {
            ty: c.prim_type(),
            bits: c.bits(),
        }
    }
}

impl From<ConstBits> for Const {
    fn from(c: ConstBits) -> Const {
        let b = c.bits;
        match c.ty {
            PrimType::Bool => Const::Bool(b != 0),
            PrimType::I8 => Const::I8(b as u8 as i8),
            PrimType::I16 => Const::I16(b as u16 as i16),
            PrimType::I32 => Const::I32(b as u32 as i32),
            PrimType::I64 => Const::I64(b as i64),
            PrimType::U8 => Const::U8(b as u8),
            PrimType::F32 => Const::F32(f32::from_bits(b as u32)),
            PrimType::F64 => Const::F64(f64::from_bits(b)),
        }
    }
}

impl PartialEq for Const {
    fn eq(&self, other: &Const) -> bool {
        self.prim_type() == other.prim_type() && self.bits() == other.bits()
    }
}

impl Eq for Const {}

impl Hash for Const {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.prim_type().hash(state);
        self.bits().hash(state);
    }
}
