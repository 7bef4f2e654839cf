//! Running one pixel of an entry point (`ogham run --pixel ROW[,COL]`, Python's
//! `entry.trace(..., pixel=...)`): the arguments that carry the pixel axis are cut down to the
//! one pixel, and the run's traces are collected.
//!
//! The *pixel axes* of an entry point are the leading dimensions of its first result, one per
//! coordinate given (`--pixel 5`: the first; `--pixel 2,3`: the first two), each of which must
//! be a size parameter (`[m]`, not a constant or a size known only at run time). An argument
//! is cut when its type's leading dimensions are those same size parameters: position `i` of
//! each is kept as a dimension of size 1 (`[m][n]f32` becomes `[1][n]f32`), so the entry runs
//! unchanged on one pixel and returns results with leading dimensions of size 1. Every other
//! argument (a time axis, scalars, arrays whose pixel axis is not leading) is passed whole.
//! Arrays of tuples are cut component by component.

use crate::cache::{Compiled, EntryInfo};
use ogham_ir::diag::Diagnostic;
use ogham_ir::types::{Size, Type};
use ogham_runtime::trace::{self, Trace};
use ogham_runtime::value::{Array, ArrayData, Value};

/// The size parameters of `entry`'s pixel axes for `coords` coordinates.
fn pixel_axes(entry: &EntryInfo, coords: usize) -> Result<Vec<String>, String> {
    let no_axis = |why: String| {
        format!(
            "entry point `{}` has no pixel axis for {coords} coordinate{}: {why}",
            entry.name,
            if coords == 1 { "" } else { "s" }
        )
    };
    let Some(first) = entry.results.first() else {
        return Err(no_axis("it has no result".to_string()));
    };
    let dims = leading_dims(first);
    if dims.len() < coords {
        return Err(no_axis(format!(
            "its first result, `{first}`, has {} dimension(s)",
            dims.len()
        )));
    }
    dims[..coords]
        .iter()
        .map(|d| match d {
            Size::Var(name) => Ok(name.clone()),
            other => Err(no_axis(format!(
                "the leading dimensions of its first result must be size parameters, and `{other}` is not"
            ))),
        })
        .collect()
}

/// The dimensions of `ty`, outermost first.
fn leading_dims(ty: &Type) -> Vec<&Size> {
    let mut dims = Vec::new();
    let mut t = ty;
    while let Type::Array(inner, size) = t {
        dims.push(size);
        t = inner;
    }
    dims
}

/// `args` with the arguments that carry `entry`'s pixel axes cut down to the pixel at
/// `pixel` (see the module header); an error names a coordinate out of range.
pub fn pixel_args(
    entry: &EntryInfo,
    args: Vec<Value>,
    pixel: &[usize],
) -> Result<Vec<Value>, String> {
    if pixel.is_empty() {
        return Err("a pixel needs at least one coordinate".to_string());
    }
    let axes = pixel_axes(entry, pixel.len())?;
    let mut any = false;
    let mut out = Vec::with_capacity(args.len());
    for ((name, ty), arg) in entry.params.iter().zip(args) {
        let dims = leading_dims(ty);
        let carries = dims.len() >= axes.len()
            && dims
                .iter()
                .zip(&axes)
                .all(|(d, a)| matches!(d, Size::Var(v) if v == a));
        if carries {
            any = true;
            out.push(cut(arg, pixel).map_err(|e| format!("argument `{name}`: {e}"))?);
        } else {
            out.push(arg);
        }
    }
    if !any {
        return Err(format!(
            "no argument of entry point `{}` has the pixel axes [{}] as its leading dimensions",
            entry.name,
            axes.join("][")
        ));
    }
    Ok(out)
}

/// `value` (an array, or a tuple of arrays) with its leading dimensions cut to `pixel`.
fn cut(value: Value, pixel: &[usize]) -> Result<Value, String> {
    match value {
        Value::Tuple(parts) => Ok(Value::Tuple(
            parts
                .into_iter()
                .map(|p| cut(p, pixel))
                .collect::<Result<_, _>>()?,
        )),
        Value::Array(a) => cut_array(&a, pixel).map(Value::Array),
        Value::Scalar(_) => Err("a scalar has no pixel axis".to_string()),
    }
}

