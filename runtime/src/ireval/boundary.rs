//! Entry-point arguments and results of the IR evaluator: source-level values (tuples, arrays
//! of tuples as tuples of arrays), checked by the runtime's one check
//! ([`crate::boundary::check_arguments`]), to and from the IR function's flat parameters and
//! results.

use super::eval::Val;
use super::eval::{Array, Store};
use crate::boundary::{BoundaryType, check_arguments};
use crate::error::{R_INTERNAL, Res, error};
use crate::value::{Array as OutArray, Scalar, Value};
use ogham_ir::source::Span;
use ogham_ir::{Const, Form, Function, SubExp, Type, VarId};
use std::collections::HashMap;

/// Checks `args` against the function's signature and spreads them over its flat parameters;
/// size parameters are bound from the arguments' shapes.
pub fn bind_arguments<F: Form>(function: &Function<F>, args: Vec<Value>) -> Res<Vec<(VarId, Val)>> {
    let sig = &function.signature;
    let span = function.loc;
    check_arguments(&function.name, &sig.params, span, &args)?;
    let internal = || {
        error(
            R_INTERNAL,
            span,
            "the IR function's parameters do not match its signature",
        )
    };
    let mut flat = Vec::new();
    for ((_, ty), arg) in sig.params.iter().zip(args) {
        let expected = BoundaryType::of(ty).map_err(|_| internal())?;
        spread(&expected, arg, &mut flat).ok_or_else(internal)?;
    }
    if flat.len() != function.params.len() {
        return Err(internal());
    }
    let mut sizes: HashMap<VarId, usize> = HashMap::new();
    let mut bound = Vec::new();
    for (param, value) in function.params.iter().zip(flat) {
        let val = match (function.ty(param.var), value) {
            (Type::Prim(p), Value::Scalar(s)) if s.prim_type() == *p => Val::Prim(s),
            (Type::Array { elem, shape }, Value::Array(a))
                if a.elem_type() == *elem && a.rank() == shape.len() =>
            {
                for (dim, &actual) in shape.iter().zip(a.shape()) {
                    match *dim {
                        SubExp::Const(Const::I64(n)) if n as usize != actual => {
                            return Err(internal());
                        }
                        SubExp::Var(size) => match sizes.get(&size) {
                            Some(&n) if n != actual => return Err(internal()),
                            Some(_) => {}
                            None => {
                                sizes.insert(size, actual);
                                bound.push((size, Val::Prim(Scalar::I64(actual as i64))));
                            }
                        },
                        _ => {}
                    }
                }
                let (shape, data) = a.into_parts();
                Val::Array(Array::new(shape, Store::Prim(data)))
            }
            _ => return Err(internal()),
        };
        bound.push((param.var, val));
    }
    Ok(bound)
}

/// The scalar and array components of `value`, which must have the boundary type `ty`.
fn spread(ty: &BoundaryType, value: Value, out: &mut Vec<Value>) -> Option<()> {
    match (ty, value) {
        (BoundaryType::Tuple(ts), Value::Tuple(vs)) if ts.len() == vs.len() => {
            for (t, v) in ts.iter().zip(vs) {
                spread(t, v, out)?;
            }
            Some(())
        }
        (BoundaryType::Tuple(_), _) | (_, Value::Tuple(_)) => None,
        (_, v) => {
            out.push(v);
            Some(())
        }
    }
}

/// Gathers the function's flat results into the signature's results (tuples rebuilt).
pub fn gather_results<F: Form>(function: &Function<F>, results: Vec<Val>) -> Res<Vec<Value>> {
    let internal = |m: &str| error(R_INTERNAL, Span::default(), m.to_string());
    let mut flat = results.into_iter();
    let mut outputs = Vec::new();
    for ty in &function.signature.results {
        let bt = BoundaryType::of(ty).map_err(|m| internal(&m))?;
        outputs.push(rebuild(&bt, &mut flat).ok_or_else(|| internal("result of the wrong type"))?);
    }
    if flat.next().is_some() {
        return Err(internal("more results than the signature has"));
    }
    Ok(outputs)
}

fn rebuild(ty: &BoundaryType, flat: &mut impl Iterator<Item = Val>) -> Option<Value> {
    match ty {
        BoundaryType::Tuple(ts) => Some(Value::Tuple(
            ts.iter().map(|t| rebuild(t, flat)).collect::<Option<_>>()?,
        )),
        _ => to_value(flat.next()?),
    }
}

/// An evaluator value as a boundary value (an array's store taken over when it is all of it
/// and not shared, else its elements copied out).
pub fn to_value(v: Val) -> Option<Value> {
    match v {
        Val::Prim(s) => Some(Value::Scalar(s)),
        Val::Array(a) => {
            let shape = a.shape().to_vec();
            match a.into_store() {
                Store::Prim(data) => OutArray::new(shape, data).map(Value::Array),
                Store::Boxed(_) => None,
            }
        }
        _ => None,
    }
}
