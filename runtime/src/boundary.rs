//! The types of values crossing the entry-point boundary, and checking values against them.
//!
//! An entry point's parameter and result types ([`Type`]) are seen by callers as
//! [`BoundaryType`]s, the shape of a [`Value`]: a scalar, a flat array of scalars with one size
//! per dimension, or a tuple. Records become tuples (fields in sorted name order) and arrays of
//! tuples or records become tuples of arrays (Futhark's convention), so `[n](i32, {a: f32})` is
//! `([n]i32, ([n]f32))`. Polymorphic, function and not-yet-inferred types cannot cross.
//! Textual values are typed against boundary types ([`crate::text::TextValue::coerce`]).
//!
//! `check_arguments` is every executor's check of an entry point's arguments (the reference
//! interpreter's and the IR evaluator's, which runs the host code of the CPU and CUDA
//! executors): their number (E0611), each one's type, rank and constant sizes (E0612), the
//! sizes named by several parameters (E0613); [`no_entry`] is the error for a missing entry
//! point (E0610). The executors then convert the checked values to their own.

use crate::error::{E_ARG_COUNT, E_ARG_SIZE, E_ARG_TYPE, E_NO_ENTRY, Res, error};
use crate::value::Value;
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;
use ogham_ir::types::{PrimType, Size, Type};
use std::collections::HashMap;
use std::fmt;

/// The error of a call of entry point `entry` of a program whose entry points are `names`.
pub fn no_entry<'a>(entry: &str, names: impl Iterator<Item = &'a str>) -> Box<Diagnostic> {
    let names: Vec<&str> = names.collect();
    let d = Diagnostic::error(
        E_NO_ENTRY,
        format!("the program has no entry point `{entry}`"),
    );
    Box::new(if names.is_empty() {
        d.with_help("declare one with `entry main (...) = ...`")
    } else {
        d.with_note(format!("entry points: {}", names.join(", ")))
    })
}

/// Checks the arguments `args` of entry point `entry`, whose parameters are `params` (names and
/// types) and whose declaration is at `span` (where the errors point). Arguments must match the
/// parameter types exactly: element type, rank and constant sizes, and a size parameter (`[n]`)
/// must have the same value in every argument it appears in. Tuples and records are
/// [`Value::Tuple`]s (record fields in name order); arrays of tuples or records are tuples of
/// arrays, one per component, all with the same outer shape. Parameters are checked in order,
/// each one's components in order, and the first error is reported.
pub fn check_arguments(
    entry: &str,
    params: &[(String, Type)],
    span: Span,
    args: &[Value],
) -> Res<()> {
    if args.len() != params.len() {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        return Err(error(
            E_ARG_COUNT,
            span,
            format!(
                "entry point `{entry}` takes {} argument{}, but {} {} given",
                params.len(),
                plural(params.len()),
                args.len(),
                if args.len() == 1 { "was" } else { "were" }
            ),
        ));
    }
    let mut sizes = Sizes {
        span,
        seen: HashMap::new(),
    };
    for ((pname, ty), arg) in params.iter().zip(args) {
        sizes.check(&[], ty, arg, pname).map_err(|e| match e {
            ArgError::Type => error(
                E_ARG_TYPE,
                span,
                format!(
                    "expected {ty} for parameter {pname}, got {}",
                    arg.describe()
                ),
            ),
            ArgError::Size(d) => d,
        })?;
    }
    Ok(())
}

enum ArgError {
    /// The argument does not have the parameter's type.
    Type,
    /// A size parameter with different values in two arguments.
    Size(Box<Diagnostic>),
}

/// The sizes fixed by the arguments checked so far.
struct Sizes<'p> {
    /// The entry point's declaration.
    span: Span,
    /// Size name -> (length, parameter that fixed it).
    seen: HashMap<&'p str, (usize, &'p str)>,
}

impl<'p> Sizes<'p> {
    fn check_dim(&mut self, size: &'p Size, actual: usize, param: &'p str) -> Result<(), ArgError> {
        match size {
            Size::Const(n) if *n != actual as u64 => Err(ArgError::Type),
            Size::Var(name) => match self.seen.get(name.as_str()) {
                Some(&(n, other)) if n != actual => Err(ArgError::Size(error(
                    E_ARG_SIZE,
                    self.span,
                    format!(
                        "size `{name}` is {n} in parameter {other} but {actual} in parameter {param}"
                    ),
                ))),
                Some(_) => Ok(()),
                None => {
                    self.seen.insert(name, (actual, param));
                    Ok(())
                }
            },
            _ => Ok(()),
        }
    }

