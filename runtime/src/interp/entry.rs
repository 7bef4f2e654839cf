//! The entry-point boundary: checking and converting arguments, converting results.
//!
//! Arguments must match the parameter types exactly: element type, rank and constant sizes, and
//! a size parameter (`[n]`) must have the same value in every argument it appears in. Tuples and
//! records are [`Value::Tuple`]s (record fields in name order); arrays of tuples or records are
//! tuples of arrays, one per component, all with the same outer shape (Futhark's convention).

use super::eval::Interp;
use super::value::{Array, Builder, Store, Val};
use crate::error::{E_ARG_COUNT, E_ARG_SIZE, E_ARG_TYPE, E_NO_ENTRY, R_INTERNAL, Res, error};
use crate::value::{Array as OutArray, ArrayData, Value};
use ogham_compiler::typeck::EntryPoint;
use ogham_ir::diag::Diagnostic;
use ogham_ir::types::{Size, Type};
use std::collections::HashMap;

/// Runs entry point `name` of the root module.
pub fn run<'a>(
    interp: &Interp<'a>,
    entries: &'a [EntryPoint],
    name: &str,
    args: Vec<Value>,
) -> Res<Vec<Value>> {
    let Some(ep) = entries.iter().find(|e| e.name == name) else {
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        let d = Diagnostic::error(
            E_NO_ENTRY,
            format!("the program has no entry point `{name}`"),
        );
        return Err(Box::new(if names.is_empty() {
            d.with_help("declare one with `entry main (...) = ...`")
        } else {
            d.with_note(format!("entry points: {}", names.join(", ")))
        }));
    };
    if args.len() != ep.params.len() {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        return Err(error(
            E_ARG_COUNT,
            ep.span,
            format!(
                "entry point `{name}` takes {} argument{}, but {} {} given",
                ep.params.len(),
                plural(ep.params.len()),
                args.len(),
                if args.len() == 1 { "was" } else { "were" }
            ),
        ));
    }
    let mut sizes = Sizes {
        ep,
        seen: HashMap::new(),
    };
    let mut vals = Vec::with_capacity(args.len());
    for ((pname, ty), arg) in ep.params.iter().zip(args) {
        let given = arg.describe();
        let v = sizes.convert(&[], ty, arg, pname).map_err(|e| match e {
            ArgError::Type => error(
                E_ARG_TYPE,
                ep.span,
                format!("expected {ty} for parameter {pname}, got {given}"),
            ),
            ArgError::Size(d) => d,
        })?;
        vals.push(v);
    }
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

enum ArgError {
    /// The argument does not have the parameter's type.
    Type,
    /// A size parameter with different values in two arguments.
    Size(Box<Diagnostic>),
}

/// The sizes fixed by the arguments converted so far.
struct Sizes<'e> {
    ep: &'e EntryPoint,
    /// Size name -> (length, parameter that fixed it).
    seen: HashMap<String, (usize, String)>,
}

impl Sizes<'_> {
    fn check_dim(&mut self, size: &Size, actual: usize, param: &str) -> Result<(), ArgError> {
        match size {
            Size::Const(n) if *n != actual as u64 => Err(ArgError::Type),
            Size::Var(name) => match self.seen.get(name) {
                Some((n, other)) if *n != actual => Err(ArgError::Size(error(
                    E_ARG_SIZE,
                    self.ep.span,
                    format!(
                        "size `{name}` is {n} in parameter {other} but {actual} in parameter {param}"
                    ),
                ))),
                Some(_) => Ok(()),
                None => {
                    self.seen.insert(name.clone(), (actual, param.to_string()));
                    Ok(())
                }
            },
            _ => Ok(()),
        }
    }

    /// Converts an argument of type `[dims]elem`.
    fn convert<'a>(
        &mut self,
        dims: &[&'a Size],
        elem: &'a Type,
        v: Value,
        param: &str,
    ) -> Result<Val<'a>, ArgError> {
        match (elem, v) {
            (Type::Array(inner, size), v) => {
                let mut dims = dims.to_vec();
                dims.push(size);
                self.convert(&dims, inner, v, param)
            }
            (Type::Prim(p), Value::Scalar(s)) if dims.is_empty() && s.prim_type() == *p => {
                Ok(Val::Prim(s))
            }
            (Type::Prim(p), Value::Array(a))
                if !dims.is_empty() && a.elem_type() == *p && a.rank() == dims.len() =>
            {
                for (size, &actual) in dims.iter().zip(a.shape()) {
                    self.check_dim(size, actual, param)?;
                }
                let (shape, data) = a.into_parts();
                Ok(Val::Array(Array::new(shape, Store::Prim(data))))
            }
            (Type::Tuple(ts), Value::Tuple(vs)) if ts.len() == vs.len() => {
                let parts = ts
                    .iter()
                    .zip(vs)
                    .map(|(t, v)| self.convert(dims, t, v, param))
                    .collect::<Result<Vec<_>, _>>()?;
                if dims.is_empty() {
                    return Ok(Val::tuple(parts));
                }
                let (shape, rows) = zip_components(dims.len(), &parts)?;
                Ok(Val::Array(Array::new(
                    shape,
                    Store::Boxed(rows.into_iter().map(Val::tuple).collect()),
                )))
            }
            (Type::Record(fs), Value::Tuple(vs)) if fs.len() == vs.len() => {
                let parts = fs
                    .iter()
                    .zip(vs)
                    .map(|((_, t), v)| self.convert(dims, t, v, param))
                    .collect::<Result<Vec<_>, _>>()?;
                let names = fs.iter().map(|(n, _)| n.as_str());
                if dims.is_empty() {
                    return Ok(Val::record(names.zip(parts).collect()));
                }
                let (shape, rows) = zip_components(dims.len(), &parts)?;
                let records = rows
                    .into_iter()
                    .map(|row| Val::record(names.clone().zip(row).collect()))
                    .collect();
                Ok(Val::Array(Array::new(shape, Store::Boxed(records))))
            }
            _ => Err(ArgError::Type),
        }
    }
}

/// Turns component arrays with a common outer shape (`outer` dimensions) into rows of
/// components: the outer shape and, per outer element, its components.
fn zip_components<'a>(
    outer: usize,
    parts: &[Val<'a>],
) -> Result<(Vec<usize>, Vec<Vec<Val<'a>>>), ArgError> {
    let arrays = parts
        .iter()
        .map(|p| match p {
            Val::Array(a) if a.rank() >= outer => Ok(a),
            _ => Err(ArgError::Type),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let shape = arrays.first().ok_or(ArgError::Type)?.shape()[..outer].to_vec();
    if arrays.iter().any(|a| a.shape()[..outer] != shape[..]) {
        return Err(ArgError::Type);
    }
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
    Ok((shape, rows))
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
