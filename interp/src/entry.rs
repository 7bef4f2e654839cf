//! The entry-point boundary: converting arguments, checked by the runtime's one check
//! ([`ogham_runtime::boundary::check_arguments`]), to interpreter values, and results back.
//!
//! Tuples and records are [`Value::Tuple`]s (record fields in name order); arrays of tuples or
//! records are tuples of arrays, one per component, all with the same outer shape (Futhark's
//! convention), which become arrays of the interpreter's tuple or record values.

use super::eval::Interp;
use super::value::{Array, Builder, Store, Val};
use ogham_compiler::typeck::EntryPoint;
use ogham_ir::types::{Size, Type};
use ogham_runtime::boundary::{check_arguments, no_entry};
use ogham_runtime::error::{R_INTERNAL, Res, error};
use ogham_runtime::value::{Array as OutArray, ArrayData, Value};

/// Runs entry point `name` of the root module.
pub fn run<'a>(
    interp: &Interp<'a>,
    entries: &'a [EntryPoint],
    name: &str,
    args: Vec<Value>,
) -> Res<Vec<Value>> {
    let Some(ep) = entries.iter().find(|e| e.name == name) else {
        return Err(no_entry(name, entries.iter().map(|e| e.name.as_str())));
    };
    check_arguments(name, &ep.params, ep.span, &args)?;
    let vals = ep
        .params
        .iter()
        .zip(args)
        .map(|((_, ty), arg)| convert(0, ty, arg))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            error(
                R_INTERNAL,
                ep.span,
                "a checked argument does not fit its parameter",
            )
        })?;
    let root = interp.program.modules.len().saturating_sub(1);
    let f = interp.def_value(root, ep.decl, Default::default(), ep.span)?;
    let result = interp.apply(f, vals, ep.span)?;
    let outputs = match (ep.results.len(), result) {
        (1, v) => vec![v],
        (k, Val::Tuple(vs)) if vs.len() == k => vs.to_vec(),
        (_, v) => {
            return Err(error(
                R_INTERNAL,
                ep.span,
                format!("entry point returned {}", v.describe()),
            ));
        }
    };
    ep.results
        .iter()
        .zip(outputs)
        .map(|(ty, v)| {
            let desc = v.describe();
            output(&[], ty, v).ok_or_else(|| {
                error(
                    R_INTERNAL,
                    ep.span,
                    format!("result {desc} is not a value of type {ty}"),
                )
            })
        })
        .collect()
}

/// Converts a checked argument of type `[d1]..[d_outer]elem`; `None` if it does not have that
/// type.
fn convert<'a>(outer: usize, elem: &'a Type, v: Value) -> Option<Val<'a>> {
    match (elem, v) {
        (Type::Array(inner, _), v) => convert(outer + 1, inner, v),
        (Type::Prim(_), Value::Scalar(s)) => Some(Val::Prim(s)),
        (Type::Prim(_), Value::Array(a)) => {
            let (shape, data) = a.into_parts();
            Some(Val::Array(Array::new(shape, Store::Prim(data))))
        }
        (Type::Tuple(ts), Value::Tuple(vs)) => {
            let parts = ts
                .iter()
                .zip(vs)
                .map(|(t, v)| convert(outer, t, v))
                .collect::<Option<Vec<_>>>()?;
            if outer == 0 {
                return Some(Val::tuple(parts));
            }
            let (shape, rows) = zip_components(outer, &parts)?;
            Some(Val::Array(Array::new(
                shape,
                Store::Boxed(rows.into_iter().map(Val::tuple).collect()),
            )))
        }
        (Type::Record(fs), Value::Tuple(vs)) => {
            let parts = fs
                .iter()
                .zip(vs)
                .map(|((_, t), v)| convert(outer, t, v))
                .collect::<Option<Vec<_>>>()?;
            let names = fs.iter().map(|(n, _)| n.as_str());
            if outer == 0 {
                return Some(Val::record(names.zip(parts).collect()));
            }
            let (shape, rows) = zip_components(outer, &parts)?;
            let records = rows
                .into_iter()
                .map(|row| Val::record(names.clone().zip(row).collect()))
                .collect();
            Some(Val::Array(Array::new(shape, Store::Boxed(records))))
        }
        _ => None,
    }
}

