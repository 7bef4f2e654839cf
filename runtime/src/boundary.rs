//! The types of values crossing the entry-point boundary, and checking values against them.
//!
//! An entry point's parameter and result types ([`Type`]) are seen by callers as
//! [`BoundaryType`]s, the shape of a [`Value`]: a scalar, a flat array of scalars with one size
//! per dimension, or a tuple. Records become tuples (fields in sorted name order) and arrays of
//! tuples or records become tuples of arrays (Futhark's convention), so `[n](i32, {a: f32})` is
//! `([n]i32, ([n]f32))`. Polymorphic, function and not-yet-inferred types cannot cross.
//! Textual values are typed against boundary types ([`crate::text::TextValue::coerce`]); the
//! backends check that argument values fit their parameters (sizes included).

use ogham_ir::types::{PrimType, Size, Type};
use std::fmt;

/// A type as seen by callers of an entry point.
#[derive(Clone, Debug, PartialEq)]
pub enum BoundaryType {
    Scalar(PrimType),
    /// An array of scalars; `dims` is non-empty, outermost first.
    Array {
        elem: PrimType,
        dims: Vec<Size>,
    },
    Tuple(Vec<BoundaryType>),
}

impl BoundaryType {
    /// The boundary form of `t`, or a message saying why `t` cannot cross the boundary.
    pub fn of(t: &Type) -> Result<BoundaryType, String> {
        match t {
            Type::Prim(p) => Ok(BoundaryType::Scalar(*p)),
            Type::Array(elem, size) => Ok(BoundaryType::of(elem)?.outer(size)),
            Type::Tuple(ts) => Ok(BoundaryType::Tuple(
                ts.iter().map(BoundaryType::of).collect::<Result<_, _>>()?,
            )),
            Type::Record(fields) => Ok(BoundaryType::Tuple(
                fields
                    .iter()
                    .map(|(_, t)| BoundaryType::of(t))
                    .collect::<Result<_, _>>()?,
            )),
            Type::Fun(..) => Err(format!(
                "a function (`{t}`) cannot be passed to or returned from an entry point"
            )),
            Type::Param(_) | Type::Var(_) => Err(format!(
                "the polymorphic type `{t}` cannot be passed to or returned from an entry point"
            )),
        }
    }

    /// The components of a tuple, recursively (a non-tuple is its own only component): the
    /// values callers see for one output, Futhark's convention.
    pub fn components(&self) -> Vec<&BoundaryType> {
        match self {
            BoundaryType::Tuple(ts) => ts.iter().flat_map(BoundaryType::components).collect(),
            t => vec![t],
        }
    }

    /// An array of `self` with outer size `size`; arrays of tuples become tuples of arrays.
    fn outer(self, size: &Size) -> BoundaryType {
        match self {
            BoundaryType::Scalar(elem) => BoundaryType::Array {
                elem,
                dims: vec![size.clone()],
            },
            BoundaryType::Array { elem, mut dims } => {
                dims.insert(0, size.clone());
                BoundaryType::Array { elem, dims }
            }
            BoundaryType::Tuple(ts) => {
                BoundaryType::Tuple(ts.into_iter().map(|t| t.outer(size)).collect())
            }
        }
    }
}

impl fmt::Display for BoundaryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundaryType::Scalar(p) => write!(f, "{p}"),
            BoundaryType::Array { elem, dims } => {
                for d in dims {
                    write!(f, "[{d}]")?;
                }
                write!(f, "{elem}")
            }
            BoundaryType::Tuple(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_keep_their_sizes() {
        let row = Type::array(Type::Prim(PrimType::F32), Size::Const(3));
        let t = Type::array(row, Size::Var("n".into()));
        assert_eq!(BoundaryType::of(&t).unwrap().to_string(), "[n][3]f32");
    }

    #[test]
    fn arrays_of_tuples_become_tuples_of_arrays() {
        let t = Type::array(
            Type::Tuple(vec![
                Type::Prim(PrimType::I32),
                Type::Record(vec![("a".into(), Type::Prim(PrimType::F32))]),
            ]),
            Size::Var("n".into()),
        );
        assert_eq!(
            BoundaryType::of(&t).unwrap().to_string(),
            "([n]i32, ([n]f32))"
        );
    }

    #[test]
    fn functions_cannot_cross() {
        let t = Type::Fun(
            Box::new(Type::Prim(PrimType::I32)),
            Box::new(Type::Prim(PrimType::I32)),
        );
        assert!(BoundaryType::of(&t).unwrap_err().contains("function"));
    }
}