fn cut_array(a: &Array, pixel: &[usize]) -> Result<Array, String> {
    let shape = a.shape();
    if shape.len() < pixel.len() {
        return Err(format!(
            "an array of shape {shape:?} has too few dimensions"
        ));
    }
    let mut offset = 0;
    for (k, (&i, &n)) in pixel.iter().zip(shape).enumerate() {
        if i >= n {
            return Err(format!(
                "pixel coordinate {i} is out of range: dimension {k} has {n} element(s)"
            ));
        }
        let stride: usize = shape[k + 1..].iter().product();
        offset += i * stride;
    }
    let inner = &shape[pixel.len()..];
    let count: usize = inner.iter().product();
    let mut data = ArrayData::with_capacity(a.elem_type(), count);
    for j in offset..offset + count {
        data.push(a.data().get(j))
            .ok_or_else(|| "an element of the wrong type".to_string())?;
    }
    let mut new_shape = vec![1; pixel.len()];
    new_shape.extend_from_slice(inner);
    Array::new(new_shape, data).ok_or_else(|| "a pixel of inconsistent shape".to_string())
}

/// Runs `entry` of `compiled` on `args` collecting its traces (the sink of
/// [`trace::collect`]): the outcome and the traces, in the order the run made them (also those
/// made before a run-time error).
pub fn traced_call(
    compiled: &Compiled,
    entry: &str,
    args: Vec<Value>,
) -> (Result<Vec<Value>, Box<Diagnostic>>, Vec<Trace>) {
    let (sink, kept) = trace::collect();
    let outcome = trace::with_sink(Some(sink), || compiled.call(entry, args));
    let traces = kept.lock().map(|t| t.clone()).unwrap_or_default();
    (outcome, traces)
}

/// `ROW` or `ROW,COL` (`--pixel`).
pub fn parse_pixel(text: &str) -> Result<Vec<usize>, String> {
    text.split(',')
        .map(|part| {
            part.trim().parse::<usize>().map_err(|_| {
                format!("--pixel {text}: expected ROW or ROW,COL (non-negative integers)")
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ogham_ir::types::PrimType;

    fn arr(dims: &[&str], elem: PrimType) -> Type {
        dims.iter().rev().fold(Type::Prim(elem), |t, d| {
            Type::Array(Box::new(t), Size::Var(d.to_string()))
        })
    }

    fn entry() -> EntryInfo {
        EntryInfo {
            name: "main".to_string(),
            doc: None,
            params: vec![
                ("stack".to_string(), arr(&["m", "n"], PrimType::F32)),
                ("dates".to_string(), arr(&["n"], PrimType::F32)),
                ("k".to_string(), Type::Prim(PrimType::I64)),
            ],
            results: vec![arr(&["m"], PrimType::F32)],
            fields: vec![Vec::new()],
        }
    }

    #[test]
    fn the_arguments_with_the_pixel_axis_are_cut_to_one_pixel() {
        let stack = Array::from_f32(vec![3, 2], vec![0., 1., 2., 3., 4., 5.]).unwrap();
        let dates = Array::from_f32(vec![2], vec![7., 8.]).unwrap();
        let args = vec![
            Value::Array(stack),
            Value::Array(dates.clone()),
            Value::Scalar(ogham_runtime::Scalar::I64(1)),
        ];
        let cut = pixel_args(&entry(), args, &[1]).unwrap();
        assert_eq!(cut[0].to_string(), "[[2.0f32, 3.0f32]]");
        assert_eq!(cut[1], Value::Array(dates));
    }

    #[test]
    fn a_pixel_out_of_range_or_without_an_axis_is_an_error() {
        let stack = Array::from_f32(vec![1, 1], vec![0.]).unwrap();
        let dates = Array::from_f32(vec![1], vec![7.]).unwrap();
        let args = || {
            vec![
                Value::Array(stack.clone()),
                Value::Array(dates.clone()),
                Value::Scalar(ogham_runtime::Scalar::I64(1)),
            ]
        };
        let e = pixel_args(&entry(), args(), &[4]).unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        let e = pixel_args(&entry(), args(), &[0, 0]).unwrap_err();
        assert!(e.contains("no pixel axis"), "{e}");
        assert_eq!(parse_pixel("2, 3").unwrap(), vec![2, 3]);
        assert!(parse_pixel("x").is_err());
    }
}