    /// Checks `v` against the type `[dims]elem`; returns its outer shape (`dims.len()` sizes).
    fn check(
        &mut self,
        dims: &[&'p Size],
        elem: &'p Type,
        v: &Value,
        param: &'p str,
    ) -> Result<Vec<usize>, ArgError> {
        match (elem, v) {
            (Type::Array(inner, size), v) => {
                let mut dims = dims.to_vec();
                dims.push(size);
                self.check(&dims, inner, v, param)
            }
            (Type::Prim(p), Value::Scalar(s)) if dims.is_empty() && s.prim_type() == *p => {
                Ok(Vec::new())
            }
            (Type::Prim(p), Value::Array(a))
                if !dims.is_empty() && a.elem_type() == *p && a.rank() == dims.len() =>
            {
                for (size, &actual) in dims.iter().zip(a.shape()) {
                    self.check_dim(size, actual, param)?;
                }
                Ok(a.shape().to_vec())
            }
            (Type::Tuple(ts), Value::Tuple(vs)) if ts.len() == vs.len() => {
                self.components(dims, ts.iter(), vs, param)
            }
            (Type::Record(fs), Value::Tuple(vs)) if fs.len() == vs.len() => {
                self.components(dims, fs.iter().map(|(_, t)| t), vs, param)
            }
            _ => Err(ArgError::Type),
        }
    }

    /// Checks the components `vs` of a tuple or record of type `[dims](types)`: with `dims`,
    /// an array of tuples, whose component arrays must have the same outer shape (sizes the
    /// type leaves unknown, `[]`, included); returns it.
    fn components(
        &mut self,
        dims: &[&'p Size],
        types: impl Iterator<Item = &'p Type>,
        vs: &[Value],
        param: &'p str,
    ) -> Result<Vec<usize>, ArgError> {
        let shapes = types
            .zip(vs)
            .map(|(t, v)| self.check(dims, t, v, param))
            .collect::<Result<Vec<_>, _>>()?;
        if dims.is_empty() {
            return Ok(Vec::new());
        }
        let outer = |shape: &[usize]| shape.get(..dims.len()).map(<[usize]>::to_vec);
        let first = shapes
            .first()
            .and_then(|s| outer(s))
            .ok_or(ArgError::Type)?;
        if shapes.iter().any(|s| outer(s).as_ref() != Some(&first)) {
            return Err(ArgError::Type);
        }
        Ok(first)
    }
}

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

    fn f32s(n: usize) -> Value {
        Value::Array(crate::value::Array::from_f32(vec![n], vec![0.0; n]).unwrap())
    }

    fn i32s(n: usize) -> Value {
        let data = crate::value::ArrayData::I32(vec![0; n].into());
        Value::Array(crate::value::Array::new(vec![n], data).unwrap())
    }

    /// The code and message of checking `args` against `params`.
    fn check(params: &[(&str, Type)], args: &[Value]) -> Option<(&'static str, String)> {
        let params: Vec<(String, Type)> = params
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect();
        check_arguments("main", &params, Span::default(), args)
            .err()
            .map(|d| (d.code, d.message.clone()))
    }

    #[test]
    fn arguments_are_checked_in_order() {
        let n = || Size::Var("n".into());
        let xs = ("xs", Type::array(Type::Prim(PrimType::F32), n()));
        let ys = ("ys", Type::array(Type::Prim(PrimType::F32), n()));
        assert_eq!(check(&[xs.clone(), ys.clone()], &[f32s(2), f32s(2)]), None);
        assert_eq!(
            check(&[xs.clone(), ys.clone()], &[f32s(2)]),
            Some((
                E_ARG_COUNT,
                "entry point `main` takes 2 arguments, but 1 was given".into()
            ))
        );
        assert_eq!(
            check(&[xs.clone(), ys.clone()], &[f32s(2), f32s(3)]),
            Some((
                E_ARG_SIZE,
                "size `n` is 2 in parameter xs but 3 in parameter ys".into()
            ))
        );
        assert_eq!(
            check(&[xs.clone(), ys], &[i32s(2), f32s(3)]),
            Some((
                E_ARG_TYPE,
                "expected [n]f32 for parameter xs, got [2]i32".into()
            ))
        );
        let three = ("c", Type::array(Type::Prim(PrimType::F32), Size::Const(3)));
        assert_eq!(check(&[three], &[f32s(2)]).map(|e| e.0), Some(E_ARG_TYPE));
    }

    #[test]
    fn components_of_an_array_of_tuples_have_one_outer_shape() {
        let pairs = Type::array(
            Type::Tuple(vec![Type::Prim(PrimType::I32), Type::Prim(PrimType::F32)]),
            Size::Unknown(0),
        );
        let params = [("xs", pairs)];
        assert_eq!(
            check(&params, &[Value::Tuple(vec![i32s(3), f32s(3)])]),
            None
        );
        assert_eq!(
            check(&params, &[Value::Tuple(vec![i32s(3), f32s(2)])]),
            Some((
                E_ARG_TYPE,
                "expected [](i32, f32) for parameter xs, got ([3]i32, [2]f32)".into()
            ))
        );
    }

    #[test]
    fn a_missing_entry_point_lists_the_others() {
        let d = no_entry("other", ["main", "scale"].into_iter());
        assert_eq!(d.code, E_NO_ENTRY);
        assert_eq!(d.notes, vec!["entry points: main, scale".to_string()]);
        assert!(no_entry("main", std::iter::empty()).help.is_some());
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
