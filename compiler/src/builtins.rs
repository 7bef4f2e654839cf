//! The built-in functions and constants of Ogham: their names and how a name resolves to one.
//!
//! The type checker gives each [`Builtin`] its (polymorphic, sized) type; the interpreter gives it
//! its meaning; `docs/reference.md` documents each one. Names are either plain (`map`, `iota`,
//! `sqrt`) or qualified by a numeric module (`f32.sqrt`, `f32.i64`, `i64.max`, `f64.nan`).
//! Plain math names (`sqrt`, `min`, ...) are overloaded over the numeric types, like operators.
//! The math functions and constants, which reach the IR, are `ogham_ir::math`'s ([`MathFn`],
//! [`ConstFn`], with their names); the others are the front end's alone.

use crate::syntax::ast::QualName;
use ogham_ir::math::{CONST_NAMES, ConstFn, MATH_FN_NAMES, MathFn};
use ogham_ir::types::{PrimType, Type};

/// Array built-ins (second-order array combinators and array shape functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayFn {
    /// `map f xs` (arity 1) and `map2 f xs ys` .. `map5` (arity 2..5).
    Map(u8),
    Reduce,
    ReduceComm,
    Scan,
    Scatter,
    /// `hist op ne k is vs` (also spelled `reduce_by_index dest op ne is vs`, see docs).
    Hist,
    ReduceByIndex,
    Filter,
    Partition,
    Iota,
    Replicate,
    /// `zip` (2) .. `zip4`.
    Zip(u8),
    /// `unzip` (2) .. `unzip4`.
    Unzip(u8),
    Transpose,
    Flatten,
    Unflatten,
    Concat,
    Reverse,
    Length,
    Rotate,
    Copy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Array(ArrayFn),
    /// `ty` is `Some` for the qualified form (`f32.sqrt`) and `None` for the overloaded plain
    /// form (`sqrt`).
    Math {
        op: MathFn,
        ty: Option<PrimType>,
    },
    /// `f32.i64 x`: convert an `i64` to `f32` (the module names the result type).
    Convert {
        to: PrimType,
        from: PrimType,
    },
    Const {
        op: ConstFn,
        ty: PrimType,
    },
    /// A conversion or constant whose type is a constrained type parameter: `t.i64 n`,
    /// `f64.t x`, `t.nan` with `('t: float)` in scope. Each use is turned into the concrete
    /// built-in by [`Builtin::specialise`] once the parameter's value is known.
    Generic(GenericFn),
}

/// The built-ins of a type parameter's module (see [`Builtin::Generic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenericFn {
    /// A conversion between two types of which at least one is a type parameter.
    Convert,
    Const(ConstFn),
}

impl Builtin {
    /// The number of arguments the built-in takes.
    pub fn arity(self) -> usize {
        match self {
            Builtin::Array(f) => match f {
                ArrayFn::Map(k) => k as usize + 1,
                ArrayFn::Zip(k) => k as usize,
                ArrayFn::Reduce | ArrayFn::ReduceComm | ArrayFn::Scan | ArrayFn::Scatter => 3,
                ArrayFn::Unflatten => 3,
                ArrayFn::Hist | ArrayFn::ReduceByIndex => 5,
                ArrayFn::Filter | ArrayFn::Partition | ArrayFn::Replicate => 2,
                ArrayFn::Concat | ArrayFn::Rotate => 2,
                ArrayFn::Iota
                | ArrayFn::Unzip(_)
                | ArrayFn::Transpose
                | ArrayFn::Flatten
                | ArrayFn::Reverse
                | ArrayFn::Length
                | ArrayFn::Copy => 1,
            },
            Builtin::Math { op, .. } => op.arity(),
            Builtin::Convert { .. } => 1,
            Builtin::Const { .. } | Builtin::Generic(GenericFn::Const(_)) => 0,
            Builtin::Generic(GenericFn::Convert) => 1,
        }
    }

    /// The concrete built-in a use of a generic one denotes, given the use's type with every
    /// type parameter replaced by its value (`f32 -> f64` for a conversion, `f32` for a
    /// constant); `None` if that type is not one the built-in can have. Other built-ins are
    /// returned unchanged.
    pub fn specialise(self, use_type: &Type) -> Option<Builtin> {
        match (self, use_type) {
            (Builtin::Generic(GenericFn::Convert), Type::Fun(from, to)) => match (&**from, &**to) {
                (Type::Prim(from), Type::Prim(to)) => Some(Builtin::Convert {
                    to: *to,
                    from: *from,
                }),
                _ => None,
            },
            (Builtin::Generic(GenericFn::Const(op)), Type::Prim(ty)) => {
                Some(Builtin::Const { op, ty: *ty })
            }
            (Builtin::Generic(_), _) => None,
            (b, _) => Some(b),
        }
    }
}