/// Turns component arrays with a common outer shape (`outer` dimensions) into rows of
/// components: the outer shape and, per outer element, its components.
fn zip_components<'a>(outer: usize, parts: &[Val<'a>]) -> Option<(Vec<usize>, Vec<Vec<Val<'a>>>)> {
    let arrays = parts
        .iter()
        .map(|p| match p {
            Val::Array(a) if a.rank() >= outer => Some(a),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let shape = arrays.first()?.shape()[..outer].to_vec();
    let count: usize = shape.iter().product();
    let rows = (0..count)
        .map(|j| {
            arrays
                .iter()
                .map(|a| {
                    if a.rank() == outer {
                        a.elem(j)
                    } else {
                        let inner = a.shape()[outer..].to_vec();
                        let size: usize = inner.iter().product();
                        Val::Array(a.sub_view(inner, j * size))
                    }
                })
                .collect()
        })
        .collect();
    Some((shape, rows))
}

/// Converts a result of type `[dims]elem`; `None` if the value does not have that type.
fn output(dims: &[&Size], elem: &Type, v: Val<'_>) -> Option<Value> {
    match (elem, v) {
        (Type::Array(inner, size), v) => {
            let mut dims = dims.to_vec();
            dims.push(size);
            output(&dims, inner, v)
        }
        (Type::Prim(_), Val::Prim(s)) if dims.is_empty() => Some(Value::Scalar(s)),
        (Type::Tuple(ts), Val::Tuple(vs)) if dims.is_empty() && ts.len() == vs.len() => ts
            .iter()
            .zip(vs.iter())
            .map(|(t, v)| output(&[], t, v.clone()))
            .collect::<Option<_>>()
            .map(Value::Tuple),
        (Type::Record(fs), Val::Record(vs)) if dims.is_empty() && fs.len() == vs.len() => fs
            .iter()
            .zip(vs.iter())
            .map(|((_, t), (_, v))| output(&[], t, v.clone()))
            .collect::<Option<_>>()
            .map(Value::Tuple),
        (Type::Prim(p), Val::Array(a)) if !dims.is_empty() => {
            let data = match a.store() {
                Store::Prim(_) if a.rank() == dims.len() => match a.to_store() {
                    Store::Prim(d) => d,
                    Store::Boxed(_) => return None,
                },
                _ if a.elem_count() == 0 => ArrayData::with_capacity(*p, 0),
                _ => return None,
            };
            OutArray::new(padded_shape(dims, a.shape()), data).map(Value::Array)
        }
        (Type::Tuple(_) | Type::Record(_), Val::Array(a)) if !dims.is_empty() => {
            let fields: Vec<&Type> = match elem {
                Type::Tuple(ts) => ts.iter().collect(),
                Type::Record(fs) => fs.iter().map(|(_, t)| t).collect(),
                _ => return None,
            };
            let outer = padded_shape(dims, &a.shape()[..dims.len().min(a.rank())]);
            let count: usize = outer.iter().product();
            let parts = fields
                .iter()
                .enumerate()
                .map(|(c, t)| {
                    if count == 0 {
                        return output(
                            dims,
                            t,
                            Val::Array(Array::new(vec![0], Store::Boxed(Vec::new()))),
                        );
                    }
                    let mut b = Builder::new(count);
                    for j in 0..count {
                        let part = match a.elem(j) {
                            Val::Tuple(vs) => vs.get(c).cloned(),
                            Val::Record(vs) => vs.get(c).map(|(_, v)| v.clone()),
                            _ => None,
                        };
                        b.push(part?).ok()?;
                    }
                    let component = b.finish(|| Array::new(vec![0], Store::Boxed(Vec::new())));
                    let mut shape = outer.clone();
                    shape.extend_from_slice(&component.shape()[1..]);
                    output(dims, t, Val::Array(component.reshape(shape)))
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Value::Tuple(parts))
        }
        _ => None,
    }
}

/// The shape of an output array of `dims.len()` dimensions: the value's shape, completed for
/// empty arrays whose inner dimensions the interpreter could not know (constant sizes from the
/// type, 0 otherwise).
fn padded_shape(dims: &[&Size], shape: &[usize]) -> Vec<usize> {
    dims.iter()
        .enumerate()
        .map(|(k, size)| match (shape.get(k), size) {
            (Some(&d), _) => d,
            (None, Size::Const(n)) => *n as usize,
            (None, _) => 0,
        })
        .collect()
}