const ARRAY_FNS: &[(&str, ArrayFn)] = &[
    ("map", ArrayFn::Map(1)),
    ("map1", ArrayFn::Map(1)),
    ("map2", ArrayFn::Map(2)),
    ("map3", ArrayFn::Map(3)),
    ("map4", ArrayFn::Map(4)),
    ("map5", ArrayFn::Map(5)),
    ("reduce", ArrayFn::Reduce),
    ("reduce_comm", ArrayFn::ReduceComm),
    ("scan", ArrayFn::Scan),
    ("scatter", ArrayFn::Scatter),
    ("hist", ArrayFn::Hist),
    ("reduce_by_index", ArrayFn::ReduceByIndex),
    ("filter", ArrayFn::Filter),
    ("partition", ArrayFn::Partition),
    ("iota", ArrayFn::Iota),
    ("replicate", ArrayFn::Replicate),
    ("zip", ArrayFn::Zip(2)),
    ("zip2", ArrayFn::Zip(2)),
    ("zip3", ArrayFn::Zip(3)),
    ("zip4", ArrayFn::Zip(4)),
    ("unzip", ArrayFn::Unzip(2)),
    ("unzip2", ArrayFn::Unzip(2)),
    ("unzip3", ArrayFn::Unzip(3)),
    ("unzip4", ArrayFn::Unzip(4)),
    ("transpose", ArrayFn::Transpose),
    ("flatten", ArrayFn::Flatten),
    ("unflatten", ArrayFn::Unflatten),
    ("concat", ArrayFn::Concat),
    ("reverse", ArrayFn::Reverse),
    ("length", ArrayFn::Length),
    ("rotate", ArrayFn::Rotate),
    ("copy", ArrayFn::Copy),
];

/// Resolves a name that is not bound by the program to a built-in, if it is one.
/// Local and top-level definitions shadow plain built-in names; qualified names (`f32.sqrt`)
/// always denote built-ins.
pub fn resolve(name: &QualName) -> Option<Builtin> {
    match &name.qualifier {
        None => {
            let n = name.name.as_str();
            if let Some((_, f)) = ARRAY_FNS.iter().find(|(s, _)| *s == n) {
                return Some(Builtin::Array(*f));
            }
            MATH_FN_NAMES
                .iter()
                .find(|(s, _)| *s == n)
                .map(|(_, op)| Builtin::Math { op: *op, ty: None })
        }
        Some(q) => {
            let ty = PrimType::from_name(q)?;
            let n = name.name.as_str();
            if let Some(from) = PrimType::from_name(n) {
                return Some(Builtin::Convert { to: ty, from });
            }
            if let Some((_, op)) = MATH_FN_NAMES.iter().find(|(s, _)| *s == n) {
                let ok = ty != PrimType::Bool && (ty.is_float() || !op.float_only());
                return ok.then_some(Builtin::Math {
                    op: *op,
                    ty: Some(ty),
                });
            }
            let (_, op) = CONST_NAMES.iter().find(|(s, _)| *s == n)?;
            let ok = ty != PrimType::Bool && (ty.is_float() || !op.float_only());
            ok.then_some(Builtin::Const { op: *op, ty })
        }
    }
}

/// The math function or constant `name` of a numeric module, for a type parameter's module
/// (`t.sqrt`, `t.nan`); whether it needs a floating-point type is asked of it
/// ([`MathFn::float_only`], [`ConstFn::float_only`]).
pub fn module_member(name: &str) -> Option<Result<MathFn, ConstFn>> {
    if let Some((_, op)) = MATH_FN_NAMES.iter().find(|(s, _)| *s == name) {
        return Some(Ok(*op));
    }
    CONST_NAMES
        .iter()
        .find(|(s, _)| *s == name)
        .map(|(_, c)| Err(*c))
}

/// All plain built-in names (for "did you mean" suggestions and the reference docs).
pub fn plain_names() -> impl Iterator<Item = &'static str> {
    ARRAY_FNS
        .iter()
        .map(|(s, _)| *s)
        .chain(MATH_FN_NAMES.iter().map(|(s, _)| *s))
}

/// All names a numeric module provides (`sqrt`, `i64` (conversion), `nan`, ...).
pub fn module_member_names(ty: PrimType) -> Vec<String> {
    let mut out: Vec<String> = PrimType::ALL.iter().map(|p| p.name().to_string()).collect();
    for (s, op) in MATH_FN_NAMES {
        if ty.is_float() || !op.float_only() {
            out.push(s.to_string());
        }
    }
    for (s, op) in CONST_NAMES {
        if ty.is_float() || !op.float_only() {
            out.push(s.to_string());
        }
    }
    out
}
